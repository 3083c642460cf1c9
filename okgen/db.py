"""The embedded SQLite store: one database file per workspace (``data/okgen.sqlite``).

Each subsystem owns its tables and creates them with ``CREATE TABLE IF NOT EXISTS`` through
:func:`ensure_schema`; :func:`connect` applies the settings every connection needs (WAL,
a busy timeout so concurrent readers wait instead of failing, foreign keys).
"""

from __future__ import annotations

import os
import re
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
        try:
            conn.execute("PRAGMA journal_mode=WAL")
        except sqlite3.OperationalError:
            if not path.exists() or os.access(path.parent, os.W_OK):
                raise
            conn.close()
            wal = path.with_name(path.name + "-wal")
            if wal.exists() and wal.stat().st_size > 0:  # committed work not yet merged: reading the file alone would hide it
                from okgen.errors import OkgenError

                raise OkgenError(f"{path} is read-only and its latest changes are still in {wal.name}: open the "
                                 "workspace once where it is writable (any okgen verb merges them), then read it here") from None
            # A read-only workspace (a read-only mount, an archive): what only reads still works
            # from the file as it is; a write fails in one line (errors.describe_os_error).
            conn = sqlite3.connect(f"file:{path}?immutable=1", uri=True, check_same_thread=False)
            conn.row_factory = sqlite3.Row
            return conn
        conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.row_factory = sqlite3.Row
    return conn


def ensure_schema(conn: sqlite3.Connection, ddl: str) -> None:
    """Run idempotent DDL (``CREATE TABLE IF NOT EXISTS ...``) in one transaction.

    On a read-only database (see :func:`connect`) the tables it lacks are made as empty TEMP
    tables (no index: nothing is in them), so reading them finds nothing rather than failing."""
    try:
        with conn:
            conn.executescript(ddl)
    except sqlite3.OperationalError as e:
        if "readonly" not in str(e).lower():
            raise
        have = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
        statements, buf = [], ""
        for piece in ddl.split(";"):  # whole statements only: a ';' inside a string is no end
            buf += piece + ";"
            if sqlite3.complete_statement(buf):
                statements.append(buf.strip())
                buf = ""
        with conn:
            for st in statements:
                m = re.match(r"CREATE\s+TABLE\s+IF\s+NOT\s+EXISTS\s+(\w+)", st, re.IGNORECASE)
                if m and m.group(1) not in have:  # only missing tables; indexes and the rest are left out
                    conn.execute("CREATE TEMP TABLE IF NOT EXISTS " + st[m.end(1) - len(m.group(1)):])
