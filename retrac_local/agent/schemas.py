"""What the models are asked to write. Each model is turned into a grammar, so the JSON always
parses; lists are bounded (unbounded lists let small models loop until the token limit) and strings
are not (a maxLength makes the grammar take a minute to compile)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from retrac_local.tools import FinishArgs, OpenArgs, SearchArgs


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Action(Strict):
    """One planner step."""

    gap: str = Field(description="what this call should find out")
    call: SearchArgs | OpenArgs | FinishArgs = Field(discriminator="tool")


class NewEvidence(Strict):
    fact: str
    source: str = Field(description="chunk id in brackets in the observation, e.g. doc-name#0")
    quote: str = Field(description="words copied exactly from that chunk")


class ConclusionDraft(Strict):
    text: str
    evidence_ids: list[str] = Field(default_factory=list, max_length=4)
    inference: bool = False


class StateUpdate(Strict):
    """The compressor's output: code merges it into the previous state."""

    new_evidence: list[NewEvidence] = Field(default_factory=list, max_length=4)
    drop_evidence: list[str] = Field(default_factory=list, max_length=4)
    conclusions: list[ConclusionDraft] = Field(default_factory=list, max_length=3)
    answer: str | None = None
    uncertainties: list[str] = Field(default_factory=list, max_length=3)
    failures: list[str] = Field(default_factory=list, max_length=3)
    next_plan: list[str] = Field(default_factory=list, max_length=3)


class ConstraintsDraft(Strict):
    constraints: list[str] = Field(default_factory=list, max_length=4)


class FinalAnswer(Strict):
    answer: str = Field(description="short answer: a name, date, number, or yes/no")
    evidence_ids: list[str] = Field(default_factory=list, max_length=4)
