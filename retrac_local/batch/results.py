"""DIR/results.jsonl: one line per question as it ends, {"id", "question", "run_id", "status",
"answer", "citations", "seconds"} (and "error" for a failed one). Each line is flushed to disk before
the next question is counted done, so a killed driver loses only the questions still running; the
same command then skips the ids already written. A half-written last line (the driver killed while
writing) is not a result: it is dropped and its question runs again."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from retrac_local.contract.events import Citation, RunStatus
from retrac_local.errors import RetracError

FAILED = RunStatus.FAILED


class BatchLine(BaseModel):
    """One question's line of results.jsonl (the contract other tools read)."""

    model_config = ConfigDict(extra="allow")  # a key a later version adds is kept

    id: str
    question: str
    run_id: str | None = None  # the run in the local run store; None when the question failed
    status: RunStatus
    answer: str | None = None
    citations: list[Citation] = Field(default_factory=list)
    seconds: float | None = None
    error: str | None = None  # why it failed; only on a failed line

    def text(self) -> str:
        data = self.model_dump(mode="json")
        if data["error"] is None:
            del data["error"]
        return json.dumps(data, ensure_ascii=False) + "\n"


class ResultsFile:
    def __init__(self, folder: Path) -> None:
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise RetracError(f"cannot create the output folder {folder}: {e.strerror or e}") from e
        self.path = folder / "results.jsonl"
        self._repair()

    def _repair(self) -> None:
        """Cut a last line the driver did not finish writing, keeping every whole line: only in a
        file whose every whole line is a result line (a file this command wrote), and never through
        a link. Anything else is refused before a byte of it changes."""
        if self.path.is_symlink():
            raise RetracError(
                f"{self.path} is a link; give --out a folder of its own (the results file is written there)"
            )
        if not self.path.exists():
            return
        if not self.path.is_file():
            raise RetracError(f"{self.path} is not a file; give --out a folder of its own")
        data = self.path.read_bytes()
        whole, _, torn = data.rpartition(b"\n")
        for number, line in enumerate(whole.split(b"\n") if whole else [], 1):
            if not line.strip():
                continue
            try:
                BatchLine.model_validate_json(line)
            except ValidationError as e:
                raise RetracError(
                    f"{self.path}, line {number} is not a result line ({e.errors()[0]['msg']}); it was not "
                    "written by `retrac batch`: give --out another folder, or move the file away"
                ) from e
        if torn and not torn.startswith(b'{"id": '):  # how `BatchLine.text` starts every line
            raise RetracError(
                f"{self.path} ends with a line that is not the start of a result line; it was not "
                "written by `retrac batch`: give --out another folder, or move the file away"
            )
        if torn:
            with self.path.open("r+b") as f:
                f.truncate(len(whole) + 1 if whole else 0)

    def lines(self) -> list[BatchLine]:
        if not self.path.exists():
            return []
        out = []
        for number, line in enumerate(self.path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                out.append(BatchLine.model_validate_json(line))
            except ValidationError as e:
                raise RetracError(
                    f"{self.path}, line {number} is not a result line ({e.errors()[0]['msg']}); move the "
                    "file away to start afresh, or delete that line to run its question again"
                ) from e
        return out

    def done(self, retry_failed: bool = False) -> set[str]:
        """The ids that need no run: every id written, or, with `retry_failed`, every id whose last
        line is not a failure."""
        last: dict[str, RunStatus] = {}
        for line in self.lines():
            last[line.id] = line.status
        return {i for i, status in last.items() if not (retry_failed and status == FAILED)}

    def append(self, line: BatchLine) -> None:
        with self.path.open("a", encoding="utf-8") as f:
            f.write(line.text())
            f.flush()
            os.fsync(f.fileno())


def result_line(question_id: str, question: str, run_id: str | None, result: dict[str, Any]) -> BatchLine:
    """The line of a finished run, from its result as the run store keeps it."""
    return BatchLine(
        id=question_id,
        question=question,
        run_id=run_id,
        status=result["status"],
        answer=result.get("answer"),
        citations=result.get("citations", []),
        seconds=result.get("seconds"),
    )


def failed_line(question_id: str, question: str, error: str, seconds: float | None = None) -> BatchLine:
    return BatchLine(
        id=question_id,
        question=question,
        status=FAILED,
        seconds=None if seconds is None else round(seconds, 2),
        error=error,
    )
