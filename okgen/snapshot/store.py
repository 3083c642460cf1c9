"""Snapshots on disk: open, list and resolve them by signature, hash, folder or archive."""

from __future__ import annotations

import functools
import logging
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from okgen.errors import NotFoundError, OkgenError
from okgen.files import iter_jsonl, read_jsonl, read_model_json
from okgen.hashing import sha256_file
from okgen.schema import Article, Question, SnapshotManifest
from okgen.settings import Workspace
from okgen.signature import Signature, looks_like_signature
from okgen.snapshot import layout
from okgen.snapshot.catalogue import HEX_PREFIX, Catalogue, CatalogueEntry

log = logging.getLogger(__name__)


class Snapshot:
    """A snapshot folder. Records are read lazily and cached.

    Args:
        path: the snapshot folder (holding ``manifest.json``).
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        if not (self.path / layout.MANIFEST).is_file():
            raise NotFoundError(f"{self.path}: not a snapshot folder (no {layout.MANIFEST})")

    def __repr__(self) -> str:
        return f"Snapshot({str(self.path)!r})"

    @functools.cached_property
    def manifest(self) -> SnapshotManifest:
        """The parsed ``manifest.json``."""
        return read_model_json(self.path / layout.MANIFEST, SnapshotManifest)

    @functools.cached_property
    def signature(self) -> Signature:
        """The parsed snapshot signature."""
        return Signature.parse(self.manifest.signature)

    @property
    def name(self) -> str:
        """Folder name."""
        return self.path.name

    @functools.cached_property
    def questions(self) -> list[Question]:
        """All questions."""
        return read_jsonl(self.path / layout.QUESTIONS, Question)

    @functools.cached_property
    def corpus(self) -> list[Article]:
        """All corpus articles (the longest window)."""
        return read_jsonl(self.path / layout.CORPUS, Article)

    def iter_corpus(self) -> Iterator[Article]:
        """Stream corpus articles without keeping them."""
        return iter_jsonl(self.path / layout.CORPUS, Article)

    @functools.cached_property
    def articles_by_id(self) -> dict[str, Article]:
        """Corpus articles by id."""
        return {a.id: a for a in self.corpus}

    def window(self, days: int) -> list[Article]:
        """Articles of the ``days``-day window ending on the snapshot date: (D - days, D]."""
        import datetime as dt

        if days < 1:
            raise OkgenError(f"a window is at least 1 day, got {days}")
        d = self.manifest.date
        start = d - dt.timedelta(days=days)
        return [a for a in self.corpus if start < a.date <= d]


def path_exists(p: Path) -> bool:
    """``p.exists()``, False for a string that cannot be a path (too long, NUL byte)."""
    try:
        return p.exists()
    except (OSError, ValueError):
        return False


def list_snapshots(ws: Workspace) -> list[tuple[CatalogueEntry | None, Snapshot | None]]:
    """Every snapshot known to the workspace: catalogue records and folders without one."""
    cat = catalogue(ws)
    out: list[tuple[CatalogueEntry | None, Snapshot | None]] = []
    seen: set[str] = set()
    for e in cat.entries():
        p = cat.resolve_path(e.path)
        snap = Snapshot(p) if p is not None and (p / layout.MANIFEST).is_file() else None
        out.append((e, snap))
        seen.add(e.name)
    if ws.snapshots_dir.is_dir():
        for p in sorted(ws.snapshots_dir.iterdir(), reverse=True):
            if p.is_dir() and p.name not in seen and not p.name.startswith(".") and (p / layout.MANIFEST).is_file():
                out.append((None, Snapshot(p)))
    return out


def catalogue(ws: Workspace) -> Catalogue:
    """The workspace's signature catalogue."""
    return Catalogue(ws.signatures_dir, ws.home)


def resolve(ref: str, ws: Workspace | None = None, *, extract: bool = True) -> Snapshot:
    """Find a snapshot by folder path, archive path, signature, short signature or hash.

    An archive is extracted safely into the workspace's ``snapshots/`` (and registered) unless
    its folder is already there. A signature found in the catalogue whose folder is missing but
    whose archive is present is extracted from the archive.

    Raises:
        NotFoundError: nothing matches (or several snapshots do).
        SignatureError: ``ref`` looks like a signature but does not parse.
    """
    ws = ws or Workspace.from_env()
    ref = str(ref).strip()
    p = Path(ref).expanduser()
    if not looks_like_signature(ref) and path_exists(p):
        if p.is_dir():
            return Snapshot(p)
        if p.name.endswith((".tar.gz", ".tgz")):
            if not extract:
                raise OkgenError(f"{p}: an archive; extract it first")
            return open_archive(p, ws)
        raise NotFoundError(f"{p}: neither a snapshot folder nor a .tar.gz archive")
    cat = catalogue(ws)
    try:
        entry = cat.find(ref)
    except NotFoundError:
        # A folder in snapshots/ that was copied in without a catalogue record.
        for _, snap in list_snapshots(ws):
            if snap is not None and (snap.name == ref or (HEX_PREFIX.match(ref) and snap.manifest.content_hash.startswith(ref))
                                     or (looks_like_signature(ref) and _same_signature(snap, ref))):
                return snap  # found by its folder; looking up writes nothing (okgen snapshot extract registers)
        raise
    path = cat.resolve_path(entry.path)
    if path is not None and (path / layout.MANIFEST).is_file():
        return Snapshot(path)
    archive = cat.resolve_path(entry.archive)
    if archive is not None and archive.is_file() and extract:
        return open_archive(archive, ws)
    raise NotFoundError(
        f"snapshot {entry.name} is catalogued but not present locally; "
        f"fetch it with: okgen pull '{entry.short_signature}' --from SOURCE"
    )


