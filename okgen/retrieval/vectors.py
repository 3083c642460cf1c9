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
    created_at TEXT NOT NULL DEFAULT (datetime('now'))
);
CREATE TABLE IF NOT EXISTS vectors (
    encoder TEXT NOT NULL,
    text_sha256 TEXT NOT NULL,
    vec BLOB NOT NULL,
    used_on TEXT NOT NULL,
    PRIMARY KEY (encoder, text_sha256)
) WITHOUT ROWID;
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
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(self.path, timeout=60, isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")  # a killed process loses nothing committed
        self.db.executescript(_SCHEMA)

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

    def register(self, key: str, identity: dict[str, Any], dim: int) -> None:
        """Record an encoder's identity and dimension; refuse a key seen with another dimension."""
        row = self.db.execute("SELECT dim FROM encoders WHERE key = ?", (key,)).fetchone()
        if row is None:
            self.db.execute("INSERT OR IGNORE INTO encoders (key, identity, dim) VALUES (?, ?, ?)",
                            (key, _json(identity), dim))
        elif row[0] != dim:
            raise IntegrityError(f"{self.path}: encoder {key} stored {row[0]}-dim vectors, now gives {dim}")

    def dim(self, key: str) -> int | None:
        """The dimension of an encoder's vectors (None when it has none stored)."""
        row = self.db.execute("SELECT dim FROM encoders WHERE key = ?", (key,)).fetchone()
        return None if row is None else int(row[0])

    def get_many(self, key: str, shas: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored vectors of ``shas`` for encoder ``key`` (absent ones left out)."""
        dim = self.dim(key)
        out: dict[str, np.ndarray] = {}
        if dim is None:
            return out
        unique = list(dict.fromkeys(shas))
        for s in range(0, len(unique), _CHUNK):
            part = unique[s:s + _CHUNK]
            marks = ",".join("?" * len(part))
            for sha, blob in self.db.execute(
                    f"SELECT text_sha256, vec FROM vectors WHERE encoder = ? AND text_sha256 IN ({marks})", (key, *part)):
                if len(blob) == dim * 4:  # anything else is not a whole vector: encode it again
                    out[sha] = np.frombuffer(blob, dtype=np.float32)
        return out

    def put_many(self, key: str, shas: Sequence[str], vecs: np.ndarray, used_on: dt.date) -> None:
        """Store vectors, all in one transaction (a kill leaves all of them or none)."""
        vecs = np.ascontiguousarray(vecs, dtype=np.float32)
        day = used_on.isoformat()
        with self.db:
            self.db.execute("BEGIN IMMEDIATE")
            self.db.executemany(
                "INSERT INTO vectors (encoder, text_sha256, vec, used_on) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (encoder, text_sha256) DO UPDATE SET vec = excluded.vec, "
                "used_on = max(used_on, excluded.used_on)",
                [(key, sha, v.tobytes(), day) for sha, v in zip(shas, vecs)])

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


def encode_with_store(store: VectorStore | None, identity: dict[str, Any], texts: Sequence[str],
                      encode: Callable[[list[str]], np.ndarray], *, batch_size: int, used_on: dt.date,
                      desc: str = "encode") -> tuple[np.ndarray, EncodeCounts]:
    """Vectors of ``texts``: stored ones reused, the others encoded, committed batch by batch.

    Args:
        store: the store (None: encode everything, store nothing).
        identity: the encoder identity (see :func:`encoder_key`).
        texts: texts to encode (duplicates are encoded once).
        encode: the encoder, list of texts -> float32 array (one row per text).
        batch_size: texts per encoder call and per commit.
        used_on: the date of the window (or snapshot) that needs them, for ``okgen gc``.
        desc: label of the progress line.

    Returns:
        (array with one row per text, counts encoded / reused).
    """
    shas = [sha256_text(t) for t in texts]
    key = encoder_key(identity)
    found = store.get_many(key, shas) if store is not None else {}
    first = {}
    for i, sha in enumerate(shas):
        if sha not in found:
            first.setdefault(sha, i)
    # Longest first, as sentence-transformers orders a batch: similar lengths, least padding.
    todo = sorted(first.items(), key=lambda kv: -len(texts[kv[1]]))
    counts = EncodeCounts(encoded=len(todo), reused=len(texts) - sum(1 for s in shas if s not in found))
    fresh: dict[str, np.ndarray] = {}
    if todo:
        log.info("%s: %d texts, %d new to encode, %d vectors reused", desc, len(texts), len(todo), counts.reused)
        with bar(total=len(todo), desc=desc, unit="text") as pb:
            for s in range(0, len(todo), batch_size):
                part = todo[s:s + batch_size]
                vecs = np.ascontiguousarray(encode([texts[i] for _, i in part]), dtype=np.float32)
                if store is not None:
                    store.register(key, identity, int(vecs.shape[1]))
                    store.put_many(key, [sha for sha, _ in part], vecs, used_on)
                fresh.update((sha, v) for (sha, _), v in zip(part, vecs))
                pb.update(len(part))
    if store is not None and found:
        store.touch(key, list(found), used_on)
    if not texts:
        return np.zeros((0, 1), dtype=np.float32), counts
    lookup = {**found, **fresh}
    return np.ascontiguousarray(np.stack([lookup[s] for s in shas]), dtype=np.float32), counts
