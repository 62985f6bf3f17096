"""Questions that ask which of two options came first, decided by code from the dates the texts give.

"Who was born first, A or B?", "Which was founded earlier, A or B?", "Who is younger, A or B?",
"Which film came out first …?": a small model reads both dates and still names the wrong option
about half the time; comparing two dates is not a judgement. So when the question names two
options (`choices.options`), asks for the earlier or the later one, and the run's texts give each
option a date of the event asked about (birth, death, or the verb the question uses: founded,
released, formed, …), code compares the dates and names the option. The two sentences that state
the dates are the answer's evidence.

Code decides only when it is sure: each option needs a date read from a text about that option (a
document titled with its name, or a sentence that names it), the dates must differ at the
precision both give (1939 against March 1939 cannot be ordered within 1939), and the event must be
one the question names. Otherwise the model answers, as for any other question.

How a date of an option is read:
- **birth / death**: the parenthesis after the name, "Ada Vellacott (3 May 1901 – 1980)" (first date
  the birth, the one after the dash the death; "born …" or "died …" inside it says which), or
  "was born on/in …" and "died on/in …" in a sentence of the option's document or naming it;
- **another event**: the first sentence of the option's texts that holds a word of the question's
  verb ("founded", "release", "formed", …) and a date: the first date after that word, else the
  sentence's only date;
- "older" / "younger" with no verb: a birth date when both options have one, else the date of the
  first founding-like event ("founded", "established", "formed", "built", "released", …).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from retrac_local.agent.question import EVENTS, Order, parse
from retrac_local.agent.verify import addresses_the_model, normalise
from retrac_local.corpus.base import Chunk
from retrac_local.corpus.chunking import sentences
from retrac_local.text import MONTHS, words_of

_AGE_OF_A_THING = (
    "founded",
    "established",
    "formed",
    "built",
    "constructed",
    "opened",
    "released",
    "published",
    "created",
    "launched",
    "started",
    "began",
    "premiered",
    "introduced",
    "incorporated",
)

_MONTHS = {m: n for n, m in enumerate(MONTHS, start=1)}
_MONTHS |= {m[:3]: n for m, n in list(_MONTHS.items())} | {"sept": 9}
_MONTH = r"(?:" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"


def _year(n: int) -> str:
    # Not a part of "1,868,000" or "3.1415": digits next to the year, or a comma or point then digits.
    return rf"(?<!\d)(?<!\d[,.])(?P<y{n}>\d{{3,4}})(?!\d|[,.]\d)(?:\s*(?P<e{n}>BCE?|AD|CE)\b)?"


_DATE = re.compile(
    rf"\b(?P<d1>\d{{1,2}})\s+(?P<m1>{_MONTH})\s*,?\s*{_year(1)}"
    rf"|\b(?P<m2>{_MONTH})\s+(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?\s*,?\s*{_year(2)}"
    rf"|\b(?P<m3>{_MONTH})\s*,?\s+{_year(3)}"
    rf"|{_year(4)}",
    re.IGNORECASE,
)
_PRONOUN = re.compile(r"^(he|she|they)\b", re.IGNORECASE)
_PAREN = re.compile(r"\(([^()]*)\)")


@dataclass(frozen=True)
class When:
    """A date as precise as its text: (year, month, day), 0 where the text gives none."""

    year: int
    month: int = 0
    day: int = 0
    text: str = ""

    def before(self, other: When) -> bool | None:
        """Whether this date is earlier than `other`; None when their common precision cannot tell."""
        for mine, theirs in ((self.year, other.year), (self.month, other.month), (self.day, other.day)):
            if mine == 0 or theirs == 0:
                return None
            if mine != theirs:
                return mine < theirs
        return None


@dataclass(frozen=True)
class Dated:
    option: str
    when: When
    chunk: Chunk
    sentence: str  # the sentence of `chunk` that states the date, as `chunking.sentences` splits it


@dataclass(frozen=True)
class Decision:
    answer: str  # the option, as the question writes it
    order: Order
    event: str  # "birth", "death", or the question's verb
    dated: tuple[Dated, Dated]

    def explain(self) -> str:
        a, b = self.dated
        word = "earlier" if self.order == "earliest" else "later"
        return (
            f"{self.event} dates compared by code: {a.option} {a.when.text}, {b.option} {b.when.text}; "
            f"{self.answer} is the {word}"
        )


def decide(question: str, chunks: list[Chunk]) -> Decision | None:
    """The option the dates in `chunks` say the question asks for, or None when code is not sure."""
    wanted = parse(question).comparison
    if wanted is None:
        return None
    order, event = wanted
    first, second = parse(question).options
    if event == "age":
        # A person's age is their birth; a thing's is its founding (or making). One option with a
        # birth date and one without is not a pair code can compare.
        born = [_dated(o, chunks, "birth") for o in (first, second)]
        pair = born if any(born) else [_dated(o, chunks, "age") for o in (first, second)]
        event = "birth" if any(born) else "age"
    else:
        pair = [_dated(o, chunks, event) for o in (first, second)]
    a, b = pair
    if a is None or b is None:
        return None
    earlier = a.when.before(b.when)
    if earlier is None:
        return None
    pick = a if earlier == (order == "earliest") else b
    return Decision(pick.option, order, event, (a, b))


def _dated(option: str, chunks: list[Chunk], event: str) -> Dated | None:
    """The date of `event` for `option` that its texts give: the opening of its own document
    first, then its other sentences, then any sentence of another text that names it; None when
    none gives one."""
    # Its own documents, one titled with just its name before those with a qualifier ("Ada
    # Vellacott (painter)"): two people of one name are told apart by the title, or not at all.
    exact = [c for c in chunks if _same_name(c.title, option, qualified=False)]
    own = exact + [c for c in chunks if c not in exact and _same_name(c.title, option)]
    if not exact and len({c.doc_id for c in own}) > 1:
        return None
    # A sentence that speaks to the model states no date: code never cites an instruction.
    for chunk in own:
        if chunk.chunk_index == 0:
            opened = _opening(chunk.text, event)
            if opened and not addresses_the_model(opened[1]):
                return Dated(option, opened[0], chunk, opened[1])
        for sentence in _stating(chunk.text):
            found = _date_in(sentence, event, option, own=True)
            if found:
                return Dated(option, found, chunk, sentence)
    for chunk in chunks:
        if chunk in own:
            continue
        for sentence in _stating(chunk.text):
            if _names(sentence, option):
                found = _date_in(sentence, event, option)
                if found:
                    return Dated(option, found, chunk, sentence)
    return None


_OPENING_CHARS = 400
_WORKS = (
    "released",
    "produced",
    "created",
    "came out",
    "come out",
    "premiered",
    "published",
    "written",
    "wrote",
    "composed",
    "made",
    "filmed",
    "shot",
    "aired",
    "age",
)
# "X is a 2006 documentary film", "X was the 1978 American comedy": the year a work is of.
_OF_YEAR = re.compile(r"\b(?:is|was|are|were)\s+(?:an?|the)\s+(?:[\w-]+\s+){0,2}?(\d{4})\s+[A-Za-z]")


def _stating(text: str) -> list[str]:
    """The sentences of `text` that state something rather than instruct the model."""
    return [s for s in sentences(text, apart=addresses_the_model) if not addresses_the_model(s)]


def _opening(text: str, event: str) -> tuple[When, str] | None:
    """The date of `event` the opening of a document about the option gives, and the sentences
    that hold it: the first parenthesis with a date (a life's dates: "Ada Vellacott (3 May 1901 –
    1980)", after any parenthesis without one: "( ; …)", "(Japanese: …)"), or for a work the year it
    is of ("X is a 2006 documentary film")."""
    head = " ".join(text.split())[:_OPENING_CHARS]
    if event in ("birth", "death"):
        for m in _PAREN.finditer(head):
            if not _all_dates(m.group(1)):
                continue  # a pronunciation, a native spelling: the dates come after it
            found = _life_date(m.group(1), event)
            return (found, _covering(text, m.group(0))) if found else None
        return None
    if _stems(event) and not any(w in event for w in _WORKS) and event != "age":
        return None
    of_year = _OF_YEAR.search(head.split(". ")[0])
    if of_year is None:
        return None
    return When(int(of_year.group(1)), text=of_year.group(1)), _covering(text, of_year.group(0))


def _covering(text: str, fragment: str) -> str:
    """The sentences of `text` that hold `fragment` (a split inside it, after "c." or "Jr.",
    joins them)."""
    parts = sentences(text)
    for i in range(len(parts)):
        for j in range(i, min(i + 4, len(parts))):
            joined = " ".join(parts[i : j + 1])
            if fragment in joined:
                return joined
    return " ".join(text.split())


def _date_in(sentence: str, event: str, option: str, own: bool = False) -> When | None:
    """The date of `event` for `option` that one sentence states: a parenthesis right after the
    option's name, "born …" / "died …" after its name (or after "He"/"She" in the option's own
    document, `own`), or a word of the event followed by a date."""
    s = normalise(sentence)
    if event in ("birth", "death"):
        for m in _PAREN.finditer(s):
            if _names(s[max(0, m.start() - len(option) - 40) : m.start()], option):
                found = _life_date(m.group(1), event)
                if found:
                    return found
        said = re.search(r"\bborn\b" if event == "birth" else r"\b(died|passed away)\b", s, re.IGNORECASE)
        if said and (_names(s[: said.start()], option) or (own and _PRONOUN.match(s))):
            return _first_date(s[said.end() :][:60])
        return None
    if not own and not _names(s, option):
        return None
    stems = _AGE_OF_A_THING if event == "age" else _stems(event)
    lower = s.lower()
    for stem in stems:
        at = re.search(rf"\b{re.escape(stem)}\b", lower)
        if at:
            after = _first_date(s[at.end() :][:80])
            if after:
                return after
            dates = _all_dates(s)
            if len({(d.year, d.month, d.day) for d in dates}) == 1:
                return dates[0]
    return None


def _stems(verb: str) -> tuple[str, ...]:
    for pattern, stems in EVENTS:
        if pattern.search(verb):
            return stems
    return ()


def _life_date(inside: str, event: str) -> When | None:
    """Birth or death date from the parenthesis after a name: "(3 May 1901 – 1980)", "(born
    1950)", "(died 12 June 1890)", "( ; October 8, 1939 – July 12, 2010)", "(c. 953 – c. 1029)"."""
    text = inside.replace("–", "-").replace("—", "-")
    born = re.search(r"\b(born|b\.)\s*", text, re.IGNORECASE)
    died = re.search(r"\b(died|d\.)\s*", text, re.IGNORECASE)
    if born and event == "birth":
        return _first_date(text[born.end() :])
    if died and event == "death":
        return _first_date(text[died.end() :])
    if born or died:
        return None
    dates = _all_dates(text)
    if len(dates) != 2:
        return None  # "(1939)" alone could be anything: a film's year, a founding
    between = text[text.find(dates[0].text) + len(dates[0].text) : text.rfind(dates[1].text)]
    if not re.fullmatch(r"[\s,;-]*(c\.|ca\.|circa)?\s*", between, re.IGNORECASE):
        return None  # two dates that are not a span: "(1939; revised 1950)"
    return dates[0] if event == "birth" else dates[1]


