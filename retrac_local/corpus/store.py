"""The chunk store: a LanceDB table with a vector column and a full-text index, and hybrid search.

Hybrid search fuses the BM25 and vector rankings by reciprocal rank fusion (score = sum over the
two lists of 1 / (rrf_k + rank)); results are the best passages, several of one document when they
rank so (`corpus/passages.py`), or one per document when asked.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from retrac_local.config import mask_credentials
from retrac_local.corpus.base import Chunk, Hit
from retrac_local.corpus.passages import select
from retrac_local.errors import CorpusError, StoreError
from retrac_local.lazy import require

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from retrac_local.corpus.embedder import Embedder

TABLE = "chunks"
META_FILE = "meta.json"
Method = Literal["hybrid", "bm25", "vector"]
_QUERY_WORD = re.compile(r"\w+")
_COLUMNS = ["chunk_id", "doc_id", "title", "source", "chunk_index", "start", "end", "text", "section", "page"]
# Columns added since the first stores, with the SQL that fills them in a store written before.
_ADDED_COLUMNS = {"section": "''", "page": "CAST(0 AS INT)"}


def _quote(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


class Reranker(Protocol):
    """Re-orders fused candidates (e.g. a cross-encoder). No model for it ships offline on PyPI today,
    so none is configured by default; pass one to `CorpusStore(reranker=…)`."""

    def rerank(self, query: str, hits: list[Hit]) -> list[Hit]: ...


def is_remote(uri: str | Path) -> bool:
    """An object-store URI (s3://, gs://, az://, …), not a folder on this machine."""
    return "://" in str(uri) and not str(uri).startswith("file://")


class CorpusStore:
    """Owns the LanceDB tables, in a folder or on an object store; the embedder is created only
    when vectors are needed. `local_dir` holds what must stay on this machine (the ingest manifest
    and lock): the folder's parent by default."""

    def __init__(
        self,
        path: Path | str,
        embedder_factory: Callable[[], Embedder],
        method: Method = "hybrid",
        depth: int = 20,
        rrf_k: int = 60,
        vector_index_min_rows: int = 250_000,
        nprobes: int = 20,
        refine_factor: int = 5,
        reranker: Reranker | None = None,
        storage_options: dict[str, str] | None = None,
        local_dir: Path | None = None,
    ) -> None:
        self.remote = is_remote(path)
        self.uri = str(path)
        self.shown_uri = mask_credentials(self.uri)  # what messages and pages show: no password
        self.path = None if self.remote else Path(path)  # the folder, for a local store
        if local_dir is None and self.path is None:
            raise StoreError(
                f"a corpus on an object store ({self.shown_uri}) needs a local folder for its ingest manifest"
            )
        self.local_dir: Path = local_dir or self.path.parent  # type: ignore[union-attr]
        self.storage_options = dict(storage_options or {})
        self.reranker = reranker
        self.method, self.depth, self.rrf_k = method, depth, rrf_k
        self.vector_index_min_rows, self.nprobes, self.refine_factor = (
            vector_index_min_rows,
            nprobes,
            refine_factor,
        )
        self._embedder_factory = embedder_factory
        self._embedder: Embedder | None = None
        self._db: Any = None
        self._table: Any = None
        self._titles: tuple[int, list[str]] | None = None  # (table version, titles)

    # -- opening -------------------------------------------------------------------------------
    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = self._embedder_factory()
            self._check_embedder(self._embedder)
        return self._embedder

    def _meta(self) -> dict[str, Any]:
        """Which embedder the vectors come from: in the table's own metadata (so that every machine
        that opens it knows), or in meta.json beside the tables of a store written before."""
        if self.path is not None and (self.path / META_FILE).exists():
            return json.loads((self.path / META_FILE).read_text())  # type: ignore[no-any-return]
        if self._has_table():
            metadata = self._connect().open_table(TABLE).schema.metadata or {}
            if b"retrac" in metadata:
                return json.loads(metadata[b"retrac"])  # type: ignore[no-any-return]
        return {}

    def _check_embedder(self, embedder: Embedder) -> None:
        meta = self._meta()
        if meta and (meta.get("embedder"), meta.get("dim")) != (embedder.name, embedder.dim):
            raise CorpusError(
                f"the corpus in {self.shown_uri} was embedded with {meta.get('embedder')} ({meta.get('dim')}-d), "
                f"not {embedder.name}; use that embedder or ingest into a new collection"
            )

    def _connect(self) -> Any:
        if self._db is None:
            os.environ.setdefault("LANCE_LOG", "error")  # keep lance's deprecation notices off the terminal
            lancedb = require("lancedb", purpose="the corpus store")
            with self._writing():
                if self.path is not None:
                    self.path.mkdir(parents=True, exist_ok=True)
                self._db = lancedb.connect(self.uri, storage_options=self.storage_options or None)
        return self._db

    def table(self, create: bool = False) -> Any:
        if self._table is None:
            db = self._connect()
            if self._has_table():
                self._table = db.open_table(TABLE)
                names = self._table.schema.names
                missing = {k: v for k, v in _ADDED_COLUMNS.items() if k not in names}
                if missing:  # a store written before chunks knew their section and page
                    with self._writing():
                        self._table.add_columns(missing)
                if "fts_text" not in names:  # stores written before titles were searchable
                    self._table.add_columns({"fts_text": "concat(title, ' ', text)"})
                    self.finish_writes()
            elif create:
                pa = require("pyarrow", purpose="the corpus store")
                dim = self.embedder.dim
                schema = pa.schema(
                    [
                        ("chunk_id", pa.string()),
                        ("doc_id", pa.string()),
                        ("title", pa.string()),
                        ("source", pa.string()),
                        ("chunk_index", pa.int32()),
                        ("start", pa.int64()),
                        ("end", pa.int64()),
                        ("text", pa.string()),
                        ("section", pa.string()),
                        ("page", pa.int32()),
                        ("fts_text", pa.string()),
                        ("vector", pa.list_(pa.float32(), dim)),
                    ]
                )
                meta = json.dumps({"embedder": self.embedder.name, "dim": dim})
                with self._writing():
                    self._table = db.create_table(TABLE, schema=schema.with_metadata({"retrac": meta}))
                if self.path is not None:
                    (self.path / META_FILE).write_text(meta)
            else:
                raise CorpusError(f"no corpus in {self.shown_uri}; run `retrac ingest PATH…` first")
        return self._table

    def exists(self) -> bool:
        if self.path is not None and not (self.path / META_FILE).exists():
            return False
        return self._has_table()

    def _has_table(self) -> bool:
        with self._writing():
            return TABLE in self._connect().list_tables().tables

    # -- writing -------------------------------------------------------------------------------
    @contextmanager
    def _writing(self) -> Iterator[None]:
        """A full disk or a read-only folder becomes one clear StoreError; each LanceDB write is
        atomic, so what was committed before stays readable."""
        try:
            yield
        except (OSError, RuntimeError, ValueError) as e:
            if isinstance(e, ValueError) and not self.remote:
                raise
            known = re.search(
                r"No space left on device|Read-only file system|Permission denied|Disk quota exceeded", str(e)
            )
            reason = known.group(0) if known else mask_credentials(str(e).splitlines()[0][:200])
            if self.remote:
                raise StoreError(
                    f"cannot reach the corpus store {self.shown_uri}: {reason}; check that the object store "
                    "is up and corpus.storage_options (endpoint, region, credentials), then run the same "
                    "command again"
                ) from e
            raise StoreError(
                f"cannot write to the corpus store {self.shown_uri}: {reason}; free disk space or make "
                "RETRAC_HOME writable, then run the same command again"
            ) from e

    def replace_documents(
        self, doc_ids: Sequence[str], chunks: Sequence[Chunk], vectors: NDArray[np.float32]
    ) -> None:
        with self._writing():
            self._replace_documents(doc_ids, chunks, vectors)

    def _replace_documents(
        self, doc_ids: Sequence[str], chunks: Sequence[Chunk], vectors: NDArray[np.float32]
    ) -> None:
        """Delete every chunk of `doc_ids`, then add `chunks`: re-running it never duplicates."""
        table = self.table(create=True)
        if doc_ids:
            table.delete("doc_id IN (" + ", ".join(_quote(d) for d in doc_ids) + ")")
        if chunks:
            # Full-text search reads the title and the section with the text: headings name the
            # entities questions ask about.
            rows = [
                dict(
                    asdict(c),
                    fts_text=" ".join(p for p in (c.title, c.section, c.text) if p),
                    vector=vectors[i].tolist(),
                )
                for i, c in enumerate(chunks)
            ]
            table.add(rows)

    def delete_documents(self, doc_ids: Sequence[str]) -> None:
        if doc_ids and self.exists():
            with self._writing():
                self.table().delete("doc_id IN (" + ", ".join(_quote(d) for d in doc_ids) + ")")

    def finish_writes(self) -> None:
        with self._writing():
            self._finish_writes()

    def _finish_writes(self) -> None:
        """Build the indexes that are missing, fold new rows into them, and compact table versions.

        The full-text index is always built. The vector index (IVF-PQ) is built once the table has
        `vector_index_min_rows` rows: below that a flat scan is fast, exact and the same on every
        machine (a search bypasses an index that older code built below the threshold)."""
        table = self.table()
        indexed = {column for ix in table.list_indices() for column in ix.columns}
        index = require("lancedb.index", purpose="the corpus store")
        if "fts_text" not in indexed:
            table.create_index("fts_text", config=index.FTS())
        if "chunk_id" not in indexed:
            table.create_index("chunk_id", config=index.BTree())
        rows = table.count_rows()
        if "vector" not in indexed and rows >= self.vector_index_min_rows:
            dim = self.embedder.dim
            table.create_index(
                "vector",
                config=index.IvfPq(
                    distance_type="cosine",
                    num_partitions=max(1, int(rows**0.5)),
                    num_sub_vectors=dim // 8 if dim % 8 == 0 else dim // 4,
                ),
            )
        table.optimize()

    def vector_index_kind(self) -> str:
        kinds = [ix.index_type for ix in self.table().list_indices() if "vector" in ix.columns]
        return kinds[0] if kinds else "flat (exact)"

    # -- reading -------------------------------------------------------------------------------
    def count(self) -> tuple[int, int]:
        """(documents, chunks)."""
        if not self.exists():
            return 0, 0
        table = self.table()
        chunks = table.count_rows()
        docs = (
            len(set(table.search().select(["doc_id"]).limit(max(chunks, 1)).to_arrow()["doc_id"].to_pylist()))
            if chunks
            else 0
        )
        return docs, chunks

    def titles(self) -> list[str]:
        """Each document's title once, read once per version of the table (a write makes a new one)."""
        if not self.exists():
            return []
        table = self.table()
        version = table.version
        if self._titles is None or self._titles[0] != version:
            rows = table.count_rows()
            column = (
                table.search().select(["title"]).limit(max(rows, 1)).to_arrow()["title"].to_pylist()
                if rows
                else []
            )
            self._titles = (version, list(dict.fromkeys(t for t in column if t)))
        return self._titles[1]

    def get_chunk(self, chunk_id: str) -> Chunk | None:
        rows = (
            self.table().search().where(f"chunk_id = {_quote(chunk_id)}").select(_COLUMNS).limit(1).to_list()
        )
        return _chunk(rows[0]) if rows else None

    def document_chunks(self, doc_id: str) -> list[Chunk]:
        rows = (
            self.table()
            .search()
            .where(f"doc_id = {_quote(doc_id)}")
            .select(_COLUMNS)
            .limit(100_000)
            .to_list()
        )
        return sorted((_chunk(r) for r in rows), key=lambda c: c.chunk_index)

    def open(self, ref: str, window: int = 1) -> list[Chunk]:
        """A chunk id gives that chunk and `window` neighbours on each side; a document id, its start."""
        chunk = self.get_chunk(ref)
        doc_id = chunk.doc_id if chunk else ref
        chunks = self.document_chunks(doc_id)
        if not chunks:
            return []
        centre = chunk.chunk_index if chunk else 0
        return [c for c in chunks if abs(c.chunk_index - centre) <= window]

    def search(
        self,
        query: str,
        k: int = 5,
        method: Method | None = None,
        depth: int | None = None,
        rrf_k: int | None = None,
        dedupe_documents: bool = False,
        query_vector: Any = None,
    ) -> list[Hit]:
        """The best `k` passages (`passages.select`); with `dedupe_documents`, the best one of each of
        `k` documents. `query_vector` skips embedding the query (callers that embed many at once)."""
        if not query.strip():
            return []
        method = method or self.method
        rrf_k = rrf_k or self.rrf_k
        table = self.table()
        # Choosing among passages (and counting a document's others) needs more candidates than k.
        depth = max(depth or self.depth, 3 * k)
        ranked: dict[str, list[dict[str, Any]]] = {}
        if method in ("bm25", "hybrid"):
            ranked["bm25"] = self._bm25(table, query, depth)
        if method in ("vector", "hybrid"):
            vector = self.embedder.embed([query])[0] if query_vector is None else query_vector
            ranked["vector"] = (
                self.vector_query(table, vector).select([*_COLUMNS, "_distance"]).limit(depth).to_list()
            )
        fused: dict[str, Hit] = {}
        for name, rows in ranked.items():
            for rank, row in enumerate(rows, start=1):
                hit = fused.setdefault(row["chunk_id"], Hit(_chunk(row), 0.0))
                hit.score += 1.0 / (rrf_k + rank) if method == "hybrid" else _single_score(name, row)
                hit.ranks[name] = rank
        hits = sorted(fused.values(), key=lambda h: h.score, reverse=True)
        if self.reranker is not None:
            hits = self.reranker.rerank(query, hits)
        return select(hits, k, one_per_document=dedupe_documents)

    def vector_query(self, table: Any, vector: Any) -> Any:
        """The vector half of a search: exact below `vector_index_min_rows` chunks (an IVF-PQ index
        trained at another ingest, or left by older code, ranks the same vectors otherwise; a scan
        is fast enough there and repeatable), the index past it (enough partitions probed, then the
        candidates re-ranked by their exact vectors)."""
        search = table.search(vector.tolist(), query_type="vector").distance_type("cosine")
        if table.count_rows() < self.vector_index_min_rows:
            return search.bypass_vector_index()
        return search.nprobes(self.nprobes).refine_factor(self.refine_factor)

    @staticmethod
    def _bm25(table: Any, query: str, depth: int) -> list[dict[str, Any]]:
        terms = " ".join(_QUERY_WORD.findall(query))
        if not terms:
            return []
        try:
            return (
                table.search(terms, query_type="fts", fts_columns="fts_text")
                .select([*_COLUMNS, "_score"])
                .limit(depth)
                .to_list()
            )
        except (ValueError, RuntimeError) as e:
            if "index" in str(e).lower():
                raise CorpusError(
                    "the corpus has no full-text index; run `retrac ingest` again to build it"
                ) from e
            raise

    def size_bytes(self) -> int | None:
        """Bytes on this machine's disk; None for a store on an object store."""
        if self.path is None:
            return None
        return sum(p.stat().st_size for p in self.path.rglob("*") if p.is_file())


def _single_score(name: str, row: dict[str, Any]) -> float:
    if name == "bm25":
        return float(row.get("_score", 0.0))
    return 1.0 - float(row.get("_distance", 1.0))


def _chunk(row: dict[str, Any]) -> Chunk:
    return Chunk(**{k: row[k] for k in _COLUMNS if row.get(k) is not None})
