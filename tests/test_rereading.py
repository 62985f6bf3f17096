"""Before the final answer the run's texts are read once more: the sentences that bear most on the
question and that the evidence does not quote are shown beside it, and a cited one becomes evidence."""

from __future__ import annotations

import re

from retrac_local.agent import rereading
from retrac_local.config import Settings
from retrac_local.contract.events import RunStatus
from retrac_local.contract.state import Evidence, ResearchState
from retrac_local.corpus.fake import MemoryCorpus
from retrac_local.llm.fake import ScriptedLLM
from tests.scripts import constraints, final, finish, update
from tests.test_loop import ROUND_1, Q, make_agent, run

LINK = "The tower was designed by the civil engineer Ada Vellacott for the Orrin Lights Board."
BIRTH = "She was born on 3 May 1849 in Port Saltry, the daughter of a ship's chandler."


def _held(orrin: MemoryCorpus, quote: str) -> ResearchState:
    return ResearchState(
        question=Q,
        evidence=[
            Evidence(
                id="E1",
                fact="Ada Vellacott designed the Karn Point Lighthouse",
                source="karn-point#0",
                quote=quote,
                verified="yes",
                round=1,
                title="Karn Point Lighthouse",
            )
        ],
    )


def test_the_passages_are_the_relevant_sentences_the_evidence_does_not_quote(orrin: MemoryCorpus) -> None:
    chunks = [orrin.get_chunk(i) for i in ("karn-point#0", "ada-vellacott#0", "jonas-pell#0")]
    found = rereading.passages(chunks, _held(orrin, LINK), ["Ada Vellacott"], 2)
    texts = [s.text for s in found]
    assert LINK not in texts and len(texts) == 2  # quoted already: not offered twice
    assert BIRTH in texts  # the year the question asks for, from the second hop's text
    shown = rereading.render(found)
    assert (
        shown.startswith("Passages read again")
        and f"[P{texts.index(BIRTH) + 1}] (Ada Vellacott) {BIRTH}" in shown
    )
    assert rereading.passages(chunks, _held(orrin, LINK), [], 0) == [] and rereading.render([]) == ""


def test_a_cited_passage_becomes_verified_evidence_with_the_next_id(orrin: MemoryCorpus) -> None:
    chunks = [orrin.get_chunk("ada-vellacott#0")]
    found = rereading.passages(chunks, _held(orrin, LINK), [], 5)
    birth = next(i for i, s in zip(rereading.ids(found), found, strict=True) if s.text == BIRTH)
    state, cited = rereading.cite(_held(orrin, LINK), found, ["E1", birth, "E7"])
    assert cited == ["E1", "E2", "E7"]  # an id that is no passage is left for the citation check
    added = state.evidence[-1]
    assert (added.id, added.quote, added.fact, added.source, added.verified) == (
        "E2",
        BIRTH,
        BIRTH,
        "ada-vellacott#0",
        "yes",
    )


def test_the_final_answer_can_cite_a_sentence_the_compressor_left_out(
    settings: Settings, orrin: MemoryCorpus
) -> None:
    """The compressor kept only the link; the year stands in a sentence it did not keep."""

    def answer_from_passage(messages, schema):
        prompt = messages[-1]["content"]
        assert "Evidence:" in prompt and "Passages read again" in prompt
        ref = re.search(r"\[(P\d+)\] \(Ada Vellacott\) She was born on 3 May 1849", prompt).group(1)
        return final("1849", ref)

    llm = ScriptedLLM().enqueue(
        constraints(),
        *ROUND_1,
        update(facts=["Ada Vellacott designed the Karn Point Lighthouse"], next_plan=["find her birth year"]),
        finish("1849"),
        update(answer="1849"),
        answer_from_passage,
    )
    _, result = run(make_agent(settings, orrin, llm, max_rounds=2))
    # Backed by the passage: no caveat (the run itself ended on its round budget).
    assert result.answer == "1849" and result.caveat is None
    assert [(c.chunk_id, c.quote) for c in result.citations][0] == ("ada-vellacott#0", BIRTH)
    assert [c.chunk_id for c in result.citations][1:] == ["karn-point#0"]  # the hop to the lighthouse


def test_with_no_passages_the_final_answer_reads_the_evidence_alone(
    settings: Settings, orrin: MemoryCorpus
) -> None:
    llm = ScriptedLLM().enqueue(
        constraints(),
        *ROUND_1,
        update(facts=["Ada Vellacott designed the Karn Point Lighthouse"]),
        finish("1849"),
        update(answer="1849"),
        final("1849"),
    )
    _, result = run(make_agent(settings, orrin, llm, max_rounds=2, final_passages=0))
    assert "Passages" not in llm.calls[-1].messages[-1]["content"]
    assert result.caveat is not None and result.caveat.startswith(
        "not found"
    )  # the year is in no evidence it read


def test_an_answer_the_question_names_is_asked_again_once(settings: Settings, orrin: MemoryCorpus) -> None:
    question = "Which engineer designed the Karn Point Lighthouse?"
    llm = ScriptedLLM().enqueue(
        constraints(),
        *ROUND_1,
        update(facts=["Ada Vellacott designed the Karn Point Lighthouse"], answer="Ada Vellacott"),
        final("Karn Point Lighthouse", "E1"),
        final("Ada Vellacott", "E1"),
    )
    _, result = run(make_agent(settings, orrin, llm, max_rounds=1), question)
    assert result.answer == "Ada Vellacott" and result.status == RunStatus.ANSWERED
    again = llm.calls[-1].messages
    assert again[-2]["role"] == "assistant" and "Karn Point Lighthouse" in again[-2]["content"]
    assert '"Karn Point Lighthouse" is named in the question itself' in again[-1]["content"]
    # the second answer is held to the names the texts hold beyond the question's words
    names = llm.calls[-1].schema.model_json_schema()["properties"]["answer"]["enum"]  # type: ignore[union-attr]
    assert "Ada Vellacott" in names and "Orrin Lights Board" in names
    assert not any("Karn Point" in n for n in names)
    assert "Ada Vellacott" in again[-1]["content"].split("these names from the texts")[1]


def test_a_finished_run_is_answered_again_from_its_last_state(
    settings: Settings, orrin: MemoryCorpus
) -> None:
    llm = ScriptedLLM().enqueue(
        constraints(),
        *ROUND_1,
        update(
            facts=["Ada Vellacott designed the Karn Point Lighthouse", "Ada Vellacott was born on 3 May 1849"]
        ),
        finish("1849"),
        update(answer="1849"),
        final("1850"),
    )
    agent = make_agent(settings, orrin, llm, max_rounds=2)
    _, first = run(agent)
    assert first.answer == "1850" and first.status == RunStatus.UNSURE
    calls = len(llm.calls)
    llm.enqueue(final("1849", "E2"))
    again = agent.answer_again(first.run_id)
    assert len(llm.calls) == calls + 1  # one call: the rounds are not run again
    assert again.answer == "1849" and again.status == RunStatus.ANSWERED and again.rounds == first.rounds
    assert agent.store.run(first.run_id)["answer"] == "1849"
