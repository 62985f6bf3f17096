"""When to stop: the rules of DESIGN.md, each a named reason."""

from __future__ import annotations

from retrac_local.agent.answers import wrong_kind_question
from retrac_local.agent.diff import StateDiff
from retrac_local.agent.events import StopReason
from retrac_local.agent.linking import answer_evidence, backed, connected
from retrac_local.agent.state import ResearchState
from retrac_local.agent.verify import normalise
from retrac_local.rules.book import RuleBook


def answer_supported(state: ResearchState) -> bool:
    """The answer's words occur in a verified (or partial) piece of evidence, or in a conclusion drawn
    from such evidence (a computed answer: an age, a difference); a yes/no answer needs only some
    verified evidence. An answer the model wrote without support does not end the run."""
    if normalise(state.answer or "").lower() in ("yes", "no"):
        return bool(backed(state))
    return bool(answer_evidence(state))


def converged(
    prev: ResearchState, state: ResearchState, diff: StateDiff, planner_finished: bool, rules: RuleBook
) -> StopReason | None:
    """The reason to stop after this round, or None to go on. An answer of another kind than the
    question asks (a name for "when"), or one the question itself states, is not an answer: the run
    goes on (`converge.kind`); nor is one no evidence connects to the question (`converge.connected`)."""
    supported = answer_supported(state)
    would_stop = planner_finished or not state.uncertainties  # a check that blocks nothing does not fire
    if supported and rules.on("converge.connected") and not connected(state):
        if would_stop:
            rules.fired("converge.connected", f"{state.answer!r} is not connected to the question yet")
        supported = False
    if supported and rules.on("converge.kind"):
        wrong = wrong_kind_question(state.question, state.answer or "", state.evidence)
        if wrong:
            if would_stop:
                rules.fired("converge.kind", wrong)
            supported = False
    if supported and not state.uncertainties:
        return StopReason.ANSWERED
    if planner_finished and supported:
        return StopReason.PLANNER_FINISHED
    if state.next_plan and state.next_plan == prev.next_plan:
        return StopReason.PLAN_REPEATED
    if state.iteration >= 2 and not diff.evidence_added and not diff.answer_changed:
        return StopReason.SATURATED
    return None
