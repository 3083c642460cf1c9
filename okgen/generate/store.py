"""Per-article persistence of generation runs in the workspace database.

Tables (created on first use in ``data/okgen.sqlite``):

* ``gen_runs``: one row per run key (a hash of everything that determines the questions: date,
  agents and their spec hashes, decoding, seed, questions per article, probe settings), with
  the parameters as JSON;
* ``gen_articles``: one row per (run key, article) written in one transaction when the article
  is finished, holding every candidate with its verdicts and the usage of each agent;
* ``gen_assembled``: the final questions and funnel of a complete run, keyed by a fingerprint
  of its finished articles, so a rerun of a finished date is one read;
* ``gen_invocations``: the arguments a run was started with (model specs as typed, questions
  per article, seed, probe setting, agents folder), so ``okgen snapshot build`` can take up the
  finished run of a date instead of starting another with other settings;
* ``gen_attempts``: how many runs left each unfinished article unfinished by an error of its
  own (``[generate] give_up_after``: after that many the article is given up, recorded as
  failed, so that one article a server always fails on cannot hold up its date).

A run killed at any point loses at most the articles in flight; a rerun with the same key skips
the finished ones (no duplicates: the primary key is (run key, article id)). An article whose
text changed since is generated again.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from okgen.db import connect, ensure_schema
from okgen.generate.records import ArticleResult

DDL = """
CREATE TABLE IF NOT EXISTS gen_runs (
    run_key TEXT PRIMARY KEY,
    date TEXT NOT NULL,
    params TEXT NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS gen_articles (
    run_key TEXT NOT NULL,
    article_id TEXT NOT NULL,
    text_sha256 TEXT NOT NULL,
    status TEXT NOT NULL,
    error_kind TEXT,
    result TEXT NOT NULL,
    finished_at REAL NOT NULL,
    PRIMARY KEY (run_key, article_id)
);
CREATE INDEX IF NOT EXISTS gen_runs_date ON gen_runs (date);
CREATE TABLE IF NOT EXISTS gen_assembled (
    run_key TEXT PRIMARY KEY,
    fingerprint TEXT NOT NULL,
    questions TEXT NOT NULL,
    funnel TEXT NOT NULL,
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS gen_invocations (
    run_key TEXT PRIMARY KEY,
    args TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS gen_attempts (
    run_key TEXT NOT NULL,
    article_id TEXT NOT NULL,
    text_sha256 TEXT NOT NULL,
    attempts INTEGER NOT NULL,
    PRIMARY KEY (run_key, article_id)
);
"""


class GenerateStore:
    """The generation tables of a workspace database.

    Args:
        path: the SQLite file (``Workspace.db_path``).
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._conn = connect(self.path)
        ensure_schema(self._conn, DDL)

    def __enter__(self) -> GenerateStore:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection."""
        self._conn.close()

    def start_run(self, run_key: str, date: str, params: dict[str, Any]) -> None:
        """Record a run (or touch it when it exists)."""
        now = time.time()
        with self._conn:
            self._conn.execute(
                "INSERT INTO gen_runs (run_key, date, params, created_at, updated_at) VALUES (?, ?, ?, ?, ?) "
                "ON CONFLICT(run_key) DO UPDATE SET updated_at = excluded.updated_at",
                (run_key, date, json.dumps(params, sort_keys=True), now, now))

    def record_invocation(self, run_key: str, args: dict[str, Any]) -> None:
        """Keep the arguments that start ``run_key`` again (see :meth:`complete_runs`)."""
        with self._conn:
            self._conn.execute("INSERT OR REPLACE INTO gen_invocations (run_key, args) VALUES (?, ?)",
                               (run_key, json.dumps(args, sort_keys=True)))

    def complete_runs(self, date: str) -> list[dict[str, Any]]:
        """The date's complete runs (every article finished and assembled) that can be started
        again, newest first: ``run_key``, ``params`` and the ``args`` they were started with."""
        rows = self._conn.execute(
            "SELECT r.run_key, r.params, i.args FROM gen_runs r JOIN gen_assembled s ON s.run_key = r.run_key "
            "JOIN gen_invocations i ON i.run_key = r.run_key WHERE r.date = ? ORDER BY s.created_at DESC", (date,))
        return [{"run_key": r[0], "params": json.loads(r[1]), "args": json.loads(r[2])} for r in rows.fetchall()]

    def unrecorded_runs(self, date: str) -> int:
        """The date's complete runs whose arguments were not recorded (made before okgen kept them)."""
        row = self._conn.execute(
            "SELECT COUNT(*) FROM gen_runs r JOIN gen_assembled s ON s.run_key = r.run_key "
            "LEFT JOIN gen_invocations i ON i.run_key = r.run_key WHERE r.date = ? AND i.run_key IS NULL", (date,))
        return int(row.fetchone()[0])

    def finished_hashes(self, run_key: str) -> dict[str, str]:
        """Finished articles of a run: article id -> text hash (without loading the results)."""
        rows = self._conn.execute("SELECT article_id, text_sha256 FROM gen_articles WHERE run_key = ?", (run_key,)).fetchall()
        return {r[0]: r[1] for r in rows}

    def finished(self, run_key: str) -> dict[str, ArticleResult]:
        """Every finished article of a run: article id -> result."""
        rows = self._conn.execute("SELECT article_id, result FROM gen_articles WHERE run_key = ?", (run_key,)).fetchall()
        return {r["article_id"]: ArticleResult.model_validate_json(r["result"]) for r in rows}

    def save(self, run_key: str, result: ArticleResult) -> None:
        """Persist one finished article (replacing an earlier result for a changed text)."""
        with self._conn:
            self._conn.execute(
                "INSERT OR REPLACE INTO gen_articles (run_key, article_id, text_sha256, status, error_kind, result, finished_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (run_key, result.article_id, result.text_sha256, result.status, result.error_kind,
                 result.model_dump_json(), time.time()))

    def count_attempt(self, run_key: str, article_id: str, text_sha256: str) -> int:
        """Count one more run that left an article unfinished by an error of its own; returns the
        count (back to 1 when its text changed since the last one)."""
        with self._conn:
            self._conn.execute(
                "INSERT INTO gen_attempts (run_key, article_id, text_sha256, attempts) VALUES (?, ?, ?, 1) "
                "ON CONFLICT(run_key, article_id) DO UPDATE SET attempts = CASE WHEN text_sha256 = "
                "excluded.text_sha256 THEN attempts + 1 ELSE 1 END, text_sha256 = excluded.text_sha256",
                (run_key, article_id, text_sha256))
            row = self._conn.execute("SELECT attempts FROM gen_attempts WHERE run_key = ? AND article_id = ?",
                                     (run_key, article_id)).fetchone()
        return int(row[0])

    def clear(self, run_key: str) -> int:
        """Forget a run's finished articles (``--fresh``); returns how many were removed."""
        with self._conn:
            cur = self._conn.execute("DELETE FROM gen_articles WHERE run_key = ?", (run_key,))
            self._conn.execute("DELETE FROM gen_attempts WHERE run_key = ?", (run_key,))
            self._conn.execute("DELETE FROM gen_assembled WHERE run_key = ?", (run_key,))
        return cur.rowcount

    def save_assembly(self, run_key: str, fingerprint: str, questions_json: str, funnel: dict[str, Any]) -> None:
        """Keep the final questions (a JSON array) and funnel of a complete run."""
        with self._conn:
            self._conn.execute(
                "INSERT OR REPLACE INTO gen_assembled (run_key, fingerprint, questions, funnel, created_at) VALUES (?, ?, ?, ?, ?)",
                (run_key, fingerprint, questions_json, json.dumps(funnel, sort_keys=True), time.time()))

    def assembly(self, run_key: str, fingerprint: str) -> tuple[str, dict[str, Any]] | None:
        """The stored (questions JSON, funnel) of a run whose finished articles match ``fingerprint``."""
        row = self._conn.execute("SELECT questions, funnel FROM gen_assembled WHERE run_key = ? AND fingerprint = ?",
                                 (run_key, fingerprint)).fetchone()
        return (row[0], json.loads(row[1])) if row else None

    def runs(self, date: str | None = None) -> list[dict[str, Any]]:
        """Recorded runs (newest first), with their finished-article counts."""
        sql = ("SELECT r.run_key, r.date, r.params, r.created_at, r.updated_at, COUNT(a.article_id) AS articles "
               "FROM gen_runs r LEFT JOIN gen_articles a ON a.run_key = r.run_key ")
        args: tuple[Any, ...] = ()
        if date is not None:
            sql += "WHERE r.date = ? "
            args = (date,)
        sql += "GROUP BY r.run_key ORDER BY r.updated_at DESC"
        return [{**dict(r), "params": json.loads(r["params"])} for r in self._conn.execute(sql, args).fetchall()]
