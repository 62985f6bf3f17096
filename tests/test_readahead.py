"""The read-ahead that lets ingest parse the next files while it embeds this one."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from retrac_local.corpus.embedder import HashingEmbedder
from retrac_local.corpus.ingest import Ingester
from retrac_local.corpus.readahead import ahead
from retrac_local.corpus.store import CorpusStore


def test_results_come_in_order_with_their_items() -> None:
    assert list(ahead(range(6), lambda n: n * n, depth=2)) == [(n, n * n) for n in range(6)]


def test_the_next_item_is_worked_on_while_the_caller_holds_this_one() -> None:
    started = {n: threading.Event() for n in range(3)}

    def work(n: int) -> int:
        started[n].set()
        return n

    for n, _ in ahead(range(3), work, depth=2):
        if n < 2:  # the caller is still busy with n, and n + 1 is already being read
            assert started[n + 1].wait(timeout=5)


def test_an_error_is_raised_at_its_item_after_the_ones_before() -> None:
    def work(n: int) -> int:
        if n == 2:
            raise ValueError("item 2 is bad")
        return n

    seen = []
    with pytest.raises(ValueError, match="item 2 is bad"):
        for n, _ in ahead(range(5), work):
            seen.append(n)
    assert seen == [0, 1]


def _readahead_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "ingest-readahead"]


def test_leaving_early_ends_the_thread() -> None:
    results = ahead(range(1000), lambda n: n, depth=2)
    for n, _ in results:
        if n == 1:
            break
    results.close()  # what a for loop's end does to a generator nothing else holds
    deadline = time.monotonic() + 5
    while _readahead_threads() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _readahead_threads()  # not left waiting on a full queue for a reader that is gone


def test_an_unchanged_file_is_not_parsed_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# Alpha\n\nThe alpha valve opens at 40 kPa.")
    (docs / "b.md").write_text("# Beta\n\nThe beta valve opens at 55 kPa.")
    store = CorpusStore(tmp_path / "store" / "lance", HashingEmbedder)
    Ingester(store, chunk_words=40, overlap_words=5).run([docs])

    (docs / "b.md").write_text("# Beta\n\nThe beta valve opens at 60 kPa.")
    ingester = Ingester(store, chunk_words=40, overlap_words=5)
    parsed: list[str] = []
    read = ingester._read
    monkeypatch.setattr(ingester, "_read", lambda path, jsonl: parsed.append(path.name) or read(path, jsonl))
    report = ingester.run([docs])

    assert parsed == ["b.md"]
    assert (report.files_skipped, report.files_added) == (1, 1)
    texts = store.table().to_arrow()["text"].to_pylist()
    assert any("60 kPa" in t for t in texts) and not any("55 kPa" in t for t in texts)
