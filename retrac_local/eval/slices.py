"""The tuning and report slices of the evaluation data, and the report's pooled figures.

Figures that count come from questions no rule was studied on. The data in `../shared/eval/` is
split once, for good:

- **tuning**: HotpotQA dev questions 101-1000 and lines 1-60 of `crossdata_dev.jsonl` (MuSiQue and
  2WikiMultiHopQA). Read their traces, write rules from them, ablate on them.
- **report**: HotpotQA dev questions 1001-1100 and lines 61-120 of `crossdata_dev.jsonl`. Run to
  measure, never to tune: read their aggregate tables, not their traces, and write no rule from
  them. A report slice whose traces someone read has become a tuning slice.

`make eval-report` runs each report slice into a folder of its own (`retrac eval`, resumable) and
then this module pools them: `python -m retrac_local.eval.slices DIR` writes DIR/summary.json
(`"slices": {"hotpotqa", "crossdata", "pooled"}`, each with `"modes"` and `"paired"`) and
DIR/summary.md. Rows of two runtimes (another machine, another build of the collection) are never
pooled silently: each slice says how many runtimes its rows were made on.
"""

from __future__ import annotations

import argparse
import json
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from retrac_local.contract.events import StopReason
from retrac_local.eval import runtime
from retrac_local.eval.method import RIGHT_F1
from retrac_local.eval.rows import EvalRow, read_rows
from retrac_local.eval.summary import paired, paired_difference


@dataclass(frozen=True)
class Slice:
    name: str  # the folder and key of its results
    file: str  # in ../shared/eval
    offset: int  # questions skipped first
    limit: int
    role: str  # tuning | report

    @property
    def span(self) -> str:
        return f"{self.file} questions {self.offset + 1}-{self.offset + self.limit}"


TUNING = (
    Slice("hotpotqa", "hotpotqa_dev.jsonl", 100, 900, "tuning"),
    Slice("crossdata", "crossdata_dev.jsonl", 0, 60, "tuning"),
)
REPORT = (
    Slice("hotpotqa", "hotpotqa_dev.jsonl", 1000, 100, "report"),
    Slice("crossdata", "crossdata_dev.jsonl", 60, 60, "report"),
)


def overlaps_report(file: str, offset: int, limit: int | None) -> bool:
    """Whether questions offset+1 … offset+limit of `file` include report questions."""
    end = offset + limit if limit is not None else None
    return any(
        s.file == file and (end is None or end > s.offset) and offset < s.offset + s.limit for s in REPORT
    )


def mode_figures(rows: list[EvalRow]) -> dict[str, Any]:
    """n, F1, EM, median seconds, *answered* and *answered* right (F1 ≥ 0.8) of one mode's rows."""
    answered = [r for r in rows if r.status == "answered"]
    right = [r for r in answered if r.f1 >= RIGHT_F1]
    rounds = [r for r in rows if r.rounds]
    return {
        "n": len(rows),
        "f1": round(statistics.fmean(r.f1 for r in rows), 4) if rows else None,
        "em": round(statistics.fmean(r.em for r in rows), 4) if rows else None,
        "median_seconds": round(statistics.median(r.seconds for r in rows), 2) if rows else None,
        "answered": len(answered),
        "answered_right": len(right),
        "answered_share": round(len(answered) / len(rows), 4) if rows else None,
        "answered_right_share": round(len(right) / len(answered), 4) if answered else None,
        # what a round costs in generated tokens (the compressor writes most of them; issue 57)
        "median_tokens_written_per_round": (
            round(statistics.median(r.completion_tokens / r.rounds for r in rounds), 1) if rounds else None
        ),
    }


def ends(rows: list[EvalRow], mode: str = "retrac", against: str = "rag") -> dict[str, Any]:
    """`mode`'s runs split by how they ended — after hop 0 (the first reading held) or after the
    research — each part's figures, and `against`'s F1 on the same questions: what ending early
    costs or gains where it happens."""
    by_id = {r.id: r for r in rows if r.mode == against}
    out: dict[str, Any] = {}
    own = [r for r in rows if r.mode == mode]
    for name, part in (
        ("after_hop0", [r for r in own if r.stop_reason == StopReason.FIRST_READING]),
        ("researched", [r for r in own if r.stop_reason != StopReason.FIRST_READING]),
    ):
        others = [by_id[r.id].f1 for r in part if r.id in by_id]
        out[name] = mode_figures(part) | {
            "share": round(len(part) / len(own), 4) if own else None,
            f"{against}_f1": round(statistics.fmean(others), 4) if others else None,
        }
    return out


