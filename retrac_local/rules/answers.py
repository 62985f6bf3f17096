"""The final answer checked by code: of the kind the question asks, short, and saying nothing that
the evidence does not state.

- **Kind.** Rules read the kind of answer from the question ("when" → a date, "how many" → a number,
  "is/was/did …" → yes or no, "where" → a place, "who" → a name, any other "what/which …" → a
  thing named, never a bare yes or no); no kind when the rules are unsure.
  An answer of the wrong kind (a person's name for "where was she born?") is the entity the
  question goes *through*, not the one it asks for: the run must not stop on it.
- **New.** A question that asks for something does not already state it: "at what Orrin County
  lighthouse?" is not answered by "Orrin County". An answer made only of the question's own words
  is the entity the question starts from (yes/no questions and questions that name their options
  excepted).
- **Short.** Gold answers are short spans and a person wants the answer first: a parenthetical
  aside or a trailing "also known as" clause is cut (the report keeps the evidence).
- **Claims.** Every number and name of the answer must occur in the verified evidence; an answer
  that adds one ("born in the city of X", X in no evidence) is never *answered*.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from retrac_local.agent.question import Kind, parse
from retrac_local.agent.verify import normalise
from retrac_local.contract.state import Evidence
from retrac_local.text import MONTHS, ends_sentence, words_of

_NUMBER_WORDS = frozenset(
    [
        "zero",
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "eleven",
        "twelve",
        "thirteen",
        "fourteen",
        "fifteen",
        "sixteen",
        "seventeen",
        "eighteen",
        "nineteen",
        "twenty",
        "thirty",
        "forty",
        "fifty",
        "sixty",
        "seventy",
        "eighty",
        "ninety",
        "hundred",
        "thousand",
        "million",
        "billion",
        "dozen",
        "several",
    ]
)
_MONTHS = frozenset(MONTHS)
_DATE_WORDS = _MONTHS | {
    "century",
    "centuries",
    "decade",
    "bc",
    "bce",
    "ad",
    "ce",
    "spring",
    "summer",
    "autumn",
    "winter",
    "fall",
    "early",
    "late",
    "mid",
}
_BARE_YES_NO = re.compile(r"^(yes|no)\b(?!\s+\w)")
_ASIDE = re.compile(r"\s*\([^()]*\)")
_TRAILER = re.compile(
    r"[,;]\s*(also|or|formerly|known|which|who|where|spelt|spelled|born|nicknamed)\b.*$", re.I
)


_PLACE_NOUNS = (
    "town|city|village|county|country|region|state|province|port|district|municipality|settlement|island|"
    "river|borough|parish|commune|suburb|neighbourhood|neighborhood|capital|community|hamlet|area"
)
_PERSON_AFTER = re.compile(
    rf"^(,? who\b|,? whom\b| was born\b| \(born\b| \(\d{{4}}\s*[-–]|"
    rf" (was|is) an? (?!(\w+ )?({_PLACE_NOUNS})\b))"
)
_PERSON_BEFORE = re.compile(
    r"\b(mother|father|wife|husband|son|daughter|brother|sister|grandmother|grandfather|"
    r"uncle|aunt|by)( (was|is))?( the| an?)?( [a-z]+)?\s*$"
)


def is_person(answer: str, evidence: list[Evidence]) -> bool:
    """Whether verified evidence speaks of the answer as a person: "Ilse Varnholt, who …", "… was a
    weaver", "her mother was the weaver Ilse Varnholt". A place is not spoken of this way."""
    return any(
        _PERSON_AFTER.match(text[m.end() :]) or _PERSON_BEFORE.search(text[: m.start()])
        for text, m in _mentions(answer, evidence)
    )


def _mentions(answer: str, evidence: list[Evidence], flags: int = 0) -> Iterator[tuple[str, re.Match[str]]]:
    """Each place verified evidence (its quote or its fact) names the answer: the text and the match."""
    name = normalise(answer).strip().rstrip(".")
    if not name:
        return
    for e in evidence:
        if e.verified in ("yes", "partial"):
            for text in (normalise(e.quote), normalise(e.fact)):
                for m in re.finditer(re.escape(name), text, flags):
                    yield text, m


_THINGS = frozenset(
    [
        *_PLACE_NOUNS.split("|"),
        "hotel",
        "casino",
        "resort",
        "building",
        "skyscraper",
        "tower",
        "bridge",
        "stadium",
        "arena",
        "airport",
        "station",
        "church",
        "cathedral",
        "museum",
        "park",
        "lighthouse",
        "castle",
        "palace",
        "theatre",
        "theater",
        "film",
        "movie",
        "album",
        "song",
        "single",
        "novel",
        "book",
        "poem",
        "opera",
        "episode",
        "series",
        "sitcom",
        "game",
        "magazine",
    ]
)
_DESCRIBED = re.compile(
    r"^,? (?:is|was|are|were) (?:a|an|the) ([^,.;:()]*?)(?= in | of | by | from | on | at | that | "
    r"which | who | located | based | owned | directed | released | written |[,.;:()]|$)"
)


