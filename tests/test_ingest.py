"""Ingestion into a real LanceDB store (hashing embeddings, so no torch): formats, incremental
updates, failures, and search."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from retrac_local.corpus.embedder import HashingEmbedder
from retrac_local.corpus.ingest import Ingester
from retrac_local.corpus.store import CorpusStore
from retrac_local.errors import CorpusError

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "corpora"))
from text_to_pdf import text_to_pdf  # noqa: E402


def make_store(home: Path) -> CorpusStore:
    embedder = HashingEmbedder()
    return CorpusStore(home / "corpus" / "lance", lambda: embedder)


def ingest(home: Path, *paths: Path, prune: bool = False):
    return Ingester(make_store(home), chunk_words=40, overlap_words=5).run(list(paths), prune=prune)


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    d = tmp_path / "docs"
    d.mkdir()
    (d / "lighthouse.md").write_text(
        "# Karn Point\n\nThe light was first lit on 14 March 1887 by the Lights Board.\n"
    )
    (d / "notes.txt").write_text("Ferry notes\n\nThe Gull Line was founded in 1903 by Tomas Irvane.\n")
    (d / "bridge.html").write_text(
        "<html><head><title>Tessel Bridge</title><script>var x = 'hidden script text';</script></head>"
        "<body><nav>menu</nav><article><h1>Tessel Bridge</h1><p>The Tessel Bridge is 412 metres long and opened "
        "on 2 September 1894, linking Hesk Island with the mainland.</p><p>It was strengthened in 1968 to carry "
        "lorries across the sound.</p></article></body></html>"
    )
    (d / "survey.pdf").write_bytes(
        text_to_pdf("Seabird survey\n\nThe team counted 4,812 breeding pairs of puffins.", "Survey 2019")
    )
    (d / "records.jsonl").write_text(
        json.dumps({"doc_id": "rec-1", "title": "Skerra Light", "text": "Skerra Light is 22 metres tall."})
        + "\n"
        + "{broken json\n"
        + json.dumps({"doc_id": "rec-2", "title": "No text"})
        + "\n"
        + json.dumps({"doc_id": "rec-1", "title": "Duplicate", "text": "Another text with the same id."})
        + "\n"
    )
    (d / "binary.txt").write_bytes(bytes(range(256)) * 4)
    (d / "image.png").write_bytes(b"\x89PNG not ingested")
    return d


def test_each_format_is_ingested_and_bad_input_reported(isolated_home: Path, docs: Path) -> None:
    report = ingest(isolated_home, docs)
    doc_ids = {"lighthouse", "notes", "bridge", "survey", "rec-1"}
    assert report.documents_added == len(doc_ids)
    errors = {(Path(f["path"]).name.split(":")[0], f["error"].split(":")[0]) for f in report.failed}
    assert ("binary.txt", "binary data (NUL bytes), not text") in errors
    assert any("not valid JSON" in f["error"] for f in report.failed)
    assert any('no "text" string' in f["error"] for f in report.failed)
    assert any("duplicate doc_id 'rec-1'" in f["error"] for f in report.failed)
    store = make_store(isolated_home)
    docs_count, chunks = store.count()
    assert docs_count == len(doc_ids) and chunks == report.chunks
    html = store.document_chunks("bridge")[0]
    assert (
        "412 metres" in html.text and "hidden script text" not in html.text and html.title == "Tessel Bridge"
    )
    pdf = store.document_chunks("survey")[0]
    assert "4,812 breeding pairs" in pdf.text and pdf.title == "Survey 2019"
    record = store.get_chunk("rec-1#0")
    assert record is not None and record.text == "Skerra Light is 22 metres tall."  # the first record wins


def test_offsets_point_into_the_source_text(isolated_home: Path, docs: Path) -> None:
    ingest(isolated_home, docs)
    chunk = make_store(isolated_home).document_chunks("notes")[0]
    source = (docs / "notes.txt").read_text()
    assert source[chunk.start : chunk.end] == chunk.text


def test_second_ingest_skips_and_changed_file_replaces(isolated_home: Path, docs: Path) -> None:
    first = ingest(isolated_home, docs)
    again = ingest(isolated_home, docs)
    assert again.files_added == 0 and again.files_skipped == first.files_added
    assert make_store(isolated_home).count() == (first.documents_added, first.chunks)
    (docs / "notes.txt").write_text("Ferry notes\n\nThe Gull Line now sails twice a day.\n")
    changed = ingest(isolated_home, docs)
    assert changed.files_added == 1
    store = make_store(isolated_home)
    assert store.count() == (first.documents_added, first.chunks)  # replaced, not duplicated
    assert "twice a day" in store.document_chunks("notes")[0].text


def test_prune_removes_documents_of_deleted_files(isolated_home: Path, docs: Path) -> None:
    ingest(isolated_home, docs)
    (docs / "notes.txt").unlink()
    report = ingest(isolated_home, docs, prune=True)
    assert report.documents_removed == 1
    assert make_store(isolated_home).document_chunks("notes") == []


def test_interrupted_ingest_rerun_matches_clean_run(isolated_home: Path, docs: Path, tmp_path: Path) -> None:
    class Crash(Exception):
        pass

    store = make_store(isolated_home)
    ingester = Ingester(store, chunk_words=40, overlap_words=5)
    original = ingester.manifest.record
    calls = {"n": 0}

    def crash_after_two(*args, **kwargs):  # the chunks of file 3 are written, its manifest row is not
        calls["n"] += 1
        if calls["n"] == 3:
            raise Crash
        return original(*args, **kwargs)

    ingester.manifest.record = crash_after_two  # type: ignore[method-assign]
    with pytest.raises(Crash):
        ingester.run([docs])
    resumed = ingest(isolated_home, docs)
    clean_home = tmp_path / "clean"
    clean = ingest(clean_home, docs)
    assert (
        make_store(isolated_home).count()
        == make_store(clean_home).count()
        == (clean.documents_added, clean.chunks)
    )
    assert resumed.files_skipped == 2


def test_search_methods_and_open(isolated_home: Path, docs: Path) -> None:
    ingest(isolated_home, docs)
    store = make_store(isolated_home)
    for method in ("bm25", "vector", "hybrid"):
        hits = store.search("Gull Line founded Tomas Irvane", k=3, method=method)
        assert hits and hits[0].chunk.doc_id == "notes", method
        assert len({h.chunk.doc_id for h in hits}) == len(hits)  # one hit per document
    assert store.search("   ") == []
    opened = store.open("bridge#0", window=1)
    assert opened and opened[0].doc_id == "bridge"
    assert store.open("no-such-doc") == []


def test_missing_corpus_is_a_clear_error(isolated_home: Path) -> None:
    with pytest.raises(CorpusError, match="retrac ingest"):
        make_store(isolated_home).search("anything")


def test_store_refuses_another_embedder(isolated_home: Path, docs: Path) -> None:
    ingest(isolated_home, docs)
    other = HashingEmbedder(dim=64)
    store = CorpusStore(isolated_home / "corpus" / "lance", lambda: other)
    with pytest.raises(CorpusError, match="embedded with hashing:256"):
        store.search("Gull Line", method="vector")


def test_vector_index_is_built_past_the_threshold(isolated_home: Path, tmp_path: Path) -> None:
    records = tmp_path / "many.jsonl"
    topics = ["lighthouse", "ferry", "bridge", "puffin", "railway", "museum", "college", "festival"]
    with records.open("w") as f:
        for i in range(600):
            topic = topics[i % len(topics)]
            f.write(
                json.dumps(
                    {
                        "doc_id": f"d{i}",
                        "title": f"{topic} {i}",
                        "text": f"Record {i} is about the {topic} number {i}.",
                    }
                )
                + "\n"
            )
    embedder = HashingEmbedder()
    store = CorpusStore(isolated_home / "corpus" / "lance", lambda: embedder, vector_index_min_rows=500)
    Ingester(store, chunk_words=40, overlap_words=5).run([records])
    assert store.vector_index_kind() == "IvfPq"
    hits = store.search("Record 123 is about the museum number 123", k=5, method="vector")
    assert "d123" in [h.chunk.doc_id for h in hits]
    query = embedder.embed(["Record 123 is about the museum number 123"])[0]
    assert "ANNSubIndex" in store.vector_query(store.table(), query).explain_plan()
    # The same store read with the default threshold: the index is left aside, the scan is exact,
    # so another ingest (another trained index) or another machine ranks the same vectors alike.
    exact = CorpusStore(isolated_home / "corpus" / "lance", lambda: embedder)
    plan = exact.vector_query(exact.table(), query).explain_plan()
    assert "KNNVectorDistance" in plan and "ANNSubIndex" not in plan
    assert "d123" in [h.chunk.doc_id for h in exact.search("Record 123 is about the museum number 123", k=5)]


def test_a_collection_moved_to_another_store_is_read_again_into_it(isolated_home: Path, docs: Path) -> None:
    from retrac_local.api import Retrac
    from retrac_local.config import Settings

    def app(store: str) -> Retrac:
        return Retrac(Settings(home=isolated_home, corpus={"uri": store}, retrieval={"embedder": "hashing"}))

    first = app(str(isolated_home / "store-a")).ingest([docs])
    assert first.files_added > 0 and first.moved_from is None
    moved = app(str(isolated_home / "store-b")).ingest([docs])
    assert moved.files_added == first.files_added and moved.files_skipped == 0  # not "unchanged"
    assert moved.moved_from == str(isolated_home / "store-a")
    assert app(str(isolated_home / "store-b")).corpus.count()[1] == first.chunks
    again = app(str(isolated_home / "store-b")).ingest([docs])
    assert again.files_added == 0 and again.moved_from is None


def test_a_relative_corpus_uri_is_refused(isolated_home: Path) -> None:
    from retrac_local.config import Settings

    with pytest.raises(ValueError, match="relative path"):
        Settings(home=isolated_home, corpus={"uri": "my-store"})
    assert (
        Settings(home=isolated_home, corpus={"uri": "s3://bucket/prefix"}).corpus.uri == "s3://bucket/prefix"
    )


def test_progress_counts_bytes_documents_and_chunks(isolated_home: Path, docs: Path) -> None:
    events: list[tuple[str, dict]] = []
    report = Ingester(
        make_store(isolated_home),
        chunk_words=40,
        overlap_words=5,
        progress=lambda event, data: events.append((event, data)),
    ).run([docs])
    start = events[0]
    assert start[0] == "start" and start[1]["files"] == 6  # the .png is not a document
    assert start[1]["bytes"] == sum(p.stat().st_size for p in docs.iterdir() if p.suffix != ".png")
    last = events[-1][1]
    assert last["bytes_done"] == start[1]["bytes"] and last["files_done"] == 6
    assert last["chunks"] == report.chunks and last["documents"] == report.documents_added
    files = [data["files_done"] for event, data in events if event == "progress"]
    assert files == sorted(files) and files[0] <= 1  # counted up as files end


def test_the_ingest_display_shows_megabytes_files_and_an_eta(capsys, monkeypatch) -> None:
    from retrac_local.cli.progress import ingest_progress

    monkeypatch.setenv("COLUMNS", "200")
    with ingest_progress() as update:
        update("start", {"files": 4, "bytes": 3_000_000})
        update("progress", {"bytes_done": 1_500_000, "files_done": 2, "documents": 2, "chunks": 30})
    shown = capsys.readouterr().err
    assert "1.5/3.0 MB" in shown and "2/4 files" in shown and "ETA" in shown


def test_a_reranker_reorders_the_fused_candidates(isolated_home: Path, docs: Path) -> None:
    ingest(isolated_home, docs)

    class PreferBridge:
        def rerank(self, query, hits):
            return sorted(hits, key=lambda h: h.chunk.doc_id != "bridge")

    embedder = HashingEmbedder()
    store = CorpusStore(isolated_home / "corpus" / "lance", lambda: embedder, reranker=PreferBridge())
    assert store.search("Gull Line founded Tomas Irvane", k=2)[0].chunk.doc_id == "bridge"
