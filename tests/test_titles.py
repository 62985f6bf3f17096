"""The collection's titles found in text, and offered as the next searches: a passage that names
another document of the collection points at where to read next."""

from __future__ import annotations

from retrac_local.agent.candidates import TITLED, propose
from retrac_local.agent.titles import TitleIndex
from retrac_local.agent.toolbox import query_key
from retrac_local.contract.state import ResearchState
from retrac_local.corpus.fake import MemoryCorpus


def _found(index: TitleIndex, text: str) -> list[tuple[str, str]]:
    return [(m.written, m.title) for m in index.find(text)]


def test_titles_are_found_as_whole_words_case_aside_and_without_their_qualifier() -> None:
    index = TitleIndex(["Vell Harbour", "Jonas Pell (engineer)", "Marsh lantern", "The", "Arco", "1887"])
    text = "Built at Vell Harbour by the engineer Jonas Pell, the tower houses a marsh lantern; the Arcon lamp dates from 1887."
    assert _found(index, text) == [
        ("Vell Harbour", "Vell Harbour"),
        ("Jonas Pell", "Jonas Pell (engineer)"),
        ("marsh lantern", "Marsh lantern"),
    ]
    assert [m.named for m in index.find(text)] == [True, True, False]
    # Short titles, stop words and numbers match nothing; "Arco" is not a word of "Arcon".
    assert len(TitleIndex(["The", "Arc", "1887", "Of The"])) == 0


def test_the_longest_title_wins_where_titles_overlap() -> None:
    index = TitleIndex(["Orrin", "Orrin Lights Board", "Lights"])
    assert _found(index, "run by the Orrin Lights Board since 1850") == [
        ("Orrin Lights Board", "Orrin Lights Board")
    ]


def test_a_qualified_title_is_matched_only_where_the_text_names_it_as_such() -> None:
    index = TitleIndex(["Band (rock group)", "Again (Kell song)", "Milan (film)", "Hillwort"])
    # In lower case only a whole title: "the hillwort" is a document, "the band" is not "Band (rock group)".
    assert _found(index, "The band kept a hillwort.") == [("hillwort", "Hillwort")]
    # One word of a qualified title needs its qualifier spoken of.
    assert _found(index, "Their single Again reached the charts.") == []
    assert _found(index, "Their song Again reached the charts.") == [("Again", "Again (Kell song)")]
    # A name is matched whole: "Milan" is not found inside "Inter Milan", nor a first word alone.
    assert _found(index, "He joined Inter Milan, a film club.") == []
    assert _found(index, "Milan is a film.") == []


def test_a_subject_other_titles_are_built_on_is_broad() -> None:
    index = TitleIndex(["Orrin Isles", "Orrin Isles Ferry", "History of the Orrin Isles", "Ada Vellacott"])
    found = {m.title: m.broad for m in index.find("Ada Vellacott sailed to the Orrin Isles.")}
    assert found == {"Ada Vellacott": False, "Orrin Isles": True}


def test_a_broad_title_comes_after_the_specific_ones() -> None:
    corpus = (
        MemoryCorpus()
        .add(
            "light",
            "Karn Point Lighthouse",
            "Karn Point Lighthouse, in the Orrin Isles, was designed by the civil engineer Ada Vellacott.",
        )
        .add("isles", "Orrin Isles", "The Orrin Isles lie north of Hesk.")
        .add("ada", "Ada Vellacott", "Ada Vellacott was born in 1849.")
    )
    titles = TitleIndex([*corpus.titles(), "Orrin Isles Ferry", "Bishops of the Orrin Isles"])
    question = "In which year was the designer of Karn Point Lighthouse born?"
    found = propose(
        ResearchState(question=question), {query_key(question)}, [corpus.chunks["light#0"]], titles=titles
    )
    assert [c.query for c in found][:2] == ["Ada Vellacott", "Orrin Isles"]


def test_a_title_the_texts_name_comes_before_other_names_even_without_a_capital() -> None:
    # The bridge is a common noun: no capital marks it, but the collection has a document about it.
    corpus = (
        MemoryCorpus()
        .add(
            "reserve",
            "Tarn Moss Reserve",
            "The Tarn Moss Reserve, run by Hesk County Council, was set up to protect the marsh harrier.",
        )
        .add("harrier", "Marsh harrier", "The marsh harrier was once called the moor buzzard.")
        .add("council", "Hesk County Council", "Hesk County Council governs Hesk.")
    )
    question = "What was the former name of the bird the Tarn Moss Reserve was set up to protect?"
    state = ResearchState(question=question)
    hop0 = [corpus.chunks["reserve#0"]]
    without = [c.query for c in propose(state, {query_key(question)}, hop0)]
    assert "Marsh harrier" not in without  # names alone: only the capitalised council
    found = propose(state, {query_key(question)}, hop0, titles=TitleIndex(corpus.titles()))
    assert [c.query for c in found][:2] == ["Hesk County Council", "Marsh harrier"]
    assert found[1].origin == f"{TITLED}Tarn Moss Reserve"
    # A document already read is not offered as a title to read (its name may still be a candidate).
    read = propose(
        state, {query_key(question)}, [*hop0, corpus.chunks["harrier#0"]], titles=TitleIndex(corpus.titles())
    )
    assert all(c.query != "Marsh harrier" or not c.origin.startswith(TITLED) for c in read)


def test_the_question_own_names_are_not_offered_as_titles() -> None:
    corpus = MemoryCorpus().add(
        "karn", "Karn Point Lighthouse", "Karn Point Lighthouse was designed by Ada Vellacott."
    )
    corpus.add("ada", "Ada Vellacott", "Ada Vellacott was born in 1849.")
    question = "Who designed Karn Point Lighthouse?"
    found = propose(
        ResearchState(question=question),
        {query_key(question)},
        [corpus.chunks["karn#0"]],
        titles=TitleIndex([*corpus.titles(), "Karn Point"]),
    )
    assert [c.query for c in found if c.origin.startswith(TITLED)] == ["Ada Vellacott"]