def is_thing(answer: str, evidence: list[Evidence]) -> bool:
    """Whether verified evidence describes the answer as a place, a building or a work ("The Karn
    Point Lighthouse is a lighthouse in …", "Rio Sombre is a 1951 opera by …"): the head word of
    what it "is" says so. Not what a "who" question asks for: a person, a group or a firm is
    ("… is an engineering firm", "… is a film production company")."""
    for text, m in _mentions(answer, evidence, re.I):
        described = _DESCRIBED.match(text[m.end() :])
        head = described.group(1).split()[-1:] if described else []
        if head and head[0].lower() in _THINGS:
            return True
    return False


def fits(answer: str, kind: Kind | None, evidence: list[Evidence] | None = None) -> bool:
    """Whether the answer is of the kind asked; an unknown kind fits anything. With `evidence`, a
    place must not be a name the evidence speaks of as a person (the entity a "where was X's mother
    born?" goes through), and a name asked by "who" not one it speaks of as a place, building or
    work (the casino a "who designed the casino?" goes through)."""
    a = normalise(answer).strip().lower().rstrip(".")
    if not a:
        return False
    words = set(re.findall(r"[a-z]+", a))
    has_number = bool(re.search(r"\d", a)) or bool(words & _NUMBER_WORDS)
    if kind == "yes/no":
        return a.split()[0] in ("yes", "no")
    if kind == "named":
        return not _BARE_YES_NO.match(a)  # "No Doubt" names a band; "no." and "yes, it is" name nothing
    if kind == "number":
        return has_number
    if kind == "date":
        return bool(re.search(r"\d", a)) or bool(words & _DATE_WORDS)
    if kind in ("place", "name"):
        # A name, not a bare number or date: some word of it is capitalised in the original.
        named = not re.fullmatch(r"[\d\s.,–-]+", a) and any(w[:1].isupper() for w in answer.split())
        if not named or evidence is None:
            return named
        return not (is_person(answer, evidence) if kind == "place" else is_thing(answer, evidence))
    return True


def shorten(answer: str, question: str) -> str:
    """The answer without asides: "(24th century BC)", ", also spelt …"; "Yes, it is" → "yes"; and
    without a lead that repeats the question's subject and verb: "Ada Vellacott designed the Karn
    Point Lighthouse" → "the Karn Point Lighthouse" for "Ada Vellacott designed which lighthouse?";
    and said once when a small model wrote it twice ("Skerra Light. Skerra Light")."""
    a = _once(normalise(answer).strip())
    if parse(question).kind == "yes/no":
        first = re.findall(r"[A-Za-z]+", a)[:1]
        if first and first[0].lower() in ("yes", "no"):
            return first[0].lower()
    short = _without_restated_lead(_TRAILER.sub("", _ASIDE.sub("", a)).strip(" ,;.") or a, question)
    return _without_descriptor(short, question) if parse(question).kind in ("name", "place") else short


def _once(answer: str) -> str:
    """The answer's first half when its second half repeats it word for word, and the halves are
    two words or more or set apart by punctuation (a one-word name can repeat: "Sirhan Sirhan")."""
    words = answer.split()
    half = len(words) // 2
    if not half or len(words) % 2 or (half == 1 and words[0][-1:] not in ".,;"):
        return answer
    first, second = (" ".join(words_of(" ".join(part).lower())) for part in (words[:half], words[half:]))
    return " ".join(words[:half]).strip(" ,;.") if first == second else answer


_LEAD_VERB = re.compile(r"^(is|was|are|were|has|had|have|did|does|plays|played|won|wrote|became|[a-z]+ed)$")


def _without_restated_lead(answer: str, question: str) -> str:
    """The answer less its longest lead of two words or more that the question holds word for
    word and that ends in a verb ("Ada Vellacott designed …"), when words are left after it."""
    words = answer.split()
    q = " " + " ".join(words_of(normalise(question).lower())) + " "
    for end in range(len(words) - 1, 1, -1):
        lead = [w.lower() for w in words_of(" ".join(words[:end]))]
        if len(lead) >= 2 and _LEAD_VERB.match(lead[-1]) and " " + " ".join(lead) + " " in q:
            return " ".join(words[end:]).strip(" ,;.")
    return answer


_CONNECTORS = frozenset(
    ["of", "the", "de", "la", "le", "du", "da", "von", "van", "der", "del", "y", "and", "&"]
)


def _without_descriptor(answer: str, question: str) -> str:
    """A name asked for (who, where) without the common noun before it: "Vardian admiral Olen
    Maska" → "Olen Maska", "the city of Drennick" → "Drennick". The words cut must read
    as a description (an optional capitalised first word, like a nationality, then lower-case words),
    and what is left must be a name the question does not already hold."""
    words = answer.split()
    for end in range(min(len(words) - 1, 4), 0, -1):
        lead, rest = words[:end], words[end:]
        if not all(w.islower() for w in lead[1:]) or lead[-1] in _CONNECTORS:
            continue
        while rest and rest[0].lower() in _CONNECTORS:
            rest = rest[1:]
        if (
            rest
            and rest[0][:1].isupper()
            and any(w.islower() and w not in _CONNECTORS for w in lead)
            and not restates_question(" ".join(rest), question)
        ):
            return " ".join(rest)
    return answer


