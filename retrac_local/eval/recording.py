"""Recorded runs, played back: the guard that a refactor changed no answer.

Given what it gets from outside, a run's code is deterministic. From outside come the models'
outputs and token counts, the collection's search results, chunks, neighbours and titles, and the
embedder's relevance scores. `record` runs questions on the real models and collection, with each
of those wrapped, and writes one tape per (question, mode). A tape holds every answer the code got,
and what the run made of them: the actions, states and diffs of each round, the answer and its
citations. `play` runs the tape's question on today's code, with the tape standing in for the
models, the collection and the embedder; `differences` names what came out otherwise.

A prompt that differs from the recorded one is a difference too: the model would have seen another
text, and the recorded output no longer answers it. A tape is JSON, gzipped; the titles of a
collection are written once beside its tapes (`titles.json.gz`), not in each. The tapes of a
published benchmark hold no copy of its corpus: `eval/detached.py` takes the texts out and reads
them back from the corpus's own file.

    python -m retrac_local.eval.recording record --questions Q.jsonl --limit 10 --out DIR
    python -m retrac_local.eval.recording play DIR     # every tape in DIR: differences, if any
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from retrac_local.config import REMOVED_SETTINGS, Settings
from retrac_local.contract.events import RunFinished, RunResult
from retrac_local.corpus.base import Chunk, Corpus, Hit
from retrac_local.errors import ContextOverflowError, RetracError, StructuredOutputError
from retrac_local.eval.tapes import (
    TITLES,
    Tape,
    TapedCall,
    TapedModel,
    digest,
    read_gz,
    tape_names,
    write_tape,
)
from retrac_local.llm.base import LLM, Generation, Message, Usage, completed
from retrac_local.modes import MODES
from retrac_local.runstore import RunStore

if TYPE_CHECKING:
    from retrac_local.api import Retrac
    from retrac_local.eval.questions import EvalQuestion

Relevance = Callable[[list[str], list[str]], list[float]]
# What differs from run to run of the same code: the clock, and the run's random id.
UNSTABLE = frozenset({"seconds", "llm_seconds", "created", "updated", "run_id"})
# The settings a run's behaviour depends on; where the files lie is not among them.
SECTIONS = (
    "planner",
    "compressor",
    "sampling",
    "budget",
    "retrieval",
    "state_max_tokens",
    "separate_kv_caches",
    "rules",
)
# Settings added since tapes were first recorded, at the value that behaves as the code before them
# did: a tape without one was recorded without it, and plays so.
ADDED_SINCE_RECORDING: dict[str, dict[str, Any]] = {
    "budget": {"answer_samples": 0, "first_reading_samples": 0}
}
# What a run writes that tapes recorded before it lack: compared only where the tape has it.
RESULT_KEYS_ADDED = ("rules_fired", "rule_log", "asked", "first_reading")
ROUND_STATS_ADDED = ("rules",)


class Diverged(Exception):  # noqa: N818 — not a RetracError: the run's own error handling must not catch it
    """Today's code asked for something the tape does not hold: its behaviour changed before here."""


def _prompt(
    messages: list[Message], schema: type[BaseModel] | None, max_tokens: int, temperature: float | None
) -> str:
    return digest([list(messages), schema.__name__ if schema else None, max_tokens, temperature])