def _first_date(text: str) -> When | None:
    dates = _all_dates(text)
    return dates[0] if dates else None


def _all_dates(text: str) -> list[When]:
    out = []
    for m in _DATE.finditer(text):
        g = m.groupdict()
        n = next(k for k in "1234" if g[f"y{k}"])
        year, era = g[f"y{n}"], (g[f"e{n}"] or "")
        y = int(year)
        if not era and not 100 <= y <= 2100:
            continue
        y = -y if era.upper().startswith("BC") else y
        month_text = g["m1"] or g["m2"] or g["m3"]
        month = _MONTHS.get(month_text.lower().rstrip("."), 0) if month_text else 0
        day = int(g["d1"] or g["d2"] or 0)
        if day > 31:
            day = 0
        out.append(When(y, month, day, m.group(0).strip()))
    return out


def _key(text: str) -> list[str]:
    return words_of(normalise(text).lower())


_ARTICLES = {"the", "a", "an"}


def _same_name(title: str, option: str, qualified: bool = True) -> bool:
    """Whether a document titled `title` is about `option`: the same words, articles aside, and
    with `qualified` a parenthetical qualifier aside too ("Saltry (band)")."""
    t = [w for w in _key(re.sub(r"\([^()]*\)", "", title) if qualified else title) if w not in _ARTICLES]
    o = [w for w in _key(option) if w not in _ARTICLES]
    return bool(o) and t == o


def _names(text: str, option: str) -> bool:
    """Whether `text` names the option: its words in a row (articles aside), or for a person's
    name of several words, the first and the last in order ("Ada May Vellacott" names "Ada
    Vellacott")."""
    o = [w for w in _key(option) if w not in _ARTICLES]
    if not o:
        return False
    words = _key(text)
    joined = " " + " ".join(words) + " "
    if " " + " ".join(o) + " " in joined:
        return True
    if len(o) >= 2:
        first = [i for i, w in enumerate(words) if w == o[0]]
        return any(o[-1] in words[i + 1 : i + 5] for i in first)
    return False
