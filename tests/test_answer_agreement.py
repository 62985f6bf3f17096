"""The agreement check (`budget.answer_samples`): after the final answer the planner answers the
question again from the cited quotes alone, once greedily and a few times sampled; when too few of
those answers name the run's answer, the run is unsure, its answer kept as the best guess."""

from __future__ import annotations

import pytest

from retrac_local.agent import answercheck
from retrac_local.agent.answercheck import NOT_STATED, agreement, doubt, reanswers, same_answer
from retrac_local.config import Settings
from retrac_local.contract.events import Citation, RunStatus
from retrac_local.corpus.fake import MemoryCorpus
from retrac_local.llm.fake import ScriptedLLM
from tests.scripts import constraints, final, finish, update
from tests.test_loop import ROUND_1, UPDATE_1, make_agent, run


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


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("Japan, Hong Kong", "Hong Kong and Japan", True),
        ("the Naval Weapons Station Yorktown", "Naval Weapons Station Yorktown", True),
        ("Ada Vellacott", "ada  vellacott", True),
        ("3 May 1849", "1849", True),  # the year is half of the date: the same answer, less precise
        ("Japan", "Japan and Hong Kong", False),  # one of two is not the answer
        ("Ada Vellacott", "Jonas Pell", False),
        ("yes", "no", False),
        ("yes", "Yes", True),
        ("no", "no, it is not", False),  # yes/no only as a whole answer
        ("not stated", "Ada Vellacott", False),
        ("", "Ada Vellacott", False),
    ],
)
def test_same_answer(a: str, b: str, same: bool) -> None:
    assert same_answer(a, b) is same and same_answer(b, a) is same


def _citation(evidence_id: str, title: str, quote: str) -> Citation:
    return Citation(evidence_id, title.lower(), f"{title.lower()}#0", title, "doc", quote, "yes")


CITED = [_citation("E2", "Ada Vellacott", "Ada Vellacott was born on 3 May 1849.")]


def test_reanswers_greedy_first_then_sampled_from_the_quotes_alone() -> None:
    llm = ScriptedLLM().enqueue(
        {"answer": "1849"}, {"answer": " 3 May 1849 "}, "not json", {"answer": "not stated"}
    )
    again = reanswers(
        llm, "system", "When was Ada Vellacott born?", "1849", CITED, samples=3, temperature=0.9
    )
    assert again == ["1849", "3 May 1849", "not stated"]  # the invalid reply is left out
    assert [c.temperature for c in llm.calls] == [0.0, 0.9, 0.9, 0.9]
    shown = llm.calls[0].messages[-1]["content"]
    assert '[E2] (Ada Vellacott) "Ada Vellacott was born on 3 May 1849."' in shown
    assert "When was Ada Vellacott born?" in shown and "Proposed answer" not in shown  # not shown the answer
    assert agreement("3 May 1849", again) == pytest.approx(2 / 3)


def test_reanswers_of_an_either_or_question_are_held_to_its_options_or_not_stated() -> None:
    llm = ScriptedLLM().enqueue({"answer": "Skerra Light"})
    reanswers(
        llm,
        "system",
        "Which is taller, Karn Point or Skerra Light?",
        "Karn Point",
        CITED,
        ("Karn Point", "Skerra Light"),
        0,
    )
    schema = llm.calls[0].schema
    assert schema is not None
    assert schema.model_json_schema()["properties"]["answer"]["enum"] == [
        "Karn Point",
        "Skerra Light",
        NOT_STATED,
    ]


def test_reanswers_of_a_yes_no_question_are_yes_no_or_not_stated() -> None:
    # Asked yes or no, or answered yes or no where the rules cannot tell the question's kind.
    for question, answer in [
        ("Are both Karn Point and Skerra Light lighthouses?", "no"),
        ("Do both Karn Point and Skerra Light have a keeper or a foghorn?", "Yes"),
    ]:
        llm = ScriptedLLM().enqueue({"answer": "no"})
        assert reanswers(llm, "system", question, answer, CITED, samples=0) == ["no"]
        schema = llm.calls[0].schema
        assert schema is not None
        assert schema.model_json_schema()["properties"]["answer"]["enum"] == ["yes", "no", NOT_STATED]


def test_no_citation_no_call() -> None:
    llm = ScriptedLLM()
    assert reanswers(llm, "system", "When?", "1849", []) == [] and not llm.calls
    assert agreement("1849", []) is None and doubt("1849", [], 0.6) is None


def test_doubt_says_why() -> None:
    assert doubt("1849", ["1849", "1849", "1856"], 0.6) is None
    # Most tries find no answer in the quotes: not found in the collection.
    assert doubt("1849", ["1849", "not stated", "not stated"], 0.6) == answercheck.not_found("1849")
    # Most tries name something else: which, and how often the answer came back.
    assert doubt("Jonas Pell", ["Ada Vellacott", "Ada Vellacott", "Jonas Pell", "not stated"], 0.6) == (
        'the cited quotes, read again alone, give this answer in 1 of 4 tries; read alone, they answer "Ada Vellacott"'
    )


def test_an_answer_given_again_stays_answered(settings: Settings, orrin: MemoryCorpus) -> None:
    llm = answered_run({"answer": "1849"}, {"answer": "1849"}, {"answer": "not stated"})
    _, result = run(make_agent(settings, orrin, llm, answer_samples=2, answer_agreement=0.6))
    assert result.status == RunStatus.ANSWERED and result.caveat is None and not llm.outputs
    # It reads the cited quotes: the one that states the answer and the hop to the lighthouse.
    shown = llm.calls[-1].messages[-1]["content"]
    assert all(f'"{c.quote}"' in shown for c in result.citations) and len(result.citations) == 2


def test_an_answer_not_given_again_is_unsure_and_kept_as_best_guess(
    settings: Settings, orrin: MemoryCorpus
) -> None:
    llm = answered_run({"answer": "1849"}, {"answer": "not stated"}, {"answer": "not stated"})
    _, result = run(make_agent(settings, orrin, llm, answer_samples=2, answer_agreement=0.6))
    assert result.status == RunStatus.UNSURE and result.answer == "1849"
    assert result.caveat == answercheck.not_found("1849") and result.citations


def test_off_when_no_samples_are_asked(settings: Settings, orrin: MemoryCorpus) -> None:
    llm = answered_run()
    _, result = run(make_agent(settings, orrin, llm, answer_samples=0))
    assert result.status == RunStatus.ANSWERED and not llm.outputs
    assert all(c.schema is None or c.schema.__name__ != "Reanswer" for c in llm.calls)


def test_on_by_default_with_a_majority_of_five(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RETRAC_BUDGET__ANSWER_SAMPLES")  # the fast tier's own setting (conftest)
    budget = Settings().budget
    assert budget.answer_samples == 4 and budget.answer_agreement == 0.6
