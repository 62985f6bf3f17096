"""The tuning and report slices, and the pooled summary of a report."""

from __future__ import annotations

from pathlib import Path

from retrac_local.contract.events import RunStatus
from retrac_local.eval.rows import EvalRow
from retrac_local.eval.slices import REPORT, TUNING, markdown, overlaps_report, pool


def row(qid: str, mode: str, f1: float, status: str = "answered", seconds: float = 10.0) -> EvalRow:
    return EvalRow(
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
