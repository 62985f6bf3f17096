"""`retrac …` commands. Errors a person can fix print one line (no traceback) and exit 1."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from retrac_local.cli.app import Group, make_app


@click.group(cls=Group)
@click.version_option(package_name="retrac-local")
def cli() -> None:
    """retrac-local: research your own documents offline with a small local model."""


@cli.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--prune", is_flag=True, help="remove documents whose files are gone")
@click.option("--json", "as_json", is_flag=True, help="print the report as JSON")
def ingest(paths: tuple[Path, ...], prune: bool, as_json: bool) -> None:
    """Add files or folders (txt, md, html, pdf, jsonl) to the corpus; unchanged files are skipped."""
    from retrac_local.cli.progress import ingest_progress
    from retrac_local.cli.render import echo_json, say

    app = make_app()
    try:
        with ingest_progress(enabled=not as_json) as progress:
            report = app.ingest(list(paths), prune=prune, progress=progress)
    except KeyboardInterrupt:
        click.echo(
            "interrupted: files already ingested are kept; run the same command again to finish", err=True
        )
        sys.exit(130)
    data = report.to_dict()
    if data["moved_from"]:
        from retrac_local.config import mask_credentials

        data["moved_from"] = mask_credentials(data["moved_from"])
        if not as_json:
            click.echo(
                f"the collection is now at {app.corpus.shown_uri}; the ingest record described "
                f"{data['moved_from']}, so every file was read again into the new store",
                err=True,
            )
    nothing = bool(data["failed"]) and not data["files_added"] and not data["files_skipped"]
    if as_json:
        echo_json(data)
        sys.exit(1 if nothing else 0)
    click.echo(
        f"ingested {data['files_added']} file(s), {data['documents_added']} document(s), {data['chunks']} chunk(s) "
        f"in {data['seconds']} s; skipped {data['files_skipped']} unchanged file(s)"
        + (f"; removed {data['documents_removed']} document(s)" if data["documents_removed"] else "")
    )
    for failure in data["failed"]:
        say(f"  failed: {failure['path']}: {failure['error']}", err=True)
    for left in data["hidden"]:
        say(
            f"  left out {left['characters']:,} characters a reader would not see (comments, hidden "
            f"elements, invisible text): {left['path']}",
            err=True,
        )
    if nothing:
        sys.exit(1)  # nothing of what was named could be ingested


@cli.command()
@click.argument("query", required=False)
@click.option("-k", type=click.IntRange(1, 100), default=None, help="number of hits (default: retrieval.k)")
@click.option("--method", type=click.Choice(["hybrid", "bm25", "vector"]), default=None)
@click.option(
    "--queries",
    type=click.Path(path_type=Path, dir_okay=False, exists=True),
    help="a UTF-8 file with one query a line; prints one JSON line each",
)
@click.option("--json", "as_json", is_flag=True)
def search(query: str | None, k: int | None, method: str | None, queries: Any, as_json: bool) -> None:
    """Search the corpus, as the agent's search tool does."""
    import json

    from retrac_local.cli.render import echo_json, say

    if not query and queries is None:
        raise click.UsageError("give a QUERY or --queries FILE")
    app = make_app()
    if queries is not None:
        try:
            lines = queries.read_text(encoding="utf-8").splitlines()
        except UnicodeDecodeError as e:
            raise click.ClickException(
                f"{queries} is not UTF-8 text (byte {e.start}); save it as UTF-8"
            ) from e
        except OSError as e:
            raise click.ClickException(f"cannot read {queries}: {e.strerror or e}") from e
        for line in lines:
            if line.strip():
                hits = app.search(line.strip(), k=k, method=method)  # type: ignore[arg-type]
                say(
                    json.dumps(
                        {"query": line.strip(), "hits": [h.to_dict() for h in hits]}, ensure_ascii=False
                    )
                )
        return
    assert query is not None
    hits = app.search(_text(query), k=k, method=method)  # type: ignore[arg-type]
    if as_json:
        echo_json([h.to_dict() for h in hits])
        return
    for n, h in enumerate(hits, start=1):
        more = f", {h.more} more in this document" if h.more else ""
        say(f"{n}. [{h.chunk.chunk_id}] {h.chunk.label}  ({h.score:.4f}{more})\n   {h.chunk.text[:300]}")


