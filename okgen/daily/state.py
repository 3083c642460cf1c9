"""Run and stage checkpoints of the daily job, in the workspace's SQLite store.

A run is one attempt at one date; each stage (ingest, generate, snapshot, index, publish)
records its state (``running``, ``done``, ``failed``, ``skipped``), timings, counts and
error. A rerun of the same date resumes the latest unfinished run, skipping stages already
``done``; ``--force`` starts a new run. Once a date has a finished run, a rerun without
``--force`` returns the latest finished one: a forced attempt that failed or was interrupted
before its snapshot does not shadow it (it stays in the history; the next ``--force`` starts
afresh); one that built its snapshot and failed later (index, publish) is resumed.
"""

from __future__ import annotations

import datetime as dt
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from okgen.db import connect, ensure_schema

DDL = """
CREATE TABLE IF NOT EXISTS daily_runs (
    run_id INTEGER PRIMARY KEY AUTOINCREMENT,
    date TEXT NOT NULL,
    status TEXT NOT NULL,
    started_at REAL NOT NULL,
    finished_at REAL,
    signature TEXT,
    error TEXT,
    forced INTEGER NOT NULL DEFAULT 0,
    config TEXT
);
CREATE INDEX IF NOT EXISTS daily_runs_date ON daily_runs(date);
CREATE TABLE IF NOT EXISTS daily_stages (
    run_id INTEGER NOT NULL REFERENCES daily_runs(run_id),
    stage TEXT NOT NULL,
    status TEXT NOT NULL,
    started_at REAL,
    finished_at REAL,
    counts TEXT,
    error TEXT,
    PRIMARY KEY (run_id, stage)
);
"""


@dataclass
class StageRow:
    """One stage of one run."""

    stage: str
    status: str
    started_at: float | None
    finished_at: float | None
    counts: dict[str, Any]
    error: str | None

    @property
    def seconds(self) -> float | None:
        """Duration, when finished."""
        if self.started_at is None or self.finished_at is None:
            return None
        return self.finished_at - self.started_at


@dataclass
class RunRow:
    """One daily run."""

    run_id: int
    date: dt.date
    status: str
    started_at: float
    finished_at: float | None
    signature: str | None
    error: str | None
    forced: bool
    stages: list[StageRow]


