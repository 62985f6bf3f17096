"""The Re-TRAC loop end to end with the scripted LLM: rounds, tools, compression, convergence,
citations checked by code, persistence and resume."""

from __future__ import annotations

from dataclasses import replace

import pytest

from retrac_local.agent.loop import ResearchAgent
from retrac_local.config import Settings
from retrac_local.contract.events import (
    Converged,
    RoundCompressed,
    RunFinished,
    RunStarted,
    RunStatus,
    StepTaken,
)
from retrac_local.corpus.fake import MemoryCorpus
from retrac_local.errors import CorpusError, ModelError, RunNotFoundError
from retrac_local.llm.fake import ScriptedLLM
from retrac_local.runstore import RunStore
from tests.scripts import constraints, final, finish, open_, pick, search, update

Q = "In which year was the engineer who designed the Karn Point Lighthouse born?"
# Hop 0 (the question itself) and hop 1 (the best name its texts give) are searched by code before
# the planner's first step.
ROUND_1 = [
    open_("no-such-doc#3"),
    search(Q.lower()),  # repeats hop 0: code searches the best candidate instead
]
UPDATE_1 = update(
    facts=["Ada Vellacott designed the Karn Point Lighthouse", "Ada Vellacott was born on 3 May 1849"],
    uncertainties=["is the birth year confirmed?"],
    next_plan=["check the birth year"],
)


def make_agent(settings: Settings, corpus: MemoryCorpus, llm: ScriptedLLM, **budget) -> ResearchAgent:
    settings = settings.model_copy(
        update={"budget": settings.budget.model_copy(update={"max_steps_per_round": 4, **budget})}
    )
    return ResearchAgent(llm, llm, corpus, settings, RunStore(settings.runs_db))


def run(agent: ResearchAgent, question: str = Q):
    events = list(agent.ask(question))
    assert isinstance(events[-1], RunFinished)
    return events, events[-1].result


def test_a_full_run_answers_with_checked_citations(settings: Settings, orrin: MemoryCorpus) -> None:
    llm = ScriptedLLM().enqueue(
        constraints("Karn Point Lighthouse", "year"),
        *ROUND_1,
        UPDATE_1,
        finish("1849"),
        update(answer="1849"),
        final("1849", "E2"),
    )
    events, result = run(make_agent(settings, orrin, llm))
    assert result.status == RunStatus.ANSWERED and result.answer == "1849" and result.rounds == 2
    # The answer's own citation, then the hop that ties it to the lighthouse the question names.
    assert [(c.evidence_id, c.chunk_id) for c in result.citations] == [
        ("E2", "ada-vellacott#0"),
        ("E1", "karn-point#0"),
    ]
    assert all(c.quote in orrin.get_chunk(c.chunk_id).text for c in result.citations)
    assert result.llm_calls == len(llm.calls) == 7 and result.peak_prompt_tokens > 0

    steps = [e for e in events if isinstance(e, StepTaken)]
    assert [(s.tool, s.by) for s in steps] == [
        ("search", "code"),
        ("search", "code"),
        ("open", "planner"),
        ("search", "code"),
        ("finish", "planner"),
    ]
    assert steps[2].summary == "unknown id"
    # Hop 0 is the question, hop 1 the best candidate; the repeated query was replaced by the next one.
    assert orrin.searches == [Q, "Ada Vellacott", "Orrin Lights Board"]
    assert result.searches == orrin.searches and result.first_retrieved[:2] == [
        "karn-point#0",
        "ada-vellacott#0",
    ]
    rounds = [e for e in events if isinstance(e, RoundCompressed)]
    assert [r.end_reason for r in rounds] == ["steps", "finish"]
    assert [e.reason for e in events if isinstance(e, Converged)] == ["answered"]

    # The tool error reached the model as an observation, and the state carried the question.
    first_prompt = llm.calls[1].messages
    opening = first_prompt[1]["content"]
    assert opening.startswith(f"Question: {Q}") and f'search "{Q}" found 3' in opening
    assert (
        'search "Ada Vellacott" found' in opening
        and "1. Orrin Lights Board — named in Karn Point Lighthouse" in opening
    )
    assert "open failed" in llm.calls[2].messages[-1]["content"]
    replaced = RunStore(settings.runs_db).rounds(result.run_id)[0]["trajectory"]["steps"][3]
    assert "code searched 'Orrin Lights Board' instead" in replaced["observation"]
    # Round 2 sees only the state: no raw observation of round 1 survives.
    round_2_prompt = llm.calls[4].messages
    assert len(round_2_prompt) == 2 and "found" not in round_2_prompt[1]["content"]
    assert "may contain mistakes" in round_2_prompt[1]["content"]
    # Constraints are verbatim spans; a lone common word is not one.
    store = RunStore(settings.runs_db)
    assert store.run(result.run_id)["initial_state"]["constraints"] == ["Karn Point Lighthouse"]
    saved = store.rounds(result.run_id)
    assert [r["iteration"] for r in saved] == [1, 2]
    assert [e["id"] for e in saved[0]["state"]["evidence"]] == ["E1", "E2"]
    assert store.run(result.run_id)["status"] == "answered"


