"""Code proposes the searches, the model picks one.

A 1.5B planner writes poor queries (it repeated one search 24 times in a row) but chooses well among
a short list. Before each planner step code lists candidate searches built from what the run holds,
best first:

1. leads: names that verified evidence states and no search has covered (the entity a bridge
   question goes through: "designed by Ada Vellacott" → search "Ada Vellacott");
2. titles of documents of the collection that the sentences this round's searches found name, and
   that no one has read yet (`agent/titles.py`), then the other names in those sentences, each
   group ranked by how much its sentence bears on the question;
3. each name the question itself names, alone (a comparison needs each side searched);
4. the state's planned next searches and open questions.

A candidate that repeats a search of the run (same words in any order, see `query_key`) is never
offered, and a free query that repeats one is replaced by the best candidate, so the run never
searches the same words twice.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from pydantic import Field

from retrac_local.agent.linking import _entity, backed, mentions, names_in
from retrac_local.agent.titles import TitleIndex
from retrac_local.agent.toolbox import query_key
from retrac_local.agent.verify import addresses_the_model
from retrac_local.contract.schemas import AnyAction, Written, action_schema
from retrac_local.contract.state import ResearchState
from retrac_local.contract.tools import more_in_document
from retrac_local.corpus.base import Chunk
from retrac_local.corpus.chunking import sentences
from retrac_local.text import MONTHS, STOP_WORDS, long_words_of, words_of

MAX_CANDIDATES = 6
LEAD = ", not searched yet"  # the origin of a lead: a name verified evidence states
TITLED = "a document of the collection, named in "  # the origin of a title found in a hit's sentences
MAX_WORDS_PER_SENTENCE = 40
SENTENCES_PER_HIT = 2
NUMBERS = (1, 2, 3, 4, 5, 6)


class PickArgs(Written):
    tool: Literal["pick"]
    number: Literal[NUMBERS] = Field(description="the number of a candidate search")  # type: ignore[valid-type]


def planner_action_schema() -> type[AnyAction]:
    """One planner step of Re-TRAC: a candidate by number, or a tool call of its own."""
    return action_schema(
        PickArgs,
        name="PlannerAction",
        doc="One planner step of Re-TRAC: a candidate by number, or a tool call of its own.",
    )


@dataclass(frozen=True)
class Candidate:
    query: str
    origin: str  # why code proposes it, shown to the planner and recorded

    def to_dict(self) -> dict[str, str]:
        return {"query": self.query, "origin": self.origin}


def leads(state: ResearchState, searched: set[str], first_hop_only: bool = False) -> list[Candidate]:
    """Names stated by verified evidence that no search has covered and that are neither asked about
    by the question nor the subject of evidence already held. Evidence about a question name comes
    first: it names the next hop (`first_hop_only`: only those)."""
    asked = state.asked.names
    about = {_entity(e).lower() for e in backed(state) if e.title}
    first_hop = [e for e in backed(state) if any(mentions(f"{e.title} {e.quote}", n) for n in asked)]
    rest = [] if first_hop_only else [e for e in backed(state) if e not in first_hop]
    found: list[Candidate] = []
    for e in [*first_hop, *rest]:
        for name in names_in(e.quote):
            if (
                name.lower() in about
                or any(mentions(name, q) or mentions(q, name) for q in asked)
                or _covered(name, searched)
                or not _namelike(name)
            ):
                continue
            found.append(Candidate(name, f"named in {e.id}{LEAD}"))
    return found


def propose(
    state: ResearchState,
    searched: set[str],
    round_chunks: list[Chunk],
    gap: str = "",
    titles: TitleIndex | None = None,
) -> list[Candidate]:
    """The candidate searches for the next planner step, best first, none repeating a search
    (`searched`: the `query_key`s of the run's searches; `titles`: the collection's)."""
    asked = state.asked.names
    # A name the question asks about that no document read so far is about comes before the names
    # in the texts: a comparison needs each side's own document.
    read = [c.title for c in round_chunks] + [e.title for e in backed(state) if e.title]
    unread = [n for n in asked if not any(mentions(t, n) for t in read)]
    out: list[Candidate] = list(leads(state, searched))
    out += [Candidate(name, "the question names it; no document about it read yet") for name in unread]
    first = len(out)  # leads and unread question names: the group before titles and names
    # Names from the sentences that state the question's relation come first, whichever hit they are
    # in: the question's words less those of the names it asks about ("year engineer designed
    # born"), so that "The tower was designed by the engineer Ada Vellacott" comes before "Karn Point
    # Lighthouse stands on Hesk Island". A name whose document was read already is still offered:
    # searching it brings the rest of that document into the round.
    asked_words = {w for n in asked for w in words_of(n.lower())}
    relation = _content(f"{state.question} {gap}") - asked_words
    found = relevant_sentences(round_chunks, " ".join(sorted(relation)))
    ranked = sorted(range(len(found)), key=lambda i: (-len(relation & _content(found[i][1])), i))
    # Titles written as names first; a title in lower case ("the marsh harrier") or a broad subject
    # ("United States") after the other names.
    read_titles = {t.lower() for t in read}
    titled: list[Candidate] = []
    unmarked: list[Candidate] = []
    for chunk, text in (found[i] for i in ranked):
        for match in titles.find(text) if titles is not None else ():
            if (
                match.title.lower() in read_titles
                or not _namelike(match.written)
                or any(mentions(match.written, q) or mentions(q, match.written) for q in asked)
            ):
                continue
            (titled if match.named and not match.broad else unmarked).append(
                Candidate(match.title, f"{TITLED}{chunk.title}")
            )
    out += titled
    for chunk, text in (found[i] for i in ranked):
        opening = text.split()[0].strip(".,;:\"'") if text.split() else ""
        for name in names_in(text):
            if (
                name == opening  # one capitalised word opening a sentence ("Produced by …") is no name
                or any(mentions(name, q) or mentions(q, name) for q in asked)
                or not _namelike(name)
            ):
                continue
            out.append(Candidate(name, f"named in {chunk.title}"))
    out += unmarked
    out += [Candidate(name, "the question names it") for name in asked if name not in unread]
    # A plan or a question is offered as a search only when it reads like one: a few words, not a
    # copy of a tool's output (a small compressor sometimes pastes a search result into its plan).
    out += [Candidate(p, "planned next") for p in state.next_plan if _searchlike(p)]
    out += [Candidate(u, "open question") for u in state.uncertainties if _searchlike(u)]
    # A name whose words a search other than the question itself already held is covered ("Ada
    # Vellacott" after "Ada Lucia Vellacott").
    made = searched - {query_key(state.question)}
    unique: dict[str, Candidate] = {}
    for c in out:
        key = query_key(c.query)
        if key and key not in searched and key not in unique and not _covered(c.query, made):
            unique[key] = c
    # A name of several words names one thing ("Tessel Harbour Bridge", "Ada Vellacott"); one
    # capitalised word is often a nationality, a place or a common word ("Scottish", "Orrin",
    # "Harbour"): evidence's
    # leads first, then names of several words, then single words, each group in its own order.
    # Leads, then the question's unread names and the titles the texts name, then the rest.
    early = {query_key(c.query) for c in [*out[:first], *titled]}
    ordered = sorted(
        unique.values(),
        key=lambda c: (
            not c.origin.endswith(LEAD),
            query_key(c.query) not in early,
            len(c.query.split()) == 1,
        ),
    )
    return ordered[:MAX_CANDIDATES]


def relevant_sentences(
    chunks: list[Chunk], query: str, per_chunk: int = SENTENCES_PER_HIT
) -> list[tuple[Chunk, str]]:
    """Per chunk, the sentences sharing most words with `query`, in reading order."""
    wanted = _content(query)
    out: list[tuple[Chunk, str]] = []
    for chunk in chunks:
        found = [
            s
            for s in sentences(chunk.text, apart=addresses_the_model)
            if len(s.split()) >= 3 and not addresses_the_model(s)
        ]
        ranked = sorted(range(len(found)), key=lambda i: (-len(wanted & _content(found[i])), i))[:per_chunk]
        out += [(chunk, found[i]) for i in sorted(ranked)]
    return out


def compact(chunks: list[Chunk], query: str, header: str, more: dict[str, int] | None = None) -> str:
    """A search's hits for the planner: each hit's title (section, page, and how many more hits its
    document has) and the sentences most relevant to the question and the step's gap, not the whole
    chunk (the compressor reads the full texts)."""
    lines = [header]
    by_chunk: dict[str, list[str]] = {}
    for chunk, text in relevant_sentences(chunks, query):
        words = text.split()
        cut = " ".join(words[:MAX_WORDS_PER_SENTENCE]) + (" …" if len(words) > MAX_WORDS_PER_SENTENCE else "")
        by_chunk.setdefault(chunk.chunk_id, []).append(cut)
    for chunk in chunks:
        lines.append(
            f"[{chunk.chunk_id}] {chunk.label}{more_in_document((more or {}).get(chunk.chunk_id, 0))}: "
            + " ".join(by_chunk.get(chunk.chunk_id, []))
        )
    return "\n".join(lines)


def chosen(query: str, offered: list[Candidate]) -> Candidate | None:
    """The candidate a free query copies, origin and all ("Ada Vellacott — named in E1")."""
    for c in offered:
        rest = (
            query.strip()[len(c.query) :].strip()
            if query.strip().lower().startswith(c.query.lower())
            else None
        )
        if rest is not None and (not rest or rest[0] in "(—-[" or rest.startswith("named in")):
            return c
    return None


def render(candidates: list[Candidate]) -> str:
    if not candidates:
        return "Candidate searches: none left; write a new query, open a chunk, or finish."
    lines = ["Candidate searches (pick one by number, or write a new query):"]
    lines += [f"{n}. {c.query} — {c.origin}" for n, c in enumerate(candidates, 1)]
    return "\n".join(lines)


def _content(text: str) -> set[str]:
    return set(long_words_of(text.lower())) - STOP_WORDS


def _covered(name: str, searched: set[str]) -> bool:
    """A search holding all of the name's words has covered it."""
    words = set(query_key(name).split())
    return any(words <= set(key.split()) for key in searched)


def _searchlike(text: str) -> bool:
    return len(text.split()) <= 12 and len(_content(text)) >= 2 and not re.search(r"→|\[|#\d", text)


def _namelike(name: str) -> bool:
    """A name worth a search: not a lone short word, a month or a number."""
    words = name.split()
    return not (len(words) == 1 and (len(name) < 4 or name.lower() in _NOT_LEADS)) and not name.isdigit()


_NOT_LEADS = frozenset(  # single words that name no entity worth a search
    [
        *MONTHS,
        "english",
        "american",
        "british",
        "french",
        "german",
    ]
)
