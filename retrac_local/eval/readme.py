"""The README's evaluation tables, written from the report instead of pasted by hand.

A document marks where a report goes with a pair of comments named after the report:

    <!-- first-30 -->
    …the report's Markdown, replaced on each write…
    <!-- /first-30 -->

`retrac eval … --report-only --readme README.md` replaces what lies between them with the report it
has just written, so that the figures a reader sees are the ones `results.jsonl` gives."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from retrac_local.eval.rows import EvalRow


def _markers(name: str) -> tuple[str, str]:
    return f"<!-- {name} -->", f"<!-- /{name} -->"


def replace_block(text: str, name: str, body: str) -> str:
    """`text` with the block named `name` holding `body`; everything outside the block is kept. A
    marker is a line of its own: the same comment quoted inside a sentence is text, not a marker."""
    start, end = _markers(name)
    lines = text.splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if line.strip() == start]
    ends = [i for i, line in enumerate(lines) if line.strip() == end]
    if len(starts) != 1 or len(ends) != 1:
        found = f"{len(starts)} '{start}' and {len(ends)} '{end}'"
        raise ValueError(f"needs exactly one line '{start}' and one line '{end}' (found {found})")
    if ends[0] < starts[0]:
        raise ValueError(f"'{end}' comes before '{start}'")
    head, tail = "".join(lines[: starts[0]]), "".join(lines[ends[0] + 1 :])
    newline = "\n" if lines[ends[0]].endswith("\n") else ""  # only a document's last line may lack one
    return f"{head}{start}\n{body.strip()}\n{end}{newline}{tail}"


def write_block(path: Path, name: str, body: str) -> bool:
    """Put `body` in the block `name` of the document at `path`; True when the file changed. The
    file is replaced in one rename, so an interrupted write leaves the old document whole."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise click.ClickException(f"cannot read {path}: {exc.strerror}") from exc
    try:
        new = replace_block(text, name, body)
    except ValueError as exc:
        start, end = _markers(name)
        raise click.ClickException(
            f"{path}: {exc}; mark where the report '{name}' goes with a line '{start}' and a line "
            f"'{end}' below it, or pass another --report-name"
        ) from exc
    if new == text:
        return False
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(new, encoding="utf-8")
    os.replace(partial, path)
    return True


def missing_rows(rows: list[EvalRow], question_ids: list[str], modes: list[str]) -> dict[str, int]:
    """Per mode, how many of the questions it has no result for; modes with every result are left
    out. A README table compares modes on the questions they all answered, so one mode without
    results would empty it."""
    have: dict[str, set[str]] = {mode: set() for mode in modes}
    for row in rows:
        if row.mode in have:
            have[row.mode].add(row.id)
    wanted = set(question_ids)
    return {mode: len(wanted - ids) for mode, ids in have.items() if wanted - ids}


def refuse_incomplete(path: Path, name: str, missing: dict[str, int], total: int) -> None:
    """Stop before a report with a mode's results missing reaches the document (and before the report
    files are redrawn): the table would show fewer questions, or none."""
    if not missing:
        return
    short = ", ".join(f"{mode} has {total - n} of {total}" for mode, n in sorted(missing.items()))
    raise click.ClickException(
        f"the table '{name}' in {path} needs every mode's results on all {total} questions, and {short} "
        "at the code recorded; run the evaluation without --report-only to finish them (results of "
        "earlier code are kept in results.MODE-VERSION.jsonl), or leave that mode out with --mode; "
        f"{path} and the report were left as they were"
    )
