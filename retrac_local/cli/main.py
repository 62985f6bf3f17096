"""`retrac …` commands. Errors a person can fix print one line (no traceback) and exit 1."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from retrac_local.errors import RetracError


class Group(click.Group):
    """Turns RetracError into a one-line message at the boundary, and nowhere else."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except RetracError as e:
            raise click.ClickException(str(e)) from e


def make_app(overrides: dict[str, Any] | None = None) -> Any:
    from retrac_local.api import Retrac
    from retrac_local.config import load_settings

    return Retrac(load_settings(**(overrides or {})))


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
    from retrac_local.cli.render import echo_json

    app = make_app()
    try:
        with ingest_progress(enabled=not as_json) as progress:
            report = app.ingest(list(paths), prune=prune, progress=progress)
    except KeyboardInterrupt:
        click.echo("interrupted: files already ingested are kept; run the same command again to finish", err=True)
        sys.exit(130)
    data = report.to_dict()
    if as_json:
        echo_json(data)
        return
    click.echo(
        f"ingested {data['files_added']} file(s), {data['documents_added']} document(s), {data['chunks']} chunk(s) "
        f"in {data['seconds']} s; skipped {data['files_skipped']} unchanged file(s)"
        + (f"; removed {data['documents_removed']} document(s)" if data["documents_removed"] else "")
    )
    for failure in data["failed"]:
        click.echo(f"  failed: {failure['path']}: {failure['error']}", err=True)


@cli.command()
@click.argument("query", required=False)
@click.option("-k", type=int, default=None, help="number of hits (default: retrieval.k)")
@click.option("--method", type=click.Choice(["hybrid", "bm25", "vector"]), default=None)
@click.option("--queries", type=click.File("r"), help="a file with one query a line; prints one JSON line each")
@click.option("--json", "as_json", is_flag=True)
def search(query: str | None, k: int | None, method: str | None, queries: Any, as_json: bool) -> None:
    """Search the corpus, as the agent's search tool does."""
    import json

    from retrac_local.cli.render import echo_json

    if not query and queries is None:
        raise click.UsageError("give a QUERY or --queries FILE")
    app = make_app()
    if queries is not None:
        for line in queries:
            if line.strip():
                hits = app.search(line.strip(), k=k, method=method)  # type: ignore[arg-type]
                click.echo(json.dumps({"query": line.strip(), "hits": [h.to_dict() for h in hits]}, ensure_ascii=False))
        return
    assert query is not None
    hits = app.search(query, k=k, method=method)  # type: ignore[arg-type]
    if as_json:
        echo_json([h.to_dict() for h in hits])
        return
    for n, h in enumerate(hits, start=1):
        click.echo(f"{n}. [{h.chunk.chunk_id}] {h.chunk.title}  ({h.score:.4f})\n   {h.chunk.text[:300]}")


def _run(events: Any, as_json: bool, mode: str = "lines", max_rounds: int | None = None) -> None:
    """Show a run as it goes: `lines` (a line per step and round, and a live status line on a
    terminal), `events` (JSON Lines on stdout, one per event), `quiet` (the answer only); `as_json`
    prints only the result."""
    import time

    from retrac_local.agent.events import (
        RoundCarried,
        RoundCompressed,
        RunFinished,
        RunStarted,
        StepTaken,
        event_dict,
    )
    from retrac_local.cli.render import echo_json, render_event, render_result
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
                if isinstance(event, (RoundCompressed, RoundCarried)):
                    iteration = event.iteration + (1 if isinstance(event, RoundCompressed) else 0)
                if mode == "events":
                    click.echo(json.dumps(event_dict(event), ensure_ascii=False))
                elif mode == "quiet" or as_json:
                    pass
                else:
                    render_event(event)
                if status is not None:
                    left = f" of {max_rounds}" if max_rounds else ""
                    status.update(f"round {iteration}{left} · {calls} tool call(s) · {time.perf_counter() - started:.0f} s")
    except KeyboardInterrupt:
        where = f"; continue it with `retrac resume {run_id}`" if run_id else ""
        click.echo(f"interrupted: every finished round is saved{where}", err=True)
        sys.exit(130)
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
@click.option("--max-rounds", type=int, default=None, help="round budget (default: budget.max_rounds)")
@click.option("--no-memory", is_flag=True, help="do not seed the run with evidence of similar past runs")
@click.option("--json", "as_json", is_flag=True, help="print only the result, as JSON")
@click.option("--quiet", is_flag=True, help="no progress: only the answer and its quotes")
@click.option("--events", is_flag=True, help="JSON Lines on stdout, one per event, for other programs")
def ask(question: str, max_rounds: int | None, no_memory: bool, as_json: bool, quiet: bool, events: bool) -> None:
    """Research QUESTION in the corpus and answer it with cited quotes."""
    overrides: dict[str, Any] = {"budget": {"max_rounds": max_rounds}} if max_rounds else {}
    if no_memory:
        overrides["memory"] = {"enabled": False}
    app = make_app(overrides)
    _run(app.ask(question), as_json, _display(quiet, events), app.settings.budget.max_rounds)


