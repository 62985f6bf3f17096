"""The embedder's precision: bfloat16 only where the processor multiplies it natively, and the same
vectors as float32 when it is used."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from retrac_local.corpus.embedder import cpu_has_bf16, resolve_precision
from retrac_local.errors import ModelError

ZEN4 = "processor\t: 0\nflags\t\t: fpu sse2 avx2 fma avx512f avx512_vnni avx512_bf16 avx512_vbmi2\n"
SKYLAKE = (
    "processor\t: 0\nflags\t\t: fpu sse2 avx2 fma avx512f avx512bw\nbugs\t\t: avx512_bf16_is_not_a_flag\n"
)


def _cpuinfo(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "cpuinfo"
    path.write_text(text)
    return path


def test_auto_is_bfloat16_only_with_the_instruction(tmp_path: Path) -> None:
    assert resolve_precision("auto", _cpuinfo(tmp_path, ZEN4)) == "bfloat16"
    # a word on another line than `flags` (here `bugs`) is not a flag
    assert resolve_precision("auto", _cpuinfo(tmp_path, SKYLAKE)) == "float32"
    assert cpu_has_bf16(_cpuinfo(tmp_path, "flags : amx_bf16 amx_tile\n"))


def test_auto_is_float32_where_cpuinfo_cannot_be_read(tmp_path: Path) -> None:
    assert resolve_precision("auto", tmp_path / "absent") == "float32"


def test_an_explicit_precision_is_kept_and_a_wrong_one_named(tmp_path: Path) -> None:
    assert resolve_precision("float32", _cpuinfo(tmp_path, ZEN4)) == "float32"
    assert resolve_precision("bfloat16", _cpuinfo(tmp_path, SKYLAKE)) == "bfloat16"
    with pytest.raises(ModelError, match="'int4'.*auto, float32, bfloat16"):
        resolve_precision("int4")


def test_the_setting_refuses_an_unknown_precision() -> None:
    from pydantic import ValidationError

    from retrac_local.config import Settings

    with pytest.raises(ValidationError, match="embed_precision"):
        Settings(retrieval={"embed_precision": "fp8"})


@pytest.mark.slow
def test_bfloat16_gives_the_float32_vectors() -> None:
    """The real model in both precisions (bfloat16 runs, emulated, even without the instruction)."""
    from retrac_local.corpus.embedder import SentenceTransformerEmbedder

    texts = [
        "Memcheck reports reads of uninitialised memory and leaks at exit.",
        "The harbour froze in the winter of 1709, and ships waited until March.",
        "A short one.",
    ]
    wide = SentenceTransformerEmbedder(precision="float32").embed(texts)
    narrow = SentenceTransformerEmbedder(precision="bfloat16").embed(texts)
    assert narrow.dtype == np.float32 and narrow.shape == wide.shape
    assert np.allclose(np.linalg.norm(narrow, axis=1), 1.0, atol=1e-5)
    assert (narrow * wide).sum(axis=1).min() > 0.999
    # and still tells the texts apart as float32 does
    assert np.array_equal(np.argsort(narrow @ narrow[0]), np.argsort(wide @ wide[0]))
