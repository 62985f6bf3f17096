"""Sources that disagree are recorded, not settled by picking one: found by code, shown in the state
and the report, and an answer resting on one side is unsure with the reason."""

from __future__ import annotations

from retrac_local.agent.conflicts import find_conflicts
from retrac_local.agent.loop import ResearchAgent
from retrac_local.config import Settings
from retrac_local.contract.events import RunStatus
from retrac_local.contract.state import Evidence
from retrac_local.corpus.fake import MemoryCorpus
from retrac_local.export import build, render
from retrac_local.llm.fake import ScriptedLLM
from retrac_local.runstore import RunStore
from tests.scripts import constraints, final, finish, update


def fact(i: int, text: str, doc: str, verified: str = "yes") -> Evidence:
    return Evidence(id=f"E{i}", fact=text, source=f"{doc}#0", quote=text, verified=verified, title=doc)


def test_two_sources_giving_two_years_for_one_event_of_one_subject_disagree() -> None:
    found = find_conflicts(
        [
            fact(1, "Tessa Orm was born in 1849 in Port Saltry", "tessa-orm"),
            fact(2, "The Hesk parish register records that Tessa Orm was born in 1851", "orm-family"),
            fact(3, "Born in 1852 on Hesk Island, Tessa Orm kept the light", "hesk-light"),
        ]
    )
    # E3 names no one before its event: no claim is read from it (a place could pass for the subject)
    assert [(c.about, c.evidence_ids, c.values) for c in found] == [
        ("Tessa Orm born", ["E1", "E2"], ["1849", "1851"])
    ]


def test_what_is_not_a_disagreement() -> None:
    cases = [
        [
            fact(1, "Tessa Orm was born in 1849", "a"),
            fact(2, "Tessa Orm was born in 1851", "a"),
        ],  # one source
        [
            fact(1, "Tessa Orm was born in 1849", "a"),
            fact(2, "Jonas Orm was born in 1851", "b"),
        ],  # two people
        [
            fact(1, "Tessa Orm was born in 1849 in Port Saltry", "a"),
            fact(2, "Jonas Pell was born in 1851 in Port Saltry", "b"),
        ],  # two people, one town
        [fact(1, "Tessa Orm was born in 1849", "a"), fact(2, "Tessa Orm died in 1921", "b")],  # two events
        [fact(1, "Tessa Orm was born in 1849", "a"), fact(2, "Tessa Orm was born in 1849", "b")],  # agree
        [
            fact(1, "Tessa Orm was born in 1849", "a"),
            fact(2, "Tessa Orm was born in 1851", "b", verified="no"),
        ],
        [
            fact(1, "Port Saltry had 4,100 inhabitants in 1901", "a"),
            fact(2, "Port Saltry had 3,900 inhabitants", "b"),
        ],
    ]
    assert [find_conflicts(c) for c in cases] == [[]] * len(cases)


def test_a_run_that_reads_two_disagreeing_sources_says_so(settings: Settings) -> None:
    corpus = (
        MemoryCorpus()
        .add(
            "tessa-orm",
            "Tessa Orm",
            "Tessa Orm was a lighthouse keeper. Tessa Orm was born in 1849 in Port Saltry.",
        )
        .add(
            "orm-family",
            "Orm family",
            "The parish register says that Tessa Orm was born in 1851 on Hesk Island.",
        )
    )
    llm = ScriptedLLM().enqueue(
        constraints("Tessa Orm"),
        finish("1849"),
        update(
            facts=["Tessa Orm was born in 1849 in Port Saltry", "Tessa Orm was born in 1851 on Hesk Island"],
            answer="1849",
        ),
        final("1849", "E1"),
    )
    settings = settings.model_copy(update={"budget": settings.budget.model_copy(update={"max_rounds": 1})})
    store = RunStore(settings.runs_db)
    result = list(ResearchAgent(llm, llm, corpus, settings, store).ask("In which year was Tessa Orm born?"))[
        -1
    ].result
    state = store.rounds(result.run_id)[-1]["state"]
    assert [(c["about"], c["values"]) for c in state["conflicts"]] == [("Tessa Orm born", ["1849", "1851"])]
    assert result.status == RunStatus.UNSURE and result.caveat is not None
    assert result.caveat.startswith(
        "the sources disagree: Tessa Orm born: 1849 (Tessa Orm, E1) against 1851 (Orm family, E2)"
    )
    report = build(store, result.run_id, corpus)
    assert "## Sources disagree" in render(report, "md") and "Sources disagree" in render(report, "html")
    assert "against 1851 (Orm family, E2)" in render(report, "md")
