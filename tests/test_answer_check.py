"""The answer check (`budget.check_answer`): after the final answer the planner is shown the cited
quotes alone and asked whether they state it; a "no" makes the run say the answer was not found,
unsure, while the answer text stays the best guess."""

from __future__ import annotations

import pytest

from retrac_local.config import Settings
from retrac_local.contract.events import RunStatus
from retrac_local.corpus.fake import MemoryCorpus
from retrac_local.eval.hidden import says_not_found
from retrac_local.eval.rows import EvalRow
from retrac_local.llm.fake import ScriptedLLM
from tests.scripts import constraints, final, finish, update
from tests.test_loop import ROUND_1, UPDATE_1, Q, make_agent, run


def answered_run(*after: object) -> ScriptedLLM:
    """The scripted run that ends answered "1849", then `after`: the replies to the checks."""
    return ScriptedLLM().enqueue(
        constraints("Karn Point Lighthouse", "year"),
        *ROUND_1,
        UPDATE_1,
        finish("1849"),
        update(answer="1849"),
        final("1849", "E2"),
        *after,
    )


def test_a_yes_keeps_the_answer_answered(settings: Settings, orrin: MemoryCorpus) -> None:
    llm = answered_run({"verdict": "yes"})
    _, result = run(make_agent(settings, orrin, llm, check_answer=True))
    assert result.status == RunStatus.ANSWERED and result.answer == "1849" and result.caveat is None
    shown = llm.calls[-1].messages[-1]["content"]
    assert "Proposed answer: 1849" in shown and Q in shown
    # The check reads the cited quotes alone, each with its document's title: the one that states
    # the answer, then the hop that ties it to what the question names.
    assert [c.evidence_id for c in result.citations] == ["E2", "E1"]
    assert shown.index(f'[E2] (Ada Vellacott) "{result.citations[0].quote}"') < shown.index(
        f'[E1] (Karn Point Lighthouse) "{result.citations[1].quote}"'
    )


def test_a_no_says_not_found_and_keeps_the_best_guess(settings: Settings, orrin: MemoryCorpus) -> None:
    _, result = run(make_agent(settings, orrin, answered_run({"verdict": "no"}), check_answer=True))
    assert result.status == RunStatus.UNSURE and result.answer == "1849"
    assert result.caveat is not None and result.caveat.startswith("not found in the collection")
    assert result.citations  # what was read is still shown
    row = EvalRow.model_validate(
        {
            "id": "q",
            "mode": "retrac",
            "question": Q,
            "gold": ["1849"],
            "answer": result.answer,
            "status": str(result.status),
            "caveat": result.caveat,
            "em": 1,
            "f1": 1.0,
            "seconds": 1.0,
        }
    )
    assert says_not_found(row)


@pytest.mark.parametrize("reply", ['{"verdict": "maybe"}', "not json"])
def test_an_invalid_reply_leaves_the_status_as_it_was(
    settings: Settings, orrin: MemoryCorpus, reply: str
) -> None:
    _, result = run(make_agent(settings, orrin, answered_run(reply), check_answer=True))
    assert result.status == RunStatus.ANSWERED and result.caveat is None


def test_off_by_default_no_call_is_made(settings: Settings, orrin: MemoryCorpus) -> None:
    assert Settings().budget.check_answer is False
    llm = answered_run()
    _, result = run(make_agent(settings, orrin, llm))
    assert result.status == RunStatus.ANSWERED and not llm.outputs
    assert all(c.schema is None or c.schema.__name__ != "AnswerCheck" for c in llm.calls)


def test_no_check_when_the_run_would_not_be_answered_anyway(settings: Settings, orrin: MemoryCorpus) -> None:
    # Stopped by the round budget: budget-exhausted whatever the check would say, so no call is made.
    llm = ScriptedLLM().enqueue(
        constraints("Karn Point Lighthouse", "year"), *ROUND_1, UPDATE_1, final("1849", "E2")
    )
    _, result = run(make_agent(settings, orrin, llm, check_answer=True, max_rounds=1))
    assert result.status == RunStatus.BUDGET_EXHAUSTED and result.answer == "1849"
    assert all(c.schema is None or c.schema.__name__ != "AnswerCheck" for c in llm.calls)