def test_the_final_answer_sees_the_quotes_and_the_draft_but_no_inference(
    settings: Settings, orrin: MemoryCorpus
) -> None:
    wrong_inference = {"text": "Jonas Pell designed it", "evidence_ids": ["E1"], "inference": True}
    stated = {"text": "Ada Vellacott designed it", "evidence_ids": ["E1"], "inference": False}
    llm = ScriptedLLM().enqueue(
        constraints(),
        *ROUND_1,
        UPDATE_1,
        finish("1849"),
        update(answer="Jonas Pell", conclusions=[wrong_inference, stated]),
        final("1849", "E2"),
    )
    _, result = run(make_agent(settings, orrin, llm, max_rounds=2))
    assert result.answer == "1849"
    prompt = llm.calls[-1].messages[-1]["content"]
    assert '"She was born on 3 May 1849 in Port Saltry' in prompt  # the quote, verbatim
    assert "Ada Vellacott designed it" in prompt and "Jonas Pell designed it" not in prompt  # no inference
    assert "Draft answer from the notes (check it against the evidence): Jonas Pell" in prompt
    assert prompt.splitlines()[-2] == f"Question: {Q}"  # the question comes right before the answer


def test_a_citation_whose_quote_left_the_source_is_dropped(settings: Settings, orrin: MemoryCorpus) -> None:
    llm = ScriptedLLM().enqueue(constraints(), *ROUND_1, UPDATE_1, finish("1849"), update(answer="1849"))

    def edit_then_answer(messages, schema):
        chunk = orrin.chunks["ada-vellacott#0"]
        orrin.chunks["ada-vellacott#0"] = replace(chunk, text="This page was rewritten.")
        return final("1849", "E2")

    llm.enqueue(edit_then_answer)
    _, result = run(make_agent(settings, orrin, llm))
    assert result.citations == [] and result.status == RunStatus.UNSURE


def test_a_run_that_stops_on_a_repeated_plan_says_why_it_is_unsure(
    settings: Settings, orrin: MemoryCorpus
) -> None:
    still_open = "is the birth year confirmed?"
    llm = ScriptedLLM().enqueue(
        constraints(),
        *ROUND_1,
        UPDATE_1,
        "not json",
        '{"gap": "x"}',  # round 2 ends on invalid actions, and its plan is round 1's again
        update(answer="1849", uncertainties=[still_open], next_plan=["check the birth year"]),
        final("1849", "E2"),
    )
    _, result = run(make_agent(settings, orrin, llm, max_rounds=3))
    assert result.stop_reason == "plan-repeated" and result.citations
    assert result.status == RunStatus.UNSURE and result.answer == "1849"
    assert result.caveat == (
        "not settled: the research stopped because the next plan repeated the one before, before the "
        f"evidence was shown to answer the question; still open: {still_open}"
    )


def test_round_budget_forces_an_answer(settings: Settings, orrin: MemoryCorpus) -> None:
    llm = ScriptedLLM().enqueue(constraints(), *ROUND_1, UPDATE_1, final("1849", "E2"))
    _, result = run(make_agent(settings, orrin, llm, max_rounds=1))
    assert result.status == RunStatus.BUDGET_EXHAUSTED and result.answer == "1849"
    assert result.stop_reason == "budget-rounds" and result.citations


