"""The tools an agent holds for one run, used the same way by every mode (Re-TRAC, ReAct, RAG's
single search): a repeated search is refused, and a broken store becomes an observation."""

from __future__ import annotations

from typing import Any

from retrac_local.config import Settings
from retrac_local.contract.tools import TOOLS, Observation, SearchTool, Tool, tool_descriptions
from retrac_local.corpus.base import Corpus
from retrac_local.errors import RetracError
from retrac_local.text import words_of

REPEATED = "repeated query"


def query_key(query: str) -> str:
    """Two searches with the same words, in any order and case, are the same search."""
    return " ".join(sorted(set(words_of(query.lower()))))


class Toolbox:
    def __init__(self, corpus: Corpus, settings: Settings) -> None:
        self.tools: dict[str, Tool] = {
            name: tool.build(corpus, settings.retrieval) for name, tool in TOOLS.items()
        }
        self.pages: dict[str, int] = {}  # result pages each search of this run has shown

    def descriptions(self) -> str:
        return tool_descriptions(list(self.tools.values()))

    def use(self, call: Any) -> Observation:
        try:
            if call.tool == "search":
                key = query_key(call.query)
                page = self.pages.get(key, 0)
                search = self.tools["search"]
                assert isinstance(search, SearchTool)
                observation = search(call, page=page)
                if observation.error is None or page == 0:
                    self.pages[key] = page + 1
                if page and observation.error:
                    observation.error = REPEATED  # a search made again with nothing more to show
                return observation
            return self.tools[call.tool](call)
        except RetracError as e:  # a broken store or index: the model is told, and can change course
            return Observation(f"{call.tool} failed: {e}", error=str(e))

    def remember(self, queries: list[str]) -> None:
        """Searches made in earlier sittings of the run: made again, they show their next results."""
        for q in queries:
            self.pages[query_key(q)] = self.pages.get(query_key(q), 0) + 1


def doc_ids(chunk_ids: list[str]) -> list[str]:
    """The documents of these chunks, in first-seen order (a chunk id is `doc_id#n`)."""
    return list(dict.fromkeys(c.rsplit("#", 1)[0] for c in chunk_ids))
