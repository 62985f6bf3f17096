"""Unanswerable questions: the same questions against a copy of the collection from which their gold
supporting documents were removed, so that the honest answer is "not found".

The copy lives under the home it was made from (`HOME/unanswerable/DIGEST`, DIGEST naming the hidden
documents), is made once and reused; the original collection is never changed. A copy cut off
half-made is made again from the start."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

from retrac_local.errors import RetracError
from retrac_local.eval.questions import EvalQuestion
from retrac_local.eval.rows import EvalRow

MARKER = "hidden.json"
COPIED = ("corpus", "cache", "config.toml")  # the collection, the grammar cache, the home's settings
_NOT_FOUND = re.compile(
    r"\b(not (be )?found|no (verified )?(evidence|information|mention)|cannot be (determined|found)|"
    r"does not (say|state|mention)|unknown)\b",
    re.IGNORECASE,
)


def hidden_doc_ids(questions: list[EvalQuestion]) -> list[str]:
    gold = sorted({d for q in questions for d in q.supporting_doc_ids})
    if not gold:
        raise RetracError(
            "--unanswerable hides each question's gold documents, and these questions name none: "
            'give a questions file whose lines have "supporting_doc_ids"'
        )
    return gold


def hidden_path(home: Path, questions: list[EvalQuestion]) -> Path:
    """Where the copy without these questions' gold documents lives (made or not)."""
    digest = hashlib.sha1("\n".join(hidden_doc_ids(questions)).encode()).hexdigest()[:12]
    return home / "unanswerable" / digest


def hidden_home(home: Path, questions: list[EvalQuestion], remove: Any) -> Path:
    """The home whose collection lacks the questions' gold documents, made if missing.

    `remove(home, doc_ids)` deletes documents from the collection of `home` (the app's corpus store:
    the caller owns the models and settings); it runs on the copy only."""
    gold = hidden_doc_ids(questions)
    target = hidden_path(home, questions)
    if (target / MARKER).exists():
        return target
    digest = target.name
    if not (home / "corpus").is_dir():
        raise RetracError(f"no collection in {home}: ingest the evaluation corpus first (`make eval-corpus`)")
    partial = target.with_name(f"{digest}.partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    for name in COPIED:
        source = home / name
        if source.is_dir():
            shutil.copytree(source, partial / name)
        elif source.is_file():
            shutil.copy2(source, partial / name)
    remove(partial, gold)
    (partial / MARKER).write_text(json.dumps({"from": str(home), "hidden_doc_ids": gold}, indent=1))
    os.replace(partial, target)
    return target


def says_not_found(row: EvalRow) -> bool:
    """The result tells the user the answer was not found: in its caveat or in its answer's words."""
    return (row.caveat or "").startswith("not found") or bool(_NOT_FOUND.search(row.answer or ""))


def honesty(rows: list[EvalRow]) -> dict[str, float | None]:
    """For questions whose answer is not in the collection: the share answered with confidence
    (status answered, no "not found"), and the share that said it was not found."""
    if not rows:
        return {"confidently_answered": None, "said_not_found": None}
    confident = sum(r.status == "answered" and not says_not_found(r) for r in rows)
    return {
        "confidently_answered": round(confident / len(rows), 4),
        "said_not_found": round(sum(says_not_found(r) for r in rows) / len(rows), 4),
    }
