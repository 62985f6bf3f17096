"""Turn files into documents: plain text, Markdown, HTML (trafilatura), PDF (pypdf), JSONL records.

A document keeps its structure as offsets into its text: where each section starts, with its
path of headings (Markdown and HTML headings; a PDF's outline, or its numbered headings), and where
each page starts (PDF). Chunks follow it (`chunking.chunk_text`) and carry it to citations.

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
from typing import Any

from retrac_local.corpus.base import SECTION_SEPARATOR
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
    sections: list[tuple[int, str]] = field(
        default_factory=list
    )  # (offset, "Heading › Subheading"), in order
    pages: list[int] = field(default_factory=list)  # the offset where each page starts (page 1 first)
    hidden: int = 0  # characters of text a reader would not see (comments, hidden elements, invisible PDF text), left out


_MD_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
_MD_FENCE = re.compile(r"^(```|~~~)", re.MULTILINE)
# A numbered heading line of a report or a specification: "3.2 Memory layout", "4. Results".
_NUMBERED_HEADING = re.compile(r"^(\d{1,2}(?:\.\d{1,2}){0,3})\.?[ \t]+([A-Z][^\n.:;]{1,78})$", re.MULTILINE)


# How a page title joins the page's name to the site's: "Installing - The Pump Manual".
_TITLE_JOINS = (" - ", " | ", " – ", " — ", " · ")


def names_the_title(heading: str, title: str) -> bool:
    """The heading is the document's title, or the page's or the site's part of a "Page - Site"
    title (a site's name over every page is a banner, not a section)."""
    return heading == title or any(
        title.startswith(heading + join) or title.endswith(join + heading) for join in _TITLE_JOINS
    )


def section_paths(headings: list[tuple[int, int, str]], title: str) -> list[tuple[int, str]]:
    """(offset, level, heading) in reading order → (offset, path of the headings above and at it).
    The heading that is the document's title (`names_the_title`) is not part of the paths."""
    stack: list[tuple[int, str]] = []
    out: list[tuple[int, str]] = []
    for offset, level, heading in headings:
        heading = " ".join(heading.split())
        if not heading or names_the_title(heading, title):
            continue
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, heading))
        out.append((offset, SECTION_SEPARATOR.join(h for _, h in stack)))
    return out


def markdown_headings(text: str) -> list[tuple[int, int, str]]:
    """ATX headings (`## Title`) outside fenced code blocks."""
    fences = [m.start() for m in _MD_FENCE.finditer(text)]

    def fenced(at: int) -> bool:
        return sum(1 for f in fences if f < at) % 2 == 1

    return [
        (m.start(), len(m.group(1)), m.group(2)) for m in _MD_HEADING.finditer(text) if not fenced(m.start())
    ]


def numbered_headings(text: str) -> list[tuple[int, int, str]]:
    """Lines like "2.1 Results" (level: how many numbers), for PDFs without an outline."""
    return [
        (m.start(), m.group(1).count(".") + 1, f"{m.group(1)} {m.group(2).strip()}")
        for m in _NUMBERED_HEADING.finditer(text)
    ]


def decode(data: bytes, path: Path) -> str:
    if b"\x00" in data[:4096] and not data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise UnreadableFile("binary data (NUL bytes), not text")
    for encoding in (
        ("utf-8-sig", "utf-16") if data.startswith((b"\xff\xfe", b"\xfe\xff")) else ("utf-8-sig",)
    ):
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


# What Markdown never renders: an HTML comment, and the "[//]: # (…)" / "[comment]: <> (…)" idiom (a
# link reference definition nothing refers to). A document's hidden text is not its text: an
# instruction hidden there must not reach the models as something the document says.
_MD_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
_MD_COMMENT_LINE = re.compile(
    r"^[ \t]{0,3}\[(?://|comment|_|#)\]:[ \t]*(?:#|<>)[^\n]*\n?", re.MULTILINE | re.IGNORECASE
)


