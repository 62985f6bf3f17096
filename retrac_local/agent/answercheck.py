"""Whether the cited texts state the answer: one short yes/no asked of the planner about the cited
quotes alone, after the final answer.

The final answer is drawn from everything the run read and always gives its best guess; this check
reads only what it cites. When the answer is not in the collection, a small model still answers
from the nearest text (a namesake, a related place), and its quotes are real: every code check of
a citation passes. Asked of the cited quotes alone whether they answer the question, the model
says no often enough to tell the user "not found" instead of *answered*. The answer text stays the
best guess, so a wrong "no" costs the status, never the answer."""

from __future__ import annotations

from typing import TYPE_CHECKING

from retrac_local.agent import prompts
from retrac_local.agent.schemas import AnswerCheck
from retrac_local.errors import ContextOverflowError, StructuredOutputError

if TYPE_CHECKING:
    from retrac_local.agent.events import Citation
    from retrac_local.llm.base import LLM, Message

CHECK_MAX_TOKENS = 12  # {"verdict": "yes"} and a little room


def not_found(answer: str) -> str:
    """The caveat of an answer whose cited texts do not state it."""
    return (
        "not found in the collection: the texts read do not state the answer to this question; "
        f'"{answer}" is the best guess from them'
    )


def states_answer(
    llm: LLM, system: str, question: str, answer: str, citations: list[Citation]
) -> bool | None:
    """True when the model reads the answer in the cited quotes, False when it does not, None when it
    gave no valid reply (no judgement: the answer's status stands)."""
    if not citations:
        return False
    messages: list[Message] = [
        {"role": "system", "content": system},
        {
            "role": "user",
            "content": prompts.render("answer_check", citations=citations, question=question, answer=answer),
        },
    ]
    try:
        generation = llm.generate(messages, schema=AnswerCheck, max_tokens=CHECK_MAX_TOKENS)
    except (StructuredOutputError, ContextOverflowError):
        return None
    return generation.parsed.verdict == "yes"
