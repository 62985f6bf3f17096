"""Cross-task memory: what finished runs verified, found again by a similar question.

Each finished run with verified evidence is stored in LanceDB (`$RETRAC_HOME/memory`) with two
vectors: its question, and its findings (answer and facts). A new question is matched against both;
the best past runs above a similarity threshold hand over their verified evidence, which the agent
re-checks against the current corpus before it seeds the new state (a document may have changed
since). Memory is a hint for where to look, never a source: every seeded quote is verified again.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from retrac_local.contract.state import ResearchState
from retrac_local.corpus.embedder import Embedder
from retrac_local.errors import StoreError
from retrac_local.lazy import require

TABLE = "runs"
MAX_FACTS = 8


@dataclass(frozen=True)
class Recalled:
    run_id: str
    question: str
    similarity: float
    evidence: list[dict[str, str]]  # {fact, source, quote, verified}


class RunMemory:
    def __init__(self, path: Path, embedder_factory: Callable[[], Embedder]) -> None:
        self.path, self._embedder_factory = path, embedder_factory
        self._db: Any = None

    def _connect(self) -> Any:
        if self._db is None:
            lancedb = require("lancedb", purpose="the cross-task memory")
            try:
                self.path.mkdir(parents=True, exist_ok=True)
                self._db = lancedb.connect(str(self.path))
            except OSError as e:
                raise StoreError(f"cannot open the run memory in {self.path}: {e}") from e
        return self._db

    def _table(self) -> Any | None:
        db = self._connect()
        return db.open_table(TABLE) if TABLE in db.list_tables().tables else None

    @staticmethod
    def findings(state: ResearchState) -> str:
        facts = [e.fact for e in state.evidence if e.verified in ("yes", "partial")][:MAX_FACTS]
        return " ".join([f"Answer: {state.answer}." if state.answer else "", *facts]).strip()

    def remember(self, run_id: str, state: ResearchState) -> bool:
        """Store a finished run's verified evidence; False when it has none worth keeping."""
        evidence = [
            {"fact": e.fact, "source": e.source, "quote": e.quote, "verified": e.verified}
            for e in state.evidence
            if e.verified in ("yes", "partial")
        ]
        if not evidence:
            return False
        embedder = self._embedder_factory()
        vectors = embedder.embed([state.question, self.findings(state)])
        row = {
            "run_id": run_id,
            "question": state.question,
            "answer": state.answer or "",
            "evidence": json.dumps(evidence, ensure_ascii=False),
            "created": time.time(),
            "embedder": embedder.name,
            "vector": vectors[0].tolist(),
            "findings_vector": vectors[1].tolist(),
        }
        table = self._table()
        if table is None:
            self._connect().create_table(TABLE, data=[row])
        else:
            table.delete(f"run_id = {_quote(run_id)}")  # a resumed run finishes once
            table.add([row])
        return True

    def recall(
        self, question: str, limit: int = 2, min_similarity: float = 0.7, exclude: str | None = None
    ) -> list[Recalled]:
        """The past runs most similar to `question` (by their question or their findings)."""
        table = self._table()
        if table is None:
            return []
        embedder = self._embedder_factory()
        vector = embedder.embed([question])[0].tolist()
        best: dict[str, tuple[float, dict[str, Any]]] = {}
        for column in ("vector", "findings_vector"):
            rows = (
                table.search(vector, vector_column_name=column)
                .distance_type("cosine")
                .where(f"embedder = {_quote(embedder.name)}", prefilter=True)
                .limit(limit * 3)
                .to_list()
            )
            for row in rows:
                similarity = 1.0 - float(row["_distance"])
                if row["run_id"] != exclude and similarity > best.get(row["run_id"], (-1.0, {}))[0]:
                    best[row["run_id"]] = (similarity, row)
        ranked = sorted(best.values(), key=lambda pair: -pair[0])
        return [
            Recalled(row["run_id"], row["question"], round(sim, 4), json.loads(row["evidence"]))
            for sim, row in ranked
            if sim >= min_similarity
        ][:limit]

    def count(self) -> int:
        table = self._table()
        return 0 if table is None else int(table.count_rows())


def _quote(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"
