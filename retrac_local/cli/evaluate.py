"""`retrac eval`: the side-by-side evaluation."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from retrac_local.cli.app import make_app


@click.command("eval")
@click.option(
    "--questions",
    "questions_file",
    required=True,
    type=click.Path(path_type=Path, dir_okay=False),
    help='JSON Lines of {"id", "question", "answers", "supporting_doc_ids"?}',
)
@click.option("--mode", "modes", default="retrac,react,rag", show_default=True, help="comma-separated modes")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="this many questions")
@click.option("--offset", type=click.IntRange(min=0), default=0, help="skip this many questions first")
@click.option(
    "--out",
    type=click.Path(path_type=Path, file_okay=False),
    required=True,
    help="output folder; an unfinished evaluation there is continued",
)
@click.option(
    "--rag-k",
    type=click.IntRange(min=1, max=50),
    default=5,
    show_default=True,
    help="chunks in the RAG prompt",
)
@click.option("--title", default=None, help="caption of the table and plots")
@click.option(
    "--report-only",
    is_flag=True,
    help="only rewrite the summary and plots from results.jsonl (adding the method's figures from the "
    "run store to rows that lack them)",
)
@click.option(
    "--unanswerable",
    is_flag=True,
    help="hide the questions' gold documents (in a copy of the collection, made once under the home) "
    "and measure how often each mode still answers with confidence",
)
@click.option(
    "--layout",
    "layout_file",
    type=click.Path(path_type=Path, dir_okay=False, exists=True),
    default=None,
    help="a collection of long documents built by `python -m retrac_local.eval.longdocs` (its "
    "layout.json): doc recall counts the paragraphs the retrieved chunks hold",
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=None,
    help="run this many (question, mode) pairs at once, each on a Ray worker (`pip install "
    "'retrac-local[scale]'`); give the models a server (planner.url, compressor.url)",
)
@click.option(
    "--ray-address", default=None, help="with --workers: a Ray cluster to join; a local Ray when absent"
)
@click.option(
    "--report-name",
    default="summary",
    show_default=True,
    help="stem of the report files, so that one folder can hold reports of several question ranges",
)
@click.option(
    "--readme",
    "readme_file",
    type=click.Path(path_type=Path, dir_okay=False, exists=True),
    default=None,
    help="when the evaluation is complete (or with --report-only), also write the report into this "
    "Markdown file, between its lines '<!-- NAME -->' and '<!-- /NAME -->' (NAME is --report-name)",
)
def eval_cmd(
    questions_file: Path,
    modes: str,
    limit: int | None,
    offset: int,
    out: Path,
    rag_k: int,
    title: str | None,
    report_only: bool,
    unanswerable: bool,
    layout_file: Path | None,
    workers: int | None,
    ray_address: str | None,
    report_name: str,
    readme_file: Path | None,
) -> None:
    """Side-by-side evaluation of Re-TRAC, ReAct and RAG on the same models, tools and corpus.

    Writes OUT/results.jsonl (one line per question and mode, as each ends), OUT/summary.json,
    OUT/summary.md, OUT/summary-context.png and OUT/summary-f1-vs-tokens.png ("summary" is
    --report-name). Stop it at any time; the same command continues it. Results of a mode whose code
    did not change are reused."""
    from retrac_local.agent.toolbox import doc_ids
    from retrac_local.cli.progress import eval_progress
    from retrac_local.eval.codehash import legacy_version
    from retrac_local.eval.equivalence import DEFAULT_FILE, alike
    from retrac_local.eval.harness import (
        Evaluation,
        Units,
        describe_questions,
        fingerprint,
        make_runners,
        method_annotator,
        parse_modes,
    )
    from retrac_local.eval.questions import load_questions
    from retrac_local.eval.summary import write_report
    from retrac_local.interrupt import graceful_sigint

    mode_list = parse_modes(modes)
    questions = load_questions(questions_file, offset, limit)
    from retrac_local.eval.slices import overlaps_report

    if overlaps_report(questions_file.name, offset, limit) and not report_only:
        click.echo(
            'note: these are report questions (CONTRIBUTING.md, "Tuning and report slices"): read the aggregate tables, not the '
            "traces, and write no rule from them",
            err=True,
        )
    title = title or f"{questions_file.name} #{offset + 1}–{offset + len(questions)}"
    overrides = {"memory": {"enabled": False}}  # questions must not learn from each other's runs
    app = make_app(overrides)
    config = fingerprint(app, questions_file, rag_k)
    if unanswerable:
        from retrac_local.eval.hidden import hidden_doc_ids, hidden_home, hidden_path

        if not report_only:
            home = hidden_home(app.settings.home, questions, _remove_documents)
        else:  # a report runs nothing: the copy's run store is read where it was made, never made for it
            home = hidden_path(app.settings.home, questions)
        if home.is_dir():
            app = make_app(overrides | {"home": str(home)})
        config |= {"unanswerable": len(hidden_doc_ids(questions))}
    units: Units = doc_ids
    if layout_file is not None:
        from retrac_local.eval.longdocs import by_paragraph, paragraph_map, read_layout

        units = by_paragraph(paragraph_map(read_layout(layout_file), app.corpus))
        config |= {"layout": describe_questions(layout_file)}
    legacy = {
        mode: {legacy_version(mode), *alike(DEFAULT_FILE, mode, version)}
        for mode, version in config["code"].items()
    }
    evaluation = Evaluation(out, config, check=not report_only, legacy_code=legacy, units=units)
    if report_only and readme_file is not None:  # before anything is written, results included
        from retrac_local.eval.readme import missing_rows, refuse_incomplete

        missing = missing_rows(evaluation.rows, [q.id for q in questions], mode_list)
        refuse_incomplete(readme_file, report_name, missing, len(questions))
    annotate = method_annotator(app.runs, units)
    evaluation.annotate_missing(questions, annotate)

    def report() -> None:
        wanted = {q.id for q in questions}
        earlier = {
            code: [r for r in rows if r.id in wanted] for code, rows in evaluation.set_aside_results().items()
        }
        write_report(
            out,
            [r for r in evaluation.rows if r.id in wanted],
            mode_list,
            title,
            name=report_name,
            unanswerable=unanswerable,
            earlier=earlier,
        )

    if not report_only and (workers or ray_address):
        _run_on_ray(app, evaluation, questions, mode_list, rag_k, workers or 1, ray_address, report, annotate)
    elif not report_only:
        from retrac_local.eval.runtime import describe

        app.agent()  # an empty corpus or a missing model fails here, before any long work
        runners = make_runners(app, mode_list, evaluation, rag_k)
        runtime = describe(app.settings, app.corpus)  # after the models load: it reads their llama.cpp
        try:  # Ctrl-C stops at the next token (a plain KeyboardInterrupt inside llama.cpp is swallowed)
            with graceful_sigint(), eval_progress(questions, mode_list, evaluation) as progress:
                evaluation.run(
                    questions, runners, progress, on_question=report, annotate=annotate, runtime=runtime
                )
        except KeyboardInterrupt:
            report()
            click.echo(
                f"interrupted: finished results are kept in {out}; run the same command to continue", err=True
            )
            sys.exit(130)
    report()
    table = (out / f"{report_name}.md").read_text(encoding="utf-8")
    if readme_file is not None:
        from retrac_local.eval.readme import write_block

        changed = write_block(readme_file, report_name, table)
        click.echo(f"{readme_file}: '{report_name}' {'rewritten' if changed else 'unchanged'}", err=True)
    click.echo(table)


def _run_on_ray(
    app: Any,
    evaluation: Any,
    questions: list[Any],
    modes: list[str],
    rag_k: int,
    workers: int,
    ray_address: str | None,
    report: Callable[[], None],
    annotate: Any,
) -> None:
    from retrac_local.batch.pool import RayPool
    from retrac_local.batch.worker import FromSettings
    from retrac_local.cli.progress import eval_progress
    from retrac_local.cli.render import say

    if not app.corpus.exists() or app.corpus.table().count_rows() == 0:
        raise click.ClickException(
            f"the corpus in {app.settings.corpus_dir} is empty; run `retrac ingest PATH…` first"
        )
    try:
        ray_pool: RayPool = RayPool(FromSettings(app.settings), workers, ray_address)
        with ray_pool as pool, eval_progress(questions, modes, evaluation) as progress:
            failed = evaluation.run_on_ray(
                questions, modes, pool, app.runs, rag_k, progress, on_question=report, annotate=annotate
            )
    except KeyboardInterrupt:
        report()
        click.echo(
            f"interrupted: finished results are kept in {evaluation.out}; run the same command to continue",
            err=True,
        )
        sys.exit(130)
    report()
    if failed:
        for line in failed:
            say(f"failed: {line}", err=True)
        raise click.ClickException(
            f"{len(failed)} (question, mode) pair(s) failed and are not in the results; "
            "run the same command again to retry them"
        )


def _remove_documents(home: Path, doc_ids: list[str]) -> None:
    """Delete documents from the collection of `home` and fold the deletions into its indexes."""
    corpus = make_app({"home": str(home)}).corpus
    corpus.delete_documents(doc_ids)
    corpus.finish_writes()
