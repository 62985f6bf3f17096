"""HotpotQA-long: the evaluation's paragraphs bound into long documents, to measure what long
documents cost.

`build` groups the paragraphs of a corpus file (JSON Lines of {"doc_id", "title", "text"}) at random,
with a fixed seed, into Markdown documents of `low`–`high` paragraphs, each paragraph a section
headed by its title (the last document takes what is left, and may be shorter):

    OUT/docs/long-0001.md   "# HotpotQA-long 0001", then "## <title>" and the text of each paragraph
    OUT/layout.json         per document: each paragraph's doc_id and [start, end) in the stored text

A question's gold paragraphs then sit inside long documents, among dozens of others. Ingest
OUT/docs into a home of its own and run `retrac eval --layout OUT/layout.json`: retrieval is scored
by the paragraphs the retrieved chunks hold (`paragraph_map`), so doc recall keeps its meaning.

    python -m retrac_local.eval.longdocs --corpus ../shared/eval/corpus.jsonl --out bench-out/hotpotqa-long
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import click

from retrac_local.errors import RetracError
from retrac_local.untrusted import clean_document

LAYOUT_FILE = "layout.json"
DOCS_DIR = "docs"
# A chunk holds a paragraph when it holds at least this much of it (or all of a shorter paragraph):
# a heading or a sentence's tail that spills over a chunk border does not count as having read it.
MIN_OVERLAP_CHARS = 200
MIN_OVERLAP_SHARE = 0.5


@dataclass(frozen=True)
class Section:
    doc_id: str  # the paragraph's id in the paragraph-level corpus
    start: int  # [start, end) of its text in the long document's stored text
    end: int


def _paragraphs(corpus: Path) -> list[tuple[str, str, str]]:
    try:
        lines = corpus.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise RetracError(f"cannot read the corpus file {corpus}: {e}") from e
    out = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            out.append((str(row["doc_id"]), str(row["title"]), str(row["text"])))
        except (ValueError, KeyError, TypeError) as e:
            raise RetracError(
                f"{corpus}, line {number}: not a paragraph record ({e!r}); each line needs "
                '{"doc_id", "title", "text"}'
            ) from e
    return out


def group_sizes(total: int, low: int, high: int, rng: random.Random) -> list[int]:
    """Sizes in [low, high] summing to `total`; the last one takes the rest (it may be below `low`)."""
    if not 1 <= low <= high:
        raise RetracError(f"need 1 <= low <= high paragraphs a document, got low={low}, high={high}")
    sizes: list[int] = []
    remaining = total
    while remaining:
        n = remaining if remaining <= high else rng.randint(low, min(high, max(low, remaining - low)))
        sizes.append(n)
        remaining -= n
    return sizes


def compose(title: str, paragraphs: Iterable[tuple[str, str, str]]) -> tuple[str, list[Section]]:
    """A long document's text as it will be stored (cleaned as ingest cleans it), and where each
    paragraph's text lies in it."""
    parts, sections, at = [], [], 0

    def add(piece: str) -> int:
        nonlocal at
        parts.append(piece)
        at += len(piece)
        return at

    add(f"# {clean_document(title)}\n")
    for doc_id, heading, text in paragraphs:
        add(f"\n## {clean_document(' '.join(heading.split()))}\n\n")
        body = clean_document(text.strip())
        start = at
        sections.append(Section(doc_id, start, add(body)))
        add("\n")
    full = "".join(parts)
    if clean_document(full) != full:  # cleaning is per character: the whole must come out the same
        raise RetracError(f"{title}: its text changes when cleaned again; the offsets would not hold")
    return full, sections