class RunState:
    """Checkpoints in ``data/okgen.sqlite``.

    Args:
        db_path: the workspace database.
    """

    def __init__(self, db_path: str | Path):
        self.conn = connect(db_path)
        ensure_schema(self.conn, DDL)

    def close(self) -> None:
        """Close the database."""
        self.conn.close()

    def __enter__(self) -> RunState:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def start_or_resume(self, date: dt.date, force: bool = False, config: dict[str, Any] | None = None) -> tuple[int, bool]:
        """Return (run id, resumed): without ``force``, the latest finished run of ``date`` when
        there is one (a failed or interrupted forced attempt after it does not shadow it), else
        the latest unfinished run, resumed; otherwise a new run."""
        if not force:
            picked = self.rerun_target(date)
            if picked is not None:
                run_id, status, _ = picked
                if status != "done":
                    with self.conn:
                        self.conn.execute("UPDATE daily_runs SET status = 'running', error = NULL WHERE run_id = ?",
                                          (run_id,))
                return run_id, True
        # The run's start (to the second) is its snapshot's timestamp: a forced rebuild within the
        # same second as the run before it still gets a later one, so a new signature.
        started = time.time()
        last = self.conn.execute("SELECT MAX(started_at) FROM daily_runs WHERE date = ?", (str(date),)).fetchone()[0]
        if last is not None and int(started) <= int(last):
            started = float(int(last) + 1)
        with self.conn:
            cur = self.conn.execute(
                "INSERT INTO daily_runs (date, status, started_at, forced, config) VALUES (?, 'running', ?, ?, ?)",
                (str(date), started, int(force), json.dumps(config or {}, sort_keys=True, default=str)),
            )
        return int(cur.lastrowid), False

    def stage_status(self, run_id: int, stage: str) -> str | None:
        """The recorded status of a stage, or None."""
        row = self.conn.execute("SELECT status FROM daily_stages WHERE run_id = ? AND stage = ?", (run_id, stage)).fetchone()
        return row["status"] if row else None

    def stage_counts(self, run_id: int, stage: str) -> dict[str, Any]:
        """The counts a finished stage recorded."""
        row = self.conn.execute("SELECT counts FROM daily_stages WHERE run_id = ? AND stage = ?", (run_id, stage)).fetchone()
        return json.loads(row["counts"]) if row and row["counts"] else {}

    def begin_stage(self, run_id: int, stage: str) -> None:
        """Mark a stage running."""
        with self.conn:
            self.conn.execute(
                "INSERT INTO daily_stages (run_id, stage, status, started_at) VALUES (?, ?, 'running', ?) "
                "ON CONFLICT(run_id, stage) DO UPDATE SET status = 'running', started_at = excluded.started_at, error = NULL",
                (run_id, stage, time.time()),
            )

    def end_stage(self, run_id: int, stage: str, status: str, counts: dict[str, Any] | None = None, error: str | None = None) -> None:
        """Record a stage's outcome."""
        with self.conn:
            self.conn.execute(
                "INSERT INTO daily_stages (run_id, stage, status, started_at, finished_at, counts, error) VALUES (?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT(run_id, stage) DO UPDATE SET status = excluded.status, finished_at = excluded.finished_at, "
                "counts = excluded.counts, error = excluded.error",
                (run_id, stage, status, time.time(), time.time(), json.dumps(counts or {}, sort_keys=True, default=str), error),
            )

    def finish_run(self, run_id: int, status: str, signature: str | None = None, error: str | None = None) -> None:
        """Record a run's outcome."""
        with self.conn:
            self.conn.execute(
                "UPDATE daily_runs SET status = ?, finished_at = ?, signature = COALESCE(?, signature), error = ? WHERE run_id = ?",
                (status, time.time(), signature, error, run_id),
            )

    def run(self, run_id: int) -> RunRow:
        """One run, with its stages.

        Raises:
            KeyError: no such run.
        """
        found = self._rows("SELECT * FROM daily_runs WHERE run_id = ?", (run_id,))
        if not found:
            raise KeyError(run_id)
        return found[0]

    def runs(self, limit: int = 10, date: dt.date | None = None) -> list[RunRow]:
        """Recent runs, newest first, with their stages."""
        q = "SELECT * FROM daily_runs"
        args: tuple[Any, ...] = ()
        if date is not None:
            q += " WHERE date = ?"
            args = (str(date),)
        return self._rows(q + " ORDER BY run_id DESC LIMIT ?", (*args, limit))

    def _rows(self, query: str, args: tuple[Any, ...]) -> list[RunRow]:
        rows = self.conn.execute(query, args).fetchall()
        out = []
        for r in rows:
            stages = [
                StageRow(s["stage"], s["status"], s["started_at"], s["finished_at"], json.loads(s["counts"] or "{}"), s["error"])
                for s in self.conn.execute("SELECT * FROM daily_stages WHERE run_id = ? ORDER BY started_at", (r["run_id"],))
            ]
            out.append(RunRow(int(r["run_id"]), dt.date.fromisoformat(r["date"]), r["status"], r["started_at"],
                              r["finished_at"], r["signature"], r["error"], bool(r["forced"]), stages))
        return out

    def rerun_target(self, date: dt.date) -> tuple[int, str, dict[str, Any]] | None:
        """The run a plain rerun of ``date`` takes up, as (run id, status, recorded options), or
        None: the latest finished run, unless a newer unfinished one already built its snapshot
        (its snapshot is in the catalogue, and the newest of a day is the one a series takes);
        else the latest run."""
        done = self.conn.execute("SELECT run_id, status, config FROM daily_runs WHERE date = ? AND status = 'done' "
                                 "ORDER BY run_id DESC LIMIT 1", (str(date),)).fetchone()
        row = self.conn.execute("SELECT run_id, status, config FROM daily_runs WHERE date = ? "
                                "ORDER BY run_id DESC LIMIT 1", (str(date),)).fetchone()
        newer_built = (done is not None and row is not None and int(row["run_id"]) > int(done["run_id"])
                       and self.stage_status(int(row["run_id"]), "snapshot") == "done")
        pick = done if done is not None and not newer_built else row
        if pick is None:
            return None
        return int(pick["run_id"]), str(pick["status"]), json.loads(pick["config"] or "{}")

    def last_done_config(self, date: dt.date) -> dict[str, Any] | None:
        """The options recorded by the latest finished run of ``date`` (None when there is none)."""
        row = self.conn.execute("SELECT config FROM daily_runs WHERE date = ? AND status = 'done' "
                                "ORDER BY run_id DESC LIMIT 1", (str(date),)).fetchone()
        return None if row is None else json.loads(row["config"] or "{}")

    def done_dates(self) -> set[dt.date]:
        """Dates with a finished run."""
        return {dt.date.fromisoformat(r[0]) for r in self.conn.execute("SELECT DISTINCT date FROM daily_runs WHERE status = 'done'")}
