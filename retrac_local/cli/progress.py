"""A progress display for ingestion (bytes read, documents, chunks, rate, ETA), on stderr so that --json stays clean."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from retrac_local.corpus.ingest import ProgressFn

if TYPE_CHECKING:
    from retrac_local.eval.rows import EvalRow


@contextmanager
def ingest_progress(enabled: bool = True) -> Iterator[ProgressFn]:
    if not enabled:
        yield lambda event, data: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeRemainingColumn

    console = Console(stderr=True)
    columns = [
        TextColumn("ingest"),
        BarColumn(),
        TaskProgressColumn(),
        TextColumn(
            "{task.fields[mb]} MB, {task.fields[files]} files · {task.fields[documents]} documents, "
            "{task.fields[chunks]} chunks, {task.fields[rate]} chunks/s"
        ),
        TextColumn("ETA"),
        TimeRemainingColumn(),
    ]
    with Progress(*columns, console=console, transient=False) as bar:
        task = bar.add_task("ingest", total=None, documents=0, chunks=0, rate="-", mb="0", files="0")
        start = time.perf_counter()
        totals = {"bytes": 0, "files": 0}

        def update(event: str, data: dict[str, Any]) -> None:
            if event == "start":  # progress is measured in bytes of input read
                totals.update(bytes=data["bytes"], files=data["files"])
                bar.update(
                    task,
                    total=max(data["bytes"], 1),
                    mb=f"0/{data['bytes'] / 1e6:.1f}",
                    files=f"0/{data['files']}",
                )
            elif event == "progress":
                rate = f"{data['chunks'] / max(time.perf_counter() - start, 1e-6):.0f}"
                bar.update(
                    task,
                    completed=data["bytes_done"],
                    documents=data["documents"],
                    chunks=data["chunks"],
                    rate=rate,
                    mb=f"{data['bytes_done'] / 1e6:.1f}/{totals['bytes'] / 1e6:.1f}",
                    files=f"{data.get('files_done', 0)}/{totals['files']}",
                )

        yield update


@contextmanager
def eval_progress(questions: list[Any], modes: list[str], evaluation: Any) -> Iterator[Any]:
    """A bar over (question, mode) pairs, and one line per finished pair with its score."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    console = Console(stderr=True)
    total = len(questions) * len(modes)
    done = sum(1 for q in questions for m in modes if evaluation.done(q, m))
    columns = [
        TextColumn("eval {task.fields[now]}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
    ]
    with Progress(*columns, console=console) as bar:
        task = bar.add_task("eval", total=total, completed=done, now="")
        position = {q.id: i for i, q in enumerate(questions, 1)}

        def update(question: Any, mode: str, row: EvalRow | None) -> None:
            label = f"q{position[question.id]}/{len(questions)} {mode}"
            if row is None:
                bar.update(task, now=label)
                return
            bar.advance(task)
            bar.console.print(
                f"{label}: F1 {row.f1:.2f} EM {row.em:.0f} · {row.answer!r} (gold {row.gold[0]!r}) · "
                f"{row.status} · {row.llm_calls} calls, {row.prompt_tokens:,} prompt tok, {row.seconds:.0f} s",
                markup=False,
                highlight=False,  # a model's answer is printed as it is, never read as markup
            )

        yield update