def _same_signature(snap: Snapshot, ref: str) -> bool:
    from okgen.signature import names_snapshot, parse_any

    try:
        return names_snapshot(parse_any(ref), snap.signature)
    except OkgenError:
        return False


def open_archive(archive: Path, ws: Workspace) -> Snapshot:
    """Extract an archive into ``snapshots/`` (if not already there), register it, open it."""
    from okgen.snapshot.archive import list_members, safe_extract
    members = list_members(archive)
    top = Path(members[0].name).parts[0]
    folder = ws.snapshots_dir / top
    if not (folder / layout.MANIFEST).is_file():
        folder = safe_extract(archive, ws.snapshots_dir)
    elif _member_bytes(archive, f"{top}/{layout.QUALITY}") != _file_bytes(folder / layout.QUALITY):
        log.warning("%s: the workspace's copy of %s is what is shown, and its quality evidence differs from the "
                    "archive's (a review imported since?)", archive.name, top)
    snap = Snapshot(folder)
    register(snap, ws, archive=archive if archive.resolve().parent == ws.snapshots_dir.resolve() else None)
    return snap


def _member_bytes(archive: Path, name: str) -> bytes | None:
    """One file of a snapshot archive, or None when it has none of that name."""
    import tarfile

    with tarfile.open(archive) as tf:
        try:
            f = tf.extractfile(name)
        except KeyError:
            return None
        return f.read() if f is not None else None


def _file_bytes(path: Path) -> bytes | None:
    return path.read_bytes() if path.is_file() else None


def register(snapshot: Snapshot, ws: Workspace, archive: Path | None = None, source: str | None = None,
             verified: bool | None = None) -> CatalogueEntry:
    """Add or refresh the catalogue record of a snapshot (archive checksum included).

    ``verified``: whether its manifest signature was just verified with a key (signed by
    ``okgen publish --sign-key``, pulled with ``--pubkey``); None keeps what the record said, as
    long as the folder still has its ``manifest.sig``. A signature nobody checked is not
    recorded as ``signed``."""
    cat = catalogue(ws)
    m = snapshot.manifest
    sig = snapshot.signature
    old = cat.get_by_name(snapshot.name)
    if archive is None and old is not None and old.archive:
        candidate = cat.resolve_path(old.archive)
        archive = candidate if candidate is not None and candidate.is_file() else None
    if archive is None:
        candidate = snapshot.path.parent / f"{snapshot.name}.tar.gz"
        archive = candidate if candidate.is_file() else None
    sources = tuple(old.sources) if old else ()
    if source and source not in sources:
        sources = sources + (source,)
    entry = CatalogueEntry(
        signature=m.signature,
        short_signature=sig.short,
        content_hash=m.content_hash,
        name=snapshot.name,
        date=m.date,
        questions=m.counts.get("questions", sig.questions),
        path=cat.relative(snapshot.path),
        archive=cat.relative(archive) if archive else None,
        archive_sha256=sha256_file(archive) if archive else None,
        archive_bytes=archive.stat().st_size if archive else None,
        text_included=m.text_included,
        signed=(snapshot.path / layout.MANIFEST_SIG).is_file() and (
            verified if verified is not None else bool(old is not None and old.signed)),
        sources=sources,
    )
    cat.put(entry)
    return entry


def quality_of_snapshots(refs: Sequence[str], ws: Any) -> dict[str, Any]:
    """The quality evidence of every snapshot in ``refs`` found in the workspace (hash prefixes,
    signatures...); those not found locally or without evidence are left out."""
    from okgen.snapshot.quality import load_quality

    out = {}
    for ref in dict.fromkeys(refs):
        try:
            snap = resolve(ref, ws, extract=False)
            q = load_quality(snap.path, snap.manifest.content_hash)
        except OkgenError:
            continue
        if q is not None:
            out[ref] = q
    return out
