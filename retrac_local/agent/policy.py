"""Limits and messages shared by the agents that let a model act step by step (Re-TRAC, ReAct), and
the one way every mode asks a model again after output that code refused."""

from __future__ import annotations

from retrac_local.llm.base import Message

MAX_INVALID_ACTIONS = 2  # invalid actions (or refused finishes) in a row that end a round
RESAMPLE_TEMPERATURE = 0.8  # after a repeated query the next action is sampled, not decoded greedily


INVALID_KEPT_CHARS = 500  # of an invalid action, the tail shown back to the planner


def reask(output: str, why: str, kept: int | None = None) -> list[Message]:
    """What a re-ask adds to the conversation: the model's refused output (its last `kept`
    characters: a cut-off reply can be long) and, as the next user message, why it was refused."""
    shown = output if kept is None else output[-kept:]
    return [{"role": "assistant", "content": shown}, {"role": "user", "content": why}]


def invalid_action(error: Exception) -> str:
    return f"That was not a valid action ({error}). Reply with one JSON action."


def too_early(answer: str, short: int) -> str:
    return (
        f"Answer noted ({answer!r}), but the budget asks for {short} more tool call(s) before finishing: "
        "use them to check the answer against other sources."
    )
