"""The two-model split, side by side: one Re-TRAC evaluation per assignment of models to the planner
and the compressor (`make eval-split`), gathered into one table of F1, time and cost by role.

    python -m retrac_local.eval.split DIR [--name summary]

reads DIR/*/NAME.json (one folder per assignment, as `retrac eval` writes it) and writes
DIR/split.md and DIR/split.json."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from retrac_local.eval.method import ROLES


def gather(folder: Path, name: str = "summary") -> list[dict[str, Any]]:
    """One row per assignment folder that holds a finished report of Re-TRAC."""
    rows = []
    for report in sorted(folder.glob(f"*/{name}.json")):
        config = (
            json.loads((report.parent / "eval.json").read_text())
            if (report.parent / "eval.json").exists()
            else {}
        )
        retrac = json.loads(report.read_text()).get("modes", {}).get("retrac")
        if not retrac:
            continue
        rows.append(
            {
                "assignment": report.parent.name,
                "planner": config.get("planner"),
                "compressor": config.get("compressor"),
                "n": retrac["n"],
                "em": retrac["em"],
                "f1": retrac["f1"],
                "median_seconds": retrac.get("median_seconds"),
                "prompt_tokens": retrac["prompt_tokens"],
                "completion_tokens": retrac["completion_tokens"],
                "cost_by_role": retrac.get("cost_by_role", {}),
                "calibration": retrac.get("calibration", {}),
            }
        )
    return rows


def _cost(row: dict[str, Any], role: str) -> str:
    c = row["cost_by_role"].get(role)
    return f"{c['prompt_tokens']:,.0f} / {c['completion_tokens']:,.0f} / {c['seconds']:,.0f} s" if c else "–"


def markdown(rows: list[dict[str, Any]]) -> str:
    lines = [
        "Cost by role: mean prompt tokens / completion tokens / seconds per question.",
        "",
        "| planner | compressor | n | EM | F1 | median seconds | planner's cost | compressor's cost | final answer's cost |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['planner']} | {r['compressor']} | {r['n']} | {r['em']:.3f} | {r['f1']:.3f} | "
            f"{r['median_seconds'] or 0:.0f} | " + " | ".join(_cost(r, role) for role in ROLES) + " |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--name", default="summary", help="the report name each evaluation used")
    args = parser.parse_args(argv)
    rows = gather(args.folder, args.name)
    if not rows:
        raise SystemExit(
            f"no finished Re-TRAC report under {args.folder}/*/{args.name}.json; run `make eval-split`"
        )
    (args.folder / "split.json").write_text(json.dumps(rows, indent=2))
    (args.folder / "split.md").write_text(markdown(rows))
    print(markdown(rows), end="")


if __name__ == "__main__":
    main()
