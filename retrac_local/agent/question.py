"""The question, parsed once: the kind of answer it asks for, the options it names, the names it
mentions, the order and event of a comparison, whether it asks for a number, whether it asks two
things. Every stage reads this instead of parsing the text again (`ResearchState.asked`).

Everything here reads English question shapes ("which … first, A or B?", "how many", "who"): on a
question in another language the kind and the comparison are None, the options empty, and the
rules that read them stand aside (docs/RULES.md).

- **Kind.** "when" → a date, "how many" → a number, "is/was/did …" → yes or no, "where" → a place,
  "who" → a name, any other "what/which …" → a thing named (never a bare yes or no); None when the
  rules are unsure, and for a question that names its options.
- **Options.** The two alternatives of "A or B?" or "Between A and B, who …?", as written; none when
  they cannot be told apart with confidence (the answer is then free).
- **Names.** Runs of capitalised words ("Karn Point Lighthouse"), joined across "of"/"the"/"de",
  a possessive 's dropped, a leading question word skipped.
- **Comparison.** (order, event) when the question asks which of its two options came first or last:
  "birth", "death", "age" (older/younger with no verb) or the question's own verb.
- **Two things.** A second question word after "and" or a comma ("When was it built and who
  designed it?"): one value is not the whole answer.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import Any, Literal

from retrac_local.agent.verify import normalise
from retrac_local.text import words_of

Order = Literal["earliest", "latest"]

Kind = Literal["date", "number", "yes/no", "place", "name", "named"]

_YES_NO_START = re.compile(r"^(is|are|was|were|do|does|did|can|could|has|have|had|will|would|should)\b", re.I)


def _kind(question: str) -> Kind | None:
    """The kind of answer the question asks for, or None when the rules cannot tell."""
    q = normalise(question).strip().lower()
    if " or " in q and not _YES_NO_START.match(q):
        return None  # "Which is older, A or B?": one of the options, checked by the options rule
    if _YES_NO_START.match(q):
        return None if " or " in q else "yes/no"
    if re.search(r"\bhow (many|much)\b", q):
        return "number"
    if re.search(r"\b(what|which) (year|decade|century|date|month)\b", q) or re.match(
        r"^(when|in what year|in which year)\b", q
    ):
        return "date"
    if re.match(r"^(where|in what (city|country|town|state)|in which (city|country|town|state))\b", q):
        return "place"
    if re.match(r"^(who|whom|whose)\b", q):
        return "name"
    if re.match(r"^((in|on|at|for|from|of|by|to|with) )?(what|which)\b", q):
        return "named"  # "Which magazine …?", "What nationality …?": something named, not yes or no
    return None


# A yes/no question names things, not answers: "Are both A and B ... or ...?"
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


def _options(question: str) -> tuple[str, ...]:
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
        return found if all(found) and named and option_key(found[0]) != option_key(found[1]) else ()
    if " or " not in q:
        return ()
    verb = _YES_NO_START.match(q)
    if verb:  # "Is A or B taller?" names options; "Are A and B red or blue?" names none with capitals
        q = q[verb.end() :].strip()
    parts = [p.strip() for p in q.split(",")]
    with_or = [p for p in parts[1:] if " or " in p.strip(" ")[1:]]  # a clause after a comma: "…, A or B"
    if with_or and not verb:
        left, _, right = with_or[-1].rpartition(" or ")
        # A title may hold a comma ("…, Sunset or Hello, Dolly"): each option runs on through the
        # parts beside it that start as a name does (never into the question's own first clause),
        # not through a lower-case aside.
        at = len(parts) - 1 - parts[::-1].index(with_or[-1])
        tail = list(itertools.takewhile(_starts_a_name, parts[at + 1 :]))
        head = list(itertools.takewhile(_starts_a_name, parts[at - 1 : 0 : -1]))[::-1]  # not the first part
        found = (
            _option(", ".join([*head, left])) or _option(left),
            _option(", ".join([right, *tail])) or _option(right),
        )
    else:  # no comma: the names on each side of the last "or" ("Who was born first A B or C D?")
        left, _, right = q.rpartition(" or ")
        found = (_name_run(left.split(), backwards=True), _name_run(right.split(), backwards=False))
    if not all(found) or option_key(found[0]) == option_key(found[1]):
        return ()
    return found  # type: ignore[return-value]


def _starts_a_name(text: str) -> bool:
    return text[:1].isupper() or text[:1].isdigit()


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


def option_key(text: str) -> str:
    return " ".join(words_of(text.lower()))


_EARLIEST = re.compile(r"\b(older|oldest|first|earlier|earliest|sooner|elder|eldest)\b")
_LATEST = re.compile(
    r"\b(younger|youngest|later|latest|last|more recent(ly)?|most recent(ly)?|newer|newest)\b"
)
_AGE = re.compile(r"\b(older|oldest|younger|youngest|elder|eldest)\b")
_BIRTH = re.compile(r"\bborn\b")
_DEATH = re.compile(r"\b(die|died|dies|death|passed away|pass away)\b")


# The question's verb → the stems that state that event in a text.
EVENTS: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...] = (
    (
        re.compile(r"\bfound(ed|ing)?\b"),
        (
            "founded",
            "founding",
            "co-founded",
            "established",
            "formed",
            "launched",
            "started",
            "first published",
        ),
    ),
    (
        re.compile(r"\bestablish(ed|ment)?\b"),
        ("established", "founded", "formed", "establishment", "launched"),
    ),
    (re.compile(r"\bform(ed|ation)?\b"), ("formed", "founded", "formation", "established")),
    (
        re.compile(r"\b(releas(e|ed)|came out|come out|come to market|came to market|hit the market)\b"),
        (
            "released",
            "release",
            "premiered",
            "published",
            "debuted",
            "launched",
            "aired",
            "issued",
            "introduced",
        ),
    ),
    (re.compile(r"\bpublish(ed)?\b"), ("published", "publication", "released", "first appeared")),
    (
        re.compile(r"\b(produc(ed|e)|made|creat(ed|e)|filmed|shot)\b"),
        ("produced", "released", "premiered", "created", "made", "filmed"),
    ),
    (
        re.compile(r"\b(built|construct(ed)?|erected)\b"),
        ("built", "constructed", "completed", "erected", "opened"),
    ),
    (re.compile(r"\bopen(ed)?\b"), ("opened", "opening", "built", "established")),
    (re.compile(r"\b(launch(ed)?|introduc(ed|e))\b"), ("launched", "introduced", "released", "unveiled")),
    (
        re.compile(r"\b(premier(ed|e)|air(ed)?|broadcast)\b"),
        ("premiered", "aired", "broadcast", "debuted", "released"),
    ),
    (
        re.compile(r"\b(writ(e|ten)|wrote|compos(ed|e))\b"),
        ("written", "wrote", "composed", "published", "premiered"),
    ),
    (
        re.compile(r"\b(start(ed)?|beg(a|u)n|in service|in operation|operat(e|ed|ing))\b"),
        (
            "started",
            "began",
            "opened",
            "established",
            "founded",
            "commenced",
            "operated",
            "discovered",
            "production",
        ),
    ),
    (re.compile(r"\b(discover(ed)?|invent(ed)?)\b"), ("discovered", "invented", "first described")),
    (
        re.compile(r"\b(fought|took place|take place|occurr?(ed)?|happen(ed)?|held)\b"),
        ("fought", "took place", "occurred", "happened", "held", "began", "started"),
    ),
    (re.compile(r"\b(decided|argued|ruled)\b"), ("decided", "argued", "ruled")),
    (re.compile(r"\b(sign(ed)?|ratif(ied|y))\b"), ("signed", "ratified", "concluded")),
)


def _comparison(question: str, named: tuple[str, ...]) -> tuple[Order, str] | None:
    """(order, event) when the question asks which of its two options came first or last; event is
    "birth", "death", "age" (older/younger, no verb) or the question's verb; None otherwise."""
    if len(named) != 2:
        return None
    q = normalise(question).lower()
    for option in named:  # "… first, The Last Word or Orrin?": an option's words say nothing
        q = q.replace(normalise(option).lower(), " ")
    q = re.sub(r"\bfirst (name|language|album|film|book|season|episode|single)\b", "", q)
    early, late = bool(_EARLIEST.search(q)), bool(_LATEST.search(q))
    if early == late:
        return None
    order: Order = "earliest" if early else "latest"
    if _BIRTH.search(q):
        return order, "birth"
    if _DEATH.search(q):
        return order, "death"
    for pattern, _ in EVENTS:
        found = pattern.search(q)
        if found:
            return order, found.group(0)
    if _AGE.search(q):
        return order, "age"
    return None


