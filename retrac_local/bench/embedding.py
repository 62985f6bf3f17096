"""The embedder's speed and its retrieval recall, per precision and batch size, side by side.

    python -m retrac_local.bench.embedding --corpus ../shared/eval/corpus.jsonl \
        --questions ../shared/eval/hotpotqa_dev.jsonl --out bench-out/embedding

The paragraphs are the gold ones of dev questions OFFSET..OFFSET+LIMIT (101-400 by default, which no
reported figure uses) and DISTRACTORS others drawn with a fixed seed, each embedded as ingest embeds
it ("Title" line, then the text). Every setting embeds all of them, in turns, RUNS times; its
chunks/s is the median. Its recall is that of exact (brute-force) vector search of the questions
over its own vectors, so no index approximation blurs the comparison; its vectors are also compared
with float32's (cosine per paragraph). Writes OUT/embedding.json and OUT/embedding.md.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from retrac_local.bench.retrieval import KS, recall_row
from retrac_local.corpus.base import label


def paragraphs_for(
    corpus: Path, questions: list[dict[str, Any]], distractors: int, seed: int
) -> tuple[list[str], list[str]]:
    """(doc ids, texts): every gold paragraph of `questions` and `distractors` others."""
    gold = {d for q in questions for d in q["supporting_doc_ids"]}
    chosen: dict[str, str] = {}
    others: list[tuple[str, str]] = []
    with corpus.open() as f:
        for line in f:
            row = json.loads(line)
            text = f"{label(row.get('title', ''))}\n{row['text']}"  # as ingest embeds a chunk
            if row["doc_id"] in gold:
                chosen[row["doc_id"]] = text
            else:
                others.append((row["doc_id"], text))
    for doc_id, text in random.Random(seed).sample(others, min(distractors, len(others))):
        chosen[doc_id] = text
    return list(chosen), list(chosen.values())


def recall(
    doc_vectors: NDArray[np.float32],
    query_vectors: NDArray[np.float32],
    doc_ids: list[str],
    questions: list[dict[str, Any]],
) -> dict[str, float]:
    """both@k / any@k of exact cosine search, averaged over the questions."""
    order = np.argsort(-(query_vectors @ doc_vectors.T), axis=1)[:, : max(KS)]
    rows = [
        recall_row([doc_ids[i] for i in ranked], q["supporting_doc_ids"])
        for ranked, q in zip(order, questions, strict=True)
    ]
    return {key: round(statistics.mean(r[key] for r in rows), 4) for key in rows[0]}


def measure(
    settings: list[tuple[str, int]], texts: list[str], queries: list[str], runs: int
) -> tuple[dict[tuple[str, int], dict[str, Any]], float]:
    """Each (precision, batch size) embeds `texts` `runs` times, the settings taking turns; with
    the mean length of the texts in the model's tokens."""
    from retrac_local.corpus.embedder import SentenceTransformerEmbedder

    embedders = {s: SentenceTransformerEmbedder(precision=s[0], batch_size=s[1]) for s in settings}
    seconds: dict[tuple[str, int], list[float]] = {s: [] for s in settings}
    vectors: dict[tuple[str, int], NDArray[np.float32]] = {}
    for embedder in embedders.values():
        embedder.embed(texts[:64])  # first-call costs (thread pools, kernels) outside the timings
    for run in range(runs):
        for s, embedder in embedders.items():
            start = time.perf_counter()
            vectors[s] = embedder.embed(texts)
            seconds[s].append(time.perf_counter() - start)
            print(
                f"run {run + 1}/{runs} {s[0]} batch {s[1]}: {len(texts) / seconds[s][-1]:.1f} chunks/s",
                flush=True,
            )
    tokenizer = next(iter(embedders.values()))._model.tokenizer
    mean_tokens = statistics.mean(len(ids) for ids in tokenizer(texts)["input_ids"])
    return {
        s: {
            "precision": embedders[s].precision,
            "batch_size": s[1],
            "seconds": [round(x, 2) for x in seconds[s]],
            "chunks_per_second": round(len(texts) / statistics.median(seconds[s]), 1),
            "vectors": vectors[s],
            "query_vectors": embedders[s].embed(queries),
        }
        for s in settings
    }, mean_tokens


def markdown(result: dict[str, Any]) -> str:
    lines = [
        f"Embedding {result['paragraphs']:,} HotpotQA paragraphs (mean {result['mean_tokens']} tokens), "
        f"{result['questions']} questions, {result['machine']}; chunks/s the median of {result['runs']} "
        "runs in turns; recall of exact vector search.",
        "",
        "| precision | batch | chunks/s | lowest cosine to float32 | both@5 | both@10 | both@20 | any@5 | any@10 |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in result["settings"]:
        r = row["recall"]
        lines.append(
            f"| {row['precision']} | {row['batch_size']} | {row['chunks_per_second']} | "
            f"{row['lowest_cosine']:.5f} | {r['both@5']:.3f} | {r['both@10']:.3f} | {r['both@20']:.3f} | "
            f"{r['any@5']:.3f} | {r['any@10']:.3f} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description="embedder speed and recall per precision")
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--questions", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--offset", type=int, default=100)
    parser.add_argument("--limit", type=int, default=300)
    parser.add_argument("--distractors", type=int, default=2400)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--precisions", default="float32,bfloat16")
    parser.add_argument("--batch-sizes", default="16,32")
    args = parser.parse_args()

    rows = [json.loads(line) for line in args.questions.read_text().splitlines() if line.strip()]
    questions = [r for r in rows if r.get("supporting_doc_ids")][args.offset : args.offset + args.limit]
    doc_ids, texts = paragraphs_for(args.corpus, questions, args.distractors, args.seed)
    settings = [(p, int(b)) for p in args.precisions.split(",") for b in args.batch_sizes.split(",")]
    if ("float32", 32) not in settings:
        settings.insert(0, ("float32", 32))  # the reference every cosine is taken against
    measured, mean_tokens = measure(settings, texts, [q["question"] for q in questions], args.runs)
    reference = measured[("float32", 32)]["vectors"]
    result = {
        "paragraphs": len(texts),
        "questions": len(questions),
        "offset": args.offset,
        "mean_tokens": round(mean_tokens, 1),
        "runs": args.runs,
        "machine": f"{os.cpu_count()} cores",
        "settings": [
            {key: value for key, value in m.items() if key not in ("vectors", "query_vectors")}
            | {
                "lowest_cosine": round(float((m["vectors"] * reference).sum(axis=1).min()), 6),
                "recall": recall(m["vectors"], m["query_vectors"], doc_ids, questions),
            }
            for m in measured.values()
        ],
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "embedding.json").write_text(json.dumps(result, indent=2))
    (args.out / "embedding.md").write_text(markdown(result))
    print(markdown(result))


if __name__ == "__main__":
    main()
