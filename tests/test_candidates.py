"""Code proposes the searches, the model picks: leads from verified evidence, names in the round's
texts, the question's names, and the plan; never a search the run has made."""

from __future__ import annotations

from retrac_local.agent.candidates import Candidate, chosen, compact, leads, propose, render
from retrac_local.agent.toolbox import query_key
from retrac_local.contract.state import Evidence, ResearchState
from retrac_local.corpus.fake import MemoryCorpus

Q = "In which year was the engineer who designed the Karn Point Lighthouse born?"
FIRST_HOP = Evidence(
    id="E1",
    fact="Ada Vellacott designed it",
    source="karn-point#0",
    verified="yes",
    quote="The tower was designed by the civil engineer Ada Vellacott for the Orrin Lights Board.",
    title="Karn Point Lighthouse",
)


def test_a_lead_is_a_name_verified_evidence_states_that_no_search_covered(orrin: MemoryCorpus) -> None:
    state = ResearchState(question=Q, evidence=[FIRST_HOP])
    assert [c.query for c in leads(state, set())] == ["Ada Vellacott", "Orrin Lights Board"]
    assert leads(state, set())[0].origin == "named in E1, not searched yet"
    # A search that held the name's words covered it; evidence already about a name is no lead.
    assert [c.query for c in leads(state, {query_key("Ada Vellacott born")})] == ["Orrin Lights Board"]
    about_ada = Evidence(
        id="E2",
        fact="born 1849",
        source="ada-vellacott#0",
        verified="yes",
        quote="She was born on 3 May 1849 in Port Saltry.",
        title="Ada Vellacott",
    )
    both = state.model_copy(update={"evidence": [FIRST_HOP, about_ada]})
    assert "Ada Vellacott" not in [c.query for c in leads(both, set())]
    # Unverified evidence proposes nothing.
    unverified = state.model_copy(update={"evidence": [FIRST_HOP.model_copy(update={"verified": "no"})]})
    assert leads(unverified, set()) == []


def test_candidates_come_from_the_round_the_question_and_the_plan_and_never_repeat(
    orrin: MemoryCorpus,
) -> None:
    state = ResearchState(
        question="Who is older, Jonas Pell or Ada Vellacott?", next_plan=["Jonas Pell birth year"]
    )
    chunks = [orrin.chunks["karn-point#0"]]
    found = propose(state, set(), chunks)
    queries = [c.query for c in found]
    # Each side of the comparison first (no document about either was read), then the texts' names.
    assert queries[:3] == ["Jonas Pell", "Ada Vellacott", "Orrin Lights Board"]
    assert found[0].origin == "the question names it; no document about it read yet"
    assert "Jonas Pell birth year" in queries
    read = propose(state, set(), [*chunks, orrin.chunks["jonas-pell#0"]])
    assert [c.query for c in read][:1] == ["Ada Vellacott"]  # Jonas Pell's own document was read
    searched = {query_key("pell JONAS"), query_key("Orrin Lights Board")}
    again = [c.query for c in propose(state, searched, chunks)]
    assert "Jonas Pell" not in again and "Orrin Lights Board" not in again  # same words in any order
    assert len({query_key(q) for q in again}) == len(again)


def test_a_hit_is_shown_as_its_title_and_its_most_relevant_sentences(orrin: MemoryCorpus) -> None:
    text = compact([orrin.chunks["ada-vellacott#0"]], "Ada Vellacott born year", 'search "x" found 1:')
    assert text.splitlines()[0] == 'search "x" found 1:'
    assert "[ada-vellacott#0] Ada Vellacott: " in text and "She was born on 3 May 1849" in text
    long = MemoryCorpus().add(
        "d", "D", " ".join(f"Sentence {i} says nothing about it at all." for i in range(30))
    )
    assert len(compact(list(long.chunks.values()), "born", "h").split()) < 60  # two sentences, not the chunk


