"""Split a document's text into overlapping chunks of about N words, keeping character offsets.

Chunks end at sentence boundaries where possible, so a quote rarely straddles two chunks (a full stop
ends a sentence as `text.ends_sentence` says: not after an initial, as in "Ada J. Vellacott"); a sentence
longer than a chunk is cut by words; no chunk crosses a break (where a section starts), so that each
chunk belongs to one section. `text[start:end]` of the document is exactly the chunk's text.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from retrac_local.text import ends_sentence

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n\s*\n")
_PARAGRAPH = re.compile(r"\n\s*\n")
_WORD = re.compile(r"\S+")
_BEFORE_TURN_MARKER = re.compile(r"(?=<\|[^|<>]{1,40}\|>|‹\|[^|‹›]{1,40}\|›)")  # raw or defused at ingest


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    words: int


def _sentences(text: str) -> list[Span]:
    spans: list[Span] = []
    pos = 0
    for m in _SENTENCE_END.finditer(text):
        if not _PARAGRAPH.search(m.group(0)) and not _ends(text, m.start(), m.end()):
            continue
        _add(text, pos, m.start(), spans)
        pos = m.end()
    _add(text, pos, len(text), spans)
    return spans


def _ends(text: str, stop: int, after: int) -> bool:
    """Whether the sentence ends at `stop`, where the whitespace `text[stop:after]` begins."""
    before = text[max(0, stop - 40) : stop].split()
    return ends_sentence(before[-1] if before else "", text[after : after + 1])


def _add(text: str, start: int, end: int, spans: list[Span]) -> None:
    piece = text[start:end]
    stripped = piece.strip()
    if not stripped:
        return
    lead = len(piece) - len(piece.lstrip())
    start += lead
    end = start + len(stripped)
    spans.append(Span(start, end, len(_WORD.findall(stripped))))


def sentences(text: str, apart: Callable[[str], bool] | None = None) -> list[str]:
    """The sentences of `text`, whitespace-normalised, in order. A sentence that `apart` flags (one
    that speaks to the model) is given as its parts instead: what comes before its first chat-template
    turn marker, cut at line breaks, then the rest from the marker on, whole (what follows a marker is
    the turn it opens). A true statement that an order follows on the next line, or after a marker,
    with no full stop between them is then not hidden with the order; the caller checks each part
    again."""
    out: list[str] = []
    for span in _sentences(text):
        raw = text[span.start : span.end]
        whole = " ".join(raw.split())
        if apart is None or not apart(whole):
            out.append(whole)
            continue
        before, *turn = _BEFORE_TURN_MARKER.split(raw, maxsplit=1)
        parts = [" ".join(line.split()) for line in before.splitlines()] + [" ".join("".join(turn).split())]
        out += [p for p in parts if p]
    return out


def _split_long(text: str, span: Span, size: int) -> list[Span]:
    words = list(_WORD.finditer(text, span.start, span.end))
    return [
        Span(words[i].start(), words[min(i + size, len(words)) - 1].end(), min(size, len(words) - i))
        for i in range(0, len(words), size)
    ]


def chunk_text(
    text: str, size: int = 120, overlap: int = 20, breaks: Sequence[int] = ()
) -> list[tuple[int, int]]:
    """(start, end) character offsets of the chunks of `text`, none across a break; empty text
    gives no chunks."""
    if size <= 0 or overlap < 0 or overlap >= size:
        raise ValueError(f"need 0 <= overlap < size, got size={size}, overlap={overlap}")
    bounds = sorted({0, len(text), *(b for b in breaks if 0 < b < len(text))})
    return [
        (a + s, a + e)
        for a, b in itertools.pairwise(bounds)
        for s, e in _chunk_segment(text[a:b], size, overlap)
    ]


def _chunk_segment(text: str, size: int, overlap: int) -> list[tuple[int, int]]:
    units: list[Span] = []
    for sentence in _sentences(text):
        units.extend(_split_long(text, sentence, size) if sentence.words > size else [sentence])
    chunks: list[tuple[int, int]] = []
    i = 0
    while i < len(units):
        j, words = i, 0
        while j < len(units) and (words + units[j].words <= size or j == i):
            words += units[j].words
            j += 1
        chunks.append((units[i].start, units[j - 1].end))
        if j >= len(units):
            break
        # Start the next chunk a few sentences back, so that facts at a boundary appear whole once.
        back, carried = j, 0
        while back - 1 > i and carried + units[back - 1].words <= overlap:
            back -= 1
            carried += units[back].words
        i = back
    return chunks
