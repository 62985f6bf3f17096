"""A role's KV caches: each call runs on the cache that holds the longest prefix of its prompt, so
two kinds of prompt on one role keep their cached system prompts (no model is loaded here)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from retrac_local.config import ModelSettings, SamplingSettings
from retrac_local.llm import llamacpp


class _Cache:
    """What the selection reads of a llama.cpp context: the tokens its KV cache holds."""

    def __init__(self) -> None:
        self._input_ids: list[int] = []

    def reset(self) -> None:  # as Llama.reset: nothing held any more
        self._input_ids = []


def _llm(monkeypatch: pytest.MonkeyPatch, caches: int) -> tuple[llamacpp.LlamaCppLLM, list[str]]:
    loaded: list[str] = []

    def load_llama(
        path: Path, settings: ModelSettings, seed: int, cache_dir: Any, slot: str = ""
    ) -> tuple[Any, Any]:
        loaded.append(slot)
        return _Cache(), None

    monkeypatch.setattr(llamacpp, "load_llama", load_llama)
    monkeypatch.setattr(llamacpp.LlamaCppLLM, "_chat_formatter", staticmethod(lambda llama: None))
    llm = llamacpp.LlamaCppLLM(
        Path("m.gguf"), ModelSettings(kv_caches=caches), SamplingSettings(), slot="compressor"
    )
    return llm.load(), loaded


def _run(llm: llamacpp.LlamaCppLLM, tokens: list[int]) -> tuple[int, int]:
    """(which cache ran the prompt, how many of its tokens that cache held); the cache then holds it."""
    llama, _, held = llm._context(tokens)
    llm._calls += 1
    llama._input_ids = tokens
    return [c[0] for c in llm._contexts].index(llama), held


OPENING = list(range(5))  # the chat template's opening, shared by every prompt
CONSTRAINTS = OPENING + list(range(100, 160))  # a short system prompt
COMPRESS = OPENING + list(range(200, 500))  # a long one


def test_each_kind_of_prompt_keeps_its_own_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    llm, loaded = _llm(monkeypatch, caches=2)
    assert _run(llm, CONSTRAINTS + [1]) == (0, 0)
    assert _run(llm, COMPRESS + [2]) == (1, 0)  # only the opening in common: a second cache
    for question in (3, 4):
        assert _run(llm, CONSTRAINTS + [question]) == (0, len(CONSTRAINTS))
        assert _run(llm, COMPRESS + [question]) == (1, len(COMPRESS))  # its system prompt is still cached
    assert loaded == ["compressor", "compressor#1"]


def test_one_cache_is_shared_and_a_third_kind_takes_the_least_recent(monkeypatch: pytest.MonkeyPatch) -> None:
    llm, loaded = _llm(monkeypatch, caches=1)
    assert _run(llm, CONSTRAINTS + [1]) == (0, 0)
    assert _run(llm, COMPRESS + [1]) == (0, len(OPENING))  # today's behaviour: the other kind is evicted
    assert loaded == ["compressor"]
    llm, loaded = _llm(monkeypatch, caches=2)
    _run(llm, CONSTRAINTS + [1])
    _run(llm, COMPRESS + [1])
    third = OPENING + list(range(600, 700))
    assert _run(llm, third) == (0, len(OPENING))  # the constraints' cache was used least recently
    assert _run(llm, COMPRESS + [2]) == (1, len(COMPRESS))


def test_forget_empties_every_cache_and_the_next_prompt_is_processed_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    llm, _ = _llm(monkeypatch, caches=2)
    _run(llm, CONSTRAINTS + [1])
    _run(llm, COMPRESS + [1])
    assert _run(llm, COMPRESS + [1])[1] == len(COMPRESS) + 1
    llm.forget()
    assert _run(llm, COMPRESS + [1])[1] == 0  # nothing held: the whole prompt is processed again
    assert _run(llm, CONSTRAINTS + [1])[1] == 0


def test_after_forget_the_calls_sample_with_the_seeds_of_a_fresh_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seeds: list[int] = []

    def create_completion(**kwargs: Any) -> dict[str, Any]:
        seeds.append(kwargs["seed"])
        return {"choices": [{"text": "x", "finish_reason": "stop"}], "usage": {"completion_tokens": 1}}

    monkeypatch.setattr(_Cache, "create_completion", staticmethod(create_completion), raising=False)
    monkeypatch.setattr(
        llamacpp,
        "require",
        lambda *a, **k: SimpleNamespace(StoppingCriteriaList=list, LogitsProcessorList=list),
    )
    llm, _ = _llm(monkeypatch, caches=1)
    monkeypatch.setattr(llm, "prompt_tokens", lambda messages: CONSTRAINTS + [len(messages)])
    for _ in range(3):
        llm.generate([{"role": "user", "content": "q"}], temperature=0.7)
    llm.forget()
    for _ in range(3):
        llm.generate([{"role": "user", "content": "q"}], temperature=0.7)
    assert len(set(seeds[:3])) == 3  # each call of a run its own seed
    assert seeds[3:] == seeds[:3]  # a run after forget() samples as the first run did


def test_the_evaluation_times_each_run_on_models_that_forgot_the_runs_before() -> None:
    from retrac_local.eval.harness import _cold

    class Model:
        forgotten = 0

        def forget(self) -> None:
            self.forgotten += 1

    model = Model()
    app = SimpleNamespace(llms=lambda: (model, model))  # planner and compressor: one model
    run = _cold(app, lambda question: model.forgotten)
    assert run(None) == 1 and run(None) == 2  # forgotten once per run, before it
