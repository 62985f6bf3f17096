"""The method's own figures (eval/method.py), on recorded runs: retention, drift, rejected facts,
compression health, cost by role and status calibration."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from retrac_local.agent.loop import ResearchAgent
from retrac_local.config import Settings
from retrac_local.contract.events import RunFinished
from retrac_local.corpus.fake import MemoryCorpus
from retrac_local.eval import method
from retrac_local.eval.harness import Evaluation, method_annotator, score
from retrac_local.eval.questions import EvalQuestion
from retrac_local.eval.rows import Call, EvalRow, MethodRecord, read_rows
from retrac_local.eval.summary import markdown, summarize
from retrac_local.llm.fake import ScriptedLLM
from retrac_local.runstore import RunStore
from tests.scripts import constraints, final, finish, update
from tests.test_eval import _result

Q = "In which year was the engineer who designed the Karn Point Lighthouse born?"


def _evidence(i: int, source: str, quote: str, verified: str = "yes") -> dict[str, Any]:
    return {
        "id": f"E{i}",
        "fact": quote,
        "source": source,
        "quote": quote,
        "verified": verified,
        "round": 1,
        "title": "",
    }


def _round(
    n: int,
    evidence: list[dict[str, Any]],
    attempts: list[list[str]] | None = None,
    failed: bool = False,
    rejected: tuple[str, ...] = (),
    repaired: tuple[str, ...] = (),
) -> dict[str, Any]:
    stats: dict[str, Any] = {"rejected": list(rejected), "compression_failed": failed}
    if attempts is not None:
        stats["compression_attempts"] = [{"problems": p} for p in attempts]
    return {
        "iteration": n,
        "state": {"evidence": evidence},
        "trajectory": {},
        "stats": stats,
        "diff": {"drift_repaired": list(repaired)},
    }


def test_retention_counts_facts_kept_or_merged_and_gold_evidence_that_reached_the_final_state() -> None:
    rounds = [
        _round(
            1,
            [
                _evidence(1, "d1#0", "Ada designed the lighthouse."),
                _evidence(2, "d2#0", "It stands on Karn Point."),
                _evidence(3, "d9#0", "an unchecked quote", verified="no"),
            ],
            attempts=[[]],
        ),
        # E1 merged into a longer quote of the same chunk, E2 dropped; the unverified item never counts
        _round(
            2,
            [
                _evidence(1, "d1#0", "Ada  designed the lighthouse. She was born in 1849."),
                _evidence(4, "d3#0", "Karn Point is in Cornwall."),
            ],
            attempts=[[]],
        ),
    ]
    record = method.record(rounds, gold_doc_ids=["d1", "d2", "d7"], retrieved_doc_ids=["d2", "d1", "d5"])
    assert record.verified_facts == 4  # E1 (twice: its quote grew), E2, E4
    assert record.kept_facts == 3  # only E2 is gone
    assert (record.gold_retrieved, record.gold_in_final) == (
        2,
        1,
    )  # d7 never retrieved; d2's evidence dropped
    assert record.rounds == 2 and record.compressions == 2


def test_drift_rejections_and_compression_health_are_counted_with_their_kinds() -> None:
    rounds = [
        _round(
            1,
            [],
            attempts=[["new_evidence 1: no sentence found in this round states 'x'"], []],
            rejected=("new_evidence 1: no sentence found in this round states 'x'",),
            repaired=("verified evidence E1 vanished; restored", "constraints changed; restored"),
        ),
        _round(
            2,
            [],
            attempts=[
                ["output stopped at the token limit before the StateUpdate JSON was complete"],
                ["output is not a valid StateUpdate: field required"],
            ],
            failed=True,
        ),
        {
            "iteration": 3,
            "state": {"evidence": []},
            "trajectory": {},
            "diff": {},
            "stats": {},
        },  # carried, not compressed
    ]
    record = method.record(rounds, [], [])
    assert record.drift_repairs == {"vanished": 1, "constraints": 1}
    assert record.rejected_facts == {"ungrounded": 1}
    assert (record.compressions, record.compression_retries, record.compressions_failed) == (2, 2, 1)
    assert (record.cut_at_max_tokens, record.invalid_json) == (1, 1)
    figures = method.aggregate([_row("answered", 1.0, method=record)])
    assert figures["drift_repairs_per_round"] == round(2 / 3, 4) and figures[
        "rejected_facts_per_round"
    ] == round(1 / 3, 4)
    assert figures["compression_retries_per_round"] == 1.0 and figures["compressions_failed"] == 1
    assert figures["retention"] is None  # nothing was verified: no share to speak of


def test_cost_by_role_splits_planner_compressor_and_final_answer() -> None:
    calls = [
        ("constraints", 100, 1.0),
        ("action", 300, 2.0),
        ("compress", 1500, 50.0),
        ("compress", 1600, 40.0),
        ("finalize", 600, 10.0),
    ]
    row = _row(
        "answered",
        1.0,
        calls=[Call(purpose=p, prompt_tokens=t, completion_tokens=10, seconds=s) for p, t, s in calls],
    )
    rag = _row(
        "answered", 0.0, calls=[Call(purpose="answer", prompt_tokens=700, completion_tokens=5, seconds=9.0)]
    )
    cost = method.cost_by_role([row, _row("answered", 1.0)])  # means over both questions
    assert cost == {
        "planner": {"prompt_tokens": 200.0, "completion_tokens": 10.0, "seconds": 1.5},
        "compressor": {"prompt_tokens": 1550.0, "completion_tokens": 10.0, "seconds": 45.0},
        "final": {"prompt_tokens": 300.0, "completion_tokens": 5.0, "seconds": 5.0},
    }
    assert method.cost_by_role([rag]) == {
        "final": {"prompt_tokens": 700.0, "completion_tokens": 5.0, "seconds": 9.0}
    }


def test_calibration_says_how_often_each_status_was_right() -> None:
    rows = [_row("answered", f) for f in (1.0, 0.8, 0.79, 0.5, 0.49, 0.0)] + [_row("unsure", 0.0)]
    assert method.calibration(rows) == {
        "answered": {"n": 6, "right": 2, "share_right": 0.3333, "interval": [0.0968, 0.7], "partly_right": 2},
        "unsure": {"n": 1, "right": 0, "share_right": 0.0, "interval": [0.0, 0.7935], "partly_right": 0},
    }


def test_the_wilson_interval_holds_the_share_and_narrows_with_more_questions() -> None:
    assert method.wilson(29, 48) == [0.4631, 0.7298]  # the first 100's *answered* after the check
    assert method.wilson(0, 30)[0] == 0.0 and method.wilson(30, 30)[1] == 1.0
    assert 0.0 < method.wilson(30, 30)[0] < 1.0  # 30 of 30 right does not promise every next one
    narrow, wide = method.wilson(60, 100), method.wilson(6, 10)
    assert wide[0] < narrow[0] < 0.6 < narrow[1] < wide[1]
    assert method.wilson(0, 0) == [0.0, 1.0]


def _row(
    status: str, f1: float, calls: list[Call] | None = None, method: MethodRecord | None = None
) -> EvalRow:
    return EvalRow(
        id="q",
        mode="retrac",
        question="q?",
        answer="a",
        gold=["a"],
        em=f1,
        f1=f1,
        seconds=1.0,
        status=status,
        calls=calls or [],
        method=method,
    )


QUESTION = EvalQuestion("q1", Q, ["1849"], ["ada-vellacott", "karn-point"], "bridge")


def _recorded_run(settings: Settings, orrin: MemoryCorpus) -> tuple[RunStore, dict[str, Any]]:
    """A real scripted run, stored as the loop stores it, and its evaluation row."""
    llm = ScriptedLLM().enqueue(
        constraints("Karn Point Lighthouse", "year"),
        finish("1849"),
        update(
            facts=[
                "Ada Vellacott designed the Karn Point Lighthouse",
                "Ada Vellacott was born on 3 May 1849",
                "Ada Vellacott won the Nobel Prize in 1901",
            ],
            answer="1849",
        ),
        final("1849", "E2"),
    )
    store = RunStore(settings.runs_db)
    events = list(ResearchAgent(llm, llm, orrin, settings, store).ask(Q))
    assert isinstance(events[-1], RunFinished)
    return store, score(QUESTION, "retrac", events[-1].result)


def test_a_stored_run_gives_its_figures_and_old_rows_gain_them(
    tmp_path: Path, settings: Settings, orrin: MemoryCorpus
) -> None:
    store, row = _recorded_run(settings, orrin)
    annotated = method_annotator(store)(QUESTION, row)
    figures = annotated.method
    assert figures is not None and row.method is None  # the row given is left as it was
    assert figures.rounds >= 1 and figures.compressions == figures.rounds
    assert figures.verified_facts == figures.kept_facts >= 2
    assert figures.rejected_facts == {"ungrounded": 1}  # the prize is in no sentence of the round
    assert figures.gold_retrieved >= 1 and figures.gold_in_final >= 1
    for other in (row.model_copy(update={"run_id": "gone"}), row.model_copy(update={"mode": "rag"})):
        assert method_annotator(store)(QUESTION, other) == other

    out = tmp_path / "eval"  # results written by an older harness, without the figures
    out.mkdir()
    rag = score(QUESTION, "rag", _result("1849", [500], ["ada-vellacott#0"]))
    (out / "results.jsonl").write_text(row.line() + rag.line())
    evaluation = Evaluation(out, {"x": 1})
    assert evaluation.annotate_missing([QUESTION], method_annotator(store)) == 1
    lines = (out / "results.jsonl").read_text().splitlines()
    stored = read_rows(lines)
    assert stored[0].method == figures and stored[1].method is None and "method" not in json.loads(lines[1])
    assert (
        Evaluation(out, {"x": 1}).annotate_missing([QUESTION], method_annotator(store)) == 0
    )  # nothing left to add

    summary = summarize(stored, ["retrac", "rag"])
    retrac = summary["modes"]["retrac"]
    assert retrac["retention"] == 1.0 and retrac["method_questions"] == 1 and retrac["invalid_json"] == 0
    assert retrac["calibration"] == {
        "answered": {"n": 1, "right": 1, "share_right": 1.0, "interval": [0.2065, 1.0], "partly_right": 0}
    }
    assert set(retrac["cost_by_role"]) == {"planner", "compressor", "final"}
    assert "method_questions" not in summary["modes"]["rag"]
    text = markdown(summary, "t")
    assert "| retrac | answered | 1 | 1 | 100% | 21%–100% | 0 |" in text and "| retrac | 1 | 100% of " in text


def test_the_model_split_gathers_one_row_per_assignment(tmp_path: Path) -> None:
    from retrac_local.eval import split

    rows = [score(QUESTION, "retrac", _result("1849", [500, 1500, 600], ["ada-vellacott#0"]))]
    rows[0].calls = [
        c.model_copy(update={"purpose": p})
        for c, p in zip(rows[0].calls, ["action", "compress", "finalize"], strict=True)
    ]
    for planner, compressor in (("large.gguf", "small.gguf"), ("small.gguf", "small.gguf")):
        folder = tmp_path / f"planner-{planner}-compressor-{compressor}"
        folder.mkdir()
        (folder / "eval.json").write_text(json.dumps({"planner": planner, "compressor": compressor}))
        (folder / "summary.json").write_text(json.dumps(summarize(rows, ["retrac"])))
    (tmp_path / "unfinished").mkdir()  # an assignment not run yet: left out
    split.main([str(tmp_path)])
    gathered = json.loads((tmp_path / "split.json").read_text())
    assert [(r["planner"], r["compressor"]) for r in gathered] == [
        ("large.gguf", "small.gguf"),
        ("small.gguf", "small.gguf"),
    ]
    assert gathered[0]["cost_by_role"]["compressor"]["prompt_tokens"] == 1500.0
    assert "| large.gguf | small.gguf | 1 | 1.000 | 1.000 |" in (tmp_path / "split.md").read_text()


def test_the_model_split_takes_an_assignment_from_another_evaluation_once(tmp_path: Path) -> None:
    from retrac_local.eval import split

    rows = [score(QUESTION, "retrac", _result("1849", [500, 1500, 600], ["ada-vellacott#0"]))]
    report = json.dumps(summarize(rows, ["retrac"]))

    def evaluation(folder: Path, planner: str, compressor: str, name: str) -> Path:
        folder.mkdir(parents=True)
        settings = {"planner": planner, "compressor": compressor, "code": {"retrac": f"v-{folder.name}"}}
        (folder / "eval.json").write_text(json.dumps(settings))
        (folder / f"{name}.json").write_text(report)
        return folder / f"{name}.json"

    out = tmp_path / "split"
    evaluation(out / "planner-large-compressor-small", "large.gguf", "small.gguf", "summary")
    standard = evaluation(tmp_path / "standard", "large.gguf", "large.gguf", "first-1")
    same = evaluation(tmp_path / "again", "large.gguf", "small.gguf", "first-1")  # a folder has it
    readme = tmp_path / "README.md"
    readme.write_text("# Figures\n<!-- split -->\nold\n<!-- /split -->\nafter\n")

    def results(folder: Path, code: str, f1s: dict[str, float]) -> None:
        lines = [rows[0].model_copy(update={"id": i, "f1": f1, "code": code}).line() for i, f1 in f1s.items()]
        (folder / "results.jsonl").write_text("".join(lines))

    # Paired on the questions both ran, each with its own code version's rows: q3 is the split's
    # alone, and the standard's row of another version (f1 0.0 for q1) is not its row.
    results(
        out / "planner-large-compressor-small",
        "v-planner-large-compressor-small",
        {"q1": 1.0, "q2": 0.5, "q3": 0.0},
    )
    results(tmp_path / "standard", "v-standard", {"q1": 0.5, "q2": 0.5})
    with (tmp_path / "standard" / "results.jsonl").open("a") as f:
        f.write(rows[0].model_copy(update={"id": "q1", "f1": 0.0, "code": "v-older"}).line())
    split.main([str(out), "--with", str(standard), "--with", str(same), "--readme", str(readme)])
    gathered = json.loads((out / "split.json").read_text())
    assert [r["reference"] for r in gathered] == [False, True]
    against = gathered[0]["f1_vs_reference"]
    assert (against["reference"], against["f1_diff"], against["n"]) == ("standard/first-1", 0.25, 2)
    assert (against["ci_low"], against["ci_high"]) == (0.0, 0.5)
    assert "f1_vs_reference" not in gathered[1]
    assert [(r["planner"], r["compressor"], r["code"], r["assignment"]) for r in gathered] == [
        ("large.gguf", "small.gguf", "v-planner-large-compressor-small", "planner-large-compressor-small"),
        ("large.gguf", "large.gguf", "v-standard", "standard/first-1"),
    ]
    table = (out / "split.md").read_text()
    assert "| 1.000 | reference |" in table and "| +0.250 [+0.000, +0.500] |" in table
    assert "| answered 1 | 1 of 1 | v-standard | standard/first-1 |" in table
    assert readme.read_text() == f"# Figures\n<!-- split -->\n{table.strip()}\n<!-- /split -->\nafter\n"
    with pytest.raises(SystemExit, match="no-such.json"):
        split.main([str(out), "--with", str(tmp_path / "no-such.json")])


def test_the_model_split_reads_a_reports_own_code_after_a_later_run_set_its_rows_aside(
    tmp_path: Path,
) -> None:
    """A later evaluation in the reference's folder (more questions, newer code) rewrites its
    eval.json and moves the report's rows to results.retrac-VERSION.jsonl: the reference row is still
    the report's own code, paired on the report's own rows."""
    from retrac_local.eval import split

    base = score(QUESTION, "retrac", _result("1849", [500, 1500, 600], ["ada-vellacott#0"]))

    def rows(code: str, f1s: dict[str, float]) -> list[EvalRow]:
        return [base.model_copy(update={"id": i, "f1": f1, "code": code}) for i, f1 in f1s.items()]

    standard = tmp_path / "standard"
    standard.mkdir()
    mine = rows("v-report", {"q1": 0.5, "q2": 0.5})
    (standard / "first-2.json").write_text(json.dumps(summarize(mine, ["retrac"])))
    (standard / "results.retrac-v-report.jsonl").write_text("".join(r.line() for r in mine))
    later = rows("v-later", {"q1": 0.0, "q2": 0.0, "q3": 1.0})
    (standard / "results.jsonl").write_text("".join(r.line() for r in later))
    config = {"planner": "large.gguf", "compressor": "large.gguf", "code": {"retrac": "v-later"}}
    (standard / "eval.json").write_text(json.dumps(config))

    out = tmp_path / "split" / "planner-large-compressor-small"
    out.mkdir(parents=True)
    theirs = rows("v-split", {"q1": 1.0, "q2": 0.5})
    (out / "summary.json").write_text(json.dumps(summarize(theirs, ["retrac"])))
    (out / "results.jsonl").write_text("".join(r.line() for r in theirs))
    settings = {"planner": "large.gguf", "compressor": "small.gguf", "code": {"retrac": "v-split"}}
    (out / "eval.json").write_text(json.dumps(settings))

    split.main([str(out.parent), "--with", str(standard / "first-2.json")])
    gathered = json.loads((out.parent / "split.json").read_text())
    assert [r["code"] for r in gathered] == ["v-split", "v-report"]
    against = gathered[0]["f1_vs_reference"]
    assert (against["f1_diff"], against["n"]) == (0.25, 2)  # against v-later's rows it would be +0.75
