"""The questions of a batch: JSON Lines of {"id", "question", …}, the evaluation's format, where the
gold answers and documents may be absent (a user's own questions have none)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from retrac_local.errors import RetracError


@dataclass(frozen=True)
class BatchQuestion:
    id: str
    question: str


def load_batch_questions(path: Path) -> list[BatchQuestion]:
    """Every question of the file, in file order. A bad line is an error naming the file and line,
    before anything runs: a silently skipped line would be a question never answered."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise RetracError(f"cannot read the questions file {path}: {e}") from e
    out: list[BatchQuestion] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            if not isinstance(row, dict):
                raise TypeError(f"a JSON {type(row).__name__}, not an object")
            if not isinstance(row.get("question"), str) or not row["question"].strip():
                raise TypeError('"question" must be a non-empty string')
            if not isinstance(row.get("id"), (str, int)) or isinstance(row.get("id"), bool):
                raise TypeError('"id" must be a string or a number')
        except (ValueError, TypeError) as e:
            raise RetracError(f'{path}, line {number}: not a question record ({e}); each line needs {{"id", "question"}}') from e
        out.append(BatchQuestion(str(row["id"]), row["question"].strip()))
    ids = [q.id for q in out]
    if len(set(ids)) != len(ids):
        dup = next(i for i in ids if ids.count(i) > 1)
        raise RetracError(f"{path}: question id {dup!r} occurs more than once; ids must be unique")
    if not out:
        raise RetracError(f"{path} holds no question; write one JSON object a line: {{\"id\": …, \"question\": …}}")
    return out
