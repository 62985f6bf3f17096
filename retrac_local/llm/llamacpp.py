"""llama-cpp-python backend: GGUF models in-process, each file loaded once per process.

Prompts are rendered with the chat template stored in the GGUF file and submitted as tokens, so
llama.cpp's prefix matching reuses the KV cache of the previous call: a round's calls share the
system prompt, question and state, and only the new tokens are evaluated. A role keeps a few KV
caches (`kv_caches`): each call runs on the one holding the longest prefix of its prompt, so prompts
of different kinds on one role (a compression and the question's constraints; a planner step and
the final answer) each keep their system prompt cached from one question to the next.

Only the template's own markers become control tokens. The messages' text (which holds document
text) is tokenized as plain text, so a document holding `<|im_end|><|im_start|>system …` cannot
open a turn of its own.
"""

from __future__ import annotations

import os
import threading
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from retrac_local import interrupt
from retrac_local.errors import ContextOverflowError, ModelError
from retrac_local.lazy import require
from retrac_local.llm.base import Generation, Message, Usage, completed
from retrac_local.llm.structured import SchemaConstrainer

if TYPE_CHECKING:
    from llama_cpp import Llama

    from retrac_local.config import ModelSettings, SamplingSettings

GGUF_MAGIC = b"GGUF"
_LOADED: dict[tuple[str, int, int, str], tuple[Llama, SchemaConstrainer]] = {}
_LOAD_LOCK = threading.Lock()


def check_gguf(path: Path) -> None:
    """Fail early, with the file named, on a missing, unreadable or non-GGUF model file."""
    if not path.exists():
        raise ModelError(f"model file {path} does not exist; run `make models` or set its path in the config")
    try:
        with path.open("rb") as f:
            magic = f.read(4)
    except OSError as e:
        raise ModelError(f"model file {path} cannot be read: {e}") from e
    if magic != GGUF_MAGIC:
        raise ModelError(
            f"model file {path} is not a GGUF file (it starts with {magic!r}); point the config at a .gguf model"
        )


