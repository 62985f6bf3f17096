"""Scale benchmark: LanceDB with N synthetic chunks (384-d vectors and text), IVF-PQ and full-text
indexes; build time, disk size, query latency, and recall of the indexed search against exact search.

    python -m retrac_local.bench.scale --rows 1000000 --out bench-out/scale

Vectors are drawn around 2,000 random centres (real embeddings cluster; uniform noise would make
any index look bad), each row also carries a short synthetic text. Each stage writes its figures
to OUT/scale.json as it ends, and a rerun skips the stages already done.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np

DIM = 384
SETTINGS = [(20, 5), (20, 20), (20, 50), (50, 20), (50, 50), (100, 50)]  # (nprobes, refine_factor)
WORDS = np.array(
    [
        "archive",
        "harbour",
        "engineer",
        "bridge",
        "light",
        "ferry",
        "island",
        "museum",
        "survey",
        "railway",
        "college",
        "festival",
        "granite",
        "keeper",
        "storm",
        "puffin",
        "quay",
        "sound",
        "tower",
        "lens",
        "record",
        "council",
        "permit",
        "station",
    ]
)


def load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text()) if path.exists() else {}


def save(path: Path, data: dict[str, Any]) -> None:
    path.write_text(json.dumps(data, indent=2))


def batches(rows: int, batch: int, seed: int = 0):  # type: ignore[no-untyped-def]
    import pyarrow as pa

    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(2000, DIM)).astype(np.float32)
    for start in range(0, rows, batch):
        n = min(batch, rows - start)
        which = rng.integers(0, len(centres), n)
        vectors = centres[which] + 0.35 * rng.normal(size=(n, DIM)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        words = WORDS[rng.integers(0, len(WORDS), (n, 12))]
        texts = [" ".join(w) + f" item{start + i}" for i, w in enumerate(words)]
        ids = [f"c{start + i}" for i in range(n)]
        yield pa.table(
            {
                "chunk_id": ids,
                "text": texts,
                "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()), DIM),
            }
        )


def main() -> None:
    parser = argparse.ArgumentParser(description="LanceDB scale benchmark")
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    os.environ.setdefault("LANCE_LOG", "error")
    import lancedb
    from lancedb.index import FTS, IvfPq

    args.out.mkdir(parents=True, exist_ok=True)
    result_path = args.out / "scale.json"
    result = load(result_path)
    if result.get("rows") != args.rows:
        result = {"rows": args.rows, "dim": DIM}
    db = lancedb.connect(str(args.out / "db"))

    if "write_seconds" not in result:
        start = time.perf_counter()
        stream = batches(args.rows, 100_000)
        created = db.create_table("chunks", next(stream), mode="overwrite")
        for batch in stream:
            created.add(batch)
        result["write_seconds"] = round(time.perf_counter() - start, 1)
        save(result_path, result)
    table: Any = db.open_table("chunks")  # the vector query builder's methods are not in its stubs
    assert table.count_rows() == args.rows, table.count_rows()

    if "ivf_pq_build_seconds" not in result:
        start = time.perf_counter()
        table.create_index(
            "vector",
            config=IvfPq(
                distance_type="cosine", num_partitions=int(args.rows**0.5), num_sub_vectors=DIM // 8
            ),
        )
        result["ivf_pq_build_seconds"] = round(time.perf_counter() - start, 1)
        save(result_path, result)
    if "fts_build_seconds" not in result:
        start = time.perf_counter()
        table.create_index("text", config=FTS())
        result["fts_build_seconds"] = round(time.perf_counter() - start, 1)
        save(result_path, result)
    result["disk_mb"] = round(
        sum(p.stat().st_size for p in (args.out / "db").rglob("*") if p.is_file()) / 1e6, 1
    )

    rng = np.random.default_rng(1)
    probe_ids = rng.integers(0, args.rows, args.queries)
    rows = (
        table.search()
        .where("chunk_id IN (" + ", ".join(f"'c{i}'" for i in probe_ids) + ")")
        .select(["vector", "text"])
        .limit(args.queries)
        .to_list()
    )
    queries = []
    for row in rows:
        v = np.asarray(row["vector"], dtype=np.float32) + 0.05 * rng.normal(size=DIM).astype(np.float32)
        queries.append((v / np.linalg.norm(v), " ".join(row["text"].split()[:4])))

    for stale in ("vector_p50_ms", "vector_p95_ms", "recall_at_10_vs_exact", "nprobes", "refine_factor"):
        result.pop(stale, None)  # figures of an earlier layout of this file
    truths, fts_latencies = [], []
    for vector, text in queries:
        exact = (
            table.search(vector.tolist())
            .distance_type("cosine")
            .bypass_vector_index()
            .select(["chunk_id"])
            .limit(10)
            .to_list()
        )
        truths.append({h["chunk_id"] for h in exact})
        start = time.perf_counter()
        table.search(text, query_type="fts").select(["chunk_id"]).limit(10).to_list()
        fts_latencies.append((time.perf_counter() - start) * 1000)
    result |= {
        "queries": len(queries),
        "fts_p50_ms": round(statistics.median(fts_latencies), 2),
        "settings": [],
    }
    # PQ codes blur near neighbours that share a partition, so recall hinges on how many candidates
    # are re-ranked by their exact vectors (refine_factor) and how many partitions are probed.
    for nprobes, refine in SETTINGS:
        latencies, recalls = [], []
        for (vector, _), truth in zip(queries, truths, strict=True):
            start = time.perf_counter()
            hits = (
                table.search(vector.tolist())
                .distance_type("cosine")
                .nprobes(nprobes)
                .refine_factor(refine)
                .select(["chunk_id"])
                .limit(10)
                .to_list()
            )
            latencies.append((time.perf_counter() - start) * 1000)
            recalls.append(len(truth & {h["chunk_id"] for h in hits}) / len(truth))
        ordered = sorted(latencies)
        result["settings"].append(
            {
                "nprobes": nprobes,
                "refine_factor": refine,
                "vector_p50_ms": round(statistics.median(latencies), 2),
                "vector_p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))], 2),
                "recall_at_10_vs_exact": round(statistics.mean(recalls), 4),
            }
        )
        save(result_path, result)
    lines = [
        f"{result['rows']:,} chunks × {DIM}-d: write {result['write_seconds']} s, IVF-PQ build "
        f"{result['ivf_pq_build_seconds']} s, full-text index {result['fts_build_seconds']} s, {result['disk_mb']} MB "
        f"on disk; full-text query p50 {result['fts_p50_ms']} ms; {result['queries']} queries.",
        "",
        "| nprobes | refine_factor | vector p50 ms | vector p95 ms | recall@10 vs exact |",
        "|---|---|---|---|---|",
        *(
            f"| {x['nprobes']} | {x['refine_factor']} | {x['vector_p50_ms']} | {x['vector_p95_ms']} | "
            f"{x['recall_at_10_vs_exact']} |"
            for x in result["settings"]
        ),
    ]
    (args.out / "scale.md").write_text("\n".join(lines) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
