"""Incremental ingestion: files → documents → chunks → embeddings → the store.

A manifest (SQLite, beside the LanceDB folder) records each file's content hash and the documents
it produced. An unchanged file is skipped; a changed one has its documents replaced. The manifest
row is written only after the file's chunks are in the store, and chunks are written
delete-then-add by document id, so an interrupted ingest re-run ends in the same store as an
uninterrupted one.
"""

from __future__ import annotations

import bisect
import hashlib
import itertools
import json
import os
import re
import sqlite3
import stat
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from retrac_local.config import IngestSettings
from retrac_local.corpus.base import Chunk, label
from retrac_local.corpus.chunking import chunk_text
from retrac_local.corpus.readers import (
    JSONL_SUFFIXES,
    SUPPORTED,
    Document,
    UnreadableFile,
    read_file,
    read_jsonl,
)
from retrac_local.corpus.sandbox import SandboxedReader
from retrac_local.corpus.store import CorpusStore
from retrac_local.errors import StoreError
from retrac_local.untrusted import clean_document

BATCH_FILES = 256  # files recorded per commit at most, so a crash re-reads little
BATCH_CHUNKS = 1024  # one embedding call sorts this many by length: less padding


@dataclass
class IngestReport:
    documents_added: int = 0
    documents_skipped: int = 0
    documents_removed: int = 0
    files_added: int = 0
    files_skipped: int = 0
    chunks: int = 0
    failed: list[dict[str, str]] = field(default_factory=list)
    seconds: float = 0.0
    moved_from: str | None = None  # the store an earlier manifest described, when the collection moved
    hidden: list[dict[str, Any]] = field(
        default_factory=list
    )  # {"path", "characters"} of hidden text left out

    def to_dict(self) -> dict[str, Any]:
        return {
            "documents_added": self.documents_added,
            "documents_skipped": self.documents_skipped,
            "documents_removed": self.documents_removed,
            "files_added": self.files_added,
            "files_skipped": self.files_skipped,
            "chunks": self.chunks,
            "failed": self.failed,
            "moved_from": self.moved_from,
            "hidden": self.hidden,
            "seconds": round(self.seconds, 2),
            "chunks_per_second": round(self.chunks / self.seconds, 1) if self.seconds > 0 else None,
        }


ProgressFn = Callable[[str, dict[str, Any]], None]


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60] or "doc"


def cleaned(doc: Document) -> Document:
    """The document as it is stored (`untrusted.clean_document`), its section and page offsets
    moved with the text: each piece between two offsets is cleaned on its own."""
    marks = sorted({0, len(doc.text), *(o for o, _ in doc.sections), *doc.pages})
    moved, pieces, at = {}, [], 0
    for a, b in itertools.pairwise(marks):
        moved[a] = at
        pieces.append(clean_document(doc.text[a:b]))
        at += len(pieces[-1])
    moved[len(doc.text)] = at
    return replace(
        doc,
        title=clean_document(doc.title),
        text="".join(pieces),
        sections=[(moved[o], clean_document(p)) for o, p in doc.sections],
        pages=[moved[o] for o in doc.pages],
    )


def chunks_of(doc: Document, doc_id: str, words: int, overlap: int) -> list[Chunk]:
    """The document's chunks, none across a section start, each with its section's path and the
    page it starts on."""
    starts = [offset for offset, _ in doc.sections]
    out = []
    for i, (s, e) in enumerate(chunk_text(doc.text, words, overlap, breaks=starts)):
        at = bisect.bisect_right(starts, s) - 1
        out.append(
            Chunk(
                f"{doc_id}#{i}",
                doc_id,
                doc.title,
                doc.source,
                i,
                s,
                e,
                doc.text[s:e],
                section=doc.sections[at][1] if at >= 0 else "",
                page=bisect.bisect_right(doc.pages, s) if doc.pages else 0,
            )
        )
    return out


