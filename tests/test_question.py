"""The question, parsed once: every shape the stages read, on synthetic questions."""

from __future__ import annotations

import pytest

from retrac_local.agent.question import parse
from retrac_local.contract.state import ResearchState


@pytest.mark.parametrize(
    ("text", "kind", "options", "comparison", "number", "two"),
    [
        ("When was the Karn Point Lighthouse first lit?", "date", (), None, True, False),
        ("How many keepers served at Skerra Light?", "number", (), None, True, False),
        ("Was Ada Vellacott an engineer?", "yes/no", (), None, False, False),
        ("Where was Ada Vellacott born?", "place", (), None, False, False),
        ("Who designed the Karn Point Lighthouse?", "name", (), None, False, False),
        ("Which board commissioned the Karn Point Lighthouse?", "named", (), None, False, False),
        (
            "Who was born first, Ada Vellacott or Jonas Pell?",
            None,
            ("Ada Vellacott", "Jonas Pell"),
            ("earliest", "birth"),
            False,
            False,
        ),
        (
            "Which was founded later, the Orrin Lights Board or Hesk Shipping?",
            None,
            ("the Orrin Lights Board", "Hesk Shipping"),
            ("latest", "founded"),
            False,
            False,
        ),
        (
            "Between Ada Vellacott and Jonas Pell, who died earlier?",
            None,
            ("Ada Vellacott", "Jonas Pell"),
            ("earliest", "death"),
            False,
            False,
        ),
        (
            "Which is taller, Karn Point Lighthouse or Skerra Light?",
            None,
            ("Karn Point Lighthouse", "Skerra Light"),
            None,
            False,
            False,
        ),
        ("When was the tower built and who designed it?", "date", (), None, True, True),
        ("What does the flag do, and what is its default?", "named", (), None, False, True),
        ("Quand le phare a-t-il été allumé ?", None, (), None, False, False),
    ],
)
def test_each_shape_of_question_is_parsed_once_into_what_the_stages_read(
    text: str,
    kind: str | None,
    options: tuple[str, ...],
    comparison: tuple[str, str] | None,
    number: bool,
    two: bool,
) -> None:
    q = parse(text)
    assert (q.kind, q.options, q.comparison, q.asks_number, q.asks_two) == (
        kind,
        options,
        comparison,
        number,
        two,
    )


def test_the_names_a_question_mentions_and_the_state_carries_it() -> None:
    q = parse("In which year was the engineer who designed the Karn Point Lighthouse born?")
    assert q.names == ("Karn Point Lighthouse",) and q.kind == "date" and q.asks_number
    state = ResearchState(question=q.text)
    assert state.asked is q  # parsed once: the same object every stage reads
    assert q.to_dict()["names"] == ("Karn Point Lighthouse",)
    assert "asked" not in state.model_dump()  # the state's stored form is the question's text alone


@pytest.mark.parametrize(
    ("text", "options"),
    [
        # a title holding a comma, on either side of "or"
        ("Which film came out first, Harbour Lights or Hello, Dolly?", ("Harbour Lights", "Hello, Dolly")),
        ("Which film came out first, Hello, Dolly or Harbour Lights?", ("Hello, Dolly", "Harbour Lights")),
        # a lower-case aside after the options is not part of them
        (
            "Which is older, Karn Point Lighthouse or Skerra Light, according to the board?",
            ("Karn Point Lighthouse", "Skerra Light"),
        ),
    ],
)
def test_an_option_runs_on_through_a_comma_inside_a_name(text: str, options: tuple[str, ...]) -> None:
    assert parse(text).options == options
