"""Questions that name their options ("…, A or B?") hold every mode's final answer to one of them."""

from __future__ import annotations

import pytest

from retrac_local.agent.loop import ResearchAgent
from retrac_local.agent.question import parse
from retrac_local.baselines.rag import RagAnswerer
from retrac_local.baselines.react import ReactAgent
from retrac_local.config import Settings
from retrac_local.contract.schemas import FinalAnswer, ShortAnswer
from retrac_local.corpus.fake import MemoryCorpus
from retrac_local.errors import StructuredOutputError
from retrac_local.llm.base import Generation, Usage, parse_structured
from retrac_local.llm.fake import ScriptedLLM
from retrac_local.rules.choices import held_to, pick
from retrac_local.runstore import RunStore
from tests.scripts import constraints, final, finish, search, update

CHOICE_Q = "Who was born first, Ada Vellacott or Jonas Pell?"


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Which is a kind of fern, Orrinwort or Heskleaf?", ("Orrinwort", "Heskleaf")),
        ("Who was born first Tomas Irvane or Mara Quill?", ("Tomas Irvane", "Mara Quill")),
        (
            "Which documentary Tide Tables or The Keeper of Lights was produced first ?",
            ("Tide Tables", "The Keeper of Lights"),
        ),
        (
            "Which is located farther West, the Saltry Locks and Canal or Hesk Sound Lagoon?",
            ("the Saltry Locks and Canal", "Hesk Sound Lagoon"),
        ),
        (
            "Which movie was released first, 'Harbour Light' or the remake of 'Keeper's Night'?",
            ("Harbour Light", "the remake of 'Keeper's Night"),
        ),
        (
            "Which musician or band is from further north, Tomas Irvane or Gull Quartet?",
            ("Tomas Irvane", "Gull Quartet"),
        ),
        (
            "Is the Orrinia or the Heskia the genus of more individual species of plants?",
            ("Orrinia", "Heskia"),
        ),
        (
            "Which battle, the Battle of Karn Point, or the Second Battle of Hesk Sound, was fought first?",
            ("Battle of Karn Point", "Second Battle of Hesk Sound"),
        ),
        # no options: yes/no questions, lower-case alternatives, no "or"
        ("Do both Harbour Weekly and Keepers' Life have a headquarter or editor based in Orrin?", ()),
        ("Are Ada Vellacott and Jonas Pell democratic or republican?", ()),
        ("Between Ada Vellacott and Jonas Pell who was born earlier?", ("Ada Vellacott", "Jonas Pell")),
        (
            "Between Harbour Light and Keeper's Night, which film has more scenes?",
            ("Harbour Light", "Keeper's Night"),
        ),
        # "between" without two named options: a second "and" (where to split is a guess), dates, "what"
        ("Between Orrin and Hesk and Karn, which town is oldest?", ()),
        ("Between 1990 and 2000, which team won the most titles?", ()),
        ("Between Orrin and Hesk, what is the distance by sea?", ()),
        ("Which lighthouse or beacon is the oldest?", ()),
    ],
)
def test_the_options_a_question_names_are_found_by_rules(question: str, expected: tuple[str, ...]) -> None:
    assert parse(question).options == expected


def test_a_free_answer_that_names_one_option_becomes_that_option() -> None:
    choices = ("Orrinwort", "Heskleaf")
    assert pick("Heskleaf, a genus of ferns", choices) == "Heskleaf"
    assert pick("fern", choices) == "fern"  # names neither: left as it is, and scored as it is
    assert pick("Orrinwort and Heskleaf", choices) == "Orrinwort and Heskleaf"
    assert pick(None, choices) is None and pick("x", ()) == "x"


def test_the_held_schema_refuses_an_answer_that_is_not_an_option() -> None:
    schema = held_to(ShortAnswer, ("Orrinwort", "Heskleaf"))
    assert schema.model_json_schema()["properties"]["answer"]["enum"] == ["Orrinwort", "Heskleaf"]
    usage = Usage(prompt_tokens=1, completion_tokens=1)
    assert (
        parse_structured(Generation('{"answer": "Heskleaf"}', "stop", usage, None), schema).answer
        == "Heskleaf"
    )
    with pytest.raises(StructuredOutputError):
        parse_structured(Generation('{"answer": "fern"}', "stop", usage, None), schema)
    assert held_to(ShortAnswer, ()) is ShortAnswer


def _answer_enum(llm: ScriptedLLM) -> list[str]:
    schema = llm.calls[-1].schema
    assert schema is not None
    return schema.model_json_schema()["properties"]["answer"]["enum"]


def test_every_mode_holds_its_final_answer_to_the_options(settings: Settings, orrin: MemoryCorpus) -> None:
    expected = ["Ada Vellacott", "Jonas Pell"]
    rag = ScriptedLLM().enqueue(ShortAnswer(answer="Ada Vellacott"))
    assert RagAnswerer(rag, orrin, settings, k=2).run(CHOICE_Q).answer == "Ada Vellacott"
    assert _answer_enum(rag) == expected

    budget = settings.budget.model_copy(update={"max_rounds": 1, "max_steps_per_round": 1})
    react = ScriptedLLM().enqueue(search("Ada Vellacott born"), ShortAnswer(answer="Jonas Pell"))
    assert (
        ReactAgent(react, orrin, settings.model_copy(update={"budget": budget})).run(CHOICE_Q).answer
        == "Jonas Pell"
    )
    assert _answer_enum(react) == expected
    # ReAct's own finish is free text: an answer naming one option is that option
    react = ScriptedLLM().enqueue(finish("Ada Vellacott, born 1849"))
    assert ReactAgent(react, orrin, settings).run(CHOICE_Q).answer == "Ada Vellacott"

    retrac = ScriptedLLM().enqueue(
        constraints(),  # one tool call: the question, searched by code
        update(facts=["Ada Vellacott was born on 3 May 1849"], answer="Ada Vellacott"),
        final("Ada Vellacott", "E1"),
    )
    agent = ResearchAgent(
        retrac, retrac, orrin, settings.model_copy(update={"budget": budget}), RunStore(settings.runs_db)
    )
    # (who was born first is decided by code from the dates, with no final call: test_datecompare)
    result = [e for e in agent.ask("Who designed more lighthouses, Ada Vellacott or Jonas Pell?")][-1].result
    assert result.answer == "Ada Vellacott" and _answer_enum(retrac) == expected
    assert issubclass(retrac.calls[-1].schema, FinalAnswer)
