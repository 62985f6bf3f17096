"""What one Ray worker holds and does. The app (settings, corpus, embedder, model clients) is built
once per worker and answers one question after another; each question runs into a fresh run store
of the worker's own, read back whole when it ends and handed to the driver, with what the run would
have written to the cross-task memory (the driver writes both: one writer for each store)."""

from __future__ import annotations

import shutil
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from retrac_local.agent.memory import RunMemory
from retrac_local.batch.transfer import RunRecord, read_run
from retrac_local.errors import RetracError
from retrac_local.runstore import RunStore

if TYPE_CHECKING:
    from retrac_local.api import Retrac
    from retrac_local.config import Settings
    from retrac_local.contract.state import ResearchState
    from retrac_local.eval.questions import EvalQuestion

AppFactory = Callable[[], "Retrac"]


@dataclass(frozen=True)
class FromSettings:
    """The default app of a worker: the driver's settings, so that every worker uses the same
    collection, models (servers) and budgets. Picklable, as Ray needs."""

    settings: Settings

    def __call__(self) -> Retrac:
        from retrac_local.api import Retrac

        return Retrac(self.settings)


def _reason(error: Exception) -> str:
    return (
        str(error)
        if isinstance(error, RetracError)
        else "".join(traceback.format_exception_only(error)).strip()
    )


class DeferredMemory(RunMemory):
    """Reads the memory as it is; what a run would remember is kept for the driver to write."""

    def __init__(self, path: Path, embedder_factory: Callable[[], Any]) -> None:
        super().__init__(path, embedder_factory)
        self.kept: list[dict[str, Any]] = []

    def remember(self, run_id: str, state: ResearchState) -> bool:
        self.kept.append(state.model_dump(mode="json"))
        return True


@dataclass
class Outcome:
    """One question's end, as it travels back to the driver."""

    id: str
    question: str
    seconds: float
    record: RunRecord | None = None  # the finished run of the run store (Re-TRAC); None when it failed
    error: str | None = None
    result: dict[str, Any] | None = None  # RunResult.to_dict(with_calls=True); None when it failed
    runtime: dict[str, str] = field(default_factory=dict)  # the worker's machine (`eval/runtime.py`)


class BatchWorker:
    """The body of a Ray actor (plain Python: a test can drive it in-process too)."""

    def __init__(self, factory: AppFactory) -> None:
        self.app = factory()
        self.scratch = Path(tempfile.mkdtemp(prefix="retrac-batch-"))
        self.asked = 0

    def ready(self) -> bool:
        """Answers once the app is built: a worker that cannot start fails the batch before it begins."""
        return True

    def run(self, question_id: str, question: str) -> Outcome:
        """A Re-TRAC run of `question`."""
        return self._retrac(question_id, question)

    def evaluate(self, question: EvalQuestion, mode: str, rag_k: int) -> Outcome:
        """One question of an evaluation in one mode, with the runtime it was answered on (this
        worker's machine); ReAct and RAG keep no run store."""
        from retrac_local.eval.runtime import describe

        outcome = (
            self._retrac(question.id, question.question)
            if mode == "retrac"
            else self._baseline(question, mode, rag_k)
        )
        outcome.runtime = describe(self.app.settings, self.app.corpus)
        return outcome

    def _baseline(self, question: EvalQuestion, mode: str, rag_k: int) -> Outcome:
        from retrac_local.modes import baseline_runner

        started = time.perf_counter()
        try:
            result = baseline_runner(self.app, mode, rag_k)(question)
        except Exception as e:
            return Outcome(question.id, question.question, time.perf_counter() - started, error=_reason(e))
        return Outcome(
            question.id,
            question.question,
            time.perf_counter() - started,
            result=result.to_dict(with_calls=True),
        )

    def _retrac(self, question_id: str, question: str) -> Outcome:
        started = time.perf_counter()
        self.asked += 1
        path = self.scratch / f"runs-{self.asked}.sqlite"
        store = RunStore(path)
        memory = DeferredMemory(self.app.settings.memory_dir, lambda: self.app.corpus.embedder)
        self.app.runs, self.app.memory = store, memory  # the app's own stores, replaced for this question
        try:
            from retrac_local.contract.events import RunFinished

            finished = [e.result for e in self.app.ask(question) if isinstance(e, RunFinished)]
            if not finished:
                raise RetracError("the run ended without a result")
            record = read_run(store, finished[-1].run_id)
            record.remembered = memory.kept
            return Outcome(
                question_id,
                question,
                time.perf_counter() - started,
                record=record,
                result=finished[-1].to_dict(with_calls=True),
            )
        except (
            Exception
        ) as e:  # the model's server gone, a broken store, our bug: the question fails, the batch goes on
            return Outcome(question_id, question, time.perf_counter() - started, error=_reason(e))
        finally:
            store.close()
            for leftover in self.scratch.glob(path.name + "*"):  # read back whole: the driver keeps the run
                if leftover.is_dir():  # its run locks
                    shutil.rmtree(leftover, ignore_errors=True)
                else:
                    leftover.unlink(missing_ok=True)

    def close(self) -> None:
        shutil.rmtree(self.scratch, ignore_errors=True)
