"""Unanswerable questions: a copy of the collection without the gold documents (the original
untouched), and the figures that say whether a mode admitted it found nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from retrac_local.cli.main import cli
from retrac_local.errors import RetracError
from retrac_local.eval.hidden import MARKER, hidden_home, honesty, says_not_found
from retrac_local.eval.questions import EvalQuestion
from retrac_local.eval.rows import EvalRow, lines
from retrac_local.eval.summary import markdown, summarize
from tests.test_ingest import ingest, make_store

TEXTS = {
    "karn": "Karn Point Lighthouse was designed by Ada Vellacott.",
    "ada": "Ada Vellacott was born in 1849.",
    "gull": "The Gull Line was founded in 1903 by Tomas Irvane.",
    "tessel": "The Tessel Bridge opened in 1894.",
}
QUESTIONS = [
    EvalQuestion("q1", "When was the designer of Karn Point Lighthouse born?", ["1849"], ["karn", "ada"]),
    EvalQuestion("q2", "Who founded the Gull Line?", ["Tomas Irvane"], ["gull"]),
]


def _collection(home: Path, tmp_path: Path) -> None:
    records = tmp_path / "records.jsonl"
    records.write_text(
        "".join(json.dumps({"doc_id": d, "title": d, "text": t}) + "\n" for d, t in TEXTS.items())
    )
    ingest(home, records)


def _remove(home: Path, doc_ids: list[str]) -> None:
    store = make_store(home)
    store.delete_documents(doc_ids)
    store.finish_writes()


def test_the_gold_documents_are_hidden_in_a_copy_and_the_original_keeps_them(
    isolated_home: Path, tmp_path: Path
) -> None:
    _collection(isolated_home, tmp_path)
    removed: list[list[str]] = []

    def remove(home: Path, doc_ids: list[str]) -> None:
        removed.append(doc_ids)
        _remove(home, doc_ids)

    hidden = hidden_home(isolated_home, QUESTIONS, remove)
    assert removed == [["ada", "gull", "karn"]] and hidden.parent == isolated_home / "unanswerable"
    assert json.loads((hidden / MARKER).read_text())["hidden_doc_ids"] == ["ada", "gull", "karn"]
    assert make_store(isolated_home).count() == (4, 4)  # the original collection is untouched
    copy = make_store(hidden)
    assert copy.count() == (1, 1)
    assert {h.chunk.doc_id for h in copy.search("Ada Vellacott Gull Line founded", k=4)} == {"tessel"}
    assert hidden_home(isolated_home, QUESTIONS, remove) == hidden and len(removed) == 1  # made once, reused


def test_a_copy_cut_off_half_made_is_made_again(isolated_home: Path, tmp_path: Path) -> None:
    _collection(isolated_home, tmp_path)

    def dies(home: Path, doc_ids: list[str]) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        hidden_home(isolated_home, QUESTIONS, dies)
    assert not any((isolated_home / "unanswerable").glob("*/" + MARKER))
    hidden = hidden_home(isolated_home, QUESTIONS, _remove)
    assert make_store(hidden).count() == (1, 1)
    assert [p.name for p in (isolated_home / "unanswerable").iterdir()] == [
        hidden.name
    ]  # the partial copy is gone


def test_questions_without_gold_documents_cannot_be_made_unanswerable(tmp_path: Path) -> None:
    with pytest.raises(RetracError, match="supporting_doc_ids"):
        hidden_home(tmp_path, [EvalQuestion("q", "q?", ["a"])], _remove)
    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps({"id": "q", "question": "q?", "answers": ["a"]}) + "\n")
    result = CliRunner().invoke(
        cli, ["eval", "--questions", str(questions), "--out", str(tmp_path / "o"), "--unanswerable"]
    )
    assert (
        result.exit_code != 0 and "supporting_doc_ids" in result.output and "Traceback" not in result.output
    )


def test_honesty_counts_confident_answers_and_admissions() -> None:
    said = [
        ("answered", "1849", None),
        (
            "unsure",
            "1849",
            "not found: no verified evidence states this answer; it is the best guess from what was read",
        ),
        ("answered", "The collection does not mention his birth year.", None),
        ("unsure", "Ada Vellacott", "the answer is a person"),
    ]
    rows = [
        EvalRow(
            id=str(i),
            mode="retrac",
            question="q?",
            gold=["1849"],
            em=0.0,
            f1=0.0,
            seconds=1.0,
            status=status,
            answer=answer,
            caveat=caveat,
        )
        for i, (status, answer, caveat) in enumerate(said)
    ]
    assert [says_not_found(r) for r in rows] == [False, True, True, False]
    assert honesty(rows) == {"confidently_answered": 0.25, "said_not_found": 0.5}
    scored = rows
    summary = summarize(scored, ["retrac"], unanswerable=True)
    assert summary["unanswerable"] is True and summary["modes"]["retrac"]["confidently_answered"] == 0.25
    assert "| retrac | 25% | 50% |" in markdown(summary, "t")
    assert "confidently_answered" not in summarize(scored, ["retrac"])["modes"]["retrac"]


def test_the_report_of_an_unanswerable_run_needs_no_collection_and_makes_no_copy(
    isolated_home: Path, tmp_path: Path
) -> None:
    """A clean checkout redraws the committed figures (`make readme-tables`) without the collection."""
    questions = tmp_path / "q.jsonl"
    questions.write_text(
        "".join(
            json.dumps(
                {
                    "id": q.id,
                    "question": q.question,
                    "answers": q.answers,
                    "supporting_doc_ids": q.supporting_doc_ids,
                }
            )
            + "\n"
            for q in QUESTIONS
        )
    )
    out = tmp_path / "o"
    out.mkdir()
    said = [("q1", "unsure", "1849"), ("q2", "answered", "Tomas Irvane")]
    (out / "results.jsonl").write_text(
        lines(
            EvalRow(
                id=i,
                mode="retrac",
                question="q?",
                gold=["x"],
                em=0.0,
                f1=0.0,
                seconds=1.0,
                prompt_tokens=900,
                peak_prompt_tokens=900,
                status=s,
                answer=a,
            )
            for i, s, a in said
        )
    )
    result = CliRunner().invoke(
        cli,
        ["eval", "--questions", str(questions), "--out", str(out), "--unanswerable", "--report-only"]
        + ["--mode", "retrac", "--report-name", "hidden-2"],
    )
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "hidden-2.json").read_text())
    assert summary["unanswerable"] is True and summary["modes"]["retrac"]["confidently_answered"] == 0.5
    assert not (isolated_home / "unanswerable").exists()
