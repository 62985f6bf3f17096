"""What a run reports as it goes: typed events, then the result with its status."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

from retrac_local.corpus.store import label


class RunStatus(StrEnum):
    RUNNING = "running"  # persisted while a run is in progress or was interrupted: resumable
    ANSWERED = "answered"  # converged with an answer backed by at least one verified citation
    UNSURE = "unsure"  # stopped with an answer that no verified citation supports, or open questions
    BUDGET_EXHAUSTED = "budget-exhausted"  # the round or time budget ran out first; best answer given
    FAILED = "failed"  # no answer could be produced


@dataclass
class Citation:
    evidence_id: str
    doc_id: str
    chunk_id: str
    title: str
    source: str
    quote: str
    verified: str
    section: str = ""  # the headings above the quoted chunk, when its document has them
    page: int = 0  # the page the chunk starts on (PDFs), else 0

    @property
    def label(self) -> str:
        return label(self.title, self.section, self.page)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class RunResult:
    run_id: str
    question: str
    status: RunStatus
    answer: str | None
    citations: list[Citation]
    rounds: int
    stop_reason: str
    llm_calls: int
    prompt_tokens: int
    completion_tokens: int
    peak_prompt_tokens: int
    seconds: float
    llm_seconds: float
    calls: list[dict[str, Any]] = field(default_factory=list)
    retrieved: list[str] = field(default_factory=list)  # chunk ids the tools returned, first seen first
    caveat: str | None = None  # why the answer is not to be trusted as it stands (status unsure), if so
    searches: list[str] = field(default_factory=list)  # the queries searched, in order, repeats included
    first_retrieved: list[str] = field(default_factory=list)  # chunk ids the first search returned

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunResult:
        """The result as the run store keeps it (`to_dict`), read back."""
        fields = dict(data)
        fields["status"] = RunStatus(fields["status"])
        fields["citations"] = [Citation(**c) for c in fields.get("citations", [])]
        fields.setdefault("calls", [])
        return cls(**fields)

    def to_dict(self, with_calls: bool = False) -> dict[str, Any]:
        out = {
            "run_id": self.run_id,
            "question": self.question,
            "status": str(self.status),
            "answer": self.answer,
            "citations": [c.to_dict() for c in self.citations],
            "rounds": self.rounds,
            "stop_reason": self.stop_reason,
            "llm_calls": self.llm_calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "peak_prompt_tokens": self.peak_prompt_tokens,
            "seconds": round(self.seconds, 2),
            "llm_seconds": round(self.llm_seconds, 2),
            "retrieved": self.retrieved,
            "caveat": self.caveat,
            "searches": self.searches,
            "first_retrieved": self.first_retrieved,
        }
        if with_calls:
            out["calls"] = self.calls
        return out


@dataclass
class RunStarted:
    run_id: str
    question: str
    resumed_at_round: int = 0
    memory: list[dict[str, Any]] = field(default_factory=list)  # past runs whose evidence seeded this one


@dataclass
class StepTaken:
    iteration: int
    index: int
    tool: str
    argument: str
    gap: str
    summary: str
    by: str = "planner"  # planner | pick (a search code proposed) | code


@dataclass
class RoundCompressed:
    iteration: int
    tool_calls: int
    end_reason: str
    summary: str
    answer: str | None
    evidence: int
    state_tokens: int
    compression_failed: bool
    prompt_tokens: int = 0  # of the round's LLM calls
    completion_tokens: int = 0
    llm_seconds: float = 0.0


@dataclass
class RoundCarried:
    """A round whose texts held almost nothing new: not compressed on its own, continued instead."""

    iteration: int
    tool_calls: int
    new_tokens: int


@dataclass
class Converged:
    reason: str


@dataclass
class RunFinished:
    result: RunResult


Event = RunStarted | StepTaken | RoundCarried | RoundCompressed | Converged | RunFinished


def event_dict(event: Event) -> dict[str, Any]:
    """One event as JSON-ready data: {"event": its kind, …its fields}; a finished run carries its result."""
    if isinstance(event, RunFinished):
        return {"event": "RunFinished", "result": event.result.to_dict()}
    return {"event": type(event).__name__, **asdict(event)}
