"""A round's raw trajectory: the steps the planner took, rendered for compression and storage."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from retrac_local.agent.question import parse
from retrac_local.agent.verify import addresses_the_model
from retrac_local.contract.events import RoundEnd
from retrac_local.contract.tools import tool_names
from retrac_local.corpus.base import Chunk
from retrac_local.corpus.chunking import sentences
from retrac_local.text import STOP_WORDS, long_words_of


@dataclass
class Step:
    index: int
    gap: str
    tool: str  # search | open | finish | invalid
    argument: str
    observation: str
    error: str | None = None
    chunks: list[Chunk] = field(default_factory=list)
    by: str = "planner"  # planner: its own call | pick: a candidate it chose | code: made by code
    candidates: list[dict[str, str]] = field(default_factory=list)  # the searches code offered before it
    prompt: str = ""  # the message the planner answered with this step ("" for code's opening searches)

    def render(self) -> str:
        head = f"Step {self.index}: {self.tool}({self.argument!r})" + (
            f" — to find: {self.gap}" if self.gap else ""
        )
        return f"{head}\n{self.observation}" if self.observation else head

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "gap": self.gap,
            "tool": self.tool,
            "argument": self.argument,
            "observation": self.observation,
            "error": self.error,
            "by": self.by,
            "candidates": self.candidates,
            "chunk_ids": [c.chunk_id for c in self.chunks],
        }


@dataclass
class RoundRecord:
    iteration: int
    steps: list[Step] = field(default_factory=list)
    end_reason: RoundEnd | None = None  # set when the round ends
    finish_answer: str | None = None

    @property
    def tool_calls(self) -> int:
        return sum(1 for s in self.steps if s.tool in tool_names())

    def to_dict(self) -> dict[str, Any]:
        return {
            "iteration": self.iteration,
            "end_reason": self.end_reason,
            "finish_answer": self.finish_answer,
            "steps": [s.to_dict() for s in self.steps],
        }


@dataclass(frozen=True)
class Sentence:
    chunk: Chunk
    text: str


def render_for_compression(
    record: RoundRecord, question: str, max_sentences: int, relevance: Relevance | None = None
) -> tuple[str, int, list[Sentence]]:
    """The round for the compressor: the actions taken, then the sentences of the texts found that
    bear most on the question and the round's searches (code later matches each fact the
    compressor states to one of them, which becomes its quote).

    A small model drowns in a dozen full texts, so code picks the `max_sentences` most relevant
    sentences (by `relevance`, else by shared words) and keeps them in reading order. Texts from the
    first and the latest steps win ties, so the start and the end of the round are both seen.
    Returns (prompt text, sentences left out, sentences shown)."""
    actions = []
    for step in record.steps:
        found = ", ".join(c.chunk_id for c in step.chunks) or (step.error or "")
        if step.tool == "calculate" and not step.error:
            found = step.observation.removeprefix("calculate ")
        arrow = f" → {found}" if found else ""
        actions.append(f"{step.index}. {step.tool} {step.argument!r}{arrow}")
    if len(actions) > MAX_ACTIONS_SHOWN:  # the start says what was asked, the end what was found last
        latest = MAX_ACTIONS_SHOWN - KEEP_FIRST_ACTIONS
        cut = len(actions) - MAX_ACTIONS_SHOWN
        note = (
            f"(steps {KEEP_FIRST_ACTIONS + 1}–{KEEP_FIRST_ACTIONS + cut} of {len(actions)} are cut here; "
            "their texts are among the sentences below)"
        )
        actions = [*actions[:KEEP_FIRST_ACTIONS], note, *actions[-latest:]]
    chunks = list({c.chunk_id: c for step in record.steps for c in step.chunks}.values())
    queries = [
        *(s.argument for s in record.steps if s.tool == "search"),
        *(s.gap for s in record.steps if s.gap),
    ]
    shown, total = most_relevant(chunks, question, queries, max_sentences, relevance)
    head = "Actions:\n" + "\n".join(actions) if actions else "Actions: none"
    body = "\n".join(f"- ({s.chunk.label}) {s.text}" for s in shown) if shown else "(no texts found)"
    left_out = len(total) - len(shown)
    if left_out:
        kept = {id(s) for s in shown}
        dropped = sorted({s.chunk.chunk_id for s in total if id(s) not in kept})
        body += (
            f"\n({left_out} less relevant sentence(s) left out, from {', '.join(dropped[:6])}"
            + (" …" if len(dropped) > 6 else "")
            + ")"
        )
    return f"{head}\n\nSentences found:\n{body}", left_out, shown


def most_relevant(
    chunks: list[Chunk],
    question: str,
    queries: list[str],
    max_sentences: int,
    relevance: Relevance | None = None,
    leave_out: Callable[[str], bool] = lambda text: False,
) -> tuple[list[Sentence], list[Sentence]]:
    """The `max_sentences` sentences of `chunks` that bear most on the question and the searches,
    in reading order, and all the informative sentences they were chosen from (`leave_out`: ones
    not to offer, e.g. those already quoted)."""
    candidates = [s for s in informative_sentences(chunks) if not leave_out(s.text)]
    if not candidates:
        return [], []
    texts = [f"{s.chunk.subject}: {s.text}" for s in candidates]

    def score(qs: list[str]) -> list[float]:
        # Meaning and shared words together: embeddings miss "born" for "year … born", words miss synonyms.
        lexical = word_overlap(texts, qs)
        if relevance is None:
            return lexical
        return [(a + b) / 2 for a, b in zip(relevance(texts, qs), lexical, strict=True)]

    to_question = score([question])
    to_queries = score(queries) if queries else to_question
    # The searches and the question decide which texts matter (a text's turn comes by its best
    # sentence); within a text the question alone orders its sentences (every sentence of a text
    # matches the search that found it by its title). Texts take turns, so that one long text cannot
    # crowd out the one sentence another holds.
    combined = [(a + b) / 2 for a, b in zip(to_question, to_queries, strict=True)]
    by_chunk: dict[str, list[int]] = {}
    for i in sorted(range(len(candidates)), key=lambda i: -combined[i]):
        by_chunk.setdefault(candidates[i].chunk.chunk_id, []).append(i)
    # A question that asks for a year or a quantity is answered by a sentence that holds a number.
    wants_number = parse(question).asks_number

    def within_text(i: int) -> float:
        # A number helps, but does not outrank relevance: in a bridge question the year asked for is
        # the last hop's, and the first hop's text is needed for the link ("designed by …"), not a date.
        number = wants_number and any(ch.isdigit() for ch in candidates[i].text)
        return -(to_question[i] + (NUMBER_BONUS if number else 0.0))

    queues = [sorted(q, key=within_text)[:MAX_SENTENCES_PER_TEXT] for q in by_chunk.values()]
    ranked: list[int] = []
    for turn in range(MAX_SENTENCES_PER_TEXT):
        ranked += [q[turn] for q in queues if turn < len(q)]
    return [candidates[i] for i in sorted(ranked[:max_sentences])], candidates


Relevance = Callable[[list[str], list[str]], list[float]]
MAX_SENTENCES_PER_TEXT = 3
NUMBER_BONUS = 0.1
MAX_ACTIONS_SHOWN = 8  # of a long (carried) round: the first KEEP_FIRST_ACTIONS and the latest ones
KEEP_FIRST_ACTIONS = 2


def informative_sentences(chunks: list[Chunk]) -> list[Sentence]:
    """The sentences of `chunks` that state something, in reading order."""
    return [
        Sentence(c, text)
        for c in chunks
        for text in sentences(c.text, apart=addresses_the_model)
        if _informative(text)
    ]


def _informative(sentence: str) -> bool:
    """Headings and title lines state no fact; nor does a sentence that speaks to the model."""
    return not sentence.startswith("#") and len(sentence.split()) >= 4 and not addresses_the_model(sentence)


def word_overlap(texts: list[str], queries: list[str]) -> list[float]:
    """The largest share of a query's words (stop words aside) that a text contains."""
    query_words = [set(long_words_of(q.lower())) - STOP_WORDS for q in queries]
    out = []
    for text in texts:
        words = set(long_words_of(text.lower()))
        out.append(max((len(words & q) / len(q) for q in query_words if q), default=0.0))
    return out
