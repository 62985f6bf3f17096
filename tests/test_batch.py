"""`retrac batch`: questions as Ray tasks on a local Ray, with the deterministic stand-in for the
models (tests/batch_target.py); results written as each question ends, resumed after a killed
driver, a failing question recorded as failed while the rest finish, and every run in the local run
store through the driver."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from retrac_local.api import Retrac
from retrac_local.batch.driver import Batch
from retrac_local.batch.questions import load_batch_questions
from retrac_local.batch.results import ResultsFile, failed_line
from retrac_local.batch.transfer import read_run
from retrac_local.batch.worker import BatchWorker
from retrac_local.config import Settings
from retrac_local.contract.events import RunStatus
from retrac_local.corpus.embedder import HashingEmbedder
from retrac_local.errors import RetracError
from retrac_local.llm.fake import ScriptedLLM
from retrac_local.runstore import RunStore
from tests.batch_target import ROOT, ScriptedApp
from tests.conftest import DEMO_DOCS
from tests.scripts import constraints, final, finish, update

KEYS = {"id", "question", "run_id", "status", "answer", "citations", "seconds"}


def write_questions(path: Path, questions: dict[str, str]) -> Path:
    path.write_text(
        "".join(
            json.dumps({"id": i, "question": q, "answers": ["ignored"]}) + "\n" for i, q in questions.items()
        )
    )
    return path


@pytest.fixture
def home(settings: Settings) -> Settings:
    Retrac(settings, embedder=HashingEmbedder()).ingest([DEMO_DOCS])
    return settings


# -- the parts, in-process -----------------------------------------------------------------------


def test_a_question_runs_in_the_workers_own_store_and_moves_whole_to_the_local_one(
    home: Settings, tmp_path: Path
) -> None:
    llm = ScriptedLLM().enqueue(
        constraints(),
        finish("Ada Vellacott"),
        update(facts=["The tower was designed by the civil engineer Ada Vellacott"], answer="Ada Vellacott"),
        final("Ada Vellacott", "E1"),
    )
    worker = BatchWorker(lambda: Retrac(home, planner=llm, compressor=llm, embedder=HashingEmbedder()))
    outcome = worker.run("k1", "Who designed the Karn Point Lighthouse?")
    assert outcome.error is None and outcome.record is not None
    assert RunStore(home.runs_db).list_runs() == []  # the worker never wrote the user's store
    assert list(worker.scratch.iterdir()) == []  # nor kept its own copy once the run was read back
    assert len(outcome.record.remembered) == 1  # an answered run: its state is handed to the driver

    local = Retrac(home, embedder=HashingEmbedder())
    batch = Batch(tmp_path / "out", local.runs, local.memory, lambda: local)
    line = batch._write(outcome)
    assert (
        set(json.loads(line.text())) == KEYS and line.status == "answered" and line.answer == "Ada Vellacott"
    )
    assert line.run_id is not None
    moved = read_run(local.runs, line.run_id)
    original = outcome.record
    assert moved.run["result"]["run_id"] == line.run_id != original.run["run_id"]
    assert {k: v for k, v in moved.run["result"].items() if k != "run_id"} == {
        k: v for k, v in original.run["result"].items() if k != "run_id"
    }
    strip = [{k: v for k, v in r.items() if k != "created"} for r in original.rounds]
    assert [{k: v for k, v in r.items() if k != "created"} for r in moved.rounds] == strip
    assert moved.calls == original.calls  # same order, rounds and seqs
    recalled = local.memory.recall("Who designed the Karn Point Lighthouse?")
    assert [r.run_id for r in recalled] == [line.run_id]  # the driver wrote the memory
    worker.close()
    assert not worker.scratch.exists()


def test_a_run_that_raises_is_a_failed_outcome_with_the_reason(home: Settings) -> None:
    worker = BatchWorker(ScriptedApp(home, fail_on="BOOM"))
    outcome = worker.run("x", "Where was the BOOM engineer born?")
    assert outcome.record is None and "stopped answering" in (outcome.error or "")
    assert worker.run("y", "Where was Jonas Pell born?").record is not None  # the worker goes on


def test_a_results_file_batch_did_not_write_is_refused_untouched(tmp_path: Path) -> None:
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    notes = b'{"id": "q1", "note": "mine"}\nsomething else without a newline'
    (theirs / "results.jsonl").write_bytes(notes)
    with pytest.raises(RetracError, match="not written by `retrac batch`"):
        ResultsFile(theirs)
    assert (theirs / "results.jsonl").read_bytes() == notes  # nothing cut
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "results.jsonl").write_bytes(b"a text of mine with no newline")
    with pytest.raises(RetracError, match="not the start of a result line"):
        ResultsFile(plain)
    assert (plain / "results.jsonl").read_bytes() == b"a text of mine with no newline"
    linked = tmp_path / "linked"
    linked.mkdir()
    target = tmp_path / "elsewhere.jsonl"
    target.write_bytes(b'{"id": "x", "stat')
    (linked / "results.jsonl").symlink_to(target)
    with pytest.raises(RetracError, match="is a link"):
        ResultsFile(linked)
    assert target.read_bytes() == b'{"id": "x", "stat'


def test_a_half_written_last_line_is_dropped_and_failed_ids_can_be_retried(tmp_path: Path) -> None:
    results = ResultsFile(tmp_path)
    results.append(
        failed_line("a", "a?", "-").model_copy(update={"status": RunStatus.ANSWERED, "error": None})
    )
    results.append(failed_line("b", "b?", "stopped"))
    with results.path.open("a") as f:
        f.write('{"id": "c", "stat')  # the driver killed mid-line
    again = ResultsFile(tmp_path)
    assert again.done() == {"a", "b"}
    assert again.done(retry_failed=True) == {"a"}
    again.append(
        failed_line("b", "b?", "stopped").model_copy(update={"status": RunStatus.ANSWERED, "error": None})
    )
    assert again.done(retry_failed=True) == {"a", "b"}  # the last line of an id counts
    assert [line.id for line in again.lines()] == ["a", "b", "b"]
    assert (
        json.loads(again.path.read_text().splitlines()[1])["error"] == "stopped"
    )  # only a failed line has one
    assert "error" not in json.loads(again.path.read_text().splitlines()[2])
    with again.path.open("a") as f:
        f.write('{"id": "d", "status": "maybe"}\n')
    with pytest.raises(RetracError, match=r"results.jsonl, line 4 is not a result line .*delete that line"):
        again.lines()


def test_bad_questions_files_are_refused_before_anything_runs(tmp_path: Path) -> None:
    bad = tmp_path / "q.jsonl"
    bad.write_text('{"id": 1, "question": "a?"}\n{"id": 2}\n')
    with pytest.raises(RetracError, match=r"q.jsonl, line 2: .*\"question\""):
        load_batch_questions(bad)
    bad.write_text('{"id": 1, "question": "a?"}\n{"id": 1, "question": "b?"}\n')
    with pytest.raises(RetracError, match="'1' occurs more than once"):
        load_batch_questions(bad)
    bad.write_text("\n")
    with pytest.raises(RetracError, match="holds no question"):
        load_batch_questions(bad)


# -- on a local Ray --------------------------------------------------------------------------------


def test_a_batch_on_a_local_ray_writes_every_question_and_one_failure_does_not_stop_it(
    home: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONPATH", str(ROOT))  # the workers import tests.batch_target to build the app
    questions = load_batch_questions(
        write_questions(
            tmp_path / "q.jsonl",
            {
                "q1": "When was the designer of Karn Point Lighthouse born?",
                "q2": "Who founded the Gull Line ferry service? BOOM",
                "q3": "Where was Jonas Pell born?",
            },
        )
    )
    local = Retrac(home, embedder=HashingEmbedder())
    out = tmp_path / "out"
    report = Batch(out, local.runs, None, ScriptedApp(home, fail_on="BOOM"), workers=2).run(questions)
    lines = {line.id: line for line in ResultsFile(out).lines()}
    assert set(lines) == {"q1", "q2", "q3"} and all(
        set(json.loads(line.text())) >= KEYS for line in lines.values()
    )
    assert lines["q2"].status == "failed" and "stopped answering" in (lines["q2"].error or "")
    assert lines["q2"].run_id is None
    for qid in ("q1", "q3"):
        run = local.runs.run(lines[qid].run_id or "")  # each finished run is in the local store
        assert run["question"] == lines[qid].question and run["status"] == lines[qid].status
        assert lines[qid].answer and lines[qid].citations
        assert len(local.runs.rounds(run["run_id"])) >= 1
    assert report.written.get("failed") == 1 and report.skipped == 0

    again = Batch(out, local.runs, None, ScriptedApp(home), workers=2).run(questions)
    assert again.skipped == 3 and again.written == {}  # nothing runs twice

    retried = Batch(out, local.runs, None, ScriptedApp(home), workers=2, retry_failed=True).run(questions)
    assert retried.skipped == 2 and sum(retried.written.values()) == 1
    assert ResultsFile(out).done(retry_failed=True) == {"q1", "q2", "q3"}
    assert len(local.runs.list_runs()) == 3


def test_a_killed_driver_loses_only_the_questions_in_flight_and_the_same_command_finishes(
    home: Settings, tmp_path: Path
) -> None:
    questions = write_questions(
        tmp_path / "q.jsonl", {f"q{i}": f"Where was engineer number {i} born?" for i in range(1, 5)}
    )
    out = tmp_path / "out"
    command = [sys.executable, str(ROOT / "tests" / "batch_target.py"), str(questions), str(out), "1"]
    env = os.environ | {"RETRAC_HOME": str(home.home)}
    errors = (tmp_path / "driver.err").open("w")
    driver = subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=errors, text=True, start_new_session=True
    )
    try:
        assert driver.stdout is not None
        ready, _, _ = select.select(
            [driver.stdout], [], [], 240
        )  # one question written, or the driver is stuck
        first = driver.stdout.readline() if ready else ""
        assert first.startswith("written"), (tmp_path / "driver.err").read_text()[-2000:]
    finally:
        os.killpg(driver.pid, signal.SIGKILL)  # the driver and the local Ray it started
        driver.wait(timeout=30)
    written = ResultsFile(out).lines()
    assert 1 <= len(written) < 4
    finished = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert finished.returncode == 0, finished.stderr[-2000:]
    lines = ResultsFile(out).lines()
    assert sorted(line.id for line in lines) == ["q1", "q2", "q3", "q4"]  # each once
    assert lines[: len(written)] == written  # what was written before the kill is kept as it was
    runs = RunStore(home.runs_db)
    for line in lines:
        assert runs.run(line.run_id or "")["status"] == line.status


def test_the_command_refuses_an_empty_collection_and_a_bad_file_with_one_line(
    runner: CliRunner, tmp_path: Path
) -> None:
    from retrac_local.cli.main import cli

    questions = write_questions(tmp_path / "q.jsonl", {"a": "Who?"})
    result = runner.invoke(cli, ["batch", str(questions), "--out", str(tmp_path / "out")])
    assert result.exit_code == 1 and "is empty; run `retrac ingest" in result.output
    result = runner.invoke(cli, ["batch", str(tmp_path / "missing.jsonl"), "--out", str(tmp_path / "out")])
    assert result.exit_code == 1 and "cannot read the questions file" in result.output
    assert not (tmp_path / "out").exists()  # nothing was started


def test_an_evaluation_on_a_local_ray_writes_the_rows_and_moves_the_runs_home(
    home: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from retrac_local.batch.pool import RayPool
    from retrac_local.eval.harness import Evaluation, method_annotator
    from retrac_local.eval.questions import load_questions

    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    path = tmp_path / "q.jsonl"
    path.write_text(
        "".join(
            json.dumps(q) + "\n"
            for q in [
                {
                    "id": "e1",
                    "question": "When was the designer of Karn Point Lighthouse born?",
                    "answers": ["3 May 1849"],
                    "supporting_doc_ids": ["karn-point", "ada-vellacott"],
                    "type": "bridge",
                },
                {
                    "id": "e2",
                    "question": "Where was Jonas Pell born?",
                    "answers": ["Orley"],
                    "supporting_doc_ids": ["jonas-pell"],
                },
            ]
        )
    )
    questions = load_questions(path)
    local = Retrac(home, embedder=HashingEmbedder())
    evaluation = Evaluation(tmp_path / "eval", {"code": {}}, check=False)
    with RayPool(ScriptedApp(home), workers=2) as pool:
        failed = evaluation.run_on_ray(
            questions, ["retrac", "rag"], pool, local.runs, rag_k=3, annotate=method_annotator(local.runs)
        )
    assert failed == []
    rows = {(r.id, r.mode): r for r in Evaluation(tmp_path / "eval", {}, check=False).rows}
    assert set(rows) == {("e1", "retrac"), ("e1", "rag"), ("e2", "retrac"), ("e2", "rag")}
    assert rows[("e1", "retrac")].f1 > 0  # "1849" against "3 May 1849"
    for qid in ("e1", "e2"):
        row = rows[(qid, "retrac")]
        assert (
            row.run_id and local.runs.run(row.run_id)["question"] == row.question
        )  # the run is in this store
        assert row.method is not None  # so the method's figures could be read from it
    assert rows[("e2", "rag")].llm_calls == 1
    assert all(r.runtime["embed_precision"] in {"float32", "bfloat16"} for r in rows.values())  # the worker's
    # and the build of the collection it searched
    assert all(" chunks, vector index " in r.runtime["corpus"] for r in rows.values())
