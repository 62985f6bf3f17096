"""`n_gpu_layers` reaches llama.cpp, and asking for a GPU from a build without one is an error, not
a silent CPU run. (The GPU itself is not tested here: no GPU run is recorded; README, 'A GPU'.)"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from retrac_local.config import ModelSettings
from retrac_local.errors import ModelError
from retrac_local.llm import llamacpp


@pytest.fixture
def gguf(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.gguf"
    path.write_bytes(llamacpp.GGUF_MAGIC + bytes(60))
    return path


def test_a_gpu_asked_of_a_cpu_build_is_named(gguf: Path) -> None:
    llama_cpp = pytest.importorskip("llama_cpp")
    if llama_cpp.llama_supports_gpu_offload():
        pytest.skip("this build can offload to a GPU")
    with pytest.raises(ModelError, match=r"n_gpu_layers = -1 for tiny.gguf.*cannot offload to a GPU"):
        llamacpp.load_llama(gguf, ModelSettings(n_gpu_layers=-1), seed=0, cache_dir=None, slot="gpu-test")


def test_n_gpu_layers_reaches_llama_cpp(gguf: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, Any] = {}

    class Llama:  # stands in for a GPU build of llama-cpp-python
        def __init__(self, **kwargs: Any) -> None:
            seen.update(kwargs)
            self._model = SimpleNamespace(n_ctx_train=lambda: 32768)

    module = SimpleNamespace(Llama=Llama, llama_supports_gpu_offload=lambda: True)
    monkeypatch.setattr(llamacpp, "require", lambda name, purpose: module)
    monkeypatch.setattr(llamacpp, "SchemaConstrainer", lambda llama, cache_dir: None)
    monkeypatch.setattr(llamacpp, "_LOADED", {})
    llamacpp.load_llama(gguf, ModelSettings(n_gpu_layers=20, n_ctx=4096), seed=0, cache_dir=None)
    assert seen["n_gpu_layers"] == 20 and seen["n_ctx"] == 4096 and seen["model_path"] == str(gguf)
