"""Where ingest time goes: parsing, chunking, embedding, writing, on a real collection.

    python -m retrac_local.bench.ingest PATH… --out bench-out/ingest [--runs 1]

Each run ingests PATH… into a fresh home under OUT with the real `Ingester` and the configured
embedder; each stage is timed by wrapping the method that does it (parsing: reading a file, in the
sandboxed reader when it is on; chunking; embedding; writing to LanceDB, indexes included). The
embedding model's load is timed on its own, before the run. Writes OUT/ingest.json and
OUT/ingest.md: files, MB, documents, chunks, seconds per stage (medians over the runs), chunks/s
and MB/min of the whole.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

STAGES = ("parse", "chunk", "embed", "write")


class Stopwatch:
    """Seconds spent inside wrapped callables, summed per stage."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)

    def wrap(self, stage: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds[stage] += time.perf_counter() - start

        return timed


def one_run(paths: list[Path], home: Path, overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """Ingest `paths` into an empty `home`; the report's figures with the seconds of each stage."""
    from retrac_local.api import Retrac
    from retrac_local.config import load_settings
    from retrac_local.corpus.ingest import Ingester

    shutil.rmtree(home, ignore_errors=True)
    app = Retrac(load_settings(**({"home": str(home)} | (overrides or {}))))
    store = app.corpus
    start = time.perf_counter()
    embedder = store.embedder  # the model's load, apart from the work
    embedder.embed(["warm up"])
    load_seconds = time.perf_counter() - start

    watch = Stopwatch()
    embedder.embed = watch.wrap("embed", embedder.embed)  # type: ignore[method-assign]
    for name in ("replace_documents", "delete_documents", "finish_writes"):
        setattr(store, name, watch.wrap("write", getattr(store, name)))
    r = app.settings.retrieval
    ingester = Ingester(store, r.chunk_words, r.chunk_overlap_words, limits=app.settings.ingest)
    ingester._read = watch.wrap("parse", ingester._read)  # type: ignore[method-assign]  # noqa: SLF001
    ingester._chunks = watch.wrap("chunk", ingester._chunks)  # type: ignore[method-assign]  # noqa: SLF001
    files = _files(paths)
    size = sum(p.stat().st_size for p in files)
    report = ingester.run(paths).to_dict()
    total = report["seconds"]
    stages = {s: round(watch.seconds[s], 4) for s in STAGES}
    return {
        "files": report["files_added"],
        "failed": len(report["failed"]),
        "mb": round(size / 1e6, 2),
        "documents": report["documents_added"],
        "chunks": report["chunks"],
        "seconds": total,
        "stages": stages | {"other": round(total - sum(stages.values()), 4)},
        "model_load_seconds": round(load_seconds, 2),
        "embedder": embedder.name,
        "precision": getattr(embedder, "precision", None),
        "chunks_per_second": round(report["chunks"] / total, 1) if total else None,
        "mb_per_minute": round(size / 1e6 / total * 60, 2) if total else None,
    }


def _files(paths: list[Path]) -> list[Path]:
    from retrac_local.corpus.ingest import IngestReport, expand

    return list(expand(paths, IngestReport()))


def summarise(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The first run's counts, with the medians of the timed figures."""
    out = dict(runs[0])
    for key in ("seconds", "model_load_seconds", "chunks_per_second", "mb_per_minute"):
        values = [r[key] for r in runs if r[key] is not None]
        out[key] = round(statistics.median(values), 2) if values else None
    out["stages"] = {s: round(statistics.median(r["stages"][s] for r in runs), 3) for s in runs[0]["stages"]}
    out["runs"] = len(runs)
    return out


def markdown(result: dict[str, Any], collection: str) -> str:
    total = result["seconds"] or 1.0
    lines = [
        f"Ingest of {collection}: {result['files']} files, {result['mb']} MB, {result['documents']} documents, "
        f"{result['chunks']:,} chunks; embedder {result['embedder']}"
        f"{' in ' + result['precision'] if result.get('precision') else ''} (loaded in {result['model_load_seconds']} s, "
        f"not counted); median of {result['runs']} run(s).",
        "",
        "| stage | seconds | share |",
        "|---|---|---|",
        *(f"| {stage} | {secs} | {secs / total:.0%} |" for stage, secs in result["stages"].items()),
        f"| **all** | **{result['seconds']}** | |",
        "",
        f"{result['chunks_per_second']} chunks/s, {result['mb_per_minute']} MB/min.",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+", type=Path, help="files or folders to ingest")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--runs", type=int, default=1, help="repetitions; the table shows medians")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    runs = []
    for i in range(args.runs):
        runs.append(one_run(args.paths, args.out / "home"))
        print(
            f"run {i + 1}/{args.runs}: {runs[-1]['chunks']} chunks in {runs[-1]['seconds']} s  {runs[-1]['stages']}"
        )
    result = summarise(runs) | {"paths": [str(p) for p in args.paths]}
    (args.out / "ingest.json").write_text(json.dumps(result, indent=2))
    text = markdown(result, ", ".join(p.name for p in args.paths))
    (args.out / "ingest.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
