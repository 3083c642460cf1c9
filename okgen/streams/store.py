"""Write, open, list, resolve and verify streams (``streams/<name>/`` in the workspace).

A stream is written whole or not at all: its files go to a temporary folder beside the final
one, which is renamed into place only when everything is written and hashed.
"""

from __future__ import annotations

import json
import logging
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from okgen import __version__
from okgen.errors import ConfigError, IntegrityError, NotFoundError, OkgenError
from okgen.files import atomic_write_bytes, describe_validation_error, read_jsonl, write_jsonl
from okgen.hashing import sha256_file
from okgen.schema import utcnow
from okgen.settings import Workspace
from okgen.streams.records import (
    NAME_RE,
    StreamDocument,
    StreamManifest,
    StreamQuestion,
    Track,
    content_hash,
    manifest_bytes,
    manifest_hash,
)
from okgen.streams.signature import StreamSignature, looks_like_stream_signature

log = logging.getLogger(__name__)
MANIFEST = "manifest.json"
FILES = {"tracks.jsonl": Track, "questions.jsonl": StreamQuestion, "documents.jsonl": StreamDocument}


def streams_dir(ws: Workspace) -> Path:
    """The workspace's streams folder (``OKGEN_HOME/streams``)."""
    return ws.home / "streams"


@dataclass
class Stream:
    """An opened stream folder."""

    path: Path
    manifest: StreamManifest
    tracks: list[Track] = field(default_factory=list)
    questions: list[StreamQuestion] = field(default_factory=list)
    documents: list[StreamDocument] = field(default_factory=list)


def check_name(name: str) -> None:
    """Raise ConfigError for a name that cannot be a folder and a signature value."""
    if not NAME_RE.match(name):
        raise ConfigError(f"bad stream name {name!r}: use 1-100 letters, digits, '.', '_' or '-'")


def write_stream(ws: Workspace, name: str, *, tracks: Sequence[Track], questions: Sequence[StreamQuestion],
                 documents: Sequence[StreamDocument], overwrite: bool = False, **fields: Any) -> StreamManifest:
    """Write a stream folder atomically and return its manifest (``fields``: the manifest's
    origin, series, series_hash, intervals, extractor, min_changes, min_outlets, seed, counts,
    oaks_meta)."""
    check_name(name)
    root = streams_dir(ws)
    final = root / name
    if (final / MANIFEST).exists() and not overwrite:
        raise ConfigError(f"stream {name!r} already exists ({final}); use --overwrite to rebuild it")
    root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f".{name}-", dir=root) as tmp:
        work = Path(tmp) / name
        work.mkdir()
        for fname, rows in (("tracks.jsonl", tracks), ("questions.jsonl", questions), ("documents.jsonl", documents)):
            write_jsonl(work / fname, rows)
        files = {f: sha256_file(work / f) for f in FILES}
        chash = content_hash(files)
        sig = StreamSignature(name=name, origin=fields["origin"], series_hash=(fields.get("series_hash") or "none")[:12],
                              intervals=len(fields["intervals"]), extractor=fields["extractor"],
                              min_changes=fields["min_changes"], min_outlets=fields["min_outlets"], seed=fields["seed"],
                              questions=len(questions), content_hash=chash, version=__version__)
        m = StreamManifest(name=name, signature=sig.format(), files=files, content_hash=chash, created_at=utcnow(),
                           okgen_version=__version__, **fields)
        m = m.model_copy(update={"manifest_sha256": manifest_hash(m)})
        atomic_write_bytes(work / MANIFEST, manifest_bytes(m))
        if final.exists():
            old = Path(tmp) / "old"
            final.rename(old)
        work.rename(final)
    return m


def read_manifest(path: Path) -> StreamManifest:
    """Read and schema-check ``manifest.json`` of a stream.

    Raises:
        NotFoundError: no such file.
        IntegrityError: not JSON, or not a stream manifest.
    """
    try:
        return StreamManifest.model_validate(json.loads(path.read_bytes().decode("utf-8")))
    except FileNotFoundError:
        raise NotFoundError(f"{path}: no such stream manifest") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise IntegrityError(f"{path}: corrupted JSON ({getattr(e, 'msg', e)})") from None
    except ValidationError as e:
        raise IntegrityError(f"{path}: not a stream manifest ({describe_validation_error(e)})") from None


def open_stream(folder: Path) -> Stream:
    """Open a stream folder (manifest and every file, schema-checked)."""
    folder = Path(folder)
    m = read_manifest(folder / MANIFEST)
    return Stream(path=folder, manifest=m, tracks=read_jsonl(folder / "tracks.jsonl", Track),
                  questions=read_jsonl(folder / "questions.jsonl", StreamQuestion),
                  documents=read_jsonl(folder / "documents.jsonl", StreamDocument))


