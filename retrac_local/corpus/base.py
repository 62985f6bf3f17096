"""What the agent's tools need from a corpus; `CorpusStore` is the real one, tests may pass a fake."""

from __future__ import annotations

from typing import Protocol

from retrac_local.corpus.store import Chunk, Hit


class Corpus(Protocol):
    def search(self, query: str, k: int = 5) -> list[Hit]: ...

    def get_chunk(self, chunk_id: str) -> Chunk | None: ...

    def open(self, ref: str, window: int = 1) -> list[Chunk]: ...

    def titles(self) -> list[str]: ...  # the titles of the collection's documents, each once