class Manifest:
    """Which file produced which documents, at which content hash."""

    def __init__(self, path: Path) -> None:
        self.path = path
        with self._writing():
            path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(path, timeout=30)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.executescript(
                """
                CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, sha256 TEXT NOT NULL, doc_ids TEXT NOT NULL,
                                                  chunks INTEGER NOT NULL, ingested_at REAL NOT NULL);
                CREATE TABLE IF NOT EXISTS docs (doc_id TEXT PRIMARY KEY, path TEXT NOT NULL);
                CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
                """
            )

    @contextmanager
    def _writing(self) -> Iterator[None]:
        try:
            yield
        except (sqlite3.Error, OSError) as e:
            raise StoreError(
                f"cannot write the ingest manifest {self.path}: {e}; free disk space or make "
                "RETRAC_HOME writable, then run the same command again"
            ) from e

    def store(self) -> str | None:
        """The collection store this manifest describes (None: a manifest written before it said)."""
        row = self.db.execute("SELECT value FROM meta WHERE key = 'store'").fetchone()
        return row[0] if row else None

    def describe(self, store: str, forget: bool) -> None:
        """Record that this manifest describes `store`; with `forget`, its files are forgotten first
        (they are in another store, and must be read again into this one)."""
        with self._writing(), self.db:
            if forget:
                self.db.execute("DELETE FROM files")
                self.db.execute("DELETE FROM docs")
            self.db.execute("INSERT OR REPLACE INTO meta VALUES ('store', ?)", (store,))

    def file(self, path: str) -> tuple[str, list[str]] | None:
        row = self.db.execute("SELECT sha256, doc_ids FROM files WHERE path = ?", (path,)).fetchone()
        return (row[0], json.loads(row[1])) if row else None

    def owner(self, doc_id: str) -> str | None:
        row = self.db.execute("SELECT path FROM docs WHERE doc_id = ?", (doc_id,)).fetchone()
        return row[0] if row else None

    def record(self, path: str, sha256: str, doc_ids: list[str], chunks: int) -> None:
        with self._writing(), self.db:
            old = self.file(path)
            if old:
                self.db.executemany(
                    "DELETE FROM docs WHERE doc_id = ? AND path = ?", [(d, path) for d in old[1]]
                )
            self.db.execute(
                "INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?)",
                (path, sha256, json.dumps(doc_ids), chunks, time.time()),
            )
            self.db.executemany("INSERT OR REPLACE INTO docs VALUES (?, ?)", [(d, path) for d in doc_ids])

    def forget(self, path: str) -> list[str]:
        old = self.file(path)
        with self._writing(), self.db:
            self.db.execute("DELETE FROM files WHERE path = ?", (path,))
            self.db.execute("DELETE FROM docs WHERE path = ?", (path,))
        return old[1] if old else []

    def paths(self) -> list[str]:
        return [r[0] for r in self.db.execute("SELECT path FROM files")]

    def close(self) -> None:
        self.db.close()


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def shown(path: Path | str) -> str:
    """A path as text that can be printed and stored: bytes of a name that is not UTF-8 become �."""
    return os.fsencode(path).decode("utf-8", "replace")


def _kind(path: Path) -> str:
    mode = path.stat().st_mode
    return "a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else "a device"


def expand(paths: list[Path], report: IngestReport) -> Iterator[Path]:
    """Files to ingest: named files as they are, folders walked (sorted) for supported types.
    Links to folders are not followed (no loops), nor links to files outside the folder walked (a
    link must not pull a private file into the collection); those, unreadable folders, broken links
    and what is not a plain file are reported."""
    for path in paths:
        if path.is_dir():

            def unreadable(error: OSError) -> None:
                report.failed.append(
                    {"path": shown(error.filename), "error": f"cannot read this folder: {error.strerror}"}
                )

            root = path.resolve()
            found: list[Path] = []
            for folder, dirs, names in os.walk(path, onerror=unreadable):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for name in names:
                    child = Path(folder) / name
                    if name.startswith(".") or child.suffix.lower() not in SUPPORTED:
                        continue
                    if child.is_symlink() and child.exists() and not child.resolve().is_relative_to(root):
                        report.failed.append(
                            {
                                "path": shown(child),
                                "error": f"a link to {shown(child.resolve())}, "
                                "outside the folder ingested; skipped (ingest that file by name if wanted)",
                            }
                        )
                    elif child.is_file():
                        found.append(child)
                    elif child.is_symlink() and not child.exists():
                        report.failed.append(
                            {"path": shown(child), "error": "broken or looping symbolic link"}
                        )
                    elif child.exists():
                        report.failed.append(
                            {"path": shown(child), "error": f"{_kind(child)}, not a plain file; skipped"}
                        )
            yield from sorted(found)
        elif path.is_file():
            yield path
        elif path.exists():
            report.failed.append(
                {"path": shown(path), "error": f"{_kind(path)}, not a plain file or a folder"}
            )
        else:
            report.failed.append({"path": shown(path), "error": "no such file or folder"})


