"""The hop cited beside a bridge answer: the evidence that ties where the chain ends to what the
question names (`linking.bridge`), with invented entities."""

from __future__ import annotations

from retrac_local.agent.linking import bridge
from retrac_local.contract.state import Evidence, ResearchState

Q = "Which river runs past the birthplace of the composer of the Tessaly Overture?"


def ev(id: str, title: str, quote: str, verified: str = "yes") -> Evidence:
    return Evidence(
        id=id, fact=quote, source=f"{title.lower()}#0", quote=quote, verified=verified, round=1, title=title
    )


COMPOSED = ev("E1", "Tessaly Overture", "The overture was written by Mirel Ondra in 1902.")
BORN = ev("E2", "Mirel Ondra", "She was born in Kavetz, a mill town.")
RIVER = ev("E3", "Kavetz", "Kavetz lies on the river Ulm.")
STRANGER = ev("E4", "Pavo Lind", "He was born in Sorve, on the river Tane.")


def test_the_hop_that_names_the_cited_subject_is_added() -> None:
    state = ResearchState(question=Q, evidence=[COMPOSED, BORN, STRANGER])
    assert bridge(state, [BORN]) == [COMPOSED]


def test_nothing_is_added_when_a_citation_reaches_the_question_already() -> None:
    state = ResearchState(question=Q, evidence=[COMPOSED, BORN])
    assert bridge(state, [BORN, COMPOSED]) == []
    assert bridge(state, [COMPOSED]) == []


def test_nothing_links_an_answer_about_someone_the_question_evidence_never_names() -> None:
    state = ResearchState(question=Q, evidence=[COMPOSED, STRANGER])
    assert bridge(state, [STRANGER]) == []


def test_only_verified_evidence_bridges_and_only_one_hop_is_added() -> None:
    unverified = ResearchState(question=Q, evidence=[COMPOSED.model_copy(update={"verified": "no"}), BORN])
    assert bridge(unverified, [BORN]) == []
    # Two hops away (the river's town is named only by the birth evidence): one hop, no search for more.
    state = ResearchState(question=Q, evidence=[COMPOSED, BORN, RIVER])
    assert bridge(state, [RIVER]) == []
    assert bridge(ResearchState(question=Q, evidence=[COMPOSED, BORN]), []) == []
