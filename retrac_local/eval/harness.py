"""Runs every question through every mode, side by side, and writes each result as it finishes.

    DIR/eval.json       what was run: the questions file, the modes, and the settings that change answers
    DIR/results.jsonl   one line per (question, mode), appended and flushed as each one ends
    DIR/pending.json    the Re-TRAC run in progress, resumed (not restarted) by the next sitting

Run it again with the same --out to continue an interrupted evaluation: finished pairs are skipped,
a half-written last line is dropped, and the settings must match the ones recorded (otherwise the
figures would mix two configurations). Each row records the machine and libraries it was made on
(`eval/runtime.py`), which the settings do not fix. The code is recorded per mode: when a mode's code changed,
its results are moved to DIR/results.MODE-VERSION.jsonl and it runs again, while the results of the
other modes are kept.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from retrac_local.agent.toolbox import doc_ids, query_key
from retrac_local.config import renamed
from retrac_local.contract.events import RunFinished, RunResult, RunStarted
from retrac_local.errors import RetracError, RunNotFoundError
from retrac_local.eval import method
from retrac_local.eval.codehash import mode_version
from retrac_local.eval.questions import EvalQuestion
from retrac_local.eval.rows import Call, EvalRow, lines, read_rows
from retrac_local.eval.runtime import Runtime
from retrac_local.eval.scoring import best, doc_recall
from retrac_local.llm.base import forget
from retrac_local.modes import MODES, Runner, baseline_runner
from retrac_local.runstore import RunStore

Progress = Callable[[EvalQuestion, str, EvalRow | None], None]  # (question, mode, row or None at start)
Annotate = Callable[[EvalQuestion, EvalRow], EvalRow]  # a row → the same row with more figures
# Retrieved chunk ids → the gold units they stand for, in first-seen order: their documents by
# default; the paragraphs they hold in a collection of long documents (`eval/longdocs.py`).
Units = Callable[[list[str]], list[str]]


def parse_modes(text: str) -> list[str]:
    modes = [m.strip() for m in text.split(",") if m.strip()]
    unknown = [m for m in modes if m not in MODES]
    if unknown or not modes:
        raise RetracError(f"unknown mode(s) {', '.join(unknown) or text!r}; choose from {', '.join(MODES)}")
    return list(dict.fromkeys(modes))


def fingerprint(app: Any, questions_file: Path, rag_k: int) -> dict[str, Any]:
    """The settings and code an answer depends on; an evaluation continues only under the same ones."""
    s = app.settings
    return {
        "code": {mode: mode_version(mode) for mode in MODES},
        "questions_file": describe_questions(questions_file),
        "planner": s.model_path("planner").name,
        "compressor": s.model_path("compressor").name,
        "budget": s.budget.model_dump(mode="json"),
        "retrieval": s.retrieval.model_dump(mode="json"),
        "sampling": s.sampling.model_dump(mode="json"),
        "state_max_tokens": s.state_max_tokens,
        "rag_k": rag_k,
    } | (
        {"rules_disabled": sorted(s.rules.disabled)} if s.rules.disabled else {}
    )  # an ablation never joins a full run


def describe_questions(path: Path) -> str:
    """The questions file by name and content, not by where it lies: the same file read from another
    checkout continues the same evaluation, and an edited file does not."""
    return f"{path.name} sha1:{hashlib.sha1(path.read_bytes()).hexdigest()[:12]}"


def _upgrade(recorded: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """An evaluation recorded by older code, read in today's terms. A renamed setting is read under
    its new name (`config.RENAMED`). A setting added since (a key of a settings section the record lacks)
    is taken at today's value: it came with new code, and a mode whose code changed has its results
    set aside by the code check anyway. An older harness
    recorded the questions file as an absolute path: read as name and content when the file is still
    there, else by its name alone."""
    recorded = {key: renamed(key, section) for key, section in recorded.items()}
    recorded = recorded | {
        key: config[key] | section
        for key, section in recorded.items()
        if isinstance(section, dict) and isinstance(config.get(key), dict) and key != "code"
    }
    old = str(recorded.get("questions_file", ""))
    if "/" not in old and "\\" not in old:
        return recorded
    path, current = Path(old), str(config.get("questions_file", ""))
    if path.is_file():
        return recorded | {"questions_file": describe_questions(path)}
    return recorded | {"questions_file": current} if current.split(" ")[0] == path.name else recorded


class Evaluation:
    def __init__(
        self,
        out: Path,
        config: dict[str, Any],
        check: bool = True,
        legacy_code: dict[str, set[str]] | None = None,
        units: Units = doc_ids,
    ) -> None:
        """`check`: refuse an evaluation recorded under other settings or code (off only to redraw
        the report of finished results, which runs nothing). `legacy_code`: per mode, versions that
        are today's code under another name (as an older harness hashed it, `codehash.legacy_version`,
        or shown alike by replay, `eval/equivalence.py`); results recorded under one are carried over
        to today's version instead of set aside. `units`: what a
        retrieved chunk counts as for doc recall."""
        self.legacy_code = legacy_code or {}
        self.units = units
        self.out = out
        self.results_file, self.pending_file = out / "results.jsonl", out / "pending.json"
        self.set_aside: dict[str, str] = {}  # mode → the code version whose results were set aside
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise RetracError(f"cannot create the output folder {out}: {e}") from e
        if check:
            self._check_config(config)
        self.rows = self._load_rows()

    def _check_config(self, config: dict[str, Any]) -> None:
        """Other settings: refused. Other code of a mode: that mode's results are set aside (kept in a
        file of their own) and it runs again; the results of modes whose code did not change stay."""
        path = self.out / "eval.json"
        if path.exists():
            recorded = _upgrade(json.loads(path.read_text()), config)
            changed = sorted(
                k for k in (set(recorded) | set(config)) - {"code"} if recorded.get(k) != config.get(k)
            )
            if changed:
                raise RetracError(
                    f"{self.out} holds an evaluation made with other settings ({', '.join(changed)} differ); "
                    "continue it with the same settings, or give another --out (or delete that folder)"
                )
            old = recorded.get("code")
            old_codes = dict(old) if isinstance(old, dict) else {}
            carried = {
                m: v
                for m, v in config.get("code", {}).items()
                if old_codes.get(m, v) != v and old_codes.get(m) in self.legacy_code.get(m, set())
            }
            if carried:
                self._carry_rows(carried)
                old_codes |= carried
            self.set_aside = {
                m: old_codes.get(m, str(old))
                for m, v in config.get("code", {}).items()
                if old_codes.get(m) != v
            }
            self._set_aside_rows()
        _write_atomic(path, json.dumps(config, indent=2))

    def _load_rows(self) -> list[EvalRow]:
        if not self.results_file.exists():
            return []
        raw = self.results_file.read_bytes()
        good = raw[: raw.rfind(b"\n") + 1]  # a line cut by a kill has no newline yet: drop it
        if len(good) != len(raw):
            with open(self.results_file, "r+b") as f:
                f.truncate(len(good))
        return read_rows(good.decode("utf-8").splitlines(), str(self.results_file))

    def set_aside_results(self) -> dict[tuple[str, str], list[EvalRow]]:
        """(mode, code version) → the results of that earlier code, kept when it changed."""
        earlier: dict[tuple[str, str], list[EvalRow]] = {}
        for path in sorted(self.out.glob(_aside_file("*", "*"))):
            mode, _, version = path.name.removeprefix("results.").removesuffix(".jsonl").rpartition("-")
            rows = read_rows(path.read_text(encoding="utf-8").splitlines(), str(path))
            if mode and rows:
                earlier[(mode, version)] = rows
        return earlier

    def _carry_rows(self, carried: dict[str, str]) -> None:
        """The rows of the modes in `carried` (all of the recorded version: older ones were set aside
        when it changed) take today's version."""
        rows = self._load_rows()
        for r in rows:
            if r.mode in carried:
                r.code = carried[r.mode]
        _write_atomic(self.results_file, lines(rows))

    def _set_aside_rows(self) -> None:
        rows = self._load_rows()
        stale = [r for r in rows if r.mode in self.set_aside]
        if not stale:
            return
        for mode, version in self.set_aside.items():
            aside = self.out / _aside_file(mode, version)
            before = (
                read_rows(aside.read_text(encoding="utf-8").splitlines(), str(aside))
                if aside.exists()
                else []
            )
            kept_before = {r.id for r in before}
            mine = [r for r in stale if r.mode == mode and r.id not in kept_before]  # set aside once
            if mine:
                with open(aside, "a", encoding="utf-8") as f:
                    f.write(lines(mine))
        _write_atomic(self.results_file, lines(r for r in rows if r.mode not in self.set_aside))
        if "retrac" in self.set_aside:
            self.pending_file.unlink(missing_ok=True)  # a run of the old code is not resumed by the new

    def done(self, question: EvalQuestion, mode: str) -> bool:
        return any(r.id == question.id and r.mode == mode for r in self.rows)

    def run(
        self,
        questions: list[EvalQuestion],
        runners: dict[str, Runner],
        progress: Progress | None = None,
        on_question: Callable[[], None] | None = None,
        annotate: Annotate | None = None,
        runtime: Runtime | None = None,
    ) -> None:
        """Question by question, every mode for one question before the next question, so that the
        figures of an unfinished evaluation still compare the modes on the same questions.
        `annotate` adds what the result alone does not hold (the method's figures from the stored run);
        `runtime` is what the runners answer on (`eval/runtime.py`), recorded in each row."""
        for question in questions:
            for mode, runner in runners.items():
                if self.done(question, mode):
                    continue
                if progress:
                    progress(question, mode, None)
                self._record(question, mode, runner(question), progress, annotate, runtime)
            if on_question:
                on_question()

    def run_on_ray(
        self,
        questions: list[EvalQuestion],
        modes: list[str],
        pool: Any,
        runs: RunStore,
        rag_k: int,
        progress: Progress | None = None,
        on_question: Callable[[], None] | None = None,
        annotate: Annotate | None = None,
    ) -> list[str]:
        """The (question, mode) pairs not done yet, on a pool of Ray workers (`batch.pool.RayPool`),
        several at once; each row is written as its pair ends, a Re-TRAC run moved into `runs` first
        (so that its row names a run of this store). A run cut off here starts afresh next time (no
        pending run is resumed). Returns what failed, one line each; the rest is written."""
        from retrac_local.batch.pool import WorkerFailed
        from retrac_local.batch.transfer import write_run

        jobs = [(q, m) for q in questions for m in modes if not self.done(q, m)]
        failed: list[str] = []
        for (question, mode), outcome in pool.map(jobs, "evaluate", lambda job: (job[0], job[1], rag_k)):
            if isinstance(outcome, WorkerFailed) or outcome.result is None:
                failed.append(
                    f"{question.id} {mode}: {outcome if isinstance(outcome, WorkerFailed) else outcome.error}"
                )
                continue
            result = RunResult.from_dict(outcome.result)
            if outcome.record is not None:
                result.run_id = write_run(runs, outcome.record)
            self._record(question, mode, result, progress, annotate, outcome.runtime)
            if on_question:
                on_question()
        return failed

    def _record(
        self,
        question: EvalQuestion,
        mode: str,
        result: RunResult,
        progress: Progress | None,
        annotate: Annotate | None,
        runtime: Runtime | None = None,
    ) -> None:
        row = score(question, mode, result, self.units)
        row.code = mode_version(mode)
        row.runtime = dict(runtime or {})
        if annotate:
            row = annotate(question, row)
        self._append(row)
        if progress:
            progress(question, mode, row)

    def _append(self, row: EvalRow) -> None:
        with open(self.results_file, "a", encoding="utf-8") as f:
            f.write(row.line())
            f.flush()
            os.fsync(f.fileno())
        self.rows.append(row)

    def annotate_missing(self, questions: list[EvalQuestion], annotate: Annotate) -> int:
        """Add the annotation to finished rows that lack it (results of an older harness), rewriting
        results.jsonl in one atomic step; rows whose run is not in this store stay as they are.
        Returns how many rows gained it."""
        by_id = {q.id: q for q in questions}
        changed = 0
        for i, row in enumerate(self.rows):
            if row.mode == "retrac" and row.method is None and row.id in by_id:
                self.rows[i] = annotate(by_id[row.id], row)
                changed += self.rows[i].method is not None
        if changed:
            _write_atomic(self.results_file, lines(self.rows))
        return changed

    # -- a Re-TRAC run cut off mid-question is resumed from its last round ----------------------
    def pending(self, question: EvalQuestion) -> str | None:
        if not self.pending_file.exists():
            return None
        data = json.loads(self.pending_file.read_text())
        return data.get("run_id") if data.get("id") == question.id else None

    def set_pending(self, question: EvalQuestion, run_id: str | None) -> None:
        if run_id is None:
            self.pending_file.unlink(missing_ok=True)
        else:
            _write_atomic(self.pending_file, json.dumps({"id": question.id, "run_id": run_id}))


