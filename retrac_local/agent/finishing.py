"""The end of a run: the final answer from the last state (or the dates compared by code, or the
first reading's answer), its citations checked against the stored chunks, its status and caveat,
the agreement check, and the result stored and, when *answered*, remembered."""

from __future__ import annotations

import contextlib
import time
from typing import Any

from retrac_local.agent import answercheck, conflicts, linking, prompts, rereading
from retrac_local.agent.context import RunContext
from retrac_local.agent.trajectory import Sentence
from retrac_local.agent.verify import normalise, quote_in
from retrac_local.contract.events import Citation, RunResult, RunStatus, StopReason
from retrac_local.contract.schemas import FinalAnswer, final_answer_schema
from retrac_local.contract.state import Evidence, ResearchState, quoted
from retrac_local.corpus.base import Chunk
from retrac_local.errors import ContextOverflowError, RetracError, StructuredOutputError
from retrac_local.llm.base import Message
from retrac_local.records import CallRecord
from retrac_local.rules import datecompare
from retrac_local.rules.answers import (
    named_spans,
    restates_question,
    shorten,
    wrong_kind_question,
)
from retrac_local.rules.book import RuleBook
from retrac_local.rules.choices import held_to, pick

MAX_CITATIONS = 4


def finalize(
    ctx: RunContext,
    run_id: str,
    state: ResearchState,
    stop_reason: StopReason,
    started: float,
    prior_seconds: float,
    rules: RuleBook,
    first_reading: dict[str, Any] | None = None,
) -> RunResult:
    ctx.meter.iteration, ctx.meter.purpose = state.iteration, "finalize"
    named = state.asked.options
    choices = named if rules.on("answer.options") else ()
    answer = pick(state.answer, choices)
    if answer != state.answer:
        rules.fired("answer.options", f"{state.answer!r} read as the option {answer!r}")
    cited: list[str] = []
    chunks = _run_chunks(ctx, run_id)
    first = stop_reason == StopReason.FIRST_READING  # answered and checked from hop 0's passages
    decided = (
        datecompare.decide(state.question, chunks)
        if named and rules.on("answer.date_compare") and not first
        else None
    )
    found = [] if decided or first else _reread(ctx, state, chunks, run_id)
    if first:
        cited = [e.id for e in state.evidence if e.round == state.iteration]
    elif decided:  # two dates compared by code: no model call, the two sentences are the evidence
        rules.fired("answer.date_compare", f"decided {decided.answer!r} from the dates of both options")
        answer = decided.answer
        state, cited = _cite_dated(state, decided)
    elif state.evidence or state.answer or found:
        answered = _model_answer(ctx, state, found, choices, rules)
        if answered is not None:
            answer, state, cited = answered
    if answer and not choices and rules.on("answer.shorten"):
        short = shorten(answer, state.question)
        if short != answer:
            rules.fired("answer.shorten", f"{answer!r} → {short!r}")
        answer = short
    citations = _citations(ctx, state, answer, cited, rules)
    caveat = caveat_of(state, answer, citations, rules)
    if not answer:
        status = RunStatus.FAILED
    elif stop_reason.budget:
        status = RunStatus.BUDGET_EXHAUSTED
    elif citations and stop_reason.finished and caveat is None:
        status = RunStatus.ANSWERED
    else:
        status = RunStatus.UNSURE
    if status == RunStatus.UNSURE and caveat is None:
        caveat = _stopped_early(state, stop_reason)
    confident = answer if status == RunStatus.ANSWERED else None
    if confident and not decided and not first:
        doubt = _doubt(ctx, state.question, confident, citations, choices, rules)
        if doubt:
            caveat, status = doubt, RunStatus.UNSURE
    calls = ctx.meter.drain()
    all_calls: list[CallRecord] = [*ctx.store.calls(run_id), *calls]
    result = RunResult(
        run_id=run_id,
        question=state.question,
        status=status,
        answer=answer,
        citations=citations,
        rounds=state.iteration,
        stop_reason=stop_reason,
        llm_calls=len(all_calls),
        prompt_tokens=sum(c["prompt_tokens"] for c in all_calls),
        completion_tokens=sum(c["completion_tokens"] for c in all_calls),
        peak_prompt_tokens=max((c["prompt_tokens"] for c in all_calls), default=0),
        seconds=prior_seconds + time.perf_counter() - started,
        llm_seconds=sum(c["seconds"] for c in all_calls),
        calls=all_calls,
        retrieved=run_retrieved(ctx, run_id),
        caveat=caveat,
        **run_searches(ctx, run_id),
        rule_log=[f for r in ctx.store.rounds(run_id) for f in r["stats"].get("rules", [])] + rules.take(),
        asked=state.asked.to_dict(),
        first_reading=first_reading,
    )
    ctx.store.finish_run(run_id, str(status), answer, result.to_dict(with_calls=True), calls)
    if ctx.memory is not None and status == RunStatus.ANSWERED:
        # Only what backed an answered run is remembered: its cited evidence and the chain that
        # links it to the question. The run itself is stored; memory is a convenience and must
        # not fail it.
        final = state.model_copy(update={"answer": answer})
        backed = {c.evidence_id for c in citations} | {e.id for e in linking.chain(final)}
        with contextlib.suppress(RetracError, OSError, RuntimeError, ValueError):
            ctx.memory.remember(
                run_id,
                final.model_copy(update={"evidence": [e for e in final.evidence if e.id in backed]}),
            )
    return result