@cli.command()
@click.argument("run_id")
@click.option("--json", "as_json", is_flag=True)
@click.option("--quiet", is_flag=True, help="no progress: only the answer and its quotes")
@click.option("--events", is_flag=True, help="JSON Lines on stdout, one per event")
def resume(run_id: str, as_json: bool, quiet: bool, events: bool) -> None:
    """Continue an interrupted run from its last saved round."""
    app = make_app()
    _run(app.resume(run_id), as_json, _display(quiet, events), app.settings.budget.max_rounds)


@cli.group(cls=Group)
def runs() -> None:
    """Past runs: list and show."""


@runs.command("list")
@click.option("--json", "as_json", is_flag=True)
def runs_list(as_json: bool) -> None:
    from retrac_local.cli.render import echo_json

    rows = make_app().runs.list_runs()
    if as_json:
        echo_json(rows)
        return
    for r in rows:
        click.echo(f"{r['run_id']}  {r['status']:<16} {r['rounds']} round(s)  {r['created']}  {r['question'][:70]}")


@runs.command("show")
@click.argument("run_id")
@click.option("--json", "as_json", is_flag=True)
def runs_show(run_id: str, as_json: bool) -> None:
    from retrac_local.cli.render import echo_json

    app = make_app()
    run = app.runs.run(run_id)
    rounds = app.runs.rounds(run_id)
    data = {"run_id": run_id, "question": run["question"], "status": run["status"], "answer": run["answer"],
            "rounds": rounds, "result": run["result"]}
    if as_json:
        echo_json(data)
        return
    click.echo(f"run {run_id} [{run['status']}]\nQuestion: {run['question']}\nAnswer: {run['answer']}")
    for past in run["memory"]:
        click.echo(f"memory: seeded {past['evidence_seeded']} of {past['evidence_offered']} fact(s) from past run "
                   f"{past['run_id']} (similarity {past['similarity']:.2f}: {past['question']!r})")
    evidence = {e["id"]: e for e in run["initial_state"]["evidence"]}
    for e in evidence.values():
        click.echo(f"  = [{e['id']}] ({e['source']}, {e['verified']}, from memory) {e['fact']}")
    for r in rounds:
        s, d = r["stats"], r["diff"]
        click.echo(f"\nround {r['iteration']}: {s['tool_calls']} tool call(s), ended by {s['end_reason']}, "
                   f"{s['seconds']:.0f} s, {s['prompt_tokens']:,} prompt tokens, state {s['state_tokens']} tokens"
                   + (f"; stop: {s['stop_reason']}" if s.get("stop_reason") else ""))
        for step in r["trajectory"]["steps"]:
            click.echo(f"  {step['tool']}({step['argument']!r})" + (f" → {step['error']}" if step["error"] else ""))
        now = {e["id"]: e for e in r["state"]["evidence"]}
        for i in d.get("evidence_added", []):
            click.echo(f"  + [{i}] ({now[i]['source']}, {now[i]['verified']}) {now[i]['fact']}")
        for i in d.get("evidence_changed", []):
            click.echo(f"  ~ [{i}] ({now[i]['source']}, {now[i]['verified']}) {now[i]['fact']}")
        for i in d.get("evidence_removed", []):
            click.echo(f"  - [{i}] {evidence[i]['fact'] if i in evidence else ''}")
        if d.get("answer_before") != d.get("answer_after"):
            click.echo(f"  answer: {d.get('answer_before')!r} → {d.get('answer_after')!r}")
        for u in d.get("uncertainties_opened", []):
            click.echo(f"  ? opened: {u}")
        for u in d.get("uncertainties_closed", []):
            click.echo(f"  ✓ closed: {u}")
        if d.get("drift_repaired"):
            click.echo(f"  drift repaired: {'; '.join(d['drift_repaired'])}")
        if s.get("rejected"):
            click.echo(f"  rejected by code: {'; '.join(s['rejected'])}")
        if s.get("compression_failed"):
            click.echo("  compression failed: the previous state was kept")
        evidence = now


