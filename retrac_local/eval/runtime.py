"""What an evaluation row was made on, besides the code and the settings: the machine, the
libraries and the build of the collection searched.

A mode's code version (`codehash.py`) and the settings (`harness.fingerprint`) do not fix a greedy
run. The embedder's `auto` precision is bfloat16 on a processor that multiplies it natively and
float32 elsewhere; llama.cpp's arithmetic follows the CPU features its build uses (AVX-512 or not);
a new torch or llama.cpp may round otherwise; the collection's approximate vector index is trained
anew at each ingest. Any of them can move a search's passages or a token of the model, and a small
model's run then follows another trajectory. An evaluation spread over sessions and machines (its
results are kept and continued) can mix such runs, and `make prove-alike`, which plays tapes of
recorded search results and model outputs, cannot see them. Each row records its runtime, so a
report can say when one mode's rows were made under several (`summary.py`), and which rows moved
with what.

Reading the runtime loads nothing heavy: library versions come from the installed packages' metadata,
llama.cpp's features from the library the process loaded to answer (so it is read after the models
are), the collection's build from its table's metadata.
"""

from __future__ import annotations

import sys
from collections import Counter
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

    from retrac_local.config import Settings
    from retrac_local.corpus.store import CorpusStore

Runtime = dict[str, str]

LIBRARIES = ("llama-cpp-python", "torch", "sentence-transformers", "lancedb")


def version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"


def cpu_model(cpuinfo: Path = Path("/proc/cpuinfo")) -> str:
    """The processor's name as Linux reports it; "unknown" elsewhere."""
    try:
        text = cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "unknown"
    for line in text.splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "unknown"


def llama_features(system_info: str) -> str:
    """The CPU features a llama.cpp build uses, from its system info ("CPU : AVX = 1 | AVX512 = 0 |
    …"): the names of those on, in its order."""
    on = []
    for part in system_info.replace("CPU :", "|").split("|"):
        name, _, value = part.partition("=")
        if value.strip() == "1":
            on.append(name.strip())
    return " ".join(on) or "none reported"


def _local_llama() -> str:
    """The features of the llama.cpp this process answers with; a process that has not loaded it
    (a scripted model in tests) says so rather than load it to describe it."""
    llama_cpp = sys.modules.get("llama_cpp")
    if llama_cpp is None:
        return "not loaded"
    return llama_features(llama_cpp.llama_print_system_info().decode(errors="replace"))


def describe(settings: Settings, corpus: CorpusStore | None = None) -> Runtime:
    """The runtime of answers made here with `settings`: where each model runs (a server's URL, or
    llama.cpp's CPU features), the embedder's precision as resolved on this processor, the processor,
    the libraries' versions, and, given the collection searched, which build of it (its vector index
    is trained anew at each ingest)."""
    from retrac_local.corpus.embedder import resolve_precision

    runtime: Runtime = {}
    for role in ("planner", "compressor"):
        url = getattr(settings, role).url
        runtime[role] = f"server {url}" if url else f"llama.cpp {_local_llama()}"
    runtime["embed_precision"] = resolve_precision(settings.retrieval.embed_precision)
    runtime["cpu"] = cpu_model()
    runtime |= {package: version(package) for package in LIBRARIES}
    if corpus is not None:
        runtime["corpus"] = collection_build(corpus)
    return runtime


def collection_build(corpus: CorpusStore) -> str:
    """Which build of the collection answers: its chunks, its vector index, and the table version
    with the time it was written. Two homes ingested from the same files differ in the time, and an
    approximate (IVF-PQ) index trained in each can rank a query's passages differently."""
    if not corpus.exists():
        return "empty"
    table = corpus.table()
    latest = table.list_versions()[-1]
    written = latest["timestamp"].isoformat(timespec="milliseconds")
    return (
        f"{table.count_rows():,} chunks, vector index {corpus.vector_index_kind()}, "
        f"table version {latest['version']} written {written}"
    )


def varying(runtimes: Iterable[Runtime]) -> list[str]:
    """The keys whose values differ between `runtimes` (one without a key counts as its own value)."""
    runtimes = list(runtimes)
    keys = sorted({k for r in runtimes for k in r})
    return [k for k in keys if len({r.get(k) for r in runtimes}) > 1]


def groups(runtimes: Iterable[Runtime]) -> list[tuple[Runtime, int]]:
    """The distinct runtimes and how many rows each, most rows first; the empty runtime stands for
    rows recorded before runtimes were."""
    counts: Counter[tuple[tuple[str, str], ...]] = Counter()
    first: dict[tuple[tuple[str, str], ...], Runtime] = {}  # each as first seen, its keys in their order
    for r in runtimes:
        key = tuple(sorted(r.items()))
        counts[key] += 1
        first.setdefault(key, r)
    return [(dict(first[key]), n) for key, n in counts.most_common()]
