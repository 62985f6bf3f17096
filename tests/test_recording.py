"""Recorded runs played back (eval/recording.py): the same code makes the same run from a tape, and a
change of behaviour — another prompt, another answer — is named, not passed over."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from retrac_local.agent import prompts
from retrac_local.config import Settings
from retrac_local.contract.schemas import ShortAnswer
from retrac_local.corpus.embedder import HashingEmbedder, relevance_by
from retrac_local.corpus.fake import MemoryCorpus
from retrac_local.eval import recording
from retrac_local.eval.recording import differences, play, read_tapes, record
from retrac_local.eval.tapes import Tape, TapedCall, write_tape
from retrac_local.llm.fake import ScriptedLLM
from tests.scripts import constraints, final, finish, search, update

Q = "In which year was the engineer who designed the Karn Point Lighthouse born?"


def _scripted(mode: str) -> ScriptedLLM:
    if mode == "rag":
        return ScriptedLLM().enqueue(ShortAnswer(answer="1849"))
    if mode == "react":
        return ScriptedLLM().enqueue(
            search("Karn Point Lighthouse designer"), search("Ada Vellacott born"), finish("1849")
        )
    return ScriptedLLM().enqueue(
        constraints("Karn Point Lighthouse", "year"),
        finish("1849"),
        update(
            facts=[
                "Ada Vellacott designed the Karn Point Lighthouse",
                "Ada Vellacott was born on 3 May 1849",
            ],
            answer="1849",
        ),
        final("1849", "E2"),
    )


def _tape(mode: str, settings: Settings, corpus: MemoryCorpus) -> Tape:
    llm = _scripted(mode)
    tape, titles = record(Q, mode, llm, llm, corpus, settings, relevance_by(HashingEmbedder()), rag_k=2)
    assert titles == (corpus.titles() if mode == "retrac" else [])  # only Re-TRAC reads the titles
    return tape


@pytest.mark.parametrize("mode", ["retrac", "react", "rag"])
def test_a_tape_plays_back_to_the_same_run_on_the_same_code(
    mode: str, tmp_path: Path, settings: Settings, orrin: MemoryCorpus
) -> None:
    tape = _tape(mode, settings, orrin)
    assert tape.outcome["result"]["answer"] == "1849" and tape.planner.calls and tape.compressor is None
    if mode == "retrac":
        assert tape.outcome["rounds"] and tape.search and tape.relevance
    write_tape(tmp_path, f"q1-{mode}", tape, orrin.titles() if mode == "retrac" else [])
    [(name, again, titles)] = list(read_tapes(tmp_path))
    assert name == f"q1-{mode}" and titles == (orrin.titles() if mode == "retrac" else [])
    assert again == tape and play(again, titles) == []


def test_another_prompt_is_named_where_the_run_first_differs(
    tmp_path: Path, settings: Settings, orrin: MemoryCorpus, monkeypatch: pytest.MonkeyPatch
) -> None:
    tape = _tape("retrac", settings, orrin)
    render = prompts.render

    def reworded(name: str, **values: Any) -> str:
        text = render(name, **values)
        return text + "\nThink twice." if name == "planner_round" else text

    monkeypatch.setattr(prompts, "render", reworded)
    [found] = play(tape, orrin.titles())
    assert found.startswith("planner call 2: its prompt differs from the recorded one")


def test_another_outcome_is_named_by_its_path(settings: Settings, orrin: MemoryCorpus) -> None:
    tape = _tape("retrac", settings, orrin)
    tape.outcome["result"]["answer"] = "1850"
    tape.outcome["rounds"][0]["state"]["answer"] = "1850"
    found = play(tape, orrin.titles())
    assert 'result.answer: "1850" ≠ "1849"' in found and 'rounds[0].state.answer: "1850" ≠ "1849"' in found


def test_a_call_the_recorded_run_made_but_today_does_not_is_named(
    settings: Settings, orrin: MemoryCorpus
) -> None:
    tape = _tape("rag", settings, orrin)
    tape.planner.calls.append(TapedCall.model_validate(tape.planner.calls[0].model_dump()))
    assert play(tape, []) == ["planner: 1 recorded call(s) were not made"]


def test_a_question_the_collection_was_never_asked_diverges(settings: Settings, orrin: MemoryCorpus) -> None:
    tape = _tape("react", settings, orrin)
    tape.search = {}
    [found] = play(tape, [])
    assert "a search 'Karn Point Lighthouse designer'" in found and "never did" in found


def test_differences_walk_dicts_and_lists_and_stop_at_the_limit() -> None:
    assert differences({"a": [1, 2], "b": {"c": "x"}}, {"a": [1, 3], "b": {"c": "y", "d": 1}}) == [
        "a[1]: 2 ≠ 3",
        'b.c: "x" ≠ "y"',
        'b.d: "<absent>" ≠ 1',
    ]
    assert differences([1, 2], [1], path="calls") == ["calls: [1, 2] ≠ [1]"]
    assert len(differences({str(i): i for i in range(20)}, {str(i): -i - 1 for i in range(20)})) == 8
    assert recording.stable({"seconds": 1.2, "x": [{"run_id": "r", "y": 1}]}) == {"x": [{"y": 1}]}


def test_an_output_that_did_not_parse_is_taped_and_fails_again_the_same_way(
    settings: Settings, orrin: MemoryCorpus
) -> None:
    llm = ScriptedLLM().enqueue('{"tool": "sear', search("Ada Vellacott born"), finish("1849"))
    tape, _ = record(Q, "react", llm, llm, orrin, settings, None)
    assert tape.planner.calls[0].text == '{"tool": "sear' and tape.relevance is None
    assert tape.outcome["result"]["answer"] == "1849"
    assert play(tape, []) == []


def test_questions_are_taped_as_each_ends_and_a_second_sitting_continues(
    isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from retrac_local.api import Retrac
    from retrac_local.eval.questions import EvalQuestion
    from retrac_local.eval.recording import record_questions
    from tests import kill_target
    from tests.conftest import DEMO_DOCS

    class Answering(kill_target.Deterministic):  # the kill tests' model, answering the baselines too
        def _reply(self, messages: Any, schema: str) -> dict[str, Any]:
            if schema == "ShortAnswer":
                return {"answer": "1849"}
            if schema == "Action" and "Round:" not in messages[1]["content"]:  # ReAct's conversation
                return finish("1849")
            return super()._reply(messages, schema)

    monkeypatch.setattr(kill_target, "CALL_SECONDS", 0.0)
    model = Answering()
    settings = Settings(home=isolated_home, retrieval={"embedder": "hashing"})
    app = Retrac(settings, planner=model, compressor=model, embedder=HashingEmbedder())
    app.ingest([DEMO_DOCS])
    questions = [EvalQuestion("d1", Q, ["1849"])]
    out = tmp_path / "tapes"
    assert record_questions(app, questions, ["retrac", "rag"], out, log=lambda line: None) == [
        "d1-retrac",
        "d1-rag",
    ]
    assert sorted(p.name for p in out.iterdir()) == ["d1-rag.json.gz", "d1-retrac.json.gz", "titles.json.gz"]
    assert [play(tape, titles) for _, tape, titles in read_tapes(out)] == [[], []]
    assert record_questions(app, questions, ["retrac", "rag", "react"], out, log=lambda line: None) == [
        "d1-react"
    ]


def test_a_tape_recorded_before_a_setting_existed_plays_with_it_at_its_old_value(
    settings: Settings, orrin: MemoryCorpus, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Recorded without the agreement check; the setting itself absent, as in a tape older than it.
    tape = _tape("retrac", settings, orrin)
    assert tape.settings["budget"].pop("answer_samples") == 0
    monkeypatch.delenv("RETRAC_BUDGET__ANSWER_SAMPLES")  # today's default: the check on
    assert Settings().budget.answer_samples > 0
    assert play(tape, orrin.titles()) == []
    # A tape that holds the setting plays with the value it holds.
    tape.settings["budget"]["answer_samples"] = 2
    assert play(tape, orrin.titles()) != []
