"""The embedded SQLite store: one database file per workspace (``data/okgen.sqlite``).

Each subsystem owns its tables and creates them with ``CREATE TABLE IF NOT EXISTS`` through
:func:`ensure_schema`; :func:`connect` applies the settings every connection needs (WAL,
a busy timeout so concurrent readers wait instead of failing, foreign keys).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

BUSY_TIMEOUT_MS = 30_000


def connect(path: str | Path, *, readonly: bool = False) -> sqlite3.Connection:
    """Open the store with WAL journaling, a busy timeout and foreign keys on.

    Args:
        path: the database file (its folder is created).
        readonly: open read-only (the file must exist).
    """
    path = Path(path)
    if readonly:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.row_factory = sqlite3.Row
    return conn


def ensure_schema(conn: sqlite3.Connection, ddl: str) -> None:
    """Run idempotent DDL (``CREATE TABLE IF NOT EXISTS ...``) in one transaction."""
    with conn:
        conn.executescript(ddl)
