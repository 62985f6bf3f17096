"""Quote and value checks done by code, never by the model.

A quote counts only if it occurs in its source chunk after whitespace and typographic
normalisation. A fact the model states is attached to the sentence that supports it best: every
number and name of the fact must occur in that sentence (or its document's title), and most of its
content words; a fact that no sentence supports is rejected, never stored. Support is more than a bag
of the sentence's words: a fact must be a statement (not a question, not its subject's name alone), and
what it speaks of must be what the sentence speaks of (see `unfaithful`).
"""

from __future__ import annotations

import re
from typing import Literal

from retrac_local.text import words_of

_TYPOGRAPHY = str.maketrans(
    {"\u201c": '"', "\u201d": '"', "\u2018": "'", "\u2019": "'", "\u2013": "-", "\u2014": "-", "\u00a0": " "}
)
_SPACE = re.compile(r"\s+")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_CONTENT_WORD = re.compile(r"[^\W\d_]{4,}")
FULL_SUPPORT = 0.6
PARTIAL_SUPPORT = 0.4
# Sentences that speak to the model, not about the world: a document's orders, a claimed answer,
# a chat-template turn marker (raw or defused at ingest). They are never evidence. "You must
# restart the server" stays: a manual speaks to its reader, and that is a fact about the server.
_TO_THE_MODEL = re.compile(
    r"\b(ignore|disregard|forget|override)\b[^.]{0,60}\b(instructions?|prompts?|rules|question|context)\b"
    r"|\bthe (correct |final |real |true )?answer( to (this|the|your) question)? (is|should be|must be)\b"
    r"|\b(respond|reply) (only )?with\b"
    r"|\bsystem (prompt|notice|message|instructions?)\b|<\|[^|<>]{1,40}\|>|‹\|[^|‹›]{1,40}\|›",
    re.IGNORECASE,
)


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


_INVISIBLE = re.compile(r"[\u00ad\u180e\u200b-\u200f\u2060-\u2064\ufeff]")  # soft hyphen, zero-width marks


def as_read(text: str) -> str:
    """The text as a check should read it: compatibility forms folded (NFKC: full-width letters and
    look-alike bars become the plain ones, "ｉｇｎｏｒｅ" is "ignore", "＜｜" is "<|") and zero-width
    characters removed ("ig\u200bnore" is "ignore"), so that no spelling a reader cannot see slips
    past a pattern."""
    import unicodedata

    return _INVISIBLE.sub("", unicodedata.normalize("NFKC", text))


def addresses_the_model(sentence: str) -> bool:
    """True for a sentence that instructs the model or claims the answer instead of stating a fact
    (English phrasings only; read as `as_read` folds it)."""
    return bool(_TO_THE_MODEL.search(as_read(sentence)))


def missing_numbers(fact: str, source_text: str) -> list[str]:
    """Numbers stated in `fact` that do not occur in the source: the model may have changed them."""
    source_numbers = set(_NUMBER.findall(normalise(source_text).replace(",", "")))
    return [n for n in _NUMBER.findall(fact) if n.replace(",", "") not in source_numbers]


def missing_names(fact: str, source_text: str) -> list[str]:
    """Capitalised words of `fact` (names) that the source does not contain. The first word counts
    too ("Rihanna collaborated with …" needs "Rihanna" in the source) unless it is one a sentence
    may start with as a common word: an article, pronoun or preposition, a participle or adverb
    ("Born in …", "Originally …")."""
    source_words = {w.lower() for w in words_of(source_text)}
    words = words_of(fact)
    if words and _common_start(words[0]):
        words = words[1:]
    return [w for w in words if w[:1].isupper() and len(w) >= 3 and w.lower() not in source_words]


def _common_start(word: str) -> bool:
    w = word.lower()
    return w in _SENTENCE_STARTERS or w.endswith(("ed", "ing", "ly")) or not word[:1].isupper()