def visible_markdown(text: str) -> tuple[str, int]:
    """The Markdown a reader sees rendered: without comments (outside code blocks); and how many
    characters were left out."""
    out, hidden, at = [], 0, 0
    fences = [m.start() for m in _MD_FENCE.finditer(text)]
    blocks = list(zip(fences[::2], [*fences[1::2], len(text)][: len(fences[::2])], strict=True))
    for start, end in [*blocks, (len(text), len(text))]:
        prose = text[at:start]
        for pattern in (_MD_COMMENT, _MD_COMMENT_LINE):
            hidden += sum(len(m.group(0)) for m in pattern.finditer(prose))
            prose = pattern.sub("", prose)
        out += [prose, text[start:end]]
        at = end
    return "".join(out), hidden


def read_markdown(path: Path) -> Document:
    text, hidden = visible_markdown(decode(path.read_bytes(), path))
    headings = markdown_headings(text)
    first = next((h for h in headings if h[1] == 1), None)
    title = " ".join(first[2].split()) if first else _first_line_title(text, path.stem)
    return Document(None, title, text, str(path), sections=section_paths(headings, title), hidden=hidden)


_HIDDEN_STYLE = re.compile(
    r"display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0(?![.\d]*[1-9])", re.IGNORECASE
)


def visible_html(html: str) -> tuple[str, int]:
    """The page without what a browser does not show: elements marked `hidden` or
    `aria-hidden="true"`, styled `display: none`, `visibility: hidden` or a zero font size,
    `<template>` and comments; and how many characters of text were left out (comments are not
    counted: the extractor never read them as text). A page the parser
    cannot take is returned as it is (the extractor then reads it as before)."""
    try:
        import lxml.html
        from lxml import etree
    except ImportError:  # trafilatura depends on lxml; without it, nothing to read HTML with anyway
        return html, 0
    try:
        root = lxml.html.document_fromstring(html)
    except (etree.ParserError, ValueError):
        return html, 0
    hidden = 0
    for element in list(root.iter()):
        if element.getparent() is None:
            continue
        if isinstance(element, etree._Comment):  # never text to the extractor either: not counted
            element.drop_tree()
            continue
        if not isinstance(element.tag, str):
            continue
        if (
            element.get("hidden") is not None
            or (element.get("aria-hidden") or "").strip().lower() == "true"
            or _HIDDEN_STYLE.search(element.get("style") or "")
            or element.tag == "template"
        ):
            hidden += len(element.text_content())
            element.drop_tree()
    if not hidden:
        return html, 0
    return lxml.html.tostring(root, encoding="unicode"), hidden


def read_html(path: Path) -> Document:
    trafilatura = require("trafilatura", purpose="reading HTML files")
    html, hidden = visible_html(decode(path.read_bytes(), path))
    text = trafilatura.extract(html, include_comments=False, include_tables=True, favor_recall=True)
    if not text:
        raise UnreadableFile("no readable text in this HTML page")
    meta = trafilatura.extract_metadata(html)
    title = html_title(html, meta.title if meta else None, text) or _first_line_title(text, path.stem)
    return Document(
        None, title, text, str(path), sections=section_paths(html_headings(html, text), title), hidden=hidden
    )


def html_title(html: str, extracted: str | None, text: str) -> str | None:
    """The page's title: the extractor's when it is a line of the text kept (the page's own main
    heading), else the `<title>` element's. The extractor falls back on any heading of the page, and
    those of furniture hidden from readers (a help pop-up's "Keyboard shortcuts" on every page of
    a book made with mdBook) would name every page alike."""
    extracted = " ".join(extracted.split()) if extracted else None
    if extracted and any(line.strip() == extracted for line in text.splitlines()):
        return extracted
    import lxml.html

    try:
        element = lxml.html.fromstring(html).find(".//title")
    except (ValueError, lxml.etree.ParserError):
        element = None
    own = " ".join(element.text_content().split()) if element is not None else ""
    return own or extracted


def _squash(text: str) -> tuple[str, list[int]]:
    """`text` with each run of white space made one space, and the offset in `text` of each character."""
    out: list[str] = []
    where: list[int] = []
    for m in re.finditer(r"\S+", text):
        if out:
            out.append(" ")
            where.append(m.start())
        out.append(m.group())
        where.extend(range(m.start(), m.end()))
    return "".join(out), where


