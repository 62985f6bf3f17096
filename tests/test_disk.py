"""A full disk and a read-only RETRAC_HOME: one clear line, nothing half-written, and the same
command finishes the work once there is room. Needs root to mount a small tmpfs; skipped otherwise."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import DEMO_DOCS

pytestmark = pytest.mark.slow  # real processes: the mount must be free of open files to be remounted


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    mount = tmp_path / "disk"
    mount.mkdir()
    if (
        shutil.which("mount") is None
        or subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=400k", "tmpfs", str(mount)], capture_output=True
        ).returncode
        != 0
    ):
        pytest.skip("cannot mount a small tmpfs here (needs root)")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def remount(mount: Path, options: str) -> None:
    subprocess.run(["mount", "-o", f"remount,{options}", str(mount)], check=True)


def retrac(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RETRAC_")}
    env |= {"RETRAC_HOME": str(home), "RETRAC_RETRIEVAL__EMBEDDER": "hashing"}
    return subprocess.run(
        [sys.executable, "-m", "retrac_local.cli.main", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def one_line(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error: ")]
    assert len(errors) == 1, result.stderr
    return errors[0]


def test_full_disk_then_read_only_home(small_disk: Path) -> None:
    home = small_disk / "home"
    full = one_line(retrac(home, "ingest", str(DEMO_DOCS), "--json"))
    assert "No space left on device" in full or "disk is full" in full, full

    remount(small_disk, "size=50m")  # room again: the same command finishes, without duplicates
    done = retrac(home, "ingest", str(DEMO_DOCS), "--json")
    assert done.returncode == 0, done.stderr
    stats = retrac(home, "corpus", "stats", "--json").stdout
    assert '"documents": 18' in stats and '"chunks": 22' in stats

    remount(small_disk, "ro")
    assert "cannot write" in one_line(retrac(home, "ingest", str(DEMO_DOCS.parent / "questions.jsonl")))
    assert "cannot open the run store" in one_line(retrac(home, "ask", "Who founded the Gull Line?"))
    assert (
        '"chunks": 22' in retrac(home, "corpus", "stats", "--json").stdout
    )  # what was stored is still there