@runs.command("export")
@click.argument("run_id")
@click.option("--format", "fmt", type=click.Choice(["md", "html", "json"]), default="html", show_default=True)
@click.option("--output", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="file to write (default: standard output)")
def runs_export(run_id: str, fmt: str, output: Path | None) -> None:
    """A run as a report: Markdown, JSON, or a self-contained HTML page (no external files)."""
    from retrac_local.report import build, render

    app = make_app()
    corpus = app.corpus if app.corpus.exists() else None
    text = render(build(app.runs, run_id, corpus), fmt)  # type: ignore[arg-type]
    if output is None:
        click.echo(text, nl=False)
        return
    output.write_text(text, encoding="utf-8")
    click.echo(f"wrote {output}", err=True)


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
    data = {"documents": documents, "chunks": chunks, "size_bytes": store.size_bytes(),
            "vector_index": store.vector_index_kind(), "path": str(store.path)}
    if as_json:
        echo_json(data)
        return
    click.echo(f"{documents} documents, {chunks} chunks, {data['size_bytes'] / 1e6:.1f} MB on disk "
               f"({data['vector_index']} vector search) in {store.path}")


@cli.command()
@click.option("--json", "as_json", is_flag=True)
@click.option("--check", is_flag=True, help="load each model (or reach each server) and report whether it works")
def models(as_json: bool, check: bool) -> None:
    """The configured model of each role: file or server, size, context, and (with --check) whether it loads."""
    from retrac_local.cli.render import echo_json
    from retrac_local.errors import RetracError

    app = make_app()
    s = app.settings
    rows = []
    for role in ("planner", "compressor"):
        role_settings = getattr(s, role)
        if role_settings.url:
            row: dict[str, Any] = {"role": role, "server": role_settings.url, "model": role_settings.server_model,
                                   "n_ctx": role_settings.n_ctx}
        else:
            path = s.model_path(role)  # type: ignore[arg-type]
            row = {"role": role, "path": str(path), "present": path.exists(),
                   "size": path.stat().st_size if path.exists() else None, "n_ctx": role_settings.n_ctx,
                   "n_gpu_layers": role_settings.n_gpu_layers}
        if check:
            try:
                app.make_llm(role)
                row["loads"], row["error"] = True, None
            except RetracError as e:
                row["loads"], row["error"] = False, str(e)
        rows.append(row)
    if as_json:
        echo_json(rows)
        return
    for r in rows:
        if "server" in r:
            where, state = f"{r['model']} at {r['server']}", "server"
        else:
            where = r["path"]
            state = f"{r['size'] / 1e6:.0f} MB" if r["present"] else "MISSING (run `make models`)"
        loads = "" if "loads" not in r else ("  loads: yes" if r["loads"] else f"  loads: NO — {r['error']}")
        click.echo(f"{r['role']:<11} {where}  {state}  n_ctx={r['n_ctx']}{loads}")


