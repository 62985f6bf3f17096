"""What each evaluation row was made on (`eval/runtime.py`): read without loading anything heavy,
recorded in every row the harness writes (in-process and from the command line), and reported when
one evaluation's rows were made on more than one runtime."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path

import pytest
from click.testing import CliRunner

from retrac_local.cli.main import cli
from retrac_local.config import Settings
from retrac_local.contract.events import RunResult, RunStatus
from retrac_local.eval import runtime
from retrac_local.eval.harness import Evaluation, score
from retrac_local.eval.questions import EvalQuestion
from retrac_local.eval.summary import markdown, summarize

QUESTIONS = [
    EvalQuestion("a", "Where was Jonas Pell born?", ["Orley"], ["jonas-pell"], "bridge"),
    EvalQuestion("b", "Who built Karn Point?", ["Ada Vellacott"], ["karn-point"], "bridge"),
]
HERE = {"planner": "llama.cpp AVX AVX2", "embed_precision": "bfloat16", "cpu": "Xeon", "torch": "2.13.0"}


def _result(answer: str) -> RunResult:
    calls = [
        {
            "purpose": "action",
            "prompt_tokens": 100,
            "cached_tokens": 0,
            "completion_tokens": 5,
            "seconds": 0.1,
        }
    ]
    return RunResult("r", "q", RunStatus.ANSWERED, answer, [], 1, "x", 1, 100, 5, 100, 1.0, 0.1, calls, [])


def test_llama_cpp_features_are_the_names_of_those_on() -> None:
    info = "CPU : SSE3 = 1 | AVX = 1 | AVX2 = 1 | AVX512 = 0 | AVX512_VNNI = 0 | FMA = 1 | OPENMP = 1 | "
    assert runtime.llama_features(info) == "SSE3 AVX AVX2 FMA OPENMP"
    assert runtime.llama_features("CPU : AVX512 = 0 | ") == "none reported"


def test_the_processor_is_named_from_cpuinfo_and_unknown_without_it(tmp_path: Path) -> None:
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(
        "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Imaginary CPU @ 2.0GHz\nflags\t: avx\n"
    )
    assert runtime.cpu_model(cpuinfo) == "Imaginary CPU @ 2.0GHz"
    assert runtime.cpu_model(tmp_path / "missing") == "unknown"
    assert runtime.version("no-such-package-of-retrac") == "not installed"


def test_the_runtime_names_a_server_role_by_its_url_and_never_loads_llama_cpp_to_describe_it(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delitem(sys.modules, "llama_cpp", raising=False)
    s = settings.model_copy(
        update={
            "planner": settings.planner.model_copy(update={"url": "http://127.0.0.1:8000"}),
            "retrieval": settings.retrieval.model_copy(update={"embed_precision": "float32"}),
        }
    )
    described = runtime.describe(s)
    assert described["planner"] == "server http://127.0.0.1:8000"
    assert described["compressor"] == "llama.cpp not loaded" and "llama_cpp" not in sys.modules
    assert described["embed_precision"] == "float32"  # as set; `auto` resolves by the processor
    assert set(runtime.LIBRARIES) <= set(described) and described["cpu"]

    loaded = types.SimpleNamespace(llama_print_system_info=lambda: b"CPU : AVX2 = 1 | AVX512 = 0 | ")
    monkeypatch.setitem(sys.modules, "llama_cpp", loaded)
    assert runtime.describe(s)["compressor"] == "llama.cpp AVX2"


def test_the_runtime_names_the_build_of_the_collection_and_a_new_ingest_changes_it(
    settings: Settings, tmp_path: Path
) -> None:
    from retrac_local.corpus.embedder import HashingEmbedder
    from retrac_local.corpus.ingest import Ingester
    from retrac_local.corpus.store import CorpusStore

    embedder = HashingEmbedder()
    store = CorpusStore(tmp_path / "home" / "lance", lambda: embedder)
    assert runtime.collection_build(store) == "empty"
    assert "corpus" not in runtime.describe(settings)  # only a run that names its collection says it
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "pell.md").write_text("# Jonas Pell\n\nJonas Pell was born in Orley in 1850.\n")
    Ingester(store, chunk_words=40, overlap_words=5).run([docs])
    first = runtime.describe(settings, store)["corpus"]
    assert first.startswith("1 chunks, vector index flat (exact), table version ")
    (docs / "karn.md").write_text("# Karn Point\n\nAda Vellacott built Karn Point in 1887.\n")
    Ingester(store, chunk_words=40, overlap_words=5).run([docs])
    second = runtime.collection_build(store)
    assert second.startswith("2 chunks, ") and second != first
    assert runtime.varying([{"corpus": first}, {"corpus": second}]) == ["corpus"]


def test_every_row_records_the_runtime_it_was_made_on_and_an_older_row_gains_none(tmp_path: Path) -> None:
    out = tmp_path / "eval"
    old = score(QUESTIONS[0], "rag", _result("Orley"))  # a row of a harness before runtimes
    out.mkdir()
    (out / "results.jsonl").write_text(old.line())
    evaluation = Evaluation(out, {"x": 1})
    evaluation.run(QUESTIONS, {"rag": lambda q: _result("Orley")}, runtime=HERE)
    lines = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert "runtime" not in lines[0] and lines[1]["id"] == "b" and lines[1]["runtime"] == HERE
    assert [r.runtime for r in Evaluation(out, {"x": 1}).rows] == [{}, HERE]


def test_one_runtime_is_one_line_and_no_runtime_is_nothing() -> None:
    rows = [score(q, m, _result("Orley")) for q in QUESTIONS for m in ("retrac", "rag")]
    assert "runtime" not in markdown(summarize(rows, ["retrac", "rag"]), "t")
    for row in rows:
        row.runtime = dict(HERE)
    summary = summarize(rows, ["retrac", "rag"])
    assert summary["runtimes"]["rag"] == [{"rows": 2, "runtime": HERE}]
    assert markdown(summary, "t").endswith(
        "Every row was made on one runtime: planner llama.cpp AVX AVX2; embed_precision bfloat16; cpu Xeon; "
        "torch 2.13.0.\n"
    )


def test_rows_made_on_several_runtimes_are_counted_per_mode_by_what_differs() -> None:
    rows = [score(q, m, _result("Orley")) for q in QUESTIONS for m in ("retrac", "rag")]
    rows[0].runtime = dict(HERE)  # a, retrac
    rows[2].runtime = HERE | {"embed_precision": "float32", "cpu": "Epyc"}  # b, retrac: another machine
    rows[3].runtime = dict(HERE)  # b, rag; a, rag recorded none
    summary = summarize(rows, ["retrac", "rag"])
    assert sorted((g["rows"], g["runtime"].get("cpu")) for g in summary["runtimes"]["retrac"]) == [
        (1, "Epyc"),
        (1, "Xeon"),
    ]
    table = markdown(summary, "t").split("more than one runtime")[1]
    assert "| mode | rows | cpu | embed_precision |" in table  # only the keys that differ
    assert "| retrac | 1 | Epyc | float32 |" in table and "| retrac | 1 | Xeon | bfloat16 |" in table
    assert "| rag | 1 | Xeon | bfloat16 |" in table and "| rag | 1 | not recorded | not recorded |" in table
    assert "torch" not in table


def test_the_command_records_the_runtime_in_each_row_and_the_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from retrac_local.api import Retrac

    monkeypatch.setattr(Retrac, "agent", lambda self: None)
    monkeypatch.setattr(
        "retrac_local.eval.harness.make_runners", lambda *a, **k: {"rag": lambda q: _result("Orley")}
    )
    questions = tmp_path / "q.jsonl"
    questions.write_text(
        "".join(
            json.dumps({"id": q.id, "question": q.question, "answers": q.answers}) + "\n" for q in QUESTIONS
        )
    )
    out = tmp_path / "o"
    result = CliRunner().invoke(
        cli, ["eval", "--questions", str(questions), "--mode", "rag", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert len(rows) == 2 and rows[0]["runtime"] == rows[1]["runtime"]
    assert rows[0]["runtime"]["embed_precision"] in {"float32", "bfloat16"}
    assert rows[0]["runtime"]["planner"].startswith("llama.cpp ")
    assert rows[0]["runtime"]["corpus"] == "empty"  # the collection it searched, here none ingested
    summary = json.loads((out / "summary.json").read_text())
    assert summary["runtimes"]["rag"] == [{"rows": 2, "runtime": rows[0]["runtime"]}]
    assert "Every row was made on one runtime" in (out / "summary.md").read_text()


def test_rows_of_an_older_harness_beside_one_runtime_are_counted_apart() -> None:
    rows = [score(q, "rag", _result("Orley")) for q in QUESTIONS]
    rows[1].runtime = dict(HERE)
    assert markdown(summarize(rows, ["rag"]), "t").endswith(
        "Every row that records it (1 of 2) was made on one runtime: planner llama.cpp AVX AVX2; "
        "embed_precision bfloat16; cpu Xeon; torch 2.13.0.\n"
    )
