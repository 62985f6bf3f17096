"""The one interface every LLM backend implements, and the records it returns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, Literal, Protocol, TypedDict, TypeVar, overload, runtime_checkable

from pydantic import BaseModel, ValidationError

from retrac_local.errors import StructuredOutputError

T = TypeVar("T", bound=BaseModel)
P = TypeVar("P", bound=BaseModel | None)  # what a generation was parsed into


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
class Generation(Generic[P]):
    """One completion. `parsed` is its text read as the schema the call asked for (a `T` when the
    call gave `schema=T`), None when it gave none: callers get the type they asked for."""

    text: str
    finish_reason: str  # "stop" or "length"
    usage: Usage
    parsed: P


@runtime_checkable
class LLM(Protocol):
    """A chat model. `schema` constrains the output to that pydantic model's JSON; `temperature`
    overrides the configured one for this call (e.g. to leave a greedy loop). A backend implements
    one `generate` that returns `completed(...)`; the overloads say what its callers get."""

    name: str
    n_ctx: int

    @overload
    def generate(
        self,
        messages: list[Message],
        *,
        schema: type[T],
        max_tokens: int = 256,
        temperature: float | None = None,
    ) -> Generation[T]: ...

    @overload
    def generate(
        self,
        messages: list[Message],
        *,
        schema: None = None,
        max_tokens: int = 256,
        temperature: float | None = None,
    ) -> Generation[None]: ...

    def count_tokens(self, text: str) -> int: ...


def forget(*llms: object) -> None:
    """Drop what each model keeps of its earlier calls (its KV caches), keeping it loaded, where its
    backend can (a model given twice, as planner and compressor, once): a run then costs what it
    costs in a fresh process, whatever ran before it (the evaluation times each run so; the same
    prompt made by another mode just before would otherwise cost nothing)."""
    for llm in {id(m): m for m in llms}.values():
        drop = getattr(llm, "forget", None)
        if callable(drop):
            drop()


def completed(text: str, finish_reason: str, usage: Usage, schema: type[BaseModel] | None) -> Generation[Any]:
    """The generation of `text`, read as `schema` when the call gave one (a truncated or invalid
    output raises StructuredOutputError)."""
    plain: Generation[None] = Generation(text, finish_reason, usage, None)
    return (
        plain if schema is None else Generation(text, finish_reason, usage, parse_structured(plain, schema))
    )


def parse_structured(generation: Generation[Any], schema: type[T]) -> T:
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
