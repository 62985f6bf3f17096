"""`retrac ingest` killed with SIGKILL at ten random moments, then run again to the end: the store
holds exactly what an uninterrupted ingest writes, nothing lost or duplicated (checked after each
home's ingest has been finished)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from retrac_local.corpus.embedder import HashingEmbedder
from retrac_local.corpus.store import CorpusStore

pytestmark = pytest.mark.slow  # a dozen processes
KILLS = 10
MAX_TRIALS = 6


def folder(root: Path) -> Path:
    rng = random.Random(5)
    words = [
        "keeper",
        "light",
        "tower",
        "storm",
        "harbour",
        "ferry",
        "island",
        "bridge",
        "survey",
        "puffin",
        "granite",
        "lens",
    ]
    for i in range(2400):
        text = " ".join(rng.choice(words) for _ in range(rng.randrange(50, 600)))
        (root / f"part-{i // 200}").mkdir(parents=True, exist_ok=True)
        (root / f"part-{i // 200}" / f"note-{i}.md").write_text(f"# Note {i}\n\n{text}\n")
    return root


def ingest(home: Path, docs: Path) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RETRAC_")}
    env |= {
        "RETRAC_HOME": str(home),
        "RETRAC_RETRIEVAL__EMBEDDER": "hashing",
        "RETRAC_INGEST__FILE_TIMEOUT_S": "0",
    }
    return subprocess.Popen(
        [sys.executable, "-m", "retrac_local.cli.main", "ingest", str(docs), "--json"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def contents(home: Path) -> list[tuple[str, str]]:
    table = CorpusStore(home / "corpus" / "lance", HashingEmbedder).table().to_arrow()
    return sorted(zip(table["chunk_id"].to_pylist(), table["text"].to_pylist(), strict=True))


def test_ingest_killed_at_random_moments_ends_in_the_same_store(tmp_path: Path) -> None:
    docs = folder(tmp_path / "docs")
    assert ingest(tmp_path / "reference", docs).wait(timeout=300) == 0
    reference = contents(tmp_path / "reference")
    rng, kills = random.Random(11), 0
    started = time.perf_counter()
    ingest(tmp_path / "timing", docs).wait(timeout=300)
    full = time.perf_counter() - started  # an uninterrupted ingest here
    started = time.perf_counter()
    ingest(tmp_path / "timing", docs).wait(timeout=300)
    startup = (
        time.perf_counter() - started
    )  # one with nothing to do: imports, opening the store, hashing files
    work = max(full - startup, 1.0)
    # Each killed run leaves less to do, so a home's ingest ends after a few kills, sooner when the
    # machine is busy; then a fresh home is killed again, until KILLS kills have landed in all.
    for trial in range(MAX_TRIALS):
        home = tmp_path / f"killed-{trial}"
        while kills < KILLS:
            proc = ingest(home, docs)
            time.sleep(startup * 0.8 + rng.uniform(0.0, 0.4) * work)
            if proc.poll() is not None:
                break  # it finished: nothing left to interrupt in this home
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=60)
            kills += 1
        assert ingest(home, docs).wait(timeout=300) == 0
        assert contents(home) == reference, f"the store of {home.name} differs after {kills} kill(s) in all"
        if kills >= KILLS:
            break
    assert kills >= KILLS, f"only {kills} kills landed in {MAX_TRIALS} homes"