# -- the models ---------------------------------------------------------------------------------
class RecordingLLM:
    """Passes every call to `inner` and writes down what it answered (an error included)."""

    def __init__(self, inner: LLM, taped: TapedModel) -> None:
        self.inner, self.taped = inner, taped
        self.name, self.n_ctx = inner.name, inner.n_ctx

    def count_tokens(self, text: str) -> int:
        n = self.inner.count_tokens(text)
        self.taped.tokens[digest(text)] = n
        return n

    def generate(
        self,
        messages: list[Message],
        *,
        schema: type[BaseModel] | None = None,
        max_tokens: int = 256,
        temperature: float | None = None,
    ) -> Generation[Any]:
        prompt = _prompt(messages, schema, max_tokens, temperature)
        try:
            generation = self.inner.generate(
                messages, schema=schema, max_tokens=max_tokens, temperature=temperature
            )
        except StructuredOutputError as e:  # the output is taped; parsing it again raises the same
            usage = e.usage if isinstance(e.usage, Usage) else Usage()
            self.taped.calls.append(
                TapedCall(prompt=prompt, text=e.output, finish_reason=e.finish_reason or "stop", usage=usage)
            )
            raise
        except ContextOverflowError as e:
            self.taped.calls.append(
                TapedCall(prompt=prompt, overflow=str(e), prompt_tokens=e.prompt_tokens, n_ctx=e.n_ctx)
            )
            raise
        self.taped.calls.append(
            TapedCall(
                prompt=prompt,
                text=generation.text,
                finish_reason=generation.finish_reason,
                usage=generation.usage,
            )
        )
        return generation


class TapeLLM:
    """Answers each call with the next taped one, if it was asked with the same prompt."""

    def __init__(self, role: str, taped: TapedModel) -> None:
        self.role, self.name, self.n_ctx = role, taped.name, taped.n_ctx
        self.calls: Iterator[TapedCall] = iter(taped.calls)
        self.tokens = taped.tokens
        self.n = 0

    def count_tokens(self, text: str) -> int:
        try:
            return self.tokens[digest(text)]
        except KeyError:
            raise Diverged(
                f"the {self.role} was asked to count a text it never counted: {text[:80]!r}"
            ) from None

    def generate(
        self,
        messages: list[Message],
        *,
        schema: type[BaseModel] | None = None,
        max_tokens: int = 256,
        temperature: float | None = None,
    ) -> Generation[Any]:
        self.n += 1
        taped = next(self.calls, None)
        if taped is None:
            raise Diverged(f"{self.role} call {self.n}: the recorded run made no such call")
        if taped.prompt != _prompt(messages, schema, max_tokens, temperature):
            raise Diverged(
                f"{self.role} call {self.n}: its prompt differs from the recorded one "
                f"(last message begins {messages[-1]['content'][:80]!r})"
            )
        if taped.overflow is not None:
            raise ContextOverflowError(taped.overflow, prompt_tokens=taped.prompt_tokens, n_ctx=taped.n_ctx)
        return completed(taped.text, taped.finish_reason, replace(taped.usage), schema)

    def left(self) -> int:
        return sum(1 for _ in self.calls)


# -- the collection and the embedder ------------------------------------------------------------
class RecordingCorpus:
    """Passes every question to `inner` and writes down its answer, keyed by the question."""

    def __init__(self, inner: Corpus, tape: Tape) -> None:
        self.inner, self.tape = inner, tape
        self.seen_titles: list[str] | None = None

    def search(self, query: str, k: int = 5) -> list[Hit]:
        hits = self.inner.search(query, k)
        self.tape.search[digest([query, k])] = [
            replace(h, chunk=replace(h.chunk), ranks=dict(h.ranks)) for h in hits
        ]
        return hits

    def get_chunk(self, chunk_id: str) -> Chunk | None:
        chunk = self.inner.get_chunk(chunk_id)
        self.tape.chunk[chunk_id] = replace(chunk) if chunk else None
        return chunk

    def open(self, ref: str, window: int = 1) -> list[Chunk]:
        chunks = self.inner.open(ref, window)
        self.tape.open[digest([ref, window])] = [replace(c) for c in chunks]
        return chunks

    def titles(self) -> list[str]:
        self.seen_titles = self.inner.titles()
        return self.seen_titles


