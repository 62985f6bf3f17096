from retrac_local.corpus.memory import MemoryCorpus
from retrac_local.tools import OpenArgs, OpenTool, SearchArgs, SearchTool


def corpus() -> MemoryCorpus:
    text = ("Ada Vellacott was a civil engineer. She was born on 3 May 1849 in Port Saltry. " * 3
            + "Vellacott retired in 1909 and died in Calder in 1921. " * 3)
    return MemoryCorpus().add("ada", "Ada Vellacott", text, chunk_words=25)


def test_search_shows_one_chunk_per_document_and_hands_on_its_neighbours() -> None:
    c = corpus()
    observation = SearchTool(c, k=3, context_window=1)(SearchArgs(tool="search", query="retired died Calder"))
    assert observation.text.count("[ada#") == 1  # the planner sees the best chunk of the document
    best = observation.text.split("[", 1)[1].split("]", 1)[0]
    index = int(best.split("#")[1])
    ids = [ch.chunk_id for ch in observation.chunks]
    assert ids[0] == best and f"ada#{index - 1}" in ids  # the compressor also gets the chunk before it


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
    box = Toolbox(c, settings.model_copy(update={"retrieval": settings.retrieval.model_copy(update={"k": 4})}))
    search = SearchArgs(tool="search", query="lighthouse coast")
    first, second, third = box.use(search), box.use(search), box.use(search)
    shown_first = {ch.doc_id for ch in first.chunks}
    assert len(shown_first) == 4 and first.error is None
    assert second.error is None and "(results 5–6; it was made before)" in second.text
    assert {ch.doc_id for ch in second.chunks}.isdisjoint(shown_first) and len({ch.doc_id for ch in second.chunks}) == 2
    assert third.error == REPEATED and "no more results" in third.text
    resumed = Toolbox(c, settings)
    resumed.remember(["Lighthouse  COAST"])  # a search of an earlier sitting: same words, any case or order
    assert "it was made before" in resumed.use(search).text
