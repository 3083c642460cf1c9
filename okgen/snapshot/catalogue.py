"""The ``signatures/`` catalogue: one JSON record per known snapshot signature.

Each record maps a signature to its snapshot folder, its archive and the archive's SHA-256,
and where it can be pulled from. Lookups accept the full (long) signature, the short form, an
eval signature (its snapshot part), the content hash or a unique prefix of it (at least 6 hex
digits), or the snapshot's folder name.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

from pydantic import Field

from okgen.errors import NotFoundError, OkgenError
from okgen.files import atomic_write_text, pretty_json, read_model_json
from okgen.schema import Record, utcnow
from okgen.signature import (
    looks_like_signature,
    names_signed,
    parse_any,
    signature_diff,
)

HEX_PREFIX = re.compile(r"^[0-9a-f]{6,64}$")
DATE_REF = re.compile(r"^\d{4}-\d{2}-\d{2}$")  # a date picks the newest snapshot of that day


def _parses(text: str) -> bool:
    try:
        parse_any(text)
    except OkgenError:
        return False
    return True


class CatalogueEntry(Record):
    """One catalogue record (``signatures/<name>.json``)."""

    schema_version: int = 1
    """Record schema version."""
    kind: str = "okgen-catalogue-entry"
    """File kind."""
    signature: str
    """Long-form snapshot signature."""
    short_signature: str
    """Short-form snapshot signature."""
    content_hash: str
    """Snapshot content hash."""
    name: str
    """Snapshot folder name."""
    date: dt.date
    """News date."""
    questions: int
    """Question count."""
    path: str | None = None
    """Local snapshot folder, relative to the workspace when inside it."""
    archive: str | None = None
    """Local archive path, relative to the workspace when inside it."""
    archive_sha256: str | None = None
    """SHA-256 of the archive's bytes."""
    archive_bytes: int | None = None
    """Archive size."""
    text_included: bool = True
    """False for a licence-aware release without article bodies."""
    signed: bool = False
    """True when the snapshot carries an Ed25519 manifest signature verified with a key in this
    workspace (signed by ``okgen publish --sign-key`` or pulled with ``--pubkey``); a signature
    nobody checked leaves it False."""
    sources: tuple[str, ...] = ()
    """Where the archive has been published (folders or fsspec URLs)."""
    registered_at: dt.datetime = Field(default_factory=utcnow)
    """When this record was written."""


class Catalogue:
    """The catalogue folder of a workspace.

    Args:
        folder: the ``signatures/`` folder.
        home: the workspace root, for relative paths.
    """

    def __init__(self, folder: Path, home: Path):
        self.folder = Path(folder)
        self.home = Path(home)

    def entries(self) -> list[CatalogueEntry]:
        """Every record, newest first; unreadable records are skipped with a warning."""
        import logging

        out = []
        if not self.folder.is_dir():
            return out
        for p in sorted(self.folder.glob("*.json")):
            try:
                out.append(read_model_json(p, CatalogueEntry))
            except OkgenError as e:
                logging.getLogger(__name__).warning("skipping catalogue record %s: %s", p.name, e)
        out.sort(key=lambda e: (e.date, e.name), reverse=True)
        return out

    def put(self, entry: CatalogueEntry) -> Path:
        """Write (or replace) the record of ``entry.name``."""
        path = self.folder / f"{entry.name}.json"
        atomic_write_text(path, pretty_json(entry))
        return path

    def get_by_name(self, name: str) -> CatalogueEntry | None:
        """The record of a snapshot folder name, or None."""
        path = self.folder / f"{name}.json"
        return read_model_json(path, CatalogueEntry) if path.is_file() else None

    def find(self, ref: str) -> CatalogueEntry:
        """Find the one record matching a signature, short signature, hash prefix, name or date
        (a date picks the newest snapshot of that day).

        Raises:
            NotFoundError: no record matches, or several do (the message lists them).
            SignatureError: ``ref`` looks like a signature but does not parse.
        """
        ref = ref.strip()
        entries = self.entries()
        if looks_like_signature(ref):
            given = parse_any(ref)
            sig = given.snapshot_signature()
            long = sig.format()
            same = [e for e in entries if e.content_hash.startswith(sig.short_hash)]
            matches = [e for e in same if e.signature == long or names_signed(given, e.signature)]
            if not matches and same:
                # The questions are here; another field of the signature was given otherwise (named
                # against a record this okgen reads, where there is one).
                near = next((e for e in same if looks_like_signature(e.signature) and _parses(e.signature)), same[0])
                raise NotFoundError(f"snapshot {near.name} has hash {sig.short_hash} but its signature differs "
                                    f"from the one given in {signature_diff(near.signature, long, 'given')}")
            if not matches:
                raise NotFoundError(
                    f"no snapshot with signature hash {sig.short_hash} in {self.folder} "
                    "(okgen snapshot ls lists them; okgen pull fetches one)"
                )
            return matches[0]
        matches = [e for e in entries if e.name == ref]
        if not matches and DATE_REF.match(ref):
            # A date: the newest snapshot of that day (entries are sorted newest first).
            same_day = [e for e in entries if str(e.date) == ref]
            matches = same_day[:1]
        if not matches and HEX_PREFIX.match(ref):
            matches = [e for e in entries if e.content_hash.startswith(ref)]
        if not matches:
            shown = ref if len(ref) <= 80 else f"{ref[:60]}... ({len(ref)} characters)"
            hint = ("; a hash prefix needs 6 or more hex digits" if re.fullmatch(r"[0-9a-f]{1,5}", ref)
                    else "; okgen snapshot ls lists them (by date, name, signature or a 6+ hex-digit hash prefix)")
            raise NotFoundError(f"no snapshot matches {shown!r} in {self.folder}{hint}")
        if len(matches) > 1:
            names = ", ".join(e.name for e in matches[:5])
            raise NotFoundError(f"{ref!r} matches {len(matches)} snapshots ({names}); give the full signature")
        return matches[0]

    def resolve_path(self, stored: str | None) -> Path | None:
        """Turn a stored (possibly workspace-relative) path into an absolute one."""
        if not stored:
            return None
        p = Path(stored)
        return p if p.is_absolute() else self.home / p

    def relative(self, path: Path | None) -> str | None:
        """Store ``path`` relative to the workspace when it lies inside it."""
        if path is None:
            return None
        path = Path(path).resolve()
        try:
            return path.relative_to(self.home.resolve()).as_posix()
        except ValueError:
            return str(path)
