"""The compression rules that code enforces, whatever the model writes."""

from __future__ import annotations

from retrac_local.agent.compress import (
    add_anchor,
    add_answer_quote,
    apply_update,
    bound_size,
    compress,
    flag_unconnected,
)
from retrac_local.agent.trajectory import RoundRecord, Sentence, Step, render_for_compression
from retrac_local.contract.schemas import StateUpdate
from retrac_local.contract.state import Conclusion, Evidence, ResearchState
from retrac_local.corpus.base import Chunk
from retrac_local.corpus.fake import MemoryCorpus
from retrac_local.llm.fake import ScriptedLLM
from retrac_local.rules.book import RuleBook
from tests.scripts import update

Q = "In which year was the engineer who designed the Karn Point Lighthouse born?"


def chunk(doc: str, title: str, text: str) -> Chunk:
    return Chunk(f"{doc}#0", doc, title, f"{doc}.md", 0, 0, len(text), text)


ADA = chunk("ada", "Ada Vellacott", "She was born on 3 May 1849 in Port Saltry.")
KARN = chunk("karn", "Karn Point Lighthouse", "The tower was designed by the civil engineer Ada Vellacott.")
SENTENCES = [Sentence(KARN, KARN.text), Sentence(ADA, ADA.text)]


def state(**kw) -> ResearchState:
    return ResearchState(question=Q, constraints=["Karn Point Lighthouse"], **kw)


def apply(prev: ResearchState, **kw):
    return apply_update(
        prev, StateUpdate.model_validate(update(**kw)), SENTENCES, prev.iteration + 1, [], RuleBook()
    )


def test_facts_are_grounded_in_the_sentence_that_states_them() -> None:
    new, problems = apply(
        state(), facts=["Ada Vellacott was born on 3 May 1849", "Ada Vellacott designed the tower"]
    )
    assert problems == []
    born, designed = new.evidence
    assert (born.source, born.quote, born.verified) == ("ada#0", ADA.text, "yes")
    assert (designed.source, designed.quote) == ("karn#0", KARN.text)
    assert [e.id for e in new.evidence] == ["E1", "E2"] and new.iteration == 1


def test_invented_names_and_changed_numbers_are_rejected() -> None:
    new, problems = apply(
        state(), facts=["Jonas Pell designed the tower", "Ada Vellacott was born on 3 May 1848"]
    )
    assert new.evidence == []
    assert len(problems) == 2 and all("no sentence found" in p for p in problems)


def test_a_bare_title_as_a_fact_becomes_that_documents_statement() -> None:
    opera = chunk("rio", "Rio Sombre (opera)", "Rio Sombre is an opera in four acts by Ilse Varnholt.")
    heading = chunk("rio-h", "Rio Sombre (opera)", "Rio Sombre (opera)")
    sentences = [*SENTENCES, Sentence(heading, heading.text), Sentence(opera, opera.text)]
    titled = StateUpdate.model_validate(update(facts=["Rio Sombre (opera)"]))
    new, problems = apply_update(state(), titled, sentences, 1, [], RuleBook())
    assert problems == []
    (fact,) = new.evidence
    assert (fact.fact, fact.quote, fact.source, fact.verified) == (opera.text, opera.text, "rio#0", "yes")
    # a title no sentence of the round belongs to states nothing: rejected, as before
    new, problems = apply_update(
        state(), StateUpdate.model_validate(update(facts=["Drennick Abbey"])), sentences, 1, [], RuleBook()
    )
    assert new.evidence == [] and len(problems) == 1


