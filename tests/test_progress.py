"""A run's progress is rebuilt from its stored rounds the same way it starts: from nothing."""

from retrac_local.agent.progress import RunProgress
from retrac_local.contract.events import RoundEnd, StopReason
from retrac_local.contract.tools import SearchArgs
from retrac_local.corpus.fake import MemoryCorpus


def _round(steps: list[dict], **stats: object) -> dict:
    return {"trajectory": {"steps": steps}, "stats": dict(stats)}


def _corpus() -> MemoryCorpus:
    c = MemoryCorpus()
    for i in range(6):
        c.add(f"mill-{i}", f"Mill {i}", f"Windmill number {i} grinds corn by the river.")
    return c


def test_a_new_run_has_done_nothing(settings) -> None:
    progress = RunProgress.of(_corpus(), settings, [])
    assert (progress.tool_calls, progress.slots_used, progress.seen_chunks) == (0, 0, set())
    assert progress.toolbox.pages == {}


def test_stored_rounds_give_back_the_counts_the_searches_and_the_chunks_seen(settings) -> None:
    rounds = [
        _round(
            [
                {"tool": "search", "argument": "windmill river", "chunk_ids": ["mill-0#0", "mill-1#0"]},
                {"tool": "invalid", "argument": ""},  # not a tool call
                {"tool": "open", "argument": "mill-1#0", "chunk_ids": ["mill-1#0"]},
            ],
            slots=2,  # a carried round spent two slots
        ),
        _round([{"tool": "finish", "argument": "corn", "chunk_ids": []}]),  # no slots stat: one
    ]
    progress = RunProgress.of(_corpus(), settings, rounds)
    assert progress.tool_calls == 2 and progress.slots_used == 3
    assert progress.seen_chunks == {"mill-0#0", "mill-1#0"}
    again = progress.toolbox.use(SearchArgs(tool="search", query="River windmill"))
    assert "it was made before" in again.text  # the stored search, made again, shows its next page


def test_only_a_budget_makes_a_budget_stop_and_only_an_answer_may_end_answered() -> None:
    assert {r for r in StopReason if r.budget} == {
        StopReason.BUDGET_ROUNDS,
        StopReason.BUDGET_TIME,
        StopReason.BUDGET_TOKENS,
        StopReason.BUDGET_STEPS,
    }
    assert {r for r in StopReason if r.finished} == {
        StopReason.ANSWERED,
        StopReason.PLANNER_FINISHED,
        StopReason.FIRST_READING,
    }
    assert StopReason("saturated") is StopReason.SATURATED and f"{RoundEnd.STEPS}" == "steps"
