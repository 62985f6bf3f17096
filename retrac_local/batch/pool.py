"""Ray actors kept busy: `workers` of them, each holding an app built once, each with one job in
flight; the outcomes come back as the jobs end. A local Ray is started for the pool and shut down
with it, unless `ray_address` names a cluster to join.

Ray's usage statistics are turned off before Ray is imported, so no connection leaves the machine
unless `ray_address` names a cluster. A local Ray still listens on the machine's network address (it
will not bind to loopback alone), behind the token authentication Ray turns on by default. This is
the only module that imports Ray."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar

from retrac_local.batch.worker import AppFactory, BatchWorker
from retrac_local.errors import DependencyError, RetracError

Job = TypeVar("Job")


def import_ray() -> Any:
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no usage report to Ray's makers, ever
    try:
        import ray
    except ImportError as e:
        raise DependencyError(
            f"running questions on Ray needs Ray, which is not installed ({e}); install it with "
            "`pip install 'retrac-local[scale]'`"
        ) from e
    return ray


def plain(error: BaseException) -> str:
    """Ray's error, as a line of text: the cause it wraps, without terminal colours."""
    return re.sub(r"\x1b\[[0-9;]*m", "", str(getattr(error, "cause", None) or error)).strip()


class WorkerFailed(RetracError):
    """A job whose worker process died under it (killed, out of memory)."""

    def __init__(self, message: str, seconds: float) -> None:
        super().__init__(message)
        self.seconds = seconds


class RayPool(Generic[Job]):
    def __init__(self, factory: AppFactory, workers: int = 1, ray_address: str | None = None) -> None:
        if workers < 1:
            raise RetracError(f"--workers must be at least 1, not {workers}")
        self.factory, self.workers, self.ray_address = factory, workers, ray_address
        self.ray: Any = None

    def __enter__(self) -> RayPool[Job]:
        self.ray = import_ray()
        if self.ray_address:
            self.ray.init(address=self.ray_address, log_to_driver=False, configure_logging=False)
        else:
            self.ray.init(
                address="local",
                num_cpus=self.workers,
                include_dashboard=False,
                log_to_driver=False,
                configure_logging=False,
            )
        return self

    def __exit__(self, *exc: object) -> None:
        self.ray.shutdown()

    def map(
        self, jobs: list[Job], method: str, args: Callable[[Job], tuple[Any, ...]]
    ) -> Iterator[tuple[Job, Any]]:
        """(job, what `BatchWorker.<method>(*args(job))` returned) as each job ends; a job whose
        worker died yields a WorkerFailed instead, and Ray restarts that worker for the next job."""
        ray = self.ray
        actor = ray.remote(BatchWorker).options(num_cpus=1, max_restarts=2, max_task_retries=0)
        pool = [actor.remote(self.factory) for _ in range(min(self.workers, len(jobs)))]
        queue = list(reversed(jobs))
        flying: dict[Any, tuple[Any, Job, float]] = {}

        def submit(worker: Any) -> None:
            if queue:
                job = queue.pop()
                flying[getattr(worker, method).remote(*args(job))] = (worker, job, time.perf_counter())

        try:
            ray.get([worker.ready.remote() for worker in pool])
        except Exception as e:
            raise RetracError(f"a worker could not start: {plain(e)}") from e
        try:
            for worker in pool:
                submit(worker)
            while flying:
                ready, _ = ray.wait(list(flying), num_returns=1)
                worker, job, sent = flying.pop(ready[0])
                try:
                    outcome = ray.get(ready[0])
                except Exception as e:
                    outcome = WorkerFailed(f"the worker failed: {plain(e)}", time.perf_counter() - sent)
                yield job, outcome
                submit(worker)
        finally:
            for worker in pool:
                ray.kill(worker)
