"""The run store: runs, rounds (state, trajectory, diff), LLM calls and the final result, in SQLite.

One class owns all SQL. WAL mode lets several processes read while one writes; each round is
committed in one transaction, so a crash loses at most the round in progress. Migrations are
forward-only, named, and recorded in a table.
"""

from __future__ import annotations

import fcntl
import json
import os
import sqlite3
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from retrac_local.errors import RunBusyError, RunNotFoundError, StoreError
from retrac_local.records import (
    CallRecord,
    JSONObject,
    RoundStats,
    RunListing,
    StoredCall,
    StoredRound,
    StoredRun,
)


def m001_initial(db: sqlite3.Connection) -> None:
    _script(
        db,
        """
        CREATE TABLE runs (
            run_id TEXT PRIMARY KEY, question TEXT NOT NULL, status TEXT NOT NULL, answer TEXT,
            created REAL NOT NULL, updated REAL NOT NULL, initial_state TEXT NOT NULL,
            settings TEXT NOT NULL, result TEXT
        );
        CREATE TABLE rounds (
            run_id TEXT NOT NULL REFERENCES runs(run_id), iteration INTEGER NOT NULL,
            state TEXT NOT NULL, trajectory TEXT NOT NULL, diff TEXT NOT NULL, stats TEXT NOT NULL,
            created REAL NOT NULL, PRIMARY KEY (run_id, iteration)
        );
        CREATE TABLE calls (
            run_id TEXT NOT NULL REFERENCES runs(run_id), seq INTEGER NOT NULL, iteration INTEGER NOT NULL,
            role TEXT NOT NULL, purpose TEXT NOT NULL, prompt_tokens INTEGER NOT NULL,
            completion_tokens INTEGER NOT NULL, cached_tokens INTEGER NOT NULL, seconds REAL NOT NULL,
            PRIMARY KEY (run_id, seq)
        );
        """,
    )


def _script(db: sqlite3.Connection, sql: str) -> None:
    # Statement by statement: executescript() would commit the migration's transaction midway.
    for statement in sql.split(";"):
        if statement.strip():
            db.execute(statement)


def m002_memory(db: sqlite3.Connection) -> None:
    """The past runs whose evidence seeded a run (cross-task memory)."""
    db.execute("ALTER TABLE runs ADD COLUMN memory TEXT NOT NULL DEFAULT '[]'")


MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = [m001_initial, m002_memory]


