"""The alternatives a question names ("Which is a herb, Saltwort or Kelpia?", "Between A and B,
who …?"), so that the final answer can be held to one of them.

Small models answer such questions with the property instead of the option ("herb"); when the
question names its options, the answer's grammar allows only those. Every mode's final answer uses
the same rule, so the comparison between modes stays fair. Found by rules, never by the model: a
question whose options cannot be told apart with confidence gets none, and its answer is free.
"""

from __future__ import annotations

from typing import Any

from pydantic import create_model

from retrac_local.agent.question import option_key


def pick(answer: str | None, choices: tuple[str, ...]) -> str | None:
    """The option a free answer names, when it names exactly one; otherwise the answer unchanged."""
    if not answer or not choices:
        return answer
    key = option_key(answer)
    named = [c for c in choices if option_key(c) and (option_key(c) in key or key in option_key(c))]
    return named[0] if len(named) == 1 else answer


def held_to(schema: type[Any], choices: tuple[str, ...]) -> type[Any]:
    """`schema` (a model with an `answer` field) whose answer must be one of the options."""
    if not choices:
        return schema
    from typing import Literal

    model = create_model(schema.__name__, __base__=schema, answer=(Literal[choices], ...))  # type: ignore[arg-type]
    model.grammar_cache = False  # type: ignore[attr-defined]  # per question
    return model
