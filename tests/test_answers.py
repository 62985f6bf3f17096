"""The final answer checked by code: of the kind asked, short, and claiming only what the evidence states."""

from __future__ import annotations

import pytest

from retrac_local.agent.question import parse
from retrac_local.contract.state import Evidence
from retrac_local.rules.answers import (
    fits,
    is_person,
    is_thing,
    named_spans,
    restates_question,
    shorten,
    unsupported,
    wrong_kind_question,
)


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("When was the harbour master of Port Saltry born?", "date"),
        ("In what year did the ferry first sail?", "date"),
        ("What year was the lighthouse first lit?", "date"),
        ("How many keepers served on the rock?", "number"),
        ("Was the bridge built before the railway?", "yes/no"),
        ("Are both towers painted white?", "yes/no"),
        ("Where was the engineer's mother born?", "place"),
        ("In which city did the museum open?", "place"),
        ("Who designed the tower?", "name"),
        ("Which is older, the museum or the bridge?", None),
        ("Is the museum or the bridge older?", None),
        ("What is the name of the ferry?", "named"),
        ("Which magazine printed the map first?", "named"),
        ("In which film did the keeper appear?", "named"),
        ("Describe the ferry's route.", None),
    ],
)
def test_the_kind_of_answer_is_read_from_the_question(question: str, kind: str | None) -> None:
    assert parse(question).kind == kind


def test_an_answer_of_another_kind_does_not_fit() -> None:
    assert fits("3 May 1849", "date") and fits("the 18th century", "date") and fits("spring", "date")
    assert not fits("Ada Vellacott", "date")
    assert fits("twelve", "number") and fits("12", "number") and not fits("Orley", "number")
    assert fits("yes", "yes/no") and not fits("the bridge", "yes/no")
    assert fits("Port Saltry", "place") and not fits("1849", "place")
    assert fits("anything", None)
    assert not fits("yes", "named") and not fits("No.", "named") and not fits("Yes, it is", "named")
    assert fits("No Doubt", "named") and fits("Orley Monthly", "named") and fits("the Yes album", "named")
    gap = wrong_kind_question("Which magazine printed the map first?", "yes")
    assert gap is not None and gap.startswith("The answer must be the thing it asks for, not yes or no")
    gap = wrong_kind_question("When was the engineer's mother born?", "Mara Vellacott")
    assert gap is not None and gap.startswith("The answer must be a date or year")
    assert wrong_kind_question("When was she born?", "1849") is None


def test_a_place_is_not_a_name_the_evidence_speaks_of_as_a_person() -> None:
    def quote(text: str) -> Evidence:
        return Evidence(id="E1", fact=text, source="a#0", quote=text, verified="yes")

    mother = [quote("Her mother was the weaver Ilse Varnholt, who taught her to draw.")]
    assert is_person("Ilse Varnholt", mother) and not fits("Ilse Varnholt", "place", mother)
    assert is_person("Ilse Varnholt", [quote("Ilse Varnholt was a weaver.")])
    assert is_person("Mara Quill", [quote("It was painted by Mara Quill in 1921.")])
    town = [quote("She was born in the town of Drennick in 1901."), quote("Drennick is a town on the coast.")]
    assert not is_person("Drennick", town) and fits("Drennick", "place", town)
    assert fits("Ilse Varnholt", "name", mother)  # "who" asks for a person
    gap = wrong_kind_question("Where was the painter's mother born?", "Ilse Varnholt", mother)
    assert gap is not None and gap.startswith("The answer must be a place")


def test_who_is_not_answered_by_a_place_a_building_or_a_work() -> None:
    def quote(text: str) -> Evidence:
        return Evidence(id="E1", fact=text, source="a#0", quote=text, verified="yes")

    tower = [
        quote(
            "The Karn Point Lighthouse is a granite lighthouse on the Orrin coast, designed by Vellacott & Pell."
        )
    ]
    assert is_thing("The Karn Point Lighthouse", tower) and not fits(
        "The Karn Point Lighthouse", "name", tower
    )
    assert not is_thing("Vellacott & Pell", tower) and fits("Vellacott & Pell", "name", tower)
    opera = [quote("Rio Sombre is a 1951 opera by Ilse Varnholt."), quote("Ilse Varnholt was a composer.")]
    assert is_thing("Rio Sombre", opera) and not is_thing("Ilse Varnholt", opera)
    firms = [
        quote("Harbour Pictures is an American film production company based in Orley."),
        quote("The Quills were an English folk band from Drennick."),
    ]
    assert not is_thing("Harbour Pictures", firms) and not is_thing("The Quills", firms)
    gap = wrong_kind_question(
        "Who designed the lighthouse the Orley tower is modelled on?", "The Karn Point Lighthouse", tower
    )
    assert gap is not None and gap.startswith("The answer must be the name of a person or a group")