def build(corpus: Path, out: Path, seed: int = 0, low: int = 30, high: int = 60) -> dict[str, list[Section]]:
    """Write OUT/docs/*.md and OUT/layout.json; the same corpus and seed give the same files."""
    paragraphs = _paragraphs(corpus)
    if not paragraphs:
        raise RetracError(f"{corpus} holds no paragraphs")
    rng = random.Random(seed)
    order = list(range(len(paragraphs)))
    rng.shuffle(order)
    docs = out / DOCS_DIR
    docs.mkdir(parents=True, exist_ok=True)
    for stale in docs.glob("long-*.md"):
        stale.unlink()
    layout: dict[str, list[Section]] = {}
    at = 0
    for number, size in enumerate(group_sizes(len(paragraphs), low, high, rng), 1):
        name = f"long-{number:04d}"
        text, sections = compose(
            f"HotpotQA-long {number:04d}", (paragraphs[i] for i in order[at : at + size])
        )
        (docs / f"{name}.md").write_text(text, encoding="utf-8")
        layout[name] = sections
        at += size
    (out / LAYOUT_FILE).write_text(
        json.dumps(
            {
                "corpus": corpus.name,
                "seed": seed,
                "low": low,
                "high": high,
                "documents": {
                    name: [[s.doc_id, s.start, s.end] for s in sections] for name, sections in layout.items()
                },
            },
        ),
        encoding="utf-8",
    )
    return layout


def read_layout(path: Path) -> dict[str, list[Section]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return {
            name: [Section(d, int(s), int(e)) for d, s, e in rows] for name, rows in data["documents"].items()
        }
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise RetracError(
            f"{path} is not a layout written by `python -m retrac_local.eval.longdocs` ({e!r}); "
            "build it again"
        ) from e


def held(start: int, end: int, sections: list[Section]) -> list[str]:
    """The paragraphs that the text [start, end) holds (see MIN_OVERLAP_*)."""
    out = []
    for s in sections:
        overlap = min(end, s.end) - max(start, s.start)
        if overlap > 0 and overlap >= min(MIN_OVERLAP_CHARS, MIN_OVERLAP_SHARE * (s.end - s.start)):
            out.append(s.doc_id)
    return out


def paragraph_map(layout: dict[str, list[Section]], corpus: object) -> dict[str, list[str]]:
    """Chunk id → the paragraphs it holds, for every chunk of the layout's documents in `corpus`
    (a `CorpusStore`: its chunks know their offsets). A layout whose documents are not in the
    corpus is an error: the scores would all be zero."""
    out: dict[str, list[str]] = {}
    missing = []
    for name, sections in layout.items():
        chunks = corpus.document_chunks(name)  # type: ignore[attr-defined]
        if not chunks:
            missing.append(name)
        for c in chunks:
            out[c.chunk_id] = held(c.start, c.end, sections)
    if missing:
        raise RetracError(
            f"{len(missing)} of the layout's {len(layout)} documents (e.g. {missing[0]}) are not in this "
            "collection; ingest the layout's docs folder into it first"
        )
    return out


def by_paragraph(paragraphs: dict[str, list[str]]) -> Callable[[list[str]], list[str]]:
    """Retrieved chunk ids → the paragraphs they hold, first-seen order (`harness.Units`)."""
    return lambda chunk_ids: list(dict.fromkeys(p for c in chunk_ids for p in paragraphs.get(c, [])))


@click.command()
@click.option(
    "--corpus",
    type=click.Path(path_type=Path, dir_okay=False, exists=True),
    required=True,
    help='JSON Lines of {"doc_id", "title", "text"} paragraphs',
)
@click.option("--out", type=click.Path(path_type=Path, file_okay=False), required=True)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option(
    "--low", type=click.IntRange(min=1), default=30, show_default=True, help="paragraphs a document, at least"
)
@click.option(
    "--high", type=click.IntRange(min=1), default=60, show_default=True, help="paragraphs a document, at most"
)
def main(corpus: Path, out: Path, seed: int, low: int, high: int) -> None:
    """Build HotpotQA-long: long Markdown documents of the corpus's paragraphs, and their layout."""
    try:
        layout = build(corpus, out, seed, low, high)
    except RetracError as e:
        raise click.ClickException(str(e)) from e
    sizes = [len(s) for s in layout.values()]
    click.echo(
        f"{len(layout)} documents of {min(sizes)}–{max(sizes)} paragraphs ({sum(sizes)} in all) "
        f"in {out / DOCS_DIR}; layout in {out / LAYOUT_FILE}"
    )


if __name__ == "__main__":
    main()
