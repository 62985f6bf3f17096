"""One exception root for everything a user can cause; the CLI turns these into one-line messages.

Our own bugs are not RetracErrors: they raise as ordinary exceptions, with a traceback.
"""

from __future__ import annotations

from typing import Any


class RetracError(Exception):
    """Root of the errors a person can act on; the message says what to do."""


class ConfigError(RetracError):
    """A setting, config file or environment variable is invalid."""


class ModelError(RetracError):
    """A model file is missing, unreadable, or not a GGUF file."""


class DependencyError(RetracError):
    """An optional heavy library is not installed."""


class CorpusError(RetracError):
    """The corpus store is missing, empty, or cannot be read or written."""


class RunNotFoundError(RetracError):
    """No run with this id in the run store."""


class StoreError(RetracError):
    """The run store cannot be opened or written."""


class RunBusyError(RetracError):
    """The run is being run by another process (a resume elsewhere, the page's worker)."""


class StructuredOutputError(RetracError):
    """A model's output did not parse into the schema it was constrained to."""

    def __init__(
        self, message: str, *, output: str, finish_reason: str | None = None, usage: Any = None
    ) -> None:
        super().__init__(message)
        self.output = output
        self.finish_reason = finish_reason
        self.usage = usage  # the tokens spent on the failed output still count


class ContextOverflowError(RetracError):
    """A prompt plus its output budget does not fit the model's context window."""

    def __init__(self, message: str, *, prompt_tokens: int, n_ctx: int) -> None:
        super().__init__(message)
        self.prompt_tokens = prompt_tokens
        self.n_ctx = n_ctx