def slice_figures(rows: list[EvalRow], modes: list[str]) -> dict[str, Any]:
    """The figures of one slice (or of several pooled), on the questions every mode finished."""
    both = paired(rows, modes)
    out: dict[str, Any] = {
        "questions": len({r.id for r in both}),
        "modes": {m: mode_figures([r for r in both if r.mode == m]) for m in modes},
        "paired": {
            f"{a}-{b}": paired_difference(both, a, b) for i, a in enumerate(modes) for b in modes[i + 1 :]
        },
        "ends": ends(both) if {"retrac", "rag"} <= set(modes) else None,
        # per mode: a mode's rows made on two machines or two builds of the collection are said so
        "runtimes": max(
            (len(runtime.groups(r.runtime for r in both if r.mode == m)) for m in modes), default=0
        ),
    }
    out["seconds_ratio"] = _ratio(out["modes"])
    return out


def _ratio(modes: dict[str, dict[str, Any]]) -> float | None:
    """Re-TRAC's median seconds over RAG's, from the two modes' figures of the same questions."""
    if "retrac" not in modes or "rag" not in modes or not modes["rag"]["median_seconds"]:
        return None
    return round(modes["retrac"]["median_seconds"] / modes["rag"]["median_seconds"], 2)


def pool(
    folder: Path, slices: tuple[Slice, ...] = REPORT, modes: tuple[str, ...] = ("retrac", "rag")
) -> dict[str, Any]:
    """summary.json of the slices under `folder` (each slice's rows in folder/NAME/results.jsonl)."""
    found = {s.name: rows_in(folder / s.name / "results.jsonl") for s in slices}
    present = [m for m in modes if any(r.mode == m for rows in found.values() for r in rows)]
    # a question id is namespaced by its slice, so the pooled pairing never joins two datasets' ids
    pooled = [r.model_copy(update={"id": f"{name}:{r.id}"}) for name, rows in found.items() for r in rows]
    return {
        "slices": {name: slice_figures(rows, present) for name, rows in found.items()}
        | {"pooled": slice_figures(pooled, present)},
        "spans": {s.name: s.span for s in slices},
        "codes": sorted({f"{r.mode} {r.code}" for rows in found.values() for r in rows if r.code}),
    }


def markdown(summary: dict[str, Any]) -> str:
    lines = [
        "| slice | mode | n | F1 | EM | median s | answered | answered right |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, s in summary["slices"].items():
        for mode, m in s["modes"].items():
            share = f" ({m['answered_right_share']:.0%})" if m["answered_right_share"] is not None else ""
            lines.append(
                f"| {name} | {mode} | {m['n']} | {_f(m['f1'])} | {_f(m['em'])} | {_s(m['median_seconds'])} | "
                f"{m['answered']} | {m['answered_right']}{share} |"
            )
    lines.append("")
    for name, s in summary["slices"].items():
        for pair, d in s["paired"].items():
            if d["n"]:
                lines.append(
                    f"- {name}, {pair}: F1 {d['f1_diff']:+.3f} [{d['ci_low']:+.3f}, {d['ci_high']:+.3f}] "
                    f"on {d['n']} questions" + (f" ({s['runtimes']} runtimes)" if s["runtimes"] > 1 else "")
                )
    for name, s in summary["slices"].items():
        if s.get("seconds_ratio") is not None:
            lines.append(f"- {name}: Re-TRAC's median seconds {s['seconds_ratio']:.1f}× RAG's")
        if s.get("ends"):
            early, rest = s["ends"]["after_hop0"], s["ends"]["researched"]
            lines.append(
                f"- {name}: {early['n']} of {early['n'] + rest['n']} ended after hop 0 "
                f"(F1 {_f(early['f1'])}, RAG {_f(early['rag_f1'])} on them; answered right "
                f"{early['answered_right']} of {early['answered']}; median {_s(early['median_seconds'])} s), "
                f"the others researched (F1 {_f(rest['f1'])}, RAG {_f(rest['rag_f1'])}; answered right "
                f"{rest['answered_right']} of {rest['answered']}; median {_s(rest['median_seconds'])} s)"
            )
    lines.append(f"\nCode: {', '.join(summary['codes'])}.")
    return "\n".join(lines) + "\n"


def _f(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def _s(value: float | None) -> str:
    return "–" if value is None else f"{value:.0f}"


def rows_in(path: Path) -> list[EvalRow]:
    if not path.is_file():
        return []
    return read_rows(path.read_text(encoding="utf-8").splitlines(), str(path))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="pool the report slices' results into DIR/summary.json")
    parser.add_argument("folder", type=Path)
    parser.add_argument("--role", choices=("report", "tuning"), default="report")
    args = parser.parse_args(argv)
    summary = pool(args.folder, REPORT if args.role == "report" else TUNING)
    (args.folder / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    (args.folder / "summary.md").write_text(markdown(summary), encoding="utf-8")
    print(markdown(summary), end="")


if __name__ == "__main__":
    main()
