"""Words, stop words and sentence ends, one definition each, for every heuristic that reads text by
its words (the agent's checks, candidates and rankings) and for the sentence splitter. Text is split
here, and nowhere else, so that two checks cannot disagree about what a word is, or where a
sentence ends."""

from __future__ import annotations

import re

# The months in order, lower case (their numbers are their places, from 1).
MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)

_WORD = re.compile(r"\w+")
_LONG_WORD = re.compile(r"\w{3,}")

# Words that say nothing of what a text is about: left out when texts are matched by their words.
STOP_WORDS = frozenset(
    [
        "the",
        "and",
        "for",
        "was",
        "were",
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "when",
        "where",
        "how",
        "did",
        "does",
        "with",
        "from",
        "that",
        "this",
        "are",
        "has",
        "had",
        "have",
        "its",
        "into",
        "than",
        "then",
        "there",
        "their",
        "they",
        "been",
        "also",
    ]
)


def words_of(text: str) -> list[str]:
    """The words of `text` in order (runs of letters, digits and underscores), as written."""
    return _WORD.findall(text)


def long_words_of(text: str) -> list[str]:
    """The words of three characters or more, in order, as written."""
    return _LONG_WORD.findall(text)


# Words written with a full stop that do not end a sentence where a name follows ("Dr. Ada
# Vellacott", "St. Orrin"), and where a number follows ("Jan. 5", "No. 3").
_BEFORE_NAMES = re.compile(
    r"mr|mrs|ms|dr|prof|st|mt|ft|gen|col|lt|capt|sgt|rev|gov|sen|rep|hon|vs", re.IGNORECASE
)
_BEFORE_NUMBERS = re.compile(r"no|nos|jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec", re.IGNORECASE)
_INITIAL = re.compile(r"(?:^|.*[^\w])[A-Z]\.$|^(?:[A-Za-z]\.){2,}$")  # "C.", "(J.", "U.S.", "e.g."


def ends_sentence(word: str, following: str = "") -> bool:
    """Whether a sentence ends after `word` (as written, with its punctuation), given the text that
    follows it: a word ending in ".", "!" or "?" (a closing quote or bracket after it allowed) ends
    one, unless the next word starts in lower case ("approx. five"), or the word is an initial
    ("Ada J. Vellacott", "U.S. Army") or an abbreviation that a name or a number follows ("Dr. Ada",
    "Jan. 5")."""
    bare = word.rstrip("\"'’”)]")
    if not bare.endswith((".", "!", "?")):
        return False
    nxt = following.lstrip()[:1]
    if nxt.islower():
        return False
    if bare.endswith("."):
        stem = bare.lstrip("\"'‘“([")
        short = stem[:-1]
        if (
            _INITIAL.match(stem)
            or _BEFORE_NAMES.fullmatch(short)
            or (nxt.isdigit() and _BEFORE_NUMBERS.fullmatch(short))
        ):
            return False
    return True
