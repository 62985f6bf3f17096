"""HotpotQA-long (`eval/longdocs.py`): paragraphs bound into long documents, and retrieval scored
by the paragraphs a chunk holds. Synthetic paragraphs, hashing embeddings."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from retrac_local.cli.main import cli
from retrac_local.contract.events import RunResult, RunStatus
from retrac_local.errors import RetracError
from retrac_local.eval.harness import score
from retrac_local.eval.longdocs import (
    Section,
    build,
    by_paragraph,
    group_sizes,
    held,
    paragraph_map,
    read_layout,
)
from retrac_local.eval.questions import EvalQuestion

WORDS = [
    "harbour",
    "lantern",
    "granite",
    "ferry",
    "orchard",
    "quarry",
    "beacon",
    "tide",
    "cliff",
    "meadow",
    "signal",
    "bell",
]


def _corpus(tmp_path: Path, n: int = 25) -> tuple[Path, dict[str, tuple[str, str]]]:
    rng = random.Random(7)
    paragraphs = {}
    for i in range(n):
        words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(30, 140)))
        paragraphs[f"p-{i:03d}"] = (f"Place {i}", f"Place {i} is known for its {words}.")
    path = tmp_path / "corpus.jsonl"
    path.write_text(
        "".join(json.dumps({"doc_id": d, "title": t, "text": x}) + "\n" for d, (t, x) in paragraphs.items())
    )
    return path, paragraphs


def test_group_sizes_cover_everything_within_bounds() -> None:
    for total in (1, 7, 30, 59, 61, 1000):
        sizes = group_sizes(total, 30, 60, random.Random(total))
        assert sum(sizes) == total
        assert all(30 <= s <= 60 for s in sizes[:-1]) and 1 <= sizes[-1] <= 60
    with pytest.raises(RetracError, match="low <= high"):
        group_sizes(10, 5, 4, random.Random(0))


def test_build_puts_every_paragraph_once_where_the_layout_says(tmp_path: Path) -> None:
    corpus, paragraphs = _corpus(tmp_path)
    layout = build(corpus, tmp_path / "out", seed=3, low=4, high=7)
    placed = [s.doc_id for sections in layout.values() for s in sections]
    assert sorted(placed) == sorted(paragraphs)
    assert all(4 <= len(s) <= 7 for s in list(layout.values())[:-1])
    for name, sections in layout.items():
        text = (tmp_path / "out" / "docs" / f"{name}.md").read_text()
        assert text.startswith(f"# HotpotQA-long {name[-4:]}\n")
        for s in sections:
            title, body = paragraphs[s.doc_id]
            assert text[s.start : s.end] == body
            assert (
                text[: s.start].rstrip().endswith(f"## {title}")
            )  # each paragraph is a section under its title
    assert read_layout(tmp_path / "out" / "layout.json") == layout


def test_the_seed_fixes_the_grouping(tmp_path: Path) -> None:
    corpus, _ = _corpus(tmp_path)
    first = build(corpus, tmp_path / "a", seed=1, low=4, high=7)
    again = build(corpus, tmp_path / "b", seed=1, low=4, high=7)
    other = build(corpus, tmp_path / "c", seed=2, low=4, high=7)
    assert first == again
    assert [
        (tmp_path / "a" / "docs" / f).read_bytes()
        for f in sorted(p.name for p in (tmp_path / "a" / "docs").iterdir())
    ] == [
        (tmp_path / "b" / "docs" / f).read_bytes()
        for f in sorted(p.name for p in (tmp_path / "b" / "docs").iterdir())
    ]
    assert first != other


def test_a_rebuild_with_fewer_documents_leaves_none_of_the_old_ones(tmp_path: Path) -> None:
    corpus, _ = _corpus(tmp_path)
    build(corpus, tmp_path / "out", seed=0, low=2, high=3)
    layout = build(corpus, tmp_path / "out", seed=0, low=8, high=12)
    assert sorted(p.stem for p in (tmp_path / "out" / "docs").iterdir()) == sorted(layout)


def test_a_chunk_holds_a_paragraph_only_with_enough_of_it() -> None:
    sections = [Section("a", 0, 1000), Section("b", 1010, 1100), Section("c", 1110, 3000)]
    assert held(0, 1000, sections) == ["a"]
    assert held(900, 1150, sections) == ["b"]  # 100 chars of a (< 200), all of b, 40 of c
    assert held(700, 1400, sections) == ["a", "b", "c"]  # 300 of a, all of b, 290 of c
    assert held(1060, 1120, sections) == []  # under half of b, a sliver of c
    assert held(1060, 1100, sections) == []
    assert held(1055, 1105, sections) == ["b"]  # half of a short paragraph counts


def test_a_bad_corpus_line_is_named(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"doc_id": "x", "title": "X", "text": "fine"}\n{"doc_id": "y"}\n')
    with pytest.raises(RetracError, match=r"bad\.jsonl, line 2"):
        build(bad, tmp_path / "out")


def test_ingested_long_documents_map_chunks_to_their_paragraphs(
    tmp_path: Path, runner, isolated_home: Path
) -> None:
    from retrac_local.cli.app import make_app

    corpus, paragraphs = _corpus(tmp_path, n=40)
    layout = build(corpus, tmp_path / "out", seed=0, low=10, high=16)
    result = runner.invoke(cli, ["ingest", str(tmp_path / "out" / "docs")])
    assert result.exit_code == 0, result.output
    store = make_app().corpus
    mapping = paragraph_map(layout, store)
    assert len(mapping) > len(layout)  # several chunks a document
    held_somewhere = {p for ps in mapping.values() for p in ps}
    assert held_somewhere == set(paragraphs)  # every paragraph is readable in some chunk
    for chunk_id, ids in mapping.items():
        text = store.get_chunk(chunk_id).text
        for p in ids:  # a chunk that holds a paragraph holds a real piece of its text
            body = paragraphs[p][1]
            assert any(body[i : i + 60] in text for i in range(0, max(len(body) - 60, 1), 30))

    units = by_paragraph(mapping)
    some = [c for c, ids in mapping.items() if ids][:3]
    assert units(some + some) == list(dict.fromkeys(p for c in some for p in mapping[c]))

    # Scored with the map, doc recall counts gold paragraphs, not long documents.
    gold = mapping[some[0]][:1] + ["p-not-retrieved"]
    question = EvalQuestion("q1", "Where?", ["x"], supporting_doc_ids=gold)
    run = RunResult(
        "r",
        "Where?",
        RunStatus.ANSWERED,
        "x",
        [],
        1,
        "answered",
        1,
        10,
        1,
        10,
        1.0,
        1.0,
        retrieved=some,
        first_retrieved=some[:1],
    )
    row = score(question, "rag", run, units)
    assert row.doc_recall == 0.5 and row.first_doc_recall == 0.5
    assert set(row.retrieved_doc_ids) <= set(paragraphs)


def test_a_layout_not_in_the_collection_is_refused(tmp_path: Path, runner) -> None:
    from retrac_local.cli.app import make_app

    corpus, _ = _corpus(tmp_path, n=12)
    layout = build(corpus, tmp_path / "out", seed=0, low=5, high=7)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "note.md").write_text("# Note\n\nSomething else entirely.\n")
    assert runner.invoke(cli, ["ingest", str(tmp_path / "other")]).exit_code == 0
    with pytest.raises(RetracError, match="not in this collection; ingest the layout's docs folder"):
        paragraph_map(layout, make_app().corpus)
    (tmp_path / "out" / "layout.json").write_text("{}")
    with pytest.raises(RetracError, match="not a layout"):
        read_layout(tmp_path / "out" / "layout.json")
