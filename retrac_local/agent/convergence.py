"""When to stop: the rules of DESIGN.md, each a named reason."""

from __future__ import annotations

from retrac_local.agent.diff import StateDiff
from retrac_local.state import ResearchState


def converged(prev: ResearchState, state: ResearchState, diff: StateDiff, planner_finished: bool) -> str | None:
    """The reason to stop after this round, or None to go on."""
    has_verified = any(e.verified in ("yes", "partial") for e in state.evidence)
    if state.answer and not state.uncertainties:
        return "answered"
    if planner_finished and state.answer and has_verified:
        return "planner-finished"
    if state.next_plan and state.next_plan == prev.next_plan:
        return "plan-repeated"
    if state.iteration >= 2 and not diff.evidence_added and not diff.answer_changed:
        return "saturated"
    return None
