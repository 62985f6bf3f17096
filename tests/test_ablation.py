"""The rules' ablation table, from synthetic rows and replays."""

from __future__ import annotations

from pathlib import Path

from retrac_local.contract.events import RunStatus
from retrac_local.eval.ablation import fired_on, markdown, retrac_rows, row_of
from retrac_local.eval.rows import EvalRow
from retrac_local.rules.catalogue import BY_NAME


def row(i: int, fired: list[str] | None, mode: str = "retrac") -> EvalRow:
    return EvalRow(
        id=f"q{i}",
        mode=mode,
        question=f"question {i}?",
        answer="x",
        gold=["x"],
        em=1.0,
        f1=1.0,
        status=RunStatus.ANSWERED,
        seconds=1.0,
        run_id=f"run{i}",
        code="abc",
        rules_fired=fired,
    )


def replayed(
    i: int, before: float, after: float, before_status: str = "answered", after_status: str = "answered"
) -> dict:
    return {
        "run_id": f"run{i}",
        "before_f1": before,
        "after_f1": after,
        "before_status": before_status,
        "after_status": after_status,
        "before": "x",
        "after": "y",
    }


def test_only_rows_that_record_their_rules_are_ablated(tmp_path: Path) -> None:
    results = tmp_path / "results.jsonl"
    results.write_text(
        "".join(r.line() for r in [row(1, ["answer.shorten"]), row(2, None), row(3, [], "rag")])
    )
    rows = retrac_rows([results])
    assert [r.id for r in rows] == ["q1"]
    assert (
        fired_on(rows, BY_NAME["answer.shorten"]) == rows
        and fired_on(rows, BY_NAME["status.wrong_kind"]) == []
    )


def test_each_kind_of_rule_gets_the_judgement_its_stage_allows() -> None:
    rows = [row(i, ["answer.shorten", "compress.anchor"]) for i in range(4)]
    never = row_of(BY_NAME["status.wrong_kind"], [], 4, None)
    assert never["verdict"].startswith("never fired")
    rounds = row_of(BY_NAME["compress.anchor"], rows, 4, None)
    assert "run again" in rounds["verdict"] and "f1_off_minus_on" not in rounds
    costs = row_of(BY_NAME["answer.shorten"], rows, 4, [replayed(i, 0.5, 1.0) for i in range(4)])
    assert costs["f1_off_minus_on"] == 0.5 and costs["verdict"] == "costs"  # off is better: the rule costs
    lets_right_through = row_of(
        BY_NAME["status.agreement"], rows, 4, [replayed(i, 1.0, 1.0, "answered", "unsure") for i in range(4)]
    )
    assert lets_right_through["right_on"] == 4 and lets_right_through["right_off"] == 0
    assert lets_right_through["verdict"] == "pays"  # off, 4 right answers would not be *answered*
    holds_right_back = row_of(
        BY_NAME["status.agreement"], rows, 4, [replayed(i, 1.0, 1.0, "unsure", "answered") for i in range(4)]
    )
    assert holds_right_back["verdict"] == "costs"  # on, it kept 4 right answers from being *answered*
    holds_wrong_back = row_of(
        BY_NAME["status.agreement"],
        rows,
        4,
        [replayed(0, 1.0, 1.0, "unsure", "answered")]
        + [replayed(i, 0.0, 0.0, "unsure", "answered") for i in range(1, 4)],
    )
    assert (holds_wrong_back["wrong_on"], holds_wrong_back["wrong_off"]) == (0, 3)
    assert holds_wrong_back["verdict"] == "pays"  # 3 wrong kept back for 1 right
    even = row_of(BY_NAME["answer.shorten"], rows, 4, [replayed(i, 1.0, 1.0) for i in range(4)])
    assert even["verdict"] == "no measurable effect"
    partly = row_of(BY_NAME["answer.shorten"], rows, 4, [replayed(0, 1.0, 1.0)])
    table = markdown([never, rounds, costs, partly], "4 runs", {"n": 4, "same": 4, "same_status": 4})
    assert "| 4 of 4 (1 compared) |" in table
    assert "| `answer.shorten` | answer | 4 of 4 | +0.500" in table and "4 of 4 runs" in table


def test_a_question_run_again_with_a_rule_off_is_paired_with_its_full_run(tmp_path: Path) -> None:
    from retrac_local.eval.ablation import _paired

    full = [row(1, ["compress.anchor"]), row(2, ["compress.anchor"])]
    again = row(1, []).model_copy(update={"answer": "y", "f1": 0.0, "status": RunStatus.UNSURE})
    rerun = tmp_path / "results.jsonl"
    rerun.write_text(again.line())
    lines = _paired(full, rerun)
    assert lines == [
        {
            "run_id": "q1",
            "before": "x",
            "before_f1": 1.0,
            "before_status": "answered",
            "after": "y",
            "after_f1": 0.0,
            "after_status": "unsure",
        }
    ]
    judged = row_of(BY_NAME["compress.anchor"], full, 2, lines)
    assert judged["right_on"] == 1 and judged["right_off"] == 0 and judged["verdict"] == "pays"


def test_an_ablation_run_never_continues_a_full_one(isolated_home: Path, tmp_path: Path) -> None:
    from retrac_local.api import Retrac
    from retrac_local.config import Settings
    from retrac_local.eval.harness import fingerprint

    questions = tmp_path / "q.jsonl"
    questions.write_text('{"id": "1", "question": "q?", "answers": ["a"]}\n')
    plain = fingerprint(Retrac(Settings(home=isolated_home)), questions, 5)
    assert "rules_disabled" not in plain  # the evaluations recorded before the catalogue still match
    off = fingerprint(
        Retrac(Settings(home=isolated_home, rules={"disabled": ["answer.shorten"]})), questions, 5
    )
    assert off["rules_disabled"] == ["answer.shorten"]
