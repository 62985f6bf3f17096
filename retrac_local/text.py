"""Words and stop words, one definition each, for every heuristic that reads text by its words
(the agent's checks, candidates and rankings). Text is split here, and nowhere else, so that two
checks cannot disagree about what a word is."""

from __future__ import annotations

import re

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
