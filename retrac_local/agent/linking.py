"""How verified evidence connects an answer to the question, checked by code.

A multi-hop answer is a chain: the question names an entity (the Karn Point Lighthouse); a piece of
evidence about it names the next one (designed by Ada Vellacott); a piece about that one holds the
answer (born in 1849). Small models take shortcuts: a sentence with the right kind of value about
another entity (Jonas Pell, born in 1856) looks like an answer. Code checks the chain: the evidence
that states the answer must be about a name the question asks about, or share a name with evidence
that is. Names are runs of capitalised words, and each piece of evidence also carries the title of
its source document.
"""

from __future__ import annotations

import re

from retrac_local.agent.question import NOT_NAMES, spans
from retrac_local.agent.verify import normalise
from retrac_local.contract.state import Evidence, ResearchState
from retrac_local.text import words_of


def names_in(text: str) -> list[str]:
    return [n for n in spans(text, NOT_NAMES) if n.lower() not in NOT_NAMES]


def _words(name: str) -> list[str]:
    return [w for w in words_of(name.lower()) if len(w) >= 3 or w.isdigit()]


def mentions(text: str, name: str) -> bool:
    """At least two thirds of the name's words occur in the text ("Karn Point Light" for "Karn Point Lighthouse")."""
    words = _words(name)
    hay = set(words_of(normalise(text).lower()))
    return bool(words) and sum(w in hay for w in words) * 3 >= len(words) * 2


def evidence_text(e: Evidence) -> str:
    return f"{e.title} {e.fact} {e.quote}"


def evidence_names(e: Evidence) -> set[str]:
    return {n.lower() for n in [*names_in(e.fact), *names_in(e.quote), *([_entity(e)] if e.title else [])]}


def backed(state: ResearchState) -> list[Evidence]:
    return [e for e in state.evidence if e.verified in ("yes", "partial")]


def anchored_evidence(state: ResearchState) -> list[Evidence]:
    """Verified evidence about a name the question asks about."""
    names = state.asked.names
    return [e for e in backed(state) if any(mentions(evidence_text(e), n) for n in names)]


def answer_evidence(state: ResearchState) -> list[Evidence]:
    """Verified evidence that states the answer, or that a conclusion stating it cites."""
    if not state.answer:
        return []
    answer = normalise(state.answer).lower()
    words = [w for w in words_of(answer) if len(w) >= 3 or w.isdigit()]
    if not words:
        return []
    pool = backed(state)
    direct = [e for e in pool if all(w in normalise(f"{e.quote} {e.fact}").lower() for w in words)]
    if direct or not any(ch.isdigit() for ch in answer):
        return direct  # a name must stand in a quote; a conclusion naming it proves nothing
    # A computed answer (an age, a difference) stands in no quote: the evidence its conclusion cites.
    ids = {
        i
        for c in state.conclusions
        if all(w in normalise(c.text).lower() for w in words)
        for i in c.evidence_ids
    }
    return [e for e in pool if e.id in ids]


def connected(state: ResearchState) -> bool:
    """The answer's evidence is about a question name, or shares a name with evidence that is. A
    question that names nothing, and a yes/no answer, pass."""
    if not state.asked.names or normalise(state.answer or "").lower() in ("yes", "no"):
        return True
    anchors = anchored_evidence(state)
    return any(a in anchors or any(linked(a, n) for n in anchors) for a in answer_evidence(state))


def chain(state: ResearchState) -> list[Evidence]:
    """The evidence an answer stands on: what states it, and the evidence about a question name
    that links it to the question (the first hop of a bridge)."""
    answer = answer_evidence(state)
    return answer + _hops(anchored_evidence(state), answer)


def bridge(state: ResearchState, cited: list[Evidence]) -> list[Evidence]:
    """The evidence that links cited evidence to the question when none of it mentions a name the
    question asks about: verified evidence about a question name that names what a cited piece is
    about ("designed by Ada Vellacott" beside "She was born in 1849"). Empty when the citations
    reach the question already, or nothing links them to it."""
    anchors = anchored_evidence(state)
    if not cited or not state.asked.names or any(e in anchors for e in cited):
        return []
    return _hops(anchors, cited)[:1]


def _hops(anchors: list[Evidence], evidence: list[Evidence]) -> list[Evidence]:
    """The anchored evidence, other than `evidence` itself, that names what a piece of it is about."""
    return [a for a in anchors if a not in evidence and any(linked(a, e) for e in evidence)]


def _entity(e: Evidence) -> str:
    return re.sub(r"\s*\([^)]*\)\s*$", "", e.title)  # "Jonas Pell (engineer)" → "Jonas Pell"


def linked(a: Evidence, b: Evidence) -> bool:
    """One piece of evidence names the entity the other is about (its document's title); without
    titles, the two share a name. Shared incidental names (a town, an employer) do not link."""
    if a.title and b.title:
        return mentions(f"{b.fact} {b.quote}", _entity(a)) or mentions(f"{a.fact} {a.quote}", _entity(b))
    return bool(evidence_names(a) & evidence_names(b))


def missing_link(state: ResearchState) -> str | None:
    """The open question code writes when the answer is not connected to the question, or None."""
    if not state.answer or connected(state):
        return None
    names = " or ".join(state.asked.names)
    if not anchored_evidence(state):
        return f"No verified evidence mentions {names} yet: how is {state.answer!r} connected to it?"
    about = {_entity(e).lower() for e in backed(state) if e.title}
    asked = {n.lower() for n in state.asked.names}
    leads = [
        n
        for e in anchored_evidence(state)
        for n in names_in(e.quote)
        if n.lower() not in about and n.lower() not in asked and not any(mentions(n, q) for q in asked)
    ]
    follow = (
        f" It names {', '.join(dict.fromkeys(leads[:3]))}: search for the one the question means."
        if leads
        else ""
    )
    return f"The evidence for {state.answer!r} is not linked to what the evidence says about {names}.{follow}"