def test_a_fact_the_state_already_holds_is_not_asked_for_again() -> None:
    first, _ = apply(state(), facts=["Ada Vellacott was born on 3 May 1849"])
    later = [Sentence(KARN, KARN.text)]  # a later round: the birth sentence is not among its texts
    restated = "Ada Vellacott was born on 3 May 1849, while the tower was designed by the civil engineer Ada Vellacott"
    for facts, sources in (
        (["Ada Vellacott was born on 3 May 1849"], ["ada#0"]),
        ([restated], ["ada#0", "karn#0"]),
    ):
        new, problems = apply_update(
            first, StateUpdate.model_validate(update(facts=facts)), later, 2, [], RuleBook()
        )
        assert problems == []  # no retry for a restatement; the new part of a compound fact is added
        assert [e.source for e in new.evidence] == sources
    new, problems = apply_update(
        first,
        StateUpdate.model_validate(update(facts=["Ada Vellacott was born in 1848"])),
        later,
        2,
        [],
        RuleBook(),
    )
    assert "no sentence found" in problems[0] and len(new.evidence) == 1  # a changed number is still refused


def test_question_and_constraints_are_copied_not_regenerated() -> None:
    new, _ = apply(state(), facts=["Ada Vellacott was born in 1849"], answer="1849")
    assert new.question == Q and new.constraints == ["Karn Point Lighthouse"] and new.answer == "1849"


def test_duplicate_evidence_is_merged() -> None:
    first, _ = apply(state(), facts=["Ada Vellacott was born in 1849"])
    second, _ = apply(first, facts=["Ada Vellacott was born on 3 May 1849 in Port Saltry"])
    assert len(second.evidence) == 1


def test_verified_evidence_dropped_without_new_evidence_is_restored() -> None:
    prev = state(
        evidence=[Evidence(id="E1", fact="born 1849", source="ada#0", quote=ADA.text, verified="yes")],
        iteration=1,
    )
    update_ = StateUpdate.model_validate(update(drop=["E1"]))
    new, problems = apply_update(prev, update_, [], 2, [], RuleBook())
    assert [e.id for e in new.evidence] == ["E1"]
    assert problems == ["drift: verified evidence E1 vanished; restored"]


def test_unverified_evidence_may_be_dropped() -> None:
    prev = state(
        evidence=[Evidence(id="E1", fact="x", source="ada#0", quote=ADA.text, verified="partial")],
        iteration=1,
    )
    new, problems = apply_update(prev, StateUpdate.model_validate(update(drop=["E1"])), [], 2, [], RuleBook())
    assert new.evidence == [] and problems == []


def test_previous_answer_kept_when_model_writes_none_and_failures_accumulate() -> None:
    prev = state(answer="1849", failures=["search('x'): no results"], iteration=1)
    new, _ = apply_update(
        prev,
        StateUpdate.model_validate(update(failures=["nothing on Orley"])),
        [],
        2,
        ["search('y'): no results"],
        RuleBook(),
    )
    assert new.answer == "1849"
    assert new.failures == ["search('x'): no results", "search('y'): no results", "nothing on Orley"]


def record_with(*chunks: Chunk) -> RoundRecord:
    return RoundRecord(
        1, steps=[Step(1, "designer", "search", "Karn Point designer", "…", chunks=list(chunks))]
    )


def test_compression_retries_with_the_problems_then_keeps_what_is_valid() -> None:
    llm = ScriptedLLM().enqueue(
        update(facts=["Jonas Pell designed the tower"]),
        update(facts=["Jonas Pell designed the tower", "Ada Vellacott designed the tower"]),
        update(facts=["Jonas Pell designed the tower", "Ada Vellacott designed the tower"]),
    )
    outcome = compress(
        llm,
        state(),
        record_with(KARN),
        max_tokens=400,
        max_sentences=8,
        retries=2,
        state_max_tokens=1200,
        rules=RuleBook(),
    )
    assert len(llm.calls) == 3
    assert "no sentence found" in llm.calls[1].messages[-1]["content"]  # the error went back to the model
    assert [e.source for e in outcome.state.evidence] == ["karn#0"]
    assert outcome.rejected and not outcome.failed
    assert outcome.diff.evidence_added == ["E1"]


