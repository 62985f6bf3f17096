"""The rules taken out of the catalogue, with the measurement that took them out: the ablation table
(docs/eval/rules.md) lists them under its own heading, so that a rule's history outlives its code.
Nothing of the agent imports this module."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Removed:
    name: str
    stage: str
    did: str  # what it did, in one line
    measured: str  # the row that decided it, and on which runs
    why: str


REMOVED: tuple[Removed, ...] = (
    Removed(
        "answer.stating_quote",
        "answer",
        "led the answer's citations with a quote that contains the answer when the model cited none",
        "fired on 5 of 41 crossdata tuning runs (retrac bc59c4747bf7); replayed off on 4: F1 +0.000, "
        "answered 2 → 0, both wrong",
        "costs: the two answers it let be *answered* were wrong (a quote containing the answer's words "
        "is not one that answers the question)",
    ),
    Removed(
        "status.unsupported",
        "status",
        "made an answer unsure when it named a number or capitalised word its cited evidence lacks",
        "fired on 2 of 41; replayed off: answered 0 → 1, and that one right",
        "costs: it held back a right answer and no wrong one (the same test stays as a figure of the "
        "evaluation, answered_claim_outside_evidence)",
    ),
    Removed(
        "answer.cite_by_text",
        "answer",
        "an answer citing nothing valid cited the evidence whose text held it, else its conclusions' evidence",
        "never fired on 41 runs",
        "changed nothing measurable; an answer that cites nothing is now simply not cited",
    ),
    Removed(
        "converge.connected",
        "converge",
        "kept a run from stopping as answered while no verified evidence connected its answer to the question",
        "never fired on 41 runs",
        "compress.open_question already writes that gap as an open question, which keeps the run going; "
        "only the planner's own finish overrides it, and the status checks judge what it ends on",
    ),
    Removed(
        "converge.kind",
        "converge",
        "kept a run from stopping as answered on an answer of another kind than asked",
        "never fired on 41 runs",
        "the same open question (compress.open_question) and status.wrong_kind cover it",
    ),
    Removed(
        "status.states_answer",
        "status",
        "an answer the planner said its cited quotes do not state was not found (budget.check_answer, off)",
        "off by default since the agreement check replaced it; never fired on 41 crossdata tuning runs "
        "(retrac bc59c4747bf7) nor on 81 of retrac 91aae5bdabae",
        "a rule that is off is code nobody runs; the 1.5B model said no to most answers, right or wrong "
        "(docs/RESULTS.md, 'The answer checks')",
    ),
    Removed(
        "status.names_nothing",
        "status",
        "a bare yes or no to a what/which question was not found, not answered",
        "never fired on 41 crossdata tuning runs (retrac bc59c4747bf7) nor on 81 of retrac 91aae5bdabae",
        "status.wrong_kind already makes that answer unsure (a yes or no is not of the kind a "
        "what/which question asks); only the caveat's words differed",
    ),
    Removed(
        "converge.carry_thin_round",
        "converge",
        "a round whose texts added almost nothing unseen (budget.min_round_tokens) was carried into the "
        "next slot instead of being compressed alone",
        "never fired on 41 crossdata tuning runs (retrac bc59c4747bf7) nor on 81 of retrac 91aae5bdabae",
        "changed nothing measurable: the opening searches and candidates give every round new text; "
        "without it the loop has one kind of round",
    ),
)
