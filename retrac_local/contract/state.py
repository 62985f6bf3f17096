"""The research state: the only memory that crosses from one round to the next.

Code owns `question`, `constraints`, `iteration` and the evidence list (ids, sources, quotes and
their verification); the compressor model writes the rest through a `StateUpdate` (see
`agent/compress.py`). Every write is validated.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

from retrac_local.agent.question import Question, parse

if TYPE_CHECKING:
    from retrac_local.corpus.base import Chunk

Verified = Literal["yes", "partial", "no"]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Evidence(Strict):
    """A fact with its exact quote and the chunk it comes from."""

    id: str = Field(description="stable id within a run, E1, E2, …")
    fact: str = Field(description="the fact, in the model's words")
    source: str = Field(description="chunk id the quote comes from; must exist in the corpus")
    quote: str = Field(description="exact text of the source chunk")
    verified: Verified = Field(
        "no",
        description="yes: the quote occurs in the source verbatim; partial: the model's quote was close and was "
        "replaced by the source's own text; no: not checked against the source",
    )
    round: int = Field(0, ge=0, description="round that added it")
    title: str = Field("", description="title of the source document, set by code")


class Conclusion(Strict):
    text: str
    evidence_ids: list[str] = Field(default_factory=list)
    inference: bool = Field(False, description="true when this goes beyond what the evidence states")


class Conflict(Strict):
    """Two verified facts from different sources that disagree (found by code, agent/conflicts.py)."""

    about: str = Field(description="the subject and the event, e.g. 'Ada Vellacott born'")
    evidence_ids: list[str] = Field(description="the evidence on each side")
    values: list[str] = Field(description="what each side states, in the order of evidence_ids")


class ResearchState(Strict):
    question: str = Field(description="the task, verbatim; never rewritten")
    constraints: list[str] = Field(default_factory=list, description="verbatim spans of the question")
    answer: str | None = None
    conclusions: list[Conclusion] = Field(default_factory=list)
    evidence: list[Evidence] = Field(default_factory=list)
    uncertainties: list[str] = Field(default_factory=list)
    failures: list[str] = Field(default_factory=list)
    next_plan: list[str] = Field(default_factory=list)
    conflicts: list[Conflict] = Field(default_factory=list, description="sources that disagree; set by code")
    iteration: int = Field(0, ge=0)

    @property
    def asked(self) -> Question:
        """The question, parsed once (`agent/question.py`): what every later stage reads of it."""
        return parse(self.question)

    def evidence_by_id(self) -> dict[str, Evidence]:
        return {e.id: e for e in self.evidence}

    def render(self) -> str:
        """Compact text of the state for a prompt; stable order so prompts share prefixes."""
        lines = [f"Question: {self.question}"]
        if self.constraints:
            lines.append("Constraints: " + " | ".join(self.constraints))
        lines.append(f"Round: {self.iteration}")
        lines.append(f"Current answer: {self.answer if self.answer else '(none yet)'}")
        lines.append("Evidence:" if self.evidence else "Evidence: (none yet)")
        for e in self.evidence:
            where = f"{e.title}, {e.source}" if e.title else e.source
            lines.append(f'  [{e.id}] ({where}, verified={e.verified}) {e.fact} — "{e.quote}"')
        if self.conflicts:
            lines.append("Sources disagree:")
            lines.extend(
                f"  - {c.about}: "
                + " against ".join(f"{v} [{i}]" for i, v in zip(c.evidence_ids, c.values, strict=True))
                for c in self.conflicts
            )
        if self.conclusions:
            lines.append("Conclusions:")
            for c in self.conclusions:
                tag = " (inference)" if c.inference else ""
                refs = ",".join(c.evidence_ids) or "no evidence"
                lines.append(f"  - {c.text}{tag} [{refs}]")
        for title, items in (
            ("Open questions", self.uncertainties),
            ("Dead ends (do not repeat)", self.failures),
            ("Planned next", self.next_plan),
        ):
            if items:
                lines.append(f"{title}:")
                lines.extend(f"  - {item}" for item in items)
        return "\n".join(lines)

    def render_for_answer(self) -> str:
        """What the final answer is drawn from: each fact with its quote, the conclusions that state
        no more than the evidence, and the draft answer marked as one to check. The model's
        inferences are left out: a wrong one ("X aided them") outvotes a quote that says who did."""
        lines = ["Evidence:" if self.evidence else "Evidence: (none)"]
        lines.extend(f'  [{e.id}] ({e.title or e.source}) {e.fact} — "{e.quote}"' for e in self.evidence)
        stated = [c for c in self.conclusions if not c.inference]
        if stated:
            lines.append("Conclusions:")
            lines.extend(f"  - {c.text} [{','.join(c.evidence_ids)}]" for c in stated)
        if self.answer:
            lines.append(f"Draft answer from the notes (check it against the evidence): {self.answer}")
        return "\n".join(lines)


def next_evidence_id(evidence: list[Evidence]) -> str:
    """The id a new piece of evidence gets: one past the highest E number held."""
    taken = [int(e.id[1:]) for e in evidence if e.id[1:].isdigit()]
    return f"E{max(taken, default=0) + 1}"


def quoted(evidence: list[Evidence], chunk: Chunk, sentence: str, round: int) -> Evidence:
    """A sentence of a stored chunk as the next piece of evidence after `evidence`, made by code: its
    quote is the sentence as stored, so it is verified by construction, and its fact is the sentence
    itself (nothing restated, nothing to drift)."""
    return Evidence(
        id=next_evidence_id(evidence),
        fact=sentence,
        source=chunk.chunk_id,
        quote=sentence,
        verified="yes",
        round=round,
        title=chunk.subject,
    )
