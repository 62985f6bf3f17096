"""What a run reports as it goes: typed events, then the result with its status."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

from retrac_local.corpus.base import label
from retrac_local.records import CallRecord
from retrac_local.rules.book import names_fired


class RunStatus(StrEnum):
    RUNNING = "running"  # persisted while a run is in progress or was interrupted: resumable
    ANSWERED = "answered"  # converged with an answer backed by at least one verified citation
    UNSURE = "unsure"  # stopped with an answer that no verified citation supports, or open questions
    BUDGET_EXHAUSTED = "budget-exhausted"  # the round or time budget ran out first; best answer given
    FAILED = "failed"  # no answer could be produced


class StopReason(StrEnum):
    """Why a run stopped asking for more: the state converged, a budget ran out, or (the baselines)
    the one pass or the conversation ended."""

    ANSWERED = "answered"  # an answer its evidence backs, and no open question
    PLANNER_FINISHED = "planner-finished"  # the planner said finish, and the answer is backed
    PLAN_REPEATED = "plan-repeated"  # the next plan is the one of the round before
    SATURATED = "saturated"  # a round added no evidence and did not change the answer
    BUDGET_ROUNDS = "budget-rounds"
    BUDGET_TIME = "budget-time"
    BUDGET_TOKENS = "budget-tokens"
    BUDGET_STEPS = "budget-steps"  # ReAct: its tool calls are spent
    CONTEXT = "context"  # ReAct: the next step would overflow the model's context
    INVALID_ACTIONS = "invalid-actions"  # ReAct: invalid actions in a row
    SINGLE_PASS = "single-pass"  # RAG: one search, one answer
    FIRST_READING = "first-reading"  # hop 0's passages held the answer (agent/firstreading.py)

    @property
    def budget(self) -> bool:
        """A budget, not the run's own judgement, stopped it."""
        return self in (
            StopReason.BUDGET_ROUNDS,
            StopReason.BUDGET_TIME,
            StopReason.BUDGET_TOKENS,
            StopReason.BUDGET_STEPS,
        )

    @property
    def finished(self) -> bool:
        """The run stopped because it holds an answer (the only reasons that may end *answered*)."""
        return self in (StopReason.ANSWERED, StopReason.PLANNER_FINISHED, StopReason.FIRST_READING)


class RoundEnd(StrEnum):
    """Why a round of the Re-TRAC loop ended."""

    STEPS = "steps"  # its tool calls were made
    TOKENS = "tokens"  # its trajectory grew past budget.round_token_threshold
    CONTEXT = "context"  # the next action would overflow the planner's context
    INVALID_ACTIONS = "invalid-actions"  # invalid actions in a row
    FINISH = "finish"  # the planner said finish
    FINISH_REFUSED = "finish-refused"  # finishes refused in a row (the budget asked for more calls)
    REPEATS = "repeats"  # the planner repeated a search and nothing else was left to search
    FIRST_READING = "first-reading"  # hop 0's passages held the answer: the run ends after its first search


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
    stop_reason: StopReason
    llm_calls: int
    prompt_tokens: int
    completion_tokens: int
    peak_prompt_tokens: int
    seconds: float
    llm_seconds: float
    calls: list[CallRecord] = field(default_factory=list)
    retrieved: list[str] = field(default_factory=list)  # chunk ids the tools returned, first seen first
    caveat: str | None = None  # why the answer is not to be trusted as it stands (status unsure), if so
    searches: list[str] = field(default_factory=list)  # the queries searched, in order, repeats included
    first_retrieved: list[str] = field(default_factory=list)  # chunk ids the first search returned
    rule_log: list[dict[str, Any]] = field(default_factory=list)  # each catalogued rule that fired (`rules/`)
    asked: dict[str, Any] = field(default_factory=dict)  # the question as parsed (`agent/question.py`)
    # what hop 0's passages answered (`agent/firstreading.py`), when this session read them
    first_reading: dict[str, Any] | None = None

    @property
    def rules_fired(self) -> list[str]:
        """Each catalogued rule that fired in the run, once, in the order it first fired."""
        return names_fired(self.rule_log)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunResult:
        """The result as the run store keeps it (`to_dict`), read back."""
        fields = dict(data)
        fields["status"] = RunStatus(fields["status"])
        fields["stop_reason"] = StopReason(fields["stop_reason"])
        fields["citations"] = [Citation(**c) for c in fields.get("citations", [])]
        fields.setdefault("calls", [])
        fields.pop("rules_fired", None)  # derived from rule_log
        return cls(**fields)

    def to_dict(self, with_calls: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "run_id": self.run_id,
            "question": self.question,
            "status": str(self.status),
            "answer": self.answer,
            "citations": [c.to_dict() for c in self.citations],
            "rounds": self.rounds,
            "stop_reason": str(self.stop_reason),
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
            "rules_fired": self.rules_fired,
            "rule_log": self.rule_log,
            "asked": self.asked,
            "first_reading": self.first_reading,
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
    end_reason: RoundEnd
    summary: str
    answer: str | None
    evidence: int
    state_tokens: int
    compression_failed: bool
    prompt_tokens: int = 0  # of the round's LLM calls
    completion_tokens: int = 0
    llm_seconds: float = 0.0


@dataclass
class Converged:
    reason: str


@dataclass
class RunFinished:
    result: RunResult


Event = RunStarted | StepTaken | RoundCompressed | Converged | RunFinished


def event_dict(event: Event) -> dict[str, Any]:
    """One event as JSON-ready data: {"event": its kind, …its fields}; a finished run carries its result."""
    if isinstance(event, RunFinished):
        return {"event": "RunFinished", "result": event.result.to_dict()}
    return {"event": type(event).__name__, **asdict(event)}