def _model_answer(
    ctx: RunContext, state: ResearchState, found: list[Sentence], choices: tuple[str, ...], rules: RuleBook
) -> tuple[str | None, ResearchState, list[str]] | None:
    """The planner's final answer from the evidence and the passages read again: the answer, the
    state with the passages it cites as evidence, and the ids it cites; None when the model gave
    no valid answer (the state's own answer stands)."""
    messages: list[Message] = [
        {"role": "system", "content": ctx.system_prompt},
        {
            "role": "user",
            "content": prompts.render(
                "finalize",
                evidence=state.render_for_answer(),
                passages=rereading.render(found),
                question=state.question,
            ),
        },
    ]
    try:
        ids = [*(e.id for e in state.evidence), *rereading.ids(found)]
        schema = held_to(final_answer_schema(ids), choices)
        parsed = _final_answer(ctx, messages, schema)
        if choices:
            rules.fired("answer.options", f"the answer held to one of {' / '.join(choices)}")
        if (
            not choices
            and rules.on("answer.not_the_question")
            and restates_question(parsed.answer, state.question)
        ):
            # Once more: what the question names is where it starts, not what it asks for.
            # The second answer is held to the names the texts hold beyond the question's
            # own words (asked again freely, the small model repeats itself).
            names = named_spans(
                [
                    *(f"{e.title}. {e.quote}" for e in state.evidence),
                    *(f"{s.chunk.subject}. {s.text}" for s in found),
                ],
                state.question,
            )
            messages += [
                {"role": "assistant", "content": parsed.model_dump_json()},
                {
                    "role": "user",
                    "content": prompts.render(
                        "finalize_again",
                        answer=parsed.answer.strip(),
                        passages=bool(found),
                        names=names,
                    ),
                },
            ]
            first = parsed.answer
            with contextlib.suppress(StructuredOutputError, ContextOverflowError):  # else the first stands
                parsed = _final_answer(ctx, messages, held_to(schema, names))
            rules.fired(
                "answer.not_the_question",
                f"{first!r} restates the question; asked again: {parsed.answer!r}",
            )
    except (StructuredOutputError, ContextOverflowError):
        return None
    answer = parsed.answer.strip() or state.answer
    return (answer, *rereading.cite(state, found, list(parsed.evidence_ids)))


def _final_answer(ctx: RunContext, messages: list[Message], schema: type[FinalAnswer]) -> FinalAnswer:
    generation = ctx.planner.generate(
        messages, schema=schema, max_tokens=ctx.settings.sampling.answer_max_tokens
    )
    return generation.parsed


def _run_chunks(ctx: RunContext, run_id: str) -> list[Chunk]:
    """The chunks the run's tools returned, as stored now, in first-seen order."""
    return [c for c in (ctx.corpus.get_chunk(i) for i in run_retrieved(ctx, run_id)) if c is not None]


def _reread(ctx: RunContext, state: ResearchState, chunks: list[Chunk], run_id: str) -> list[Sentence]:
    """The sentences of the run's texts the final answer reads beside the evidence."""
    count = ctx.settings.budget.final_passages
    if count <= 0:
        return []
    return rereading.passages(chunks, state, run_searches(ctx, run_id)["searches"], count, ctx.relevance)


def _doubt(
    ctx: RunContext,
    question: str,
    answer: str,
    citations: list[Citation],
    choices: tuple[str, ...],
    rules: RuleBook,
) -> str | None:
    """Why an answer that would be *answered* is not to be trusted, from the planner shown its
    cited quotes alone, or None: answered again from them too seldom the same
    (`budget.answer_samples`)."""
    budget = ctx.settings.budget
    if budget.answer_samples and rules.on("status.agreement"):
        again = answercheck.reanswers(
            ctx.planner, ctx.system_prompt, question, answer, citations, choices, budget.answer_samples
        )
        found = answercheck.doubt(answer, again, budget.answer_agreement)
        if found:
            rules.fired("status.agreement", found)
            return found
    return None


