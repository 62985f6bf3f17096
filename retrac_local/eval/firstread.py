"""Tuning the first reading (agent/firstreading.py): what hop 0's passages answer, and how often,
recorded for every question of a tuning slice, then the curve of its threshold against stored runs.

    python -m retrac_local.eval.firstread QUESTIONS --offset 0 --limit 60 --out FILE.jsonl
    python -m retrac_local.eval.firstread --curve FILE.jsonl --runs RESULTS.jsonl [--md OUT.md]

The first form reads each question's first search as a run would (RAG's five passages), answers
greedily and sampled, and checks the cited sentences alone, whatever the agreement: one JSON line per
question, written as it goes (an interrupted run continues). The second says, for each threshold of
`budget.first_reading_agreement`, how many runs would have ended after hop 0, their F1 and *answered*
right, and the F1 of all of them when the others keep the Re-TRAC answer of `--runs` (rows of
`retrac eval`), paired against RAG: the greedy answer from the same passages, which is RAG's.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

from retrac_local.eval.method import RIGHT_F1
from retrac_local.eval.questions import load_questions
from retrac_local.eval.rows import read_rows
from retrac_local.eval.scoring import best
from retrac_local.eval.summary import difference

THRESHOLDS = (0.5, 0.75, 1.0, None)  # None: never ended after hop 0, the stored runs alone


def record(questions: Path, offset: int, limit: int | None, out: Path) -> None:
    from retrac_local.agent import firstreading
    from retrac_local.agent.question import parse
    from retrac_local.api import Retrac
    from retrac_local.corpus.embedder import relevance_by

    app = Retrac()
    agent = app.agent()
    done = set()
    if out.exists():
        done = {
            json.loads(line)["id"] for line in out.read_text(encoding="utf-8").splitlines() if line.strip()
        }
    budget, sampling = app.settings.budget, app.settings.sampling
    relevance = relevance_by(app.corpus.embedder)
    for q in load_questions(questions, offset, limit):
        if q.id in done:
            continue
        started = time.perf_counter()
        chunks = [h.chunk for h in app.corpus.search(q.question, k=app.settings.retrieval.first_k)]
        reading = firstreading.read(
            agent.planner,
            agent.system_prompt,
            q.question,
            chunks,
            choices=parse(q.question).options,
            samples=budget.first_reading_samples,
            needed=0.0,
            check_needed=budget.answer_agreement,
            max_tokens=sampling.answer_max_tokens,
            relevance=relevance,
        )
        f1 = best(reading.answer, q.answers)[1]
        row = {"id": q.id, "question": q.question, "gold": q.answers, "f1": f1, **reading.to_dict()}
        row["seconds"] = round(time.perf_counter() - started, 2)
        with out.open("a", encoding="utf-8") as f:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
        print(f"{q.id}: {reading.answer!r} agreement {reading.agreement} check {reading.check} f1 {f1:.2f}")


def curve(readings: Path, runs: list[Path]) -> tuple[list[dict[str, Any]], int]:
    """Per threshold: runs ended after hop 0, their F1 and *answered* right, and everyone's F1 with
    the others' Re-TRAC answers, paired against RAG; and how many questions the figures are over."""
    rows = [json.loads(line) for line in readings.read_text(encoding="utf-8").splitlines() if line.strip()]
    stored = [r for path in runs for r in read_rows(path.read_text(encoding="utf-8").splitlines(), str(path))]
    retrac = {r.id: r for r in stored if r.mode == "retrac"}
    rows = [r for r in rows if r["id"] in retrac]
    rag = {r["id"]: r["f1"] for r in rows}  # the greedy answer from hop 0's passages is RAG's
    out = []
    for t in THRESHOLDS:
        ended = [r for r in rows if t is not None and r["holds"] and (r["agreement"] or 0.0) >= t]
        ids = {r["id"] for r in ended}
        mine = {r["id"]: (r["f1"] if r["id"] in ids else retrac[r["id"]].f1) for r in rows}
        others = [retrac[r["id"]] for r in rows if r["id"] not in ids]
        answered = len(ended) + sum(o.status == "answered" for o in others)
        right = sum(r["f1"] >= RIGHT_F1 for r in ended) + sum(
            o.status == "answered" and o.f1 >= RIGHT_F1 for o in others
        )
        paired = difference(mine, {i: rag[i] for i in mine})
        out.append(
            {
                "threshold": t,
                "ended": len(ended),
                "ended_f1": round(statistics.fmean(r["f1"] for r in ended), 3) if ended else None,
                "ended_right": sum(r["f1"] >= RIGHT_F1 for r in ended),
                "f1": round(statistics.fmean(mine.values()), 3) if mine else None,
                "answered": answered,
                "answered_right": right,
                "vs_rag": paired,
            }
        )
    return out, len(rows)


def render(points: list[dict[str, Any]], n: int, readings: Path, runs: list[Path]) -> str:
    lines = [
        f"# First reading: ending after hop 0, by threshold ({n} questions)",
        "",
        f"Readings: `{readings}`; the other questions keep the Re-TRAC answers of "
        + ", ".join(f"`{p}`" for p in runs)
        + ". F1 − RAG is paired, with its 95% bootstrap interval.",
        "",
        "| agreement ≥ | ended after hop 0 | their F1 | their right | all F1 | F1 − RAG [95% CI] | *answered* | right |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for p in points:
        d = p["vs_rag"]
        lines.append(
            f"| {'off' if p['threshold'] is None else format(p['threshold'], '.2f')} | {p['ended']} of {n} | {p['ended_f1']} | {p['ended_right']} | {p['f1']} "
            f"| {d['f1_diff']:+.3f} [{d['ci_low']:+.3f}, {d['ci_high']:+.3f}] | {p['answered']} | {p['answered_right']} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m retrac_local.eval.firstread", description=__doc__)
    parser.add_argument("questions", nargs="?", type=Path)
    parser.add_argument("--offset", type=int, default=0)
    parser.add_argument("--limit", type=int)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--curve", type=Path)
    parser.add_argument("--runs", type=Path, action="append", default=[])
    parser.add_argument("--md", type=Path)
    args = parser.parse_args(argv)
    if args.curve:
        points, n = curve(args.curve, args.runs)
        text = render(points, n, args.curve, args.runs)
        if args.md:
            args.md.write_text(text, encoding="utf-8")
        print(text)
        return
    if not args.questions or not args.out:
        parser.error("give QUESTIONS and --out, or --curve")
    record(args.questions, args.offset, args.limit, args.out)


if __name__ == "__main__":
    main()