def test_invalid_actions_end_the_round_without_crashing(settings: Settings, orrin: MemoryCorpus) -> None:
    llm = ScriptedLLM().enqueue(constraints(), "not json", '{"gap": "x"}', update())
    events, result = run(make_agent(settings, orrin, llm, max_rounds=1), "Qwzx vrrt?")  # hop 0 finds nothing
    rounds = [e for e in events if isinstance(e, RoundCompressed)]
    assert rounds[0].end_reason == "invalid-actions"
    # Nothing was learned, so no answer is asked for: the run ends failed, with no invented answer.
    assert result.status == RunStatus.FAILED and result.answer is None and len(llm.calls) == 4
    # the re-ask: the planner's own invalid output back, and why, opening its next prompt
    reasked = llm.calls[2].messages
    assert reasked[-2] == {"role": "assistant", "content": "not json"}
    assert reasked[-1]["content"].startswith("That was not a valid action (")


def test_a_broken_search_is_an_observation(settings: Settings, orrin: MemoryCorpus) -> None:
    class Broken(MemoryCorpus):
        def search(self, query: str, k: int = 5):
            raise CorpusError("the index is damaged")

    llm = ScriptedLLM().enqueue(
        constraints(), search("anything"), finish("no idea"), update(), final("no idea")
    )
    events, _ = run(make_agent(settings, Broken(chunks=orrin.chunks), llm, max_rounds=1))
    assert any(isinstance(e, StepTaken) and "damaged" in e.summary for e in events)
    assert "search failed: the index is damaged" in llm.calls[2].messages[-1]["content"]


def test_resume_continues_after_an_interruption(settings: Settings, orrin: MemoryCorpus) -> None:
    def interrupt(messages, schema):
        raise KeyboardInterrupt

    llm = ScriptedLLM().enqueue(constraints(), *ROUND_1, UPDATE_1, interrupt)
    agent = make_agent(settings, orrin, llm)
    events = agent.ask(Q)
    run_id = None
    with pytest.raises(KeyboardInterrupt):
        for event in events:
            if isinstance(event, RunStarted):
                run_id = event.run_id
    store = RunStore(settings.runs_db)
    assert store.run(run_id)["status"] == "running" and len(store.rounds(run_id)) == 1

    llm2 = ScriptedLLM().enqueue(
        search("Ada Vellacott"),
        finish("1849"),
        update(facts=["She was born on 3 May 1849 in Port Saltry"], answer="1849"),
        final("1849", "E2"),
    )
    resumed = list(make_agent(settings, orrin, llm2).resume(run_id))
    # The searches of the first sitting are remembered: the repeat is replaced by a candidate, by code.
    again = [(e.argument, e.by) for e in resumed if isinstance(e, StepTaken) and e.tool == "search"]
    assert len(again) == 1 and again[0][1] == "code" and again[0][0] not in orrin.searches[:3]
    assert len(set(orrin.searches)) == len(orrin.searches) == 4
    assert isinstance(resumed[0], RunStarted) and resumed[0].resumed_at_round == 2
    result = resumed[-1].result
    assert result.status == RunStatus.ANSWERED and result.rounds == 2
    assert [r["iteration"] for r in store.rounds(run_id)] == [1, 2]
    assert result.llm_calls == 1 + len(ROUND_1) + 1 + 4  # calls of both sittings, none counted twice
    # A finished run resumes to its stored result without calling a model.
    again = list(make_agent(settings, orrin, ScriptedLLM()).resume(run_id))
    assert again[-1].result.answer == "1849"


def test_a_model_error_mid_run_marks_it_failed_and_resume_continues_it(
    settings: Settings, orrin: MemoryCorpus
) -> None:
    def server_gone(messages, schema):
        raise ModelError("cannot reach the model server http://127.0.0.1:9: refused; is it running?")

    agent = make_agent(settings, orrin, ScriptedLLM().enqueue(constraints(), *ROUND_1, UPDATE_1, server_gone))
    run_id = None
    with pytest.raises(ModelError):
        for event in agent.ask(Q):
            if isinstance(event, RunStarted):
                run_id = event.run_id
    store = RunStore(settings.runs_db)
    assert store.run(run_id)["status"] == "failed" and store.run(run_id)["result"] is None
    assert len(store.rounds(run_id)) == 1  # the finished round is kept
    llm2 = ScriptedLLM().enqueue(
        search("Ada Vellacott"),
        finish("1849"),
        update(facts=["She was born on 3 May 1849 in Port Saltry"], answer="1849"),
        final("1849", "E2"),
    )
    result = list(make_agent(settings, orrin, llm2).resume(run_id))[-1].result
    assert result.status == RunStatus.ANSWERED and store.run(run_id)["status"] == "answered"