def html_headings(html: str, text: str) -> list[tuple[int, int, str]]:
    """The page's h1–h6 located in the extracted `text`: at the heading's own line when the
    extractor kept it, else where the text that follows the heading begins (extractors often drop
    headings inside page furniture). Headings not found are left out."""
    import lxml.html

    try:
        root = lxml.html.fromstring(html)
    except (ValueError, lxml.etree.ParserError):
        return []
    elements = list(root.iter())
    index = {id(e): i for i, e in enumerate(elements)}
    flat, where = _squash(text)
    out: list[tuple[int, int, str]] = []
    pos = 0  # in `flat`: headings are found in reading order
    for h in root.iter("h1", "h2", "h3", "h4", "h5", "h6"):
        heading = " ".join(h.text_content().split())
        if not heading:
            continue
        line = re.compile(rf"(?:^| ){re.escape(heading)}(?= |$)")
        found = line.search(flat, pos)
        at = found.start() + found.group().startswith(" ") if found else -1
        if at >= 0 and not _own_line(text, where[at], heading):
            at = -1
        if at < 0:
            after = index[id(h)] + sum(1 for _ in h.iterdescendants()) + 1
            probe = next(
                (
                    " ".join((e.text or "").split())[:40]
                    for e in elements[after:]
                    if isinstance(e.tag, str)
                    and e.tag not in ("h1", "h2", "h3", "h4", "h5", "h6")
                    and len(" ".join((e.text or "").split())) >= 25
                ),
                "",
            )
            at = flat.find(probe, pos) if probe else -1
        if at < 0:
            continue
        pos = at
        out.append((_line_start(text, where[at]), int(h.tag[1]), heading))
    return out


def _own_line(text: str, start: int, heading: str) -> bool:
    """The heading found at `start` of `text` is alone on its line."""
    end = start + len(heading)
    before = text.rfind("\n", 0, start)
    after = text.find("\n", start)
    return (
        text[before + 1 : start].strip() == ""
        and text[end : after if after >= 0 else len(text)].strip() == ""
    )


def _line_start(text: str, offset: int) -> int:
    return text.rfind("\n", 0, offset) + 1


def read_pdf(path: Path) -> Document:
    pypdf = require("pypdf", purpose="reading PDF files")
    logging.getLogger("pypdf").setLevel(logging.ERROR)  # damaged files are reported once, by us
    try:
        reader = pypdf.PdfReader(str(path))
        if reader.is_encrypted:
            raise UnreadableFile("the PDF is encrypted; decrypt it first")
        seen = [_visible_page_text(page) for page in reader.pages]
        pages = [text for text, _ in seen]
        hidden = sum(n for _, n in seen)
        title = reader.metadata.title if reader.metadata and reader.metadata.title else None
        outline = _outline(reader)
    except UnreadableFile:
        raise
    except Exception as e:  # pypdf raises many types on damaged files
        raise UnreadableFile(f"damaged or unsupported PDF ({type(e).__name__}: {e})") from e
    parts: list[str] = []
    starts: list[int] = []
    at = 0
    for page in pages:  # a blank page has no text, but keeps its number
        starts.append(at + (2 if parts else 0))
        if page.strip():
            if parts:
                at += 2
            parts.append(page.strip())
            at += len(parts[-1])
    text = "\n\n".join(parts)
    if not text:
        raise UnreadableFile("the PDF has no extractable text (scanned images need OCR first)")
    title = title or _first_line_title(text, path.stem)
    headings = _place_outline(outline, text, starts) if outline else numbered_headings(text)
    return Document(
        None, title, text, str(path), sections=section_paths(headings, title), pages=starts, hidden=hidden
    )


_SHOW_TEXT = {b"Tj", b"TJ", b"'", b'"'}
TINY_POINTS = 1.0  # text drawn smaller than this is not meant to be read


