"""A progress display for ingestion (bytes read, documents, chunks, rate, ETA), on stderr so that --json stays clean."""

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
    from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeRemainingColumn

    console = Console(stderr=True)
    columns = [TextColumn("ingest"), BarColumn(), TaskProgressColumn(),
               TextColumn("{task.fields[documents]} documents, {task.fields[chunks]} chunks, {task.fields[rate]} chunks/s"),
               TextColumn("ETA"), TimeRemainingColumn()]
    with Progress(*columns, console=console, transient=False) as bar:
        task = bar.add_task("ingest", total=None, documents=0, chunks=0, rate="-")
        start = time.perf_counter()

        def update(event: str, data: dict[str, Any]) -> None:
            if event == "start":  # progress is measured in bytes of input read
                bar.update(task, total=max(data["bytes"], 1))
            elif event == "progress":
                rate = f"{data['chunks'] / max(time.perf_counter() - start, 1e-6):.0f}"
                bar.update(task, completed=data["bytes_done"], documents=data["documents"], chunks=data["chunks"],
                           rate=rate)

        yield update
