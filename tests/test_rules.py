"""The rules catalogue: every code rule named, switchable and recorded when it fires."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from retrac_local.agent.loop import ResearchAgent
from retrac_local.baselines.rag import RagAnswerer
from retrac_local.cli.main import cli
from retrac_local.config import Settings, load_settings
from retrac_local.contract.events import RunFinished, RunStatus
from retrac_local.corpus.fake import MemoryCorpus
from retrac_local.errors import ConfigError
from retrac_local.eval.harness import score
from retrac_local.eval.questions import EvalQuestion
from retrac_local.llm.fake import ScriptedLLM
from retrac_local.rules.book import RuleBook, names_fired
from retrac_local.rules.catalogue import BY_NAME, RULES, STAGES
from retrac_local.rules.doc import markdown
from retrac_local.runstore import RunStore
from tests.scripts import constraints, final, finish, open_, search, update

ROOT = Path(__file__).resolve().parent.parent
Q = "In which year was the engineer who designed the Karn Point Lighthouse born?"


def script() -> list[Any]:
    """The demo's bridge question, as tests/test_loop.py's full run plays it."""
    return [
        constraints("Karn Point Lighthouse", "year"),
        open_("no-such-doc#3"),
        search(Q.lower()),  # repeats hop 0
        update(
            facts=[
                "Ada Vellacott designed the Karn Point Lighthouse",
                "Ada Vellacott was born on 3 May 1849",
            ],
            uncertainties=["is the birth year confirmed?"],
            next_plan=["check the birth year"],
        ),
        finish("1849"),
        update(answer="1849"),
        final("1849", "E2"),
    ]


def answering(messages: list[Any], schema: Any) -> Any:
    """A model that answers any call in kind, so that a run with any rule off still finishes."""
    name = getattr(schema, "__name__", "")
    if "Action" in name:
        return finish("1849")
    if name == "StateUpdate":
        return update(facts=["Ada Vellacott was born on 3 May 1849"], answer="1849")
    if name == "ConstraintsDraft":
        return constraints("Karn Point Lighthouse")
    return final("1849")


def run(settings: Settings, corpus: MemoryCorpus, llm: ScriptedLLM, disabled: list[str] = ()) -> Any:
    settings = settings.model_copy(
        update={
            "budget": settings.budget.model_copy(update={"max_steps_per_round": 4}),
            "rules": settings.rules.model_copy(update={"disabled": list(disabled)}),
        }
    )
    agent = ResearchAgent(llm, llm, corpus, settings, RunStore(settings.runs_db))
    events = list(agent.ask(Q))
    assert isinstance(events[-1], RunFinished)
    return events[-1].result


def test_the_catalogue_names_each_rule_once_with_a_stage_and_a_reason() -> None:
    assert len(BY_NAME) == len(RULES) >= 20
    for r in RULES:
        assert r.stage in STAGES and r.name.startswith(f"{r.stage}.") and len(r.description) > 30


def test_a_rule_book_refuses_unknown_names_and_a_rule_that_is_off_cannot_fire() -> None:
    with pytest.raises(ValueError, match="no rule named answer.nonsense"):
        RuleBook(["answer.nonsense"])
    book = RuleBook(["answer.shorten"], round=3)
    assert not book.on("answer.shorten") and book.on("answer.options")
    with pytest.raises(AssertionError):
        book.fired("answer.shorten", "cut")
    with pytest.raises(KeyError):
        book.on("no.such_rule")
    book.fired("answer.options", "held")
    taken = book.take()
    assert taken == [{"rule": "answer.options", "stage": "answer", "round": 3, "change": "held"}]
    assert book.take() == [] and names_fired(taken + taken) == ["answer.options"]


def test_rules_are_switched_off_by_setting_or_environment(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RETRAC_RULES__DISABLED", '["answer.shorten", "search.lead"]')
    assert load_settings().rules.disabled == ["answer.shorten", "search.lead"]
    monkeypatch.setenv("RETRAC_RULES__DISABLED", '["answer.shortn"]')
    with pytest.raises(ConfigError, match="answer.shortn"):
        load_settings()


def test_retrac_rules_lists_the_catalogue_with_what_is_switched_off(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RETRAC_RULES__DISABLED", '["status.wrong_kind"]')
    out = CliRunner().invoke(cli, ["rules", "--json"])
    assert out.exit_code == 0, out.output
    rows = json.loads(out.output)
    assert [r["name"] for r in rows] == [r.name for r in RULES]
    assert {r["name"] for r in rows if not r["enabled"]} == {"status.wrong_kind"}
    assert set(rows[0]) >= {"name", "stage", "description", "enabled"}
    text = CliRunner().invoke(cli, ["rules"]).output
    assert "OFF status.wrong_kind" in text and f"{len(RULES) - 1} of {len(RULES)} on" in text


def test_docs_rules_md_is_written_from_the_catalogue() -> None:
    assert (ROOT / "docs" / "RULES.md").read_text(encoding="utf-8") == markdown(), "run `make rules-doc`"
    assert "read English" in markdown()


def test_a_run_records_the_rules_that_fired_in_its_result_rounds_and_evaluation_row(
    settings: Settings, orrin: MemoryCorpus
) -> None:
    result = run(settings, orrin, ScriptedLLM().enqueue(*script()))
    assert result.status == RunStatus.ANSWERED and len(result.citations) == 2
    fired = result.rules_fired
    assert {"search.hop0", "search.opening", "search.no_repeat", "answer.bridge_citation"} <= set(fired)
    rounds = RunStore(settings.runs_db).rounds(result.run_id)
    in_rounds = [f["rule"] for r in rounds for f in r["stats"]["rules"]]
    assert "search.hop0" in in_rounds and "answer.bridge_citation" not in in_rounds
    assert result.to_dict()["rules_fired"] == fired
    row = score(EvalQuestion("q1", Q, ["1849"]), "retrac", result)
    assert row.rules_fired == fired and json.loads(row.line())["rules_fired"] == fired


def test_a_rule_switched_off_changes_what_it_changed_and_is_not_recorded(
    settings: Settings, orrin: MemoryCorpus
) -> None:
    result = run(settings, orrin, ScriptedLLM().enqueue(*script()), ["answer.bridge_citation"])
    assert [c.evidence_id for c in result.citations] == ["E2"]  # the hop to the lighthouse is not cited
    assert "answer.bridge_citation" not in result.rules_fired and "search.hop0" in result.rules_fired

    off = run(settings, orrin, ScriptedLLM(outputs=[answering] * 20), ["search.hop0", "search.opening"])
    assert Q not in off.searches  # round 1 starts with the planner's own step
    assert not {"search.hop0", "search.opening"} & set(off.rules_fired)


@pytest.mark.parametrize("name", [r.name for r in RULES])
def test_a_disabled_rule_never_fires(name: str, settings: Settings, orrin: MemoryCorpus) -> None:
    result = run(settings, orrin, ScriptedLLM(outputs=[answering] * 30), [name])
    assert name not in result.rules_fired


def test_with_every_rule_off_a_run_still_answers_and_fires_none(
    settings: Settings, orrin: MemoryCorpus
) -> None:
    result = run(settings, orrin, ScriptedLLM(outputs=[answering] * 30), [r.name for r in RULES])
    assert result.answer and result.rules_fired == []


def test_rag_records_the_options_rule_and_obeys_its_switch(settings: Settings, orrin: MemoryCorpus) -> None:
    question = "Which was lit first, Karn Point Lighthouse or Skerra Light?"
    held = RagAnswerer(ScriptedLLM().enqueue({"answer": "Karn Point Lighthouse"}), orrin, settings).run(
        question
    )
    assert held.rules_fired == ["answer.options"]
    free_settings = settings.model_copy(
        update={"rules": settings.rules.model_copy(update={"disabled": ["answer.options"]})}
    )
    free = RagAnswerer(ScriptedLLM().enqueue({"answer": "the Karn one"}), orrin, free_settings).run(question)
    assert free.answer == "the Karn one" and free.rules_fired == []
