"""The speed benchmark's KV-cache arithmetic (the benchmark itself runs the real models: `make bench`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from retrac_local.bench.speed import kv_reuse


def call(iteration: int, role: str, purpose: str, prompt: int, completion: int, cached: int) -> dict:
    return {
        "iteration": iteration,
        "role": role,
        "purpose": purpose,
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "cached_tokens": cached,
    }


def test_kv_reuse_counts_planner_calls_after_the_first_of_each_round() -> None:
    calls = [
        call(0, "compressor", "constraints", 95, 21, 0),
        call(1, "planner", "action", 379, 38, 0),  # first of round 1: not counted
        call(1, "planner", "action", 969, 37, 417),  # all of 379 + 38 reused
        call(1, "planner", "action", 1484, 35, 1006),  # all of 969 + 37 reused
        call(1, "compressor", "compress", 1668, 205, 4),
        call(2, "planner", "action", 500, 30, 300),  # first of round 2: not counted
        call(2, "planner", "action", 900, 30, 265),  # half of 500 + 30 reused
        call(2, "planner", "finalize", 545, 18, 327),  # not an action: not counted
    ]
    kv = kv_reuse(calls)
    assert kv["planner_submitted_after_first"] == 969 + 1484 + 900
    assert kv["planner_processed_after_first"] == (969 - 417) + (1484 - 1006) + (900 - 265)
    assert kv["kv_saved_share"] == round(1 - 1665 / 3353, 4)
    assert kv["kv_reuse_share"] == round((417 + 1006 + 265) / (417 + 1006 + 530), 4)
    assert kv["compressor_cached_share"] == round(4 / 1668, 4)


def test_kv_reuse_without_a_second_call_is_not_a_figure() -> None:
    kv = kv_reuse([call(1, "planner", "action", 379, 38, 0), call(1, "compressor", "compress", 900, 100, 0)])
    assert kv["kv_saved_share"] is None and kv["kv_reuse_share"] is None


@pytest.mark.slow
def test_the_build_comparison_runs_each_interpreter_in_turns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two names for this very build: the table has both rows, ratios against the first, and the
    CPU features llama.cpp reports (so a build's flags can be checked from its row)."""
    from retrac_local.bench import builds
    from retrac_local.config import load_settings

    model = load_settings().models_dir / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
    monkeypatch.setattr(
        sys,
        "argv",
        [
            "builds",
            "--build",
            f"a={sys.executable}",
            "--build",
            f"b={sys.executable}",
            "--model",
            str(model),
            "--out",
            str(tmp_path),
            "--runs",
            "1",
            "--gen-tokens",
            "16",
        ],
    )
    builds.main()
    result = json.loads((tmp_path / "builds.json").read_text())
    assert list(result["builds"]) == ["a", "b"] and result["builds"]["a"]["pp_ratio"] == 1.0
    assert all(
        b["pp_tok_s"] > 0 and b["tg_tok_s"] > 0 and "AVX2" in b["features"] for b in result["builds"].values()
    )
    assert "| b |" in (tmp_path / "builds.md").read_text()


def test_the_ingest_benchmark_times_every_stage_of_a_real_ingest(tmp_path: Path, folder: Path) -> None:
    from retrac_local.bench.ingest import markdown, one_run, summarise

    html = folder / "guide.html"
    html.write_text(
        "<html><head><title>Guide</title></head><body><article><h1>Guide</h1>"
        + "".join(f"<p>Step {i} turns the valve {i} times and waits.</p>" for i in range(200))
        + "</article></body></html>"
    )
    overrides = {"retrieval": {"embedder": "hashing"}, "ingest": {"file_timeout_s": 0}}
    runs = [one_run([folder], tmp_path / "home", overrides) for _ in range(2)]
    first = runs[0]
    assert first["files"] == 3 and first["failed"] == 1  # the broken PDF is reported, not counted
    assert first["chunks"] > 5 and first["mb"] >= 0
    assert all(first["stages"][s] > 0 for s in ("parse", "chunk", "embed", "write"))
    assert sum(first["stages"].values()) == pytest.approx(first["seconds"], abs=0.05)
    assert runs[1]["chunks"] == first["chunks"]  # each run starts from an empty home
    result = summarise(runs)
    assert result["runs"] == 2 and result["chunks_per_second"] > 0
    assert "| embed |" in markdown(result, "notes")


def _batch_row(workers: int, qph: float, wall: float, statuses: dict[str, int]) -> dict:
    return {
        "workers": workers,
        "slots": workers,
        "wall_s": wall,
        "questions_per_hour": qph,
        "tokens_per_s": 10.0 * workers,
        "generated_tokens_per_s": 5.0,
        "median_question_s": wall / 2,
        "statuses": statuses,
    }


