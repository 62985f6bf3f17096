"""What the agent's tools need from a corpus, and what it gives back (`Chunk`, `Hit`);
`CorpusStore` is the real one, tests may pass a fake."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

SECTION_SEPARATOR = " › "  # between the headings of a section path, and after a title in a label


@dataclass(frozen=True)
class Chunk:
    chunk_id: str
    doc_id: str
    title: str
    source: str
    chunk_index: int
    start: int
    end: int
    text: str
    section: str = ""  # the headings above the chunk, outermost first: "Memcheck › Command-line options"
    page: int = 0  # the page it starts on, from 1 (PDFs); 0 when the document has no pages

    @property
    def subject(self) -> str:
        """What the chunk is about: its innermost heading, else its document's title."""
        return self.section.rsplit(SECTION_SEPARATOR, 1)[-1] if self.section else self.title

    @property
    def label(self) -> str:
        return label(self.title, self.section, self.page)


def label(title: str, section: str = "", page: int = 0) -> str:
    """How a person finds a chunk again: "Title › Section (p. 3)"."""
    where = f"{title}{SECTION_SEPARATOR}{section}" if section else title
    return f"{where} (p. {page})" if page else where


@dataclass
class Hit:
    chunk: Chunk
    score: float
    ranks: dict[str, int] = field(default_factory=dict)  # rank in each retriever's list, 1-based
    more: int = 0  # hits of the same document among the candidates that were not returned

    def to_dict(self) -> dict[str, Any]:
        c = self.chunk
        return {
            "doc_id": c.doc_id,
            "chunk_id": c.chunk_id,
            "title": c.title,
            "section": c.section,
            "page": c.page,
            "source": c.source,
            "score": round(self.score, 6),
            "more_in_document": self.more,
            "text": c.text,
        }


class Corpus(Protocol):
    def search(self, query: str, k: int = 5) -> list[Hit]: ...

    def get_chunk(self, chunk_id: str) -> Chunk | None: ...

    def open(self, ref: str, window: int = 1) -> list[Chunk]: ...

    def titles(self) -> list[str]: ...  # the titles of the collection's documents, each once
