"""Every code rule that proposes or replaces a search, changes whether a fact is verified, rewrites
the answer, or changes the status: one entry each, as the tools are.

A rule is code standing in for what a model should have done. Each entry names the failure it
prevents; `docs/eval/rules.md` holds its ablation row (runs with it off against on, paired), kept
out of this module so that a new measurement does not change the answering code's version. A new
rule enters the catalogue only with that row. `retrac rules` lists the catalogue and
`docs/RULES.md` is generated from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Stage = Literal["search", "compress", "converge", "answer", "status"]
STAGES: tuple[Stage, ...] = ("search", "compress", "converge", "answer", "status")


@dataclass(frozen=True)
class Rule:
    name: str
    stage: Stage
    description: str  # the failure it prevents, in one line
    english: bool  # whether it reads English words or English question shapes

    def to_dict(self, enabled: bool = True) -> dict[str, object]:
        return {
            "name": self.name,
            "stage": self.stage,
            "description": self.description,
            "english": self.english,
            "enabled": enabled,
        }


RULES: tuple[Rule, ...] = (
    # -- search -------------------------------------------------------------------------------
    Rule(
        "search.hop0",
        "search",
        "round 1 starts with the question itself as the search (what RAG reads), so the run never "
        "sees less than one retrieval would",
        english=False,
    ),
    Rule(
        "search.opening",
        "search",
        "round 1 goes on with code's best candidate searches before the planner's first step: a "
        "1.5B planner picked worse than this order, at a thousand prompt tokens a step",
        english=True,
    ),
    Rule(
        "search.lead",
        "search",
        "a later round opens with the best lead (a name verified evidence states that no search "
        "covered): the planner otherwise re-searches the question's own names",
        english=True,
    ),
    Rule(
        "search.candidates",
        "search",
        "the planner is offered numbered candidate searches (leads, titles named in hits, the "
        "question's names) to pick from: a small planner writes poor queries and repeats them",
        english=True,
    ),
    Rule(
        "search.no_repeat",
        "search",
        "a planner query that repeats a search of the run is replaced by code's best candidate "
        "instead of ending the round",
        english=False,
    ),
    # -- compress -----------------------------------------------------------------------------
    Rule(
        "compress.anchor",
        "compress",
        "when no verified evidence is about a name the question asks about, code adds the round's "
        "sentence on that name sharing most words with the question (the first hop)",
        english=True,
    ),
    Rule(
        "compress.answer_quote",
        "compress",
        "when no verified evidence states the compressor's answer, code adds the round's sentence "
        "that holds every word of it",
        english=False,
    ),
    Rule(
        "compress.title_fact",
        "compress",
        "a 'fact' that is only a document's title is replaced by that document's sentence closest "
        "to the question",
        english=False,
    ),
    Rule(
        "compress.split_compound",
        "compress",
        "a fact joining two clauses ('A was born in 1923, while B …') is grounded clause by clause "
        "instead of being rejected whole",
        english=True,
    ),
    Rule(
        "compress.drift_repair",
        "compress",
        "a verified fact or constraint that vanished or changed without a reason is restored from "
        "the previous state",
        english=False,
    ),
    Rule(
        "compress.open_question",
        "compress",
        "an answer that no verified evidence connects to the question, or of another kind than "
        "asked, gets an open question written by code, so the next round looks for the link",
        english=True,
    ),
    Rule(
        "compress.conflicts",
        "compress",
        "two verified facts from two documents giving different years for the same event are "
        "recorded as a conflict",
        english=True,
    ),
    # -- converge -----------------------------------------------------------------------------
    Rule(
        "converge.first_reading",
        "converge",
        "a question that hop 0's passages already answer ends there, at RAG's cost: its sampled "
        "answers agree and the sentences that state it give it back read alone (more rounds cost a "
        "minute and, with a small model, often lose what one reading had right)",
        english=False,
    ),
    # -- answer -------------------------------------------------------------------------------
    Rule(
        "answer.options",
        "answer",
        "a question that names its options ('A or B?') is answered with one of them, not with the "
        "property asked about",
        english=True,
    ),
    Rule(
        "answer.date_compare",
        "answer",
        "'which came first, A or B?' is decided by code from the two dates the texts give",
        english=True,
    ),
    Rule(
        "answer.not_the_question",
        "answer",
        "an answer made only of the question's own words is asked again, held to the names the "
        "texts hold beyond the question",
        english=True,
    ),
    Rule(
        "answer.shorten",
        "answer",
        "asides, a lead repeating the question's subject, and a doubled answer are cut from the final answer",
        english=True,
    ),
    Rule(
        "answer.bridge_citation",
        "answer",
        "a bridge answer also cites the hop that ties it to what the question names",
        english=True,
    ),
    # -- status -------------------------------------------------------------------------------
    Rule(
        "status.sources_disagree",
        "status",
        "an answer citing evidence in a recorded conflict is unsure",
        english=False,
    ),
    Rule(
        "status.wrong_kind",
        "status",
        "an answer of another kind than the question asks is unsure",
        english=True,
    ),
    Rule(
        "status.agreement",
        "status",
        "an answer the planner, shown its cited quotes alone, gives again too seldom is unsure "
        "(budget.answer_samples)",
        english=False,
    ),
)

BY_NAME: dict[str, Rule] = {r.name: r for r in RULES}


def unknown(names: list[str] | tuple[str, ...] | set[str]) -> list[str]:
    """The names among `names` that no rule of the catalogue has."""
    return [n for n in names if n not in BY_NAME]
