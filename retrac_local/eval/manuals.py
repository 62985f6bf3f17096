"""The manuals evaluation: the project's own questions over real manuals installed from Debian
packages, the collections this tool is for (corpora/manuals/README.md says how they were written).

`make eval-manuals` installs the packages, ingests the manuals into a home of their own, runs
Re-TRAC and RAG on each half of `corpora/manuals/questions.jsonl` into
`docs/eval/manuals/{tuning,report}/` (resumable) and then this module pools them:

    python -m retrac_local.eval.manuals docs/eval/manuals

writes `summary.json` shaped like the report's (`"slices": {"tuning", "report"}`, each with
`"modes"` and `"paired"`, on the questions the manuals answer), with the questions they do not
answer counted apart (`"not_in_manuals"`: per mode, how many were *answered*, and how many said
"not found"). The report half is read the way the report slices are: its aggregates, not its traces.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from retrac_local.eval.rows import EvalRow
from retrac_local.eval.slices import Slice, markdown, rows_in, slice_figures

QUESTIONS = "corpora/manuals/questions.jsonl"
HALVES = (
    Slice("tuning", QUESTIONS, 0, 30, "tuning"),
    Slice("report", QUESTIONS, 30, 30, "report"),
)
NOT_IN_MANUALS = "not-in-manuals"  # the type of a question whose answer the manuals do not hold


def said_not_found(row: EvalRow) -> bool:
    """The run said the collection does not answer it (its caveat or its answer says so)."""
    text = f"{row.caveat or ''} {row.answer or ''}".lower()
    return "not found" in text or "not stated" in text


def apart(rows: list[EvalRow], modes: list[str]) -> dict[str, Any]:
    """Per mode, of the questions the manuals do not answer: how many, *answered* (with confidence:
    what must not happen), and said "not found"."""
    out = {}
    for mode in modes:
        mine = [r for r in rows if r.mode == mode]
        out[mode] = {
            "n": len(mine),
            "answered": sum(r.status == "answered" for r in mine),
            "said_not_found": sum(said_not_found(r) for r in mine),
        }
    return out


def summarize(folder: Path, modes: tuple[str, ...] = ("retrac", "rag")) -> dict[str, Any]:
    found = {s.name: rows_in(folder / s.name / "results.jsonl") for s in HALVES}
    present = [m for m in modes if any(r.mode == m for rows in found.values() for r in rows)]
    answerable = {name: [r for r in rows if r.type != NOT_IN_MANUALS] for name, rows in found.items()}
    return {
        "slices": {name: slice_figures(rows, present) for name, rows in answerable.items()},
        "not_in_manuals": {
            name: apart([r for r in rows if r.type == NOT_IN_MANUALS], present)
            for name, rows in found.items()
        },
        "spans": {s.name: s.span for s in HALVES},
        "codes": sorted({f"{r.mode} {r.code}" for rows in found.values() for r in rows if r.code}),
    }


def render(summary: dict[str, Any]) -> str:
    lines = [markdown(summary), "Questions the manuals do not answer:", ""]
    for name, by_mode in summary["not_in_manuals"].items():
        for mode, m in by_mode.items():
            lines.append(
                f"- {name}, {mode}: {m['answered']} of {m['n']} *answered*, "
                f"{m['said_not_found']} said not found"
            )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="pool the manuals evaluation into DIR/summary.json")
    parser.add_argument("folder", type=Path)
    args = parser.parse_args(argv)
    summary = summarize(args.folder)
    (args.folder / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    (args.folder / "summary.md").write_text(render(summary), encoding="utf-8")
    print(render(summary), end="")


if __name__ == "__main__":
    main()