def test_short_answers_lose_their_asides() -> None:
    assert shorten("Varnholt (19th century), also spelt Warnholt", "Who ruled the town?") == "Varnholt"
    assert shorten("Port Saltry.", "Where was she born?") == "Port Saltry"
    assert shorten("Yes, both are painted white", "Are both towers painted white?") == "yes"
    assert shorten("Ada Vellacott", "Who designed it?") == "Ada Vellacott"
    # a lead that repeats the question's subject and its verb is cut; a name the question holds is not
    assert (
        shorten(
            "Ada Vellacott designed the Karn Point Lighthouse", "Ada Vellacott designed which lighthouse?"
        )
        == "the Karn Point Lighthouse"
    )
    assert (
        shorten("Jonas Pell and Ada Vellacott", "Who worked with Jonas Pell?")
        == "Jonas Pell and Ada Vellacott"
    )
    assert (
        shorten("Ada Vellacott designed it", "Who designed it?") == "Ada Vellacott designed it"
    )  # no verb-ended lead
    # said twice by a small model, said once; a repeated word inside a name stays
    assert (
        shorten("Skerra Light Flight 9. Skerra Light Flight 9", "Which flight crashed?")
        == "Skerra Light Flight 9"
    )
    assert shorten("Sirhan Sirhan", "Who was convicted?") == "Sirhan Sirhan"


def test_a_name_asked_for_loses_the_description_before_it() -> None:
    assert shorten("Orrin harbour master Jonas Pell", "Who kept the Karn Point light?") == "Jonas Pell"
    assert shorten("the weaver Ilse Varnholt", "Who taught her to draw?") == "Ilse Varnholt"
    assert shorten("the town of Drennick", "Where was she born?") == "Drennick"
    # not a description: a name and a verb, a list of names, a name made of capitalised words
    assert shorten("Kris Quill played Jonas Pell", "Who played the keeper?") == "Kris Quill played Jonas Pell"
    assert shorten("Jonas Pell and Ada Vellacott", "Who built it?") == "Jonas Pell and Ada Vellacott"
    assert shorten("Port Saltry Harbour Board", "Who ran the ferry?") == "Port Saltry Harbour Board"
    # only for a name asked for, and never down to a name the question holds
    assert (
        shorten("the engineer Ada Vellacott", "What was the engineer's name?") == "the engineer Ada Vellacott"
    )
    assert shorten("the engineer Ada Vellacott", "Who was Ada Vellacott?") == "the engineer Ada Vellacott"


def test_an_answer_naming_what_no_evidence_states_is_caught() -> None:
    evidence = [
        Evidence(
            id="E1",
            fact="Her mother was Mara Holt",
            source="a#0",
            verified="yes",
            quote="Her mother, Mara Holt, kept the light.",
            title="Ada Vellacott",
        )
    ]
    assert unsupported("Mara Holt", evidence) == []
    assert unsupported("Mara Holt was born in the city of Orley in 1820", evidence) == ["1820", "Orley"]
    unverified = [evidence[0].model_copy(update={"verified": "no"})]
    assert unsupported("Mara Holt", unverified) == ["Mara", "Holt"]


@pytest.mark.parametrize(
    ("answer", "question", "restates"),
    [
        ("Orrin County", "At what Orrin County harbour does the ferry dock?", True),
        ("the harbours", "Which harbour of Orrin has the oldest light?", True),  # plural and article aside
        ("Saltry Harbour", "At what Orrin County harbour does the ferry dock?", False),
        ("Port Saltry", "Where was the engineer who designed Karn Point born?", False),
        # questions whose answer is rightly one of their own words: yes/no, and named options
        ("yes", "Is Karn Point in Orrin County?", False),
        ("Ada Vellacott", "Who was born first, Ada Vellacott or Jonas Pell?", False),
        ("Ada Vellacott", "Between Ada Vellacott and Jonas Pell, who was born first?", False),
        ("", "Which harbour of Orrin has the oldest light?", False),
    ],
)
def test_an_answer_made_of_the_question_s_own_words_restates_it(
    answer: str, question: str, restates: bool
) -> None:
    assert restates_question(answer, question) is restates
    gap = wrong_kind_question(question, answer)
    assert (gap is not None and "named in the question itself" in gap) is restates


def test_the_names_a_restated_answer_may_be_held_to_are_those_beyond_the_question() -> None:
    texts = [
        "Karn Point Lighthouse. The tower was designed by Ada Vellacott for the Orrin Lights Board.",
        "In 1887 Ada Vellacott's light was first lit at Karn Point, by the Lights Board of Orrin.",
    ]
    names = named_spans(texts, "Which engineer designed the Karn Point Lighthouse?")
    assert names == (
        "Ada Vellacott",
        "Orrin Lights Board",
        "Lights Board of Orrin",
    )  # "The", "In", "1887" are no names
    assert named_spans(texts, "Which engineer designed the Karn Point Lighthouse?", limit=1) == (
        "Ada Vellacott",
    )
    assert named_spans([], "Who?") == ()


def test_a_name_held_to_stops_where_a_sentence_ends_but_not_at_an_initial() -> None:
    # A title, then a quote that starts with a capital: two names, not "Karn Point Lighthouse. Ada".
    texts = ["Karn Point Lighthouse. Ada J. Vellacott designed it for the Orrin Lights Board in 1887."]
    names = named_spans(texts, "Who designed the lighthouse at Karn Point?")
    assert names == ("Ada J. Vellacott", "Orrin Lights Board")
    assert named_spans(["Drennick Abbey. Her tower fell."], "What fell?") == ("Drennick Abbey",)