class TapeCorpus:
    def __init__(self, tape: Tape, titles: list[str]) -> None:
        self.tape, self._titles = tape, titles

    def _missing(self, what: str) -> Diverged:
        return Diverged(f"the run asked the collection for {what}, which the recorded run never did")

    def search(self, query: str, k: int = 5) -> list[Hit]:
        hits = self.tape.search.get(digest([query, k]))
        if hits is None:
            raise self._missing(f"a search {query!r} (k={k})")
        return [replace(h, chunk=replace(h.chunk), ranks=dict(h.ranks)) for h in hits]

    def get_chunk(self, chunk_id: str) -> Chunk | None:
        if chunk_id not in self.tape.chunk:
            raise self._missing(f"the chunk {chunk_id!r}")
        chunk = self.tape.chunk[chunk_id]
        return replace(chunk) if chunk else None

    def open(self, ref: str, window: int = 1) -> list[Chunk]:
        chunks = self.tape.open.get(digest([ref, window]))
        if chunks is None:
            raise self._missing(f"{ref!r} opened (window {window})")
        return [replace(c) for c in chunks]

    def titles(self) -> list[str]:
        return self._titles  # one list each time, as a store gives: the agent indexes it once


def recording_relevance(inner: Relevance, taped: dict[str, list[float]]) -> Relevance:
    def relevance(texts: list[str], queries: list[str]) -> list[float]:
        scores = inner(texts, queries)
        taped[digest([texts, queries])] = list(scores)
        return scores

    return relevance


def tape_relevance(taped: dict[str, list[float]]) -> Relevance:
    def relevance(texts: list[str], queries: list[str]) -> list[float]:
        try:
            return list(taped[digest([texts, queries])])
        except KeyError:
            raise Diverged(f"relevance asked of {len(texts)} text(s) the recorded run never scored") from None

    return relevance


# -- what a run made ----------------------------------------------------------------------------
def stable(value: Any) -> Any:
    """`value` without what differs between two runs of the same code (times, the run's id)."""
    if isinstance(value, dict):
        return {k: stable(v) for k, v in value.items() if k not in UNSTABLE}
    if isinstance(value, list):
        return [stable(v) for v in value]
    return value


def outcome(result: RunResult, store: RunStore | None) -> dict[str, Any]:
    """The result, and for a Re-TRAC run every stored round (its actions, state, diff and stats)."""
    made: dict[str, Any] = {"result": stable(result.to_dict(with_calls=True))}
    if store is not None:
        made["rounds"] = stable(store.rounds(result.run_id))
    return json.loads(json.dumps(made))  # as a tape holds it: tuples as lists, keys as strings


def differences(expected: Any, actual: Any, path: str = "", limit: int = 8) -> list[str]:
    """Where `actual` is not `expected`, as paths ("rounds[1].state.answer: 'A' ≠ 'B'"), the first `limit`."""
    found: list[str] = []

    def walk(a: Any, b: Any, at: str) -> None:
        if len(found) >= limit or a == b:
            return
        if isinstance(a, dict) and isinstance(b, dict):
            for key in list(a) + [k for k in b if k not in a]:
                walk(a.get(key, "<absent>"), b.get(key, "<absent>"), f"{at}.{key}" if at else str(key))
        elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
            for i, (x, y) in enumerate(zip(a, b, strict=True)):
                walk(x, y, f"{at}[{i}]")
        else:
            found.append(f"{at}: {_short(a)} ≠ {_short(b)}")

    walk(expected, actual, path)
    return found


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 120 else text[:117] + "…"


# -- recording and playing ----------------------------------------------------------------------
def _run(
    mode: str,
    question: str,
    planner: LLM,
    compressor: LLM,
    corpus: Corpus,
    settings: Settings,
    store: RunStore,
    relevance: Relevance | None,
    rag_k: int,
) -> RunResult:
    from retrac_local.agent.loop import ResearchAgent
    from retrac_local.baselines.rag import RagAnswerer
    from retrac_local.baselines.react import ReactAgent

    if mode == "react":
        return ReactAgent(planner, corpus, settings).run(question)
    if mode == "rag":
        return RagAnswerer(planner, corpus, settings, k=rag_k).run(question)
    agent = ResearchAgent(planner, compressor, corpus, settings, store, relevance=relevance)
    last = list(agent.ask(question))[-1]
    if not isinstance(last, RunFinished):
        raise RetracError(f"the run of {question!r} did not finish")
    return last.result