def score(question: EvalQuestion, mode: str, result: RunResult, units: Units = doc_ids) -> EvalRow:
    em, f1 = best(result.answer, question.answers)
    retrieved = units(result.retrieved)
    keys = [query_key(q) for q in result.searches]
    return EvalRow(
        id=question.id,
        mode=mode,
        type=question.type,
        question=question.question,
        answer=result.answer,
        gold=question.answers,
        em=em,
        f1=round(f1, 4),
        retrieved_doc_ids=retrieved,
        doc_recall=doc_recall(retrieved, question.supporting_doc_ids),
        first_doc_recall=doc_recall(units(result.first_retrieved), question.supporting_doc_ids),
        searches=result.searches,
        distinct_searches=len(set(keys)),
        repeated_searches=len(keys) - len(set(keys)),
        caveat=result.caveat,
        status=result.status,
        stop_reason=result.stop_reason,
        rounds=result.rounds,
        llm_calls=result.llm_calls,
        prompt_tokens=result.prompt_tokens,
        completion_tokens=result.completion_tokens,
        peak_prompt_tokens=result.peak_prompt_tokens,
        seconds=round(result.seconds, 2),
        llm_seconds=round(result.llm_seconds, 2),
        run_id=result.run_id,
        citations=result.citations,
        calls=[Call.model_validate(c) for c in result.calls],
        rules_fired=result.rules_fired,
        first_reading=result.first_reading,
    )