_SENTENCE_STARTERS = frozenset(
    [
        "the",
        "this",
        "that",
        "these",
        "those",
        "there",
        "their",
        "they",
        "them",
        "then",
        "than",
        "his",
        "her",
        "hers",
        "its",
        "she",
        "him",
        "who",
        "whom",
        "whose",
        "what",
        "which",
        "when",
        "where",
        "why",
        "how",
        "after",
        "before",
        "during",
        "while",
        "although",
        "though",
        "because",
        "since",
        "until",
        "unlike",
        "like",
        "both",
        "each",
        "every",
        "all",
        "some",
        "many",
        "most",
        "several",
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
        "first",
        "second",
        "third",
        "last",
        "later",
        "earlier",
        "also",
        "however",
        "in",
        "on",
        "at",
        "by",
        "for",
        "from",
        "with",
        "without",
        "within",
        "into",
        "as",
        "an",
        "and",
        "but",
        "not",
        "nor",
        "yes",
        "our",
        "your",
        "you",
        "was",
        "were",
        "is",
        "are",
        "has",
        "had",
        "have",
        "being",
        "prior",
        "despite",
        "among",
        "between",
        "under",
        "over",
        "about",
        "around",
        "near",
        "along",
        "across",
        "through",
        "throughout",
        "toward",
        "towards",
        "upon",
        "against",
        "beside",
        "besides",
        "beyond",
        "instead",
        "today",
        "neither",
        "either",
        "other",
        "another",
        "such",
        "only",
        "even",
        "still",
        "yet",
        "thus",
        "therefore",
        "moreover",
        "meanwhile",
        "according",
        "known",
        "born",
        "now",
        "once",
        "per",
    ]
)


def support(fact: str, quote: str, context: str = "") -> float:
    """Share of the fact's content words found in the quote (or its context, e.g. the document
    title, which resolves "she" and "the tower"); 0 when a number of the fact is not in the quote."""
    if (
        missing_numbers(fact, quote)
        or missing_names(fact, f"{context} {quote}")
        or unfaithful(fact, quote, context)
    ):
        return 0.0
    fact_words = {w.lower() for w in _CONTENT_WORD.findall(fact)}
    if not fact_words:
        return 0.0
    quote_words = {w.lower() for w in _CONTENT_WORD.findall(f"{context} {quote}")}
    return len(fact_words & quote_words) / len(fact_words)


def support_level(score: float) -> Literal["yes", "partial"] | None:
    """yes: the quote states the fact; partial: it bears on it; None: it does not support it."""
    if score >= FULL_SUPPORT:
        return "yes"
    return "partial" if score >= PARTIAL_SUPPORT else None


_LINK = re.compile(r"\b(is|was|are|were|has|had|have|became|becomes|remains|remained)\b", re.IGNORECASE)
_STEM = 5  # "directed" states "director"; "composer" needs a word of "compo…" in the source


def unfaithful(fact: str, quote: str, context: str = "") -> str | None:
    """Why `fact` is not a faithful statement of `quote` (with `context`, its document's title), or
    None. Rules, each cheap and each about form, not topic:
    - a question is not a fact;
    - a fact must say something of its subject: the title's words alone ("Lanterns (Vell song)") state
      nothing;
    - the subject of a fact "S is/was/has … P" must be what the source speaks of: each word of S
      (pronouns and articles aside) occurs in the quote or the title, up to its ending. "The composer
      of Rio Sombre is Ilse Varnholt's political activism" fails when the sentence, about Varnholt's
      activism, says nothing of a composer."""
    f = normalise(fact).strip()
    if f.endswith("?"):
        return "a question, not a fact"
    title = {w.lower() for w in words_of(context)}
    words = [w.lower() for w in words_of(f)]
    if title and words and all(w in title for w in words):
        return "the subject's name alone, with nothing said of it"
    link = _LINK.search(f)
    if link is None:
        return None
    stems = {w.lower()[:_STEM] for w in re.findall(r"[^\W\d_]+", f"{context} {quote}")}
    subject = [
        w for w in re.findall(r"[^\W\d_]{3,}", f[: link.start()]) if w.lower() not in _SENTENCE_STARTERS
    ]
    missing = [w for w in subject if w.lower()[:_STEM] not in stems]
    return f"the source does not speak of {' '.join(missing)!r}" if missing else None
