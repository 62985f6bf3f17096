from retrac_local.agent.verify import (
    missing_names,
    missing_numbers,
    normalise,
    quote_in,
    support,
    support_level,
    unfaithful,
)


def test_quotes_match_after_whitespace_and_typography() -> None:
    source = "She was born on\n3 May 1849 in \u201cPort Saltry\u201d."
    assert quote_in('born on 3 May 1849 in "Port Saltry"', source)
    assert not quote_in("born on 3 May 1848", source)
    assert normalise("a \t b\u00a0c") == "a b c"


def test_numbers_and_names_must_occur_in_the_source() -> None:
    source = "The team counted 4,812 breeding pairs, led by Dr. Lina Farrow."
    assert missing_numbers("4812 pairs", source) == []
    assert missing_numbers("4,813 pairs", source) == ["4,813"]
    assert missing_names("The count was led by Lina Farrow", source) == []
    assert missing_names("The count was led by Jonas Pell", source) == ["Jonas", "Pell"]


def test_a_name_that_starts_the_fact_must_occur_in_the_source_too() -> None:
    source = "Tomas Irvane: In 1995 he remixed the song Harbour Light with Mara Quill."
    assert missing_names("Ada Vellacott remixed Harbour Light with Tomas Irvane", source) == [
        "Ada",
        "Vellacott",
    ]
    assert missing_names("Mara Quill remixed Harbour Light", source) == []
    # a common word may start a sentence without being a name
    for fact in (
        "The song Harbour Light was remixed",
        "Born in 1995, the remix",
        "Originally the song was slow",
        "In 1995 Tomas Irvane remixed it",
        "Following the remix, Mara Quill sang",
    ):
        assert missing_names(fact, source) == [], fact


def test_support_grades_facts_against_quotes() -> None:
    quote = "The tower was designed by the civil engineer Ada Vellacott for the Orrin Lights Board."
    assert (
        support_level(
            support("Ada Vellacott designed the Karn Point Lighthouse", quote, "Karn Point Lighthouse")
        )
        == "yes"
    )
    assert (
        support_level(
            support("Jonas Pell designed the Karn Point Lighthouse", quote, "Karn Point Lighthouse")
        )
        is None
    )
    assert support_level(support("The tower was designed in 1890", quote)) is None


def test_a_fact_must_state_something_of_what_its_sentence_speaks_of() -> None:
    quote = "Ilse Varnholt's strong political activism lasted through the mid-1970s."
    title = "Rio Sombre (opera)"
    # the words of the sentence, spliced onto a subject it never speaks of
    assert unfaithful("The composer of Rio Sombre is Ilse Varnholt's strong political activism", quote, title)
    assert (
        support("The composer of Rio Sombre is Ilse Varnholt's strong political activism", quote, title)
        == 0.0
    )
    # what the sentence does say, in other words, is kept
    assert unfaithful("Ilse Varnholt's political activism lasted through the mid-1970s", quote, title) is None
    assert (
        unfaithful(
            "The director of Rio Sombre was Ilse Varnholt", "Rio Sombre was directed by Ilse Varnholt.", title
        )
        is None
    )  # "directed" speaks of a director
    assert unfaithful("She was an activist", quote, title) is None  # a pronoun is no subject to find


def test_a_question_or_a_bare_title_is_not_a_fact() -> None:
    quote = "Harbour Light is a 1995 song by Mara Quill."
    assert unfaithful("Harbour Light was released on what date?", quote, "Harbour Light (song)")
    assert unfaithful("Harbour Light (song)", quote, "Harbour Light (song)")
    assert support("Harbour Light (song)", quote, "Harbour Light (song)") == 0.0
    assert unfaithful("Harbour Light is a song by Mara Quill", quote, "Harbour Light (song)") is None
