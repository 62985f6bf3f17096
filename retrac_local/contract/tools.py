"""The agent's tools: small classes with a name, a description, an `Args` model and one call, and
the one registry they are listed in.

A tool is one class and one `register` line: the toolbox, the planner's and ReAct's action
grammars (each tool's `Args` model is a choice of the `call` field) and the tool list of the
prompts are all read from the registry, in its order. The agent has no tool that
writes files, runs code or reaches the network: documents are data, never instructions.
A tool never raises for the model's mistakes (an unknown id, an empty query): it returns an
observation that says what went wrong, so the model can change course.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from pydantic import Field

from retrac_local.config import RetrievalSettings
from retrac_local.contract.state import Strict
from retrac_local.corpus.base import Chunk, Corpus


class SearchArgs(Strict):
    tool: Literal["search"]
    query: str = Field(description="keywords to look up in the documents")


class OpenArgs(Strict):
    tool: Literal["open"]
    id: str = Field(description="a chunk id from a search result, e.g. doc-name#2, to read around it")


class CalculateArgs(Strict):
    tool: Literal["calculate"]
    expression: str = Field(
        description="arithmetic, e.g. 1887 - 1849, max(412, 398), years_between(1849-05-03, 1887-03-14)"
    )


class FinishArgs(Strict):
    tool: Literal["finish"]
    answer: str = Field(description="the short final answer")


@dataclass
class Observation:
    text: str
    chunks: list[Chunk] = field(default_factory=list)  # the chunks found, for the compressor and citations
    error: str | None = None
    more: dict[str, int] = field(default_factory=dict)  # per hit's chunk id: its document's other hits


def _words(text: str, limit: int) -> str:
    words = text.split()
    return " ".join(words[:limit]) + (" …" if len(words) > limit else "")


class Tool(Protocol):
    """What a tool declares. `argument`: the field of `Args` a step records as its argument."""

    name: str
    description: str
    Args: type[Strict]
    argument: str

    @classmethod
    def build(cls, corpus: Corpus, retrieval: RetrievalSettings) -> Tool:
        """The tool for one run over `corpus`, with the retrieval settings it needs."""
        ...

    def __call__(self, args: Any) -> Observation: ...


class SearchTool:
    name = "search"
    description = (
        "search(query): hybrid keyword and meaning search over the documents; returns chunk ids with text"
    )
    Args: type[Strict] = SearchArgs
    argument = "query"

    def __init__(self, corpus: Corpus, k: int = 4, hit_words: int = 80, context_window: int = 1) -> None:
        self.corpus, self.k, self.hit_words, self.context_window = corpus, k, hit_words, context_window

    @classmethod
    def build(cls, corpus: Corpus, retrieval: RetrievalSettings) -> SearchTool:
        return cls(corpus, k=retrieval.k, hit_words=retrieval.hit_words, context_window=retrieval.open_window)

    def __call__(self, args: SearchArgs, page: int = 0) -> Observation:
        """Hits `page * k + 1` … `(page + 1) * k`: a search made again shows the next results."""
        query = args.query.strip()
        if not query:
            return Observation(
                "search failed: the query is empty; name what you are looking for", error="empty query"
            )
        hits = self.corpus.search(query, k=self.k * (page + 1))[self.k * page :]
        if not hits:
            if page:
                return Observation(
                    f'search "{query}" was already made and has no more results; open a chunk id it '
                    "gave to read around it, or change the words",
                    error="no more results",
                )
            return Observation(f'search "{query}" found nothing; try other words', error="no results")
        more = (
            f" more (results {self.k * page + 1}–{self.k * page + len(hits)}; it was made before)"
            if page
            else ""
        )
        lines = [f'search "{query}" found {len(hits)}{more}:']
        lines += [
            f"[{h.chunk.chunk_id}] {h.chunk.label}{more_in_document(h.more)}: {_words(h.chunk.text, self.hit_words)}"
            for h in hits
        ]
        # The planner sees the best chunk of each document; the compressor also gets the chunks around
        # it, since the fact asked for is often a sentence away from the words that matched.
        chunks = {h.chunk.chunk_id: h.chunk for h in hits}
        for h in hits:
            for c in (
                self.corpus.open(h.chunk.chunk_id, window=self.context_window) if self.context_window else []
            ):
                chunks.setdefault(c.chunk_id, c)
        return Observation(
            "\n".join(lines),
            chunks=list(chunks.values()),
            more={h.chunk.chunk_id: h.more for h in hits if h.more},
        )


def more_in_document(n: int) -> str:
    return f" (+{n} more in this document)" if n else ""


class OpenTool:
    name = "open"
    description = "open(id): read a chunk (id like doc-name#2) with the text around it in its section"
    Args: type[Strict] = OpenArgs
    argument = "id"
    SECTION_REACH = 8  # chunks on each side looked at for the rest of a section

    def __init__(self, corpus: Corpus, window: int = 1, max_words: int = 400) -> None:
        self.corpus, self.window, self.max_words = corpus, window, max_words

    @classmethod
    def build(cls, corpus: Corpus, retrieval: RetrievalSettings) -> OpenTool:
        return cls(corpus, window=retrieval.open_window)

    def __call__(self, args: OpenArgs) -> Observation:
        """A chunk of a sectioned document is read with its section around it, nearest chunks first,
        up to `max_words`; otherwise with `window` neighbours on each side."""
        ref = args.id.strip().strip("[]")
        centre = self.corpus.get_chunk(ref)
        sectioned = centre is not None and bool(centre.section)
        chunks = self.corpus.open(ref, window=self.SECTION_REACH if sectioned else self.window)
        if not chunks:
            return Observation(
                f"open failed: no document or chunk {ref!r}; use an id from search results",
                error="unknown id",
            )
        if centre is not None and sectioned:
            chunks = around(same_section(chunks, centre), centre, self.max_words)
        budget = self.max_words
        lines, shown = [f"open {ref} ({(centre or chunks[0]).label}):"], []
        for c in chunks:
            if budget <= 0:
                break
            lines.append(f"[{c.chunk_id}] {_words(c.text, budget)}")
            budget -= len(c.text.split())
            shown.append(c)
        return Observation("\n".join(lines), chunks=shown)


def same_section(chunks: list[Chunk], centre: Chunk) -> list[Chunk]:
    """The unbroken run of `chunks` (one document's, in order) around `centre` in its section."""
    at = next(i for i, c in enumerate(chunks) if c.chunk_id == centre.chunk_id)
    lo = hi = at
    while (
        lo > 0
        and chunks[lo - 1].section == centre.section
        and chunks[lo - 1].chunk_index == chunks[lo].chunk_index - 1
    ):
        lo -= 1
    while (
        hi + 1 < len(chunks)
        and chunks[hi + 1].section == centre.section
        and chunks[hi + 1].chunk_index == chunks[hi].chunk_index + 1
    ):
        hi += 1
    return chunks[lo : hi + 1]


def around(run: list[Chunk], centre: Chunk, max_words: int) -> list[Chunk]:
    """`centre` and the chunks of `run` nearest to it, one side then the other, while they fit in
    `max_words`; in reading order."""
    at = next(i for i, c in enumerate(run) if c.chunk_id == centre.chunk_id)
    lo, hi, words = at, at, len(centre.text.split())
    while True:
        grew = False
        for side in (1, -1):
            nxt = hi + 1 if side == 1 else lo - 1
            if 0 <= nxt < len(run) and words + len(run[nxt].text.split()) <= max_words:
                words += len(run[nxt].text.split())
                lo, hi = (lo, nxt) if side == 1 else (nxt, hi)
                grew = True
        if not grew:
            return run[lo : hi + 1]


class CalculateTool:
    name = "calculate"
    description = (
        "calculate(expression): exact arithmetic for dates and numbers: + - * / ^, min, max, abs, round, "
        "years_between(YYYY-MM-DD, YYYY-MM-DD), days_between(…)"
    )
    Args: type[Strict] = CalculateArgs
    argument = "expression"

    @classmethod
    def build(cls, corpus: Corpus, retrieval: RetrievalSettings) -> CalculateTool:
        return cls()

    def __call__(self, args: CalculateArgs) -> Observation:
        from retrac_local.agent.calc import CalcError, calculate

        try:
            return Observation(f"calculate {args.expression} = {calculate(args.expression)}")
        except CalcError as e:
            return Observation(f"calculate {args.expression!r} failed: {e}", error="bad expression")


# -- the registry ------------------------------------------------------------------------------
TOOLS: dict[str, type[Tool]] = {}  # name → tool class, in the order the grammars and prompts list them


def register(tool: type[Tool]) -> type[Tool]:
    """Add a tool for every agent; a name already registered is refused."""
    if tool.name in TOOLS or tool.name in ("finish", "pick"):
        raise ValueError(f"a tool named {tool.name!r} is already registered")
    TOOLS[tool.name] = tool
    return tool


def unregister(name: str) -> None:
    TOOLS.pop(name, None)


register(SearchTool)
register(OpenTool)
register(CalculateTool)


def tool_names() -> tuple[str, ...]:
    """The steps that count as tool calls (finish does not)."""
    return tuple(TOOLS)


def argument_field(tool: str) -> str:
    """The field of a call to `tool` that a step records as its argument."""
    return "answer" if tool == "finish" else TOOLS[tool].argument


def argument_of(call: Any) -> str:
    return str(getattr(call, argument_field(call.tool)))


def call_models() -> tuple[type[Strict], ...]:
    """The choices of an action's `call`: each registered tool's arguments, then finish."""
    return (*(t.Args for t in TOOLS.values()), FinishArgs)


def tool_descriptions(tools: list[Tool]) -> str:
    return "\n".join(f"- {t.description}" for t in tools) + "\n- finish(answer): give the final short answer"