def list_streams(ws: Workspace) -> list[StreamManifest]:
    """Every stream of the workspace, by name; unreadable ones are skipped with a warning."""
    out = []
    root = streams_dir(ws)
    if root.is_dir():
        for p in sorted(root.glob(f"*/{MANIFEST}")):
            if p.parent.name.startswith("."):
                continue
            try:
                out.append(read_manifest(p))
            except OkgenError as e:
                log.warning("skipping stream %s: %s", p.parent.name, e)
    return out


def resolve_stream(ref: str, ws: Workspace) -> Path:
    """The folder of a stream given by name, folder, signature (long or short) or hash prefix.

    Raises:
        NotFoundError: nothing or several match.
    """
    ref = str(ref).strip()
    p = Path(ref).expanduser()
    if not looks_like_stream_signature(ref) and (p / MANIFEST).is_file():
        return p
    if NAME_RE.match(ref) and (streams_dir(ws) / ref / MANIFEST).is_file():
        return streams_dir(ws) / ref
    all_ = list_streams(ws)
    if looks_like_stream_signature(ref):
        long = StreamSignature.parse(ref).format()
        matches = [m for m in all_ if m.signature == long]
    else:
        matches = [m for m in all_ if len(ref) >= 6 and m.content_hash.startswith(ref.lower())]
    if len(matches) != 1:
        known = ", ".join(m.name for m in all_) or "none"
        raise NotFoundError(f"{'no' if not matches else 'more than one'} stream matches {ref!r} in {streams_dir(ws)} (known: {known})")
    return streams_dir(ws) / matches[0].name


def verify_stream(folder: Path, ws: Workspace | None = None, *, series: bool = True) -> list[str]:
    """Problems of a stream folder (empty when it is sound): the manifest's own hash and bytes,
    every file's SHA-256, the content hash and the signature, every record's schema, and (for a
    stream built from a series, when ``series`` and a workspace are given) that the series is
    present, is the one pinned and verifies."""
    folder = Path(folder)
    try:
        m = read_manifest(folder / MANIFEST)
    except OkgenError as e:
        return [str(e)]
    problems = []
    if manifest_hash(m) != m.manifest_sha256:
        problems.append(f"{MANIFEST}: content changed (its hash does not match manifest_sha256)")
    elif (folder / MANIFEST).read_bytes() != manifest_bytes(m):
        problems.append(f"{MANIFEST}: bytes changed (not the canonical form written by okgen)")
    for fname in FILES:
        path = folder / fname
        if not path.is_file():
            problems.append(f"{fname}: missing")
        elif sha256_file(path) != m.files.get(fname):
            problems.append(f"{fname}: SHA-256 differs from the manifest")
    if set(m.files) != set(FILES):
        problems.append("manifest lists other files than a stream holds")
    if content_hash(m.files) != m.content_hash:
        problems.append("content hash does not match the files")
    try:
        sig = StreamSignature.parse(m.signature)
        if sig.content_hash != m.content_hash or sig.name != m.name or sig.intervals != len(m.intervals):
            problems.append("stream signature does not match the manifest")
    except OkgenError as e:
        problems.append(f"bad stream signature: {e}")
    if not problems:
        try:
            s = open_stream(folder)
            n = len(m.intervals)
            bad = [q.id for q in s.questions if len(q.answers) != n]
            if bad:
                problems.append(f"question {bad[0]} has answers for a different number of intervals than {n}")
        except OkgenError as e:
            problems.append(str(e))
    if series and ws is not None and m.origin == "series" and not problems:
        from okgen.series.store import resolve_series, verify_series

        try:
            sm, sfolder = resolve_series(m.series or "", ws)
        except OkgenError as e:
            return problems + [f"series not available: {e}"]
        if sm.content_hash != m.series_hash:
            problems.append(f"series {sm.name} is not the one the stream pins")
        else:
            rep = verify_series(sfolder, ws)
            problems += [f"series {sm.name}: {p}" for p in rep.problems]
    return problems


def remove_stream(folder: Path) -> None:
    """Delete a stream folder."""
    shutil.rmtree(folder)


def open_verified_stream(ref: str, ws: Workspace) -> Stream:
    """The stream ``ref`` names, after its signature, hashes and files are verified.

    Raises:
        IntegrityError: the stream fails verification.
        NotFoundError: no stream matches ``ref``.
    """
    from okgen.errors import IntegrityError

    folder = resolve_stream(ref, ws)
    problems = verify_stream(folder, ws, series=False)
    if problems:
        raise IntegrityError(f"stream {folder.name}: {problems[0]}")
    return open_stream(folder)

