"""Sources that disagree: two verified facts, from two documents, that give different years for the
same event of the same subject ("Ada Vellacott was born in 1849" against "… born in 1851").

Code finds them after every compression and the state records both facts and both sources; the
planner and the compressor see the disagreement, an answer that rests on one side is *unsure* with
the reason, and the report shows it. Only years are compared: other numbers (a population, a
length) differ between sources for honest reasons such as the year they were counted."""

from __future__ import annotations

import re

from retrac_local.agent.linking import names_in
from retrac_local.contract.state import Conflict, Evidence, ResearchState

# The events whose year is a single fact about a subject.
EVENTS = {
    "born": "born",
    "birth": "born",
    "died": "died",
    "death": "died",
    "founded": "founded",
    "established": "founded",
    "formed": "founded",
    "opened": "opened",
    "completed": "completed",
    "built": "built",
    "released": "released",
    "published": "published",
    "married": "married",
    "elected": "elected",
    "launched": "launched",
}
_YEAR = re.compile(r"\b(1\d{3}|20\d{2})\b")
_WORD = re.compile(r"[a-z]+")


def _doc(e: Evidence) -> str:
    return e.source.rsplit("#", 1)[0]


def _claim(e: Evidence) -> tuple[str, str, str] | None:
    """(subject, event, year) of a fact that states one year for one event of a named subject. The
    subject is the last name before the event word ("The parish register records that Tessa Orm
    was born …" → Tessa Orm); a fact that names no one before it ("Born in 1849 on Hesk Island,
    Tessa Orm …") makes no claim here: a missed disagreement costs less than an invented one."""
    years = set(_YEAR.findall(e.fact))
    found = [(m.start(), EVENTS[m.group(0)]) for m in _WORD.finditer(e.fact.lower()) if m.group(0) in EVENTS]
    if len(years) != 1 or len({event for _, event in found}) != 1:
        return None
    at, event = found[0]
    before = names_in(e.fact[:at])
    return (before[-1].lower(), event, years.pop()) if before else None


def find_conflicts(evidence: list[Evidence]) -> list[Conflict]:
    claims = [(e, c) for e in evidence if e.verified in ("yes", "partial") and (c := _claim(e)) is not None]
    found: list[Conflict] = []
    for i, (a, (subject, event, year)) in enumerate(claims):
        for b, (other_subject, other_event, other_year) in claims[i + 1 :]:
            if (subject, event) == (other_subject, other_event) and year != other_year and _doc(a) != _doc(b):
                about = f"{_subject_as_written(a.fact, subject)} {event}"
                found.append(Conflict(about=about, evidence_ids=[a.id, b.id], values=[year, other_year]))
    return found


def _subject_as_written(fact: str, subject: str) -> str:
    return next((n for n in names_in(fact) if n.lower() == subject), subject)


def record_conflicts(state: ResearchState) -> ResearchState:
    return state.model_copy(update={"conflicts": find_conflicts(state.evidence)})


def describe(conflict: Conflict, state: ResearchState) -> str:
    """'Ada Vellacott born: 1849 (Ada Vellacott, E1) against 1851 (Karn Point Lighthouse, E3)'."""
    by_id = state.evidence_by_id()
    sides = [
        f"{value} ({by_id[i].title or by_id[i].source}, {i})" if i in by_id else f"{value} ({i})"
        for i, value in zip(conflict.evidence_ids, conflict.values, strict=True)
    ]
    return f"{conflict.about}: " + " against ".join(sides)