class RunStore:
    def __init__(self, path: Path) -> None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(path, timeout=30, isolation_level=None)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA foreign_keys=ON")
            self._migrate()
        except (sqlite3.Error, OSError) as e:
            raise StoreError(
                f"cannot open the run store {path}: {e}; check that RETRAC_HOME is writable"
            ) from e
        self.path = path

    @contextmanager
    def running(self, run_id: str) -> Iterator[None]:
        """Held while a process runs `run_id` (asks it or resumes it): a second process that tries is
        refused with `RunBusyError` instead of interleaving its rounds with the first one's. The lock
        is the operating system's (flock), so a killed process never leaves it behind."""
        folder = self.path.with_name(self.path.name + ".locks")  # beside the store, named for it
        try:
            folder.mkdir(parents=True, exist_ok=True)
            fd = os.open(folder / f"{run_id}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as e:
            raise StoreError(f"cannot lock run {run_id} in {folder}: {e.strerror or e}") from e
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError as e:
                raise RunBusyError(
                    f"run {run_id} is being run by another process right now; wait for it to finish "
                    "(or stop it), then resume it"
                ) from e
            yield
        finally:
            os.close(fd)  # closing releases the lock

    def _migrate(self) -> None:
        self.db.execute(
            "CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied REAL NOT NULL)"
        )
        done = {r[0] for r in self.db.execute("SELECT name FROM migrations")}
        for migration in MIGRATIONS:
            if migration.__name__ in done:
                continue
            self.db.execute("BEGIN IMMEDIATE")
            try:
                if not self.db.execute(
                    "SELECT 1 FROM migrations WHERE name = ?", (migration.__name__,)
                ).fetchone():
                    migration(self.db)
                    self.db.execute("INSERT INTO migrations VALUES (?, ?)", (migration.__name__, time.time()))
                self.db.execute("COMMIT")
            except BaseException:
                self.db.execute("ROLLBACK")
                raise

    def _write(self, statements: list[tuple[str, tuple[Any, ...]]]) -> None:
        try:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                for sql, args in statements:
                    self.db.execute(sql, args)
                self.db.execute("COMMIT")
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
        except sqlite3.Error as e:
            raise StoreError(f"cannot write to the run store {self.path}: {e}") from e

    # -- writing -------------------------------------------------------------------------------
    def create_run(
        self,
        question: str,
        initial_state: JSONObject,
        settings: JSONObject,
        memory: list[JSONObject] | None = None,
    ) -> str:
        run_id = time.strftime("%Y%m%d-%H%M%S") + "-" + uuid.uuid4().hex[:6]
        now = time.time()
        self._write(
            [
                (
                    "INSERT INTO runs (run_id, question, status, answer, created, updated, initial_state, settings, memory) "
                    "VALUES (?, ?, 'running', NULL, ?, ?, ?, ?, ?)",
                    (
                        run_id,
                        question,
                        now,
                        now,
                        json.dumps(initial_state),
                        json.dumps(settings),
                        json.dumps(memory or []),
                    ),
                )
            ]
        )
        return run_id

    def save_round(
        self,
        run_id: str,
        iteration: int,
        state: JSONObject,
        trajectory: JSONObject,
        diff: JSONObject,
        stats: RoundStats,
        calls: Sequence[CallRecord],
    ) -> None:
        now = time.time()
        statements: list[tuple[str, tuple[Any, ...]]] = [
            (
                "INSERT INTO rounds VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    run_id,
                    iteration,
                    json.dumps(state),
                    json.dumps(trajectory),
                    json.dumps(diff),
                    json.dumps(stats),
                    now,
                ),
            )
        ]
        statements += self._call_rows(run_id, calls)
        statements.append(("UPDATE runs SET updated = ? WHERE run_id = ?", (now, run_id)))
        self._write(statements)

    def finish_run(
        self,
        run_id: str,
        status: str,
        answer: str | None,
        result: JSONObject,
        calls: Sequence[CallRecord],
    ) -> None:
        statements = self._call_rows(run_id, calls)
        statements.append(
            (
                "UPDATE runs SET status = ?, answer = ?, result = ?, updated = ? WHERE run_id = ?",
                (status, answer, json.dumps(result), time.time(), run_id),
            )
        )
        self._write(statements)

    def mark_failed(self, run_id: str) -> None:
        """A run stopped by an error (a model server gone, a broken store): not `running` any more,
        and with no result, so that `resume` continues it from its last saved round."""
        self._write(
            [
                (
                    "UPDATE runs SET status = 'failed', updated = ? WHERE run_id = ? AND status = 'running'",
                    (time.time(), run_id),
                )
            ]
        )

    def _call_rows(self, run_id: str, calls: Sequence[CallRecord]) -> list[tuple[str, tuple[Any, ...]]]:
        first_seq = self.db.execute(
            "SELECT COALESCE(MAX(seq), 0) FROM calls WHERE run_id = ?", (run_id,)
        ).fetchone()[0]
        return [
            (
                "INSERT INTO calls VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    run_id,
                    first_seq + n,
                    c["iteration"],
                    c["role"],
                    c["purpose"],
                    c["prompt_tokens"],
                    c["completion_tokens"],
                    c["cached_tokens"],
                    c["seconds"],
                ),
            )
            for n, c in enumerate(calls, start=1)
        ]

    # -- reading -------------------------------------------------------------------------------
    def run(self, run_id: str) -> StoredRun:
        row = self.db.execute(
            "SELECT run_id, question, status, answer, created, updated, initial_state, settings, result, memory "
            "FROM runs WHERE run_id = ?",
            (run_id,),
        ).fetchone()
        if row is None:
            raise RunNotFoundError(f"no run {run_id!r} in {self.path}; `retrac runs list` shows the runs")
        return {
            "run_id": row[0],
            "question": row[1],
            "status": row[2],
            "answer": row[3],
            "created": row[4],
            "updated": row[5],
            "initial_state": json.loads(row[6]),
            "settings": json.loads(row[7]),
            "result": json.loads(row[8]) if row[8] else None,
            "memory": json.loads(row[9]),
        }

    def rounds(self, run_id: str) -> list[StoredRound]:
        rows = self.db.execute(
            "SELECT iteration, state, trajectory, diff, stats, created FROM rounds WHERE run_id = ? ORDER BY iteration",
            (run_id,),
        ).fetchall()
        return [
            {
                "iteration": r[0],
                "state": json.loads(r[1]),
                "trajectory": json.loads(r[2]),
                "diff": json.loads(r[3]),
                "stats": json.loads(r[4]),
                "created": r[5],
            }
            for r in rows
        ]

    def calls(self, run_id: str) -> list[StoredCall]:
        rows = self.db.execute(
            "SELECT seq, iteration, role, purpose, prompt_tokens, completion_tokens, cached_tokens, seconds "
            "FROM calls WHERE run_id = ? ORDER BY seq",
            (run_id,),
        ).fetchall()
        return [
            StoredCall(
                seq=r[0],
                iteration=r[1],
                role=r[2],
                purpose=r[3],
                prompt_tokens=r[4],
                completion_tokens=r[5],
                cached_tokens=r[6],
                seconds=r[7],
            )
            for r in rows
        ]

    def list_runs(self, limit: int = 100) -> list[RunListing]:
        rows = self.db.execute(
            "SELECT r.run_id, r.question, r.status, r.created, COUNT(x.iteration) FROM runs r "
            "LEFT JOIN rounds x ON x.run_id = r.run_id GROUP BY r.run_id ORDER BY r.created DESC LIMIT ?",
            (limit,),
        ).fetchall()
        return [
            {
                "run_id": r[0],
                "question": r[1],
                "status": r[2],
                "created": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(r[3])),
                "rounds": r[4],
            }
            for r in rows
        ]

    def close(self) -> None:
        self.db.close()