_NAME_RUN = re.compile(
    r"(?:[A-Z0-9][\w'’.-]*)(?:\s+(?:(?:of|the|de|la|le|du|da|von|van|der|del|y)\s+)*"
    r"[A-Z0-9][\w'’.-]*)*"
)
_NOT_A_NAME = frozenset(
    [
        "the",
        "a",
        "an",
        "he",
        "she",
        "it",
        "they",
        "his",
        "her",
        "its",
        "their",
        "in",
        "on",
        "at",
        "this",
        "that",
        "these",
        "those",
        "there",
        "after",
        "before",
        "during",
        "while",
        "when",
        "as",
        "by",
        "for",
        "from",
        "with",
        "but",
        "and",
        "also",
        "however",
        "i",
    ]
)


def named_spans(texts: list[str], question: str, limit: int = 24) -> tuple[str, ...]:
    """The names the texts hold that are not made of the question's own words, first seen first:
    what an answer that restated the question may be held to instead ("what Orrin County
    lighthouse?" → one of the names the evidence gives, not "Orrin County")."""
    found: dict[str, str] = {}
    for text in texts:
        for run in (
            part for m in _NAME_RUN.finditer(normalise(text)) for part in _within_sentences(m.group(0))
        ):
            name = run.strip(" .,;'’")
            words = name.split()
            while words and (words[0].lower() in _NOT_A_NAME or re.fullmatch(r"\d{3,4},?", words[0])):
                words = words[1:]  # a sentence's first word ("The", "In") or a year: "In 1887 Ada …"
            name = re.sub(r"['’]s$", "", " ".join(words))
            if not name or len(name) < 2 or re.fullmatch(r"[\d\s.,-]+", name):
                continue
            if restates_question(name, question):
                continue
            found.setdefault(name.lower(), name)
            if len(found) >= limit:
                return tuple(found.values())
    return tuple(found.values())


def _within_sentences(run: str) -> list[str]:
    """A run of capitalised words cut where a sentence ends inside it: "Karn Point Lighthouse. Ada
    J. Vellacott" (a title, then a quote) is two names, "Karn Point Lighthouse" and "Ada J. Vellacott"."""
    parts: list[list[str]] = [[]]
    words = run.split()
    for i, word in enumerate(words):
        parts[-1].append(word)
        if i + 1 < len(words) and ends_sentence(word, words[i + 1]):
            parts.append([])
    return [" ".join(p) for p in parts]


def unsupported(answer: str, evidence: list[Evidence]) -> list[str]:
    """Numbers and names of the answer that no verified piece of evidence (its fact, quote or
    document title) contains."""
    backed = [e for e in evidence if e.verified in ("yes", "partial")]
    text = normalise(" ".join(f"{e.title} {e.fact} {e.quote}" for e in backed))
    words = {w.lower() for w in words_of(text)}
    numbers = set(re.findall(r"\d+", text.replace(",", "")))
    missing = [n for n in re.findall(r"\d+", normalise(answer).replace(",", "")) if n not in numbers]
    for w in re.findall(r"[^\W\d_][\w'’-]*", normalise(answer)):
        bare = re.sub(r"['’]s$", "", w)
        if (
            bare[:1].isupper()
            and len(bare) >= 3
            and bare.lower() not in words
            and bare.lower() not in ("yes", "the")
        ):
            missing.append(bare)
    return list(dict.fromkeys(missing))


_FILLER = frozenset(["a", "an", "the", "of", "in", "on", "at", "and", "s"])


def restates_question(answer: str, question: str) -> bool:
    """Whether the answer is made only of words the question already holds (articles and
    prepositions aside, a plural "s" aside), where the question asks for something it does not name."""
    if parse(question).options or parse(question).kind == "yes/no":
        return False
    asked = {w.rstrip("s") for w in words_of(normalise(question).lower())}
    words = [w.rstrip("s") for w in words_of(normalise(answer).lower()) if w not in _FILLER]
    return bool(words) and all(w in asked for w in words)


def wrong_kind_question(question: str, answer: str, evidence: list[Evidence] | None = None) -> str | None:
    """The open question code writes when the answer is not of the kind asked, or None."""
    if answer.strip() and restates_question(answer, question):
        return f"{answer!r} is named in the question itself; find what the question asks about it: {question}"
    kind = parse(question).kind
    if kind is None or fits(answer, kind, evidence):
        return None
    wanted = {
        "date": "a date or year",
        "number": "a number",
        "yes/no": "yes or no",
        "place": "a place",
        "name": "the name of a person or a group",
        "named": "the thing it asks for, not yes or no",
    }[kind]
    return f"The answer must be {wanted}, and {answer!r} is not: find {wanted} for: {question}"
