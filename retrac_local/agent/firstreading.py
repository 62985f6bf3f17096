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

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from retrac_local.agent import finishing
from retrac_local.agent.answercheck import NOT_STATED, agreement, answer_words, doubt, reanswers, same_answer
from retrac_local.agent.diff import StateDiff
from retrac_local.agent.trajectory import Relevance, Sentence, informative_sentences, word_overlap
from retrac_local.agent.verify import normalise
from retrac_local.baselines.rag import rag_messages
from retrac_local.contract.events import Citation, RoundCompressed, RoundEnd, StopReason
from retrac_local.contract.schemas import ShortAnswer
from retrac_local.contract.state import ResearchState, quoted
from retrac_local.errors import ContextOverflowError, StructuredOutputError
from retrac_local.rules.book import RuleBook
from retrac_local.rules.choices import held_to

if TYPE_CHECKING:
    from retrac_local.agent.context import RunContext
    from retrac_local.agent.trajectory import RoundRecord, Step
    from retrac_local.corpus.base import Chunk
    from retrac_local.llm.base import LLM
    from retrac_local.records import RoundStats

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


# -- in a run ------------------------------------------------------------------------------------
def settle(ctx: RunContext, state: ResearchState, step: Step, rules: RuleBook) -> FirstReading | None:
    """Hop 0's passages read (`step`, the run's first search), and whether they already hold the
    answer (`holds`): the answers from them agree, the sentences that state it give it back read
    alone, and the status checks of any answer pass on them. None when the first reading is off
    (`budget.first_reading_samples = 0`, or the rule switched off) or the search found nothing."""
    budget = ctx.settings.budget
    if not budget.first_reading_samples or not rules.on("converge.first_reading"):
        return None
    if step.error or not step.chunks:
        return None
    ctx.meter.purpose = "first-reading"
    reading = read(
        ctx.planner,
        ctx.system_prompt,
        state.question,
        step.chunks[: ctx.settings.retrieval.first_k],
        choices=state.asked.options if rules.on("answer.options") else (),
        samples=budget.first_reading_samples,
        needed=budget.first_reading_agreement,
        check_needed=budget.answer_agreement,
        max_tokens=ctx.settings.sampling.answer_max_tokens,
        relevance=ctx.relevance,
    )
    ctx.meter.purpose = "action"
    if not reading.holds:
        return reading
    settled = _read_first(state, reading, state.iteration + 1)
    citations = [c for c in (finishing.checked_citation(ctx, e) for e in settled.evidence) if c is not None]
    # The status checks of every answer, on a scratch book: a check that fails here sends the
    # run on to research, and is not one of the run's firings.
    caveat = finishing.caveat_of(settled, settled.answer, citations, RuleBook(ctx.settings.rules.disabled))
    if caveat or not citations:
        reading.holds, reading.why_not = False, caveat or "no citation checked"
        return reading
    rules.fired(
        "converge.first_reading",
        f"ended after hop 0 on {reading.answer!r}: {reading.agreement:.2f} of the sampled answers and "
        f"{reading.check:.2f} of the cited sentences' answers name it",
    )
    return reading


def commit(
    ctx: RunContext,
    run_id: str,
    state: ResearchState,
    record: RoundRecord,
    reading: FirstReading,
    rules: RuleBook,
    round_start: float,
) -> tuple[ResearchState, RoundCompressed]:
    """The first round stored as it ended, after hop 0 (`reading` held): no compression, the state
    the sentences that state the answer and the answer itself."""
    new_state = _read_first(state, reading, record.iteration)
    diff = StateDiff(
        evidence_added=[e.id for e in new_state.evidence],
        answer_before=state.answer,
        answer_after=new_state.answer,
    )
    calls = ctx.meter.drain()
    state_tokens = ctx.compressor.count_tokens(new_state.render())
    stats: RoundStats = {
        "seconds": round(time.perf_counter() - round_start, 3),
        "tool_calls": record.tool_calls,
        "end_reason": RoundEnd.FIRST_READING,
        "slots": 1,
        "new_tokens": 0,
        "llm_calls": len(calls),
        "prompt_tokens": sum(c["prompt_tokens"] for c in calls),
        "completion_tokens": sum(c["completion_tokens"] for c in calls),
        "state_tokens": state_tokens,
        "sentences_left_out": 0,
        "compression_attempts": [],
        "rejected": [],
        "compression_failed": False,
        "stop_reason": StopReason.FIRST_READING,
        "rules": rules.take(),
    }
    ctx.store.save_round(
        run_id,
        record.iteration,
        new_state.model_dump(),
        record.to_dict(),
        diff.model_dump(),
        stats,
        calls,
    )
    compressed = RoundCompressed(
        record.iteration,
        record.tool_calls,
        RoundEnd.FIRST_READING,
        diff.summary(),
        new_state.answer,
        len(new_state.evidence),
        state_tokens,
        False,
        stats["prompt_tokens"],
        stats["completion_tokens"],
        round(sum(c["seconds"] for c in calls), 2),
    )
    return new_state, compressed


def _read_first(state: ResearchState, reading: FirstReading, iteration: int) -> ResearchState:
    """The state a run ends with after hop 0: the sentences that state the answer as its evidence
    (quoted as stored, so verified by construction), and the answer."""
    evidence = list(state.evidence)
    for sentence in reading.stating:
        evidence.append(quoted(evidence, sentence.chunk, sentence.text, iteration))
    return state.model_copy(update={"evidence": evidence, "answer": reading.answer, "iteration": iteration})
