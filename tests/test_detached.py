"""Tapes of a published collection hold no copy of it (eval/detached.py): the texts come out, are
read back from the collection's own file, and the tapes still play the same; a missing or changed
file is named, not played against."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from retrac_local.corpus.embedder import HashingEmbedder
from retrac_local.errors import RetracError
from retrac_local.eval.detached import SEARCH_ENV, SOURCE, SourceMissing, detach
from retrac_local.eval.recording import play, read_tapes
from retrac_local.eval.tapes import TITLES
from tests.scripts import finish

RECORDS = [
    {
        "doc_id": "karn",
        "title": "Karn Point Lighthouse",
        "text": "The Karn Point Lighthouse was designed by Ada Vellacott. It stands on the northern cape.",
    },
    {
        "doc_id": "ada",
        "title": "Ada Vellacott",
        "text": "Ada Vellacott was born on 3 May 1849 in Saltry. She was an engineer of lighthouses.",
    },
    {"doc_id": "saltry", "title": "Saltry", "text": "Saltry is a harbour town with a maritime museum."},
]
Q = "In which year was the engineer who designed the Karn Point Lighthouse born?"


def _tapes(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    from retrac_local.api import Retrac
    from retrac_local.config import Settings
    from retrac_local.eval.questions import EvalQuestion
    from retrac_local.eval.recording import record_questions
    from tests import kill_target

    class Answering(kill_target.Deterministic):
        def _reply(self, messages: Any, schema: str) -> dict[str, Any]:
            if schema == "ShortAnswer":
                return {"answer": "1849"}
            if schema == "Action" and "Round:" not in messages[1]["content"]:
                return finish("1849")
            return super()._reply(messages, schema)

    collection = tmp_path / "published" / "collection.jsonl"
    collection.parent.mkdir()
    collection.write_text("".join(json.dumps(r) + "\n" for r in RECORDS))
    monkeypatch.setattr(kill_target, "CALL_SECONDS", 0.0)
    model = Answering()
    app = Retrac(
        Settings(home=home, retrieval={"embedder": "hashing"}),
        planner=model,
        compressor=model,
        embedder=HashingEmbedder(),
    )
    app.ingest([collection])
    out = tmp_path / "tapes"
    record_questions(
        app, [EvalQuestion("q1", Q, ["1849"])], ["retrac", "react", "rag"], out, log=lambda _: None
    )
    return out, collection


def _strings(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return [value] if isinstance(value, str) else []


def test_detached_tapes_hold_no_text_of_the_collection_and_play_the_same(
    isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out, collection = _tapes(isolated_home, tmp_path, monkeypatch)
    assert detach(out, collection) == 3
    assert not (out / TITLES).exists() and (out / SOURCE).exists()
    for path in out.glob("*.json.gz"):
        with gzip.open(path, "rt") as f:
            strings = _strings(json.load(f))
        assert not [s for s in strings for r in RECORDS if r["text"] in s]  # no whole document, anywhere
    monkeypatch.setenv(SEARCH_ENV, str(collection.parent))
    played = [(name, tape, titles) for name, tape, titles in read_tapes(out)]
    assert all(t == ["Karn Point Lighthouse", "Ada Vellacott", "Saltry"] for _, _, t in played)
    assert any(
        hit.chunk.text.startswith("The Karn Point")
        for _, tape, _ in played
        for hits in tape.search.values()
        for hit in hits
    )
    assert [play(tape, titles) for _, tape, titles in played] == [[], [], []]
    assert detach(out, collection) == 0  # a second detach leaves detached tapes as they are


def test_a_detached_tape_names_the_collection_it_lacks_or_that_changed(
    isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out, collection = _tapes(isolated_home, tmp_path, monkeypatch)
    detach(out, collection)
    monkeypatch.setenv(SEARCH_ENV, str(tmp_path / "elsewhere"))
    with pytest.raises(SourceMissing, match=f"need collection.jsonl.*set {SEARCH_ENV}"):
        list(read_tapes(out))
    monkeypatch.setenv(SEARCH_ENV, str(collection.parent))
    collection.write_text(collection.read_text().replace("1849", "1850"))
    with pytest.raises(SourceMissing, match="SHA-1 differs"):
        list(read_tapes(out))


def test_tapes_of_another_collection_are_not_detached(
    isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out, collection = _tapes(isolated_home, tmp_path, monkeypatch)
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps(RECORDS[0] | {"text": "Another text."}) + "\n")
    with pytest.raises(RetracError, match="not detached"):
        detach(out, other)
    assert (out / TITLES).exists() and not (out / SOURCE).exists()  # nothing was rewritten
