"""A finished run, moved from the run store a worker wrote into the local one.

A worker never writes the user's run store: on a cluster it is another machine's file, and on this
machine several writers would queue behind SQLite's one lock. Each worker runs into a store of its
own; the driver copies the finished run through the run store's own methods (create, rounds, finish),
so the run is kept exactly as `runs show`, `report` and `resume` read it, under a new id of the local
store."""

from __future__ import annotations

from dataclasses import dataclass, field

from retrac_local.records import JSONObject, StoredCall, StoredRound, StoredRun
from retrac_local.runstore import RunStore


@dataclass
class RunRecord:
    run: StoredRun
    rounds: list[StoredRound]
    calls: list[StoredCall]
    remembered: list[JSONObject] = field(default_factory=list)  # final states the run handed to memory


def read_run(store: RunStore, run_id: str) -> RunRecord:
    return RunRecord(store.run(run_id), store.rounds(run_id), store.calls(run_id))


def write_run(store: RunStore, record: RunRecord) -> str:
    """Copy `record` into `store`; returns its id there. Each call keeps its order and its round: the
    calls up to a round are saved with it, those after the last round with the result."""
    run = record.run
    run_id = store.create_run(run["question"], run["initial_state"], run["settings"], run.get("memory") or [])
    calls = sorted(record.calls, key=lambda c: c["seq"])
    taken = 0
    for r in record.rounds:
        upto = taken
        while upto < len(calls) and calls[upto]["iteration"] <= r["iteration"]:
            upto += 1
        store.save_round(
            run_id, r["iteration"], r["state"], r["trajectory"], r["diff"], r["stats"], calls[taken:upto]
        )
        taken = upto
    result = dict(run["result"] or {})
    if result:
        result["run_id"] = run_id
        store.finish_run(run_id, run["status"], run["answer"], result, calls[taken:])
    elif run["status"] == "failed":
        store.mark_failed(run_id)
    return run_id
