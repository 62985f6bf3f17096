from retrac_local.contract.tools import OpenArgs, OpenTool, SearchArgs, SearchTool
from retrac_local.corpus.fake import MemoryCorpus


def corpus() -> MemoryCorpus:
    text = (
        "Ada Vellacott was a civil engineer. She was born on 3 May 1849 in Port Saltry. " * 3
        + "Vellacott retired in 1909 and died in Calder in 1921. " * 3
    )
    return MemoryCorpus().add("ada", "Ada Vellacott", text, chunk_words=25)


def test_search_shows_the_best_passages_not_their_neighbours_and_hands_those_on() -> None:
    c = corpus()
    observation = SearchTool(c, k=3, context_window=1)(SearchArgs(tool="search", query="retired died Calder"))
    shown = [line.split("]", 1)[0][1:] for line in observation.text.splitlines()[1:]]
    indexes = sorted(int(s.split("#")[1]) for s in shown)
    assert len(shown) >= 2 and all(s.startswith("ada#") for s in shown)  # several passages of one document
    assert all(b - a > 1 for a, b in zip(indexes, indexes[1:], strict=False))  # but never two neighbours
    assert "more in this document" in observation.text
    ids = [ch.chunk_id for ch in observation.chunks]
    first = int(shown[0].split("#")[1])
    assert ids[0] == shown[0] and f"ada#{first - 1}" in ids  # the compressor also gets the chunk before it


def test_tool_mistakes_are_observations() -> None:
    c = corpus()
    assert SearchTool(c)(SearchArgs(tool="search", query="  ")).error == "empty query"
    assert SearchTool(c)(SearchArgs(tool="search", query="zebra")).error == "no results"
    assert OpenTool(c)(OpenArgs(tool="open", id="nope#9")).error == "unknown id"
    opened = OpenTool(c, window=0, max_words=10)(OpenArgs(tool="open", id="[ada#0]"))
    assert opened.error is None and [ch.chunk_id for ch in opened.chunks] == ["ada#0"]


def test_a_search_made_again_shows_its_next_results_then_says_there_are_none(settings) -> None:
    from retrac_local.agent.toolbox import REPEATED, Toolbox

    c = MemoryCorpus()
    for i in range(6):
        c.add(f"light-{i}", f"Light {i}", f"Lighthouse number {i} stands on the coast of the isles.")
    box = Toolbox(
        c, settings.model_copy(update={"retrieval": settings.retrieval.model_copy(update={"k": 4})})
    )
    search = SearchArgs(tool="search", query="lighthouse coast")
    first, second, third = box.use(search), box.use(search), box.use(search)
    shown_first = {ch.doc_id for ch in first.chunks}
    assert len(shown_first) == 4 and first.error is None
    assert second.error is None and "(results 5–6; it was made before)" in second.text
    assert {ch.doc_id for ch in second.chunks}.isdisjoint(shown_first) and len(
        {ch.doc_id for ch in second.chunks}
    ) == 2
    assert third.error == REPEATED and "no more results" in third.text
    resumed = Toolbox(c, settings)
    resumed.remember(["Lighthouse  COAST"])  # a search of an earlier sitting: same words, any case or order
    assert "it was made before" in resumed.use(search).text
