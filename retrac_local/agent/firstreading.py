"""The first reading: answer from hop 0's passages as RAG does, and end the run there when that
reading already holds the answer.

Round 1 always starts by searching the question itself (hop 0), which is exactly what RAG reads. On
many questions that reading suffices, and every further round costs a minute and buys nothing; a
small model doing multi-step search then often does worse than the one reading (Adaptive-RAG, Jeong
et al. 2024, routes each question to one retrieval or to multi-step search for that reason). So the
run first answers from those passages, greedily with RAG's own prompt, then samples the same prompt a
few times. The reading is taken as the answer only when

- the sampled answers name the greedy one often enough (`budget.first_reading_agreement`): a guess
  wanders under sampling, a stated fact does not;
- a sentence of the passages states it (or, for yes/no, the passages say something of what the
  question names): the sentences become the run's cited evidence, verified by construction;
- and the cited sentences alone, read again, give the answer back (the agreement check every
  *answered* run passes, `answercheck`).

Otherwise the research goes on as before, hop 0's passages already in its first round. Code decides
which sentences are cited; the model only answers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from retrac_local.agent.answercheck import NOT_STATED, agreement, answer_words, doubt, reanswers, same_answer
from retrac_local.agent.trajectory import Relevance, Sentence, informative_sentences, word_overlap
from retrac_local.agent.verify import normalise
from retrac_local.baselines.rag import rag_messages
from retrac_local.contract.events import Citation
from retrac_local.contract.schemas import ShortAnswer
from retrac_local.errors import ContextOverflowError, StructuredOutputError
from retrac_local.rules.choices import held_to

if TYPE_CHECKING:
    from retrac_local.corpus.base import Chunk
    from retrac_local.llm.base import LLM

TEMPERATURE = 0.7
MAX_CITED = 3


@dataclass
class FirstReading:
    """What hop 0's passages answered: the greedy answer (RAG's), the sampled ones, how many of those
    name it, the sentences that state it, and whether the run may end on it (and why not)."""

    answer: str | None
    samples: list[str] = field(default_factory=list)
    agreement: float | None = None
    stating: list[Sentence] = field(default_factory=list)
    check: float | None = None  # the share of answers from the cited sentences alone that name it
    holds: bool = False
    why_not: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "answer": self.answer,
            "samples": self.samples,
            "agreement": self.agreement,
            "stating": [{"chunk_id": s.chunk.chunk_id, "text": s.text} for s in self.stating],
            "check": self.check,
            "holds": self.holds,
            "why_not": self.why_not,
        }


def answers(
    llm: LLM,
    question: str,
    chunks: list[Chunk],
    choices: tuple[str, ...],
    samples: int,
    max_tokens: int,
) -> tuple[str | None, list[str]]:
    """The greedy answer from the passages (what RAG answers) and `samples` answers sampled from the
    same prompt (processed once: each sample costs its few tokens). Invalid replies are left out."""
    messages = rag_messages(question, chunks)
    schema = held_to(ShortAnswer, choices)
    found: list[str | None] = []
    for i in range(samples + 1):
        try:
            generation = llm.generate(
                messages, schema=schema, max_tokens=max_tokens, temperature=0.0 if i == 0 else TEMPERATURE
            )
        except (StructuredOutputError, ContextOverflowError):
            found.append(None)
            continue
        found.append(generation.parsed.answer.strip() or None)
    return found[0], [a for a in found[1:] if a]


def stating(
    answer: str, question: str, chunks: list[Chunk], relevance: Relevance | None = None
) -> list[Sentence]:
    """The sentences of the passages to cite for `answer`: the one most relevant to the question
    among those that contain it, then the most relevant of each other passage (the hop that ties it
    to what the question names), `MAX_CITED` at most. A yes or no is contained in no sentence: its
    sentences are the most relevant of each passage. Empty when no sentence contains the answer."""
    found = informative_sentences(chunks)
    if not found:
        return []
    texts = [f"{s.chunk.subject}: {s.text}" for s in found]
    lexical = word_overlap(texts, [question])
    scores = (
        lexical
        if relevance is None
        else [(a + b) / 2 for a, b in zip(relevance(texts, [question]), lexical, strict=True)]
    )
    order = [found[i] for i in sorted(range(len(found)), key=lambda i: -scores[i])]
    key = normalise(answer).lower()
    chosen = [s for s in order if key and key in normalise(s.text).lower()][:1]
    if not chosen and answer_words(answer) not in (["yes"], ["no"]):
        return []
    for s in order:
        if len(chosen) >= MAX_CITED:
            break
        if all(s.chunk.chunk_id != c.chunk.chunk_id for c in chosen):
            chosen.append(s)
    return chosen


def judge(answer: str | None, samples: list[str], needed: float) -> tuple[float | None, str]:
    """The agreement of the samples with the answer, and why the reading does not hold ("" when the
    answers agree enough)."""
    if not answer:
        return None, "no answer from the passages"
    if same_answer(answer, NOT_STATED):
        return None, "the passages do not state it"
    share = agreement(answer, samples)
    if share is None:
        return None, "no sampled answer to compare"
    if share < needed:
        return share, f"{round(share * len(samples))} of {len(samples)} sampled answers name {answer!r}"
    return share, ""


def cited(found: list[Sentence]) -> list[Citation]:
    """The sentences as citations (E1, E2, …): their quotes are the stored text itself."""
    return [
        Citation(
            f"E{n}",
            s.chunk.doc_id,
            s.chunk.chunk_id,
            s.chunk.title,
            s.chunk.source,
            s.text,
            "yes",
            section=s.chunk.section,
            page=s.chunk.page,
        )
        for n, s in enumerate(found, start=1)
    ]


def read(
    llm: LLM,
    system: str,
    question: str,
    chunks: list[Chunk],
    *,
    choices: tuple[str, ...] = (),
    samples: int,
    needed: float,
    check_needed: float,
    max_tokens: int,
    relevance: Relevance | None = None,
) -> FirstReading:
    """Hop 0's passages read: the answer, its agreement, the sentences that state it, and the check
    of those sentences read alone; `holds` when all three pass (`needed`: the share of samples that
    must name the answer; `check_needed`: the share of the answers from the cited sentences)."""
    answer, sampled = answers(llm, question, chunks, choices, samples, max_tokens)
    share, why = judge(answer, sampled, needed)
    reading = FirstReading(answer, sampled, share, why_not=why)
    if why or not answer:
        return reading
    reading.stating = stating(answer, question, chunks, relevance)
    if not reading.stating:
        reading.why_not = f"no sentence of the passages contains {answer!r}"
        return reading
    again = reanswers(llm, system, question, answer, cited(reading.stating), choices, samples)
    reading.check = agreement(answer, again)
    reading.why_not = doubt(answer, again, check_needed) or ""
    reading.holds = not reading.why_not and reading.check is not None
    if reading.check is None:
        reading.why_not = "no answer from the cited sentences alone"
    return reading
