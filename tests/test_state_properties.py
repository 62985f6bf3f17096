"""Property-based tests of the state rules: whatever the compressor writes, code keeps the goal,
never stores a quote that is not in a source sentence, keeps ids unique, and never loses verified
evidence without a reason."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from retrac_local.agent.compress import apply_update, bound_size
from retrac_local.agent.trajectory import Sentence
from retrac_local.contract.schemas import StateUpdate
from retrac_local.contract.state import Evidence, ResearchState
from retrac_local.corpus.base import Chunk
from retrac_local.rules.book import RuleBook
from tests.scripts import update

Q = "In which year was the engineer who designed the Karn Point Lighthouse born?"
TEXTS = {
    "karn#0": "The tower was designed by the civil engineer Ada Vellacott.",
    "ada#0": "She was born on 3 May 1849 in Port Saltry.",
    "jonas#0": "Jonas Pell was a lighthouse engineer born in 1856 in Orley.",
}
SENTENCES = [
    Sentence(Chunk(cid, cid.split("#")[0], cid.split("#")[0].title(), "x", 0, 0, len(t), t), t)
    for cid, t in TEXTS.items()
]
PREVIOUS = ResearchState(
    question=Q,
    constraints=["Karn Point Lighthouse"],
    iteration=1,
    evidence=[
        Evidence(
            id="E1",
            fact="Ada Vellacott designed the tower",
            source="karn#0",
            quote=TEXTS["karn#0"],
            verified="yes",
            round=1,
        ),
        Evidence(
            id="E2", fact="maybe 1850", source="ada#0", quote=TEXTS["ada#0"], verified="partial", round=1
        ),
    ],
)
words = st.sampled_from(
    [
        "Ada",
        "Vellacott",
        "Jonas",
        "Pell",
        "born",
        "1849",
        "1856",
        "1901",
        "designed",
        "tower",
        "Orley",
        "Port",
        "Saltry",
        "engineer",
        "the",
        "in",
        "was",
    ]
)
facts = st.one_of(
    st.sampled_from(list(TEXTS.values())),
    st.lists(words, min_size=1, max_size=12).map(" ".join),
    st.text(max_size=60),
)


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(
    new=st.lists(facts, max_size=4),
    drop=st.lists(st.sampled_from(["E1", "E2"]), max_size=2, unique=True),
    answer=st.one_of(st.none(), st.text(max_size=20)),
    uncertainties=st.lists(st.text(max_size=30), max_size=2),
)
def test_whatever_the_compressor_writes_the_rules_hold(new, drop, answer, uncertainties) -> None:
    raw = update(facts=new, answer=answer, uncertainties=uncertainties, drop=drop)
    state, _ = apply_update(PREVIOUS, StateUpdate.model_validate(raw), SENTENCES, 2, [], RuleBook())
    assert (
        state.question == Q and state.constraints == PREVIOUS.constraints
    )  # the goal is copied, never rewritten
    ids = [e.id for e in state.evidence]
    assert len(ids) == len(set(ids))
    for e in state.evidence:  # every quote is a source sentence, verbatim
        assert e.quote == TEXTS[e.source]
        assert e.verified in ("yes", "partial")
    added = [e for e in state.evidence if e.round == 2]
    if not added:  # verified evidence goes only when the round brought a reason
        assert "E1" in ids
    small = bound_size(state, 120, lambda text: len(text) // 4)
    assert small.question == Q and small.constraints == state.constraints
    assert len(small.render()) // 4 <= 120 or not small.failures and len(small.uncertainties) <= 1
