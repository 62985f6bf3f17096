"""Long documents: passages rather than documents, chunks that know their section and page, `open`
reading a hit's section, and all of it through to citations. Synthetic documents, the scripted LLM
and hashing embeddings."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from retrac_local.contract.tools import OpenArgs, OpenTool, SearchArgs, SearchTool
from retrac_local.corpus.base import Chunk, Hit
from retrac_local.corpus.fake import MemoryCorpus
from retrac_local.corpus.ingest import chunks_of
from retrac_local.corpus.passages import select
from retrac_local.corpus.readers import (
    Document,
    html_headings,
    markdown_headings,
    names_the_title,
    read_html,
    read_markdown,
    read_pdf,
    section_paths,
)

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "corpora"))
from text_to_pdf import text_to_pdf  # noqa: E402

FILLER = "The valve is checked every spring and its seals are replaced when worn. "


def hit(doc: str, index: int, score: float) -> Hit:
    return Hit(Chunk(f"{doc}#{index}", doc, doc.title(), doc, index, 0, 1, "x"), score)


def test_passages_several_of_one_document_but_no_neighbours_and_the_rest_counted() -> None:
    ranked = [
        hit("manual", 4, 9),
        hit("manual", 5, 8),
        hit("manual", 9, 7),
        hit("notes", 0, 6),
        hit("manual", 1, 5),
    ]
    chosen = select(ranked, k=3)
    assert [h.chunk.chunk_id for h in chosen] == ["manual#4", "manual#9", "notes#0"]  # manual#5 is next to #4
    assert [h.more for h in chosen] == [2, 2, 0]  # manual#5 and manual#1 were not shown
    one_each = select(ranked, k=3, one_per_document=True)
    assert [h.chunk.chunk_id for h in one_each] == ["manual#4", "notes#0"]


def test_markdown_headings_become_section_paths_outside_code_fences(tmp_path: Path) -> None:
    text = (
        "# Pump manual\n\nIntro.\n\n## Install\n\nSteps.\n\n### On Linux\n\nUse apt.\n\n"
        "```\n# not a heading\n```\n\n## Repair\n\nSeals.\n"
    )
    assert [h[2] for h in markdown_headings(text)] == ["Pump manual", "Install", "On Linux", "Repair"]
    (tmp_path / "pump.md").write_text(text)
    doc = read_markdown(tmp_path / "pump.md")
    assert doc.title == "Pump manual"
    assert [p for _, p in doc.sections] == ["Install", "Install › On Linux", "Repair"]
    assert text[doc.sections[1][0] :].startswith("### On Linux")


def test_chunks_never_cross_a_section_and_carry_its_path_and_page() -> None:
    body = FILLER * 12
    text = f"# Pump manual\n\n## Install\n\n{body}\n\n## Repair\n\n{body}\n"
    starts = [text.index("## Install"), text.index("## Repair")]
    doc = Document(
        "pump",
        "Pump manual",
        text,
        "pump.pdf",
        sections=[(starts[0], "Install"), (starts[1], "Repair")],
        pages=[0, text.index("## Repair") + 40],
    )
    chunks = chunks_of(doc, "pump", words=60, overlap=10)
    assert len(chunks) >= 6
    for c in chunks:
        assert not (c.start < starts[1] < c.end)  # no chunk spans the start of "Repair"
        assert c.text == text[c.start : c.end]
    install = [c for c in chunks if c.section == "Install"]
    repair = [c for c in chunks if c.section == "Repair"]
    assert install and repair and {c.page for c in install} == {1}
    assert repair[0].page == 1 and repair[-1].page == 2  # a page starts inside the section
    assert repair[-1].label == "Pump manual › Repair (p. 2)" and repair[-1].subject == "Repair"


def test_html_headings_are_found_where_the_extractor_kept_them_or_where_their_text_begins(
    tmp_path: Path,
) -> None:
    kept = (
        "<html><head><title>Guide</title></head><body><article><h1>Guide</h1>"
        "<p>Intro text here that is long enough to be kept by the extractor.</p><h2>Install</h2>"
        "<p>Run the installer and wait for it to finish completely before you go on.</p><h3>On Linux</h3>"
        "<p>Use the package manager of your distribution to install the tool.</p></article></body></html>"
    )
    (tmp_path / "kept.html").write_text(kept)
    doc = read_html(tmp_path / "kept.html")
    paths = dict((p, o) for o, p in doc.sections)
    assert list(paths) == ["Install", "Install › On Linux"]
    assert doc.text[paths["Install › On Linux"] :].startswith("On Linux")
    # A page whose headings sit in furniture the extractor drops: the section starts at its text.
    text = (
        "Memcheck finds errors in memory use of C programs.\nIt runs your program on a virtual CPU.\n"
        "Illegal reads happen when a program reads memory it should not read.\n"
    )
    html = (
        "<html><body><div class='titlepage'><h2>4.1. Overview</h2></div><p>Memcheck finds errors in memory use "
        "of C programs.</p><p>It runs your program on a virtual CPU.</p><div class='titlepage'><h3>4.1.1. "
        "Illegal reads</h3></div><p>Illegal reads happen when a program reads memory it should not read.</p>"
        "</body></html>"
    )
    found = section_paths(html_headings(html, text), "Memcheck")
    assert [p for _, p in found] == ["4.1. Overview", "4.1. Overview › 4.1.1. Illegal reads"]
    assert text[found[1][0] :].startswith("Illegal reads happen")


def _pdf_with_outline(path: Path) -> None:
    from pypdf import PdfReader, PdfWriter

    pages = [
        "Pump manual\n\n1 Installation\n" + FILLER * 3,
        "2 Repair\n" + FILLER * 2 + "\n\n2.1 Seals\n" + FILLER * 2,
        "3 Parts\n" + FILLER,
    ]
    raw = path.with_suffix(".raw.pdf")
    raw.write_bytes(text_to_pdf("\f".join(pages), "Pump manual"))
    writer = PdfWriter(clone_from=PdfReader(raw))
    writer.add_outline_item(title="1 Installation", page_number=0)
    repair = writer.add_outline_item(title="2 Repair", page_number=1)
    writer.add_outline_item(title="2.1 Seals", page_number=1, parent=repair)
    writer.add_outline_item(title="3 Parts", page_number=2)
    with path.open("wb") as f:
        writer.write(f)


def test_a_pdf_knows_its_pages_and_its_outline(tmp_path: Path) -> None:
    _pdf_with_outline(tmp_path / "pump.pdf")
    doc = read_pdf(tmp_path / "pump.pdf")
    assert len(doc.pages) == 3 and doc.pages[0] == 0
    assert [p for _, p in doc.sections] == ["1 Installation", "2 Repair", "2 Repair › 2.1 Seals", "3 Parts"]
    seals = dict((p, o) for o, p in doc.sections)["2 Repair › 2.1 Seals"]
    assert doc.text[seals:].startswith("2.1 Seals") and doc.pages[1] <= seals < doc.pages[2]
    chunks = chunks_of(doc, "pump", words=40, overlap=5)
    assert {(c.section, c.page) for c in chunks} >= {
        ("1 Installation", 1),
        ("2 Repair › 2.1 Seals", 2),
        ("3 Parts", 3),
    }


def test_a_pdf_without_an_outline_takes_its_numbered_headings(tmp_path: Path) -> None:
    text = "Annual report\n\n1 Summary\n" + FILLER + "\n\n1.1 Method\n" + FILLER + "\n\n2 Results\n" + FILLER
    (tmp_path / "report.pdf").write_bytes(text_to_pdf(text, "Annual report"))
    doc = read_pdf(tmp_path / "report.pdf")
    assert [p for _, p in doc.sections] == ["1 Summary", "1 Summary › 1.1 Method", "2 Results"]


def sectioned() -> MemoryCorpus:
    text = (
        "# Engineers\n\n## Ada Vellacott\n\n"
        + FILLER * 4
        + "Ada Vellacott designed the Karn Point tower. "
        + FILLER * 4
        + "\n\n## Jonas Pell\n\nJonas Pell was a lighthouse engineer born in 1856 in Orley. "
        + FILLER * 2
    )
    headings = markdown_headings(text)
    return MemoryCorpus().add(
        "engineers",
        "Engineers",
        text,
        chunk_words=30,
        sections=section_paths(headings, "Engineers"),
        pages=[0, text.index("## Jonas Pell")],
    )


def test_the_planner_sees_section_page_and_how_many_more_the_document_has() -> None:
    observation = SearchTool(sectioned(), k=3)(SearchArgs(tool="search", query="valve seals spring"))
    lines = observation.text.splitlines()[1:]
    assert len(lines) == 3 and all("[engineers#" in line for line in lines)
    assert (
        "Engineers › Ada Vellacott (p. 1) (+" in observation.text
        and "more in this document" in observation.text
    )


def test_open_reads_the_section_around_a_hit_within_its_word_limit() -> None:
    corpus = sectioned()
    ada = [c for c in corpus.chunks.values() if c.section == "Ada Vellacott"]
    middle = ada[len(ada) // 2]
    opened = OpenTool(corpus, window=1, max_words=120)(OpenArgs(tool="open", id=middle.chunk_id))
    shown = opened.chunks
    assert middle in shown and len(shown) > 3  # more than the chunk and its two neighbours
    assert all(c.section == "Ada Vellacott" for c in shown)  # never into the next section
    assert sum(len(c.text.split()) for c in shown) <= 120
    assert [c.chunk_index for c in shown] == sorted(c.chunk_index for c in shown)
    assert opened.text.startswith(f"open {middle.chunk_id} (Engineers › Ada Vellacott (p. 1)):")


@pytest.mark.parametrize("page", [1, 2])
def test_citations_name_the_section_and_the_page(
    settings, page: int, capsys: pytest.CaptureFixture[str]
) -> None:
    from retrac_local.agent.loop import ResearchAgent
    from retrac_local.cli.render import render_result
    from retrac_local.contract.events import RunFinished, RunStatus
    from retrac_local.llm.fake import ScriptedLLM
    from retrac_local.runstore import RunStore
    from tests.scripts import constraints, final, finish, open_, search, update

    corpus = sectioned()
    question, answer = (
        ("Who designed the Karn Point tower?", "Ada Vellacott")
        if page == 1
        else ("Where was the lighthouse engineer Jonas Pell born?", "Orley")
    )
    fact = (
        "Ada Vellacott designed the Karn Point tower" if page == 1 else "Jonas Pell was born in 1856 in Orley"
    )
    llm = ScriptedLLM().enqueue(
        constraints(),
        open_("no-such#1"),
        search(question.lower()),
        update(facts=[fact]),
        finish(answer),
        update(answer=answer),
        final(answer, "E1"),
    )
    settings = settings.model_copy(
        update={"budget": settings.budget.model_copy(update={"max_steps_per_round": 4})}
    )
    agent = ResearchAgent(llm, llm, corpus, settings, RunStore(settings.runs_db))
    result = [e for e in agent.ask(question) if isinstance(e, RunFinished)][0].result
    assert result.status == RunStatus.ANSWERED and result.citations
    cited = result.citations[0]
    assert (cited.section, cited.page) == (("Ada Vellacott", 1) if page == 1 else ("Jonas Pell", 2))
    render_result(result)
    assert f"Engineers › {cited.section} (p. {page})" in capsys.readouterr().out


def test_a_store_ingested_from_files_searches_passages_with_sections_and_pages(
    tmp_path: Path, runner
) -> None:
    from retrac_local.cli.app import make_app
    from retrac_local.cli.main import cli

    docs = tmp_path / "docs"
    docs.mkdir()
    _pdf_with_outline(docs / "pump.pdf")
    (docs / "pump.raw.pdf").unlink()
    (docs / "guide.md").write_text(
        "# Guide\n\n## Valves\n\n" + FILLER * 8 + "\n\n## Seals\n\n" + FILLER * 8 + "\n"
    )
    assert runner.invoke(cli, ["ingest", str(docs)]).exit_code == 0
    store = make_app().corpus
    hits = store.search("valve seals spring", k=6)
    assert len({h.chunk.doc_id for h in hits}) < len(hits)  # several passages of one document
    assert all(
        abs(a.chunk.chunk_index - b.chunk.chunk_index) > 1
        for a in hits
        for b in hits
        if a is not b and a.chunk.doc_id == b.chunk.doc_id
    )
    assert {h.chunk.section for h in hits if h.chunk.doc_id == "guide"} <= {"Valves", "Seals"}
    assert {h.chunk.page for h in hits if h.chunk.doc_id == "pump"} <= {1, 2, 3} and any(
        h.chunk.page for h in hits if h.chunk.doc_id == "pump"
    )
    assert len(store.search("valve seals spring", k=6, dedupe_documents=True)) == 2
    shown = runner.invoke(cli, ["search", "valve seals spring", "-k", "3"]).output
    assert "more in this document" in shown and " › " in shown


def test_a_store_written_before_sections_gains_them_and_still_reads(tmp_path: Path, monkeypatch) -> None:
    import lancedb
    import pyarrow as pa

    from retrac_local.corpus.embedder import HashingEmbedder
    from retrac_local.corpus.store import CorpusStore

    path = tmp_path / "old"
    embedder = HashingEmbedder()
    db = lancedb.connect(str(path))
    schema = pa.schema(
        [
            ("chunk_id", pa.string()),
            ("doc_id", pa.string()),
            ("title", pa.string()),
            ("source", pa.string()),
            ("chunk_index", pa.int32()),
            ("start", pa.int64()),
            ("end", pa.int64()),
            ("text", pa.string()),
            ("fts_text", pa.string()),
            ("vector", pa.list_(pa.float32(), embedder.dim)),
        ]
    )
    text = "The old store holds one chunk about lighthouses."
    db.create_table(
        "chunks",
        data=[
            {
                "chunk_id": "old#0",
                "doc_id": "old",
                "title": "Old",
                "source": "old.txt",
                "chunk_index": 0,
                "start": 0,
                "end": len(text),
                "text": text,
                "fts_text": text,
                "vector": embedder.embed([text])[0].tolist(),
            }
        ],
        schema=schema,
    )
    (path / "meta.json").write_text(f'{{"embedder": "{embedder.name}", "dim": {embedder.dim}}}')
    store = CorpusStore(path, lambda: embedder)
    store.finish_writes()
    chunk = store.get_chunk("old#0")
    assert chunk is not None and (chunk.section, chunk.page, chunk.text) == ("", 0, text)
    assert [h.chunk.chunk_id for h in store.search("lighthouses", k=2)] == ["old#0"]


def test_a_heading_names_the_title_when_it_is_the_page_or_the_site_part_of_it() -> None:
    assert names_the_title("Pump seals", "Pump seals")
    assert names_the_title("Pump seals", "Pump seals - The Pump Manual")
    assert names_the_title("The Pump Manual", "Pump seals | The Pump Manual")  # the site's banner
    assert not names_the_title("Pump", "Pump seals - The Pump Manual")  # a word of it is not it
    assert not names_the_title("Replacing a seal", "Pump seals - The Pump Manual")
    assert not names_the_title("Seals", "Seals and gaskets")


def test_a_page_is_named_by_its_title_element_not_by_a_hidden_help_heading(tmp_path: Path) -> None:
    # The shape of a page of a book made with mdBook: a help pop-up (hidden by its style sheet)
    # opens the body with its own h2, then the site's menu bar, then the chapter.
    (tmp_path / "seals.html").write_text(
        """<html><head><title>Pump seals - The Pump Manual</title></head><body>
