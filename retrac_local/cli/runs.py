"""`retrac runs …`: list, show and export past runs."""

from __future__ import annotations

import os
from pathlib import Path

import click

from retrac_local.cli.app import Group, make_app


@click.group(cls=Group)
def runs() -> None:
    """Past runs: list, show and export."""


@runs.command("list")
@click.option("--json", "as_json", is_flag=True)
def runs_list(as_json: bool) -> None:
    from retrac_local.cli.render import echo_json, say

    rows = make_app().runs.list_runs()
    if as_json:
        echo_json(rows)
        return
    for r in rows:
        say(f"{r['run_id']}  {r['status']:<16} {r['rounds']} round(s)  {r['created']}  {r['question'][:70]}")


@runs.command("show")
@click.argument("run_id")
@click.option("--json", "as_json", is_flag=True)
def runs_show(run_id: str, as_json: bool) -> None:
    from retrac_local.cli.render import echo_json, say
    from retrac_local.export import run_json

    app = make_app()
    data = run_json(app.runs, run_id)
    if as_json:
        echo_json(data)
        return
    run, rounds = app.runs.run(run_id), data["rounds"]
    say(f"run {run_id} [{run['status']}]\nQuestion: {run['question']}\nAnswer: {run['answer']}")
    asked = (run["result"] or {}).get("asked")
    if asked:
        say(
            f"Read as: kind {asked['kind'] or 'unknown'}"
            + (f", options {' / '.join(asked['options'])}" if asked["options"] else "")
            + (f", comparison {' '.join(asked['comparison'])}" if asked["comparison"] else "")
            + (", asks two things" if asked["asks_two"] else "")
        )
    for past in run["memory"]:
        say(
            f"memory: seeded {past['evidence_seeded']} of {past['evidence_offered']} fact(s) from past run "
            f"{past['run_id']} (similarity {past['similarity']:.2f}: {past['question']!r})"
        )
    evidence = {e["id"]: e for e in run["initial_state"]["evidence"]}
    for e in evidence.values():
        say(f"  = [{e['id']}] ({e['source']}, {e['verified']}, from memory) {e['fact']}")
    for r in rounds:
        s, d = r["stats"], r["diff"]
        say(
            f"\nround {r['iteration']}: {s['tool_calls']} tool call(s), ended by {s['end_reason']}, "
            f"{s['seconds']:.0f} s, {s['prompt_tokens']:,} prompt tokens, state {s['state_tokens']} tokens"
            + (f"; stop: {s['stop_reason']}" if s.get("stop_reason") else "")
        )
        for step in r["trajectory"]["steps"]:
            offered = step.get("candidates") or []
            if offered:
                say("    offered: " + "; ".join(f"{n}. {c['query']}" for n, c in enumerate(offered, 1)))
            by = {"code": " [by code]", "pick": " [picked]"}.get(step.get("by", ""), "")
            say(
                f"  {step['tool']}({step['argument']!r}){by}"
                + (f" → {step['error']}" if step["error"] else "")
            )
        now = {e["id"]: e for e in r["state"]["evidence"]}
        for i in d.get("evidence_added", []):
            say(f"  + [{i}] ({now[i]['source']}, {now[i]['verified']}) {now[i]['fact']}")
        for i in d.get("evidence_changed", []):
            say(f"  ~ [{i}] ({now[i]['source']}, {now[i]['verified']}) {now[i]['fact']}")
        for i in d.get("evidence_removed", []):
            say(f"  - [{i}] {evidence[i]['fact'] if i in evidence else ''}")
        if d.get("answer_before") != d.get("answer_after"):
            say(f"  answer: {d.get('answer_before')!r} → {d.get('answer_after')!r}")
        for u in d.get("uncertainties_opened", []):
            say(f"  ? opened: {u}")
        for u in d.get("uncertainties_closed", []):
            say(f"  ✓ closed: {u}")
        if d.get("drift_repaired"):
            say(f"  drift repaired: {'; '.join(d['drift_repaired'])}")
        if s.get("rejected"):
            say(f"  rejected by code: {'; '.join(s['rejected'])}")
        if s.get("compression_failed"):
            say("  compression failed: the previous state was kept")
        for fired in s.get("rules", []):
            say(f"  rule {fired['rule']}: {fired['change']}")
        evidence = now
    in_rounds = sum(len(r["stats"].get("rules", [])) for r in rounds)
    final_rules = ((run["result"] or {}).get("rule_log") or [])[in_rounds:]
    if final_rules:
        say("\nfinal answer:")
        for fired in final_rules:
            say(f"  rule {fired['rule']}: {fired['change']}")


@runs.command("export")
@click.argument("run_id")
@click.option("--format", "fmt", type=click.Choice(["md", "html", "json"]), default="html", show_default=True)
@click.option(
    "--output",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="file to write (default: standard output)",
)
@click.option("--force", is_flag=True, help="replace the output file if it exists")
def runs_export(run_id: str, fmt: str, output: Path | None, force: bool) -> None:
    """A run as a report: Markdown, JSON, or a self-contained HTML page (no external files)."""
    from retrac_local.cli.render import say
    from retrac_local.export import build, render

    app = make_app()
    corpus = app.corpus if app.corpus.exists() else None
    text = render(build(app.runs, run_id, corpus), fmt)  # type: ignore[arg-type]
    if output is None:
        say(text, nl=False)
        return
    write_new_file(output, text, force)
    say(f"wrote {output}", err=True)


def write_new_file(path: Path, text: str, force: bool) -> None:
    """Write through a temporary file and a rename: an interrupted or failed write (a full disk)
    leaves the old file whole. An existing file is replaced only with --force; what is not a plain
    file (a device, a folder) never."""
    if path.exists() or path.is_symlink():
        if not path.is_file():
            raise click.ClickException(f"{path} is not a plain file; give a file path to --output")
        if not force:
            raise click.ClickException(f"{path} exists; use --force to replace it, or give another --output")
    if not path.parent.is_dir():
        raise click.ClickException(f"the folder {path.parent} does not exist; create it first")
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise click.ClickException(f"cannot write {path}: {e.strerror or e}") from e
