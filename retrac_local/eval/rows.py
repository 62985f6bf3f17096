"""An evaluation's records, typed: one row of results.jsonl per (question, mode), the LLM calls it
made, and the method's counts of its stored run (`eval/method.py`).

A row written by an older harness reads too: a field it lacks takes its default, and a key this code
does not know is kept and written back as it was (rows are rewritten when a mode's code changes)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from retrac_local.contract.events import Citation, RunStatus
from retrac_local.errors import RetracError


class Call(BaseModel):
    """One LLM call of a question: what it was for, its tokens and its seconds."""

    purpose: str  # constraints | action | compress | finalize (Re-TRAC); ReAct's and RAG's own
    prompt_tokens: int
    cached_tokens: int = 0
    completion_tokens: int
    seconds: float


class MethodRecord(BaseModel):
    """A stored Re-TRAC run reduced to counts (`method.record`); `method.aggregate` sums them."""

    rounds: int
    verified_facts: int  # distinct (source, quote) pairs ever verified in a state of the run
    kept_facts: int  # of those, still in the final state (or merged into a quote there)
    gold_retrieved: int  # gold units the run's tools returned
    gold_in_final: int  # of those, cited by the final state's evidence
    drift_repairs: dict[str, int] = Field(default_factory=dict)  # kind → repairs
    rejected_facts: dict[str, int] = Field(default_factory=dict)  # kind → facts code refused
    compressions: int = 0
    compression_retries: int = 0
    compressions_failed: int = 0
    cut_at_max_tokens: int = 0
    invalid_json: int = 0


class EvalRow(BaseModel):
    """One question answered by one mode, scored."""

    model_config = ConfigDict(extra="allow")

    id: str
    mode: str  # retrac | react | rag
    type: str = ""  # the question's type, if its file gives one (HotpotQA: bridge | comparison)
    question: str
    answer: str | None
    gold: list[str]
    em: float
    f1: float
    retrieved_doc_ids: list[str] = Field(default_factory=list)  # gold units retrieved, first seen first
    doc_recall: float | None = None  # None: the question names no gold units
    first_doc_recall: float | None = None  # of the run's first search alone
    searches: list[str] = Field(default_factory=list)
    distinct_searches: int = 0
    repeated_searches: int = 0
    caveat: str | None = None
    status: RunStatus
    stop_reason: str = ""
    rounds: int = 0
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    peak_prompt_tokens: int = 0
    seconds: float
    llm_seconds: float = 0.0
    run_id: str | None = None
    citations: list[Citation] = Field(default_factory=list)
    calls: list[Call] = Field(default_factory=list)
    code: str = ""  # the mode's code version (`codehash.mode_version`)
    method: MethodRecord | None = None  # Re-TRAC rows whose run the store holds
    runtime: dict[str, str] = Field(default_factory=dict)  # the machine and libraries (`eval/runtime.py`)
    rules_fired: list[str] | None = (
        None  # catalogued rules that fired (None: a row made before the catalogue)
    )
    # what hop 0's passages answered (`agent/firstreading.py`): answer, samples, agreement, check,
    # holds, why_not; None where the run did not read them (first reading off, RAG, older rows)
    first_reading: dict[str, Any] | None = None

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def line(self) -> str:
        """The row as one line of results.jsonl (no `method` or `runtime` key when it has none: a row
        of an older harness is written back as it was read)."""
        data = self.model_dump(mode="json")
        if data["method"] is None:
            del data["method"]
        if not data["runtime"]:
            del data["runtime"]
        if data["rules_fired"] is None:
            del data["rules_fired"]
        return json.dumps(data, ensure_ascii=False) + "\n"


def read_rows(lines: Iterable[str], source: str = "results") -> list[EvalRow]:
    """The rows of a results file's lines (blank lines skipped); a line that is not a row is an error
    that names `source` and the line."""
    rows = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rows.append(EvalRow.model_validate_json(line))
        except ValidationError as e:
            where = ".".join(str(p) for p in e.errors()[0]["loc"]) or "the line"
            raise RetracError(
                f"{source}, line {n}: not an evaluation row ({where}: {e.errors()[0]['msg']}); "
                "fix or remove that line, the others are kept"
            ) from e
    return rows


def lines(rows: Iterable[EvalRow]) -> str:
    return "".join(row.line() for row in rows)
