"""Real runs, taped by `make record-runs` (the real models on the real collections), played back on
today's code (eval/recording.py): a change that means to change no answer plays every tape to the
same actions, states, diffs, answers and citations. A change meant to change answers tapes them
again (delete tests/recordings/SET and run `make record-runs`). The HotpotQA tapes hold no copy of
its corpus (eval/detached.py): they read its texts from ../shared/eval/corpus.jsonl (`EVAL_DIR`),
and are skipped, saying so, where that file is not."""

from __future__ import annotations

from pathlib import Path

import pytest

from retrac_local.eval.detached import SourceMissing
from retrac_local.eval.recording import play, read_tape, tape_names

RECORDINGS = Path(__file__).parent / "recordings"
SETS = sorted(p for p in RECORDINGS.iterdir() if p.is_dir()) if RECORDINGS.is_dir() else []
TAPES = [(folder, name) for folder in SETS for name in tape_names(folder)]


def test_the_recordings_hold_every_mode() -> None:
    modes = {name.rsplit("-", 1)[1] for _, name in TAPES}
    assert modes == {"retrac", "react", "rag"}, f"tapes under {RECORDINGS}: {len(TAPES)}"


@pytest.mark.parametrize(("folder", "name"), TAPES, ids=[f"{f.name}/{n}" for f, n in TAPES])
def test_a_taped_run_plays_back_the_same_on_todays_code(folder: Path, name: str) -> None:
    try:
        tape, titles = read_tape(folder, name)
    except SourceMissing as e:  # a published collection's tapes, on a machine without that collection
        pytest.skip(str(e))
    assert play(tape, titles) == []
