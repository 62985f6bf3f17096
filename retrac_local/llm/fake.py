"""A scripted LLM for tests: pops canned outputs in order and records every call it got."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from retrac_local.llm.base import Generation, Message, Usage, completed

Script = str | BaseModel | dict[str, Any] | Callable[[list[Message], type[BaseModel] | None], Any]


@dataclass
class Call:
    messages: list[Message]
    schema: type[BaseModel] | None
    max_tokens: int
    temperature: float | None = None


@dataclass
class ScriptedLLM:
    """Each queued item answers one call: a string (raw text), a model or dict (dumped as JSON), or a
    function of (messages, schema) returning one of those. An empty queue is a test bug and raises."""

    outputs: list[Script] = field(default_factory=list)
    name: str = "scripted"
    n_ctx: int = 8192
    truncate_after: int | None = None  # simulate hitting max_tokens after this many characters
    calls: list[Call] = field(default_factory=list)

    def enqueue(self, *items: Script) -> ScriptedLLM:
        self.outputs.extend(items)
        return self

    def count_tokens(self, text: str) -> int:
        return max(1, len(text) // 4)

    def generate(
        self,
        messages: list[Message],
        *,
        schema: type[BaseModel] | None = None,
        max_tokens: int = 256,
        temperature: float | None = None,
    ) -> Generation[Any]:
        self.calls.append(Call(list(messages), schema, max_tokens, temperature))
        if not self.outputs:
            raise AssertionError(f"ScriptedLLM ran out of outputs at call {len(self.calls)}")
        item = self.outputs.pop(0)
        if callable(item) and not isinstance(item, BaseModel):
            item = item(messages, schema)
        if isinstance(item, BaseModel):
            text = item.model_dump_json()
        elif isinstance(item, dict):
            text = json.dumps(item)
        else:
            text = str(item)
        finish = "stop"
        if self.truncate_after is not None and len(text) > self.truncate_after:
            text, finish = text[: self.truncate_after], "length"
        prompt = "".join(m["content"] for m in messages)
        usage = Usage(prompt_tokens=self.count_tokens(prompt), completion_tokens=self.count_tokens(text))
        return completed(text, finish, usage, schema)
