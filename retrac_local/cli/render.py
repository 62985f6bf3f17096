"""How runs look in a terminal: one line per step and per round, then the answer and its quotes."""

from __future__ import annotations

import json
import textwrap
from typing import Any

import click

from retrac_local.contract.events import (
    Converged,
    Event,
    RoundCompressed,
    RunFinished,
    RunResult,
    RunStarted,
    StepTaken,
)
from retrac_local.untrusted import for_terminal


def say(text: str, err: bool = False, nl: bool = True) -> None:
    """Print text that may hold document text or a model's words: nothing a terminal acts on."""
    click.echo(for_terminal(text), err=err, nl=nl)


def echo_json(data: Any) -> None:
    say(json.dumps(data, indent=2, ensure_ascii=False))


def render_event(event: Event) -> None:
    if isinstance(event, RunStarted):
        where = f" (resuming at round {event.resumed_at_round})" if event.resumed_at_round else ""
        click.echo(f"run {event.run_id}{where}")
        click.echo(click.style("Question: ", bold=True) + for_terminal(event.question))
        for past in event.memory:
            say(
                f"memory: {past['evidence_seeded']} verified fact(s) from past run {past['run_id']} "
                f"(similarity {past['similarity']:.2f}: {past['question']!r})"
            )
    elif isinstance(event, StepTaken):
        arg = f"({event.argument!r})" if event.argument else ""
        tail = f" → {event.summary}" if event.summary else ""
        by = {"code": " [by code]", "pick": " [picked]"}.get(event.by, "")
        say(f"  round {event.iteration} · {event.tool}{arg}{by}{tail}")
    elif isinstance(event, RoundCompressed):
        failed = " [compression failed: previous state kept]" if event.compression_failed else ""
        rate = f", {event.completion_tokens / event.llm_seconds:.1f} tok/s" if event.llm_seconds else ""
        click.echo(
            click.style(f"round {event.iteration}", bold=True)
            + f": {event.tool_calls} tool call(s), ended by {event.end_reason}; state learned: {for_terminal(event.summary)}"
            + f"; {event.evidence} evidence, state {event.state_tokens} tokens{failed}"
            + f" ({event.prompt_tokens:,} prompt + {event.completion_tokens:,} generated tokens{rate})"
        )
    elif isinstance(event, Converged):
        say(f"stopped: {event.reason}")
    elif isinstance(event, RunFinished):
        render_result(event.result)


def render_result(result: RunResult) -> None:
    click.echo("")
    click.echo(
        click.style("Answer: ", bold=True) + for_terminal(result.answer or "(none)") + f"   [{result.status}]"
    )
    if result.caveat:
        say(f"Caveat: {result.caveat}")
    if result.citations:
        click.echo("Citations (quotes checked against the stored text):")
        for c in result.citations:
            mark = "" if c.verified == "yes" else f" ({c.verified})"
            quote = textwrap.shorten(c.quote, 300, placeholder=" …")
            say(f'  [{c.evidence_id}] {c.label} — {c.chunk_id}{mark}\n      "{quote}"\n      {c.source}')
    else:
        click.echo("No verified citation supports this answer.")
    click.echo(
        f"{result.rounds} round(s), {result.llm_calls} LLM calls, {result.prompt_tokens} prompt + "
        f"{result.completion_tokens} completion tokens (peak prompt {result.peak_prompt_tokens}), "
        f"{result.seconds:.0f} s ({result.llm_seconds:.0f} s in the models); run id {result.run_id}"
    )