def _text(argument: str) -> str:
    """A command-line argument as text: bytes that are not UTF-8 (kept by Python as surrogates) become �."""
    return argument.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _run(events: Any, as_json: bool, mode: str = "lines", max_rounds: int | None = None) -> None:
    """Show a run as it goes: `lines` (a line per step and round, and a live status line on a
    terminal), `events` (JSON Lines on stdout, one per event), `quiet` (the answer only); `as_json`
    prints only the result."""
    import time

    from retrac_local.cli.render import echo_json, render_event, render_result, say
    from retrac_local.contract.events import (
        RoundCompressed,
        RunFinished,
        RunStarted,
        StepTaken,
        event_dict,
    )
    from retrac_local.errors import RetracError
    from retrac_local.interrupt import graceful_sigint

    result, run_id = None, None
    status = None
    if mode == "lines" and not as_json and sys.stdout.isatty():
        from rich.console import Console

        status = Console(stderr=True).status("starting …")
    started, calls, iteration = time.perf_counter(), 0, 0
    try:
        with graceful_sigint():  # Ctrl-C stops at the next safe point (see retrac_local/interrupt.py)
            if status is not None:
                status.start()
            for event in events:
                if isinstance(event, RunStarted):
                    run_id, iteration = event.run_id, event.resumed_at_round or 1
                if isinstance(event, RunFinished):
                    result = event.result
                if isinstance(event, StepTaken) and event.tool in ("search", "open", "calculate"):
                    calls += 1
                if isinstance(event, RoundCompressed):
                    iteration = event.iteration + 1
                if mode == "events":
                    say(json.dumps(event_dict(event), ensure_ascii=False))
                elif mode == "quiet" or as_json:
                    pass
                else:
                    render_event(event)
                if status is not None:
                    left = f" of {max_rounds}" if max_rounds else ""
                    status.update(
                        f"round {iteration}{left} · {calls} tool call(s) · {time.perf_counter() - started:.0f} s"
                    )
    except KeyboardInterrupt:
        where = f"; continue it with `retrac resume {run_id}`" if run_id else ""
        click.echo(f"interrupted: every finished round is saved{where}", err=True)
        sys.exit(130)
    except RetracError as e:
        if run_id is None:
            raise
        raise click.ClickException(
            f"{e} (the run's finished rounds are saved: `retrac resume {run_id}` continues "
            "it once that is fixed)"
        ) from e
    finally:
        if status is not None:
            status.stop()
    if as_json and result is not None:
        echo_json(result.to_dict())
    elif mode == "quiet" and result is not None:
        render_result(result)
    if result is not None and str(result.status) == "failed":
        sys.exit(2)


def _display(quiet: bool, events: bool) -> str:
    if quiet and events:
        raise click.UsageError("choose one of --quiet and --events")
    return "quiet" if quiet else "events" if events else "lines"


@cli.command()
@click.argument("question")
@click.option(
    "--max-rounds", type=click.IntRange(min=1), default=None, help="round budget (default: budget.max_rounds)"
)
@click.option("--no-memory", is_flag=True, help="do not seed the run with evidence of similar past runs")
@click.option("--json", "as_json", is_flag=True, help="print only the result, as JSON")
@click.option("--quiet", is_flag=True, help="no progress: only the answer and its quotes")
@click.option("--events", is_flag=True, help="JSON Lines on stdout, one per event, for other programs")
def ask(
    question: str, max_rounds: int | None, no_memory: bool, as_json: bool, quiet: bool, events: bool
) -> None:
    """Research QUESTION in the corpus and answer it with cited quotes."""
    overrides: dict[str, Any] = {"budget": {"max_rounds": max_rounds}} if max_rounds else {}
    if no_memory:
        overrides["memory"] = {"enabled": False}
    app = make_app(overrides)
    _run(app.ask(_text(question)), as_json, _display(quiet, events), app.settings.budget.max_rounds)


@cli.command()
@click.argument("run_id")
@click.option("--json", "as_json", is_flag=True)
@click.option("--quiet", is_flag=True, help="no progress: only the answer and its quotes")
@click.option("--events", is_flag=True, help="JSON Lines on stdout, one per event")
def resume(run_id: str, as_json: bool, quiet: bool, events: bool) -> None:
    """Continue an interrupted run from its last saved round."""
    from retrac_local.cli.render import say

    app = make_app()
    run = app.runs.run(run_id)
    if run["status"] != "running" and run["result"]:
        say(
            f"run {run_id} had already finished ({run['status']}); nothing to resume: its result follows",
            err=True,
        )
    _run(app.resume(run_id), as_json, _display(quiet, events), app.settings.budget.max_rounds)


@cli.group(cls=Group)
def corpus() -> None:
    """The document store."""


@corpus.command("stats")
@click.option("--json", "as_json", is_flag=True)
def corpus_stats(as_json: bool) -> None:
    """Documents, chunks, size on disk and indexes of the corpus."""
    from retrac_local.cli.render import echo_json

    app = make_app()
    store = app.corpus
    if not store.exists():
        raise click.ClickException(f"no corpus in {app.settings.corpus_dir}; run `retrac ingest PATH…` first")
    documents, chunks = store.count()
    data = {
        "documents": documents,
        "chunks": chunks,
        "size_bytes": store.size_bytes(),
        "vector_index": store.vector_index_kind(),
        "path": store.shown_uri,
    }
    if as_json:
        echo_json(data)
        return
    size = (
        "on an object store" if data["size_bytes"] is None else f"{data['size_bytes'] / 1e6:.1f} MB on disk"
    )
    click.echo(
        f"{documents} documents, {chunks} chunks, {size} ({data['vector_index']} vector search) in {store.shown_uri}"
    )


def _register() -> None:
    from retrac_local.cli.batch import batch_cmd
    from retrac_local.cli.evaluate import eval_cmd
    from retrac_local.cli.rules import rules_cmd
    from retrac_local.cli.runs import runs
    from retrac_local.cli.serve import serve
    from retrac_local.cli.settings import config, models

    for command in (runs, models, config, eval_cmd, batch_cmd, serve, rules_cmd):
        cli.add_command(command)


_register()


if __name__ == "__main__":
    cli()
