"""The Re-TRAC loop as a generator of typed events.

    S_0 = question + constraints (verbatim)
    hop 0: the question searched; when its passages already hold the answer, S_1 = that reading, stop
    for t in 1..T:  τ_t = round(planner, S_{t-1}, tools);  S_t = compress(S_{t-1}, τ_t);  persist;  stop?
    answer = finalize(planner, S_T), citations checked against the stored chunks

The first reading is agent/firstreading.py; the end of a run, agent/finishing.py.

Error policy: the model's mistakes (invalid output, an unknown id, a failed search) are recorded on
the step and the run goes on; our own bugs raise. A run interrupted at any point resumes from its
last persisted round.
"""

from __future__ import annotations

import time
from collections.abc import Generator, Iterator
from typing import Any

from retrac_local import interrupt
from retrac_local.agent import (
    candidates,
    finishing,
    firstreading,
    prompts,
)
from retrac_local.agent.candidates import PickArgs, planner_action_schema
from retrac_local.agent.compress import compress
from retrac_local.agent.context import RunContext
from retrac_local.agent.convergence import converged
from retrac_local.agent.memory import RunMemory
from retrac_local.agent.meter import Meter, MeteredLLM
from retrac_local.agent.policy import INVALID_KEPT_CHARS, MAX_INVALID_ACTIONS, invalid_action, too_early
from retrac_local.agent.progress import RunProgress
from retrac_local.agent.seeding import seed_from_memory
from retrac_local.agent.titles import TitleIndex
from retrac_local.agent.toolbox import Toolbox, query_key
from retrac_local.agent.trajectory import Relevance, RoundRecord, Step
from retrac_local.config import Settings, masked
from retrac_local.contract.events import (
    Converged,
    Event,
    RoundCompressed,
    RoundEnd,
    RunFinished,
    RunResult,
    RunStarted,
    RunStatus,
    StepTaken,
    StopReason,
)
from retrac_local.contract.schemas import AnyAction, ConstraintsDraft
from retrac_local.contract.state import ResearchState
from retrac_local.contract.tools import Observation, SearchArgs, SearchTool, argument_of
from retrac_local.corpus.base import Chunk, Corpus
from retrac_local.errors import ContextOverflowError, RetracError, StructuredOutputError
from retrac_local.llm.base import LLM, Message
from retrac_local.records import RoundStats
from retrac_local.rules.book import RuleBook
from retrac_local.runstore import RunStore

MAX_CITATIONS = 4