@contextmanager
def _only_writer(lock_path: Path) -> Iterator[None]:
    """One ingest at a time per collection: a second one stops at once with a clear message instead
    of racing the first to LanceDB's commits. The lock is the kernel's: it ends with the process,
    so a killed ingest never leaves a stale lock behind."""
    import fcntl

    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_path, "a+") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise StoreError(
                f"another ingest is writing this collection ({lock_path.parent}); wait for it to "
                "finish, then run this command again"
            ) from None
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


class Ingester:
    def __init__(
        self,
        store: CorpusStore,
        chunk_words: int = 120,
        overlap_words: int = 20,
        progress: ProgressFn | None = None,
        limits: IngestSettings | None = None,
    ) -> None:
        self.store = store
        self.limits = limits or IngestSettings()
        self.sandbox = SandboxedReader(self.limits.file_timeout_s) if self.limits.file_timeout_s else None
        self.chunk_words = chunk_words
        self.overlap_words = overlap_words
        self.progress = progress or (lambda event, data: None)
        self.manifest = Manifest(store.local_dir / "manifest.sqlite")
        self._bytes_before = 0  # bytes of the files finished so far, for progress
        self._files_done = 0
        # Chunks of several files are embedded and written together (one LanceDB commit per batch,
        # not per file); a file is recorded in the manifest once all its chunks are written.
        self._batch: list[Chunk] = []
        self._batch_docs: list[str] = []
        self._pending_files: list[tuple[str, str, list[str], int, list[str]]] = []
        self._pending_owner: dict[str, str] = {}  # doc ids given to files not yet recorded

    def run(self, paths: list[Path], prune: bool = False) -> IngestReport:
        with _only_writer(self.store.local_dir / "ingest.lock"):
            return self._run(paths, prune)

    def _run(self, paths: list[Path], prune: bool) -> IngestReport:
        report = IngestReport()
        start = time.perf_counter()
        self._check_store(report)
        files = list(expand(paths, report))
        sizes = [_size(p) for p in files]
        self.progress("start", {"files": len(files), "bytes": sum(sizes)})
        self._bytes_before, self._files_done = 0, 0
        for path, size in zip(files, sizes, strict=True):
            self._ingest_file(path.resolve(), size, report)
            self._bytes_before += size
            self._files_done += 1
            self._report_progress(report, 0)
        self._flush(report)
        self._report_progress(report, 0)
        if prune:
            self._prune(report)
        if self.store.exists():
            self.store.finish_writes()
        report.seconds = time.perf_counter() - start
        self.manifest.close()
        if self.sandbox is not None:
            self.sandbox.close()
        return report

    def _check_store(self, report: IngestReport) -> None:
        """The manifest says which files are in the store; after `corpus.uri` changes it describes
        another store, and "unchanged" would leave the new one empty: its files are read again. A
        manifest older than this record is taken to describe the store only if the store has chunks."""
        recorded, here = self.manifest.store(), self.store.uri
        if recorded == here:
            return
        holds = self.store.exists() and self.store.table().count_rows() > 0  # chunks only: no scan
        moved = recorded is not None or (not holds and bool(self.manifest.paths()))
        if moved:
            report.moved_from = recorded or "(a store this manifest did not name)"
        self.manifest.describe(here, forget=moved)

    def _ingest_file(self, path: Path, size: int, report: IngestReport) -> None:
        key = str(path)
        if shown(path) != key:  # the manifest and the citations need a name that is text
            report.failed.append(
                {
                    "path": shown(path),
                    "error": "the file name is not valid UTF-8; rename the file and ingest it again",
                }
            )
            return
        jsonl = path.suffix.lower() in JSONL_SUFFIXES
        size_mb = size / 1e6
        if not jsonl and size_mb > self.limits.max_file_mb:
            report.failed.append(
                {
                    "path": key,
                    "error": f"{size_mb:.0f} MB is larger than ingest.max_file_mb = "
                    f"{self.limits.max_file_mb:g}; raise that limit to ingest it",
                }
            )
            return
        try:
            data = path.read_bytes()
        except OSError as e:
            report.failed.append({"path": key, "error": f"cannot read: {e.strerror or e}"})
            return
        sha = hashlib.sha256(data).hexdigest()
        known = self.manifest.file(key)
        if known and known[0] == sha:
            report.files_skipped += 1
            report.documents_skipped += len(known[1])
            return
        old_doc_ids = known[1] if known else []
        try:
            documents = self._read(path, jsonl)
        except UnreadableFile as e:
            report.failed.append({"path": key, "error": str(e)})
            return
        except (OSError, ValueError, RecursionError, MemoryError) as e:
            report.failed.append({"path": key, "error": f"cannot parse: {type(e).__name__}: {e}"})
            return
        doc_ids: list[str] = []
        taken: set[str] = set()
        chunks_total = 0
        documents = list(documents)
        hidden = sum(d.hidden for d in documents)
        if hidden:
            report.hidden.append({"path": key, "characters": hidden})
        for doc in documents:
            for problem in doc.problems:
                report.failed.append({"path": key, "error": problem})
            if not doc.text.strip():
                continue
            doc = cleaned(doc)
            doc_id = self._doc_id(doc, path, taken)
            if doc_id is None:
                report.failed.append(
                    {"path": doc.source, "error": f"duplicate doc_id {doc.doc_id!r}; record skipped"}
                )
                continue
            doc_ids.append(doc_id)
            taken.add(doc_id)
            self._pending_owner[doc_id] = key
            chunks = self._chunks(doc, doc_id)
            self._batch_docs.append(doc_id)
            self._batch.extend(chunks)
            chunks_total += len(chunks)
            if len(self._batch) >= BATCH_CHUNKS:
                self._flush(report)
                self._report_progress(report, doc.end_offset or 0)
        if not doc_ids:
            if not any(d.problems for d in documents):
                report.failed.append({"path": key, "error": "no text in this file"})
            return
        gone = [d for d in old_doc_ids if d not in taken]
        self._pending_files.append((key, sha, doc_ids, chunks_total, gone))
        if len(self._batch) >= BATCH_CHUNKS or len(self._pending_files) >= BATCH_FILES:
            self._flush(report)

    def _flush(self, report: IngestReport) -> None:
        """Write the batched chunks, then record the files whose chunks are all written. A crash
        before the record leaves those files to be read again; delete-then-add never duplicates."""
        if self._batch_docs:
            # The headings above a chunk say what it is about: they are embedded with its text.
            vectors = self.store.embedder.embed(
                [f"{label(c.title, c.section)}\n{c.text}" for c in self._batch]
            )
            self.store.replace_documents(self._batch_docs, self._batch, vectors)
        self._batch, self._batch_docs = [], []
        for key, sha, doc_ids, chunks, gone in self._pending_files:
            self.store.delete_documents(gone)
            self.manifest.record(key, sha, doc_ids, chunks)
            report.files_added += 1
            report.documents_added += len(doc_ids)
            report.documents_removed += len(gone)
            report.chunks += chunks
        self._pending_files = []
        self._pending_owner = {}

    def _read(self, path: Path, jsonl: bool) -> list[Document]:
        if jsonl:  # plain json.loads per line, streamed in-process; each record's size is capped
            return list(read_jsonl(path, max_record_chars=int(self.limits.max_record_mb * 1e6)))
        if self.sandbox is not None:
            return self.sandbox.read(path)
        return list(read_file(path))

    def _report_progress(self, report: IngestReport, bytes_into_file: int) -> None:
        pending_docs = sum(len(doc_ids) for _, _, doc_ids, _, _ in self._pending_files)
        self.progress(
            "progress",
            {
                "bytes_done": self._bytes_before + bytes_into_file,
                "files_done": self._files_done,
                "chunks": report.chunks + len(self._batch),
                "documents": report.documents_added + report.documents_skipped + pending_docs,
            },
        )

    def _doc_id(self, doc: Document, path: Path, taken: set[str]) -> str | None:
        if doc.doc_id is not None:  # records bring their own ids (evaluation data depends on them)
            owner = self._pending_owner.get(doc.doc_id) or self.manifest.owner(doc.doc_id)
            if doc.doc_id in taken or (owner is not None and owner != str(path)):
                return None
            return doc.doc_id
        base = _slug(path.stem)
        owner = self._pending_owner.get(base) or self.manifest.owner(base)
        if owner is None or owner == str(path):
            return base
        return f"{base}-{hashlib.sha1(str(path).encode()).hexdigest()[:6]}"

    def _chunks(self, doc: Document, doc_id: str) -> list[Chunk]:
        return chunks_of(doc, doc_id, self.chunk_words, self.overlap_words)

    def _prune(self, report: IngestReport) -> None:
        for key in self.manifest.paths():
            if not Path(key).exists():
                known = self.manifest.file(key)
                gone = known[1] if known else []
                self.store.delete_documents(
                    gone
                )  # store first: a crash here leaves the manifest row to retry
                self.manifest.forget(key)
                report.documents_removed += len(gone)
