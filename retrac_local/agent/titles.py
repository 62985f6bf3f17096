"""The collection's own document titles, found in text: where a passage names another document of
the collection, that document is the next place to read.

Documents point at each other by name: an encyclopedia article names the person it links to, a
manual's page says "see Memcheck". A bridge question goes through such a pointer: the first
document names the entity the answer is about, and that entity has a document of its own. Finding
the names in a passage that are titles of the collection turns "a capitalised phrase that might be
a name" into "a document that exists", and also finds the names a capital letter does not mark
("the reserve protects the marsh harrier" when a document is titled "Marsh harrier").

A title is matched as whole words, case aside, and also without a trailing qualifier in brackets
("Jonas Pell (engineer)" is found as "Jonas Pell"). Short titles and titles that are common words
are not matched: they would find a document in every sentence.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from retrac_local.text import STOP_WORDS

MAX_TITLE_WORDS = 8
MIN_TITLE_CHARS = 4
BROAD_TITLES = 3  # a key that this many titles hold is a broad subject
_TOKEN = re.compile(r"[\w'’-]+")
_QUALIFIER = re.compile(r"\s*\([^)]*\)\s*$")


def _key(words: Iterable[str]) -> str:
    return " ".join(w.lower().strip("'’-") for w in words)


def _worth_matching(key: str) -> bool:
    words = key.split()
    if len(key) < MIN_TITLE_CHARS or not words or len(words) > MAX_TITLE_WORDS:
        return False
    return not all(_minor(w) for w in words)


@dataclass(frozen=True)
class TitleMatch:
    written: str  # the words as the text has them
    title: str  # the document's title
    named: bool  # written as a name: a capital letter, and not one word opening the text
    broad: bool  # a broad subject: other titles are built on it ("United States" in "United States Navy")


class TitleIndex:
    """`find(text)`: the titles of the collection that `text` names, in reading order."""

    def __init__(self, titles: Iterable[str]) -> None:
        # key → (title, the words of its qualifier: none when the key is the whole title)
        self._by_key: dict[str, tuple[str, frozenset[str]]] = {}
        titles = list(titles)
        for title in titles:
            bare = _QUALIFIER.sub("", title)
            qualifier = frozenset(
                w for w in _key(_TOKEN.findall(title[len(bare) :])).split() if not _minor(w)
            )
            for form, words in ((title, frozenset[str]()), (bare, qualifier)):
                key = _key(_TOKEN.findall(form))
                if _worth_matching(key) and (not words or key not in self._by_key):
                    self._by_key[key] = (title, words)  # the exact title wins over a qualified one
        self._longest = max((len(k.split()) for k in self._by_key), default=0)
        # How many titles hold each key as a run of their words: a bridge names one thing and is
        # in its own title only; a subject many titles are built on is a hub, rarely the next hop.
        self._within: Counter[str] = Counter()
        for title in set(titles):
            parts = _key(_TOKEN.findall(title)).split()
            runs = {
                " ".join(parts[i:j])
                for i in range(len(parts))
                for j in range(i + 1, min(len(parts), i + self._longest) + 1)
            }
            self._within.update(run for run in runs if run in self._by_key)

    def __len__(self) -> int:
        return len(self._by_key)

    def find(self, text: str) -> list[TitleMatch]:
        """The titles `text` names, longest match first at each place, no two overlapping.

        - Words in lower case match only a whole title: "the marsh harrier" finds "Marsh harrier", "the band"
          does not find "Band (rock group)".
        - Words written as a name match only the whole name: "State" is not found in "State
          Senator", nor "Milan" in "Inter Milan".
        - One word matches a qualified title only when the text says something of the qualifier:
          "Again" is "Again (Kell song)" only where the text speaks of a song."""
        tokens = _TOKEN.findall(text)
        said = {_key([w]) for w in tokens}
        found: list[TitleMatch] = []
        i = 0
        while i < len(tokens):
            for n in range(min(self._longest, len(tokens) - i), 0, -1):
                entry = self._by_key.get(_key(tokens[i : i + n]))
                if entry is None:
                    continue
                title, qualifier = entry
                words = tokens[i : i + n]
                named = any(w[:1].isupper() for w in words) and not (n == 1 and i == 0)
                if not named and qualifier:
                    continue
                if named and _inside_a_longer_name(tokens, i, n):
                    continue
                if n == 1 and qualifier and not qualifier & said:
                    continue
                found.append(
                    TitleMatch(" ".join(words), title, named, self._within[_key(words)] >= BROAD_TITLES)
                )
                i += n
                break
            else:
                i += 1
        return list(dict.fromkeys(found))


def _minor(word: str) -> bool:
    return len(word) < 3 or word in STOP_WORDS or word.isdigit()


def _capital(token: str) -> bool:
    return token[:1].isupper()


def _inside_a_longer_name(tokens: list[str], i: int, n: int) -> bool:
    """The capitalised words at i…i+n run on into their neighbours (a text's first word is
    capitalised for being first, and does not count)."""
    before = (
        i > 1
        and _capital(tokens[i - 1])
        or (i > 2 and tokens[i - 1] in ("of", "de") and _capital(tokens[i - 2]))
    )
    after = i + n < len(tokens) and _capital(tokens[i + n])
    return bool(before or after)
