"""ReAct, the baseline Re-TRAC is measured against: one growing conversation.

    system, question, then (action, full observation) appended for every step; the answer comes from
    `finish`, or is forced when the step budget is spent or the next step would overflow n_ctx.

Same models, tools, step budget (budget.max_rounds × budget.max_steps_per_round tool calls) and result
record as the Re-TRAC loop, so one scorer serves both. Nothing is persisted: a run is one evaluation item.
"""

from __future__ import annotations

import time
import uuid

from retrac_local.agent import prompts
from retrac_local.agent.meter import Meter, MeteredLLM
from retrac_local.agent.policy import (
    INVALID_KEPT_CHARS,
    MAX_INVALID_ACTIONS,
    RESAMPLE_TEMPERATURE,
    invalid_action,
    reask,
    too_early,
)
from retrac_local.agent.question import parse
from retrac_local.agent.toolbox import REPEATED, Toolbox
from retrac_local.config import Settings
from retrac_local.contract.events import RunResult, RunStatus, StopReason
from retrac_local.contract.schemas import ShortAnswer, action_schema
from retrac_local.corpus.base import Corpus
from retrac_local.errors import ContextOverflowError, RetracError, StructuredOutputError
from retrac_local.llm.base import LLM, Message
from retrac_local.records import CallRecord
from retrac_local.rules.book import RuleBook
from retrac_local.rules.choices import held_to, pick

MESSAGE_OVERHEAD = 8  # chat-template tokens around each message
MAX_REFUSED_FINISHES = 3


