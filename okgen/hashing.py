"""Content hashing: SHA-256 of bytes, files, canonical JSON and folders of specs.

Every hash okgen records is a lowercase hex SHA-256. Canonical JSON sorts keys, uses compact
separators and keeps non-ASCII characters, so the same record always hashes the same.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

_CHUNK = 1 << 20


def sha256_bytes(data: bytes) -> str:
    """Return the hex SHA-256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def sha256_text(text: str) -> str:
    """Return the hex SHA-256 of ``text`` encoded as UTF-8."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def sha256_file(path: str | Path) -> str:
    """Return the hex SHA-256 of a file's bytes, read in chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def canonical_json(obj: Any) -> str:
    """Serialise ``obj`` as canonical JSON: sorted keys, compact, UTF-8 kept as is."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def sha256_json(obj: Any) -> str:
    """Return the hex SHA-256 of ``obj``'s canonical JSON."""
    return sha256_text(canonical_json(obj))


def sha256_files(paths: Iterable[str | Path], root: str | Path) -> str:
    """Hash several files together, by path relative to ``root`` and content.

    Used for agent and retriever spec folders, whose hash goes into signatures: renaming or
    editing any file changes it, the order the files are listed in does not.
    """
    root = Path(root)
    entries = sorted((Path(p).resolve().relative_to(root.resolve()).as_posix(), sha256_file(p)) for p in paths)
    return sha256_text("".join(f"{name}\0{digest}\n" for name, digest in entries))


def sha256_tree(root: str | Path, pattern: str = "**/*") -> str:
    """Hash every regular file under ``root`` matching ``pattern`` (see :func:`sha256_files`)."""
    root = Path(root)
    files = [p for p in root.glob(pattern) if p.is_file() and "__pycache__" not in p.parts]
    return sha256_files(files, root)