class ResearchAgent:
    def __init__(
        self,
        planner: LLM,
        compressor: LLM,
        corpus: Corpus,
        settings: Settings,
        store: RunStore,
        relevance: Relevance | None = None,
        memory: RunMemory | None = None,
    ) -> None:
        self.relevance = relevance
        self.memory = memory if settings.memory.enabled else None
        self.meter = Meter()
        self.planner: LLM = MeteredLLM(planner, "planner", self.meter)
        self.compressor: LLM = MeteredLLM(compressor, "compressor", self.meter)
        self.corpus = corpus
        self.settings = settings
        self.store = store
        self._titles: tuple[list[str], TitleIndex] | None = None
        tools = Toolbox(corpus, settings).descriptions()
        self.system_prompt = prompts.render("planner_system", tools=tools)
        self.ctx = RunContext(
            self.planner,
            self.compressor,
            corpus,
            settings,
            store,
            self.meter,
            self.system_prompt,
            relevance,
            self.memory,
        )

    def title_index(self) -> TitleIndex:
        """The collection's titles, indexed again only when the corpus gives another list."""
        titles = self.corpus.titles()
        if self._titles is None or self._titles[0] is not titles:
            self._titles = (titles, TitleIndex(titles))
        return self._titles[1]

    # -- entry points ----------------------------------------------------------------------------
    def ask(self, question: str) -> Iterator[Event]:
        question = question.strip()
        if not question:
            raise RetracError("the question is empty")
        started = time.perf_counter()
        self.meter.iteration, self.meter.purpose = 0, "constraints"
        state = ResearchState(question=question, constraints=self._constraints(question))
        seeds, used = seed_from_memory(self.memory, self.corpus, self.settings.memory, question)
        state = state.model_copy(update={"evidence": seeds})
        run_id = self.store.create_run(
            question, state.model_dump(), masked(self.settings.model_dump(mode="json")), used
        )
        with self.store.running(run_id):
            yield RunStarted(run_id, question, memory=used)
            progress = RunProgress.of(self.corpus, self.settings, [])
            yield from self._stopped_by_errors(
                run_id, self._rounds(run_id, state, progress, started, prior_seconds=0.0)
            )

    def resume(self, run_id: str) -> Iterator[Event]:
        self.store.run(run_id)  # an unknown id is that error, before any lock
        with self.store.running(run_id):
            yield from self._resume(run_id)

    def _resume(self, run_id: str) -> Iterator[Event]:
        run = self.store.run(run_id)
        if run["status"] != RunStatus.RUNNING and run["result"]:
            yield RunFinished(RunResult.from_dict(run["result"]))
            return
        rounds = self.store.rounds(run_id)
        state = ResearchState.model_validate(rounds[-1]["state"] if rounds else run["initial_state"])
        prior = sum(r["stats"].get("seconds", 0.0) for r in rounds)
        yield RunStarted(run_id, run["question"], resumed_at_round=state.iteration + 1)
        stopped = rounds[-1]["stats"].get("stop_reason") if rounds else None
        if stopped:  # it had converged; only the final answer was missing
            yield RunFinished(
                finishing.finalize(
                    self.ctx,
                    run_id,
                    state,
                    StopReason(stopped),
                    time.perf_counter(),
                    prior,
                    self._book(state),
                )
            )
            return
        progress = RunProgress.of(self.corpus, self.settings, rounds)
        yield from self._stopped_by_errors(
            run_id, self._rounds(run_id, state, progress, time.perf_counter(), prior_seconds=prior)
        )

    def answer_again(self, run_id: str) -> RunResult:
        """The final answer of a finished run made again from its last state, with this agent's code
        and settings (the rounds are not re-run): `eval.replay` measures a change to the final
        answer this way. The run's stored result is replaced."""
        run = self.store.run(run_id)
        rounds = self.store.rounds(run_id)
        if not rounds or not run["result"]:
            raise RetracError(f"run {run_id} has no finished round to answer from")
        state = ResearchState.model_validate(rounds[-1]["state"])
        return finishing.finalize(
            self.ctx,
            run_id,
            state,
            StopReason(run["result"]["stop_reason"]),
            time.perf_counter(),
            0.0,
            self._book(state),
        )

    def _book(self, state: ResearchState) -> RuleBook:
        """The rule book of the final answer's stage (after the state's last round)."""
        return RuleBook(self.settings.rules.disabled, round=state.iteration)

    def _stopped_by_errors(self, run_id: str, events: Iterator[Event]) -> Iterator[Event]:
        """An error the run cannot get past (a model server gone) marks it failed, not running; its
        saved rounds stay, and `resume` continues it."""
        try:
            yield from events
        except RetracError:
            self.store.mark_failed(run_id)
            raise

    # -- the loop --------------------------------------------------------------------------------
    def _rounds(
        self,
        run_id: str,
        state: ResearchState,
        progress: RunProgress,
        started: float,
        prior_seconds: float,
    ) -> Iterator[Event]:
        """Rounds until convergence or a budget, each compressed and committed."""
        budget = self.settings.budget
        stop_reason = StopReason.BUDGET_ROUNDS
        while progress.slots_used < budget.max_rounds:
            if budget.max_seconds and prior_seconds + time.perf_counter() - started > budget.max_seconds:
                stop_reason = StopReason.BUDGET_TIME
                break
            if budget.max_tokens and self._tokens_used(run_id) >= budget.max_tokens:
                stop_reason = StopReason.BUDGET_TOKENS
                break
            interrupt.check()
            iteration = state.iteration + 1
            round_start = time.perf_counter()
            record = RoundRecord(iteration)
            self.meter.iteration = iteration
            end = record.end_reason = yield from self._play_round(state, record, progress)
            progress.slots_used += 1
            if end == RoundEnd.FIRST_READING and progress.first_reading is not None:
                state, compressed = firstreading.commit(
                    self.ctx, run_id, state, record, progress.first_reading, progress.rules, round_start
                )
                yield compressed
                stop_reason = StopReason.FIRST_READING
                yield Converged(stop_reason)
                break
            new_tokens = self._new_tokens(record, progress)
            progress.tool_calls += record.tool_calls
            progress.seen_chunks.update(c.chunk_id for step in record.steps for c in step.chunks)
            new_state, reason, compressed = self._commit_round(
                run_id, state, record, end, progress, round_start, new_tokens
            )
            yield compressed
            state = new_state
            if reason:
                stop_reason = reason
                yield Converged(reason)
                break
        reading = progress.first_reading.to_dict() if progress.first_reading is not None else None
        result = finishing.finalize(
            self.ctx, run_id, state, stop_reason, started, prior_seconds, self._book(state), reading
        )
        yield RunFinished(result)

    def _commit_round(
        self,
        run_id: str,
        state: ResearchState,
        record: RoundRecord,
        end: RoundEnd,
        progress: RunProgress,
        round_start: float,
        new_tokens: int,
    ) -> tuple[ResearchState, StopReason | None, RoundCompressed]:
        """The round (ended by `end`, begun at `round_start`) folded into the next state and stored
        with its stats: the new state, the reason to stop after it (None: go on), and the event that
        reports it."""
        budget = self.settings.budget
        self.meter.purpose = "compress"
        outcome = compress(
            self.compressor,
            state,
            record,
            max_tokens=self.settings.sampling.update_max_tokens,
            max_sentences=budget.evidence_sentences,
            relevance=self.relevance,
            retries=budget.compress_retries,
            state_max_tokens=self.settings.state_max_tokens,
            rules=progress.rules,
        )
        new_state = outcome.state
        if not new_state.answer and record.finish_answer:
            new_state = new_state.model_copy(update={"answer": record.finish_answer})
            outcome.diff.answer_after = new_state.answer
        calls = self.meter.drain()
        state_tokens = self.compressor.count_tokens(new_state.render())
        reason = (
            converged(state, new_state, outcome.diff, end == RoundEnd.FINISH)
            if progress.tool_calls >= budget.min_tool_calls
            else None
        )
        stats: RoundStats = {
            "seconds": round(time.perf_counter() - round_start, 3),
            "tool_calls": record.tool_calls,
            "end_reason": end,
            "slots": 1,  # a round takes one slot (rounds were once carried into the next)
            "new_tokens": new_tokens,
            "llm_calls": len(calls),
            "prompt_tokens": sum(c["prompt_tokens"] for c in calls),
            "completion_tokens": sum(c["completion_tokens"] for c in calls),
            "state_tokens": state_tokens,
            "sentences_left_out": outcome.sentences_left_out,
            "compression_attempts": outcome.attempts,
            "rejected": outcome.rejected,
            "compression_failed": outcome.failed,
            "stop_reason": reason,
            "rules": progress.rules.take(),
        }
        self.store.save_round(
            run_id,
            record.iteration,
            new_state.model_dump(),
            record.to_dict(),
            outcome.diff.model_dump(),
            stats,
            calls,
        )
        compressed = RoundCompressed(
            record.iteration,
            record.tool_calls,
            end,
            outcome.diff.summary(),
            new_state.answer,
            len(new_state.evidence),
            state_tokens,
            outcome.failed,
            stats["prompt_tokens"],
            stats["completion_tokens"],
            round(sum(c["seconds"] for c in calls), 2),
        )
        return new_state, reason, compressed

    def _new_tokens(self, record: RoundRecord, progress: RunProgress) -> int:
        """Tokens of text the round's tools returned that no earlier round of this run had seen."""
        seen = progress.seen_chunks
        fresh = {c.chunk_id: c for step in record.steps for c in step.chunks if c.chunk_id not in seen}
        return sum(self.planner.count_tokens(c.text) for c in fresh.values())

    def _tokens_used(self, run_id: str) -> int:
        calls = self.store.calls(run_id) + self.meter.pending
        return sum(c["prompt_tokens"] + c["completion_tokens"] for c in calls)

    def _play_round(
        self, state: ResearchState, record: RoundRecord, progress: RunProgress
    ) -> Generator[Event, None, RoundEnd]:
        """Up to K tool calls.

        Code makes the round's first search: the question itself in round 1 (hop 0: the run has
        always seen what RAG sees), the best lead of the state after that (the entity the evidence
        says the answer goes through). Then the planner picks among the searches code proposes, or
        writes its own; a search the run has made already is never made again."""
        budget = self.settings.budget
        self.meter.purpose = "action"
        toolbox = progress.toolbox
        rules = progress.rules
        rules.round = record.iteration
        calls_before = record.tool_calls
        if (yield from self._code_opens(state, record, toolbox, progress)):
            return RoundEnd.FIRST_READING
        intro, messages = self._round_opening(state, record)
        trajectory_tokens, invalid, refused = (
            sum(self.planner.count_tokens(s.render()) for s in record.steps),
            0,
            0,
        )
        note: str | None = None  # a message to the planner about its last action, before the next prompt
        while record.tool_calls - calls_before < budget.max_steps_per_round:
            if trajectory_tokens > budget.round_token_threshold:
                return RoundEnd.TOKENS
            offered = (
                candidates.propose(
                    state,
                    set(toolbox.pages),
                    _round_chunks(record),
                    record.steps[-1].gap if record.steps else "",
                    self.title_index(),
                )
                if rules.on("search.candidates")
                else []
            )
            left = budget.max_steps_per_round - (record.tool_calls - calls_before)
            prompt = self._step_prompt(state, record, offered, left, note)
            note = None
            if len(messages) == 1:
                prompt = "\n\n".join([*intro, prompt])
            messages.append({"role": "user", "content": prompt})
            try:
                generation = self.planner.generate(
                    messages,
                    schema=planner_action_schema(),
                    max_tokens=self.settings.sampling.action_max_tokens,
                )
            except StructuredOutputError as e:
                invalid += 1
                step = _add_step(
                    record, Step(0, "", "invalid", "", f"invalid action: {e}", error=str(e), prompt=prompt)
                )
                yield StepTaken(record.iteration, step.index, "invalid", "", "", str(e))
                if invalid >= MAX_INVALID_ACTIONS:
                    return RoundEnd.INVALID_ACTIONS
                # a re-ask whose reason opens the next step's prompt (that shows the candidates again)
                messages.append({"role": "assistant", "content": e.output[-INVALID_KEPT_CHARS:]})
                note = invalid_action(e)
                continue
            except ContextOverflowError:
                return RoundEnd.CONTEXT
            action = generation.parsed
            call = action.call
            messages.append({"role": "assistant", "content": generation.text})
            if call.tool == "finish":
                short = budget.min_tool_calls - progress.tool_calls - record.tool_calls
                step = _finish_step(record, action, prompt, short)
                yield StepTaken(
                    record.iteration, step.index, "finish", call.answer, action.gap, step.error or ""
                )
                if not step.error:
                    return RoundEnd.FINISH
                refused, note = refused + 1, step.observation
                if refused >= MAX_INVALID_ACTIONS:
                    return RoundEnd.FINISH_REFUSED
                continue
            made = self._tool_step(record, toolbox, state.question, action, offered, prompt, rules)
            if made is None:  # a repeated query and nothing else left to search
                return RoundEnd.REPEATS
            interrupt.check()
            yield StepTaken(
                record.iteration, made.index, made.tool, made.argument, made.gap, _summary_of(made), made.by
            )
            trajectory_tokens += self.planner.count_tokens(made.render())
        return RoundEnd.STEPS

    def _code_opens(
        self, state: ResearchState, record: RoundRecord, toolbox: Toolbox, progress: RunProgress
    ) -> Generator[Event, None, bool]:
        """The searches code makes before the planner's first step of a run (`_opening_searches`);
        True when the first of a run, the question itself, already held the answer (the run ends)."""
        for query, gap, offered in self._opening_searches(state, record, toolbox, progress.rules):
            step = self._search(record, toolbox, state.question, query, by="code", gap=gap, offered=offered)
            yield StepTaken(
                record.iteration, step.index, "search", step.argument, step.gap, _summary_of(step), "code"
            )
            hop0 = state.iteration == 0 and len(record.steps) == 1 and query == state.question
            if hop0:
                progress.first_reading = firstreading.settle(self.ctx, state, step, progress.rules)
                if progress.first_reading is not None and progress.first_reading.holds:
                    return True
        return False

    def _round_opening(self, state: ResearchState, record: RoundRecord) -> tuple[list[str], list[Message]]:
        """What the planner's first prompt of the round opens with (the state, and the texts of the
        searches code made), and the conversation so far (the system prompt)."""
        intro = [prompts.render("planner_round", state=state.render(), iteration=record.iteration)]
        intro += [s.observation for s in record.steps if s.by == "code" and not s.prompt]
        return intro, [{"role": "system", "content": self.system_prompt}]

    def _tool_step(
        self,
        record: RoundRecord,
        toolbox: Toolbox,
        question: str,
        action: AnyAction,
        offered: list[candidates.Candidate],
        prompt: str,
        rules: RuleBook,
    ) -> Step | None:
        """The planner's tool call made and added to the round; None when it repeats a search and
        code has nothing else left to search."""
        call = action.call
        if call.tool in ("pick", "search"):
            chosen, by = self._query(call, offered, toolbox, rules)
            if chosen is None:
                return None
            if by == "pick":
                rules.fired("search.candidates", f"the planner took the candidate search {chosen!r}")
            return self._search(
                record, toolbox, question, chosen, by=by, gap=action.gap, offered=offered, prompt=prompt
            )
        assert not isinstance(call, PickArgs)
        observation = toolbox.use(call)
        step = Step(
            len(record.steps) + 1,
            action.gap,
            call.tool,
            argument_of(call),
            observation.text,
            error=observation.error,
            chunks=observation.chunks,
            prompt=prompt,
            candidates=[c.to_dict() for c in offered],
        )
        record.steps.append(step)
        return step

    def _opening_searches(
        self, state: ResearchState, record: RoundRecord, toolbox: Toolbox, rules: RuleBook
    ) -> Iterator[tuple[str, str, list[candidates.Candidate]]]:
        """The searches code makes at the start of a round, before the planner's first step: (query,
        gap, candidates offered). Round 1: the question itself (hop 0), then the best candidates its
        texts give (the entity the question goes through, or a side of a comparison that hop 0 did
        not find), `budget.opening_searches` in all: a 1.5B planner picked worse than this order,
        and each of its steps costs a prompt of a thousand tokens. Later rounds: the best lead of the first hop (a name that evidence about the
        question's names states, not searched yet)."""
        budget = self.settings.budget
        if state.iteration == 0 and not toolbox.pages:
            if rules.on("search.hop0"):
                rules.fired("search.hop0", "searched the question itself")
                yield state.question, "hop 0: the question as asked", []
            if not rules.on("search.opening"):
                return
            for hop in range(1, min(budget.opening_searches, budget.max_steps_per_round)):
                offered = candidates.propose(
                    state, set(toolbox.pages), _round_chunks(record), titles=self.title_index()
                )
                if not offered:
                    return
                rules.fired("search.opening", f"searched {offered[0].query!r} ({offered[0].origin})")
                yield offered[0].query, f"hop {hop}: {offered[0].origin}", offered
            return
        found = (
            candidates.leads(state, set(toolbox.pages), first_hop_only=True)
            if rules.on("search.lead")
            else []
        )
        if found:
            rules.fired("search.lead", f"searched {found[0].query!r} ({found[0].origin})")
            yield found[0].query, f"follow the lead: {found[0].origin}", []

    def _query(
        self, call: Any, offered: list[candidates.Candidate], toolbox: Toolbox, rules: RuleBook
    ) -> tuple[str | None, str]:
        """The query a pick or a free search stands for; a repeated free query is replaced by the
        best candidate (by code), so that no search of the run is made twice."""
        if call.tool == "pick":
            return offered[min(call.number, len(offered)) - 1].query if offered else None, "pick"
        copied = candidates.chosen(call.query, offered)
        if copied is not None:
            return copied.query, "pick"
        if query_key(call.query) not in toolbox.pages and call.query.strip():
            return call.query, "planner"
        if not offered or not rules.on("search.no_repeat"):
            return None, "code"
        rules.fired("search.no_repeat", f"{call.query!r} searched already; searched {offered[0].query!r}")
        return offered[0].query, "code"

    def _search(
        self,
        record: RoundRecord,
        toolbox: Toolbox,
        question: str,
        query: str,
        by: str,
        gap: str = "",
        offered: list[candidates.Candidate] | None = None,
        prompt: str = "",
    ) -> Step:
        args = SearchArgs(tool="search", query=query)
        if not toolbox.pages:  # the run's first search, the question: as many hits as RAG reads
            r = self.settings.retrieval
            try:
                observation = SearchTool(
                    self.corpus, k=r.first_k, hit_words=r.hit_words, context_window=r.open_window
                )(args)
            except RetracError as e:  # a broken store or index: an observation, as in the toolbox
                observation = Observation(f"search failed: {e}", error=str(e))
            toolbox.remember([query])
        else:
            observation = toolbox.use(args)
        text = observation.text
        hits = [c for c in observation.chunks if f"[{c.chunk_id}]" in text]
        if hits and not observation.error:
            text = candidates.compact(
                hits, f"{question} {gap} {query}", text.splitlines()[0], observation.more
            )
        if by == "code" and record.steps:
            text = f"(Your query repeated an earlier search of this run; code searched {query!r} instead.)\n{text}"
        step = Step(
            len(record.steps) + 1,
            gap,
            "search",
            query,
            text,
            error=observation.error,
            chunks=observation.chunks,
            by=by,
            candidates=[c.to_dict() for c in offered or []],
            prompt=prompt,
        )
        record.steps.append(step)
        return step

    def _step_prompt(
        self,
        state: ResearchState,
        record: RoundRecord,
        offered: list[candidates.Candidate],
        left: int,
        note: str | None,
    ) -> str:
        last = record.steps[-1] if record.steps else None
        observation = "" if last is None or (last.by == "code" and not last.prompt) else last.observation
        return prompts.render(
            "observation",
            observation=observation,
            note=note or "",
            candidates=candidates.render(offered),
            question=state.question,
            steps_left=left,
        )

    # -- start and end ---------------------------------------------------------------------------
    def _constraints(self, question: str) -> list[str]:
        messages: list[Message] = [
            {"role": "user", "content": prompts.render("constraints", question=question)}
        ]
        try:
            generation = self.compressor.generate(messages, schema=ConstraintsDraft, max_tokens=120)
        except (StructuredOutputError, ContextOverflowError):
            return []
        # Only verbatim spans of the question survive: constraints are copied, never reworded.
        spans = [c.strip(" ,.?") for c in generation.parsed.constraints]
        return [c for c in dict.fromkeys(spans) if c != question and c in question and _constraint_like(c)]


