"""The modes an evaluation or a batch compares, and how a baseline answers one question: used alike
by `eval/` and `batch/` (neither imports the other for it)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from retrac_local.contract.events import RunResult
    from retrac_local.eval.questions import EvalQuestion

MODES = ("retrac", "react", "rag")
Runner = Callable[["EvalQuestion"], "RunResult"]


def baseline_runner(app: Any, mode: str, rag_k: int) -> Runner:
    """ReAct or RAG on the app's planner, tools and corpus (they keep no run store)."""
    from retrac_local.baselines.rag import RagAnswerer
    from retrac_local.baselines.react import ReactAgent

    planner, _ = app.llms()
    if mode == "react":
        return lambda q: ReactAgent(planner, app.corpus, app.settings).run(q.question)
    if mode == "rag":
        return lambda q: RagAnswerer(planner, app.corpus, app.settings, k=rag_k).run(q.question)
    raise ValueError(f"no baseline mode {mode!r}")
