"""Ingest of a folder of hostile files, made here: it never crashes or hangs, reports each failure
with its path and a reason, takes every good file and record, and leaves a consistent store."""

from __future__ import annotations

import io
import json
import os
import random
import sys
from pathlib import Path

import pytest

from retrac_local.config import IngestSettings
from retrac_local.corpus.embedder import HashingEmbedder
from retrac_local.corpus.ingest import Ingester
from retrac_local.corpus.readers import UnreadableFile
from retrac_local.corpus.sandbox import SandboxedReader
from retrac_local.corpus.store import CorpusStore

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "corpora"))
from text_to_pdf import text_to_pdf  # noqa: E402

SECRET = "zqxscriptpayload"  # text inside <script> and <style>: it must never reach a chunk


def fact(i: int) -> str:
    return f"Keeper number {i} of the Orrin lights kept a log of storms, ships and tides for many years."


def hostile_folder(root: Path) -> tuple[set[str], set[Path], int]:
    """Writes the fixture; returns (doc titles that must be ingested, files that must fail, good JSONL records)."""
    rng = random.Random(1234)
    good_titles: set[str] = set()
    bad: set[Path] = set()
    root.mkdir()

    def write(name: str, data: bytes | str, ok: bool, title: str | None = None) -> Path:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data.encode() if isinstance(data, str) else data)
        if ok:
            good_titles.add(title or name)
        else:
            bad.add(path)
        return path

    for i in range(30):
        write(f"notes/keeper-{i}.txt", f"Keeper {i}\n\n{fact(i)}\n", True, f"Keeper {i}")
        write(f"notes/log-{i}.md", f"# Log {i}\n\n{fact(i + 100)}\n", True, f"Log {i}")
    for i in range(8):
        page = (
            f"<html><head><title>Station {i}</title><style>.x {{ content: '{SECRET}' }}</style>"
            f"<script>var s = '{SECRET}';</script></head><body><article><h1>Station {i}</h1>"
            f"<p>{fact(i + 200)} {fact(i + 300)}</p><script>alert('{SECRET}')</script></article></body></html>"
        )
        write(f"web/station-{i}.html", page, True, f"Station {i}")
    for i in range(3):
        write(
            f"pdf/survey-{i}.pdf",
            text_to_pdf(f"Survey {i}\n\n{fact(i + 400)}", f"Survey {i}"),
            True,
            f"Survey {i}",
        )
    for i in range(6):
        write(
            f"latin1/carte-{i}.txt",
            f"Carte {i}\n\nLe phare de Saint-Malo était gardé par Éloïse {i}, née à Brest.".encode("latin-1"),
            True,
            f"Carte {i}",
        )
    write("names/with space.md", f"# Spaced\n\n{fact(500)}", True, "Spaced")
    write("names/new\nline.txt", f"Newline\n\n{fact(501)}", True, "Newline")
    write("names/fjörður ñandú 灯台.md", f"# Unicode\n\n{fact(502)}", True, "Unicode")

    for i, suffix in enumerate([".txt", ".md", ".html", ".pdf"] * 6):
        write(f"empty/empty-{i}{suffix}", b"", False)
    for i, suffix in enumerate([".txt", ".md", ".html", ".pdf"] * 16):
        write(
            f"binary/random-{i}{suffix}",
            bytes(rng.randrange(256) for _ in range(rng.randrange(200, 4000))),
            False,
        )
    for i in range(10):
        write(
            f"badutf8/broken-{i}.txt", b"\xff\xfe\xfd" * 50 + bytes(range(128, 256)) * 3 + b"\x81\x82", False
        )
    for i in range(6):
        write(f"nul/nul-{i}.md", b"# Title\n\nsome text\x00\x00\x00 and more", False)
    with open(root / "huge-single-line.txt", "wb") as f:  # 50 MB, one line
        f.write(b"word " * 10_000_000)
    bad.add(root / "huge-single-line.txt")
    write("deep/nested.html", "<div>" * 20_000 + "deep" + "</div>" * 20_000, False)
    for i in range(8):
        whole = text_to_pdf(f"Cut {i}\n\n{fact(600 + i)}", f"Cut {i}")
        write(f"pdf/truncated-{i}.pdf", whole[: len(whole) // (i + 2)], False)
    import pypdf

    for i in range(3):
        writer = pypdf.PdfWriter(
            clone_from=pypdf.PdfReader(io.BytesIO(text_to_pdf(f"Locked {i}\n\n{fact(700)}")))
        )
        writer.encrypt(user_password="secret", owner_password="owner")
        buffer = io.BytesIO()
        writer.write(buffer)
        write(f"pdf/encrypted-{i}.pdf", buffer.getvalue(), False)
    for i in range(10):
        write(f"other/file-{i}.docx", b"PK\x03\x04 not supported", False)  # skipped by the walk: not listed
        bad.discard(root / f"other/file-{i}.docx")

    records = [
        json.dumps({"doc_id": f"rec-{i}", "title": f"Record {i}", "text": fact(800 + i)}) for i in range(40)
    ]
    broken = [
        '{"doc_id": "rec-bad", "title": "cut',
        "not json at all",
        json.dumps({"doc_id": "rec-notext", "title": "x"}),
        json.dumps({"doc_id": "rec-0", "title": "dup", "text": "a duplicate id"}),
        json.dumps([1, 2, 3]),
        json.dumps({"doc_id": "rec-empty", "text": "   "}),
    ]
    lines = records[:20] + broken + records[20:]
    write("records.jsonl", "\n".join(lines) + "\n", True, "Record 0")
    good_titles |= {f"Record {i}" for i in range(40)}

    os.symlink(root / "notes", root / "notes" / "loop")  # a folder that contains itself
    os.symlink(root / "missing-target.txt", root / "dangling.txt")
    bad.add(root / "dangling.txt")
    locked = write("locked.txt", f"Locked\n\n{fact(900)}", True, "Locked")
    locked.chmod(0)
    if os.geteuid() != 0:  # root reads it anyway
        good_titles.discard("Locked")
        bad.add(locked)
    return good_titles, bad, 40


def test_hostile_files_are_reported_and_good_ones_ingested(tmp_path: Path) -> None:
    good_titles, bad, records = hostile_folder(tmp_path / "hostile")
    files = [p for p in (tmp_path / "hostile").rglob("*") if p.is_file() or p.is_symlink()]
    assert len(files) >= 200
    store = CorpusStore(tmp_path / "store" / "lance", HashingEmbedder)
    limits = IngestSettings(max_file_mb=16, file_timeout_s=30)
    report = Ingester(store, chunk_words=40, overlap_words=5, limits=limits).run([tmp_path / "hostile"])

    failed_paths = {f["path"] for f in report.failed}
    expected = {str(p) if p.is_symlink() else str(p.resolve()) for p in bad}
    assert expected <= failed_paths, expected - failed_paths
    for failure in report.failed:
        assert failure["error"] and "Traceback" not in failure["error"], failure
    assert any("larger than ingest.max_file_mb" in f["error"] for f in report.failed)
    assert any("encrypted" in f["error"] for f in report.failed)
    jsonl_problems = [f["error"] for f in report.failed if "records.jsonl" in f["path"]]
    assert len(jsonl_problems) == 6 and any("duplicate doc_id 'rec-0'" in e for e in jsonl_problems)

    table = store.table().to_arrow()
    titles = set(table["title"].to_pylist())
    assert good_titles - {"records.jsonl"} <= titles
    documents, chunks = store.count()
    assert chunks == report.chunks == table.num_rows and documents == report.documents_added
    assert not any(SECRET in text for text in table["text"].to_pylist())
    assert report.documents_added >= len(good_titles) - 1

    again = Ingester(store, chunk_words=40, overlap_words=5, limits=limits).run([tmp_path / "hostile"])
    assert again.documents_added == 0 and again.chunks == 0 and store.count() == (documents, chunks)


def test_a_parser_that_hangs_is_stopped_and_the_next_file_still_read(tmp_path: Path) -> None:
    slow, fine = tmp_path / "slow.txt", tmp_path / "fine.txt"
    slow.write_text("sleep")
    fine.write_text("Fine\n\nA readable file.")
    reader = SandboxedReader(timeout=1.0, target="tests.slow_reader:read")
    with pytest.raises(UnreadableFile, match="longer than 1 s"):
        reader.read(slow)
    assert reader.read(fine)[0].title == "Fine"  # a fresh worker took over
    reader.close()


def test_links_out_of_the_folder_odd_names_and_fifos_are_reported_and_the_rest_ingested(
    tmp_path: Path,
) -> None:
    private = tmp_path / "private"
    private.mkdir()
    (private / "diary.txt").write_text(f"Diary\n\nMy bank code is {SECRET}.")
    folder = tmp_path / "docs"
    (folder / "sub").mkdir(parents=True)
    (folder / "good.txt").write_text(f"Good\n\n{fact(1)}")
    (folder / "sub" / "inside.txt").write_text(f"Inside\n\n{fact(2)}")
    os.symlink(private / "diary.txt", folder / "notes.md")  # leaves the folder, and claims another type
    os.symlink(folder / "sub" / "inside.txt", folder / "alias.txt")  # stays inside: followed
    odd = Path(os.fsdecode(bytes(folder / "caf") + b"\xe9.txt"))  # a Latin-1 name, not UTF-8
    odd.write_text(f"Odd\n\n{fact(3)}")
    os.mkfifo(folder / "pipe.txt")
    os.mkfifo(tmp_path / "named.txt")

    store = CorpusStore(tmp_path / "store" / "lance", HashingEmbedder)
    for _ in range(2):  # the same on a second run: no retry is stopped by the odd name
        report = Ingester(store, chunk_words=40, overlap_words=5).run([folder, tmp_path / "named.txt"])
        errors = {Path(f["path"]).name: f["error"] for f in report.failed}
        assert "outside the folder ingested" in errors["notes.md"]
        assert "not valid UTF-8" in errors["caf\ufffd.txt"]
        assert errors["pipe.txt"].startswith("a FIFO") and errors["named.txt"].startswith("a FIFO")
    table = store.table().to_arrow()
    assert not any(SECRET in text for text in table["text"].to_pylist())
    assert {"Good", "Inside"} <= set(table["title"].to_pylist())
