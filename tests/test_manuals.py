"""The manuals question set (corpora/manuals/questions.jsonl) and its pooled summary."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from retrac_local.eval.manuals import HALVES, NOT_IN_MANUALS, QUESTIONS, said_not_found, summarize
from retrac_local.eval.questions import load_questions
from retrac_local.eval.rows import EvalRow
from tests.test_slices import row as slice_row

ROOT = Path(__file__).resolve().parent.parent


def test_the_question_set_is_as_its_readme_says() -> None:
    lines = [json.loads(line) for line in (ROOT / QUESTIONS).read_text(encoding="utf-8").splitlines()]
    assert len(load_questions(ROOT / QUESTIONS)) == len(lines) == 60  # every line parses as a question
    assert len({q["id"] for q in lines}) == 60 and len({q["question"] for q in lines}) == 60
    kinds = Counter(q["type"] for q in lines)
    assert kinds["two-hop"] * 3 >= 60 and kinds[NOT_IN_MANUALS] >= 6
    assert Counter(q["manual"] for q in lines) == {"valgrind": 20, "sqlite": 20, "git": 20}
    for half in HALVES:
        part = lines[half.offset : half.offset + half.limit]
        assert {q["half"] for q in part} == {half.name}
        assert Counter(q["manual"] for q in part) == {"valgrind": 10, "sqlite": 10, "git": 10}
        assert sum(q["type"] == NOT_IN_MANUALS for q in part) == 3
    assert all(q["answers"] == ["not found"] for q in lines if q["type"] == NOT_IN_MANUALS)


def row(
    qid: str, mode: str, f1: float, kind: str = "lookup", status: str = "answered", caveat=None
) -> EvalRow:
    return slice_row(qid, mode, f1, status).model_copy(update={"type": kind, "caveat": caveat})


def test_the_summary_pairs_the_answerable_and_counts_the_others_apart(tmp_path: Path) -> None:
    rows = {
        "tuning": [
            row("t1", "retrac", 1.0),
            row("t1", "rag", 0.0),
            row("t2", "retrac", 0.0, NOT_IN_MANUALS, "unsure", "not found in the collection: …"),
            row("t2", "rag", 0.0, NOT_IN_MANUALS),
        ],
        "report": [row("r1", "retrac", 0.5), row("r1", "rag", 0.5)],
    }
    for name, found in rows.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "results.jsonl").write_text(
            "".join(r.model_dump_json() + "\n" for r in found), encoding="utf-8"
        )
    summary = summarize(tmp_path)
    tuning = summary["slices"]["tuning"]
    assert tuning["questions"] == 1 and tuning["modes"]["retrac"]["f1"] == 1.0  # t2 is not averaged in
    assert tuning["paired"]["retrac-rag"]["f1_diff"] == 1.0
    assert summary["not_in_manuals"]["tuning"] == {
        "retrac": {"n": 1, "answered": 0, "said_not_found": 1},
        "rag": {"n": 1, "answered": 1, "said_not_found": 0},
    }
    assert summary["slices"]["report"]["paired"]["retrac-rag"]["f1_diff"] == 0.0
    assert said_not_found(row("x", "rag", 0.0, caveat=None).model_copy(update={"answer": "Not stated"}))