def test_the_candidates_are_numbered_for_the_planner() -> None:
    text = render(
        [Candidate("Ada Vellacott", "named in E1, not searched yet"), Candidate("Jonas Pell", "planned next")]
    )
    assert (
        "1. Ada Vellacott — named in E1, not searched yet" in text and "2. Jonas Pell — planned next" in text
    )
    assert "none left" in render([])


def test_a_free_query_that_copies_a_candidate_line_is_that_candidate() -> None:
    offered = [
        Candidate("Harbour Light", "named in Harbour Light (song)"),
        Candidate("Ray Tarn", "named in X"),
    ]
    assert chosen("Harbour Light (named in Harbour Light (song))", offered) == offered[0]
    assert chosen("ray tarn — named in X", offered) == offered[1]
    assert chosen("Harbour Light 1931 film director", offered) is None  # a query of its own
    assert chosen("Wilma Orrick", offered) is None


def test_a_capitalised_word_opening_a_sentence_is_no_candidate() -> None:
    corpus = MemoryCorpus().add("film", "The Harbour Light", "Produced by Ray Tarn, it starred Mara Quill.")
    queries = [
        c.query
        for c in propose(
            ResearchState(question="Who produced the film?"), set(), list(corpus.chunks.values())
        )
    ]
    assert "Produced" not in queries and "Ray Tarn" in queries and "Mara Quill" in queries


def test_names_from_the_sentence_nearest_the_question_come_first() -> None:
    corpus = (
        MemoryCorpus()
        .add("isle", "Hesk Island", "Hesk Island lies north of the Orrin Isles and has a ferry to Brannock.")
        .add("karn", "Karn Point Lighthouse", "The tower was designed by the civil engineer Ada Vellacott.")
    )
    q = "In which year was the engineer who designed the Karn Point Lighthouse born?"
    queries = [c.query for c in propose(ResearchState(question=q), set(), list(corpus.chunks.values()))]
    assert queries[0] == "Ada Vellacott" and queries.index("Ada Vellacott") < queries.index("Orrin Isles")


def test_names_of_several_words_come_before_single_words_and_leads_before_both(orrin: MemoryCorpus) -> None:
    state = ResearchState(question="Which German engineer designed the Tessel Harbour Bridge in Paris?")
    queries = [c.query for c in propose(state, {query_key(state.question)}, [])]
    assert queries[0] == "Tessel Harbour Bridge"  # the question's names survive its own search (hop 0)
    assert queries.index("Tessel Harbour Bridge") < queries.index("Paris")
    # A lead from verified evidence stays first, one word or not.
    calder = Evidence(
        id="E1",
        fact="the bridge was built by Calder",
        source="tessel#0",
        verified="yes",
        quote="The Tessel Harbour Bridge was built by Calder for the port.",
        title="Tessel Harbour Bridge",
    )
    with_lead = state.model_copy(update={"evidence": [calder]})
    assert [c.query for c in propose(with_lead, {query_key(state.question)}, [])][0] == "Calder"


def test_a_name_a_search_already_held_is_not_offered_again(orrin: MemoryCorpus) -> None:
    state = ResearchState(question="Who is older, Jonas Pell or Ada Vellacott?")
    made = {query_key(state.question), query_key("Ada Lucia Vellacott")}
    queries = [c.query for c in propose(state, made, [])]
    assert "Ada Vellacott" not in queries and "Jonas Pell" in queries


def test_a_plan_that_is_a_pasted_tool_output_is_not_offered_as_a_search() -> None:
    pasted = "search 'pump seals' → manual#4, manual#9, notes#0, manual#12"
    long = "find out which of the many engineers who worked on the harbour designed the light and when it was lit"
    state = ResearchState(
        question="Who designed the Karn Point Lighthouse?",
        next_plan=[pasted, long, "Karn Point designer"],
        uncertainties=[pasted],
    )
    queries = [c.query for c in propose(state, {query_key(state.question)}, [])]
    assert "Karn Point designer" in queries and pasted not in queries and long not in queries
