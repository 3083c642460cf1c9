"""The encoding store: vectors computed once, kept in the workspace, reused by every window.

``data/vectors/vectors.sqlite`` holds one row per (encoder key, text SHA-256): the float32
vector as a blob, and ``used_on``, the latest news date of a window (or snapshot) that used it.
The **encoder key** is the SHA-256 of everything that determines a vector: the model's name and
fingerprint (the content of a local folder, or the Hugging Face commit), the settings that
change an encoding (sequence length, normalisation, prefix), the role (query or passage, for
models with two encoders), the device type and the library versions. A vector made with any
other model, setting or library version has another key, so it is never reused.

Why SQLite (measured in ``bench/bench_vector_store.py``, see docs/retrieval.md): each batch of
encodings is committed in one transaction, so a process killed mid-encoding leaves only whole
vectors behind and a rerun encodes the rest; a lookup of a window's few thousand keys takes
milliseconds next to the seconds of encoding; and no second index file has to be kept in step
with a memory-mapped array.

:func:`encode_with_store` is what a retriever calls: it looks every text up, encodes only the
missing ones (in batches, with progress), commits each batch, marks the used rows with the
window's date, and reports how many vectors were encoded and how many reused.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import hashlib
import logging
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from okgen.errors import IntegrityError
from okgen.hashing import sha256_json, sha256_text
from okgen.progress import bar

log = logging.getLogger(__name__)

STORE_FORMAT = "okgen-vectors-v1"
_CHUNK = 500  # keys per SQL IN (...) lookup, below SQLite's variable limit

_SCHEMA = """
CREATE TABLE IF NOT EXISTS encoders (
    key TEXT PRIMARY KEY,
    identity TEXT NOT NULL,
    dim INTEGER NOT NULL,
    dtype TEXT NOT NULL,
    created_at TEXT NOT NULL DEFAULT (datetime('now'))
);
CREATE TABLE IF NOT EXISTS vectors (
    encoder TEXT NOT NULL,
    text_sha256 TEXT NOT NULL,
    rows INTEGER NOT NULL,
    vec BLOB NOT NULL,
    used_on TEXT NOT NULL,
    PRIMARY KEY (encoder, text_sha256)
);
CREATE INDEX IF NOT EXISTS vectors_used_on ON vectors (used_on);
"""


@dataclass
class EncodeCounts:
    """How many texts a step encoded and how many vectors it took from the store."""

    encoded: int = 0
    reused: int = 0

    def add(self, other: EncodeCounts) -> None:
        """Add another step's counts to these."""
        self.encoded += other.encoded
        self.reused += other.reused


def store_path(workspace) -> Path:
    """``data/vectors/vectors.sqlite`` of a workspace."""
    return workspace.data_dir / "vectors" / "vectors.sqlite"


def encoder_key(identity: dict[str, Any]) -> str:
    """The key of an encoder identity (24 hex digits of the SHA-256 of its canonical JSON)."""
    return sha256_json({"format": STORE_FORMAT, **identity})[:24]


@functools.lru_cache(maxsize=16)
def model_fingerprint(name_or_path: str) -> str:
    """What identifies a model's weights: a local folder's content hash, or the HF commit.

    A Hugging Face name resolves to its cached snapshot folder, whose name is the commit;
    anything unresolvable is fingerprinted by its name alone.
    """
    p = Path(name_or_path).expanduser()
    if not p.is_dir():
        try:
            from huggingface_hub import snapshot_download

            folder = Path(snapshot_download(name_or_path, local_files_only=True))
            return f"hf-commit:{folder.name}"
        except Exception:  # noqa: BLE001 - not a hub name or not cached: the name is all we know
            return f"name:{name_or_path}"
    h = hashlib.sha256()
    for f in sorted(q for q in p.rglob("*") if q.is_file()):
        h.update(f.relative_to(p).as_posix().encode() + b"\0")
        with open(f, "rb") as fh:
            for block in iter(lambda fh=fh: fh.read(1 << 20), b""):
                h.update(block)
    return f"sha256:{h.hexdigest()}"