_QUESTION_WORDS = frozenset(
    [
        "in",
        "which",
        "what",
        "who",
        "whom",
        "whose",
        "when",
        "where",
        "how",
        "why",
        "is",
        "are",
        "was",
        "were",
        "did",
        "does",
        "do",
        "the",
        "a",
        "an",
        "between",
        "of",
        "on",
        "at",
        "for",
        "by",
        "to",
        "and",
        "or",
        "both",
        "than",
        "that",
        "this",
        "these",
        "those",
        "name",
        "during",
        "after",
        "before",
        "near",
    ]
)
# Capitalised words that open sentences or stand for a name without being one.
NOT_NAMES = _QUESTION_WORDS | frozenset(
    ["it", "its", "he", "she", "his", "her", "they", "their", "there", "here", "today", "its", "also"]
)


def spans(text: str, skip_first: frozenset[str]) -> list[str]:
    tokens = re.findall(r"[\w'’.-]+|[^\w\s]", text)
    names: list[str] = []
    current: list[str] = []
    for i, token in enumerate(tokens):
        sentence_start = i == 0 or tokens[i - 1] in '.!?:;"(' and not current
        capital = token[:1].isupper() and not (sentence_start and token.lower() in skip_first)
        joins = (
            bool(current)
            and token.lower() in ("of", "the", "de")
            and i + 1 < len(tokens)
            and tokens[i + 1][:1].isupper()
        )
        if capital or joins:
            current.append(re.sub(r"['’]s?$", "", token).strip(".,"))
            continue
        if current:
            names.append(" ".join(current))
            current = []
    if current:
        names.append(" ".join(current))
    return list(dict.fromkeys(n for n in names if n))


