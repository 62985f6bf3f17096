"""Counts every LLM call of a run (role, purpose, tokens, seconds) without the loop threading it around."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from retrac_local.errors import StructuredOutputError
from retrac_local.llm.base import LLM, Generation, Message, Usage
from retrac_local.records import CallRecord


@dataclass
class Meter:
    iteration: int = 0
    purpose: str = ""
    pending: list[CallRecord] = field(default_factory=list)  # calls not yet persisted

    def record(self, role: str, usage: Usage) -> None:
        self.pending.append(
            CallRecord(
                iteration=self.iteration,
                role=role,
                purpose=self.purpose,
                prompt_tokens=usage.prompt_tokens,
                completion_tokens=usage.completion_tokens,
                cached_tokens=usage.cached_tokens,
                seconds=round(usage.seconds, 4),
            )
        )

    def drain(self) -> list[CallRecord]:
        calls, self.pending = self.pending, []
        return calls

    def tokens_since(self, start: int) -> tuple[int, int]:
        calls = self.pending[start:]
        return sum(c["prompt_tokens"] for c in calls), sum(c["completion_tokens"] for c in calls)


class MeteredLLM:
    """An LLM that reports each call to a Meter; the same interface as the model it wraps (hold it as
    an `LLM`, whose overloads say what each call returns)."""

    def __init__(self, inner: LLM, role: str, meter: Meter) -> None:
        self.inner, self.role, self.meter = inner, role, meter
        self.name, self.n_ctx = inner.name, inner.n_ctx

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)

    def generate(
        self,
        messages: list[Message],
        *,
        schema: type[BaseModel] | None = None,
        max_tokens: int = 256,
        temperature: float | None = None,
    ) -> Generation[Any]:
        try:
            generation = self.inner.generate(
                messages, schema=schema, max_tokens=max_tokens, temperature=temperature
            )
        except StructuredOutputError as e:
            if e.usage is not None:
                self.meter.record(self.role, e.usage)
            raise
        self.meter.record(self.role, generation.usage)
        return generation
