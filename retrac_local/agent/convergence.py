"""When to stop: the rules of DESIGN.md, each a named reason."""

from __future__ import annotations

from retrac_local.agent.diff import StateDiff
from retrac_local.agent.linking import answer_evidence, backed
from retrac_local.agent.verify import normalise
from retrac_local.contract.events import StopReason
from retrac_local.contract.state import ResearchState


def answer_supported(state: ResearchState) -> bool:
    """The answer's words occur in a verified (or partial) piece of evidence, or in a conclusion drawn
    from such evidence (a computed answer: an age, a difference); a yes/no answer needs only some
    verified evidence. An answer the model wrote without support does not end the run."""
    if normalise(state.answer or "").lower() in ("yes", "no"):
        return bool(backed(state))
    return bool(answer_evidence(state))


def converged(
    prev: ResearchState, state: ResearchState, diff: StateDiff, planner_finished: bool
) -> StopReason | None:
    """The reason to stop after this round, or None to go on. An answer no evidence connects to the
    question, or of another kind than it asks, has an open question by then (`compress.open_question`):
    only the planner's own finish ends such a run, and its status checks judge the answer."""
    supported = answer_supported(state)
    if supported and not state.uncertainties:
        return StopReason.ANSWERED
    if planner_finished and supported:
        return StopReason.PLANNER_FINISHED
    if state.next_plan and state.next_plan == prev.next_plan:
        return StopReason.PLAN_REPEATED
    if state.iteration >= 2 and not diff.evidence_added and not diff.answer_changed:
        return StopReason.SATURATED
    return None