def _names(question: str) -> list[str]:
    """The names a question is about: runs of capitalised words ("Karn Point Lighthouse"), joined
    across "of"/"the"/"de" ("Siege of Vell Harbour"), a possessive 's dropped, a leading question word
    skipped."""
    return spans(question, _QUESTION_WORDS)


_ASKS_NUMBER = re.compile(r"\b(year|when|date|how (many|much|long|old|tall|high|far|big))\b", re.IGNORECASE)


@dataclass(frozen=True)
class Question:
    text: str
    kind: Kind | None
    options: tuple[str, ...]
    names: tuple[str, ...]
    comparison: tuple[Order, str] | None  # (order, event)
    asks_number: bool  # a year, a date or a quantity: a sentence holding a number answers it
    asks_two: bool

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@lru_cache(maxsize=4096)
def parse(text: str) -> Question:
    named = _options(text)
    return Question(
        text=text,
        kind=_kind(text),
        options=named,
        names=tuple(_names(text)),
        comparison=_comparison(text, named),
        asks_number=bool(_ASKS_NUMBER.search(text)),
        asks_two=bool(_TWO_THINGS.search(normalise(text))),
    )


_TWO_THINGS = re.compile(
    r"\b(who|whom|whose|what|which|when|where|how)\b.*\band\s+(who|whom|whose|what|which|when|where|how)\b",
    re.IGNORECASE,
)