def _visible_page_text(page: Any) -> tuple[str, int]:
    """A PDF page's text without what is drawn invisible (text render mode 3 or 7), in white, or
    smaller than `TINY_POINTS`; and how many characters were left out. pypdf hands each run of text
    to the visitor when the next operator ends it, so a run is judged by the state at its last
    show-text operator (the one before the current one, when a show-text operator ended it)."""
    state: dict[str, Any] = {"mode": 0, "fill": (0.0,), "size": 12.0}
    saved: list[dict[str, Any]] = []
    shown: dict[str, Any] = {"now": None, "before": None, "last": b""}
    runs: list[tuple[str, bool]] = []

    def before(op: bytes, args: list[Any], cm: list[float], tm: list[float]) -> None:
        shown["last"] = op
        if op in _SHOW_TEXT:
            scale = (abs(tm[0] * cm[0]) + abs(tm[3] * cm[3])) / 2 or 1.0
            hidden = (
                state["mode"] in (3, 7)
                or (len(state["fill"]) in (1, 3) and min(state["fill"]) >= 0.95)
                or (len(state["fill"]) == 4 and max(state["fill"]) <= 0.05)  # CMYK white
                or state["size"] * scale < TINY_POINTS
            )
            shown["before"], shown["now"] = shown["now"], hidden
        elif op == b"Tr" and args:
            state["mode"] = int(args[0])
        elif op in (b"g", b"rg", b"k") and args:
            state["fill"] = tuple(float(a) for a in args)
        elif op == b"Tf" and len(args) > 1:
            state["size"] = float(args[1])
        elif op == b"q":
            saved.append(dict(state))
        elif op == b"Q" and saved:
            state.update(saved.pop())

    def visit(text: str, cm: Any, tm: Any, font: Any, size: Any) -> None:
        hidden = shown["before"] if shown["last"] in _SHOW_TEXT else shown["now"]
        runs.append((text, bool(hidden)))

    try:
        whole = page.extract_text(visitor_operand_before=before, visitor_text=visit) or ""
    except Exception:  # a damaged page: read it as pypdf does, without the check
        return page.extract_text() or "", 0
    left_out = sum(len(t.strip()) for t, hidden in runs if hidden)
    if not left_out:  # the text pypdf gives, read once
        return whole, 0
    return "".join(t if not hidden else ("\n" if t.endswith("\n") else "") for t, hidden in runs), left_out


def _outline(reader: Any) -> list[tuple[int, int, str]]:
    """The PDF's bookmarks: (page index, depth, title), in reading order; none when it has none."""
    out: list[tuple[int, int, str]] = []

    def walk(items: list[Any], depth: int) -> None:
        for item in items:
            if isinstance(item, list):
                walk(item, depth + 1)
            else:
                page = reader.get_destination_page_number(item)
                if page is not None and page >= 0 and getattr(item, "title", None):
                    out.append((page, depth, str(item.title)))

    walk(list(reader.outline or []), 1)
    return out


def _place_outline(
    outline: list[tuple[int, int, str]], text: str, starts: list[int]
) -> list[tuple[int, int, str]]:
    """Each bookmark at its heading's line on its page when the line is there, else at the page's start."""
    out = []
    for page, depth, heading in outline:
        begin = starts[page] if page < len(starts) else len(text)
        end = starts[page + 1] if page + 1 < len(starts) else len(text)
        found = re.search(
            rf"^[ \t]*{re.escape(' '.join(heading.split()))}[ \t]*$", text[begin:end], re.MULTILINE
        )
        out.append((begin + found.start() if found else begin, depth, heading))
    out.sort(key=lambda h: h[0])
    return out


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
            if (
                not isinstance(record, dict)
                or not isinstance(record.get("text"), str)
                or not record["text"].strip()
            ):
                problems.append(f'line {number}: no "text" string')
                continue
            if max_record_chars is not None and len(record["text"]) > max_record_chars:
                problems.append(
                    f"line {number}: text of {len(record['text']) / 1e6:.1f} M characters is larger than "
                    "ingest.max_record_mb; record skipped"
                )
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
        raise UnreadableFile(
            f"unsupported file type {suffix or '(none)'}; supported: {', '.join(sorted(SUPPORTED))}"
        )
