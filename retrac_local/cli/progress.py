"""A progress display for ingestion (files, chunks, rate), on stderr so that --json stays clean."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from retrac_local.corpus.ingest import ProgressFn


@contextmanager
def ingest_progress(enabled: bool = True) -> Iterator[ProgressFn]:
    if not enabled:
        yield lambda event, data: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    console = Console(stderr=True)
    columns = [TextColumn("ingest"), BarColumn(), MofNCompleteColumn(), TextColumn("files"),
               TextColumn("{task.fields[chunks]} chunks, {task.fields[rate]} chunks/s"), TimeRemainingColumn()]
    with Progress(*columns, console=console, transient=False) as bar:
        task = bar.add_task("ingest", total=None, chunks=0, rate="-")
        start = time.perf_counter()

        def update(event: str, data: dict[str, Any]) -> None:
            elapsed = max(time.perf_counter() - start, 1e-6)
            if event == "start":
                bar.update(task, total=data["files"])
            elif event in ("file", "chunks"):
                rate = f"{data['chunks'] / elapsed:.0f}"
                bar.update(task, advance=1 if event == "file" else 0, chunks=data["chunks"], rate=rate)

        yield update