def test_unknown_run_id(settings: Settings, orrin: MemoryCorpus) -> None:
    with pytest.raises(RunNotFoundError, match="runs list"):
        list(make_agent(settings, orrin, ScriptedLLM()).resume("nope"))


def test_resume_after_a_crash_before_the_final_answer_keeps_the_convergence(
    settings: Settings, orrin: MemoryCorpus
) -> None:
    def crash(messages, schema):
        raise KeyboardInterrupt

    llm = ScriptedLLM().enqueue(
        constraints(),
        *ROUND_1,
        update(
            facts=[
                "Ada Vellacott designed the Karn Point Lighthouse",
                "Ada Vellacott was born on 3 May 1849",
            ],
            answer="1849",
        ),
        crash,
    )
    events = make_agent(settings, orrin, llm).ask(Q)
    started = next(events)
    with pytest.raises(KeyboardInterrupt):
        list(events)
    llm2 = ScriptedLLM().enqueue(final("1849", "E2"))
    result = list(make_agent(settings, orrin, llm2).resume(started.run_id))[-1].result
    assert result.status == RunStatus.ANSWERED and result.stop_reason == "answered" and len(llm2.calls) == 1


def test_an_answer_no_evidence_supports_does_not_end_the_run(settings: Settings, orrin: MemoryCorpus) -> None:
    from retrac_local.agent.convergence import answer_supported
    from retrac_local.contract.state import Evidence, ResearchState

    quote = "She was born on 3 May 1849 in Port Saltry."
    state = ResearchState(
        question=Q,
        answer="1921",
        evidence=[Evidence(id="E1", fact="born 1849", source="a#0", quote=quote, verified="yes")],
    )
    assert not answer_supported(state)
    assert answer_supported(state.model_copy(update={"answer": "1849"}))
    assert answer_supported(state.model_copy(update={"answer": "no"}))
    assert not answer_supported(state.model_copy(update={"answer": "1849", "evidence": []}))


def test_a_long_horizon_budget_refuses_early_finishes_and_delays_convergence(
    settings: Settings, orrin: MemoryCorpus
) -> None:
    llm = ScriptedLLM().enqueue(
        constraints(),
        finish("1856"),
        search("Karn Point Lighthouse designer"),  # after hop 0
        update(
            facts=[
                "Ada Vellacott designed the Karn Point Lighthouse",
                "Ada Vellacott was born on 3 May 1849",
            ],
            answer="1849",
        ),  # would converge: but only 2 calls made
        search("Jonas Pell"),
        update(facts=["Jonas Pell was born in 1856"], answer="1849"),  # after the lead, by code
        final("1849", "E2"),
    )
    agent = make_agent(settings, orrin, llm, max_steps_per_round=2, min_tool_calls=3, opening_searches=1)
    events, result = run(agent)
    assert result.answer == "1849" and result.rounds == 2 and result.stop_reason == "answered"
    first = agent.store.rounds(result.run_id)[0]["trajectory"]
    assert first["steps"][1]["tool"] == "finish" and first["steps"][1]["error"] == "too early"
    assert "2 more tool call(s)" in llm.calls[2].messages[-1]["content"]
    steps = [(e.tool, e.by) for e in events if isinstance(e, StepTaken)]
    assert steps == [
        ("search", "code"),
        ("finish", "planner"),
        ("search", "planner"),
        ("search", "code"),
        ("search", "planner"),
    ]
    assert orrin.searches[2] == "Orrin Lights Board"  # round 2 starts on the lead the first hop names


def test_by_default_round_1_is_three_searches_by_code_and_no_planner_call(
    settings: Settings, orrin: MemoryCorpus
) -> None:
    settings = settings.model_copy(update={"budget": Settings(home=settings.home).budget})
    llm = ScriptedLLM().enqueue(
        constraints(),
        update(facts=["Ada Vellacott was born on 3 May 1849"], answer="1849"),
        final("1849", "E2"),
    )
    events, result = run(ResearchAgent(llm, llm, orrin, settings, RunStore(settings.runs_db)))
    assert [(e.argument, e.by) for e in events if isinstance(e, StepTaken)] == [
        (Q, "code"),
        ("Ada Vellacott", "code"),
        ("Orrin Lights Board", "code"),
    ]
    assert [c.schema.__name__ for c in llm.calls] == ["ConstraintsDraft", "StateUpdate", "FinalAnswer"]
    assert result.status == RunStatus.ANSWERED and result.answer == "1849"


