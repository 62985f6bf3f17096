"""Before the final answer, the run's texts are read once more.

The state keeps what the compressor chose to keep, and a small compressor sometimes leaves out the
very sentence that answers the question while keeping the one that led to it. Single-shot RAG answers
from its top texts whole; the agent should never know less than that. So the final answer reads the
state's evidence *and* the sentences of every text the run retrieved that bear most on the question
and its searches (numbered P1, P2, …), code-chosen as for the compressor, minus those the evidence
already quotes.

A passage the answer cites becomes evidence: its quote is the sentence exactly as stored, so it is
verified by construction, and its fact is the sentence itself (nothing restated, nothing to drift).
"""

from __future__ import annotations

from retrac_local.agent.trajectory import Relevance, Sentence, most_relevant
from retrac_local.agent.verify import normalise
from retrac_local.contract.state import ResearchState, quoted
from retrac_local.corpus.base import Chunk

PREFIX = "P"


def passages(
    chunks: list[Chunk],
    state: ResearchState,
    queries: list[str],
    count: int,
    relevance: Relevance | None = None,
) -> list[Sentence]:
    """The `count` sentences of `chunks` most relevant to the question and the run's searches that
    no piece of evidence already quotes, in reading order."""
    if count <= 0 or not chunks:
        return []
    quoted = [normalise(e.quote) for e in state.evidence]

    def already_quoted(text: str) -> bool:
        t = normalise(text)
        return any(t in q or q in t for q in quoted if q)

    chosen, _ = most_relevant(chunks, state.question, queries, count, relevance, leave_out=already_quoted)
    return chosen


def ids(found: list[Sentence]) -> list[str]:
    return [f"{PREFIX}{n}" for n in range(1, len(found) + 1)]


def render(found: list[Sentence]) -> str:
    """The passages as the final answer's prompt shows them."""
    if not found:
        return ""
    lines = ["Passages read again (sentences of the texts found, not yet in the evidence):"]
    lines.extend(f"  [{i}] ({s.chunk.label}) {s.text}" for i, s in zip(ids(found), found, strict=True))
    return "\n".join(lines)


def cite(state: ResearchState, found: list[Sentence], cited: list[str]) -> tuple[ResearchState, list[str]]:
    """`state` with each cited passage added as evidence, and the citations with passage ids
    replaced by the new evidence ids."""
    by_id = dict(zip(ids(found), found, strict=True))
    evidence = list(state.evidence)
    renamed: list[str] = []
    for ref in cited:
        sentence = by_id.get(ref)
        if sentence is None:
            renamed.append(ref)
            continue
        evidence.append(quoted(evidence, sentence.chunk, sentence.text, state.iteration))
        renamed.append(evidence[-1].id)
    return state.model_copy(update={"evidence": evidence}), renamed
