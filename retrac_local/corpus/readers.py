"""Turn files into documents: plain text, Markdown, HTML (trafilatura), PDF (pypdf), JSONL records.

A reader raises `UnreadableFile` with a reason a person understands; ingestion reports it and
goes on with the other files.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from retrac_local.lazy import require

TEXT_SUFFIXES = {".txt", ".text"}
MARKDOWN_SUFFIXES = {".md", ".markdown"}
HTML_SUFFIXES = {".html", ".htm"}
PDF_SUFFIXES = {".pdf"}
JSONL_SUFFIXES = {".jsonl"}
SUPPORTED = TEXT_SUFFIXES | MARKDOWN_SUFFIXES | HTML_SUFFIXES | PDF_SUFFIXES | JSONL_SUFFIXES


class UnreadableFile(Exception):
    """A file (or a record in it) that cannot be turned into text; the message is for people."""


@dataclass
class Document:
    doc_id: str | None  # None: derived from the file by the ingester
    title: str
    text: str
    source: str
    problems: list[str] = field(default_factory=list)  # per-record failures inside a JSONL file
    end_offset: int | None = None  # bytes of the file read once this record is parsed (for progress)


def decode(data: bytes, path: Path) -> str:
    if b"\x00" in data[:4096] and not data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise UnreadableFile("binary data (NUL bytes), not text")
    for encoding in ("utf-8-sig", "utf-16") if data.startswith((b"\xff\xfe", b"\xfe\xff")) else ("utf-8-sig",):
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            pass
    # Not UTF-8: Latin-1 decodes any bytes; accept it only when the result looks like text.
    text = data.decode("latin-1")
    printable = sum(ch.isprintable() or ch in "\n\r\t" for ch in text)
    if printable < 0.95 * max(len(text), 1):
        raise UnreadableFile("not UTF-8 and does not look like text")
    return text


def _first_line_title(text: str, fallback: str) -> str:
    for line in text.splitlines():
        line = line.strip().lstrip("#").strip()
        if line:
            return line[:120] if len(line) <= 120 else fallback
    return fallback


def read_text(path: Path) -> Document:
    text = decode(path.read_bytes(), path)
    return Document(None, _first_line_title(text, path.stem), text, str(path))


def read_markdown(path: Path) -> Document:
    text = decode(path.read_bytes(), path)
    heading = re.search(r"^#\s+(.+)$", text, re.MULTILINE)
    title = heading.group(1).strip() if heading else _first_line_title(text, path.stem)
    return Document(None, title, text, str(path))


def read_html(path: Path) -> Document:
    trafilatura = require("trafilatura", purpose="reading HTML files")
    html = decode(path.read_bytes(), path)
    text = trafilatura.extract(html, include_comments=False, include_tables=True, favor_recall=True)
    if not text:
        raise UnreadableFile("no readable text in this HTML page")
    meta = trafilatura.extract_metadata(html)
    title = (meta.title if meta and meta.title else None) or _first_line_title(text, path.stem)
    return Document(None, title, text, str(path))


def read_pdf(path: Path) -> Document:
    pypdf = require("pypdf", purpose="reading PDF files")
    logging.getLogger("pypdf").setLevel(logging.ERROR)  # damaged files are reported once, by us
    try:
        reader = pypdf.PdfReader(str(path))
        if reader.is_encrypted:
            raise UnreadableFile("the PDF is encrypted; decrypt it first")
        pages = [page.extract_text() or "" for page in reader.pages]
        title = (reader.metadata.title if reader.metadata and reader.metadata.title else None)
    except UnreadableFile:
        raise
    except Exception as e:  # pypdf raises many types on damaged files
        raise UnreadableFile(f"damaged or unsupported PDF ({type(e).__name__}: {e})") from e
    text = "\n\n".join(p.strip() for p in pages if p.strip())
    if not text:
        raise UnreadableFile("the PDF has no extractable text (scanned images need OCR first)")
    return Document(None, title or _first_line_title(text, path.stem), text, str(path))


def read_jsonl(path: Path, max_record_chars: int | None = None) -> Iterator[Document]:
    """Records `{"doc_id", "title", "text"}`; a bad line is reported in `problems`, the rest go in."""
    problems: list[str] = []
    offset = 0
    with path.open("rb") as f:
        for number, raw in enumerate(f, start=1):
            offset += len(raw)
            if not raw.strip():
                continue
            try:
                record = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError) as e:
                problems.append(f"line {number}: not valid JSON ({e})")
                continue
            if not isinstance(record, dict) or not isinstance(record.get("text"), str) or not record["text"].strip():
                problems.append(f'line {number}: no "text" string')
                continue
            if max_record_chars is not None and len(record["text"]) > max_record_chars:
                problems.append(f"line {number}: text of {len(record['text']) / 1e6:.1f} M characters is larger than "
                                "ingest.max_record_mb; record skipped")
                continue
            doc_id = record.get("doc_id") or record.get("id")
            yield Document(
                str(doc_id) if doc_id is not None else None,
                str(record.get("title") or doc_id or f"{path.stem} line {number}"),
                record["text"],
                f"{path}:{number}",
                end_offset=offset,
            )
    if problems:
        yield Document(None, "", "", str(path), problems=problems)


def read_file(path: Path) -> Iterator[Document]:
    suffix = path.suffix.lower()
    if suffix in JSONL_SUFFIXES:
        yield from read_jsonl(path)
    elif suffix in HTML_SUFFIXES:
        yield read_html(path)
    elif suffix in PDF_SUFFIXES:
        yield read_pdf(path)
    elif suffix in MARKDOWN_SUFFIXES:
        yield read_markdown(path)
    elif suffix in TEXT_SUFFIXES:
        yield read_text(path)
    else:
        raise UnreadableFile(f"unsupported file type {suffix or '(none)'}; supported: {', '.join(sorted(SUPPORTED))}")