def record(
    question: str,
    mode: str,
    planner: LLM,
    compressor: LLM,
    corpus: Corpus,
    settings: Settings,
    relevance: Relevance | None,
    rag_k: int = 5,
) -> tuple[Tape, list[str]]:
    """One run on real parts, every answer they gave written down, and what the run made; and the
    collection's titles, if the run read them. Memory of other runs is off: a tape must not depend on
    what ran before it."""
    settings = settings.model_copy(update={"memory": settings.memory.model_copy(update={"enabled": False})})
    dumped = settings.model_dump(mode="json")
    from retrac_local.eval.codehash import mode_version

    tape = Tape(
        question=question,
        mode=mode,
        code=mode_version(mode),
        rag_k=rag_k,
        settings={key: dumped[key] for key in SECTIONS} | {"memory": {"enabled": False}},
        planner=TapedModel(name=planner.name, n_ctx=planner.n_ctx),
        compressor=None
        if compressor is planner
        else TapedModel(name=compressor.name, n_ctx=compressor.n_ctx),
        relevance={} if relevance else None,
    )
    taped_planner = RecordingLLM(planner, tape.planner)
    taped_compressor = RecordingLLM(compressor, tape.compressor) if tape.compressor else taped_planner
    corpus_taped = RecordingCorpus(corpus, tape)
    with tempfile.TemporaryDirectory() as scratch:
        store = RunStore(Path(scratch) / "runs.sqlite")
        scores = (
            recording_relevance(relevance, tape.relevance)
            if relevance and tape.relevance is not None
            else None
        )
        result = _run(
            mode, question, taped_planner, taped_compressor, corpus_taped, settings, store, scores, rag_k
        )
        tape.outcome = outcome(result, store if mode == "retrac" else None)
    return tape, corpus_taped.seen_titles or []


def as_recorded(sections: dict[str, Any]) -> dict[str, Any]:
    """A tape's settings, with each setting added since (`ADDED_SINCE_RECORDING`) that it lacks at
    the value the code had before it, and without the settings of rules removed since
    (`config.REMOVED_SETTINGS`): a tape that needed one of those plays otherwise, and says so."""
    gone: dict[str, set[str]] = {}
    for key in REMOVED_SETTINGS:
        section, _, name = key.partition(".")
        gone.setdefault(section, set()).add(name)
    kept = {
        name: {k: v for k, v in values.items() if k not in gone.get(name, ())}
        if isinstance(values, dict)
        else values
        for name, values in sections.items()
    }
    return kept | {
        name: added | kept[name]
        for name, added in ADDED_SINCE_RECORDING.items()
        if isinstance(kept.get(name), dict)
    }


def play(tape: Tape, titles: list[str]) -> list[str]:
    """The tape's question run again on today's code with the tape standing in for the models, the
    collection and the embedder: what came out otherwise (nothing, when the code behaves as it did)."""
    with tempfile.TemporaryDirectory() as scratch:
        settings = Settings(home=Path(scratch), **as_recorded(tape.settings))
        planner = TapeLLM("planner", tape.planner)
        compressor = TapeLLM("compressor", tape.compressor) if tape.compressor else planner
        store = RunStore(settings.runs_db)
        scores = tape_relevance(tape.relevance) if tape.relevance is not None else None
        corpus = TapeCorpus(tape, titles)
        try:
            result = _run(
                tape.mode, tape.question, planner, compressor, corpus, settings, store, scores, tape.rag_k
            )
        except Diverged as e:
            return [str(e)]
        made = outcome(result, store if tape.mode == "retrac" else None)
        if tape.detached:
            from retrac_local.eval.detached import without_trajectories

            made = without_trajectories(made)
        found = differences(tape.outcome, _as_taped(made, tape.outcome))
        unused = {llm.role: llm.left() for llm in dict.fromkeys((planner, compressor))}  # once each
        return found + [f"{role}: {n} recorded call(s) were not made" for role, n in unused.items() if n]


