"""The records a run leaves in the run store, typed: what the loop writes, and what the export, the
page, the evaluation and the batch transfer read back. They stay plain JSON dicts on disk and in
memory (a run stored by older code reads as it was written), so the types are for the reader and
mypy: a misspelt key or a value of the wrong kind fails the check, not a user's run.

The state, the trajectory and the diff inside a round are the JSON of their own pydantic models
(`ResearchState`, `RoundRecord`, `StateDiff`): validate them with those models to read them typed."""

from __future__ import annotations

from typing import Any, TypedDict

JSONObject = dict[str, Any]  # the dump of a pydantic model, validated by that model where it is read


class CallRecord(TypedDict):
    """One model call, as the meter counts it."""

    iteration: int
    role: str  # planner | compressor
    purpose: str  # action | compression | answer | …
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int
    seconds: float


class StoredCall(CallRecord):
    seq: int  # its order in the run, from 1


class RoundStats(TypedDict, total=False):
    """What one round cost and how it ended. Rounds stored by older code lack the later keys: read
    them with `.get`."""

    seconds: float
    tool_calls: int
    end_reason: str  # a `RoundEnd`
    slots: int  # round slots it used (a round carried into the next uses one more)
    new_tokens: int
    llm_calls: int
    prompt_tokens: int
    completion_tokens: int
    state_tokens: int
    sentences_left_out: int
    compression_attempts: list[JSONObject]  # each {"problems": [...]}
    rejected: list[str]
    compression_failed: bool
    stop_reason: str | None  # a `StopReason` when this round ended the run
    rules: list[JSONObject]  # the catalogued rules that fired in the round (`rules.book.Firing`)


class StoredRound(TypedDict):
    iteration: int
    state: JSONObject  # `ResearchState`
    trajectory: JSONObject  # `RoundRecord`
    diff: JSONObject  # `StateDiff`
    stats: RoundStats
    created: float


class StoredRun(TypedDict):
    run_id: str
    question: str
    status: str  # a `RunStatus`, or running | failed while it has no result
    answer: str | None
    created: float
    updated: float
    initial_state: JSONObject  # `ResearchState`
    settings: JSONObject  # `Settings`, as the run started
    result: JSONObject | None  # `RunResult.to_dict()`, once finished
    memory: list[JSONObject]  # past runs whose evidence seeded this one


class RunListing(TypedDict):
    run_id: str
    question: str
    status: str
    created: str  # local time, ISO 8601
    rounds: int