def caveat_of(
    state: ResearchState, answer: str | None, citations: list[Citation], rules: RuleBook
) -> str | None:
    """Why the answer is not to be trusted as it stands, or None: no verified evidence states
    it, or it is not of the kind the question
    asks (a bare yes or no to "which …?" is nothing found)."""
    if not answer:
        return None
    if not citations:
        return "not found: no verified evidence states this answer; it is the best guess from what was read"
    cited = {c.evidence_id for c in citations}
    disputed = (
        [c for c in state.conflicts if cited & set(c.evidence_ids)]
        if rules.on("status.sources_disagree")
        else []
    )
    if disputed:
        rules.fired("status.sources_disagree", f"{len(disputed)} conflict(s) among the cited evidence")
        return "the sources disagree: " + "; ".join(conflicts.describe(c, state) for c in disputed)
    wrong = (
        wrong_kind_question(state.question, answer, state.evidence) if rules.on("status.wrong_kind") else None
    )
    if wrong:
        rules.fired("status.wrong_kind", wrong)
    return wrong


def run_searches(ctx: RunContext, run_id: str) -> dict[str, list[str]]:
    """The run's queries in order, and the chunks its first search returned."""
    steps = [
        step
        for r in ctx.store.rounds(run_id)
        for step in r["trajectory"]["steps"]
        if step["tool"] == "search"
    ]
    return {
        "searches": [s["argument"] for s in steps],
        "first_retrieved": steps[0]["chunk_ids"] if steps else [],
    }


def run_retrieved(ctx: RunContext, run_id: str) -> list[str]:
    """The chunk ids the run's tools returned, in first-seen order."""
    steps = [step for r in ctx.store.rounds(run_id) for step in r["trajectory"]["steps"]]
    return list(dict.fromkeys(c for step in steps for c in step.get("chunk_ids", [])))


def _citations(
    ctx: RunContext, state: ResearchState, answer: str | None, cited: list[str], rules: RuleBook
) -> list[Citation]:
    """Citations are checked by code: the quote must occur in the stored chunk, now."""
    by_id = state.evidence_by_id()
    chosen = [by_id[i] for i in dict.fromkeys(cited) if i in by_id]
    checked = [c for c in (checked_citation(ctx, e) for e in chosen[:MAX_CITATIONS]) if c is not None]
    if not rules.on("answer.bridge_citation"):
        return checked
    # A bridge answer cites where the chain ends ("born in 1849"); the hop that ties it to what
    # the question names ("designed by Ada Vellacott") is cited beside it, so the reader, and
    # the answer check that reads the cited quotes alone, can follow the chain.
    kept = {c.evidence_id for c in checked}
    hop = [
        c
        for c in (
            checked_citation(ctx, e) for e in linking.bridge(state, [e for e in chosen if e.id in kept])
        )
        if c is not None
    ]
    if hop:
        rules.fired("answer.bridge_citation", "also cited " + ", ".join(c.evidence_id for c in hop))
    return checked + hop


def checked_citation(ctx: RunContext, evidence: Evidence) -> Citation | None:
    if evidence.verified not in ("yes", "partial"):
        return None
    chunk = ctx.corpus.get_chunk(evidence.source)
    if chunk is None or not quote_in(evidence.quote, chunk.text):
        return None
    return Citation(
        evidence.id,
        chunk.doc_id,
        chunk.chunk_id,
        chunk.title,
        chunk.source,
        evidence.quote,
        evidence.verified,
        section=chunk.section,
        page=chunk.page,
    )


_WHY_STOPPED = {
    StopReason.PLAN_REPEATED: "the next plan repeated the one before",
    StopReason.SATURATED: "a round found no new evidence",
}


def _stopped_early(state: ResearchState, stop_reason: StopReason) -> str:
    """Why an answer whose checks all passed is still *unsure*: the research stopped on its own
    (a repeated plan, a round with nothing new) before its state held the answer settled, and what
    it still had open."""
    why = _WHY_STOPPED.get(stop_reason, f"it stopped ({stop_reason})")
    open_ = f"; still open: {state.uncertainties[0]}" if state.uncertainties else ""
    return f"not settled: the research stopped because {why}, before the evidence was shown to answer the question{open_}"


def _cite_dated(state: ResearchState, decided: datecompare.Decision) -> tuple[ResearchState, list[str]]:
    """`state` with the two sentences that date the options as evidence (verbatim, so verified;
    a piece of evidence that already quotes one is cited instead), and their ids."""
    evidence, ids = list(state.evidence), []
    for dated in decided.dated:
        same = next(
            (
                e
                for e in evidence
                if e.source == dated.chunk.chunk_id and normalise(e.quote) == normalise(dated.sentence)
            ),
            None,
        )
        if same is None:
            same = quoted(evidence, dated.chunk, dated.sentence, state.iteration)
            evidence.append(same)
        ids.append(same.id)
    return state.model_copy(update={"evidence": evidence}), list(dict.fromkeys(ids))
