"""The article store: SQLite tables in the workspace database (``data/okgen.sqlite``, WAL).

Tables owned by the ingest stage:

- ``articles``: one row per stored article (the canonical JSON record, plus the columns dedup
  needs: canonical URL, normalised-text hash, MinHash signature).
- ``ingest_items``: per date, every entry the stage has seen and what became of it (staged,
  stored, duplicate, filtered, failed ...); a rerun skips what is settled, so a killed run resumes.
- ``fetch_log``: url, status, bytes, time and error of every fetch.
- ``feed_state``: ETag / Last-Modified and the last body of each feed (for conditional GET).
- ``ingest_runs``: one row per run with its summary.
"""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from okgen.db import connect, ensure_schema
from okgen.files import record_line
from okgen.schema import Article, utcnow
from okgen.settings import Workspace

DDL = """
CREATE TABLE IF NOT EXISTS articles (
    id TEXT PRIMARY KEY,
    date TEXT NOT NULL,
    source TEXT NOT NULL,
    canonical_url TEXT NOT NULL,
    published_at TEXT NOT NULL,
    norm_sha256 TEXT,
    minhash BLOB,
    record TEXT NOT NULL,
    stored_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS articles_date ON articles(date, source);
CREATE INDEX IF NOT EXISTS articles_url ON articles(canonical_url);
CREATE INDEX IF NOT EXISTS articles_norm ON articles(norm_sha256);
CREATE TABLE IF NOT EXISTS ingest_items (
    date TEXT NOT NULL,
    key TEXT NOT NULL,
    outlet TEXT NOT NULL,
    url TEXT NOT NULL,
    status TEXT NOT NULL,
    reason TEXT,
    article_id TEXT,
    dup_of TEXT,
    sort_key TEXT,
    record TEXT,
    minhash BLOB,
    norm_sha256 TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (date, key)
);
CREATE INDEX IF NOT EXISTS ingest_items_status ON ingest_items(date, status);
CREATE TABLE IF NOT EXISTS fetch_log (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id TEXT,
    date TEXT,
    kind TEXT,
    url TEXT NOT NULL,
    final_url TEXT,
    status INTEGER,
    bytes INTEGER,
    started_at TEXT,
    elapsed_s REAL,
    attempts INTEGER,
    error TEXT
);
CREATE INDEX IF NOT EXISTS fetch_log_run ON fetch_log(run_id);
CREATE TABLE IF NOT EXISTS feed_state (
    feed_url TEXT PRIMARY KEY,
    outlet TEXT NOT NULL,
    etag TEXT,
    last_modified TEXT,
    body BLOB,
    content_type TEXT,
    final_url TEXT,
    status INTEGER,
    ok INTEGER,
    error TEXT,
    fetched_at TEXT
);
CREATE TABLE IF NOT EXISTS ingest_runs (
    run_id TEXT PRIMARY KEY,
    date TEXT NOT NULL,
    mode TEXT NOT NULL,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    summary TEXT
);
"""

FETCH_LOG_COLUMNS = ("run_id", "date", "kind", "url", "final_url", "status", "bytes", "started_at",
                     "elapsed_s", "attempts", "error")


