"""The final answer alone, replayed: each Re-TRAC run of an evaluation is answered again from its
last stored state with the current code and settings, and scored beside the answer it gave. A paired
measure of a change to the final answer (its prompt, what it reads) in minutes, without re-running
the rounds.

    RETRAC_HOME=… python -m retrac_local.eval.replay DIR/results.jsonl OUT.jsonl [--limit N]

The runs come from $RETRAC_HOME's run store, which is never changed: the replay answers into a copy.
OUT.jsonl gets one line per run (written as each ends; a second sitting continues) and the summary
is printed: mean F1 before and after, and the paired difference with a 95% bootstrap interval.

    python -m retrac_local.eval.replay DIR/results.jsonl OUT.jsonl --agree

answers each *answered* row's question again from its cited quotes alone, as the agreement check of
a run does (`budget.answer_samples`, its default 4 samples), keeps the answers in OUT.jsonl, and
prints the calibration the check would give at several thresholds (`budget.answer_agreement`).
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import tempfile
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING, Any

from retrac_local.eval.rows import EvalRow, read_rows
from retrac_local.eval.scoring import best
from retrac_local.eval.summary import difference

if TYPE_CHECKING:
    from retrac_local.api import Retrac
    from retrac_local.llm.base import LLM

AGREEMENTS = (0.2, 0.4, 0.6, 0.8, 1.0)  # thresholds --agree reports: the share of the tries giving the answer


def _retrac_rows(results: Path, limit: int | None) -> list[EvalRow]:
    rows = read_rows(results.read_text().splitlines(), str(results))
    return [r for r in rows if r.mode == "retrac"][:limit]


def _done(out: Path, key: str) -> dict[str, dict[str, Any]]:
    """The lines an earlier sitting wrote to OUT, by `key`: those rows are not asked again."""
    if not out.exists():
        return {}
    return {r[key]: r for r in map(json.loads, out.read_text().splitlines())}


def replay(
    results: Path, out: Path, limit: int | None = None, app: Retrac | None = None
) -> list[dict[str, Any]]:
    """`app` holds the models and stores (by default, from the settings)."""
    from retrac_local.agent.loop import ResearchAgent
    from retrac_local.api import Retrac
    from retrac_local.corpus.embedder import relevance_by
    from retrac_local.runstore import RunStore

    rows = _retrac_rows(results, limit)
    done = _done(out, "run_id")
    app = app or Retrac()
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / "runs.sqlite"
        with (
            closing(sqlite3.connect(app.settings.runs_db)) as source,
            closing(sqlite3.connect(copy)) as target,
        ):
            source.backup(target)  # with what the write-ahead log holds, unlike a file copy
        planner, compressor = app.llms()
        agent = ResearchAgent(
            planner,
            compressor,
            app.corpus,
            app.settings,
            RunStore(copy),
            relevance=relevance_by(app.corpus.embedder),
        )
        with open(out, "a", encoding="utf-8") as f:
            for row in rows:
                if row.run_id is None or row.run_id in done:
                    continue
                result = agent.answer_again(row.run_id)
                em, f1 = best(result.answer, row.gold)
                line = {
                    "run_id": row.run_id,
                    "question": row.question,
                    "gold": row.gold,
                    "before": row.answer,
                    "before_f1": row.f1,
                    "before_status": str(row.status),
                    "after": result.answer,
                    "after_f1": round(f1, 4),
                    "after_em": em,
                    "after_status": str(result.status),
                    "seconds": round(result.calls[-1]["seconds"], 2) if result.calls else 0.0,
                }
                done[row.run_id] = line
                f.write(json.dumps(line, ensure_ascii=False) + "\n")
                f.flush()
                print(
                    f"{line['before_f1']:.2f} → {line['after_f1']:.2f}  {line['before']!r} → {line['after']!r} "
                    f"(gold {row.gold[0]!r})",
                    flush=True,
                )
    return [done[r.run_id] for r in rows if r.run_id in done]


def agree(
    results: Path, out: Path, limit: int | None = None, app: Retrac | None = None, samples: int = 4
) -> list[dict[str, Any]]:
    """The question answered again from each answered Re-TRAC row's cited quotes alone (`--agree`):
    the answers are kept, so that any agreement threshold can be read from them afterwards."""
    from retrac_local.agent import answercheck
    from retrac_local.agent.question import parse

    def judge(planner: LLM, system: str, row: EvalRow) -> dict[str, Any]:
        again: list[str] = []
        if str(row.status) == "answered" and row.answer:
            again = answercheck.reanswers(
                planner, system, row.question, row.answer, row.citations, parse(row.question).options, samples
            )
        return {"again": again, "agreement": answercheck.agreement(row.answer or "", again)}

    return _each_row(results, out, limit, app, judge, lambda line: f"{line['agreement']} {line['again']}")


def _each_row(
    results: Path,
    out: Path,
    limit: int | None,
    app: Retrac | None,
    judge: Callable[[LLM, str, EvalRow], dict[str, Any]],
    show: Callable[[dict[str, Any]], str],
) -> list[dict[str, Any]]:
    """Each Re-TRAC row of `results` put to `judge(planner, system prompt, row)`, one line a row in
    `out` (written as each ends; the rows an earlier sitting wrote are not asked again)."""
    from retrac_local.agent import prompts
    from retrac_local.agent.toolbox import Toolbox
    from retrac_local.api import Retrac

    rows = _retrac_rows(results, limit)
    done = _done(out, "id")
    app = app or Retrac()
    planner, _ = app.llms()
    system = prompts.render("planner_system", tools=Toolbox(app.corpus, app.settings).descriptions())
    with open(out, "a", encoding="utf-8") as f:
        for row in rows:
            if row.id in done:
                continue
            line = {
                "id": row.id,
                "question": row.question,
                "gold": row.gold,
                "answer": row.answer,
                "f1": row.f1,
                "status": str(row.status),
                **judge(planner, system, row),
            }
            done[row.id] = line
            f.write(json.dumps(line, ensure_ascii=False) + "\n")
            f.flush()
            print(f"{show(line)} F1 {row.f1:.2f}  {row.answer!r} (gold {row.gold[0]!r})", flush=True)
    return [done[r.id] for r in rows if r.id in done]


def agree_summary(lines: list[dict[str, Any]], needed: float) -> str:
    """Answered and right before and after the agreement check at `needed`, and what it made unsure
    (the run's own rule: `answercheck.doubt`)."""
    from retrac_local.agent.answercheck import doubt

    return _demoted(lines, lambda r: doubt(r["answer"] or "", r["again"], needed) is not None, "unsure")


def _demoted(lines: list[dict[str, Any]], demoted: Callable[[dict[str, Any]], bool], word: str) -> str:
    from retrac_local.eval.method import RIGHT_F1, wilson

    answered = [r for r in lines if r["status"] == "answered"]
    kept = [r for r in answered if not demoted(r)]
    dropped = [r for r in answered if demoted(r)]

    def right(rs: list[dict[str, Any]]) -> str:
        k = sum(r["f1"] >= RIGHT_F1 for r in rs)
        lo, hi = wilson(k, len(rs))
        return f"{k} right, 95% {lo:.0%}–{hi:.0%}" if rs else "0 right"

    return (
        f"n {len(lines)}: answered {len(answered)} ({right(answered)}) → {len(kept)} "
        f"({right(kept)}); {word} {len(dropped)} ({sum(r['f1'] >= RIGHT_F1 for r in dropped)} of them right)"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path, help="an evaluation's results.jsonl")
    parser.add_argument("out", type=Path, help="where the replayed answers go (JSON Lines)")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument(
        "--agree", action="store_true", help="answer again from each answered row's cited quotes alone"
    )
    args = parser.parse_args(argv)
    if args.agree:
        agreed = agree(args.results, args.out, args.limit)
        if not agreed:
            raise SystemExit(f"no Re-TRAC row in {args.results}")
        for needed in AGREEMENTS:
            print(f"agreement >= {needed:.1f}: {agree_summary(agreed, needed)}")
        return
    lines = replay(args.results, args.out, args.limit)
    if not lines:
        raise SystemExit(f"no Re-TRAC run of {args.results} is in this store")
    before = [r["before_f1"] for r in lines]
    after = [r["after_f1"] for r in lines]
    diff = difference(
        {r["run_id"]: r["after_f1"] for r in lines}, {r["run_id"]: r["before_f1"] for r in lines}
    )
    print(
        f"n {len(lines)}: F1 {sum(before) / len(lines):.3f} → {sum(after) / len(lines):.3f}, paired "
        f"{diff['f1_diff']:+.3f} [{diff['ci_low']:+.3f}, {diff['ci_high']:+.3f}]"
    )


if __name__ == "__main__":
    main()
