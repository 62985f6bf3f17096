"""The questions of a batch: JSON Lines of {"id", "question", …}, the evaluation's format, where the
gold answers and documents may be absent (a user's own questions have none)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from retrac_local.errors import RetracError
from retrac_local.eval.questions import read_records


@dataclass(frozen=True)
class BatchQuestion:
    id: str
    question: str


def _question(row: object) -> BatchQuestion:
    if not isinstance(row, dict):
        raise TypeError(f"a JSON {type(row).__name__}, not an object")
    if not isinstance(row.get("question"), str) or not row["question"].strip():
        raise TypeError('"question" must be a non-empty string')
    if not isinstance(row.get("id"), (str, int)) or isinstance(row.get("id"), bool):
        raise TypeError('"id" must be a string or a number')
    return BatchQuestion(str(row["id"]), row["question"].strip())


def load_batch_questions(path: Path) -> list[BatchQuestion]:
    """Every question of the file, in file order; a bad line fails the batch before anything runs."""
    out = read_records(path, _question, '{"id", "question"}')
    if not out:
        raise RetracError(
            f'{path} holds no question; write one JSON object a line: {{"id": …, "question": …}}'
        )
    return out