class VectorStore:
    """The SQLite table of vectors keyed by (encoder key, text SHA-256). See the module doc."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        from okgen.db import connect, ensure_schema

        if str(path) == ":memory:":
            self.db = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        else:  # WAL, a killed process loses nothing committed; read-only workspaces are read as they are
            self.db = connect(self.path)
            self.db.isolation_level, self.db.row_factory = None, None
        ensure_schema(self.db, _SCHEMA)

    @classmethod
    def for_workspace(cls, workspace) -> VectorStore:
        """The store of a workspace (created on first use)."""
        return cls(store_path(workspace))

    def close(self) -> None:
        """Close the connection."""
        self.db.close()

    def __enter__(self) -> VectorStore:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def register(self, key: str, identity: dict[str, Any], dim: int, dtype: str = "float32") -> None:
        """Record an encoder's identity, dimension and dtype; refuse a key seen with others."""
        row = self.db.execute("SELECT dim, dtype FROM encoders WHERE key = ?", (key,)).fetchone()
        if row is None:
            self.db.execute("INSERT OR IGNORE INTO encoders (key, identity, dim, dtype) VALUES (?, ?, ?, ?)",
                            (key, _json(identity), dim, dtype))
        elif (row[0], row[1]) != (dim, dtype):
            raise IntegrityError(f"{self.path}: encoder {key} stored {row[0]}-dim {row[1]} vectors, now gives {dim}-dim {dtype}")

    def layout(self, key: str) -> tuple[int, str] | None:
        """(dimension, dtype) of an encoder's vectors (None when it has none stored)."""
        row = self.db.execute("SELECT dim, dtype FROM encoders WHERE key = ?", (key,)).fetchone()
        return None if row is None else (int(row[0]), str(row[1]))

    def get_many(self, key: str, shas: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored arrays of ``shas`` for encoder ``key`` (absent ones left out).

        Each is ``(rows, dim)``: one row for a text's vector, one per token for token embeddings.
        """
        lay = self.layout(key)
        out: dict[str, np.ndarray] = {}
        if lay is None:
            return out
        dim, dtype = lay
        width = dim * np.dtype(dtype).itemsize
        unique = list(dict.fromkeys(shas))
        for s in range(0, len(unique), _CHUNK):
            part = unique[s:s + _CHUNK]
            marks = ",".join("?" * len(part))
            for sha, rows, blob in self.db.execute(
                    f"SELECT text_sha256, rows, vec FROM vectors WHERE encoder = ? AND text_sha256 IN ({marks})",
                    (key, *part)):
                if rows > 0 and len(blob) == rows * width:  # anything else is not whole: encode it again
                    out[sha] = np.frombuffer(blob, dtype=dtype).reshape(rows, dim)
        return out

    def put_many(self, key: str, shas: Sequence[str], arrays: Sequence[np.ndarray], used_on: dt.date) -> None:
        """Store arrays (one ``(rows, dim)`` or ``(dim,)`` per text), all in one transaction."""
        day = used_on.isoformat()
        rows = []
        for sha, a in zip(shas, arrays):
            a = np.ascontiguousarray(a)
            rows.append((key, sha, 1 if a.ndim == 1 else a.shape[0], a.tobytes(), day))
        with self.db:
            self.db.execute("BEGIN IMMEDIATE")
            self.db.executemany(
                "INSERT INTO vectors (encoder, text_sha256, rows, vec, used_on) VALUES (?, ?, ?, ?, ?) "
                "ON CONFLICT (encoder, text_sha256) DO UPDATE SET rows = excluded.rows, vec = excluded.vec, "
                "used_on = max(used_on, excluded.used_on)", rows)

    def touch(self, key: str, shas: Sequence[str], used_on: dt.date) -> None:
        """Mark vectors as used by a window dated ``used_on`` (keeps the latest date)."""
        day = used_on.isoformat()
        with self.db:
            self.db.execute("BEGIN IMMEDIATE")
            self.db.executemany("UPDATE vectors SET used_on = ? WHERE encoder = ? AND text_sha256 = ? AND used_on < ?",
                                [(day, key, sha, day) for sha in dict.fromkeys(shas)])

    def count(self, key: str | None = None) -> int:
        """Vectors stored (for one encoder, or all)."""
        if key is None:
            return int(self.db.execute("SELECT count(*) FROM vectors").fetchone()[0])
        return int(self.db.execute("SELECT count(*) FROM vectors WHERE encoder = ?", (key,)).fetchone()[0])

    def collect(self, before: dt.date, *, dry_run: bool = False) -> tuple[int, int]:
        """Drop vectors last used by windows dated before ``before``; returns (vectors, bytes)."""
        day = before.isoformat()
        n, size = self.db.execute("SELECT count(*), coalesce(sum(length(vec)), 0) FROM vectors WHERE used_on < ?",
                                  (day,)).fetchone()
        if not dry_run and n:
            with self.db:
                self.db.execute("BEGIN IMMEDIATE")
                self.db.execute("DELETE FROM vectors WHERE used_on < ?", (day,))
                self.db.execute("DELETE FROM encoders WHERE key NOT IN (SELECT DISTINCT encoder FROM vectors)")
            self.db.execute("VACUUM")
            self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # give the space back, WAL included
        return int(n), int(size)


def collect_vectors(workspace, before: dt.date, *, dry_run: bool = False) -> tuple[int, int]:
    """``okgen gc``'s part: drop stored vectors last used by windows dated before ``before``.

    Returns:
        (vectors dropped, bytes of vector data).
    """
    path = store_path(workspace)
    if not path.is_file():
        return 0, 0
    with VectorStore(path) as store:
        return store.collect(before, dry_run=dry_run)


def _json(identity: dict[str, Any]) -> str:
    import json

    return json.dumps(identity, sort_keys=True, ensure_ascii=False)


def _fill(store: VectorStore, identity: dict[str, Any], texts: Sequence[str],
          encode: Callable[[list[str]], Sequence[np.ndarray]], *, batch_size: int, used_on: dt.date, desc: str,
          dtype: str) -> tuple[list[str], dict[str, np.ndarray], EncodeCounts]:
    """Look every text up, encode and commit the missing ones batch by batch; (shas, arrays by sha, counts)."""
    shas = [sha256_text(t) for t in texts]
    key = encoder_key(identity)
    found = store.get_many(key, shas)
    first: dict[str, int] = {}
    for i, sha in enumerate(shas):
        if sha not in found:
            first.setdefault(sha, i)
    # Longest first, as sentence-transformers orders a batch: similar lengths, least padding.
    todo = sorted(first.items(), key=lambda kv: -len(texts[kv[1]]))
    counts = EncodeCounts(encoded=len(todo), reused=sum(1 for s in shas if s in found))
    if todo:
        log.info("%s: %d texts, %d new to encode, %d vectors reused", desc, len(texts), len(todo), counts.reused)
        with bar(total=len(todo), desc=desc, unit="text") as pb:
            for s in range(0, len(todo), batch_size):
                part = todo[s:s + batch_size]
                arrays = [np.ascontiguousarray(a, dtype=dtype) for a in encode([texts[i] for _, i in part])]
                store.register(key, identity, int(arrays[0].shape[-1]), dtype)
                store.put_many(key, [sha for sha, _ in part], arrays, used_on)
                found.update((sha, a.reshape(-1, a.shape[-1])) for (sha, _), a in zip(part, arrays))
                pb.update(len(part))
    if counts.reused:
        store.touch(key, [s for s in dict.fromkeys(shas) if s not in first], used_on)
    return shas, found, counts


def encode_with_store(store: VectorStore | None, identity: dict[str, Any], texts: Sequence[str],
                      encode: Callable[[list[str]], np.ndarray], *, batch_size: int, used_on: dt.date,
                      desc: str = "encode") -> tuple[np.ndarray, EncodeCounts]:
    """Vectors of ``texts``: stored ones reused, the others encoded, committed batch by batch.

    Args:
        store: the store (None: a throw-away one in memory).
        identity: the encoder identity (see :func:`encoder_key`).
        texts: texts to encode (duplicates are encoded once).
        encode: the encoder, list of texts -> float32 array (one row per text).
        batch_size: texts per encoder call and per commit.
        used_on: the date of the window (or snapshot) that needs them, for ``okgen gc``.
        desc: label of the progress line.

    Returns:
        (array with one row per text, counts encoded / reused).
    """
    if not texts:
        return np.zeros((0, 1), dtype=np.float32), EncodeCounts()
    with contextlib.ExitStack() as stack:
        if store is None:
            store = stack.enter_context(VectorStore(":memory:"))
        shas, found, counts = _fill(store, identity, texts, encode, batch_size=batch_size, used_on=used_on, desc=desc,
                                    dtype="float32")
    return np.ascontiguousarray(np.concatenate([found[s] for s in shas]), dtype=np.float32), counts


def tokens_with_store(store: VectorStore | None, identity: dict[str, Any], texts: Sequence[str],
                      encode: Callable[[list[str]], Sequence[np.ndarray]], *, batch_size: int, used_on: dt.date,
                      desc: str = "encode", dtype: str = "float16") -> tuple[list[np.ndarray], EncodeCounts]:
    """Token embeddings (one ``(tokens, dim)`` array per text, stored as ``dtype``), like :func:`encode_with_store`.

    ColBERT passages are stored as float16 (half the space; colbert-ai compresses them to a
    few bits anyway), its query matrices as float32 (small, and searched exactly as encoded).
    """
    if not texts:
        return [], EncodeCounts()
    with contextlib.ExitStack() as stack:
        if store is None:
            store = stack.enter_context(VectorStore(":memory:"))
        shas, found, counts = _fill(store, identity, texts, encode, batch_size=batch_size, used_on=used_on, desc=desc,
                                    dtype=dtype)
    return [found[s] for s in shas], counts
