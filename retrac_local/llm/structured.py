"""Grammar-constrained JSON for llama.cpp through outlines-core, with compiled indexes cached on disk.

We drive llama-cpp-python ourselves with outlines' logits processor instead of outlines' own model
wrapper: the wrapper calls `Llama.reset()` after each generation, which discards the KV cache that
consecutive calls of a round could share. The index for a schema is built once per process and
saved to disk in outlines-core's own binary form, not as a pickle: a cache file is data that is
never run (compiling takes 1 s to a minute; loading the file takes milliseconds).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from retrac_local.lazy import require

if TYPE_CHECKING:
    from llama_cpp import Llama

# Compact JSON: no free-form whitespace between tokens, so a small model cannot wander off into
# newlines, and fewer tokens are generated.
WHITESPACE = r"[ ]?"


def schema_regex(schema: type[BaseModel]) -> str:
    json_schema = require("outlines_core.json_schema", purpose="constrained JSON output")
    return json_schema.build_regex_from_schema(json.dumps(schema.model_json_schema()), WHITESPACE)


class SchemaConstrainer:
    """Builds (or loads) one outlines-core index per schema for one model's vocabulary."""

    def __init__(self, llama: Llama, cache_dir: Path | None) -> None:
        self._llama = llama
        self._cache_dir = cache_dir
        self._vocabulary: Any = None
        self._vocab_key: str | None = None
        self._indexes: dict[str, Any] = {}
        self._lock = threading.Lock()
        self.compile_seconds: dict[str, float] = {}

    def _vocab(self) -> tuple[Any, str]:
        if self._vocabulary is None:
            outlines = require("outlines", purpose="constrained JSON output")
            from outlines.backends.outlines_core import OutlinesCoreBackend

            backend = OutlinesCoreBackend(outlines.from_llamacpp(self._llama))
            self._vocabulary = backend.vocabulary
            tokenizer = outlines.models.llamacpp.LlamaCppTokenizer(self._llama)
            digest = hashlib.sha256()
            for token, token_id in tokenizer.vocabulary.items():
                digest.update(f"{token_id}\x00{token}\x01".encode("utf-8", "surrogatepass"))
            digest.update(str(tokenizer.eos_token_id).encode())
            self._vocab_key = digest.hexdigest()[:16]
        assert self._vocab_key is not None
        return self._vocabulary, self._vocab_key

    def index_for(self, schema: type[BaseModel]) -> Any:
        regex = schema_regex(schema)
        with self._lock:
            if regex in self._indexes:
                return self._indexes[regex]
            outlines_core = require("outlines_core", purpose="constrained JSON output")
            vocabulary, vocab_key = self._vocab()
            version = getattr(outlines_core, "__version__", "")
            key = hashlib.sha256(f"{vocab_key}\n{version}\n{regex}".encode()).hexdigest()[:24]
            persist = self._cache_dir is not None and getattr(schema, "grammar_cache", True)
            path = self._cache_dir / f"index-{key}.bin" if persist and self._cache_dir else None
            index = None
            if path is not None and path.exists():
                try:  # outlines-core's own binary form: data only, nothing in it is run
                    index = outlines_core.Index.from_binary(path.read_bytes())
                except (KeyboardInterrupt, SystemExit):
                    raise
                except BaseException:  # noqa: BLE001 a torn or stale file (a Rust panic is a BaseException): rebuilt
                    index = None
            if index is None:
                start = time.perf_counter()
                index = outlines_core.Index(regex, vocabulary)
                self.compile_seconds[schema.__name__] = time.perf_counter() - start
                if path is not None:
                    _atomic_write(_binary(index), path)
            self._indexes[regex] = index
            return index

    def processor(self, schema: type[BaseModel]) -> Any:
        """A fresh logits processor for one generation (processors carry per-generation state)."""
        from outlines.backends.outlines_core import OutlinesCoreLogitsProcessor

        return OutlinesCoreLogitsProcessor(self.index_for(schema), "numpy")


def _binary(index: Any) -> bytes:
    """The index's own serialisation (what its pickle support wraps: `Index.from_binary(data)`)."""
    rebuild, args = index.__reduce__()[:2]
    if getattr(rebuild, "__name__", "") != "from_binary" or not isinstance(args[0], bytes):
        raise TypeError("this outlines-core version does not serialise its Index as from_binary(bytes)")
    return args[0]


def _atomic_write(data: bytes, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError:
        if os.path.exists(tmp):
            os.unlink(tmp)