def test_the_batch_table_takes_each_worker_counts_median_over_its_runs() -> None:
    from retrac_local.bench.batch import markdown, medians

    rows = [
        _batch_row(1, 60.0, 240.0, {"answered": 2}),
        _batch_row(2, 90.0, 160.0, {"answered": 1, "unsure": 1}),
        _batch_row(1, 40.0, 360.0, {"unsure": 2}),
        _batch_row(2, 30.0, 480.0, {"answered": 2}),
        _batch_row(1, 50.0, 288.0, {"answered": 1, "unsure": 1}),
        _batch_row(2, 75.0, 192.0, {"answered": 2}),
    ]
    table = medians(rows)
    assert [(r["workers"], r["runs"]) for r in table] == [(1, 3), (2, 3)]
    one, two = table
    assert (one["questions_per_hour"], one["wall_s"]) == (50.0, 288.0)  # medians, not the last run
    assert (two["questions_per_hour"], two["wall_s"]) == (75.0, 192.0)
    assert two["speedup"] == 1.5 and one["speedup"] == 1.0
    assert two["statuses"] == {"answered": 5, "unsure": 1}  # every run's statuses added up
    text = markdown("title", table)
    assert "Medians over 3 runs" in text and "| 2 | 2 | 192 | 75 | 1.5× |" in text


def test_a_single_run_is_not_called_a_median() -> None:
    from retrac_local.bench.batch import markdown, medians

    text = markdown("title", medians([_batch_row(1, 60.0, 240.0, {"answered": 2})]))
    assert "Medians" not in text and "| 1 | 1 | 240 | 60 | 1.0× |" in text


def test_the_embedding_benchmark_counts_both_and_any_gold_paragraph_within_k(tmp_path: Path) -> None:
    import numpy as np

    from retrac_local.bench.embedding import paragraphs_for, recall

    corpus = tmp_path / "corpus.jsonl"
    rows = [{"doc_id": f"d{i}", "title": f"T{i}", "text": f"text {i}"} for i in range(40)]
    corpus.write_text("\n".join(json.dumps(r) for r in rows))
    questions = [{"supporting_doc_ids": ["d1", "d2"]}, {"supporting_doc_ids": ["d3", "d4"]}]
    doc_ids, texts = paragraphs_for(corpus, questions, distractors=10, seed=0)
    assert {"d1", "d2", "d3", "d4"} <= set(doc_ids) and len(doc_ids) == 14
    assert texts[doc_ids.index("d3")] == "T3\ntext 3"
    assert paragraphs_for(corpus, questions, 10, 0) == (doc_ids, texts)  # a fixed seed, the same draw

    # Vectors placed by hand: question 1 finds d1 first and d2 sixth; question 2 finds d3 only.
    dim = len(doc_ids)
    docs = np.eye(dim, dtype=np.float32)
    at = {d: i for i, d in enumerate(doc_ids)}
    others = [i for d, i in at.items() if d not in {"d1", "d2", "d3", "d4"}]
    q1 = np.zeros(dim, dtype=np.float32)
    q1[at["d1"]] = 1.0
    for rank, i in enumerate(others[:4] + [at["d2"]]):
        q1[i] = 0.9 - rank * 0.1  # d2 comes after four distractors: sixth
    q2 = np.zeros(dim, dtype=np.float32)
    q2[at["d3"]] = 1.0
    q2[at["d4"]] = -1.0  # d4 last
    got = recall(docs, np.stack([q1, q2]), doc_ids, questions)
    assert got["both@5"] == 0.0 and got["both@10"] == 0.5  # question 1 completes at rank 6
    assert got["any@5"] == 1.0
    assert got["both@20"] == 1.0  # 14 paragraphs: every one is within 20, d4 too


def test_the_speed_table_gives_the_demo_questions_median_and_its_model_calls() -> None:
    from retrac_local.bench.speed import markdown

    run = {
        "answer": "1849",
        "status": "answered",
        "stop_reason": "first-reading",
        "llm_calls": 11,
        "seconds": 0.0,
        "llm_seconds": 0.0,
        "overhead_share": 0.1,
        "kv_saved_share": None,
        "kv_reuse_share": None,
        "compressor_cached_share": None,
    }
    result = {
        "machine": "2 cores",
        "runs": 3,
        "raw": [],
        "constrained": {},
        "grammar": {"first_process": {}, "second_process": {}},
        "agent": [run | {"seconds": s} for s in (30.0, 20.0, 25.0)],
        "startup": {"imports": 1, "models": 2, "store_and_embedder": 3, "total": 6},
    }
    text = markdown(result)
    assert "median 25.0 s over 3 runs" in text and "'1849' answered (first-reading), 11 model calls" in text
