"""RAG, the floor: one hybrid search with the question, the top k chunks in one prompt, one answer."""

from __future__ import annotations

import time
import uuid

from retrac_local.agent import prompts
from retrac_local.agent.meter import Meter, MeteredLLM
from retrac_local.agent.question import parse
from retrac_local.baselines.react import result_record
from retrac_local.config import Settings
from retrac_local.contract.events import RunResult, RunStatus, StopReason
from retrac_local.contract.schemas import ShortAnswer
from retrac_local.corpus.base import Chunk, Corpus
from retrac_local.errors import ContextOverflowError, RetracError, StructuredOutputError
from retrac_local.llm.base import LLM, Message
from retrac_local.rules.book import RuleBook
from retrac_local.rules.choices import held_to


def rag_messages(question: str, chunks: list[Chunk]) -> list[Message]:
    """RAG's prompt: the passages whole, then the question (the first reading of a Re-TRAC run asks
    the same)."""
    passages = "\n\n".join(f"[{c.chunk_id}] {c.label}: {c.text}" for c in chunks)
    return [{"role": "user", "content": prompts.render("rag", passages=passages, question=question)}]


class RagAnswerer:
    def __init__(self, llm: LLM, corpus: Corpus, settings: Settings, k: int = 5) -> None:
        self.meter = Meter(purpose="answer")
        self.llm: LLM = MeteredLLM(llm, "planner", self.meter)
        self.corpus, self.settings, self.k = corpus, settings, k

    def run(self, question: str) -> RunResult:
        question = question.strip()
        if not question:
            raise RetracError("the question is empty")
        started = time.perf_counter()
        hits = self.corpus.search(question, k=self.k)
        messages = rag_messages(question, [h.chunk for h in hits])
        answer: str | None = None
        rules = RuleBook(self.settings.rules.disabled)
        try:
            choices = parse(question).options if rules.on("answer.options") else ()
            generation = self.llm.generate(
                messages,
                schema=held_to(ShortAnswer, choices),
                max_tokens=self.settings.sampling.answer_max_tokens,
            )
            answer = generation.parsed.answer.strip() or None
            if choices:
                rules.fired("answer.options", f"the answer held to one of {' / '.join(choices)}")
        except (StructuredOutputError, ContextOverflowError):
            pass
        return result_record(
            f"rag-{uuid.uuid4().hex[:12]}",
            question,
            RunStatus.ANSWERED if answer else RunStatus.FAILED,
            answer,
            1,
            StopReason.SINGLE_PASS,
            self.meter.drain(),
            time.perf_counter() - started,
            [h.chunk.chunk_id for h in hits],
            [(question, [h.chunk.chunk_id for h in hits])],
            rule_log=rules.take(),
        )