def test_unparseable_or_truncated_output_keeps_the_previous_state() -> None:
    llm = ScriptedLLM(truncate_after=20).enqueue(*[update(facts=["Ada Vellacott designed the tower"])] * 3)
    prev = state(answer="maybe", iteration=0)
    outcome = compress(
        llm,
        prev,
        record_with(KARN),
        max_tokens=400,
        max_sentences=8,
        retries=2,
        state_max_tokens=1200,
        rules=RuleBook(),
    )
    assert outcome.failed and len(llm.calls) == 3
    assert outcome.state.answer == "maybe" and outcome.state.iteration == 1
    assert "compression failed" in outcome.state.failures[-1]


def test_compressor_sees_relevant_sentences_not_headings() -> None:
    noise = chunk(
        "noise", "Weather", "# Weather\n\nIt rains a lot in the isles. Snow is rare and seldom lies long."
    )
    text, left_out, shown = render_for_compression(record_with(noise, KARN, ADA), Q, max_sentences=2)
    assert [s.chunk.doc_id for s in shown] == ["karn", "ada"]
    assert "# Weather" not in text and left_out == 2
    assert "Karn Point designer" in text  # the actions are shown


def test_state_is_shrunk_to_its_budget_keeping_verified_evidence() -> None:
    evidence = [
        Evidence(
            id=f"E{i}",
            fact=f"fact {i} " * 10,
            source="ada#0",
            quote=ADA.text,
            verified="yes" if i == 1 else "partial",
        )
        for i in range(1, 6)
    ]
    big = state(
        evidence=evidence,
        failures=[f"dead end {i} " * 10 for i in range(6)],
        uncertainties=[f"open {i} " * 10 for i in range(3)],
    )
    count = ScriptedLLM().count_tokens
    small = bound_size(big, 250, count)
    assert count(small.render()) <= 250
    assert small.question == Q and small.constraints == big.constraints
    assert "E1" in small.evidence_by_id()


def test_memory_corpus_is_a_working_fake(orrin: MemoryCorpus) -> None:
    hits = orrin.search("Ada Vellacott born")
    assert hits[0].chunk.doc_id == "ada-vellacott"
    assert orrin.open("karn-point#0")[0].title == "Karn Point Lighthouse"


def test_an_over_long_round_keeps_its_start_and_latest_steps_and_says_what_was_cut() -> None:
    record = RoundRecord(
        1, [Step(i, "", "search", f"query {i}", "", error="no results") for i in range(1, 13)]
    )
    text, _, _ = render_for_compression(record, Q, max_sentences=5)
    shown = [line for line in text.splitlines() if line[:1].isdigit()]
    assert [line.split(".")[0] for line in shown] == ["1", "2", "7", "8", "9", "10", "11", "12"]
    assert "(steps 3–6 of 12 are cut here" in text


def test_the_compressor_is_told_how_many_sentences_were_left_out() -> None:
    noise = chunk("noise", "Weather", "It rains a lot in the isles. Snow is rare and seldom lies long.")
    text, left_out, _ = render_for_compression(record_with(noise, KARN, ADA), Q, max_sentences=2)
    assert left_out == 2 and "(2 less relevant sentence(s) left out, from noise#0)" in text


def test_an_answer_not_connected_to_the_question_gets_an_open_question_from_code() -> None:
    jonas = Evidence(
        id="E1",
        fact="Jonas Pell was born in 1856",
        source="jonas-pell#0",
        title="Jonas Pell (engineer)",
        quote="Jonas Pell was a lighthouse engineer born in 1856.",
        verified="yes",
        round=1,
    )
    flagged = flag_unconnected(state().model_copy(update={"answer": "1856", "evidence": [jonas]}))
    assert flagged.uncertainties[0].startswith("No verified evidence mentions Karn Point Lighthouse yet")
    designer = Evidence(
        id="E2",
        fact="The tower was designed by Ada Vellacott",
        source="karn#0",
        title="Karn Point Lighthouse",
        quote=KARN.text,
        verified="yes",
        round=1,
    )
    wrong_chain = state().model_copy(update={"answer": "1856", "evidence": [jonas, designer]})
    gap = flag_unconnected(wrong_chain).uncertainties[0]
    assert (
        "is not linked to what the evidence says about Karn Point Lighthouse. It names Ada Vellacott" in gap
    )
    born = Evidence(
        id="E3",
        fact="She was born on 3 May 1849",
        source="ada#0",
        title="Ada Vellacott",
        quote=ADA.text,
        verified="yes",
        round=1,
    )
    right_chain = state().model_copy(update={"answer": "1849", "evidence": [jonas, designer, born]})
    assert flag_unconnected(right_chain).uncertainties == []


