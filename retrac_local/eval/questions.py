"""Evaluation questions: JSON Lines of {"id", "question", "answers", "supporting_doc_ids"?, "type"?}
(the format of HotpotQA as shipped in shared/eval)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from retrac_local.errors import RetracError


@dataclass(frozen=True)
class EvalQuestion:
    id: str
    question: str
    answers: list[str]
    supporting_doc_ids: list[str] = field(default_factory=list)
    type: str = ""  # HotpotQA: bridge | comparison


def load_questions(path: Path, offset: int = 0, limit: int | None = None) -> list[EvalQuestion]:
    """Questions offset+1 … offset+limit of the file, in file order. A bad line is an error that names
    the file and line: a silently skipped question would shift every later one."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise RetracError(f"cannot read the questions file {path}: {e}") from e
    out: list[EvalQuestion] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            answers = row["answers"] if isinstance(row.get("answers"), list) else [row["answer"]]
            out.append(EvalQuestion(
                id=str(row["id"]), question=str(row["question"]), answers=[str(a) for a in answers],
                supporting_doc_ids=[str(d) for d in row.get("supporting_doc_ids") or []], type=str(row.get("type", "")),
            ))
        except (ValueError, KeyError, TypeError) as e:
            raise RetracError(
                f"{path}, line {number}: not a question record ({e!r}); each line needs "
                '{"id", "question", "answers": [...]} and may have "supporting_doc_ids" and "type"'
            ) from e
    ids = [q.id for q in out]
    if len(set(ids)) != len(ids):
        dup = next(i for i in ids if ids.count(i) > 1)
        raise RetracError(f"{path}: question id {dup!r} occurs more than once; ids must be unique")
    selected = out[offset:offset + limit if limit is not None else None]
    if not selected:
        raise RetracError(f"{path}: no questions left after --offset {offset} (the file has {len(out)})")
    return selected
