"""The tuning and report slices, and the pooled summary of a report."""

from __future__ import annotations

from pathlib import Path

from retrac_local.contract.events import RunStatus
from retrac_local.eval.rows import EvalRow
from retrac_local.eval.slices import REPORT, TUNING, markdown, overlaps_report, pool


def row(
    qid: str,
    mode: str,
    f1: float,
    status: str = "answered",
    seconds: float = 10.0,
    stop_reason: str = "",
    rounds: int = 0,
    written: int = 0,
) -> EvalRow:
    return EvalRow(
        stop_reason=stop_reason,
        rounds=rounds,
        completion_tokens=written,
        id=qid,
        mode=mode,
        question="q?",
        answer="a",
        gold=["a"],
        em=f1,
        f1=f1,
        status=RunStatus(status),
        seconds=seconds,
    )


def test_the_slices_do_not_overlap_and_the_report_questions_are_named() -> None:
    for tune in TUNING:
        for report in REPORT:
            if tune.file == report.file:
                assert tune.offset + tune.limit <= report.offset
    assert overlaps_report("hotpotqa_dev.jsonl", 1000, 5) and overlaps_report("crossdata_dev.jsonl", 0, None)
    assert not overlaps_report("hotpotqa_dev.jsonl", 100, 900) and not overlaps_report(
        "crossdata_dev.jsonl", 0, 60
    )


def test_the_report_pools_both_slices_with_each_question_paired_to_itself(tmp_path: Path) -> None:
    (tmp_path / "hotpotqa").mkdir()
    (tmp_path / "crossdata").mkdir()
    (tmp_path / "hotpotqa" / "results.jsonl").write_text(
        "".join(
            r.line()
            for r in [row("1", "retrac", 1.0), row("1", "rag", 0.0), row("2", "retrac", 0.5, "unsure")]
        )
    )
    (tmp_path / "crossdata" / "results.jsonl").write_text(
        "".join(r.line() for r in [row("1", "retrac", 0.0), row("1", "rag", 1.0, seconds=2.0)])
    )
    summary = pool(tmp_path)
    hot, cross, pooled = (summary["slices"][k] for k in ("hotpotqa", "crossdata", "pooled"))
    assert hot["questions"] == 1  # question 2 has no RAG row yet: not compared
    assert hot["modes"]["retrac"]["answered_right"] == 1 and hot["modes"]["rag"]["answered"] == 1
    assert hot["paired"]["retrac-rag"]["f1_diff"] == 1.0 and cross["paired"]["retrac-rag"]["f1_diff"] == -1.0
    # the two datasets' question "1" are two questions, not one
    assert pooled["questions"] == 2 and pooled["paired"]["retrac-rag"]["f1_diff"] == 0.0
    assert pooled["modes"]["rag"]["median_seconds"] == 6.0 and pooled["runtimes"] == 1
    table = markdown(summary)
    assert "| pooled | retrac | 2 | 0.500 |" in table and "retrac-rag: F1 +0.000" in table


def test_the_report_splits_the_runs_that_ended_after_hop_0_from_those_that_researched(tmp_path: Path) -> None:
    (tmp_path / "crossdata").mkdir()
    rows = [
        row("1", "retrac", 1.0, seconds=12.0, stop_reason="first-reading", rounds=1, written=40),
        row("1", "rag", 1.0, seconds=6.0),
        row("2", "retrac", 0.5, "unsure", seconds=60.0, stop_reason="saturated", rounds=3, written=900),
        row("2", "rag", 0.0, seconds=6.0),
        row("3", "retrac", 0.0, seconds=90.0, stop_reason="budget-rounds", rounds=2, written=800),
        row("3", "rag", 1.0, seconds=8.0),
    ]
    (tmp_path / "crossdata" / "results.jsonl").write_text("".join(r.line() for r in rows))
    cross = pool(tmp_path)["slices"]["crossdata"]
    early, rest = cross["ends"]["after_hop0"], cross["ends"]["researched"]
    assert (early["n"], early["f1"], early["rag_f1"], early["answered_right"]) == (1, 1.0, 1.0, 1)
    assert (rest["n"], rest["f1"], rest["rag_f1"], rest["median_seconds"]) == (2, 0.25, 0.5, 75.0)
    assert early["share"] == round(1 / 3, 4)
    assert cross["seconds_ratio"] == 10.0  # 60 s against 6 s
    assert cross["modes"]["retrac"]["median_tokens_written_per_round"] == 300.0  # 40, 300, 400
    assert cross["modes"]["rag"]["median_tokens_written_per_round"] is None  # no round recorded
    table = markdown(pool(tmp_path))
    assert "1 of 3 ended after hop 0" in table and "10.0× RAG's" in table
