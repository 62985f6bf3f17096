"""When to stop: the rules of DESIGN.md, each a named reason."""

from __future__ import annotations

import re

from retrac_local.agent.diff import StateDiff
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


_QUESTION_WORDS = frozenset(
    ["in", "which", "what", "who", "whom", "whose", "when", "where", "how", "why", "is", "are", "was", "were", "did", "does", "do", "the", "a", "an", "between", "of", "on", "at", "for", "by", "to", "and", "or", "both", "than", "that", "this", "these", "those", "name", "during", "after", "before", "near"]
)


def question_names(question: str) -> list[str]:
    """The names a question is about: runs of capitalised words ("Karn Point Lighthouse"), joined
    across "of"/"the"/"de" ("Battle of Uddevalla"), a possessive 's dropped, a leading question word
    skipped."""
    tokens = re.findall(r"[\w'’.-]+|[^\w\s]", question)
    names: list[str] = []
    current: list[str] = []
    for i, token in enumerate(tokens):
        capital = token[:1].isupper() and not (i == 0 and token.lower() in _QUESTION_WORDS)
        joins = (current and token.lower() in ("of", "the", "de") and i + 1 < len(tokens) and tokens[i + 1][:1].isupper())
        if capital or joins:
            current.append(re.sub(r"['’]s?$", "", token))
            continue
        if current:
            names.append(" ".join(current))
            current = []
    if current:
        names.append(" ".join(current))
    return list(dict.fromkeys(names))


def anchored(state: ResearchState) -> bool:
    """Some verified evidence is about a name the question asks about: an answer reached only through
    evidence on other entities (the wrong engineer, a namesake) has not been connected to the question."""
    names = question_names(state.question)
    backed = [e for e in state.evidence if e.verified in ("yes", "partial")]
    if not names:
        return True
    texts = [normalise(f"{e.fact} {e.quote} {e.source.replace('-', ' ')}").lower() for e in backed]
    for name in names:
        words = [w for w in re.findall(r"\w+", name.lower()) if len(w) >= 3 or w.isdigit()]
        if words and any(sum(w in text for w in words) * 3 >= len(words) * 2 for text in texts):
            return True
    return False


def converged(prev: ResearchState, state: ResearchState, diff: StateDiff, planner_finished: bool) -> str | None:
    """The reason to stop after this round, or None to go on."""
    supported = answer_supported(state) and anchored(state)
    if supported and not state.uncertainties:
        return "answered"
    if planner_finished and supported:
        return "planner-finished"
    if state.next_plan and state.next_plan == prev.next_plan:
        return "plan-repeated"
    if state.iteration >= 2 and not diff.evidence_added and not diff.answer_changed:
        return "saturated"
    return None
