"""Evaluation questions: JSON Lines of {"id", "question", "answers", "supporting_doc_ids"?, "type"?}
(the format of HotpotQA as shipped in shared/eval)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from retrac_local.errors import RetracError

T = TypeVar("T")


@dataclass(frozen=True)
class EvalQuestion:
    id: str
    question: str
    answers: list[str]
    supporting_doc_ids: list[str] = field(default_factory=list)
    type: str = ""  # HotpotQA: bridge | comparison


def _question(row: object) -> EvalQuestion:
    if not isinstance(row, dict):
        raise TypeError(f"a JSON {type(row).__name__}, not an object")
    answers = row["answers"] if "answers" in row else [row["answer"]]
    docs = row.get("supporting_doc_ids") or []
    if not isinstance(row["question"], str) or not row["question"].strip():
        raise TypeError('"question" must be a non-empty string')
    if not isinstance(answers, list) or not answers or not all(isinstance(a, str) for a in answers):
        raise TypeError('"answers" must be a list of strings')
    if not isinstance(docs, list) or not all(isinstance(d, str) for d in docs):
        raise TypeError('"supporting_doc_ids" must be a list of strings')
    if not isinstance(row["id"], (str, int)):
        raise TypeError('"id" must be a string or a number')
    return EvalQuestion(
        id=str(row["id"]),
        question=row["question"],
        answers=answers,
        supporting_doc_ids=docs,
        type=str(row.get("type", "")),
    )


def read_records(path: Path, parse: Callable[[object], T], needs: str) -> list[T]:
    """Every non-blank line of a JSON Lines questions file, parsed, in file order. A bad line is an
    error that names the file, the line and what a line `needs`: a silently skipped question would
    shift every later one. Ids (`.id`) must be unique."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise RetracError(f"cannot read the questions file {path}: {e}") from e
    out: list[T] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            out.append(parse(json.loads(line)))
        except (ValueError, KeyError, TypeError) as e:
            raise RetracError(
                f"{path}, line {number}: not a question record ({e!r}); each line needs {needs}"
            ) from e
    ids = [getattr(q, "id") for q in out]  # noqa: B009 (any record with an id)
    if len(set(ids)) != len(ids):
        dup = next(i for i in ids if ids.count(i) > 1)
        raise RetracError(f"{path}: question id {dup!r} occurs more than once; ids must be unique")
    return out


def load_questions(path: Path, offset: int = 0, limit: int | None = None) -> list[EvalQuestion]:
    """Questions offset+1 … offset+limit of the file, in file order."""
    out = read_records(
        path, _question, '{"id", "question", "answers": [...]} and may have "supporting_doc_ids" and "type"'
    )
    selected = out[offset : offset + limit if limit is not None else None]
    if not selected:
        raise RetracError(f"{path}: no questions left after --offset {offset} (the file has {len(out)})")
    return selected
