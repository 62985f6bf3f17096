"""A round's raw trajectory: the steps the planner took, rendered for compression and storage."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from retrac_local.corpus.store import Chunk


@dataclass
class Step:
    index: int
    gap: str
    tool: str  # search | open | finish | invalid
    argument: str
    observation: str
    error: str | None = None
    chunks: list[Chunk] = field(default_factory=list)

    def render(self) -> str:
        head = f"Step {self.index}: {self.tool}({self.argument!r})" + (f" — to find: {self.gap}" if self.gap else "")
        return f"{head}\n{self.observation}" if self.observation else head

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "gap": self.gap, "tool": self.tool, "argument": self.argument,
                "observation": self.observation, "error": self.error,
                "chunk_ids": [c.chunk_id for c in self.chunks]}


@dataclass
class RoundRecord:
    iteration: int
    steps: list[Step] = field(default_factory=list)
    end_reason: str = ""  # finish | steps | tokens | context | time
    finish_answer: str | None = None

    @property
    def tool_calls(self) -> int:
        return sum(1 for s in self.steps if s.tool in ("search", "open"))

    def chunks(self) -> dict[str, Chunk]:
        return {c.chunk_id: c for s in self.steps for c in s.chunks}

    def to_dict(self) -> dict[str, Any]:
        return {"iteration": self.iteration, "end_reason": self.end_reason, "finish_answer": self.finish_answer,
                "steps": [s.to_dict() for s in self.steps]}


def render_trajectory(steps: list[Step], max_tokens: int, count_tokens: Any) -> tuple[str, int]:
    """The steps as text, cut to `max_tokens` by dropping middle steps: the start (what was asked
    first) and the most recent steps (where the round ended) are kept. Returns (text, steps cut)."""
    parts = [s.render() for s in steps]
    sizes = [count_tokens(p) for p in parts]
    if sum(sizes) <= max_tokens:
        return "\n\n".join(parts), 0
    keep_head, keep_tail = [0], []
    budget = max_tokens - sizes[0]
    for i in range(len(parts) - 1, 0, -1):
        if sizes[i] > budget:
            break
        keep_tail.insert(0, i)
        budget -= sizes[i]
    cut = len(parts) - len(keep_head) - len(keep_tail)
    head = parts[0] if sizes[0] <= max_tokens else _clip(parts[0], max_tokens * 4)
    marker = [f"[… {cut} step(s) cut to fit the compression budget …]"] if cut else []
    text = "\n\n".join([head, *marker, *(parts[i] for i in keep_tail)])
    return text, cut


def _clip(text: str, chars: int) -> str:
    half = max(chars // 2, 1)
    return text[:half] + " … " + text[-half:]
