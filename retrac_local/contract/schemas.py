"""What the models are asked to write. Each model is turned into a grammar, so the JSON always
parses; lists are bounded (unbounded lists let small models loop until the token limit) and strings
are not (a maxLength makes the grammar take a minute to compile)."""

from __future__ import annotations

from functools import cache
from typing import Any, ClassVar, Literal, Union

from pydantic import Field, create_model

from retrac_local.contract import state
from retrac_local.contract.tools import call_models


class Written(state.Strict):
    """What a model writes through a grammar: strict, and its compiled grammar cached on disk."""

    grammar_cache: ClassVar[bool] = True  # whether the compiled grammar may be pickled to disk


class AnyAction(Written):
    """The fields of every action; its `call` is one of the registered tools' arguments, or finish.
    Not a grammar itself: `action_schema()` is the one the models write."""

    gap: str = Field(description="what this call should find out")
    call: Any


def action_schema(
    *first: type[state.Strict], name: str = "Action", doc: str = "One planner step."
) -> type[AnyAction]:
    """The action grammar: `call` is one of `first`, then the registered tools', then finish
    (`tools.call_models()`, read when asked, so a tool registered later is in it)."""
    return _action_schema((*first, *call_models()), name, doc)


@cache
def _action_schema(choices: tuple[type[state.Strict], ...], name: str, doc: str) -> type[AnyAction]:
    call = Union[choices]  # type: ignore[valid-type]  # noqa: UP007 — a union built at run time
    model: type[AnyAction] = create_model(
        name, __base__=AnyAction, __doc__=doc, call=(call, Field(discriminator="tool"))
    )
    return model


class NewEvidence(Written):
    """A fact read in the round's sentences. Code finds the sentence that states it and stores that
    sentence, verbatim, as the quote: small models paraphrase when asked to copy, and pick the wrong
    label when asked to point, but state facts well."""

    fact: str = Field(description="one fact from the sentences, with names, numbers and dates copied exactly")


class ConclusionDraft(Written):
    text: str
    evidence_ids: list[str] = Field(max_length=4)
    inference: bool


class StateUpdate(Written):
    """The compressor's output: code merges it into the previous state."""

    # Field order is generation order: evidence, then what follows from it, then the answer.
    # Every field is required, so the grammar makes the model write each one (optional fields were
    # skipped by small models), in this order.
    new_evidence: list[NewEvidence] = Field(max_length=4)
    reasoning: str = Field(
        description="how the evidence answers the question, step by step, naming each entity"
    )
    conclusions: list[ConclusionDraft] = Field(max_length=2)
    answer: str | None
    drop_evidence: list[str] = Field(max_length=4)
    uncertainties: list[str] = Field(max_length=2)
    failures: list[str] = Field(max_length=2)
    next_plan: list[str] = Field(max_length=2)


class ConstraintsDraft(Written):
    constraints: list[str] = Field(max_length=4)


class FinalAnswer(Written):
    answer: str = Field(description="short answer: a name, date, number, or yes/no")
    evidence_ids: list[str] = Field(max_length=4)


class Reanswer(Written):
    """The question answered again from the cited quotes alone (`agent/answercheck.py`)."""

    answer: str = Field(description='a few words copied from a quote, or "not stated"')


# Per-round schemas: ids are constrained to the ones that exist, so a small model cannot invent a
# source or cite a missing piece of evidence. They change every round, so their compiled grammars
# are kept in memory only (`grammar_cache = False`).


def _ids(values: list[str]) -> Any:
    return Literal[tuple(dict.fromkeys(values))] if values else str


def _id_list(values: list[str]) -> Any:
    return list[_ids(values)]  # type: ignore[misc]


def state_update_schema(has_sentences: bool, evidence_ids: list[str]) -> type[StateUpdate]:
    """StateUpdate whose citations are known evidence ids (plus the ids new evidence will get)."""
    next_ids = [f"E{_next_number(evidence_ids) + n}" for n in range(4)]
    conclusion = create_model(
        "ConclusionDraft",
        __base__=ConclusionDraft,
        evidence_ids=(_id_list([*evidence_ids, *next_ids]), Field(max_length=4)),
    )
    # At least one fact when the round found text: asked for a list that may be empty, small
    # models close it at once.
    model: type[StateUpdate] = create_model(
        "StateUpdate",
        __base__=StateUpdate,
        new_evidence=(list[NewEvidence], Field(min_length=1 if has_sentences else 0, max_length=4)),
        drop_evidence=(_id_list(evidence_ids), Field(max_length=4 if evidence_ids else 0)),
        conclusions=(list[conclusion], Field(max_length=2)),  # type: ignore[valid-type]
    )
    model.grammar_cache = False
    return model


def final_answer_schema(evidence_ids: list[str]) -> type[FinalAnswer]:
    if not evidence_ids:
        return FinalAnswer
    model: type[FinalAnswer] = create_model(
        "FinalAnswer",
        __base__=FinalAnswer,
        evidence_ids=(_id_list(evidence_ids), Field(max_length=4)),
    )
    model.grammar_cache = False
    return model


def _next_number(evidence_ids: list[str]) -> int:
    return max((int(i[1:]) for i in evidence_ids if i[1:].isdigit()), default=0) + 1


class ShortAnswer(Written):
    """The answer of the baselines (ReAct's forced answer, RAG): no state, so no evidence ids."""

    answer: str = Field(description="short answer: a name, date, number, or yes/no")
