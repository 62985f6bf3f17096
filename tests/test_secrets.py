"""Secrets are masked wherever settings or locations are shown or stored."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from retrac_local.agent.loop import ResearchAgent
from retrac_local.cli.main import cli
from retrac_local.config import Settings, masked
from retrac_local.config_doc import settings_rows
from retrac_local.corpus.fake import MemoryCorpus
from retrac_local.corpus.store import CorpusStore
from retrac_local.llm.fake import ScriptedLLM
from retrac_local.runstore import RunStore
from tests.scripts import constraints, final, finish, update

OPTIONS = {
    "endpoint": "http://minio.internal:9000",
    "aws_secret_access_key": "wJalrXUtnFEMI",
    "session_token": "FQoGZXIvYXdzE",
    "region": "eu-west-1",
}
URI = "s3://alice:hunter2@team-docs/retrac"


def test_secret_named_options_and_url_passwords_are_masked_at_any_depth() -> None:
    shown = masked({"corpus": {"uri": URI, "storage_options": OPTIONS}, "planner": {"url": None}})
    assert shown["corpus"]["uri"] == "s3://alice:***@team-docs/retrac"
    opts = shown["corpus"]["storage_options"]
    assert opts["aws_secret_access_key"] == opts["session_token"] == "***"
    assert opts["endpoint"] == OPTIONS["endpoint"] and opts["region"] == "eu-west-1"


def test_config_show_and_the_settings_rows_show_no_secret(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RETRAC_CORPUS__URI", URI)
    monkeypatch.setenv(
        "RETRAC_CORPUS__STORAGE_OPTIONS",
        '{"aws_secret_access_key": "wJalrXUtnFEMI", "region": "eu-west-1"}',
    )
    out = CliRunner().invoke(cli, ["config", "show"])
    assert out.exit_code == 0, out.output
    assert "hunter2" not in out.output and "wJalrXUtnFEMI" not in out.output
    assert "eu-west-1" in out.output
    rows = settings_rows(Settings(home=isolated_home, corpus={"uri": URI, "storage_options": OPTIONS}))
    text = repr(rows)
    assert "hunter2" not in text and "wJalrXUtnFEMI" not in text and "FQoGZXIvYXdzE" not in text


def test_a_store_names_its_location_without_the_password(tmp_path: Path) -> None:
    store = CorpusStore(URI, lambda: None, local_dir=tmp_path)  # type: ignore[arg-type]
    assert store.shown_uri == "s3://alice:***@team-docs/retrac" and "hunter2" not in store.shown_uri


def test_the_settings_stored_with_a_run_hold_no_secret(settings: Settings, orrin: MemoryCorpus) -> None:
    secret = settings.model_copy(
        update={
            "corpus": settings.corpus.model_copy(update={"storage_options": OPTIONS}),
            "planner": settings.planner.model_copy(update={"url": "http://bob:pa55@gpu-box:8000"}),
        }
    )
    llm = ScriptedLLM().enqueue(
        constraints(),
        *[finish("1849")] * 3,
        update(facts=["Ada Vellacott was born on 3 May 1849"], answer="1849"),
        final("1849"),
        *[{"answer": "1849"}] * 5,
    )
    store = RunStore(secret.runs_db)
    agent = ResearchAgent(llm, llm, orrin, secret, store)
    run_id = next(iter(agent.ask("When was Ada Vellacott born?"))).run_id
    stored = repr(store.run(run_id)["settings"])
    assert "pa55" not in stored and "wJalrXUtnFEMI" not in stored and "gpu-box" in stored
