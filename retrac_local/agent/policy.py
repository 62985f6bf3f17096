"""Limits and messages shared by the agents that let a model act step by step (Re-TRAC, ReAct)."""

from __future__ import annotations

MAX_INVALID_ACTIONS = 2  # invalid actions (or refused finishes) in a row that end a round
RESAMPLE_TEMPERATURE = 0.8  # after a repeated query the next action is sampled, not decoded greedily


def too_early(answer: str, short: int) -> str:
    return (
        f"Answer noted ({answer!r}), but the budget asks for {short} more tool call(s) before finishing: "
        "use them to check the answer against other sources."
    )
