"""An in-memory corpus with word-overlap search: the fake `Corpus` for fast tests of the agent."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from retrac_local.corpus.base import Chunk, Hit
from retrac_local.corpus.passages import select

_WORD = re.compile(r"\w+")


@dataclass
class MemoryCorpus:
    chunks: dict[str, Chunk] = field(default_factory=dict)
    searches: list[str] = field(default_factory=list)  # every query it got, for assertions

    def add(
        self,
        doc_id: str,
        title: str,
        text: str,
        chunk_words: int = 120,
        sections: list[tuple[int, str]] | None = None,
        pages: list[int] | None = None,
    ) -> MemoryCorpus:
        """A document chunked as ingest chunks it; `sections` and `pages` as a reader gives them."""
        from retrac_local.corpus.ingest import chunks_of
        from retrac_local.corpus.readers import Document

        doc = Document(doc_id, title, text, f"memory:{doc_id}", sections=sections or [], pages=pages or [])
        for chunk in chunks_of(doc, doc_id, chunk_words, min(20, chunk_words - 1)):
            self.chunks[chunk.chunk_id] = chunk
        return self

    def search(self, query: str, k: int = 5) -> list[Hit]:
        self.searches.append(query)
        words = set(_WORD.findall(query.lower()))
        scored = []
        for chunk in self.chunks.values():
            overlap = len(words & set(_WORD.findall(f"{chunk.title} {chunk.text}".lower())))
            if overlap:
                scored.append(Hit(chunk, float(overlap)))
        scored.sort(key=lambda h: (-h.score, h.chunk.chunk_id))
        return select(scored, k)

    def get_chunk(self, chunk_id: str) -> Chunk | None:
        return self.chunks.get(chunk_id)

    def titles(self) -> list[str]:
        return list(dict.fromkeys(c.title for c in self.chunks.values() if c.title))

    def open(self, ref: str, window: int = 1) -> list[Chunk]:
        chunk = self.chunks.get(ref)
        doc_id = chunk.doc_id if chunk else ref
        doc = sorted((c for c in self.chunks.values() if c.doc_id == doc_id), key=lambda c: c.chunk_index)
        centre = chunk.chunk_index if chunk else 0
        return [c for c in doc if abs(c.chunk_index - centre) <= window]
