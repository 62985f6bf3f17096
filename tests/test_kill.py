"""Real `ask` processes: one killed with SIGKILL at many points and resumed each time ends in the
same rounds and answer as an uninterrupted one, no committed round rewritten; two asks and an ingest
at once on one home all finish and leave consistent stores."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from retrac_local.api import Retrac
from retrac_local.config import load_settings
from retrac_local.corpus.embedder import HashingEmbedder
from retrac_local.corpus.store import CorpusStore
from retrac_local.runstore import RunStore
from tests.conftest import DEMO_DOCS

pytestmark = pytest.mark.slow  # a dozen processes; about half a minute

TARGET = Path(__file__).with_name("kill_target.py")
Q = "In which year was the engineer who designed the Karn Point Lighthouse born?"


def environment(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RETRAC_")}
    env.update(
        RETRAC_HOME=str(home),
        RETRAC_MEMORY__ENABLED="false",
        RETRAC_BUDGET__MAX_STEPS_PER_ROUND="2",
        RETRAC_BUDGET__FIRST_READING_SAMPLES="0",  # rounds to kill between, not an end after hop 0
        RETRAC_RETRIEVAL__EMBEDDER="hashing",
    )
    return env


def prepared(home: Path) -> dict[str, str]:
    env = environment(home)
    Retrac(load_settings(home=home, retrieval={"embedder": "hashing"}), embedder=HashingEmbedder()).ingest(
        [DEMO_DOCS]
    )
    return env


def start(env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(TARGET), *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def committed(home: Path, run_id: str) -> dict[int, tuple[str, float]]:
    store = RunStore(home / "runs.sqlite")
    try:
        return {r["iteration"]: (str(r["state"]), r["created"]) for r in store.rounds(run_id)}
    finally:
        store.close()


def test_sigkill_at_several_points_then_resume_ends_like_an_uninterrupted_run(tmp_path: Path) -> None:
    reference_env = prepared(tmp_path / "reference")
    done = start(reference_env, "ask", Q)
    lines = done.communicate(timeout=120)[0].splitlines()
    assert done.returncode == 0 and lines[-1].startswith("RunFinished")
    ref_id = lines[0].split('"run_id": "')[1].split('"')[0]
    reference = RunStore(tmp_path / "reference" / "runs.sqlite")
    ref_rounds = [r["state"] for r in reference.rounds(ref_id)]
    assert len(ref_rounds) == 3

    home = tmp_path / "killed"
    env = prepared(home)
    rng = random.Random(7)
    run_id, kills, seen_before = None, 0, {}
    for sitting in range(80):
        lines_before_kill = 1 + sitting // 2  # two kills at each depth: before the first line, after it, …
        proc = start(env, *(("resume", run_id) if run_id else ("ask", Q)))
        assert proc.stdout is not None
        read = [proc.stdout.readline() for _ in range(lines_before_kill)]
        if run_id is None:
            run_id = read[0].split('"run_id": "')[1].split('"')[0]
        time.sleep(rng.uniform(0, 0.2))  # often inside an LLM call, sometimes inside a commit
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            kills += 1
        proc.wait(timeout=60)
        proc.stdout.close()
        proc.stderr.close()
        now = committed(home, run_id)
        assert all(now[i] == seen_before[i] for i in seen_before), "a committed round was rewritten"
        seen_before = now
        if proc.returncode == 0 and any(line.startswith("RunFinished") for line in read):
            break
    else:
        pytest.fail("the run never finished")
    if (
        RunStore(home / "runs.sqlite").run(run_id)["status"] == "running"
    ):  # killed after the last line was read
        final = start(env, "resume", run_id)
        assert final.wait(timeout=60) == 0
    assert kills >= 8, kills
    store = RunStore(home / "runs.sqlite")
    rounds = store.rounds(run_id)
    assert [r["iteration"] for r in rounds] == [1, 2, 3]
    assert [r["state"] for r in rounds] == ref_rounds  # the same states as the uninterrupted run
    run = store.run(run_id)
    assert run["status"] == "answered" and run["answer"] == reference.run(ref_id)["answer"] == "1849"
    calls = store.calls(run_id)
    assert [c["seq"] for c in calls] == list(range(1, len(calls) + 1))


def test_two_asks_and_an_ingest_at_once_on_one_home(tmp_path: Path) -> None:
    home = tmp_path / "shared"
    env = prepared(home)
    more = tmp_path / "more"
    more.mkdir()
    for i in range(300):
        (more / f"extra-{i}.md").write_text(
            f"# Extra {i}\n\nThe extra note {i} records a storm at the harbour.\n"
        )
    ingest_env = env | {"RETRAC_INGEST__FILE_TIMEOUT_S": "0"}
    procs = [
        start(env, "ask", Q),
        start(env, "ask", Q.replace("In which year", "What year")),
        subprocess.Popen(
            [sys.executable, "-m", "retrac_local.cli.main", "ingest", str(more), "--json"],
            env=ingest_env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        ),
    ]
    outputs = [p.communicate(timeout=300) for p in procs]
    for p, (_, err) in zip(procs, outputs, strict=True):
        assert p.returncode == 0, err[-2000:]
    store = RunStore(home / "runs.sqlite")
    assert store.db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    runs = store.list_runs()
    assert len(runs) == 2 and all(r["status"] == "answered" and r["rounds"] == 3 for r in runs)
    corpus = CorpusStore(home / "corpus" / "lance", HashingEmbedder)
    assert corpus.count() == (18 + 300, 22 + 300)


def test_a_server_stopped_by_ctrl_c_mid_run_leaves_the_run_resumable_from_the_page(tmp_path: Path) -> None:
    import json
    import socket
    import urllib.request

    env = prepared(tmp_path / "home")

    def serve() -> tuple[subprocess.Popen[bytes], str]:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        process = subprocess.Popen([sys.executable, str(TARGET), "serve", str(port)], env=env)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return process, f"http://127.0.0.1:{port}"
            except OSError:
                time.sleep(0.1)
        raise AssertionError("the server did not start")

    def call(url: str, data: dict | None = None) -> dict:
        base = "/".join(url.split("/")[:3])
        csrf = json.load(urllib.request.urlopen(f"{base}/api/session"))["csrf"]
        request = urllib.request.Request(
            url,
            data=json.dumps(data or {}).encode() if data is not None else None,
            headers={"Content-Type": "application/json", "X-Retrac-CSRF": csrf},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            return (
                json.load(response)
                if "json" in response.headers.get("content-type", "")
                else {"text": response.read().decode()}
            )

    process, base = serve()
    job = call(f"{base}/api/ask", {"question": Q})
    store = RunStore(tmp_path / "home" / "runs.sqlite")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        run_id = call(f"{base}/api/jobs/{job['job_id']}")["run_id"]
        if run_id and store.rounds(run_id):
            break
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)  # Ctrl-C, mid-run: a round is saved, the run is not finished
    assert process.wait(timeout=20) is not None
    assert store.run(run_id)["status"] == "running"

    process, base = serve()
    try:
        assert 'id="resume"' in call(f"{base}/runs/{run_id}")["text"]
        resumed = call(f"{base}/api/runs/{run_id}/resume", {})
        while call(f"{base}/api/jobs/{resumed['job_id']}")["state"] not in ("done", "failed"):
            time.sleep(0.1)
        run = call(f"{base}/api/runs/{run_id}")
        assert run["status"] == "answered" and run["answer"] == "1849"
    finally:
        process.terminate()
        process.wait(timeout=20)
