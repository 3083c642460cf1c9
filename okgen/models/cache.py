"""A SQLite response cache for LLM calls, keyed by a hash of the request.

The key covers the model, every decoding parameter, the messages and the output schema, so a
rerun of the same work costs nothing and gives the same answers. Only successful HTTP answers
are stored (an invalid JSON answer is a successful answer and is cached too, so the rerun drops
the same items). Sampling without a seed is never cached (the caller decides; see
:class:`okgen.llm.ChatModel`). The cache lives in the workspace at ``data/cache/llm.sqlite``.
"""

from __future__ import annotations

import atexit
import json
import sqlite3
import threading
import time
import weakref
from pathlib import Path
from typing import Any

from okgen.db import connect, ensure_schema
from okgen.hashing import canonical_json, sha256_json, sha256_text

DDL = """
CREATE TABLE IF NOT EXISTS llm_cache (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    request TEXT NOT NULL,
    response TEXT NOT NULL,
    created_at REAL NOT NULL
);
"""


CACHE_FILE = "llm.sqlite"


def default_cache_path(cache_dir: str | Path) -> Path:
    """The response cache file inside a workspace's ``data/cache`` folder."""
    return Path(cache_dir) / CACHE_FILE


def request_key(request: dict[str, Any]) -> str:
    """Cache key of a request (canonical JSON hash)."""
    return sha256_json(request)


def request_key_and_text(request: dict[str, Any]) -> tuple[str, str]:
    """Cache key and canonical JSON of a request (the text is stored with the answer)."""
    text = canonical_json(request)
    return sha256_text(text), text


class ResponseCache:
    """Thread-safe SQLite cache.

    Writes are committed in small groups (every ``flush_every`` answers, and by a background
    thread at most ``flush_seconds`` after the first uncommitted one, so other writers of the
    file never wait long), since a commit per answer costs as much CPU as the rest of a cached
    call; ``flush``, ``close`` and interpreter exit commit the rest. A process killed outright loses at most
    the last group of answers, which only means asking for them again.

    Args:
        path: the cache database (``data/cache/llm.sqlite``).
        flush_every: commit after this many new answers.
        flush_seconds: commit when the oldest uncommitted answer is this old.
    """

    def __init__(self, path: str | Path, flush_every: int = 32, flush_seconds: float = 1.0):
        self.path = Path(path)
        self._conn = connect(self.path)
        ensure_schema(self._conn, DDL)
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0
        self.flush_every = max(1, int(flush_every))
        self.flush_seconds = flush_seconds
        self._pending = 0
        self._since = 0.0
        self._closed = False
        self._flusher: threading.Thread | None = None
        _OPEN.add(self)

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored response of ``key``, or None."""
        with self._lock:
            row = self._conn.execute("SELECT response FROM llm_cache WHERE key = ?", (key,)).fetchone()
            if row is None:
                self.misses += 1
                return None
            self.hits += 1
        return json.loads(row[0])

    def put(self, key: str, model: str, request: dict[str, Any] | str, response: dict[str, Any]) -> None:
        """Store a response (replacing any previous one); ``request`` as a dict or its JSON."""
        req_text = request if isinstance(request, str) else json.dumps(request, sort_keys=True, ensure_ascii=False)
        resp_text = json.dumps(response, ensure_ascii=False)
        now = time.time()
        with self._lock:
            self._conn.execute(
                "INSERT OR REPLACE INTO llm_cache (key, model, request, response, created_at) VALUES (?, ?, ?, ?, ?)",
                (key, model, req_text, resp_text, now),
            )
            if self._pending == 0:
                self._since = now
            self._pending += 1
            if self._pending >= self.flush_every or now - self._since >= self.flush_seconds:
                self._commit()
            elif self._flusher is None:
                # An open write transaction blocks other writers of the file: never hold it long.
                self._flusher = threading.Thread(target=self._flush_loop, name="okgen-cache-flush", daemon=True)
                self._flusher.start()

    def _flush_loop(self) -> None:
        while not self._closed:
            time.sleep(self.flush_seconds / 4)
            with self._lock:
                if self._closed:
                    return
                if self._pending and time.time() - self._since >= self.flush_seconds:
                    self._commit()

    def flush(self) -> None:
        """Commit every stored answer."""
        with self._lock:
            if not self._closed:
                self._commit()

    def _commit(self) -> None:
        if self._pending:
            self._conn.commit()
            self._pending = 0

    def __len__(self) -> int:
        with self._lock:
            return self._conn.execute("SELECT COUNT(*) FROM llm_cache").fetchone()[0]

    def close(self) -> None:
        """Commit and close the database."""
        with self._lock:
            if not self._closed:
                self._commit()
                self._closed = True
                self._conn.close()
        _OPEN.discard(self)

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


_OPEN: weakref.WeakSet[ResponseCache] = weakref.WeakSet()


@atexit.register
def _flush_open_caches() -> None:
    for cache in list(_OPEN):
        try:
            cache.flush()
        except sqlite3.Error:  # closed, or the disk is gone: nothing more to do
            pass
