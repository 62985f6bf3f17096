"""Compression: fold the previous state and a round's trajectory into the next state.

The compressor model writes a `StateUpdate`, constrained by grammar. Code attaches each new fact to
the sentence of the round's texts that supports it best and stores that sentence, verbatim, as the
quote (a fact no sentence supports is rejected). Code then merges the update into the previous
state: it assigns evidence ids, merges duplicates, keeps failures, copies the question and
constraints, repairs drift and bounds the size.
An update with problems is sent back with the problems listed (at most `retries` times); after that
its valid part is kept and the rest recorded. An update that never parses leaves the previous state
in place, with the failure recorded.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from retrac_local.agent import prompts
from retrac_local.agent.conflicts import record_conflicts
from retrac_local.agent.diff import StateDiff, diff_states, repair_drift
from retrac_local.agent.linking import anchored_evidence, backed, mentions, missing_link
from retrac_local.agent.policy import reask
from retrac_local.agent.trajectory import Relevance, RoundRecord, Sentence, render_for_compression
from retrac_local.agent.verify import normalise, support, support_level, unfaithful
from retrac_local.contract.schemas import StateUpdate, state_update_schema
from retrac_local.contract.state import Conclusion, Evidence, ResearchState, next_evidence_id, quoted
from retrac_local.errors import ContextOverflowError, StructuredOutputError
from retrac_local.llm.base import LLM, Message
from retrac_local.rules.answers import wrong_kind_question
from retrac_local.rules.book import RuleBook
from retrac_local.text import STOP_WORDS, long_words_of, words_of

MAX_FAILURES = 8
_LEADING_TITLE = re.compile(r"^\s*\((?:[^()]|\([^()]*\))*\)\s*")


@dataclass
class CompressionOutcome:
    state: ResearchState
    diff: StateDiff
    attempts: list[dict[str, Any]] = field(default_factory=list)  # per attempt: problems found
    rejected: list[str] = field(default_factory=list)  # evidence the code refused, with reasons
    failed: bool = False  # no attempt produced a usable update
    sentences_left_out: int = 0  # sentences of the round's texts not shown to the compressor


def apply_update(
    prev: ResearchState,
    update: StateUpdate,
    sentences: list[Sentence],
    iteration: int,
    round_failures: list[str],
    rules: RuleBook,
) -> tuple[ResearchState, list[str]]:
    """Merge `update` into `prev`; returns the new state and the problems found (rejected items)."""
    problems: list[str] = []
    evidence = list(prev.evidence)
    added = 0
    for n, item in enumerate(update.new_evidence, start=1):
        fact = _LEADING_TITLE.sub("", item.fact).strip()  # models copy the "(Title)" the prompt shows
        if rules.on("compress.title_fact"):
            titled = _statement_for_title(fact, sentences, prev.question)
            if titled:
                rules.fired("compress.title_fact", f"the title {fact!r} read as its sentence {titled[:80]!r}")
            fact = titled or fact
        grounded = _ground(fact, sentences)
        if grounded is None and _restates(fact, prev.evidence):
            continue  # a fact the state already holds, restated: nothing to add and nothing invented
        if grounded is None:  # a compound fact ("A was born in 1923, while B was born in 1939"): each part
            parts = (
                [p.strip() for p in _CLAUSE.split(fact) if len(p.split()) >= 3]
                if rules.on("compress.split_compound")
                else []
            )
            grounded_parts = [_ground(p, sentences) for p in parts] if len(parts) > 1 else []
            found = [g for g in grounded_parts if g is not None]
            known = [
                p
                for p, g in zip(parts, grounded_parts, strict=False)
                if g is None and _restates(p, prev.evidence)
            ]
            if not grounded_parts or len(found) + len(known) < len(grounded_parts):
                problems.append(
                    f"new_evidence {n}: no sentence found in this round states {fact!r}; "
                    "state only facts the sentences give, with their exact names and numbers"
                )
                continue
            rules.fired("compress.split_compound", f"{fact[:80]!r} grounded as {len(found)} clause(s)")
        else:
            found = [grounded]
        for part, level, best in found:
            if _duplicate(evidence, best.chunk.chunk_id, best.text):
                continue
            evidence.append(
                Evidence(
                    id=next_evidence_id(evidence),
                    fact=part,
                    source=best.chunk.chunk_id,
                    quote=best.text,
                    verified=level,
                    round=iteration,
                    title=best.chunk.subject,
                )
            )
            added += 1
    ids = {e.id for e in evidence}
    dropped = {i for i in update.drop_evidence if i in ids}
    # Verified evidence may be dropped only when the round brought new evidence (the reason);
    # otherwise repair_drift restores it.
    levels = {e.id: e.verified for e in evidence}
    allowed_drops = dropped if added else {i for i in dropped if levels[i] != "yes"}
    evidence = [e for e in evidence if e.id not in dropped]
    ids = {e.id for e in evidence}
    conclusions = [
        Conclusion(
            text=c.text.strip(), evidence_ids=[i for i in c.evidence_ids if i in ids], inference=c.inference
        )
        for c in update.conclusions
        if c.text.strip()
    ]
    failures = _dedupe([*prev.failures, *round_failures, *(f.strip() for f in update.failures if f.strip())])
    answer = (update.answer or "").strip() or prev.answer
    new_state = ResearchState(
        question=prev.question,
        constraints=prev.constraints,
        answer=answer,
        conclusions=conclusions,
        evidence=evidence,
        uncertainties=_dedupe([u.strip() for u in update.uncertainties if u.strip()]),
        failures=failures[-MAX_FAILURES:],
        next_plan=_dedupe([p.strip() for p in update.next_plan if p.strip()]),
        iteration=iteration,
    )
    if not rules.on("compress.drift_repair"):
        return new_state, problems
    repaired, events = repair_drift(prev, new_state, allowed_drops)
    for event in events:
        rules.fired("compress.drift_repair", event)
    return repaired, problems + [f"drift: {e}" for e in events] if events else problems


_CLAUSE = re.compile(r",?\s+(?:while|whereas|but|and then)\s+|;\s+|,\s+and\s+(?=[A-Z])")


def _ground(fact: str, sentences: list[Sentence]) -> tuple[str, Literal["yes", "partial"], Sentence] | None:
    """The sentence that supports `fact` best, with the support level; None when none does."""
    scored = [(support(fact, s.text, s.chunk.subject), s) for s in sentences]
    score, best = max(scored, key=lambda pair: pair[0], default=(0.0, None))
    level = support_level(score)
    return None if best is None or level is None else (fact, level, best)


def _statement_for_title(fact: str, sentences: list[Sentence], question: str) -> str | None:
    """When the "fact" is only a document's title ("Rio Sombre (opera)"), the model meant that
    document and stated nothing of it: its sentence that shares most words with the question (the
    first in reading order on a tie), verbatim, is the fact. None when the fact is not a bare title."""
    words = [w.lower() for w in words_of(fact)]
    if not words:
        return None
    titled = [
        s
        for s in sentences
        if set(words) <= {w.lower() for w in words_of(s.chunk.subject)}
        and not unfaithful(s.text, s.text, s.chunk.subject)
    ]
    asked = set(long_words_of(question.lower())) - STOP_WORDS
    best = max(titled, key=lambda s: len(asked & set(long_words_of(s.text.lower()))), default=None)
    return best.text if best is not None else None


def _restates(fact: str, evidence: list[Evidence]) -> bool:
    """Whether a quote already in the state supports `fact`: the compressor often restates what it
    was shown as the state, and asking it again for that would waste a retry (a round's texts no
    longer hold an earlier round's sentence)."""
    return any(support_level(support(fact, e.quote, e.title)) is not None for e in evidence)


def _duplicate(evidence: list[Evidence], source: str, quote: str) -> bool:
    q = normalise(quote)
    return any(e.source == source and (q in normalise(e.quote) or normalise(e.quote) in q) for e in evidence)


def _dedupe(items: list[str]) -> list[str]:
    """Keep the first of items equal up to case, in order."""
    first: dict[str, str] = {}
    for item in items:
        first.setdefault(item.lower(), item)
    return list(first.values())


def round_failures(record: RoundRecord) -> list[str]:
    """Dead ends code can see without the model: searches that found nothing, failed tools."""
    return [f"{s.tool}({s.argument!r}): {s.error}" for s in record.steps if s.error]


def compress(
    compressor: LLM,
    prev: ResearchState,
    record: RoundRecord,
    *,
    max_tokens: int,
    max_sentences: int,
    retries: int,
    state_max_tokens: int,
    rules: RuleBook,
    relevance: Relevance | None = None,
) -> CompressionOutcome:
    trajectory, left_out, sentences = render_for_compression(record, prev.question, max_sentences, relevance)
    # The first hop, when the notes lack it, is added by code before the model writes: the model
    # then builds on it ("designed by Ada Vellacott" → her birth) instead of grabbing a look-alike.
    base = add_anchor(prev, sentences, record.iteration) if rules.on("compress.anchor") else prev
    if base is not prev:
        rules.fired("compress.anchor", f"added {base.evidence[-1].id}: {base.evidence[-1].quote[:100]!r}")
    schema = state_update_schema(bool(sentences), [e.id for e in base.evidence])
    messages: list[Message] = [
        {"role": "system", "content": prompts.render("compressor_system")},
        {
            "role": "user",
            "content": prompts.render(
                "compressor_user",
                state=base.render(),
                question=prev.question,
                iteration=record.iteration,
                trajectory=trajectory,
            ),
        },
    ]
    attempts: list[dict[str, Any]] = []
    best: tuple[ResearchState, list[str]] | None = None
    failures = round_failures(record)
    for _ in range(retries + 1):
        try:
            generation = compressor.generate(messages, schema=schema, max_tokens=max_tokens)
        except (StructuredOutputError, ContextOverflowError) as e:
            attempts.append({"problems": [str(e)]})
            output = getattr(e, "output", "")
            if isinstance(e, ContextOverflowError):
                break
            messages += reask(
                output, prompts.render("compressor_retry", problems=[str(e) + "; write less"]), 2000
            )
            continue
        state, problems = apply_update(base, generation.parsed, sentences, record.iteration, failures, rules)
        attempts.append({"problems": problems})
        best = (state, problems)
        fixable = [p for p in problems if not p.startswith("drift:")]
        # A retry costs a whole compression (half a minute on a CPU): it is asked for only when the
        # round would otherwise learn nothing; a rejected fact beside accepted ones is recorded.
        if not fixable or len(state.evidence) > len(base.evidence):
            break
        messages += reask(generation.text, prompts.render("compressor_retry", problems=fixable))
    if best is None:
        kept = prev.model_copy(
            update={
                "iteration": record.iteration,
                "failures": _dedupe(
                    [
                        *prev.failures,
                        *failures,
                        f"round {record.iteration}: compression failed ({attempts[-1]['problems'][0][:120]})",
                    ]
                )[-MAX_FAILURES:],
            }
        )
        return CompressionOutcome(
            kept, diff_states(prev, kept), attempts, failed=True, sentences_left_out=left_out
        )
    state, problems = best
    if rules.on("compress.answer_quote"):
        quoted = add_answer_quote(state, sentences, record.iteration)
        if quoted is not state:
            rules.fired("compress.answer_quote", f"added {quoted.evidence[-1].id}, stating {state.answer!r}")
        state = quoted
    if rules.on("compress.open_question"):
        flagged = flag_unconnected(state)
        if flagged is not state:
            rules.fired("compress.open_question", flagged.uncertainties[0])
        state = flagged
    state = bound_size(state, state_max_tokens, compressor.count_tokens)
    if rules.on("compress.conflicts"):
        found = record_conflicts(state)
        if found.conflicts and found.conflicts != prev.conflicts:
            rules.fired("compress.conflicts", "; ".join(c.about for c in found.conflicts)[:200])
        state = found
    diff = diff_states(prev, state)
    diff.drift_repaired = [p.removeprefix("drift: ") for p in problems if p.startswith("drift:")]
    rejected = [p for p in problems if not p.startswith("drift:")]
    return CompressionOutcome(state, diff, attempts, rejected=rejected, sentences_left_out=left_out)


def add_anchor(state: ResearchState, sentences: list[Sentence], iteration: int) -> ResearchState:
    """When no verified evidence is about a name the question asks about yet, code adds the sentence
    of the round's texts on that name that shares most words with the question (the first hop of a
    multi-hop question: "The tower was designed by …"); small models skip it for a sentence that
    looks like an answer."""
    names = state.asked.names
    if not names or anchored_evidence(state):
        return state
    name_words = {w for n in names for w in words_of(n.lower())}
    asked = {w for w in long_words_of(state.question.lower()) if w not in name_words} - STOP_WORDS
    best, best_score = None, 0
    for s in sentences:
        if not any(mentions(s.chunk.subject, n) for n in names) or unfaithful(
            s.text, s.text, s.chunk.subject
        ):
            continue  # not on a name asked about, or not a statement (a heading, a question)
        score = len(asked & set(long_words_of(s.text.lower())))
        if score > best_score and not _duplicate(state.evidence, s.chunk.chunk_id, s.text):
            best, best_score = s, score
    if best is None:
        return state
    anchor = quoted(state.evidence, best.chunk, best.text, iteration)
    return state.model_copy(update={"evidence": [*state.evidence, anchor]})


def add_answer_quote(state: ResearchState, sentences: list[Sentence], iteration: int) -> ResearchState:
    """When no verified evidence states the compressor's answer, code adds the sentence of the
    round's texts that does: the one holding every word of the answer and the most words of the
    question. Small models often answer from a sentence they then fail to state as a fact (a
    compound fact is rejected whole); the sentence itself, verbatim, is the evidence. An answer no
    sentence states gets none, and stays unsupported."""
    if not state.answer:
        return state
    words = [w for w in words_of(normalise(state.answer).lower()) if len(w) >= 3 or w.isdigit()]
    if not words or normalise(state.answer).lower() in ("yes", "no"):
        return state
    # A conclusion citing evidence does not count here: the quote itself must state the answer.
    if any(
        all(w in words_of(normalise(f"{e.quote} {e.fact}").lower()) for w in words) for e in backed(state)
    ):
        return state
    asked = set(long_words_of(state.question.lower())) - STOP_WORDS
    holding = [
        s
        for s in sentences
        if all(w in words_of(normalise(s.text).lower()) for w in words)
        and not unfaithful(s.text, s.text, s.chunk.subject)
    ]
    if not holding:
        return state
    best = max(holding, key=lambda s: len(asked & set(long_words_of(f"{s.chunk.subject} {s.text}".lower()))))
    if _duplicate(state.evidence, best.chunk.chunk_id, best.text):
        return state
    quote = quoted(state.evidence, best.chunk, best.text, iteration)
    return state.model_copy(update={"evidence": [*state.evidence, quote]})


def flag_unconnected(state: ResearchState) -> ResearchState:
    """An answer no verified evidence connects to what the question names, or of another kind than
    the question asks, gets an open question written by code, so the next round looks for the link
    or the real answer instead of confirming this one."""
    gaps = [
        g
        for g in (
            missing_link(state),
            wrong_kind_question(state.question, state.answer or "", state.evidence) if state.answer else None,
        )
        if g
    ]
    if not gaps:
        return state
    return state.model_copy(update={"uncertainties": _dedupe([*gaps, *state.uncertainties])})


def bound_size(state: ResearchState, max_tokens: int, count_tokens: Callable[[str], int]) -> ResearchState:
    """Shrink the state until it renders under `max_tokens`: failures and uncertainties go first,
    then conclusions and unverified evidence; verified evidence and constraints last, never the question."""
    shrinkers: list[Callable[[ResearchState], ResearchState | None]] = [
        lambda s: s.model_copy(update={"failures": s.failures[1:]}) if len(s.failures) > 2 else None,
        lambda s: (
            s.model_copy(update={"uncertainties": s.uncertainties[:-1]}) if len(s.uncertainties) > 1 else None
        ),
        lambda s: s.model_copy(update={"next_plan": s.next_plan[:-1]}) if len(s.next_plan) > 1 else None,
        lambda s: (
            s.model_copy(update={"conclusions": s.conclusions[:-1]}) if len(s.conclusions) > 1 else None
        ),
        lambda s: _drop_oldest(s, ("no", "partial")),
        lambda s: s.model_copy(update={"failures": s.failures[1:]}) if s.failures else None,
        lambda s: _drop_oldest(s, ("yes",)),
    ]
    while count_tokens(state.render()) > max_tokens:
        for shrink in shrinkers:
            smaller = shrink(state)
            if smaller is not None:
                state = smaller
                break
        else:
            return state
    return state


def _drop_oldest(state: ResearchState, levels: tuple[str, ...]) -> ResearchState | None:
    for e in state.evidence:
        if e.verified in levels:
            return state.model_copy(update={"evidence": [x for x in state.evidence if x.id != e.id]})
    return None
