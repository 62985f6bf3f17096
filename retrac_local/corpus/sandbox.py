"""Files are parsed in a separate process with a time limit, so that a hostile or pathological file
(a PDF that loops, HTML nested twenty thousand levels deep) cannot hang or crash an ingest.

One worker process is started on first use and reused; when a file runs past the limit, or kills
the worker (a crash in a C parser), the worker is ended, the file is reported, and a fresh worker
takes the next file.
"""

from __future__ import annotations

import importlib
import multiprocessing as mp
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from retrac_local.corpus.readers import Document, UnreadableFile

DEFAULT_READER = "retrac_local.corpus.readers:read_file"


def _resolve(target: str) -> Callable[[Path], Any]:
    module, name = target.split(":")
    return getattr(importlib.import_module(module), name)  # type: ignore[no-any-return]


def _serve(conn: Connection, target: str) -> None:
    """The worker: read paths, send back ("ok", documents) or ("unreadable" | "error", message)."""
    reader = _resolve(target)
    while True:
        try:
            path = conn.recv()
        except EOFError:
            return
        try:
            conn.send(("ok", list(reader(Path(path)))))
        except UnreadableFile as e:
            conn.send(("unreadable", str(e)))
        except RecursionError:
            conn.send(("error", "the file is nested too deeply to parse"))
        except MemoryError:
            conn.send(("error", "the file needs more memory to parse than is available"))
        except Exception as e:  # a parser's own failure on a damaged file
            conn.send(("error", f"cannot parse: {type(e).__name__}: {e}"))


class SandboxedReader:
    """`read(path)` → documents, with `timeout` seconds per file; raises UnreadableFile otherwise."""

    def __init__(self, timeout: float, target: str = DEFAULT_READER) -> None:
        self.timeout, self.target = timeout, target
        self._process: Any = None
        self._conn: Connection | None = None

    def _start(self) -> Connection:
        if self._conn is None or self._process is None or not self._process.is_alive():
            context = mp.get_context("spawn")  # never fork a process that holds database and BLAS threads
            ours, theirs = context.Pipe()
            self._process = context.Process(target=_serve, args=(theirs, self.target), daemon=True)
            self._process.start()
            theirs.close()
            self._conn = ours
        return self._conn

    def read(self, path: Path) -> list[Document]:
        conn = self._start()
        conn.send(str(path))
        if not conn.poll(self.timeout):
            self.close()
            raise UnreadableFile(
                f"parsing took longer than {self.timeout:g} s and was stopped "
                "(raise ingest.file_timeout_s to allow more)"
            )
        try:
            status, payload = conn.recv()
        except (EOFError, OSError):
            self.close()
            raise UnreadableFile("the parser crashed on this file") from None
        if status != "ok":
            raise UnreadableFile(payload)
        return payload  # type: ignore[no-any-return]

    def close(self) -> None:
        if self._process is not None and self._process.is_alive():
            self._process.kill()
            self._process.join(timeout=5)
        if self._conn is not None:
            self._conn.close()
        self._process, self._conn = None, None
