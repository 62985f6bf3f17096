"""The alternatives a question names ("Which is a herb, Saltwort or Kelpia?", "Between A and B,
who …?"), so that the final answer can be held to one of them.

Small models answer such questions with the property instead of the option ("herb"); when the
question names its options, the answer's grammar allows only those. Every mode's final answer uses
the same rule, so the comparison between modes stays fair. Found by rules, never by the model: a
question whose options cannot be told apart with confidence gets none, and its answer is free.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import create_model

from retrac_local.agent.verify import normalise
from retrac_local.text import words_of

# A yes/no question names things, not answers: "Are both A and B ... or ...?"
_YES_NO = re.compile(r"^(is|are|was|were|do|does|did|can|could|has|have|had|will|would|should)\b", re.I)
_WH = {"which", "who", "whose", "whom", "what", "where", "when", "why", "how"}
_JOINERS = {
    "of",
    "the",
    "and",
    "de",
    "la",
    "le",
    "du",
    "da",
    "von",
    "van",
    "der",
    "del",
    "for",
    "in",
    "on",
    "&",
}
_QUOTES = "'\"\u2018\u2019\u201c\u201d"
MAX_OPTION_WORDS = 10
_BETWEEN = re.compile(r"^between (.+?),? (?:who|whom|whose|which)\b", re.I)


def options(question: str) -> tuple[str, ...]:
    """The two options of an "A or B" question, as written in it; () when there are none."""
    q = normalise(question).rstrip(" ?").strip()
    between = _BETWEEN.match(q)
    if between:  # "Between A and B, who …?"; with a second "and" the split is a guess: none
        span = between.group(1)
        if span.count(" and ") != 1:
            return ()
        left, _, right = span.partition(" and ")
        found = (_option(left), _option(right))
        named = all(re.search(r"\b[^\W\d_]", f) and any(w[:1].isupper() for w in f.split()) for f in found)
        return found if all(found) and named and _key(found[0]) != _key(found[1]) else ()
    if " or " not in q:
        return ()
    verb = _YES_NO.match(q)
    if verb:  # "Is A or B taller?" names options; "Are A and B red or blue?" names none with capitals
        q = q[verb.end() :].strip()
    parts = [p.strip() for p in q.split(",")]
    with_or = [p for p in parts[1:] if " or " in p.strip(" ")[1:]]  # a clause after a comma: "…, A or B"
    if with_or and not verb:
        left, _, right = with_or[-1].rpartition(" or ")
        found = (_option(left), _option(right))
    else:  # no comma: the names on each side of the last "or" ("Who was born first A B or C D?")
        left, _, right = q.rpartition(" or ")
        found = (_name_run(left.split(), backwards=True), _name_run(right.split(), backwards=False))
    if not all(found) or _key(found[0]) == _key(found[1]):
        return ()
    return found  # type: ignore[return-value]


def pick(answer: str | None, choices: tuple[str, ...]) -> str | None:
    """The option a free answer names, when it names exactly one; otherwise the answer unchanged."""
    if not answer or not choices:
        return answer
    key = _key(answer)
    named = [c for c in choices if _key(c) and (_key(c) in key or key in _key(c))]
    return named[0] if len(named) == 1 else answer


def held_to(schema: type[Any], choices: tuple[str, ...]) -> type[Any]:
    """`schema` (a model with an `answer` field) whose answer must be one of the options."""
    if not choices:
        return schema
    from typing import Literal

    model = create_model(schema.__name__, __base__=schema, answer=(Literal[choices], ...))  # type: ignore[arg-type]
    model.grammar_cache = False  # type: ignore[attr-defined]  # per question
    return model


def _option(text: str) -> str:
    words = text.strip(" " + _QUOTES).split()
    if not words or len(words) > MAX_OPTION_WORDS:
        return ""
    if not any(w[:1].isupper() or w[:1].isdigit() or w[:1] in _QUOTES for w in words):
        return ""  # "Which musician or band …": a category, not a name
    return " ".join(words).strip(_QUOTES + " ,")


def _name_run(words: list[str], backwards: bool) -> str:
    """The capitalised name next to "or": walking away from it while words are capitalised (or
    joiners inside a name: "The House of Lanterns")."""
    seq = list(reversed(words)) if backwards else words
    if (
        not backwards and seq and seq[0] in ("the", "a", "an")
    ):  # lower case: "The House of Lanterns" keeps its article
        seq = seq[1:]  # "… or the Brabejum"
    run: list[str] = []
    for w in seq:
        bare = w.strip(_QUOTES)
        if bare.lower() in _WH:
            break
        if not (bare[:1].isupper() or bare[:1].isdigit() or (run and bare.lower() in _JOINERS)):
            break
        run.append(w)
    while run and run[-1].strip(_QUOTES).lower() in _JOINERS:  # a joiner ends nothing
        run.pop()
    if backwards:
        run.reverse()
    return " ".join(run).strip(_QUOTES + " ,") if len(run) <= MAX_OPTION_WORDS else ""


def _key(text: str) -> str:
    return " ".join(words_of(text.lower()))