def load_llama(
    path: Path, settings: ModelSettings, seed: int, cache_dir: Path | None, slot: str = ""
) -> tuple[Llama, SchemaConstrainer]:
    """One `Llama` per (file, context, offload, slot) in this process. Roles that name one file share
    the memory-mapped weights either way; with different `slot`s each keeps its own KV cache, so that
    a compressor call does not evict the planner's prompt prefix (and the other way round)."""
    key = (str(path.resolve()), settings.n_ctx, settings.n_gpu_layers, slot)
    with _LOAD_LOCK:
        if key not in _LOADED:
            check_gguf(path)
            llama_cpp = require("llama_cpp", purpose="running GGUF models")
            if settings.n_gpu_layers != 0 and not llama_cpp.llama_supports_gpu_offload():
                raise ModelError(
                    f"n_gpu_layers = {settings.n_gpu_layers} for {path.name}, but this llama-cpp-python build "
                    "cannot offload to a GPU; rebuild it for your GPU (README, 'A GPU') or set n_gpu_layers = 0"
                )
            # llama-cpp-python's own default is half the cores for generation: on 2 cores, one thread
            # (measured: 6.0 tok/s against 11.9 tok/s with both cores, 1.5B model).
            threads = settings.n_threads or available_cores()
            try:
                llama = llama_cpp.Llama(
                    model_path=str(path),
                    n_ctx=settings.n_ctx,
                    n_threads=threads,
                    n_threads_batch=threads,
                    n_batch=settings.n_batch,
                    n_gpu_layers=settings.n_gpu_layers,
                    seed=seed,
                    verbose=False,
                )
            except (ValueError, RuntimeError) as e:
                raise ModelError(f"llama.cpp could not load {path}: {e}. Is it a complete GGUF file?") from e
            trained = llama._model.n_ctx_train()  # noqa: SLF001 (no public accessor in llama-cpp-python)
            if settings.n_ctx > trained:
                raise ModelError(
                    f"n_ctx = {settings.n_ctx} is more than {path.name} was trained for ({trained}); "
                    f"set n_ctx to {trained} or less for this model"
                )
            _LOADED[key] = (llama, SchemaConstrainer(llama, cache_dir))
        return _LOADED[key]


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity), at least one."""
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except AttributeError:  # not on Linux
        return max(os.cpu_count() or 1, 1)


class LlamaCppLLM:
    """A GGUF chat model through llama-cpp-python; `generate` constrains JSON when given a schema."""

    def __init__(
        self,
        path: Path,
        settings: ModelSettings,
        sampling: SamplingSettings,
        cache_dir: Path | None = None,
        slot: str = "",
    ) -> None:
        self._slot = slot
        self.path = path
        self.name = path.name
        self.n_ctx = settings.n_ctx
        self._settings = settings
        self._sampling = sampling
        self._cache_dir = cache_dir
        self._llama: Llama | None = None  # the first KV cache; it also tokenizes
        self._constrainer: SchemaConstrainer | None = None
        self._contexts: list[tuple[Llama, SchemaConstrainer]] = []
        self._last_used: list[int] = []  # the call each cache last ran
        self._formatter: Any = None
        self._calls = 0

    def load(self) -> LlamaCppLLM:
        if self._llama is None:
            self._llama, self._constrainer = load_llama(
                self.path, self._settings, self._sampling.seed, self._cache_dir, self._slot
            )
            self._contexts, self._last_used = [(self._llama, self._constrainer)], [0]
            self._formatter = self._chat_formatter(self._llama)
        return self

    def forget(self) -> None:
        """Every KV cache of this model emptied (the weights stay loaded) and its calls counted from
        zero again: the next call processes its whole prompt, and samples with the seeds it would
        have in a fresh process, so a run repeats whatever ran before it."""
        for llama, _ in self._contexts:
            llama.reset()
        self._last_used = [0] * len(self._contexts)
        self._calls = 0

    def _context(self, tokens: list[int]) -> tuple[Llama, SchemaConstrainer, int]:
        """The KV cache to run `tokens` on, and how many of them it holds already: the cache holding
        the longest prefix of them; when none holds more than a chat template's opening, an unused
        cache (a new one while the role has fewer than `kv_caches`), else the least recently used."""
        held = [_common_prefix(list(llama._input_ids), tokens) for llama, _ in self._contexts]
        best = max(range(len(held)), key=lambda i: (held[i], self._last_used[i]))
        if held[best] < _USEFUL_PREFIX:
            if 0 in self._last_used:
                best = self._last_used.index(0)
            elif len(self._contexts) < self._settings.kv_caches:
                self._contexts.append(
                    load_llama(
                        self.path,
                        self._settings,
                        self._sampling.seed,
                        self._cache_dir,
                        f"{self._slot}#{len(self._contexts)}",
                    )
                )
                self._last_used.append(0)
                held.append(0)
                best = len(self._contexts) - 1
            else:
                best = min(range(len(held)), key=lambda i: self._last_used[i])
        self._last_used[best] = self._calls + 1
        llama, constrainer = self._contexts[best]
        return llama, constrainer, held[best]

    @staticmethod
    def _chat_formatter(llama: Llama) -> Any:
        template = llama.metadata.get("tokenizer.chat_template")
        if not template:
            raise ModelError(
                f"{llama.model_path} carries no chat template; use an instruct model with a chat template"
            )
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        eos = llama.detokenize([llama.token_eos()]).decode("utf-8", "ignore")
        bos = (
            llama.detokenize([llama.token_bos()]).decode("utf-8", "ignore") if llama.token_bos() >= 0 else ""
        )
        return Jinja2ChatFormatter(template=template, eos_token=eos, bos_token=bos)

    def prompt_tokens(self, messages: list[Message]) -> list[int]:
        """The chat template rendered around a placeholder per message: the template's text is
        tokenized with its control tokens, each message's text without (measured: the same tokens
        as the whole prompt for text that holds no control-token string)."""
        llama = self.load()._llama
        assert llama is not None
        marks = [f"\x00{uuid.uuid4().hex}\x00" for _ in messages]
        rest = self._formatter(
            messages=[{**m, "content": mark} for m, mark in zip(messages, marks, strict=True)]
        ).prompt
        tokens: list[int] = []
        for i, (message, mark) in enumerate(zip(messages, marks, strict=True)):
            template, found, rest = rest.partition(mark)
            if not found or mark in rest:
                raise ModelError(
                    f"the chat template of {self.name} does not place each message once; "
                    "use an instruct model with a standard chat template"
                )
            tokens += llama.tokenize(template.encode("utf-8"), add_bos=i == 0, special=True)
            tokens += llama.tokenize(message["content"].encode("utf-8"), add_bos=False, special=False)
        return tokens + llama.tokenize(rest.encode("utf-8"), add_bos=not messages, special=True)

    def count_tokens(self, text: str) -> int:
        llama = self.load()._llama
        assert llama is not None
        return len(llama.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    def generate(
        self,
        messages: list[Message],
        *,
        schema: type[BaseModel] | None = None,
        max_tokens: int = 256,
        temperature: float | None = None,
    ) -> Generation[Any]:
        self.load()
        tokens = self.prompt_tokens(messages)
        if len(tokens) + max_tokens > self.n_ctx:
            raise ContextOverflowError(
                f"prompt of {len(tokens)} tokens plus {max_tokens} to generate exceeds n_ctx={self.n_ctx} of {self.name}",
                prompt_tokens=len(tokens),
                n_ctx=self.n_ctx,
            )
        llama, constrainer, cached = self._context(tokens)
        llama_cpp = require("llama_cpp", purpose="running GGUF models")
        kwargs: dict[str, Any] = {
            # A requested stop (Ctrl-C) ends the generation at the next token.
            "stopping_criteria": llama_cpp.StoppingCriteriaList(
                [lambda ids, logits: interrupt.stop_requested()]
            ),
        }
        if schema is not None:
            kwargs["logits_processor"] = llama_cpp.LogitsProcessorList([constrainer.processor(schema)])
        start = time.perf_counter()
        self._calls += 1
        completion = llama.create_completion(
            prompt=tokens,
            max_tokens=max_tokens,
            temperature=self._sampling.temperature if temperature is None else temperature,
            top_p=self._sampling.top_p,
            repeat_penalty=self._sampling.repeat_penalty,
            seed=self._sampling.seed + self._calls,  # repeatable runs, yet resampling gives new text
            **kwargs,
        )
        seconds = time.perf_counter() - start
        interrupt.check()
        assert isinstance(completion, dict)  # not streamed
        choice = completion["choices"][0]
        usage = Usage(
            prompt_tokens=len(tokens),
            completion_tokens=completion["usage"]["completion_tokens"],
            cached_tokens=min(cached, max(len(tokens) - 1, 0)),
            seconds=seconds,
        )
        return completed(choice["text"], choice["finish_reason"] or "stop", usage, schema)


_USEFUL_PREFIX = 32  # tokens: more than a chat template's opening ("<|im_start|>system\nYou are …")


def _common_prefix(a: list[int], b: list[int]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n
