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

from retrac_local.errors import RetracError

FAILED = "failed"


class ResultsFile:
    def __init__(self, folder: Path) -> None:
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise RetracError(f"cannot create the output folder {folder}: {e.strerror or e}") from e
        self.path = folder / "results.jsonl"
        self._repair()

    def _repair(self) -> None:
        """Cut a last line the driver did not finish writing, keeping every whole line."""
        if not self.path.exists():
            return
        data = self.path.read_bytes()
        if data and not data.endswith(b"\n"):
            keep = data[: data.rfind(b"\n") + 1]
            with self.path.open("r+b") as f:
                f.truncate(len(keep))

    def lines(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        out = []
        for number, line in enumerate(self.path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                out.append(json.loads(line))
            except ValueError as e:
                raise RetracError(
                    f"{self.path}, line {number} is not JSON ({e}); move the file away to start "
                    "afresh, or delete that line to run its question again"
                ) from e
        return out

    def done(self, retry_failed: bool = False) -> set[str]:
        """The ids that need no run: every id written, or, with `retry_failed`, every id whose last
        line is not a failure."""
        last: dict[str, str] = {}
        for line in self.lines():
            last[str(line.get("id"))] = str(line.get("status"))
        return {i for i, status in last.items() if not (retry_failed and status == FAILED)}

    def append(self, line: dict[str, Any]) -> None:
        text = json.dumps(line, ensure_ascii=False) + "\n"
        with self.path.open("a", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())


def result_line(
    question_id: str, question: str, run_id: str | None, result: dict[str, Any]
) -> dict[str, Any]:
    """The line of a finished run, from its result as the run store keeps it."""
    return {
        "id": question_id,
        "question": question,
        "run_id": run_id,
        "status": result["status"],
        "answer": result.get("answer"),
        "citations": result.get("citations", []),
        "seconds": result.get("seconds"),
    }


def failed_line(question_id: str, question: str, error: str, seconds: float | None = None) -> dict[str, Any]:
    return {
        "id": question_id,
        "question": question,
        "run_id": None,
        "status": FAILED,
        "answer": None,
        "citations": [],
        "seconds": None if seconds is None else round(seconds, 2),
        "error": error,
    }
