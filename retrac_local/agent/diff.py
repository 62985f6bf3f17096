"""The state diff, computed by code after each compression, and drift repair.

Drift is a verified fact or a constraint that changed or vanished without the round giving a
reason; it is restored from the previous state and recorded.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from retrac_local.contract.state import ResearchState


class StateDiff(BaseModel):
    evidence_added: list[str] = Field(default_factory=list)
    evidence_removed: list[str] = Field(default_factory=list)
    evidence_changed: list[str] = Field(default_factory=list)
    answer_before: str | None = None
    answer_after: str | None = None
    uncertainties_opened: list[str] = Field(default_factory=list)
    uncertainties_closed: list[str] = Field(default_factory=list)
    drift_repaired: list[str] = Field(default_factory=list)

    @property
    def answer_changed(self) -> bool:
        return self.answer_before != self.answer_after

    def summary(self) -> str:
        parts = []
        if self.evidence_added:
            parts.append(f"+{len(self.evidence_added)} evidence")
        if self.evidence_removed:
            parts.append(f"-{len(self.evidence_removed)} evidence")
        if self.answer_changed:
            parts.append(f"answer: {self.answer_after!r}")
        if self.uncertainties_closed:
            parts.append(f"{len(self.uncertainties_closed)} question(s) closed")
        if self.drift_repaired:
            parts.append(f"{len(self.drift_repaired)} drift repaired")
        return ", ".join(parts) or "nothing new"


def diff_states(before: ResearchState, after: ResearchState) -> StateDiff:
    old, new = before.evidence_by_id(), after.evidence_by_id()
    return StateDiff(
        evidence_added=[i for i in new if i not in old],
        evidence_removed=[i for i in old if i not in new],
        evidence_changed=[i for i in new if i in old and _core(old[i]) != _core(new[i])],
        answer_before=before.answer,
        answer_after=after.answer,
        uncertainties_opened=[u for u in after.uncertainties if u not in before.uncertainties],
        uncertainties_closed=[u for u in before.uncertainties if u not in after.uncertainties],
    )


def _core(evidence: Any) -> tuple[str, str, str]:
    return (evidence.source, evidence.quote, evidence.verified)


def repair_drift(
    before: ResearchState, after: ResearchState, dropped_with_reason: set[str]
) -> tuple[ResearchState, list[str]]:
    """Restore verified evidence and constraints that vanished or changed; returns the events."""
    events: list[str] = []
    new = after.evidence_by_id()
    evidence = list(after.evidence)
    for old in before.evidence:
        if old.verified != "yes" or old.id in dropped_with_reason:
            continue
        current = new.get(old.id)
        if current is None:
            evidence.append(old)
            events.append(f"verified evidence {old.id} vanished; restored")
        elif _core(current) != _core(old):
            evidence[evidence.index(current)] = old
            events.append(f"verified evidence {old.id} changed; restored")
    constraints = after.constraints
    if constraints != before.constraints:
        events.append("constraints changed; restored")
        constraints = before.constraints
    if not events:
        return after, events
    evidence.sort(key=lambda e: int(e.id[1:]) if e.id[1:].isdigit() else 0)
    return after.model_copy(update={"evidence": evidence, "constraints": constraints}), events