<div id="mdbook-help-container"><div id="mdbook-help-popup"><h2>Keyboard shortcuts</h2>
<div><p>Press <kbd>&#8592;</kbd> or <kbd>&#8594;</kbd> to navigate between chapters</p></div></div></div>
<div id="menu-bar"><h1 class="menu-title">The Pump Manual</h1></div>
<main><h1>Pump seals</h1>
<p>Every pump in the plant has two mechanical seals that keep the water inside the casing.</p>
<h2>Replacing a seal</h2>
<p>Close both valves, drain the casing, and take the old seal out with the puller.</p></main>
</body></html>"""
    )
    doc = read_html(tmp_path / "seals.html")
    assert doc.title == "Pump seals - The Pump Manual"
    paths = [path for _, path in doc.sections]
    assert "Replacing a seal" in paths  # not under the page's or the site's name
    assert not any(p.startswith(("Pump seals", "The Pump Manual")) for p in paths)
    assert not any("Keyboard shortcuts" in p for p in paths if "Replacing" in p)


def test_the_extractor_s_title_stays_when_it_is_the_page_s_own_heading(tmp_path: Path) -> None:
    (tmp_path / "ferries.html").write_text(
        "<html><head><title>Gull Line ferries</title></head><body><article><h1>Gull Line</h1>"
        "<p>The Gull Line ran ferries between the two harbours of the bay for sixty years.</p>"
        "</article></body></html>"
    )
    assert read_html(tmp_path / "ferries.html").title == "Gull Line"
