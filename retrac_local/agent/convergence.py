"""When to stop: the rules of DESIGN.md, each a named reason."""

from __future__ import annotations

import re

from retrac_local.agent.diff import StateDiff
from retrac_local.agent.linking import connected
from retrac_local.state import ResearchState
from retrac_local.verify import normalise


def answer_supported(state: ResearchState) -> bool:
    """The answer's words occur in a verified (or partial) piece of evidence, or in a conclusion drawn
    from such evidence (a computed answer: an age, a difference); a yes/no answer needs only some
    verified evidence. An answer the model wrote without support does not end the run."""
    backed = [e for e in state.evidence if e.verified in ("yes", "partial")]
    if not state.answer or not backed:
        return False
    answer = normalise(state.answer).lower()
    if answer in ("yes", "no"):
        return True
    words = [w for w in re.findall(r"\w+", answer) if len(w) >= 3 or w.isdigit()]
    if not words:
        return False
    backed_ids = {e.id for e in backed}
    texts = [f"{e.quote} {e.fact}" for e in backed]
    texts += [c.text for c in state.conclusions if backed_ids.intersection(c.evidence_ids)]
    return any(all(w in normalise(text).lower() for w in words) for text in texts)


def converged(prev: ResearchState, state: ResearchState, diff: StateDiff, planner_finished: bool) -> str | None:
    """The reason to stop after this round, or None to go on."""
    supported = answer_supported(state) and connected(state)
    if supported and not state.uncertainties:
        return "answered"
    if planner_finished and supported:
        return "planner-finished"
    if state.next_plan and state.next_plan == prev.next_plan:
        return "plan-repeated"
    if state.iteration >= 2 and not diff.evidence_added and not diff.answer_changed:
        return "saturated"
    return None
