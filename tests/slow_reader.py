"""A reader that hangs on files that say "sleep", for the sandbox's timeout test (runs in the worker)."""

from __future__ import annotations

import time
from pathlib import Path

from retrac_local.corpus.readers import Document, read_file


def read(path: Path) -> list[Document]:
    if path.read_text() == "sleep":
        time.sleep(3600)
    return list(read_file(path))
