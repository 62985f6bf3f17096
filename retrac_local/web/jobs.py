"""The page's one worker: asks, resumes, ingests and removals run one at a time in a thread that
owns the models (one model in one process), and every job keeps its events, so that a page can
follow a job, be closed, and pick the job up again from its first event.

A job's events are JSON-ready dicts: the run's own events (`contract/events.py`, as `event_dict`
writes them) with `t`, the seconds since the job started, added; ingest progress; and `Failed`
with the reason. A run is saved round by round by the agent as it goes, so a server stopped or
killed mid-run leaves it resumable from the page or the CLI.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from retrac_local.config import mask_credentials
from retrac_local.errors import RetracError

if TYPE_CHECKING:
    from retrac_local.api import Retrac

log = logging.getLogger(__name__)

Kind = Literal["ask", "resume", "ingest", "remove"]
Work = Callable[["Retrac", Callable[[dict[str, Any]], None]], None]


@dataclass
class Job:
    id: str
    kind: Kind
    label: str  # the question, or what is ingested or removed
    state: Literal["queued", "running", "done", "failed"] = "queued"
    events: list[dict[str, Any]] = field(default_factory=list)
    run_id: str | None = None
    error: str | None = None
    created: float = field(default_factory=time.time)

    @property
    def finished(self) -> bool:
        return self.state in ("done", "failed")

    def to_dict(self, ahead: int) -> dict[str, Any]:
        return {
            "job_id": self.id,
            "kind": self.kind,
            "label": self.label,
            "state": self.state,
            "run_id": self.run_id,
            "error": self.error,
            "ahead": ahead,
            "events": len(self.events),
        }


class Worker:
    """A queue of jobs and the thread that runs them in order. `make_app` builds the `Retrac` the
    jobs share; it is built in the worker thread, on the first job, so the server starts at once
    and the models load only when something needs them."""

    def __init__(self, make_app: Callable[[], Retrac], keep: int = 200) -> None:
        self._make_app = make_app
        self._app: Retrac | None = None
        self._jobs: dict[str, Job] = {}
        self._queue: deque[tuple[Job, Work]] = deque()
        self._running: Job | None = None
        self.models_loaded = False  # a run has started: the models are in memory
        self._changed = threading.Condition()
        self._stopping = False
        self._keep = keep  # finished jobs remembered at most (their runs stay in the run store)
        self._thread = threading.Thread(target=self._serve, name="retrac-worker", daemon=True)

    # -- the server's side ---------------------------------------------------------------------
    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """No new job starts; the one running is left to the process's end (its rounds are saved)."""
        with self._changed:
            self._stopping = True
            self._changed.notify_all()

    def submit(self, kind: Kind, label: str, work: Work) -> Job:
        job = Job(uuid.uuid4().hex[:12], kind, label)
        with self._changed:
            if self._stopping:
                raise RetracError("the server is stopping; start it again and retry")
            self._jobs[job.id] = job
            self._queue.append((job, work))
            self._forget_old()
            self._changed.notify_all()
        return job

    def cancel(self, job: Job) -> None:
        """Take a queued job out of the queue. A running job cannot be stopped from here: stopping the
        server interrupts it, and a run stays resumable."""
        with self._changed:
            if job.state != "queued":
                raise RetracError(
                    f"the job is {job.state}; only a queued job can be cancelled "
                    "(to interrupt a run, stop the server: the run stays resumable)"
                )
            self._queue = deque((j, w) for j, w in self._queue if j.id != job.id)
            job.events.append({"event": "Cancelled", "t": 0.0})
            job.state, job.error = "failed", "cancelled before it started"
            self._changed.notify_all()

    def job(self, job_id: str) -> Job | None:
        return self._jobs.get(job_id)

    def jobs(self) -> list[Job]:
        return sorted(self._jobs.values(), key=lambda j: j.created, reverse=True)

    def ahead(self, job: Job) -> int:
        """Jobs that will run before `job`: the running one and those queued earlier."""
        with self._changed:
            if job.state != "queued":
                return 0
            waiting = [j.id for j, _ in self._queue]
            return (1 if self._running else 0) + (waiting.index(job.id) if job.id in waiting else 0)

    def live_job(self, run_id: str) -> Job | None:
        """The unfinished job that is running (or will resume) `run_id`, if any."""
        return next((j for j in self.jobs() if j.run_id == run_id and not j.finished), None)

    # -- the worker thread ---------------------------------------------------------------------
    def _serve(self) -> None:
        while True:
            with self._changed:
                self._changed.wait_for(lambda: self._queue or self._stopping)
                if self._stopping:
                    return
                job, work = self._queue.popleft()
                job.state, self._running = "running", job
                self._changed.notify_all()
            started = time.perf_counter()

            def emit(data: dict[str, Any], job: Job = job, started: float = started) -> None:
                with self._changed:
                    job.events.append({**data, "t": round(time.perf_counter() - started, 2)})
                    if data.get("event") == "RunStarted":
                        job.run_id, self.models_loaded = data["run_id"], True
                    self._changed.notify_all()

            try:
                if self._app is None:
                    self._app = self._make_app()
                work(self._app, emit)
                state, error = "done", None
            except RetracError as e:
                state, error = "failed", mask_credentials(str(e))
            except Exception as e:  # a bug: the job fails, the worker goes on with the next one
                log.exception("job %s failed", job.id)
                state, error = "failed", f"internal error: {type(e).__name__}: {e}"
            if error:
                emit({"event": "Failed", "error": error})
            with self._changed:
                job.state, job.error, self._running = state, error, None  # type: ignore[assignment]
                self._changed.notify_all()

    def _forget_old(self) -> None:
        finished = [j for j in self.jobs() if j.finished]
        for job in finished[self._keep :]:
            del self._jobs[job.id]


def run_events(events: Iterator[Any], emit: Callable[[dict[str, Any]], None]) -> None:
    """Pass a run's typed events on as data, as they come."""
    from retrac_local.contract.events import event_dict

    for event in events:
        emit(event_dict(event))
