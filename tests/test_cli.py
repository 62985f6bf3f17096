"""The command line, driven in-process; hashing embeddings keep it fast (no torch)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from retrac_local.cli.main import cli
from retrac_local.runstore import RunStore


def invoke(runner: CliRunner, *args: str):
    return runner.invoke(cli, list(args), catch_exceptions=False)


def one_line_error(result) -> str:
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    return lines[0]


def test_ingest_search_and_incremental_json(runner: CliRunner, folder: Path, tmp_path: Path) -> None:
    first = json.loads(invoke(runner, "ingest", str(folder), "--json").stdout)
    assert first["documents_added"] == 2 and first["chunks"] == 2
    assert [Path(f["path"]).name for f in first["failed"]] == ["broken.pdf"]
    assert "damaged or unsupported PDF" in first["failed"][0]["error"]
    again = json.loads(invoke(runner, "ingest", str(folder), "--json").stdout)
    assert again["documents_added"] == 0 and again["documents_skipped"] == 2
    stats = json.loads(invoke(runner, "corpus", "stats", "--json").stdout)
    assert (stats["documents"], stats["chunks"]) == (2, 2) and stats["size_bytes"] > 0
    assert stats["vector_index"] == "flat (exact)"

    hits = json.loads(invoke(runner, "search", "who founded the Gull Line", "-k", "1", "--json").stdout)
    assert len(hits) == 1
    assert set(hits[0]) == {
        "doc_id",
        "chunk_id",
        "title",
        "section",
        "page",
        "source",
        "score",
        "more_in_document",
        "text",
    }
    assert hits[0]["doc_id"] == "ferry" and hits[0]["chunk_id"] == "ferry#0"
    for method in ("bm25", "vector"):
        hits = json.loads(
            invoke(runner, "search", "Tessel Bridge length", "--method", method, "--json").stdout
        )
        assert hits[0]["doc_id"] == "bridge"

    queries = tmp_path / "queries.txt"
    queries.write_text("Gull Line founded\n\nTessel Bridge\n")
    lines = invoke(runner, "search", "--queries", str(queries)).stdout.splitlines()
    assert [json.loads(line)["query"] for line in lines] == ["Gull Line founded", "Tessel Bridge"]
    assert json.loads(lines[1])["hits"][0]["doc_id"] == "bridge"


def test_ask_needs_a_corpus(runner: CliRunner) -> None:
    assert "is empty; run `retrac ingest" in one_line_error(invoke(runner, "ask", "anything?"))
    assert "no corpus in" in one_line_error(invoke(runner, "corpus", "stats"))


def test_ask_names_a_missing_or_broken_model(
    runner: CliRunner, folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    invoke(runner, "ingest", str(folder))
    monkeypatch.setenv("RETRAC_PLANNER__PATH", str(tmp_path / "missing.gguf"))
    assert "missing.gguf does not exist" in one_line_error(invoke(runner, "ask", "anything?"))
    fake = tmp_path / "fake.gguf"
    fake.write_bytes(b"<html>not a model</html>")
    monkeypatch.setenv("RETRAC_PLANNER__PATH", str(fake))
    assert "is not a GGUF file" in one_line_error(invoke(runner, "ask", "anything?"))


def test_runs_commands(runner: CliRunner, isolated_home: Path) -> None:
    assert json.loads(invoke(runner, "runs", "list", "--json").stdout) == []
    store = RunStore(isolated_home / "runs.sqlite")
    run_id = store.create_run("What is it?", {"question": "What is it?"}, {})
    rows = json.loads(invoke(runner, "runs", "list", "--json").stdout)
    assert rows[0]["run_id"] == run_id and rows[0]["status"] == "running" and rows[0]["rounds"] == 0
    shown = json.loads(invoke(runner, "runs", "show", run_id, "--json").stdout)
    assert shown["question"] == "What is it?" and shown["rounds"] == []
    assert "no run 'nope'" in one_line_error(invoke(runner, "runs", "show", "nope"))
    assert "no run 'nope'" in one_line_error(invoke(runner, "resume", "nope"))


def test_models_and_config_errors(runner: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    rows = json.loads(invoke(runner, "models", "--json").stdout)
    assert [r["role"] for r in rows] == ["planner", "compressor"]
    assert all(r["path"].endswith(".gguf") for r in rows)
    monkeypatch.setenv("RETRAC_RETRIEVAL__K", "lots")
    assert "retrieval.k" in one_line_error(invoke(runner, "search", "x"))


def test_a_truncated_model_or_a_context_too_small_fails_before_any_long_work(
    runner: CliRunner, folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    invoke(runner, "ingest", str(folder))
    from retrac_local.config import load_settings

    truncated = tmp_path / "cut.gguf"
    with open(load_settings().model_path("planner"), "rb") as f:
        truncated.write_bytes(f.read(1_000_000))  # a real model's first megabyte: a download cut short
    monkeypatch.setenv("RETRAC_PLANNER__PATH", str(truncated))
    assert "could not load" in one_line_error(invoke(runner, "ask", "anything?"))
    monkeypatch.delenv("RETRAC_PLANNER__PATH")
    monkeypatch.setenv("RETRAC_PLANNER__N_CTX", "1024")
    line = one_line_error(invoke(runner, "ask", "anything?"))
    assert "planner.n_ctx = 1024 is smaller than the prompts it must hold" in line


def test_events_are_json_lines_and_quiet_prints_only_the_answer(
    settings, orrin, capsys: pytest.CaptureFixture[str]
) -> None:
    from retrac_local.agent.loop import ResearchAgent
    from retrac_local.cli.main import _run
    from retrac_local.llm.fake import ScriptedLLM
    from tests.scripts import constraints, final, finish, update

    def agent() -> ResearchAgent:
        llm = ScriptedLLM().enqueue(
            constraints(),
            finish("Ada Vellacott"),  # after two searches by code
            update(
                facts=["The tower was designed by the civil engineer Ada Vellacott"], answer="Ada Vellacott"
            ),
            final("Ada Vellacott", "E1"),
        )
        return ResearchAgent(llm, llm, orrin, settings, RunStore(settings.runs_db))

    _run(agent().ask("Who designed the Karn Point Lighthouse?"), False, "events")
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [e["event"] for e in lines] == [
        "RunStarted",
        "StepTaken",
        "StepTaken",
        "StepTaken",
        "RoundCompressed",
        "Converged",
        "RunFinished",
    ]
    assert (
        lines[1]["by"] == "code" and lines[1]["argument"] == "Who designed the Karn Point Lighthouse?"
    )  # hop 0
    assert lines[4]["prompt_tokens"] > 0 and lines[-1]["result"]["answer"] == "Ada Vellacott"

    _run(agent().ask("Who designed the Karn Point Lighthouse?"), False, "quiet")
    out = capsys.readouterr().out
    assert "round 1" not in out and "Answer: Ada Vellacott" in out


def test_models_check_says_which_role_does_not_load(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RETRAC_COMPRESSOR__PATH", str(tmp_path / "gone.gguf"))
    monkeypatch.setenv("RETRAC_PLANNER__URL", "http://127.0.0.1:9")
    rows = {r["role"]: r for r in json.loads(invoke(runner, "models", "--check", "--json").stdout)}
    assert rows["planner"]["server"] == "http://127.0.0.1:9" and rows["planner"]["loads"] is False
    assert "cannot reach the model server" in rows["planner"]["error"]
    assert (
        rows["compressor"]["present"] is False and "gone.gguf does not exist" in rows["compressor"]["error"]
    )
