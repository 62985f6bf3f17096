from hypothesis import given, settings
from hypothesis import strategies as st

from retrac_local.corpus.chunking import chunk_text, sentences


def test_chunks_are_exact_slices_and_cover_every_word() -> None:
    text = " ".join(f"Sentence number {i} has a few words in it." for i in range(60))
    spans = chunk_text(text, size=40, overlap=10)
    assert len(spans) > 3
    covered = set()
    for start, end in spans:
        piece = text[start:end]
        assert piece == piece.strip() and piece
        covered.update(range(start, end))
    assert all(i in covered for i, ch in enumerate(text) if not ch.isspace())
    # consecutive chunks overlap (a fact at a boundary appears whole in one of them)
    assert any(spans[i + 1][0] < spans[i][1] for i in range(len(spans) - 1))


def test_long_sentence_is_cut_by_words() -> None:
    text = "word " * 500
    spans = chunk_text(text, size=100, overlap=0)
    assert len(spans) == 5
    assert all(len(text[s:e].split()) == 100 for s, e in spans)


def test_sentences_skip_blank_and_normalise_space() -> None:
    assert sentences("One  two.\n\nThree\nfour!  ") == ["One two.", "Three four!"]


def test_a_sentence_does_not_end_at_an_initial_or_an_abbreviation() -> None:
    text = (
        "The Karn Point Lighthouse was designed by Ada J. Vellacott and Dr. Tomas Orrin. "
        "It was lit on Jan. 5, 1887 by the U.S. Lights Board, approx. two years late. "
        "It burned No. 3 oil.\n\nA new part starts here. Its second sentence."
    )
    assert sentences(text) == [
        "The Karn Point Lighthouse was designed by Ada J. Vellacott and Dr. Tomas Orrin.",
        "It was lit on Jan. 5, 1887 by the U.S. Lights Board, approx. two years late.",
        "It burned No. 3 oil.",
        "A new part starts here.",
        "Its second sentence.",
    ]


def test_a_sentence_still_ends_after_a_short_word_or_a_mark() -> None:
    assert sentences("Then he left! Why? No. Nobody knew it. Ada came.") == [
        "Then he left!",
        "Why?",
        "No.",
        "Nobody knew it.",
        "Ada came.",
    ]


def test_a_name_with_an_initial_is_not_cut_between_chunks() -> None:
    # 15 words hold "… Ada J." + "Vellacott." + the next "… Ada J." if "J." ended a sentence
    text = " ".join(f"Entry {i} was made by Ada J. Vellacott." for i in range(20))
    for start, end in chunk_text(text, size=15, overlap=0):
        assert not text[start:end].endswith(" J."), text[start:end]


@settings(max_examples=60, deadline=None)
@given(
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=3000),
    st.integers(5, 200),
    st.integers(0, 4),
)
def test_chunking_never_loses_text(text: str, size: int, overlap: int) -> None:
    spans = chunk_text(text, size=size, overlap=min(overlap, size - 1))
    words_in = text.split()
    words_out = [w for s, e in spans for w in text[s:e].split()]
    assert set(words_in) == set(words_out)
    assert all(0 <= s < e <= len(text) for s, e in spans)