def _constraint_like(span: str) -> bool:
    """A name, a number, or a phrase; a lone common word ("year") constrains nothing."""
    return len(span.split()) >= 2 or any(ch.isdigit() for ch in span) or span[:1].isupper()


def _add_step(record: RoundRecord, step: Step) -> Step:
    """`step` as the round's next one, numbered after the steps before it."""
    step.index = len(record.steps) + 1
    record.steps.append(step)
    return step


def _finish_step(record: RoundRecord, action: AnyAction, prompt: str, short: int) -> Step:
    """The planner's `finish`: taken as the round's answer, or, while the budget asks for `short`
    more tool calls (the long-horizon evaluation), noted and refused with a note saying why (its
    `error` is "too early" and its observation the note)."""
    call = action.call
    if short <= 0:
        record.finish_answer = call.answer.strip() or None
        return _add_step(record, Step(0, action.gap, "finish", call.answer, "", prompt=prompt))
    note = too_early(call.answer, short)
    return _add_step(
        record, Step(0, action.gap, "finish", call.answer, note, error="too early", prompt=prompt)
    )


def _summary_of(step: Step) -> str:
    if step.error:
        return step.error
    return f"{len(step.chunks)} chunk(s): " + ", ".join(c.chunk_id for c in step.chunks[:4])


def _round_chunks(record: RoundRecord) -> list[Chunk]:
    """The chunks this round's searches and reads returned, each once, in order."""
    return list({c.chunk_id: c for step in record.steps for c in step.chunks}.values())