def test_calculate_results_reach_the_planner_and_the_compressor(
    settings: Settings, orrin: MemoryCorpus
) -> None:
    q = "How old was the engineer who designed the Karn Point Lighthouse when it was first lit?"
    llm = ScriptedLLM().enqueue(
        constraints(),  # hops 0 and 1 by code
        {
            "gap": "age at first lighting",
            "call": {"tool": "calculate", "expression": "years_between(1849-05-03, 1887-03-14)"},
        },
        finish("37"),
        update(
            facts=["The light was first lit on 14 March 1887", "Ada Vellacott was born on 3 May 1849"],
            answer="37",
            conclusions=[
                {"text": "She was 37 when it was first lit", "evidence_ids": ["E1", "E2"], "inference": True}
            ],
        ),
        final("37", "E1", "E2"),
    )
    events, result = run(make_agent(settings, orrin, llm), q)
    assert result.answer == "37"
    assert "calculate years_between(1849-05-03, 1887-03-14) = 37" in llm.calls[2].messages[-1]["content"]
    compressor_prompt = llm.calls[3].messages[-1]["content"]
    assert (
        "3. calculate 'years_between(1849-05-03, 1887-03-14)' → years_between(1849-05-03, 1887-03-14) = 37"
        in compressor_prompt
    )


def test_a_round_that_found_nothing_new_is_compressed_like_any_other(
    settings: Settings, orrin: MemoryCorpus
) -> None:
    q = "Zzyzx qwerty?"
    llm = ScriptedLLM().enqueue(
        constraints(),  # round 1: hop 0 finds nothing
        update(failures=[f"search {q!r} found nothing"]),
        search("Karn Point Lighthouse designer"),  # round 2
        update(facts=["The tower was designed by Ada Vellacott"], answer="1849"),
        final("1849", "E1"),
    )
    agent = make_agent(settings, orrin, llm, max_steps_per_round=1, max_rounds=2)
    _, result = run(agent, q)
    rounds = agent.store.rounds(result.run_id)
    assert [r["iteration"] for r in rounds] == [1, 2] and [r["stats"]["slots"] for r in rounds] == [1, 1]
    assert [s["argument"] for s in rounds[0]["trajectory"]["steps"]] == [q]
    assert sum(1 for c in llm.calls if c.schema is not None and c.schema.__name__ == "StateUpdate") == 2
    assert result.answer == "1849"


def test_the_token_budget_stops_a_run_with_its_best_answer(settings: Settings, orrin: MemoryCorpus) -> None:
    llm = ScriptedLLM().enqueue(
        constraints(),
        search("Karn Point Lighthouse designer"),
        finish("1849"),
        update(
            facts=["Ada Vellacott designed the Karn Point Lighthouse"],
            answer="1850",
            uncertainties=["birth year?"],
        ),
        final("1849"),  # a draft no sentence states does not converge
    )
    agent = make_agent(settings, orrin, llm, max_tokens=600)
    _, result = run(agent)
    assert result.stop_reason == "budget-tokens" and result.status == RunStatus.BUDGET_EXHAUSTED
    assert result.rounds == 1 and result.answer == "1849"


def test_a_round_ends_when_its_raw_trajectory_passes_the_token_threshold(
    settings: Settings, orrin: MemoryCorpus
) -> None:
    llm = ScriptedLLM().enqueue(
        constraints(),
        search("Karn Point Lighthouse designer"),  # one observation passes 200 tokens
        update(facts=["The tower was designed by the civil engineer Ada Vellacott"]),
        final("unknown"),
    )
    long_text = " ".join(["The harbour records list every keeper and every storm of the decade."] * 20)
    orrin.add("karn-records", "Karn Point Lighthouse designer records", long_text)
    agent = make_agent(settings, orrin, llm, round_token_threshold=200, max_rounds=1)
    _, result = run(agent)
    assert agent.store.rounds(result.run_id)[0]["stats"]["end_reason"] == "tokens"


def test_the_time_budget_stops_a_run(settings: Settings, orrin: MemoryCorpus) -> None:
    agent = make_agent(settings, orrin, ScriptedLLM().enqueue(constraints()), max_seconds=1e-9)
    _, result = run(agent)
    assert result.stop_reason == "budget-time" and result.status == RunStatus.FAILED and result.rounds == 0


