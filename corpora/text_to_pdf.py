"""Write plain text as a simple PDF (Helvetica, wrapped lines, several pages; a form feed starts a
new page), standard library only.

A line that starts with [[invisible]], [[white]] or [[tiny]] is drawn that way (text render mode 3,
white fill, a 0.5 pt font): the tests' hidden-text fixtures.

Used to make the PDF of the demo collection and PDF fixtures in tests:
    python corpora/text_to_pdf.py INPUT.txt OUTPUT.pdf "Title"
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

LINES_PER_PAGE = 46


def _escape(line: str) -> str:
    return line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


_STYLES = {
    "[[invisible]]": ("3 Tr\n", "0 Tr\n"),
    "[[white]]": ("1 1 1 rg\n", "0 0 0 rg\n"),
    "[[tiny]]": ("/F1 0.5 Tf\n", "/F1 11 Tf\n"),
}


def _draw(line: str) -> str:
    for mark, (on, off) in _STYLES.items():
        if line.startswith(mark):
            return f"{on}({_escape(line[len(mark):])}) '\n{off}"
    return f"({_escape(line)}) '\n"


def text_to_pdf(text: str, title: str = "") -> bytes:
    pages: list[list[str]] = []
    for part in text.split("\f"):  # a form feed starts a new page
        lines: list[str] = []
        for paragraph in part.split("\n"):
            lines.extend(textwrap.wrap(paragraph, 88) or [""])
        pages += [lines[i:i + LINES_PER_PAGE] for i in range(0, len(lines), LINES_PER_PAGE)] or [[""]]
    objects: list[bytes] = []
    font_id = 3
    page_ids = []
    for page_lines in pages:
        stream = "BT /F1 11 Tf 14 TL 60 780 Td\n" + "".join(_draw(line) for line in page_lines) + "ET"
        data = stream.encode("latin-1", "replace")
        content_id = 4 + len(objects)
        objects.append(b"<< /Length %d >>\nstream\n" % len(data) + data + b"\nendstream")
        page_id = 4 + len(objects)
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 %d 0 R >> >> "
            b"/Contents %d 0 R >>" % (font_id, content_id)
        )
        page_ids.append(page_id)
    info_id = 4 + len(objects)
    objects.append(b"<< /Title (%s) /Producer (retrac-local text_to_pdf) >>" % _escape(title).encode("latin-1", "replace"))
    head = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [%s] /Count %d >>" % (b" ".join(b"%d 0 R" % p for p in page_ids), len(page_ids)),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
    ]
    all_objects = head + objects
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(all_objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(all_objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R /Info %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(all_objects) + 1, info_id, xref)
    return bytes(out)


if __name__ == "__main__":
    source, target, title = sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else ""
    Path(target).write_bytes(text_to_pdf(Path(source).read_text(encoding="utf-8"), title))
