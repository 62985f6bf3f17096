"""The collection as its owner manages it: the files ingested, the documents each produced, a file
removed, uploaded files kept. The ingest manifest (`corpus/ingest.py`) is the record of files; this
module reads it and, to remove a file, writes it under the same one-writer lock as an ingest."""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import sqlite3
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from retrac_local.errors import RetracError

if TYPE_CHECKING:
    from retrac_local.api import Retrac
    from retrac_local.config import Settings


@dataclass(frozen=True)
class CollectionFile:
    file_id: str  # a stable name for the file that is not its path (pages and requests use it)
    path: str
    documents: list[str]
    chunks: int
    ingested_at: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "file_id": self.file_id,
            "path": self.path,
            "name": Path(self.path).name,
            "documents": len(self.documents),
            "chunks": self.chunks,
            "ingested_at": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(self.ingested_at)),
        }


def file_id(path: str) -> str:
    return hashlib.sha1(path.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _manifest_path(settings: Settings) -> Path:
    return settings.corpus_dir / "manifest.sqlite"


def _read(settings: Settings, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    path = _manifest_path(settings)
    if not path.exists():
        return []
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)
    try:
        return db.execute(sql, args).fetchall()
    except sqlite3.OperationalError:  # a manifest being created: nothing recorded yet
        return []
    finally:
        db.close()


def files(settings: Settings) -> list[CollectionFile]:
    """The files of the collection, the most recently ingested first."""
    rows = _read(
        settings, "SELECT path, doc_ids, chunks, ingested_at FROM files ORDER BY ingested_at DESC, path"
    )
    return [CollectionFile(file_id(p), p, json.loads(d), c, t) for p, d, c, t in rows]


def find(settings: Settings, wanted: str) -> CollectionFile:
    for f in files(settings):
        if f.file_id == wanted:
            return f
    raise RetracError(f"no file {wanted!r} in the collection; reload the collection page")


class ChangedSinceIngest(RetracError):
    """The file at a document's path is no longer the one ingest read (another content, a link)."""


def document_file(settings: Settings, doc_id: str) -> tuple[str, bytes] | None:
    """The name and bytes of the file a document of the collection came from, as ingest read them;
    None when the document is unknown or its file is gone. The file is opened without following a
    link and its content must hash to what ingest recorded: a file swapped since (for a link to
    another file, or another content) raises `ChangedSinceIngest` instead of being served."""
    import os
    import stat

    rows = _read(
        settings,
        "SELECT files.path, files.sha256 FROM docs JOIN files ON files.path = docs.path WHERE docs.doc_id = ?",
        (doc_id,),
    )
    if not rows:
        return None
    path, recorded = Path(rows[0][0]), rows[0][1]
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return None
    except OSError as e:  # ELOOP: the path is a link now
        raise ChangedSinceIngest(f"{path.name} changed since ingest ({e.strerror}); ingest it again") from e
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise ChangedSinceIngest(f"{path.name} changed since ingest (not a file now); ingest it again")
        limit = int(settings.ingest.max_file_mb * 1e6)
        if info.st_size > limit:
            raise RetracError(
                f"{path.name} is {info.st_size / 1e6:.0f} MB, more than ingest.max_file_mb = "
                f"{settings.ingest.max_file_mb:g} to download; open it on this machine"
            )
        data = f.read(limit + 1)
    if hashlib.sha256(data).hexdigest() != recorded:
        raise ChangedSinceIngest(f"{path.name} changed since ingest; ingest it again to serve it")
    return path.name, data


def remove(app: Retrac, wanted: str) -> dict[str, Any]:
    """Take a file's documents out of the search index, then out of the manifest (in that order:
    a crash between the two leaves a manifest row that the next removal or `--prune` finishes).
    A file ingested from its own place stays on disk (ingesting it again brings it back); an
    uploaded copy is deleted."""
    from retrac_local.corpus.ingest import Manifest, _only_writer

    target = find(app.settings, wanted)
    store = app.corpus
    with _only_writer(store.local_dir / "ingest.lock"):
        store.delete_documents(target.documents)
        manifest = Manifest(_manifest_path(app.settings))
        try:
            manifest.forget(target.path)
        finally:
            manifest.close()
        if store.exists():
            store.finish_writes()
    _drop_upload(app.settings, Path(target.path))
    return {"removed": target.path, "documents": len(target.documents), "chunks": target.chunks}


def _drop_upload(settings: Settings, path: Path) -> None:
    """An uploaded file exists only for the collection: once its documents are removed, the file
    (and its batch's folder, when that is empty now) goes too. A file ingested from its own place
    is left alone."""
    uploads = (settings.home / "uploads").resolve()
    if uploads not in path.resolve().parents:
        return
    path.unlink(missing_ok=True)
    with contextlib.suppress(OSError):  # other files of the same upload are still there
        path.parent.rmdir()


_UNSAFE = re.compile(r"[^A-Za-z0-9._ -]+")


def safe_name(name: str) -> str:
    """An uploaded file's name as a plain file name: no folders, no leading dots, nothing a shell
    or a file system treats specially."""
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    cleaned = _UNSAFE.sub("_", base).strip(" .")
    return cleaned[:120] or "upload"


def upload_folder(settings: Settings) -> Path:
    """A new folder for one batch of uploads. Uploaded files stay there: the collection refers to
    them, as it refers to any ingested file."""
    folder = settings.home / "uploads" / f"{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:6]}"
    folder.mkdir(parents=True)
    return folder
