"""A SQLite response cache for LLM calls, keyed by a hash of the request.

The key covers the model, every decoding parameter, the messages and the output schema, so a
rerun of the same work costs nothing and gives the same answers. Only successful HTTP answers
are stored (an invalid JSON answer is a successful answer and is cached too, so the rerun drops
the same items).
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

from okgen.db import connect, ensure_schema
from okgen.hashing import sha256_json

DDL = """
CREATE TABLE IF NOT EXISTS llm_cache (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    request TEXT NOT NULL,
    response TEXT NOT NULL,
    created_at REAL NOT NULL
);
"""


def request_key(request: dict[str, Any]) -> str:
    """Cache key of a request (canonical JSON hash)."""
    return sha256_json(request)


class ResponseCache:
    """Thread-safe SQLite cache.

    Args:
        path: the cache database (``data/cache/llm.sqlite``).
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._conn = connect(self.path)
        ensure_schema(self._conn, DDL)
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored response of ``key``, or None."""
        with self._lock:
            row = self._conn.execute("SELECT response FROM llm_cache WHERE key = ?", (key,)).fetchone()
        if row is None:
            self.misses += 1
            return None
        self.hits += 1
        return json.loads(row[0])

    def put(self, key: str, model: str, request: dict[str, Any], response: dict[str, Any]) -> None:
        """Store a response (replacing any previous one)."""
        with self._lock, self._conn:
            self._conn.execute(
                "INSERT OR REPLACE INTO llm_cache (key, model, request, response, created_at) VALUES (?, ?, ?, ?, ?)",
                (key, model, json.dumps(request, sort_keys=True, ensure_ascii=False), json.dumps(response, ensure_ascii=False), time.time()),
            )

    def __len__(self) -> int:
        with self._lock:
            return self._conn.execute("SELECT COUNT(*) FROM llm_cache").fetchone()[0]

    def close(self) -> None:
        """Close the database."""
        with self._lock:
            self._conn.close()
