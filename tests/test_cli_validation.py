"""Plain mistakes get one clear line and a failing exit code, never a traceback or a silent default;
two ingests into one collection do not race."""

from __future__ import annotations

import fcntl
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from retrac_local.cli.main import cli
from retrac_local.corpus.embedder import HashingEmbedder
from retrac_local.corpus.ingest import Ingester
from retrac_local.corpus.store import CorpusStore
from retrac_local.errors import StoreError
from retrac_local.runstore import RunStore
from tests.test_cli import invoke, one_line_error


@pytest.mark.parametrize(
    "args", [["search", "x", "-k", "0"], ["search", "x", "-k", "-1"], ["ask", "q?", "--max-rounds", "0"]]
)
def test_out_of_range_numbers_are_refused_not_replaced(runner: CliRunner, args: list[str]) -> None:
    result = invoke(runner, *args)
    assert result.exit_code == 2 and "Invalid value" in result.output and "Traceback" not in result.output


def test_a_question_is_checked_before_any_model_loads(runner: CliRunner, folder: Path) -> None:
    invoke(runner, "ingest", str(folder))
    assert "the question is empty" in one_line_error(invoke(runner, "ask", "   "))
    assert "is 100,000 characters long" in one_line_error(invoke(runner, "ask", "x" * 100_000))


def test_ingest_fails_when_nothing_named_could_be_ingested(
    runner: CliRunner, folder: Path, tmp_path: Path
) -> None:
    result = invoke(runner, "ingest", str(tmp_path / "nowhere"), "--json")
    assert (
        result.exit_code == 1 and json.loads(result.stdout)["failed"][0]["error"] == "no such file or folder"
    )
    assert invoke(runner, "ingest", str(folder)).exit_code == 0  # one broken PDF among good files: success
    assert invoke(runner, "ingest", str(folder / "broken.pdf")).exit_code == 1


def test_search_queries_that_are_not_utf8_are_named(runner: CliRunner, folder: Path, tmp_path: Path) -> None:
    invoke(runner, "ingest", str(folder))
    queries = tmp_path / "q.txt"
    queries.write_bytes(b"Gull Line\n\xff\xfe broken\n")
    assert "is not UTF-8 text" in one_line_error(invoke(runner, "search", "--queries", str(queries)))
    odd = b"Gull \xe9 Line".decode("utf-8", "surrogateescape")  # how Python hands over such an argument
    hits = json.loads(invoke(runner, "search", odd, "--json").stdout)
    assert hits and hits[0]["doc_id"] == "ferry"


def test_resuming_a_finished_run_says_so(runner: CliRunner, isolated_home: Path) -> None:
    store = RunStore(isolated_home / "runs.sqlite")
    run_id = store.create_run("What?", {"question": "What?", "evidence": []}, {})
    result = {
        "run_id": run_id,
        "question": "What?",
        "status": "answered",
        "answer": "42",
        "citations": [],
        "rounds": 1,
        "stop_reason": "answered",
        "llm_calls": 1,
        "prompt_tokens": 1,
        "completion_tokens": 1,
        "peak_prompt_tokens": 1,
        "seconds": 1.0,
        "llm_seconds": 1.0,
    }
    store.finish_run(run_id, "answered", "42", result, [])
    store.close()
    output = CliRunner().invoke(cli, ["resume", run_id]).output
    assert "had already finished (answered); nothing to resume" in output and "42" in output


def test_a_mistyped_environment_variable_is_named(runner: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RETRAC_BUGDET__MAX_ROUNDS", "2")
    assert "unknown setting(s) in the environment: RETRAC_BUGDET__MAX_ROUNDS" in one_line_error(
        invoke(runner, "models")
    )


def test_a_second_ingest_into_the_same_collection_stops_with_a_clear_message(tmp_path: Path) -> None:
    store = CorpusStore(tmp_path / "home" / "corpus" / "lance", HashingEmbedder)
    (tmp_path / "a.txt").write_text("A\n\nThe Gull Line was founded in 1903.")
    lock = tmp_path / "home" / "corpus" / "ingest.lock"
    lock.parent.mkdir(parents=True)
    with open(lock, "a+") as held:  # what a running ingest holds
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(StoreError, match="another ingest is writing this collection"):
            Ingester(store).run([tmp_path / "a.txt"])
    assert Ingester(store).run([tmp_path / "a.txt"]).documents_added == 1  # released: it goes ahead


def test_an_error_in_the_middle_of_a_run_is_one_line_that_says_how_to_continue() -> None:
    import click

    from retrac_local.cli.main import _run
    from retrac_local.contract.events import RunStarted
    from retrac_local.errors import ModelError

    def events():
        yield RunStarted("20261130-000000-abcdef", "q?")
        raise ModelError("cannot reach the model server http://127.0.0.1:9")

    with pytest.raises(
        click.ClickException,
        match=r"http://127.0.0.1:9 \(the run's finished rounds are saved: "
        r"`retrac resume 20261130-000000-abcdef` continues it",
    ):
        _run(events(), as_json=False, mode="quiet")
