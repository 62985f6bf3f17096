"""`eval.replay`: a finished run answered again from its last state, into a copy of the run store."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from retrac_local.api import Retrac
from retrac_local.config import Settings
from retrac_local.corpus.embedder import HashingEmbedder
from retrac_local.eval.harness import score
from retrac_local.eval.questions import EvalQuestion
from retrac_local.eval.replay import agree, agree_summary, replay
from retrac_local.eval.rows import EvalRow
from retrac_local.llm.fake import ScriptedLLM
from tests import kill_target
from tests.conftest import DEMO_DOCS

QUESTION = "In which year was the engineer who designed the Karn Point Lighthouse born?"


class Counting(kill_target.Deterministic):
    """The kill tests' stand-in model; counts its calls and gives the final answer it is told to."""

    def __init__(self) -> None:
        self.calls, self.final = 0, "1849"

    def generate(self, messages: Any, **kwargs: Any) -> Any:
        self.calls += 1
        return super().generate(messages, **kwargs)

    def _reply(self, messages: Any, schema: str) -> dict[str, Any]:
        return (
            {"answer": self.final, "evidence_ids": []}
            if schema == "FinalAnswer"
            else super()._reply(messages, schema)
        )


def test_a_replay_answers_into_a_copy_and_continues_where_it_stopped(
    isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(kill_target, "CALL_SECONDS", 0.0)
    model = Counting()
    app = _app(isolated_home, model)
    app.ingest([DEMO_DOCS])
    model.final = "1856"  # the answer the evaluation recorded: wrong
    result = [e for e in app.ask(QUESTION)][-1].result  # type: ignore[union-attr]
    stored = app.runs.run(result.run_id)["result"]
    results = tmp_path / "results.jsonl"
    row = score(EvalQuestion("q1", QUESTION, ["1849"]), "retrac", result)  # F1 0: the recorded answer
    rag = row.model_copy(update={"mode": "rag", "run_id": "rag-1"})
    results.write_text(row.line() + rag.line())

    model.final = "1849"  # the changed final answer
    out = tmp_path / "replayed.jsonl"
    lines = replay(results, out, app=app)
    assert [(r["before"], r["after"], r["after_f1"]) for r in lines] == [("1856", "1849", 1.0)]
    assert app.runs.run(result.run_id)["result"] == stored  # the evaluation's store is not changed
    calls = model.calls
    assert (
        replay(results, out, app=app) == lines and model.calls == calls
    )  # done lines are not answered again
    assert len(out.read_text().splitlines()) == 1


def _app(home: Path, model: Any) -> Retrac:
    """The app of a replay: `model` in both roles, hashing embeddings, no memory."""
    settings = Settings(home=home, retrieval={"embedder": "hashing"}, memory={"enabled": False})
    return Retrac(settings, planner=model, compressor=model, embedder=HashingEmbedder())


def _row(qid: str, answer: str, f1: float, status: str) -> str:
    return EvalRow.model_validate(
        {
            "id": qid,
            "mode": "retrac",
            "question": f"Who wrote {qid}?",
            "gold": ["Ada Vellacott"],
            "answer": answer,
            "status": status,
            "em": float(f1 == 1.0),
            "f1": f1,
            "seconds": 1.0,
            "citations": [
                {
                    "evidence_id": "E1",
                    "doc_id": qid,
                    "chunk_id": f"{qid}-0",
                    "title": qid,
                    "source": "doc",
                    "quote": f"{answer} wrote it",
                    "verified": "exact",
                }
            ],
        }
    ).line()


def test_the_agreement_replay_keeps_the_answers_given_again_and_reads_any_threshold_from_them(
    isolated_home: Path, tmp_path: Path
) -> None:
    results = tmp_path / "results.jsonl"
    results.write_text(
        _row("a", "Ada Vellacott", 1.0, "answered")
        + _row("b", "Jonas Pell", 0.0, "answered")
        + _row("c", "Orrin", 0.0, "unsure")
    )
    model = ScriptedLLM().enqueue(
        {"answer": "Ada Vellacott"},
        {"answer": "Ada Vellacott"},
        {"answer": "not stated"},
        {"answer": "not stated"},
        {"answer": "Jonas Pell"},
        {"answer": "not stated"},
    )
    app = _app(isolated_home, model)
    out = tmp_path / "agreed.jsonl"
    lines = agree(results, out, app=app, samples=2)
    assert [r["again"] for r in lines] == [
        ["Ada Vellacott", "Ada Vellacott", "not stated"],
        ["not stated", "Jonas Pell", "not stated"],
        [],  # an unsure row is never asked
    ]
    assert [r["agreement"] for r in lines] == [pytest.approx(2 / 3), pytest.approx(1 / 3), None]
    assert '"Jonas Pell wrote it"' in model.calls[3].messages[-1]["content"]
    assert agree_summary(lines, 0.6) == (
        "n 3: answered 2 (1 right, 95% 9%–91%) → 1 (1 right, 95% 21%–100%); unsure 1 (0 of them right)"
    )
    assert agree_summary(lines, 0.2) == (
        "n 3: answered 2 (1 right, 95% 9%–91%) → 2 (1 right, 95% 9%–91%); unsure 0 (0 of them right)"
    )
    assert agree(results, out, app=app) == lines and len(model.calls) == 6  # done rows are not asked again
