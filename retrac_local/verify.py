"""Quote and value checks done by code, never by the model.

A quote is verified when it occurs in its source chunk after whitespace and typographic
normalisation. A near-miss (the model changed a few characters) is replaced by the source's own
text and marked partial; anything else is rejected. Numbers in the stated fact must occur in the
source, or the evidence cannot be more than partial.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Literal

_TYPOGRAPHY = str.maketrans({"\u201c": '"', "\u201d": '"', "\u2018": "'", "\u2019": "'", "\u2013": "-",
                             "\u2014": "-", "\u00a0": " "})
_SPACE = re.compile(r"\s+")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_WORD = re.compile(r"\S+")
FUZZY_MIN_RATIO = 0.85
MIN_QUOTE_CHARS = 8


def normalise(text: str) -> str:
    return _SPACE.sub(" ", text.translate(_TYPOGRAPHY)).strip()


def clean_quote(quote: str) -> str:
    """Strip what models wrap quotes in: surrounding quote marks and ellipses."""
    q = normalise(quote)
    q = re.sub(r"^(\.\.\.|…)\s*|\s*(\.\.\.|…)$", "", q)
    return q.strip().strip('"').strip()


def quote_in(quote: str, source_text: str) -> bool:
    q = clean_quote(quote)
    return len(q) >= 1 and q in normalise(source_text)


@dataclass(frozen=True)
class QuoteCheck:
    status: Literal["exact", "repaired", "rejected"]
    quote: str  # the source's own text when exact or repaired
    reason: str = ""


def check_quote(quote: str, source_text: str) -> QuoteCheck:
    q = clean_quote(quote)
    source = normalise(source_text)
    if len(q) < MIN_QUOTE_CHARS:
        return QuoteCheck("rejected", q, "the quote is too short to check; copy a whole phrase from the source")
    if q in source:
        return QuoteCheck("exact", q)
    # Slide a window of the quote's length in words over the source; keep the closest one.
    words = list(_WORD.finditer(source))
    n = len(_WORD.findall(q))
    best_ratio, best = 0.0, ""
    for size in {max(1, n - 1), n, n + 1}:
        for i in range(0, max(1, len(words) - size + 1)):
            j = min(i + size, len(words)) - 1
            window = source[words[i].start(): words[j].end()]
            ratio = SequenceMatcher(None, q, window, autojunk=False).ratio()
            if ratio > best_ratio:
                best_ratio, best = ratio, window
    if best_ratio >= FUZZY_MIN_RATIO:
        return QuoteCheck("repaired", best, f"quote differed from the source (similarity {best_ratio:.2f}); replaced by the source text")
    return QuoteCheck("rejected", q, "this quote does not occur in the cited source; copy the words exactly")


def missing_numbers(fact: str, source_text: str) -> list[str]:
    """Numbers stated in `fact` that do not occur in the source: the model may have changed them."""
    source_numbers = set(_NUMBER.findall(normalise(source_text).replace(",", "")))
    return [n for n in _NUMBER.findall(fact) if n.replace(",", "") not in source_numbers]
