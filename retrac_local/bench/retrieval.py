"""Retrieval benchmark on a published multi-hop set: recall of the gold paragraphs per method,
query latency, ingest rate and memory.

    python -m retrac_local.bench.retrieval --corpus ../shared/eval/corpus.jsonl \
        --questions ../shared/eval/hotpotqa_dev.jsonl --out bench-out/retrieval

The corpus is ingested once into OUT/home (the ingest figures are kept in OUT/ingest.json); later runs
reuse it. Writes OUT/retrieval.json and OUT/retrieval.md.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import time
from pathlib import Path
from typing import Any

KS = (5, 10, 20)
METHODS = ("bm25", "vector", "hybrid")


def load_questions(path: Path, limit: int | None) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    rows = [r for r in rows if r.get("supporting_doc_ids")]
    return rows[:limit] if limit else rows


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def recall_row(retrieved: list[str], gold: list[str]) -> dict[str, float]:
    row = {}
    for k in KS:
        top = set(retrieved[:k])
        found = sum(1 for g in gold if g in top)
        row[f"both@{k}"] = float(found == len(gold))
        row[f"any@{k}"] = float(found > 0)
    return row


def run_method(app: Any, questions: list[dict[str, Any]], method: str) -> dict[str, Any]:
    latencies, rows = [], []
    for q in questions:
        start = time.perf_counter()
        hits = app.corpus.search(q["question"], k=max(KS), method=method, dedupe_documents=True)
        latencies.append((time.perf_counter() - start) * 1000)
        rows.append(recall_row([h.chunk.doc_id for h in hits], q["supporting_doc_ids"]))
    out: dict[str, Any] = {key: round(statistics.mean(r[key] for r in rows), 4) for key in rows[0]}
    out["p50_ms"] = round(percentile(latencies, 0.5), 2)
    out["p95_ms"] = round(percentile(latencies, 0.95), 2)
    return out


def batch_latency(app: Any, questions: list[dict[str, Any]], method: str, batch: int = 64) -> float:
    """Mean milliseconds per query when queries come in batches: the embeddings are computed together."""
    texts = [q["question"] for q in questions]
    start = time.perf_counter()
    for i in range(0, len(texts), batch):
        chunk = texts[i : i + batch]
        vectors = app.corpus.embedder.embed(chunk) if method != "bm25" else [None] * len(chunk)
        for text, vector in zip(chunk, vectors, strict=True):
            app.corpus.search(text, k=max(KS), method=method, query_vector=vector, dedupe_documents=True)
    return round((time.perf_counter() - start) * 1000 / len(texts), 2)


def markdown(result: dict[str, Any]) -> str:
    lines = [
        f"Retrieval on {result['dataset']}: {result['questions']} questions, {result['corpus_chunks']:,} chunks "
        f"({result['machine']}).",
        "",
        "| method | both@5 | both@10 | both@20 | any@5 | any@10 | any@20 | p50 ms | p95 ms | batch ms/query |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for method, m in result["methods"].items():
        lines.append(
            f"| {method} | {m['both@5']:.3f} | {m['both@10']:.3f} | {m['both@20']:.3f} | {m['any@5']:.3f} | "
            f"{m['any@10']:.3f} | {m['any@20']:.3f} | {m['p50_ms']} | {m['p95_ms']} | {m['batch_ms_per_query']} |"
        )
    ingest = result["ingest"]
    lines += [
        "",
        f"Ingest: {ingest['chunks']:,} chunks in {ingest['seconds']} s = {ingest['chunks_per_second']} chunks/s; "
        f"store {result['store_mb']} MB on disk; vector index: {result['vector_index']}; "
        f"peak RSS {result['peak_rss_mb']} MB.",
        "Reference (plain BM25 with rank_bm25, stop words removed): both@10 0.700, any@10 0.990, both@20 0.830.",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description="retrieval benchmark")
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--questions", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--limit", type=int, default=None, help="first N questions only")
    args = parser.parse_args()

    from retrac_local.api import Retrac
    from retrac_local.config import load_settings

    args.out.mkdir(parents=True, exist_ok=True)
    app = Retrac(load_settings(home=args.out / "home"))
    ingest_file = args.out / "ingest.json"
    if not ingest_file.exists():
        report = app.ingest([args.corpus])
        if report.failed:
            raise SystemExit(f"ingest failed for {len(report.failed)} item(s): {report.failed[:3]}")
        ingest_file.write_text(json.dumps(report.to_dict(), indent=2))
    ingest = json.loads(ingest_file.read_text())
    questions = load_questions(args.questions, args.limit)
    app.corpus.search("warm up", k=5)  # loads the embedder and opens the indexes outside the timings
    methods = {}
    for method in METHODS:
        methods[method] = run_method(app, questions, method)
        methods[method]["batch_ms_per_query"] = batch_latency(app, questions, method)
        print(method, methods[method], flush=True)
    documents, chunks = app.corpus.count()
    result = {
        "dataset": f"HotpotQA dev ({args.questions.name})",
        "questions": len(questions),
        "corpus_documents": documents,
        "corpus_chunks": chunks,
        "ingest": ingest,
        "methods": methods,
        "store_mb": None if (size := app.corpus.size_bytes()) is None else round(size / 1e6, 1),
        "vector_index": app.corpus.vector_index_kind(),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "machine": f"{__import__('os').cpu_count()} cores",
    }
    (args.out / "retrieval.json").write_text(json.dumps(result, indent=2))
    (args.out / "retrieval.md").write_text(markdown(result))
    print(markdown(result))


if __name__ == "__main__":
    main()
