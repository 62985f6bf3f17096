"""The driver of `retrac batch`: the questions not yet in DIR/results.jsonl go to a pool of Ray
workers (pool.py); each result is written as it ends: the run to the local run store, its evidence
to the memory, then its line to results.jsonl. The driver is the only writer of all three."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from retrac_local.batch.pool import RayPool, WorkerFailed
from retrac_local.batch.questions import BatchQuestion
from retrac_local.batch.results import BatchLine, ResultsFile, failed_line, result_line
from retrac_local.batch.transfer import write_run
from retrac_local.batch.worker import AppFactory, Outcome
from retrac_local.errors import RetracError

if TYPE_CHECKING:
    from retrac_local.agent.memory import RunMemory
    from retrac_local.runstore import RunStore

Progress = Callable[[BatchLine, int, int], None]  # (line written, lines so far, questions in all)


@dataclass
class BatchReport:
    total: int  # questions in the file
    skipped: int  # already in results.jsonl
    written: dict[str, int]  # lines written now, by status
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "total": self.total,
            "skipped": self.skipped,
            "written": self.written,
            "seconds": round(self.seconds, 2),
        }


class Batch:
    def __init__(
        self,
        out: Path,
        runs: RunStore,
        memory: RunMemory | None,
        factory: AppFactory,
        workers: int = 1,
        ray_address: str | None = None,
        retry_failed: bool = False,
    ) -> None:
        if workers < 1:
            raise RetracError(f"--workers must be at least 1, not {workers}")  # before a file is made
        self.results = ResultsFile(out)
        self.runs, self.memory, self.factory = runs, memory, factory
        self.workers, self.ray_address, self.retry_failed = workers, ray_address, retry_failed

    def run(self, questions: list[BatchQuestion], progress: Progress | None = None) -> BatchReport:
        started = time.perf_counter()
        done = self.results.done(self.retry_failed)
        todo = [q for q in questions if q.id not in done]
        written: dict[str, int] = {}
        if todo:
            with RayPool[BatchQuestion](self.factory, self.workers, self.ray_address) as pool:
                for q, outcome in pool.map(todo, "run", lambda q: (q.id, q.question)):
                    if isinstance(outcome, WorkerFailed):
                        outcome = Outcome(q.id, q.question, outcome.seconds, error=str(outcome))
                    line = self._write(outcome)
                    written[str(line.status)] = written.get(str(line.status), 0) + 1
                    if progress:
                        progress(line, sum(written.values()), len(todo))
        return BatchReport(len(questions), len(questions) - len(todo), written, time.perf_counter() - started)

    def _write(self, outcome: Outcome) -> BatchLine:
        """The run into the local store first, then the line that names it: a line always points at
        a stored run; a run stored whose line was lost (a kill between the two) just runs again."""
        if outcome.record is None:
            line = failed_line(
                outcome.id, outcome.question, outcome.error or "unknown error", outcome.seconds
            )
        else:
            run_id = write_run(self.runs, outcome.record)
            self._remember(run_id, outcome.record.remembered)
            line = result_line(outcome.id, outcome.question, run_id, outcome.record.run["result"] or {})
        self.results.append(line)
        return line

    def _remember(self, run_id: str, states: list[dict[str, Any]]) -> None:
        if self.memory is None or not states:
            return
        from retrac_local.contract.state import ResearchState

        for state in states:  # memory is a convenience: it must not fail the batch (as in the loop)
            with contextlib.suppress(RetracError, OSError, RuntimeError, ValueError):
                self.memory.remember(run_id, ResearchState.model_validate(state))