class ArticleStore:
    """Articles and ingest bookkeeping in the workspace SQLite database.

    Use as a context manager, or call :meth:`close`. One store per thread (SQLite connections
    are not shared across threads here); several processes may use the same file (WAL).

    Args:
        path: the database file (``workspace.db_path``).
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.conn: sqlite3.Connection = connect(self.path)
        ensure_schema(self.conn, DDL)
        self._log_buffer: list[tuple[Any, ...]] = []

    @classmethod
    def for_workspace(cls, workspace: Workspace) -> ArticleStore:
        """The store of a workspace."""
        return cls(workspace.db_path)

    def __enter__(self) -> ArticleStore:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        """Flush the fetch log and close the connection."""
        if self.conn is not None:
            self.flush_log()
            self.conn.close()
            self.conn = None  # type: ignore[assignment]

    # ----------------------------------------------------------------------- articles
    def upsert(self, article: Article, *, norm_sha256: str | None = None, minhash: bytes | None = None) -> bool:
        """Insert an article or update it when its record changed.

        Args:
            article: the article.
            norm_sha256: hash of the normalised text (computed when omitted).
            minhash: MinHash signature (computed with the default parameters when omitted).

        Returns:
            True when a row was inserted or changed, False when the identical record was stored.
        """
        from okgen.ingest.dedup import minhash_signature, norm_text_hash

        rec = record_line(article)
        norm = norm_sha256 or norm_text_hash(article.text)
        sig = minhash if minhash is not None else minhash_signature(article.text)
        with self.conn:
            cur = self.conn.execute(
                "INSERT INTO articles (id, date, source, canonical_url, published_at, norm_sha256, minhash, record, stored_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT(id) DO UPDATE SET date=excluded.date, source=excluded.source,"
                " canonical_url=excluded.canonical_url, published_at=excluded.published_at,"
                " norm_sha256=excluded.norm_sha256, minhash=excluded.minhash, record=excluded.record,"
                " stored_at=excluded.stored_at WHERE articles.record != excluded.record",
                (article.id, article.date.isoformat(), article.source, article.canonical_url,
                 article.published_at.isoformat(), norm, sig, rec, utcnow().isoformat()),
            )
        return cur.rowcount > 0

    def get(self, article_id: str) -> Article | None:
        """The article with this id, or None."""
        row = self.conn.execute("SELECT record FROM articles WHERE id = ?", (article_id,)).fetchone()
        return Article.model_validate_json(row["record"]) if row else None

    def find(self, prefix: str) -> list[str]:
        """Ids starting with ``prefix`` (at most 10)."""
        if not prefix or not all(c in "0123456789abcdef" for c in prefix.lower()):
            return []
        rows = self.conn.execute("SELECT id FROM articles WHERE id LIKE ? ORDER BY id LIMIT 10",
                                 (prefix.lower() + "%",)).fetchall()
        return [r["id"] for r in rows]

    def articles_for_date(self, date: dt.date) -> list[Article]:
        """Articles of news date ``date``, ordered by publication time and id."""
        rows = self.conn.execute("SELECT record FROM articles WHERE date = ? ORDER BY published_at, id",
                                 (date.isoformat(),)).fetchall()
        return [Article.model_validate_json(r["record"]) for r in rows]

    def articles_between(self, start_exclusive: dt.date, end_inclusive: dt.date) -> list[Article]:
        """Articles dated in (start_exclusive, end_inclusive], ordered by date, time and id."""
        rows = self.conn.execute(
            "SELECT record FROM articles WHERE date > ? AND date <= ? ORDER BY date, published_at, id",
            (start_exclusive.isoformat(), end_inclusive.isoformat())).fetchall()
        return [Article.model_validate_json(r["record"]) for r in rows]

    def count(self, date: dt.date | None = None) -> int:
        """Number of stored articles (of one date when given)."""
        if date is None:
            return self.conn.execute("SELECT COUNT(*) FROM articles").fetchone()[0]
        return self.conn.execute("SELECT COUNT(*) FROM articles WHERE date = ?", (date.isoformat(),)).fetchone()[0]

    def counts_by_source(self, date: dt.date) -> dict[str, int]:
        """Stored articles per outlet on ``date``."""
        rows = self.conn.execute("SELECT source, COUNT(*) AS n FROM articles WHERE date = ? GROUP BY source",
                                 (date.isoformat(),)).fetchall()
        return {r["source"]: r["n"] for r in rows}

    def dates(self) -> list[tuple[dt.date, int]]:
        """(date, article count) for every date with articles, newest first."""
        rows = self.conn.execute("SELECT date, COUNT(*) AS n FROM articles GROUP BY date ORDER BY date DESC").fetchall()
        return [(dt.date.fromisoformat(r["date"]), r["n"]) for r in rows]

    def dedup_keys(self, start_exclusive: dt.date, end_inclusive: dt.date) -> list[sqlite3.Row]:
        """(id, canonical_url, norm_sha256, minhash) of the articles of a date range, for dedup."""
        return self.conn.execute(
            "SELECT id, canonical_url, norm_sha256, minhash FROM articles WHERE date > ? AND date <= ?"
            " ORDER BY date, published_at, id", (start_exclusive.isoformat(), end_inclusive.isoformat())).fetchall()

    def known_urls(self, urls: Iterable[str]) -> set[str]:
        """The canonical URLs among ``urls`` that a stored article already has."""
        urls = list(urls)
        found: set[str] = set()
        for i in range(0, len(urls), 500):
            chunk = urls[i:i + 500]
            q = f"SELECT canonical_url FROM articles WHERE canonical_url IN ({','.join('?' * len(chunk))})"
            found.update(r[0] for r in self.conn.execute(q, chunk))
        return found

    # ----------------------------------------------------------------------- items
    def dropped_items(self, date: dt.date) -> list[dict[str, Any]]:
        """The entries of ``date`` that did not become articles (failed, filtered, duplicates,
        over a cap...): outlet, URL, status, reason and the article a duplicate copies."""
        rows = self.conn.execute("SELECT outlet, url, status, reason, dup_of, attempts FROM ingest_items "
                                 "WHERE date = ? AND status NOT IN ('stored', 'staged') ORDER BY status, reason, outlet, url",
                                 (date.isoformat(),))
        return [dict(r) for r in rows]

    def item_states(self, date: dt.date) -> dict[str, tuple[str, str | None, str]]:
        """key -> (status, reason, outlet) of every entry seen for ``date``."""
        rows = self.conn.execute("SELECT key, status, reason, outlet FROM ingest_items WHERE date = ?",
                                 (date.isoformat(),))
        return {r["key"]: (r["status"], r["reason"], r["outlet"]) for r in rows}

    def set_item(self, date: dt.date, key: str, outlet: str, url: str, status: str, reason: str | None = None, *,
                 article_id: str | None = None, dup_of: str | None = None, sort_key: str | None = None,
                 record: str | None = None, minhash: bytes | None = None, norm_sha256: str | None = None,
                 commit: bool = True) -> None:
        """Record what became of one entry (insert or replace)."""
        self.conn.execute(
            "INSERT INTO ingest_items (date, key, outlet, url, status, reason, article_id, dup_of, sort_key, record,"
            " minhash, norm_sha256, attempts, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,1,?)"
            " ON CONFLICT(date, key) DO UPDATE SET outlet=excluded.outlet, url=excluded.url, status=excluded.status,"
            " reason=excluded.reason, article_id=excluded.article_id, dup_of=excluded.dup_of,"
            " sort_key=excluded.sort_key, record=excluded.record, minhash=excluded.minhash,"
            " norm_sha256=excluded.norm_sha256, attempts=ingest_items.attempts + 1, updated_at=excluded.updated_at",
            (date.isoformat(), key, outlet, url, status, reason, article_id, dup_of, sort_key, record, minhash,
             norm_sha256, utcnow().isoformat()))
        if commit:
            self.conn.commit()

    def mark_item(self, date: dt.date, key: str, status: str, reason: str | None = None,
                  dup_of: str | None = None) -> None:
        """Change an entry's status (no commit: the caller's transaction)."""
        self.conn.execute("UPDATE ingest_items SET status=?, reason=?, dup_of=?, updated_at=? WHERE date=? AND key=?",
                          (status, reason, dup_of, utcnow().isoformat(), date.isoformat(), key))

    def staged(self, date: dt.date) -> list[sqlite3.Row]:
        """Extracted entries of ``date`` waiting for dedup and storage, in a deterministic order."""
        return self.conn.execute(
            "SELECT key, outlet, record, minhash, norm_sha256, article_id FROM ingest_items"
            " WHERE date = ? AND status = 'staged' ORDER BY sort_key, key", (date.isoformat(),)).fetchall()

    def item_counts(self, date: dt.date) -> dict[str, int]:
        """Entries of ``date`` per status."""
        rows = self.conn.execute("SELECT status, COUNT(*) AS n FROM ingest_items WHERE date = ? GROUP BY status",
                                 (date.isoformat(),))
        return {r["status"]: r["n"] for r in rows}

    # ----------------------------------------------------------------------- fetch log
    def log_fetch(self, row: dict[str, Any], flush_every: int = 200) -> None:
        """Append a fetch-log row (buffered; flushed every ``flush_every`` rows and on close)."""
        self._log_buffer.append(tuple(row.get(c) for c in FETCH_LOG_COLUMNS))
        if len(self._log_buffer) >= flush_every:
            self.flush_log()

    def flush_log(self) -> None:
        """Write buffered fetch-log rows."""
        if not self._log_buffer or self.conn is None:
            return
        with self.conn:
            self.conn.executemany(
                f"INSERT INTO fetch_log ({', '.join(FETCH_LOG_COLUMNS)}) VALUES ({', '.join('?' * len(FETCH_LOG_COLUMNS))})",
                self._log_buffer)
        self._log_buffer.clear()

    def fetch_log(self, run_id: str | None = None, url: str | None = None) -> list[dict[str, Any]]:
        """Fetch-log rows, optionally of one run or one URL, oldest first."""
        self.flush_log()
        q, args = "SELECT * FROM fetch_log WHERE 1=1", []
        if run_id:
            q, args = q + " AND run_id = ?", [*args, run_id]
        if url:
            q, args = q + " AND url = ?", [*args, url]
        return [dict(r) for r in self.conn.execute(q + " ORDER BY id", args)]

    # ----------------------------------------------------------------------- feed state
    def feed_state(self, feed_url: str) -> dict[str, Any] | None:
        """Remembered state of a feed (etag, last_modified, body ...), or None."""
        row = self.conn.execute("SELECT * FROM feed_state WHERE feed_url = ?", (feed_url,)).fetchone()
        return dict(row) if row else None

    def save_feed_state(self, feed_url: str, outlet: str, **values: Any) -> None:
        """Insert or update a feed's state; keys not given keep their value."""
        cols = ["etag", "last_modified", "body", "content_type", "final_url", "status", "ok", "error", "fetched_at"]
        given = {k: v for k, v in values.items() if k in cols}
        sets = ", ".join(f"{k}=excluded.{k}" for k in given)
        names = ["feed_url", "outlet", *given]
        with self.conn:
            self.conn.execute(
                f"INSERT INTO feed_state ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})"
                f" ON CONFLICT(feed_url) DO UPDATE SET outlet=excluded.outlet{', ' + sets if sets else ''}",
                (feed_url, outlet, *given.values()))

    # ----------------------------------------------------------------------- retention
    def prune(self, before: dt.date, *, articles_before: dt.date | None = None, dry_run: bool = False) -> dict[str, int]:
        """Delete the ingest working state of dates before ``before`` (and old articles if asked).

        Per-entry resume state and fetch log of those dates go; feed state stays (conditional GET
        needs it). Articles go only with ``articles_before``: those dated before it (keep the
        dedup window of ``dedup_days`` before the oldest date still ingested), with their dates'
        run records (``okgen snapshot build`` reads a date's feeds hash from them).

        Args:
            before: first date whose working state is kept.
            articles_before: first article date kept; None keeps every article.
            dry_run: count, delete nothing.

        Returns:
            Rows (to be) deleted per table: ``ingest_items``, ``fetch_log``, ``ingest_runs``, ``articles``.
        """
        self.flush_log()
        plan = [("ingest_items", "date", before), ("fetch_log", "date", before)]
        if articles_before is not None:
            # The run records (the feeds hash a snapshot's signature takes) go with the articles.
            plan += [("articles", "date", articles_before), ("ingest_runs", "date", articles_before)]
        counts = {"ingest_items": 0, "fetch_log": 0, "ingest_runs": 0, "articles": 0}
        with self.conn:
            for table, column, day in plan:
                where = f"FROM {table} WHERE {column} < ?"
                counts[table] = self.conn.execute(f"SELECT COUNT(*) {where}", (day.isoformat(),)).fetchone()[0]
                if not dry_run and counts[table]:
                    self.conn.execute(f"DELETE {where}", (day.isoformat(),))
        return counts

    def free_bytes(self) -> int:
        """Bytes of the file that deleted rows left free (SQLite keeps them, with the deleted
        texts still readable in them, until a ``VACUUM``)."""
        pages = self.conn.execute("PRAGMA freelist_count").fetchone()[0]
        return int(pages) * int(self.conn.execute("PRAGMA page_size").fetchone()[0])

    def compact(self) -> bool:
        """Give the space of deleted rows back to the disk (``VACUUM``); False when a reader
        kept the write-ahead log from being folded back (the file is compact, the log not yet).

        Raises:
            sqlite3.OperationalError: another process holds the database (a run in progress), or
                there is no room for the copy VACUUM writes.
        """
        self.conn.execute("VACUUM")
        busy = self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
        return not busy

    # ----------------------------------------------------------------------- runs
    def start_run(self, run_id: str, date: dt.date, mode: str) -> None:
        """Record the start of an ingest run."""
        with self.conn:
            self.conn.execute("INSERT OR REPLACE INTO ingest_runs (run_id, date, mode, started_at) VALUES (?,?,?,?)",
                              (run_id, date.isoformat(), mode, utcnow().isoformat()))

    def finish_run(self, run_id: str, summary: dict[str, Any]) -> None:
        """Record the end of an ingest run with its summary."""
        with self.conn:
            self.conn.execute("UPDATE ingest_runs SET finished_at=?, summary=? WHERE run_id=?",
                              (utcnow().isoformat(), json.dumps(summary, default=str), run_id))

    def runs(self, date: dt.date | None = None, limit: int | None = None) -> Sequence[dict[str, Any]]:
        """Ingest runs (of one date when given; the newest ``limit``), newest first."""
        q = "SELECT * FROM ingest_runs" + (" WHERE date = ?" if date else "") + " ORDER BY started_at DESC"
        args: tuple[Any, ...] = (date.isoformat(),) if date else ()
        if limit is not None:
            q += " LIMIT ?"
            args += (int(limit),)
        return [dict(r) for r in self.conn.execute(q, args)]
