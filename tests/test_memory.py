"""Cross-task memory: a finished run's verified evidence seeds a similar later question, after its
quotes are verified again against the corpus as it is now."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from retrac_local.agent.loop import ResearchAgent
from retrac_local.agent.memory import RunMemory
from retrac_local.agent.seeding import seed_from_memory
from retrac_local.cli.main import cli
from retrac_local.config import Settings
from retrac_local.contract.events import RunStarted
from retrac_local.contract.state import Evidence, ResearchState
from retrac_local.corpus.embedder import HashingEmbedder
from retrac_local.corpus.fake import MemoryCorpus
from retrac_local.llm.fake import ScriptedLLM
from retrac_local.runstore import RunStore
from tests.scripts import constraints, final, finish, search, update

Q = "In which year was the engineer who designed the Karn Point Lighthouse born?"
FIRST_RUN = [
    constraints(),
    search("Ada Vellacott born"),  # after two searches by code: the question and a name it gives
    update(
        facts=["Ada Vellacott designed the Karn Point Lighthouse", "Ada Vellacott was born on 3 May 1849"],
        answer="1849",
    ),
    final("1849", "E2"),
]
SECOND_RUN = [
    constraints(),
    finish("1849"),
    update(facts=["Ada Vellacott was born on 3 May 1849"], answer="1849"),
    final("1849", "E2"),
]


def agent(
    settings: Settings,
    corpus: MemoryCorpus,
    llm: ScriptedLLM,
    memory: RunMemory,
    rounds: int = 4,
    **memory_settings,
) -> ResearchAgent:
    settings = settings.model_copy(
        update={
            "memory": settings.memory.model_copy(update=memory_settings),
            "budget": settings.budget.model_copy(update={"max_rounds": rounds}),
        }
    )
    return ResearchAgent(llm, llm, corpus, settings, RunStore(settings.runs_db), memory=memory)


def finished(a: ResearchAgent, question: str = Q):
    events = list(a.ask(question))
    return events[0], events[-1].result


def test_a_similar_question_starts_from_the_verified_evidence_of_a_past_run(
    settings: Settings, orrin: MemoryCorpus
) -> None:
    memory = RunMemory(settings.memory_dir, HashingEmbedder)
    _, first = finished(agent(settings, orrin, ScriptedLLM().enqueue(*FIRST_RUN), memory))
    assert memory.count() == 1

    llm = ScriptedLLM().enqueue(*SECOND_RUN)
    second = agent(settings, orrin, llm, memory)
    started, result = finished(second, Q.replace("In which year", "What year"))
    assert isinstance(started, RunStarted) and [m["run_id"] for m in started.memory] == [first.run_id]
    initial = second.store.run(result.run_id)["initial_state"]["evidence"]
    assert [(e["source"], e["round"]) for e in initial] == [("karn-point#0", 0), ("ada-vellacott#0", 0)]
    assert (
        "Ada Vellacott was born on 3 May 1849" in llm.calls[1].messages[-1]["content"]
    )  # the planner sees it
    assert result.answer == "1849" and result.citations[0].chunk_id == "ada-vellacott#0"
    assert second.store.run(result.run_id)["memory"][0]["evidence_seeded"] == 2

    out = CliRunner().invoke(cli, ["runs", "show", result.run_id], env={"RETRAC_HOME": str(settings.home)})
    assert f"seeded 2 of 2 fact(s) from past run {first.run_id}" in out.output and "from memory" in out.output


def test_past_evidence_whose_quote_left_the_corpus_is_not_seeded(
    settings: Settings, orrin: MemoryCorpus
) -> None:
    memory = RunMemory(settings.memory_dir, HashingEmbedder)
    finished(agent(settings, orrin, ScriptedLLM().enqueue(*FIRST_RUN), memory))
    orrin.add(
        "ada-vellacott", "Ada Vellacott", "Ada Vellacott was a civil engineer. Her birth date is disputed."
    )
    second = agent(
        settings,
        orrin,
        ScriptedLLM().enqueue(
            constraints(), finish("x"), update(facts=["Jonas Pell was born in 1856"]), final("x")
        ),
        memory,
        rounds=1,
    )
    started, result = finished(second)
    seeded = second.store.run(result.run_id)["initial_state"]["evidence"]
    assert [e["source"] for e in seeded] == ["karn-point#0"] and started.memory[0]["evidence_seeded"] == 1


def test_memory_can_be_turned_off_and_unrelated_questions_get_nothing(
    settings: Settings, orrin: MemoryCorpus, tmp_path: Path
) -> None:
    memory = RunMemory(settings.memory_dir, HashingEmbedder)
    finished(agent(settings, orrin, ScriptedLLM().enqueue(*FIRST_RUN), memory))
    off = agent(settings, orrin, ScriptedLLM().enqueue(*SECOND_RUN), memory, rounds=1, enabled=False)
    started, result = finished(off)
    assert started.memory == [] and off.store.run(result.run_id)["initial_state"]["evidence"] == []
    assert memory.count() == 1  # and a run with memory off does not write to it either
    assert memory.recall("How long is the Tessel Bridge in metres?") == []
    assert memory.recall(Q, exclude=result.run_id)[0].similarity > 0.99


def test_only_the_evidence_an_answer_stood_on_is_remembered(settings: Settings, orrin: MemoryCorpus) -> None:
    memory = RunMemory(settings.memory_dir, HashingEmbedder)
    run = [
        constraints(),
        search("Ada Vellacott born"),
        update(
            facts=[
                "Ada Vellacott designed the Karn Point Lighthouse",
                "Ada Vellacott was born on 3 May 1849",
                "Jonas Pell was a lighthouse engineer born in 1856",
            ],
            answer="1849",
        ),
        final("1849", "E2"),
    ]
    _, result = finished(agent(settings, orrin, ScriptedLLM().enqueue(*run), memory))
    assert result.status == "answered"
    [past] = memory.recall(Q, limit=1, min_similarity=0.0)
    assert sorted(e["source"] for e in past.evidence) == [
        "ada-vellacott#0",
        "karn-point#0",
    ]  # not Jonas Pell's

    unsure = [
        constraints(),
        search("Jonas Pell"),
        update(facts=["Jonas Pell was a lighthouse engineer born in 1856"]),
        final("1856", "E1"),
    ]
    finished(agent(settings, orrin, ScriptedLLM().enqueue(*unsure), memory, rounds=1), "Who was Jonas Pell?")
    assert memory.count() == 1  # a run that was not answered teaches nothing


def test_a_remembered_fact_its_quote_does_not_state_is_not_seeded(
    settings: Settings, orrin: MemoryCorpus
) -> None:
    memory = RunMemory(settings.memory_dir, HashingEmbedder)
    quote = "She was born on 3 May 1849 in Port Saltry, the daughter of a ship's chandler."
    state = ResearchState(
        question=Q,
        answer="1901",
        evidence=[
            Evidence(
                id="E1",
                fact="Ada Vellacott was born in 1901 in Atlantis",
                source="ada-vellacott#0",
                quote=quote,
                verified="yes",
                title="Ada Vellacott",
            ),  # a tampered or garbled memory: the quote stands, the fact not
            Evidence(
                id="E2",
                fact="Ada Vellacott was born on 3 May 1849",
                source="ada-vellacott#0",
                quote=quote,
                verified="yes",
                title="Ada Vellacott",
            ),
        ],
    )
    assert memory.remember("past-run", state)
    seeds, used = seed_from_memory(memory, orrin, settings.memory, Q)
    assert [s.fact for s in seeds] == ["Ada Vellacott was born on 3 May 1849"] and used[0][
        "evidence_seeded"
    ] == 1
