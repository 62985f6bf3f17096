from pathlib import Path

import pytest

from retrac_local.errors import RunNotFoundError, StoreError
from retrac_local.runstore import MIGRATIONS, RunStore


def test_migrations_are_recorded_once_and_rounds_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite"
    store = RunStore(path)
    run_id = store.create_run("Q?", {"question": "Q?"}, {"budget": {}})
    call = {
        "iteration": 1,
        "role": "planner",
        "purpose": "action",
        "prompt_tokens": 10,
        "completion_tokens": 2,
        "cached_tokens": 0,
        "seconds": 0.5,
    }
    store.save_round(
        run_id, 1, {"question": "Q?"}, {"steps": []}, {"evidence_added": []}, {"seconds": 1.0}, [call, call]
    )
    store.close()
    again = RunStore(path)  # reopening applies nothing twice
    names = [r[0] for r in again.db.execute("SELECT name FROM migrations")]
    assert names == [m.__name__ for m in MIGRATIONS]
    assert again.rounds(run_id)[0]["stats"] == {"seconds": 1.0}
    assert [c["seq"] for c in again.calls(run_id)] == [1, 2]
    again.finish_run(run_id, "answered", "A", {"answer": "A"}, [call])
    assert again.run(run_id)["status"] == "answered" and [c["seq"] for c in again.calls(run_id)] == [1, 2, 3]
    with pytest.raises(RunNotFoundError):
        again.run("missing")


def test_a_round_is_saved_whole_or_not_at_all(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.sqlite")
    run_id = store.create_run("Q?", {}, {})
    store.save_round(run_id, 1, {}, {}, {}, {}, [])
    with pytest.raises(StoreError):  # the same round twice: the transaction is rolled back
        store.save_round(
            run_id,
            1,
            {"x": 1},
            {},
            {},
            {},
            [
                {
                    "iteration": 1,
                    "role": "p",
                    "purpose": "a",
                    "prompt_tokens": 1,
                    "completion_tokens": 1,
                    "cached_tokens": 0,
                    "seconds": 0.1,
                }
            ],
        )
    assert store.calls(run_id) == [] and store.rounds(run_id)[0]["state"] == {}


def test_unwritable_home_is_a_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(StoreError, match="RETRAC_HOME"):
        RunStore(blocker / "runs.sqlite")
