"""`retrac batch`: many questions at once on Ray, each result written as it ends."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from retrac_local.cli.app import make_app

if TYPE_CHECKING:
    from retrac_local.batch.results import BatchLine


@click.command("batch")
@click.argument("questions_file", type=click.Path(path_type=Path, dir_okay=False))
@click.option(
    "--out",
    required=True,
    type=click.Path(path_type=Path, file_okay=False),
    help="output folder: DIR/results.jsonl gets one line per question as it ends",
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="questions running at once, one Ray worker each",
)
@click.option(
    "--ray-address",
    default=None,
    help="a Ray cluster to join (HOST:PORT or ray://HOST:PORT); a local Ray on this machine when absent",
)
@click.option("--retry-failed", is_flag=True, help="run again the questions whose last line says failed")
@click.option("--json", "as_json", is_flag=True, help="print the report as JSON")
def batch_cmd(
    questions_file: Path, out: Path, workers: int, ray_address: str | None, retry_failed: bool, as_json: bool
) -> None:
    """Answer every question of QUESTIONS_FILE (JSON Lines of {"id", "question"}), several at once.

    Each question is a full Re-TRAC run on a Ray worker; its run goes to the local run store (`retrac
    runs show RUN_ID`) and its line to OUT/results.jsonl. Stop it at any time: the same command skips
    the questions already written. With more than one worker, give the planner and the compressor a
    server (`planner.url`, `compressor.url`): each worker would otherwise load its own copy of the models."""
    from retrac_local.batch.driver import Batch
    from retrac_local.batch.questions import load_batch_questions
    from retrac_local.batch.worker import FromSettings
    from retrac_local.cli.render import echo_json, say
    from retrac_local.errors import CorpusError

    questions = load_batch_questions(questions_file)
    app = make_app()
    if not app.corpus.exists() or app.corpus.table().count_rows() == 0:
        raise CorpusError(
            f"the corpus in {app.settings.corpus_dir} is empty; run `retrac ingest PATH…` first"
        )
    local = [role for role in ("planner", "compressor") if not getattr(app.settings, role).url]
    for role in ("planner", "compressor"):
        if role not in local:
            app.make_llm(role)  # the server answers now, or the batch does not start
    if local and workers > 1 and not as_json:
        say(
            f"note: the {' and '.join(local)} use(s) a local model file: each of the {workers} workers loads its own "
            "copy; a model server shared by the workers uses less memory",
            err=True,
        )
    batch = Batch(
        out,
        app.runs,
        app.memory if app.settings.memory.enabled else None,
        FromSettings(app.settings),
        workers=workers,
        ray_address=ray_address,
        retry_failed=retry_failed,
    )

    def progress(line: BatchLine, n: int, total: int) -> None:
        if not as_json:
            tail = line.error if line.status == "failed" else line.answer
            say(f"[{n}/{total}] {line.id} {line.status} ({line.seconds} s): {tail}")

    try:
        report = batch.run(questions, progress)
    except KeyboardInterrupt:
        click.echo(
            f"interrupted: the questions already in {batch.results.path} are kept; run the same command "
            "again to finish",
            err=True,
        )
        sys.exit(130)
    data = report.to_dict() | {"results": str(batch.results.path)}
    if as_json:
        echo_json(data)
    else:
        click.echo(
            f"{sum(report.written.values())} question(s) answered now "
            f"({', '.join(f'{n} {s}' for s, n in sorted(report.written.items())) or 'none'}), "
            f"{report.skipped} already in {batch.results.path}, in {data['seconds']} s"
        )
    if report.written.get("failed"):
        sys.exit(1)