@cli.group(cls=Group)
def config() -> None:
    """Write a commented config file, or show the effective settings and where each comes from."""


@config.command("init")
@click.option("--output", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="where to write it (default: $RETRAC_HOME/config.toml)")
@click.option("--force", is_flag=True, help="replace an existing file")
def config_init(output: Path | None, force: bool) -> None:
    """Write every setting with its description and default, commented out."""
    from retrac_local.config import config_file_path
    from retrac_local.config_doc import commented_toml

    path = output or config_file_path()
    if path.exists() and not force:
        raise click.ClickException(f"{path} exists; use --force to replace it, or --output to write elsewhere")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(commented_toml())
    click.echo(f"wrote {path}")


@config.command("show")
@click.option("--json", "as_json", is_flag=True)
def config_show(as_json: bool) -> None:
    """The effective value of every setting, and its source: file, environment, or default."""
    from retrac_local.cli.render import echo_json
    from retrac_local.config import load_settings
    from retrac_local.config_doc import effective

    rows = effective(load_settings())
    if as_json:
        echo_json(rows)
        return
    width = max(len(r["name"]) for r in rows)
    for r in rows:
        click.echo(f"{r['name']:<{width}}  {json.dumps(r['value'])}  ({r['source']})")


@cli.command("eval")
@click.option("--questions", "questions_file", required=True, type=click.Path(path_type=Path, dir_okay=False),
              help='JSON Lines of {"id", "question", "answers", "supporting_doc_ids"?}')
@click.option("--mode", "modes", default="retrac,react,rag", show_default=True, help="comma-separated modes")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="this many questions")
@click.option("--offset", type=click.IntRange(min=0), default=0, help="skip this many questions first")
@click.option("--out", type=click.Path(path_type=Path, file_okay=False), required=True,
              help="output folder; an unfinished evaluation there is continued")
@click.option("--rag-k", type=click.IntRange(min=1, max=50), default=5, show_default=True, help="chunks in the RAG prompt")
@click.option("--title", default=None, help="caption of the table and plots")
@click.option("--report-only", is_flag=True, help="only rewrite the summary and plots from results.jsonl")
def eval_cmd(questions_file: Path, modes: str, limit: int | None, offset: int, out: Path, rag_k: int,
             title: str | None, report_only: bool) -> None:
    """Side-by-side evaluation of Re-TRAC, ReAct and RAG on the same models, tools and corpus.

    Writes OUT/results.jsonl (one line per question and mode, as each ends), OUT/summary.json,
    OUT/summary.md, OUT/context.png and OUT/f1_vs_tokens.png. Stop it at any time; the same command
    continues it."""
    from retrac_local.cli.progress import eval_progress
    from retrac_local.eval.harness import Evaluation, fingerprint, make_runners, parse_modes
    from retrac_local.eval.questions import load_questions
    from retrac_local.eval.report import write_report

    mode_list = parse_modes(modes)
    questions = load_questions(questions_file, offset, limit)
    title = title or f"{questions_file.name} #{offset + 1}–{offset + len(questions)}"
    app = make_app({"memory": {"enabled": False}})  # questions must not learn from each other's runs
    evaluation = Evaluation(out, fingerprint(app, questions_file, rag_k))

    def report() -> None:
        wanted = {q.id for q in questions}
        write_report(out, [r for r in evaluation.rows if r["id"] in wanted], mode_list, title)

    if not report_only:
        app.agent()  # an empty corpus or a missing model fails here, before any long work
        runners = make_runners(app, mode_list, evaluation, rag_k)
        try:
            with eval_progress(questions, mode_list, evaluation) as progress:
                evaluation.run(questions, runners, progress, on_question=report)
        except KeyboardInterrupt:
            report()
            click.echo(f"interrupted: finished results are kept in {out}; run the same command to continue", err=True)
            sys.exit(130)
    report()
    click.echo((out / "summary.md").read_text())


if __name__ == "__main__":
    cli()
