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