def method_annotator(runs: RunStore, units: Units = doc_ids) -> Annotate:
    """For a Re-TRAC row, the method's figures of its stored run (`eval/method.py`); other modes'
    rows, and runs this store does not hold, are returned unchanged."""

    def annotate(question: EvalQuestion, row: EvalRow) -> EvalRow:
        if row.mode != "retrac" or row.run_id is None:
            return row
        try:
            runs.run(row.run_id)  # a run this store does not hold: left as it is
        except RunNotFoundError:
            return row
        record = method.record(
            runs.rounds(row.run_id), question.supporting_doc_ids, row.retrieved_doc_ids, units
        )
        return row.model_copy(update={"method": record})

    return annotate


def make_runners(app: Any, modes: list[str], evaluation: Evaluation, rag_k: int) -> dict[str, Runner]:
    """One runner per mode, all on the app's models, tools and corpus."""

    def retrac(question: EvalQuestion) -> RunResult:
        agent = app.agent()
        run_id = evaluation.pending(question)
        if run_id is not None:
            try:
                app.runs.run(run_id)
            except RunNotFoundError:  # recorded by another machine's (or a deleted) run store: start afresh
                run_id = None
        events = agent.resume(run_id) if run_id else agent.ask(question.question)
        result = None
        for event in events:
            if isinstance(event, RunStarted):
                evaluation.set_pending(question, event.run_id)
            if isinstance(event, RunFinished):
                result = event.result
        assert result is not None
        evaluation.set_pending(question, None)
        return result

    runners = {m: retrac if m == "retrac" else baseline_runner(app, m, rag_k) for m in modes}
    return {m: _cold(app, runner) for m, runner in runners.items()}


def _cold(app: Any, runner: Runner) -> Runner:
    """`runner` on models that remember no earlier call: each run is timed as in a fresh process,
    not helped by the same prompt another mode made just before (RAG's prompt is the first reading's
    of a Re-TRAC run)."""

    def run(question: EvalQuestion) -> RunResult:
        forget(*app.llms())
        return runner(question)

    return run


def _aside_file(mode: str, version: str) -> str:
    """The results of a mode's earlier code, kept when it changed (`set_aside_results` reads them)."""
    return f"results.{mode}-{version}.jsonl"


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
