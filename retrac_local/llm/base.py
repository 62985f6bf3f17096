"""The one interface every LLM backend implements, and the records it returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol, TypedDict, TypeVar, runtime_checkable

from pydantic import BaseModel, ValidationError

from retrac_local.errors import StructuredOutputError

T = TypeVar("T", bound=BaseModel)


class Message(TypedDict):
    role: Literal["system", "user", "assistant"]
    content: str


@dataclass
class Usage:
    prompt_tokens: int = 0  # tokens submitted in the prompt
    completion_tokens: int = 0
    cached_tokens: int = 0  # prompt tokens whose KV cache was reused, not recomputed
    seconds: float = 0.0

    @property
    def processed_prompt_tokens(self) -> int:
        return self.prompt_tokens - self.cached_tokens


@dataclass
class Generation:
    text: str
    finish_reason: str  # "stop" or "length"
    usage: Usage = field(default_factory=Usage)
    parsed: BaseModel | None = None


@runtime_checkable
class LLM(Protocol):
    """A chat model. `schema` constrains the output to that pydantic model's JSON; `temperature`
    overrides the configured one for this call (e.g. to leave a greedy loop)."""

    name: str
    n_ctx: int

    def generate(
        self,
        messages: list[Message],
        *,
        schema: type[BaseModel] | None = None,
        max_tokens: int = 256,
        temperature: float | None = None,
    ) -> Generation: ...

    def count_tokens(self, text: str) -> int: ...


def parse_structured(generation: Generation, schema: type[T]) -> T:
    """Parse a constrained generation; a truncated one is a failure, never parsed."""
    if generation.finish_reason == "length":
        raise StructuredOutputError(
            f"output stopped at the token limit before the {schema.__name__} JSON was complete",
            output=generation.text,
            finish_reason=generation.finish_reason,
            usage=generation.usage,
        )
    try:
        return schema.model_validate_json(generation.text)
    except ValidationError as e:
        raise StructuredOutputError(
            f"output is not a valid {schema.__name__}: {e.errors()[0]['msg']}",
            output=generation.text,
            finish_reason=generation.finish_reason,
            usage=generation.usage,
        ) from e
