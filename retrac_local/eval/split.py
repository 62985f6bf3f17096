"""The two-model split, side by side: one Re-TRAC evaluation per assignment of models to the planner
and the compressor (`make eval-split`), gathered into one table of F1, time and cost by role.

    python -m retrac_local.eval.split DIR [--name summary] [--with REPORT.json …] [--readme README.md]

reads DIR/*/NAME.json (one folder per assignment, as `retrac eval` writes it), and each REPORT given
with `--with` (a finished report of another evaluation, such as the standard one, whose settings
are one of the assignments: it is not run twice), and writes DIR/split.md and DIR/split.json. Where
a folder of DIR and a `--with` report hold the same assignment, the folder's is kept. `--readme`
also puts the table between the document's `<!-- split -->` and `<!-- /split -->` lines.

The first `--with` report is the reference: every other row gets its F1 minus the reference's over
the questions both ran, with a 95% bootstrap interval (the rows of the code versions the report
names, from its evaluation's results or set aside beside them). Each row also gets how its runs
ended (status counts)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from retrac_local.eval.method import ROLES
from retrac_local.eval.rows import read_rows
from retrac_local.eval.summary import difference


def _f1_by_question(report: Path, codes: list[str]) -> dict[str, float]:
    """F1 by question id of the Re-TRAC rows of `codes` that the report's evaluation stored, in its
    results or set aside beside them (`results.retrac-VERSION.jsonl`, once a later code ran there)."""
    files = [report.parent / "results.jsonl", *(report.parent / f"results.retrac-{c}.jsonl" for c in codes)]
    f1: dict[str, float] = {}
    for results in files:
        if results.exists():
            rows = read_rows(results.read_text().splitlines(), str(results))
            f1 |= {r.id: r.f1 for r in rows if r.mode == "retrac" and (not codes or r.code in codes)}
    return f1


def _codes(retrac: dict[str, Any], config: dict[str, Any]) -> list[str]:
    """The code versions of the report's Re-TRAC rows: as the report records them; a report of an older
    harness records none, and its evaluation's settings name the code that ran last there (which a
    later run in the same folder may have changed since)."""
    if retrac.get("codes"):
        return sorted(retrac["codes"])
    code = config.get("code")
    return [code["retrac"]] if isinstance(code, dict) and code.get("retrac") else []


def _row(report: Path, assignment: str) -> dict[str, Any] | None:
    """The Re-TRAC row of one finished report, with the models of its evaluation and the code its rows
    were made by."""
    settings = report.parent / "eval.json"
    config = json.loads(settings.read_text()) if settings.exists() else {}
    retrac = json.loads(report.read_text()).get("modes", {}).get("retrac")
    if not retrac:
        return None
    codes = _codes(retrac, config)
    return {
        "assignment": assignment,
        "planner": config.get("planner"),
        "compressor": config.get("compressor"),
        "code": ", ".join(codes) or None,
        "_codes": codes,
        "n": retrac["n"],
        "em": retrac["em"],
        "f1": retrac["f1"],
        "median_seconds": retrac.get("median_seconds"),
        "prompt_tokens": retrac["prompt_tokens"],
        "completion_tokens": retrac["completion_tokens"],
        "cost_by_role": retrac.get("cost_by_role", {}),
        "calibration": retrac.get("calibration", {}),
        "status": retrac.get("status", {}),
        "reference": False,
        "_report": report,
    }


def gather(folder: Path, name: str = "summary", extra: Sequence[Path] = ()) -> list[dict[str, Any]]:
    """One row per assignment: each folder of `folder` that holds a finished report of Re-TRAC, then
    each report of `extra` whose planner and compressor no folder has."""
    rows = [
        row
        for report in sorted(folder.glob(f"*/{name}.json"))
        if (row := _row(report, report.parent.name)) is not None
    ]
    for report in extra:
        if not report.is_file():
            raise SystemExit(f"--with {report}: no such report; run that evaluation first or leave it out")
        row = _row(report, f"{report.parent.name}/{report.stem}")
        held = {(r["planner"], r["compressor"]) for r in rows}
        if row is not None and (row["planner"], row["compressor"]) not in held:
            rows.append(row)
    if extra:
        _against_reference(rows, _row(extra[0], f"{extra[0].parent.name}/{extra[0].stem}"))
    for row in rows:
        del row["_report"], row["_codes"]
    return rows


def _against_reference(rows: list[dict[str, Any]], reference: dict[str, Any] | None) -> None:
    """Marks the row of the reference's assignment, and gives each other row its paired F1
    difference against the reference (`f1_vs_reference`)."""
    if reference is None:
        return
    theirs = _f1_by_question(reference["_report"], reference["_codes"])
    for row in rows:
        if (row["planner"], row["compressor"]) == (reference["planner"], reference["compressor"]):
            row["reference"] = True
            continue
        mine = _f1_by_question(row["_report"], row["_codes"])
        row["f1_vs_reference"] = {"reference": reference["assignment"], **difference(mine, theirs)}


def _cost(row: dict[str, Any], role: str) -> str:
    c = row["cost_by_role"].get(role)
    return f"{c['prompt_tokens']:,.0f} / {c['completion_tokens']:,.0f} / {c['seconds']:,.0f} s" if c else "–"


def _answered(row: dict[str, Any]) -> str:
    answered = row["calibration"].get("answered")
    return f"{answered['right']} of {answered['n']}" if answered else "–"


def _against(row: dict[str, Any]) -> str:
    if row.get("reference"):
        return "reference"
    d = row.get("f1_vs_reference")
    if not d or d["f1_diff"] is None:
        return "–"
    return f"{d['f1_diff']:+.3f} [{d['ci_low']:+.3f}, {d['ci_high']:+.3f}]"


def _statuses(row: dict[str, Any]) -> str:
    counts = row.get("status") or {}
    return ", ".join(f"{name} {n}" for name, n in sorted(counts.items(), key=lambda kv: -kv[1])) or "–"


def markdown(rows: list[dict[str, Any]]) -> str:
    lines = [
        "Cost by role: mean prompt tokens / completion tokens / seconds per question. F1 against the "
        "reference: this row's F1 minus the reference row's on the same questions, with a 95% "
        "bootstrap interval. *Answered* right: of the questions answered with confidence, those "
        "with F1 ≥ 0.8.",
        "",
        "| planner | compressor | n | EM | F1 | F1 against the reference | median seconds | "
        "planner's cost | compressor's cost | final answer's cost | status | *answered* right | code | "
        "from |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['planner']} | {r['compressor']} | {r['n']} | {r['em']:.3f} | {r['f1']:.3f} | "
            f"{_against(r)} | {r['median_seconds'] or 0:.0f} | "
            + " | ".join(_cost(r, role) for role in ROLES)
            + f" | {_statuses(r)} | {_answered(r)} | {r['code'] or '–'} | {r['assignment']} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--name", default="summary", help="the report name each evaluation used")
    parser.add_argument(
        "--with",
        dest="extra",
        type=Path,
        action="append",
        default=[],
        help="a finished report of another evaluation that is one of the assignments (repeatable)",
    )
    parser.add_argument("--readme", type=Path, help="a document whose 'split' block gets the table")
    args = parser.parse_args(argv)
    rows = gather(args.folder, args.name, args.extra)
    if not rows:
        raise SystemExit(
            f"no finished Re-TRAC report under {args.folder}/*/{args.name}.json; run `make eval-split`"
        )
    (args.folder / "split.json").write_text(json.dumps(rows, indent=2))
    (args.folder / "split.md").write_text(markdown(rows))
    if args.readme is not None:
        from retrac_local.eval.readme import write_block

        write_block(args.readme, "split", markdown(rows))
    print(markdown(rows), end="")


if __name__ == "__main__":
    main()