def test_code_adds_the_first_hop_when_the_model_skipped_it() -> None:
    update_only_jonas = StateUpdate.model_validate(
        update(facts=["Jonas Pell was born in 1856"], answer="1856")
    )
    jonas = chunk(
        "jonas-pell", "Jonas Pell (engineer)", "Jonas Pell was a lighthouse engineer born in 1856 in Orley."
    )
    sentences = SENTENCES + [Sentence(jonas, jonas.text)]
    new, _ = apply_update(state(), update_only_jonas, sentences, 1, [], RuleBook())
    anchored = add_anchor(new, sentences, 1)
    added = anchored.evidence[-1]
    assert (added.source, added.quote, added.verified, added.title) == (
        "karn#0",
        KARN.text,
        "yes",
        KARN.title,
    )
    assert add_anchor(anchored, sentences, 1) == anchored  # once there is a first hop, code adds nothing


def test_a_compound_fact_is_grounded_part_by_part() -> None:
    jonas = chunk("jonas", "Jonas Pell", "Jonas Pell was born in 1856 in Orley.")
    sentences = [*SENTENCES, Sentence(jonas, jonas.text)]
    both = "Ada Vellacott was born on 3 May 1849, while Jonas Pell was born in 1856"
    new, problems = apply_update(
        state(), StateUpdate.model_validate(update(facts=[both])), sentences, 1, [], RuleBook()
    )
    assert problems == [] and [(e.source, e.quote) for e in new.evidence] == [
        ("ada#0", ADA.text),
        ("jonas#0", jonas.text),
    ]
    half_made_up = "Ada Vellacott was born on 3 May 1849, while Jonas Pell was born in 1901"
    new, problems = apply_update(
        state(), StateUpdate.model_validate(update(facts=[half_made_up])), sentences, 1, [], RuleBook()
    )
    assert new.evidence == [] and "no sentence found" in problems[0]  # one invented part rejects the whole


def test_an_answer_no_stated_fact_supports_gets_the_sentence_that_states_it() -> None:
    film = chunk("film", "The Harbour Light", "The Harbour Light is a 1931 film directed by Wilma Orrick.")
    shown = [*SENTENCES, Sentence(film, film.text)]
    q = "The song shares a name with a 1931 film directed by who?"
    new = add_answer_quote(ResearchState(question=q, answer="Wilma Orrick"), shown, 1)
    assert [(e.source, e.quote, e.verified) for e in new.evidence] == [("film#0", film.text, "yes")]
    assert add_answer_quote(new, shown, 2) == new  # stated already: nothing added
    # A conclusion naming the answer and citing other evidence is no quote of it.
    concluded = ResearchState(
        question=q,
        answer="Wilma Orrick",
        evidence=[Evidence(id="E1", fact="an album", source="karn#0", quote=KARN.text, verified="yes")],
        conclusions=[
            Conclusion(text="The film was directed by Wilma Orrick", evidence_ids=["E1"], inference=True)
        ],
    )
    assert [e.source for e in add_answer_quote(concluded, shown, 1).evidence] == ["karn#0", "film#0"]
    invented = ResearchState(question=q, answer="Larry Buchanan")
    assert add_answer_quote(invented, shown, 1).evidence == []  # no sentence states it: it stays unsupported
    assert add_answer_quote(ResearchState(question=q, answer="yes"), shown, 1).evidence == []