def _as_taped(made: dict[str, Any], taped: dict[str, Any]) -> dict[str, Any]:
    """`made` without the keys added to results and round stats since the tape was recorded."""
    result = {
        k: v for k, v in made["result"].items() if k in taped.get("result", {}) or k not in RESULT_KEYS_ADDED
    }
    out = made | {"result": result}
    taped_rounds = taped.get("rounds") or []
    if "rounds" in made:
        out["rounds"] = [
            r
            | {
                "stats": {
                    k: v
                    for k, v in r.get("stats", {}).items()
                    if k not in ROUND_STATS_ADDED
                    or (i < len(taped_rounds) and k in taped_rounds[i].get("stats", {}))
                }
            }
            for i, r in enumerate(made["rounds"])
        ]
    return out


def read_tapes(folder: Path) -> Iterator[tuple[str, Tape, list[str]]]:
    """(name, tape, the collection's titles) for each tape of `folder`, in name order."""
    for name in tape_names(folder):
        yield name, *read_tape(folder, name)


def read_tape(folder: Path, name: str) -> tuple[Tape, list[str]]:
    """The tape, and its collection's titles; a detached tape with its texts and titles read from
    its collection's own file (`detached.SourceMissing` when this machine lacks it)."""
    tape = Tape.model_validate_json(read_gz(folder / f"{name}.json.gz"))
    if tape.detached:
        from retrac_local.eval.detached import attach

        return attach(folder, tape)
    return tape, json.loads(read_gz(folder / TITLES)) if (folder / TITLES).exists() else []


def record_questions(
    app: Retrac,
    questions: list[EvalQuestion],
    modes: list[str],
    out: Path,
    rag_k: int = 5,
    log: Callable[[str], None] = print,
) -> list[str]:
    """Tape each question in each mode on the app's models and collection, as OUT/ID-MODE.json.gz,
    each written as it ends; a tape already there is kept (a second sitting continues). Returns the
    names taped now."""
    from retrac_local.corpus.embedder import relevance_by

    planner, compressor = app.llms()
    relevance = relevance_by(app.corpus.embedder)
    taped = []
    for question in questions:
        for mode in modes:
            name = f"{question.id}-{mode}"
            if (out / f"{name}.json.gz").exists():
                continue
            tape, titles = record(
                question.question, mode, planner, compressor, app.corpus, app.settings, relevance, rag_k
            )
            write_tape(out, name, tape, titles)
            taped.append(name)
            log(f"{name}: {tape.outcome['result']['answer']!r}")
    return taped


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record", help="run questions on this home's models and collection, and tape them")
    rec.add_argument("--questions", type=Path, required=True, help="questions in the evaluation's format")
    rec.add_argument("--limit", type=int, default=10)
    rec.add_argument("--modes", default=",".join(MODES))
    rec.add_argument("--rag-k", type=int, default=5)
    rec.add_argument("--out", type=Path, required=True)
    pl = sub.add_parser("play", help="play every tape of a folder on today's code")
    pl.add_argument("folder", type=Path)
    args = parser.parse_args(argv)
    if args.command == "play":
        bad = 0
        for name, tape, titles in read_tapes(args.folder):
            found = play(tape, titles)
            bad += bool(found)
            print(f"{name}: {'the same' if not found else '; '.join(found)}", flush=True)
        raise SystemExit(1 if bad else 0)

    from retrac_local.api import Retrac
    from retrac_local.eval.questions import load_questions

    questions = load_questions(args.questions, limit=args.limit)
    record_questions(Retrac(), questions, [m for m in args.modes.split(",") if m], args.out, args.rag_k)


if __name__ == "__main__":
    main()
