"""The server backend against a real OpenAI-compatible server: llama-cpp-python's own, started here
on loopback with the small model."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from retrac_local.config import ModelSettings, SamplingSettings, load_settings
from retrac_local.contract.schemas import action_schema
from retrac_local.errors import ModelError
from retrac_local.llm.server import ServerLLM
from tests.conftest import DEMO_DOCS

pytestmark = pytest.mark.slow

SMALL = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    model = load_settings().models_dir / SMALL
    if not model.exists():
        pytest.skip(f"{model} is not in place (make models)")
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(model),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_ctx",
            "8192",
            "--verbose",
            "false",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(120):
            if proc.poll() is not None:
                pytest.fail(f"the server stopped: {proc.stderr.read()[-2000:] if proc.stderr else ''}")
            try:
                urllib.request.urlopen(url + "/v1/models", timeout=1)
                break
            except OSError:
                time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_constrained_json_through_the_server(server: str) -> None:
    llm = ServerLLM(
        ModelSettings(url=server, schema_format="json_object", n_ctx=8192), SamplingSettings()
    ).check()
    messages = [
        {"role": "user", "content": 'Reply with one JSON action: search for "Karn Point Lighthouse".'}
    ]
    generation = llm.generate(messages, schema=action_schema(), max_tokens=80)
    assert isinstance(generation.parsed, action_schema()) and generation.parsed.call.tool in (
        "search",
        "open",
        "calculate",
        "finish",
    )
    assert generation.usage.prompt_tokens > 0 and generation.usage.completion_tokens > 0
    assert llm.count_tokens("Karn Point Lighthouse") < 10  # counted by the server's tokenizer
    with pytest.raises(ModelError, match="cannot reach the model server"):
        ServerLLM(ModelSettings(url="http://127.0.0.1:9"), SamplingSettings()).check()


def test_retrac_ask_runs_on_the_server(server: str, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RETRAC_")}
    env |= {
        "RETRAC_HOME": str(tmp_path / "home"),
        "RETRAC_RETRIEVAL__EMBEDDER": "hashing",
        "RETRAC_BUDGET__MAX_ROUNDS": "1",
        "RETRAC_BUDGET__MAX_STEPS_PER_ROUND": "2",
        "RETRAC_BUDGET__OPENING_SEARCHES": "1",
    }  # the planner's own step goes through the server too
    for role in ("PLANNER", "COMPRESSOR"):
        env |= {f"RETRAC_{role}__URL": server, f"RETRAC_{role}__SCHEMA_FORMAT": "json_object"}
    cli = [sys.executable, "-m", "retrac_local.cli.main"]
    subprocess.run([*cli, "ingest", str(DEMO_DOCS)], env=env, check=True, capture_output=True, timeout=300)
    out = subprocess.run(
        [*cli, "ask", "Who founded the Gull Line ferry company?", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode in (0, 2), out.stderr[-2000:]
    result = json.loads(out.stdout)
    assert result["llm_calls"] >= 3 and result["prompt_tokens"] > 0 and result["rounds"] == 1
    assert result["status"] in ("answered", "unsure", "budget-exhausted", "failed")


def test_a_two_question_batch_on_a_local_ray_shares_the_server(server: str, tmp_path: Path) -> None:
    """`retrac batch` as a team would run it on one machine: two Ray workers, one model server."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RETRAC_")}
    env |= {
        "RETRAC_HOME": str(tmp_path / "home"),
        "RETRAC_RETRIEVAL__EMBEDDER": "hashing",
        "RETRAC_BUDGET__MAX_ROUNDS": "1",
        "RETRAC_BUDGET__MAX_STEPS_PER_ROUND": "1",
        "RETRAC_BUDGET__OPENING_SEARCHES": "1",
    }
    for role in ("PLANNER", "COMPRESSOR"):
        env |= {f"RETRAC_{role}__URL": server, f"RETRAC_{role}__SCHEMA_FORMAT": "json_object"}
    cli = [sys.executable, "-m", "retrac_local.cli.main"]
    subprocess.run([*cli, "ingest", str(DEMO_DOCS)], env=env, check=True, capture_output=True, timeout=300)
    questions = tmp_path / "q.jsonl"
    questions.write_text(
        '{"id": "g", "question": "Who founded the Gull Line ferry company?"}\n'
        '{"id": "k", "question": "Who designed the Karn Point Lighthouse?"}\n'
    )
    out = subprocess.run(
        [*cli, "batch", str(questions), "--out", str(tmp_path / "out"), "--workers", "2", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    report = json.loads(out.stdout)
    assert report["total"] == 2 and "failed" not in report["written"]
    lines = [json.loads(line) for line in (tmp_path / "out" / "results.jsonl").read_text().splitlines()]
    assert sorted(line["id"] for line in lines) == ["g", "k"]
    for line in lines:
        shown = subprocess.run(
            [*cli, "runs", "show", line["run_id"], "--json"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert shown.returncode == 0, shown.stderr[-2000:]
        assert line["question"] in shown.stdout  # the run reached the local run store through the driver
