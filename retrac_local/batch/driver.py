"""The driver of a batch: starts a local Ray (or joins a cluster), keeps `workers` Ray actors busy
with one question each, and writes each result as it ends: the line to DIR/results.jsonl, the run to
the local run store, its evidence to the memory. The driver is the only writer of all three.

Ray's usage statistics are turned off before Ray is imported, so no connection leaves the machine
unless `ray_address` names a cluster. A local Ray still listens on the machine's network address (it
will not bind to loopback alone), behind the token authentication Ray turns on by default."""

from __future__ import annotations

import contextlib
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from retrac_local.batch.questions import BatchQuestion
from retrac_local.batch.results import ResultsFile, failed_line, result_line
from retrac_local.batch.transfer import write_run
from retrac_local.batch.worker import AppFactory, BatchWorker, Outcome
from retrac_local.errors import DependencyError, RetracError

if TYPE_CHECKING:
    from retrac_local.memory import RunMemory
    from retrac_local.runstore import RunStore

Progress = Callable[[dict[str, Any], int, int], None]  # (line written, lines so far, questions in all)


def import_ray() -> Any:
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no usage report to Ray's makers, ever
    try:
        import ray
    except ImportError as e:
        raise DependencyError(f"`retrac batch` runs on Ray, which is not installed ({e}); install it with "
                              "`pip install 'retrac-local[scale]'`") from e
    return ray


def _plain(error: BaseException) -> str:
    """Ray's error, as a line of text: the cause it wraps, without terminal colours."""
    return re.sub(r"\x1b\[[0-9;]*m", "", str(getattr(error, "cause", None) or error)).strip()


@dataclass
class BatchReport:
    total: int  # questions in the file
    skipped: int  # already in results.jsonl
    written: dict[str, int]  # lines written now, by status
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        return {"total": self.total, "skipped": self.skipped, "written": self.written, "seconds": round(self.seconds, 2)}


class Batch:
    def __init__(self, out: Path, runs: RunStore, memory: RunMemory | None, factory: AppFactory,
                 workers: int = 1, ray_address: str | None = None, retry_failed: bool = False) -> None:
        if workers < 1:
            raise RetracError(f"--workers must be at least 1, not {workers}")
        self.results = ResultsFile(out)
        self.runs, self.memory, self.factory = runs, memory, factory
        self.workers, self.ray_address, self.retry_failed = workers, ray_address, retry_failed

    def run(self, questions: list[BatchQuestion], progress: Progress | None = None) -> BatchReport:
        started = time.perf_counter()
        done = self.results.done(self.retry_failed)
        todo = [q for q in questions if q.id not in done]
        written: dict[str, int] = {}
        if todo:
            ray = import_ray()
            self._start(ray)
            try:
                for outcome in self._outcomes(ray, todo):
                    line = self._write(outcome)
                    written[line["status"]] = written.get(line["status"], 0) + 1
                    if progress:
                        progress(line, sum(written.values()), len(todo))
            finally:
                ray.shutdown()
        return BatchReport(len(questions), len(questions) - len(todo), written, time.perf_counter() - started)

    def _start(self, ray: Any) -> None:
        if self.ray_address:
            ray.init(address=self.ray_address, log_to_driver=False, configure_logging=False)
        else:
            ray.init(address="local", num_cpus=self.workers, include_dashboard=False, log_to_driver=False, configure_logging=False)

    def _outcomes(self, ray: Any, todo: list[BatchQuestion]) -> Any:
        """Each question's outcome as it ends, with at most one question in flight per worker. A
        worker that dies (killed, out of memory) fails its question; Ray restarts it for the next."""
        actor = ray.remote(BatchWorker).options(num_cpus=1, max_restarts=2, max_task_retries=0)
        pool = [actor.remote(self.factory) for _ in range(min(self.workers, len(todo)))]
        queue = list(reversed(todo))
        flying: dict[Any, tuple[Any, BatchQuestion, float]] = {}

        def submit(worker: Any) -> None:
            if queue:
                q = queue.pop()
                flying[worker.run.remote(q.id, q.question)] = (worker, q, time.perf_counter())

        try:
            ray.get([worker.ready.remote() for worker in pool])
        except Exception as e:
            raise RetracError(f"a batch worker could not start: {_plain(e)}") from e
        for worker in pool:
            submit(worker)
        while flying:
            ready, _ = ray.wait(list(flying), num_returns=1)
            worker, q, sent = flying.pop(ready[0])
            try:
                outcome = ray.get(ready[0])
            except Exception as e:  # the worker process died, or its app could not be built
                outcome = Outcome(q.id, q.question, time.perf_counter() - sent, error=f"the worker failed: {_plain(e)}")
            yield outcome
            submit(worker)
        for worker in pool:
            ray.kill(worker)

    def _write(self, outcome: Outcome) -> dict[str, Any]:
        """The run into the local store first, then the line that names it: a line always points at
        a stored run; a run stored whose line was lost (a kill between the two) just runs again."""
        if outcome.record is None:
            line = failed_line(outcome.id, outcome.question, outcome.error or "unknown error", outcome.seconds)
        else:
            run_id = write_run(self.runs, outcome.record)
            self._remember(run_id, outcome.record.remembered)
            line = result_line(outcome.id, outcome.question, run_id, outcome.record.run["result"] or {})
        self.results.append(line)
        return line

    def _remember(self, run_id: str, states: list[dict[str, Any]]) -> None:
        if self.memory is None or not states:
            return
        from retrac_local.state import ResearchState

        for state in states:  # memory is a convenience: it must not fail the batch (as in the loop)
            with contextlib.suppress(RetracError, OSError, RuntimeError, ValueError):
                self.memory.remember(run_id, ResearchState.model_validate(state))
