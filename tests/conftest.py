"""Shared fixtures. The fast tier uses the scripted LLM, an in-memory corpus or a LanceDB store in
tmp_path with hashing embeddings; the slow tier (marked `slow`) loads the real models."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from retrac_local.config import Settings
from retrac_local.corpus.fake import MemoryCorpus

ROOT = Path(__file__).resolve().parent.parent
DEMO_DOCS = ROOT / "corpora" / "demo" / "docs"
DEMO_QUESTIONS = ROOT / "corpora" / "demo" / "questions.jsonl"


@pytest.fixture(autouse=True, scope="session")
def models_freed_before_exit() -> Iterator[None]:
    """Every model the session loaded is freed while llama_cpp can still free it: one left to the
    interpreter's teardown fails in its destructor, printing "Exception ignored in Llama.__del__"
    after a clean run (llama-cpp-python #2002)."""
    yield
    llamacpp = sys.modules.get("retrac_local.llm.llamacpp")
    if llamacpp is not None:
        for llama, _ in llamacpp._LOADED.values():  # noqa: SLF001 (the process's models, freed once)
            llama.close()
        llamacpp._LOADED.clear()  # noqa: SLF001


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> Path:
    """Every test gets its own RETRAC_HOME, and no RETRAC_* variable of the developer leaks in.

    A scripted run scripts every model call it makes. The agreement check's calls after an answer
    (`budget.answer_samples`) are scripted only by the tests about it (tests/test_answer_agreement.py),
    and the first reading's after hop 0 (`budget.first_reading_samples`) only by
    tests/test_first_reading.py, so the fast tier turns both off unless a test sets them; the slow
    tier runs the defaults."""
    import os

    for key in list(os.environ):
        if key.startswith("RETRAC_"):
            monkeypatch.delenv(key)
    home = tmp_path / "home"
    monkeypatch.setenv("RETRAC_HOME", str(home))
    if request.node.get_closest_marker("slow") is None:
        monkeypatch.setenv("RETRAC_BUDGET__ANSWER_SAMPLES", "0")
        monkeypatch.setenv("RETRAC_BUDGET__FIRST_READING_SAMPLES", "0")
    return home


@pytest.fixture
def settings(isolated_home: Path) -> Settings:
    """Round 1 opens with two searches by code (the default is three), so that the scripted runs
    also exercise the planner's own steps in round 1."""
    return Settings(home=isolated_home, budget={"opening_searches": 2})


@pytest.fixture
def orrin() -> MemoryCorpus:
    """Three short documents in which the demo's bridge question can be answered."""
    return (
        MemoryCorpus()
        .add(
            "karn-point",
            "Karn Point Lighthouse",
            "The tower was designed by the civil engineer Ada Vellacott for the Orrin Lights Board. "
            "The light was first lit on 14 March 1887.",
        )
        .add(
            "ada-vellacott",
            "Ada Vellacott",
            "Ada Vellacott was a civil engineer who worked on harbours and bridges. "
            "She was born on 3 May 1849 in Port Saltry, the daughter of a ship's chandler.",
        )
        .add("jonas-pell", "Jonas Pell", "Jonas Pell was a lighthouse engineer born in 1856 in Orley.")
    )


def demo_questions() -> list[dict]:
    return [json.loads(line) for line in DEMO_QUESTIONS.read_text().splitlines() if line.strip()]


@pytest.fixture
def runner(monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    """The command line in-process, with hashing embeddings (fast: no torch)."""
    monkeypatch.setenv("RETRAC_RETRIEVAL__EMBEDDER", "hashing")
    return CliRunner()


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """Two notes and a broken PDF."""
    d = tmp_path / "notes"
    d.mkdir()
    (d / "ferry.md").write_text("# Gull Line\n\nThe Gull Line was founded in 1903 by Tomas Irvane.\n")
    (d / "bridge.txt").write_text("Tessel Bridge\n\nThe Tessel Bridge is 412 metres long.\n")
    (d / "broken.pdf").write_bytes(b"%PDF-1.4 truncated")
    return d
