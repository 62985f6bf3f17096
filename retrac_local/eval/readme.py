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

import click


def _markers(name: str) -> tuple[str, str]:
    return f"<!-- {name} -->", f"<!-- /{name} -->"


def replace_block(text: str, name: str, body: str) -> str:
    """`text` with the block named `name` holding `body`; everything outside the block is kept."""
    start, end = _markers(name)
    if text.count(start) != 1 or text.count(end) != 1:
        found = f"{text.count(start)} '{start}' and {text.count(end)} '{end}'"
        raise ValueError(f"needs exactly one '{start}' and one '{end}' (found {found})")
    head, rest = text.split(start, 1)
    if end not in rest:
        raise ValueError(f"'{end}' comes before '{start}'")
    tail = rest.split(end, 1)[1]
    return f"{head}{start}\n{body.strip()}\n{end}{tail}"


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