class ReactAgent:
    def __init__(self, planner: LLM, corpus: Corpus, settings: Settings) -> None:
        self.meter = Meter()
        self.planner: LLM = MeteredLLM(planner, "planner", self.meter)
        self.corpus, self.settings = corpus, settings

    def run(self, question: str) -> RunResult:
        question = question.strip()
        if not question:
            raise RetracError("the question is empty")
        started = time.perf_counter()
        budget, sampling = self.settings.budget, self.settings.sampling
        toolbox = Toolbox(self.corpus, self.settings)
        messages: list[Message] = [
            {"role": "system", "content": prompts.render("react_system", tools=toolbox.descriptions())},
            {"role": "user", "content": f"Question: {question}"},
        ]
        used = sum(self._tokens(m) for m in messages)
        # Room always kept for the forced answer: its prompt and its tokens.
        reserve = (
            sampling.answer_max_tokens
            + self.planner.count_tokens(prompts.render("react_answer", question=question))
            + 2 * MESSAGE_OVERHEAD
        )
        max_calls = budget.max_rounds * budget.max_steps_per_round
        answer: str | None = None
        stop_reason, tool_calls, invalid, refused = StopReason.BUDGET_STEPS, 0, 0, 0
        retrieved: list[str] = []
        searches: list[tuple[str, list[str]]] = []  # (query, chunk ids)
        resample: float | None = None
        rules = RuleBook(self.settings.rules.disabled)
        choices = parse(question).options if rules.on("answer.options") else ()
        self.meter.purpose = "action"
        while tool_calls < max_calls:
            if used + sampling.action_max_tokens + reserve > self.planner.n_ctx:
                stop_reason = StopReason.CONTEXT
                break
            self.meter.iteration = tool_calls + 1
            try:
                generation = self.planner.generate(
                    messages,
                    schema=action_schema(),
                    max_tokens=sampling.action_max_tokens,
                    temperature=resample,
                )
            except StructuredOutputError as e:
                invalid += 1
                if invalid >= MAX_INVALID_ACTIONS:
                    stop_reason = StopReason.INVALID_ACTIONS
                    break
                messages, used = self._append(
                    messages, used, e.output[-INVALID_KEPT_CHARS:], invalid_action(e)
                )
                continue
            except ContextOverflowError:
                stop_reason = StopReason.CONTEXT
                break
            action = generation.parsed
            call = action.call
            if call.tool == "finish":
                short = budget.min_tool_calls - tool_calls
                if short <= 0 or refused >= MAX_REFUSED_FINISHES:
                    answer, stop_reason = (
                        pick(call.answer.strip() or None, choices),
                        StopReason.PLANNER_FINISHED,
                    )
                    if answer != (call.answer.strip() or None):
                        rules.fired("answer.options", f"{call.answer!r} read as the option {answer!r}")
                    break
                refused += 1
                messages, used = self._append(messages, used, generation.text, too_early(call.answer, short))
                continue
            observation = toolbox.use(call)
            tool_calls += 1
            resample = RESAMPLE_TEMPERATURE if observation.error == REPEATED else None
            retrieved += [c.chunk_id for c in observation.chunks]
            if call.tool == "search":
                searches.append((call.query, [c.chunk_id for c in observation.chunks]))
            text = prompts.render(
                "react_observation",
                observation=observation.text,
                question=question,
                steps_left=max_calls - tool_calls,
            )
            messages, used = self._append(messages, used, generation.text, text)
        if answer is None:
            answer = self._forced_answer(messages, question, choices)
            if answer and choices:
                rules.fired("answer.options", f"the answer held to one of {' / '.join(choices)}")
        calls = self.meter.drain()
        status = (
            RunStatus.FAILED
            if not answer
            else RunStatus.ANSWERED
            if stop_reason == StopReason.PLANNER_FINISHED
            else RunStatus.BUDGET_EXHAUSTED
        )
        return result_record(
            f"react-{uuid.uuid4().hex[:12]}",
            question,
            status,
            answer,
            tool_calls,
            stop_reason,
            calls,
            time.perf_counter() - started,
            retrieved,
            searches,
            rule_log=rules.take(),
        )

    def _tokens(self, message: Message) -> int:
        return self.planner.count_tokens(message["content"]) + MESSAGE_OVERHEAD

    def _append(
        self, messages: list[Message], used: int, assistant: str, user: str
    ) -> tuple[list[Message], int]:
        new = reask(assistant, user)
        return messages + new, used + sum(self._tokens(m) for m in new)

    def _forced_answer(self, messages: list[Message], question: str, choices: tuple[str, ...]) -> str | None:
        self.meter.purpose = "finalize"
        # The last observation may not fit with the answer prompt: drop whole steps from the end until it does.
        ask: Message = {"role": "user", "content": prompts.render("react_answer", question=question)}
        while True:
            try:
                generation = self.planner.generate(
                    [*messages, ask],
                    schema=held_to(ShortAnswer, choices),
                    max_tokens=self.settings.sampling.answer_max_tokens,
                )
            except ContextOverflowError:
                if len(messages) <= 2:
                    return None
                messages = messages[:-2]
                continue
            except StructuredOutputError:
                return None
            return generation.parsed.answer.strip() or None


def result_record(
    run_id: str,
    question: str,
    status: RunStatus,
    answer: str | None,
    rounds: int,
    stop_reason: StopReason,
    calls: list[CallRecord],
    seconds: float,
    retrieved: list[str],
    searches: list[tuple[str, list[str]]] | None = None,
    rule_log: list[dict[str, object]] | None = None,
) -> RunResult:
    """The result of a baseline run; `searches`: each query with the chunk ids it returned."""
    searches = searches or []
    return RunResult(
        run_id=run_id,
        question=question,
        status=status,
        answer=answer,
        citations=[],
        rounds=rounds,
        stop_reason=stop_reason,
        llm_calls=len(calls),
        prompt_tokens=sum(c["prompt_tokens"] for c in calls),
        completion_tokens=sum(c["completion_tokens"] for c in calls),
        peak_prompt_tokens=max((c["prompt_tokens"] for c in calls), default=0),
        seconds=seconds,
        llm_seconds=sum(c["seconds"] for c in calls),
        calls=calls,
        retrieved=list(dict.fromkeys(retrieved)),
        searches=[q for q, _ in searches],
        first_retrieved=list(searches[0][1]) if searches else [],
        rule_log=list(rule_log or []),
        asked=parse(question).to_dict(),
    )