def test_a_repeated_search_is_never_made_again(settings: Settings, orrin: MemoryCorpus) -> None:
    llm = ScriptedLLM().enqueue(
        constraints(),
        search("Jonas Pell"),
        search("Pell Jonas"),
        update(facts=["Jonas Pell was a lighthouse engineer born in 1856"]),
        final("1856"),
    )
    one = MemoryCorpus().add("jonas-pell", "Jonas Pell", orrin.chunks["jonas-pell#0"].text)
    agent = make_agent(settings, one, llm, max_rounds=1, max_steps_per_round=6)
    _, result = run(agent, "Who was Jonas Pell?")
    steps = agent.store.rounds(result.run_id)[0]["trajectory"]["steps"]
    # Hops 0 and 1 by code (the question's name of two words before the texts' one-word name); the
    # planner's repeat of hop 1 is replaced by the candidate left, its second repeat finds none, which
    # ends the round.
    assert [(s["argument"], s["by"]) for s in steps] == [
        ("Who was Jonas Pell?", "code"),
        ("Jonas Pell", "code"),
        ("Orley", "code"),
    ]
    assert agent.store.rounds(result.run_id)[0]["stats"]["end_reason"] == "repeats"
    assert steps[2]["candidates"] == [{"query": "Orley", "origin": "named in Jonas Pell"}]
    assert result.searches == one.searches == ["Who was Jonas Pell?", "Jonas Pell", "Orley"]


def test_the_planner_picks_a_candidate_by_number(settings: Settings, orrin: MemoryCorpus) -> None:
    llm = ScriptedLLM().enqueue(
        constraints(),
        pick(2),
        pick(6),  # a number past the list takes the last candidate
        update(facts=["Ada Vellacott was born on 3 May 1849"]),
        final("1849"),
    )
    agent = make_agent(settings, orrin, llm, max_rounds=1, max_steps_per_round=4)
    _, result = run(agent)
    steps = agent.store.rounds(result.run_id)[0]["trajectory"]["steps"]
    offered = [c["query"] for c in steps[2]["candidates"]]
    assert steps[2]["argument"] == offered[1] and steps[2]["by"] == "pick"
    assert steps[3]["argument"] == [c["query"] for c in steps[3]["candidates"]][-1]
    assert len(set(orrin.searches)) == len(orrin.searches) == 4


def test_a_bare_yes_or_no_to_a_which_question_is_never_answered(
    settings: Settings, orrin: MemoryCorpus
) -> None:
    """A small model that finds nothing to name answers "no": the run says the answer is not of the
    kind asked (status.wrong_kind) and is never *answered*."""
    question = "Which lighthouse did the Orrin Lights Board build last?"
    facts = ["The tower was designed by the civil engineer Ada Vellacott for the Orrin Lights Board"]
    llm = ScriptedLLM().enqueue(
        constraints(),
        open_("no-such-doc#3"),
        search(question.lower()),
        update(facts=facts, answer="no"),
        final("No.", "E1"),
    )
    _, result = run(make_agent(settings, orrin, llm, max_rounds=1, final_passages=0), question)
    assert result.status != RunStatus.ANSWERED and result.answer == "No"
    assert result.caveat is not None and result.caveat.startswith(
        "The answer must be the thing it asks for, not yes or no, and 'No' is not"
    )


def test_a_run_being_run_elsewhere_is_refused_with_that_reason(
    settings: Settings, orrin: MemoryCorpus
) -> None:
    from retrac_local.errors import RetracError, RunBusyError

    llm = ScriptedLLM().enqueue(constraints(), *ROUND_1)
    events = make_agent(settings, orrin, llm).ask(Q)
    run_id = next(events).run_id  # the run has started and holds its lock
    other = make_agent(settings, orrin, ScriptedLLM())
    with pytest.raises(RunBusyError, match="being run by another process"):
        next(other.resume(run_id))
    assert issubclass(RunBusyError, RetracError)  # the CLI and the page say it in one line
    events.close()  # the first stops (a Ctrl-C): the lock goes with it, and resume may continue
    resumed = make_agent(
        settings,
        orrin,
        ScriptedLLM().enqueue(*ROUND_1, UPDATE_1, finish("1849"), update(answer="1849"), final("1849", "E2")),
    )
    assert next(resumed.resume(run_id)).run_id == run_id
