"""Build, open, list and verify series (``series/<name>/manifest.json`` in the workspace).

A series pins an ordered run of daily snapshots: for every day its date, snapshot signature
and content hash, plus a combined hash over all of them that goes into the series' own
signature. Building refuses members made by different generators, validators, prompts or feed
lists unless told which may differ, and names the days that have no snapshot.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from okgen import __version__
from okgen.errors import ConfigError, IntegrityError, NotFoundError, OkgenError
from okgen.files import atomic_write_bytes, describe_validation_error
from okgen.schema import utcnow
from okgen.series.records import (
    CHECKED_FIELDS,
    SeriesManifest,
    SeriesMember,
    combined_hash,
    manifest_bytes,
    manifest_hash,
)
from okgen.settings import Workspace
from okgen.signature import SeriesSignature, looks_like_series_signature
from okgen.snapshot.store import Snapshot, list_snapshots, resolve

log = logging.getLogger(__name__)
MANIFEST = "manifest.json"
MIXED = "mixed"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


def series_dir(ws: Workspace) -> Path:
    """The workspace's series folder (``OKGEN_HOME/series``)."""
    return ws.home / "series"


def _field_values(snap: Snapshot) -> dict[str, str]:
    m = snap.manifest
    return {"generator": m.generator.model, "validator": m.validator.model if m.validator else "none",
            "prompts": m.prompt_hash, "feeds": m.feeds_hash}


def _days(start: dt.date, end: dt.date) -> list[dt.date]:
    return [start + dt.timedelta(days=i) for i in range((end - start).days + 1)]


def build_series(ws: Workspace, name: str, start: dt.date, end: dt.date, *, allow_differ: Sequence[str] = (),
                 allow_gaps: bool = False, overwrite: bool = False) -> SeriesManifest:
    """Pin the workspace's snapshots dated ``start``..``end`` (one per day, the newest) as a series.

    Raises:
        ConfigError: a bad name or range, an unknown ``allow_differ`` field, missing days (unless
            ``allow_gaps``), members that differ in a field not allowed to, or an existing series.
        IntegrityError: a member snapshot fails verification.
    """
    from okgen.snapshot.verify import verify_folder

    if not _NAME.match(name):
        raise ConfigError(f"bad series name {name!r}: use 1-100 letters, digits, '.', '_' or '-'")
    if end < start:
        raise ConfigError(f"--to {end} is before --from {start}")
    unknown = [f for f in allow_differ if f not in CHECKED_FIELDS]
    if unknown:
        raise ConfigError(f"unknown field {unknown[0]!r} for --allow-differ (known: {', '.join(CHECKED_FIELDS)})")
    folder = series_dir(ws) / name
    if (folder / MANIFEST).exists() and not overwrite:
        raise ConfigError(f"series {name!r} already exists ({folder}); use --overwrite to rebuild it")
    by_day: dict[dt.date, Snapshot] = {}
    for _, snap in list_snapshots(ws):
        if snap is None or not (start <= snap.manifest.date <= end):
            continue
        old = by_day.get(snap.manifest.date)
        if old is None or (snap.manifest.created_at, snap.name) > (old.manifest.created_at, old.name):
            by_day[snap.manifest.date] = snap
    missing = [d for d in _days(start, end) if d not in by_day]
    if not by_day:
        raise ConfigError(f"no snapshots dated {start}..{end} in {ws.snapshots_dir}")
    if missing and not allow_gaps:
        raise ConfigError(f"{len(missing)} day(s) between {start} and {end} have no snapshot: "
                          f"{_day_list(missing)} (build them, narrow the range, or pass --allow-gaps)")
    snaps = [by_day[d] for d in sorted(by_day)]
    values: dict[str, list[str]] = {f: [] for f in CHECKED_FIELDS}
    for s in snaps:
        for f, v in _field_values(s).items():
            if v not in values[f]:
                values[f].append(v)
    differ = []  # every field that differs, in one message: no retry per field
    for f in CHECKED_FIELDS:
        if len(values[f]) > 1 and f not in allow_differ:
            firsts = {v: next(str(s.manifest.date) for s in snaps if _field_values(s)[f] == v) for v in values[f]}
            seen = "; ".join(f"{v[:12] if f in ('prompts', 'feeds') else v} (from {d})" for v, d in firsts.items())
            differ.append((f, seen))
    if differ:
        raise ConfigError("members differ in " + " and in ".join(f"{f}: {seen}" for f, seen in differ)
                          + f"; pass --allow-differ {','.join(f for f, _ in differ)} if that is intended")
    for s in snaps:
        rep = verify_folder(s.path)
        if not rep.ok:
            raise IntegrityError(f"snapshot {s.name} ({s.manifest.date}) failed verification: {rep.problems[0]}")
    members = tuple(SeriesMember(date=s.manifest.date, signature=s.manifest.signature, content_hash=s.manifest.content_hash,
                                 name=s.name, questions=len(s.questions)) for s in snaps)
    chash = combined_hash(members)

    def one(f: str) -> str:
        if len(values[f]) > 1:
            return MIXED
        return values[f][0][:12] if f in ("prompts", "feeds") else values[f][0]  # as snapshot signatures show them

    sig = SeriesSignature(name=name, start=start, end=end, days=len(members), missing=len(missing),
                          generator=one("generator"), validator=one("validator"), prompt_hash=one("prompts"),
                          feeds_hash=one("feeds"), questions=sum(m.questions for m in members), content_hash=chash,
                          version=__version__)
    manifest = SeriesManifest(name=name, signature=sig.format(), start=start, end=end, members=members,
                              missing_days=tuple(missing), allowed_differences=tuple(sorted(set(allow_differ))),
                              values=values, content_hash=chash, created_at=utcnow(), okgen_version=__version__)
    manifest = manifest.model_copy(update={"manifest_sha256": manifest_hash(manifest)})
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "manifest.sig").unlink(missing_ok=True)  # a rebuilt manifest is no longer signed
    atomic_write_bytes(folder / MANIFEST, manifest_bytes(manifest))
    return manifest


def _day_list(days: Sequence[dt.date], most: int = 10) -> str:
    text = ", ".join(str(d) for d in days[:most])
    return text + (f" and {len(days) - most} more" if len(days) > most else "")


def read_manifest(path: Path) -> SeriesManifest:
    """Read and schema-check a series manifest file.

    Raises:
        IntegrityError: unreadable, not JSON, or not a series manifest.
    """
    try:
        data = json.loads(path.read_bytes().decode("utf-8"))
        return SeriesManifest.model_validate(data)
    except FileNotFoundError:
        raise NotFoundError(f"{path}: no such series manifest") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise IntegrityError(f"{path}: corrupted JSON ({getattr(e, 'msg', e)})") from None
    except ValidationError as e:
        raise IntegrityError(f"{path}: not a series manifest ({describe_validation_error(e)})") from None


def list_series(ws: Workspace) -> list[SeriesManifest]:
    """Every series of the workspace, by name; unreadable ones are skipped with a warning."""
    out = []
    root = series_dir(ws)
    if root.is_dir():
        for p in sorted(root.glob(f"*/{MANIFEST}")):
            try:
                out.append(read_manifest(p))
            except OkgenError as e:
                log.warning("skipping series %s: %s", p.parent.name, e)
    return out


def resolve_series(ref: str, ws: Workspace) -> tuple[SeriesManifest, Path]:
    """Find a series by name, folder, signature (long or short) or combined-hash prefix.

    Raises:
        NotFoundError: nothing matches, or several series do.
        SignatureError: ``ref`` looks like a series signature but does not parse.
    """
    ref = str(ref).strip()
    p = Path(ref).expanduser()
    if not looks_like_series_signature(ref) and (p / MANIFEST).is_file():
        return read_manifest(p / MANIFEST), p
    folder = series_dir(ws) / ref
    if _NAME.match(ref) and (folder / MANIFEST).is_file():
        return read_manifest(folder / MANIFEST), folder
    all_series = list_series(ws)
    if looks_like_series_signature(ref):
        long = SeriesSignature.parse(ref).format()
        matches = [m for m in all_series if m.signature == long]
    else:
        matches = [m for m in all_series if len(ref) >= 6 and m.content_hash.startswith(ref.lower())]
    if not matches:
        known = ", ".join(m.name for m in all_series) or "none"
        raise NotFoundError(f"no series matches {ref!r} in {series_dir(ws)} (known: {known})")
    if len(matches) > 1:
        raise NotFoundError(f"{ref!r} matches {len(matches)} series; give the name or the full signature")
    return matches[0], series_dir(ws) / matches[0].name


@dataclass
class SeriesReport:
    """The outcome of :func:`verify_series`."""

    name: str
    signature: str | None = None
    problems: list[str] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when nothing is wrong."""
        return not self.problems

    def to_dict(self) -> dict:
        """JSON-ready form."""
        return {"name": self.name, "ok": self.ok, "signature": self.signature, "checked": self.checked,
                "problems": self.problems}


def verify_series(folder: Path, ws: Workspace, *, members: bool = True) -> SeriesReport:
    """Check a series: its manifest's own hash, the combined hash against its members and its
    signature, and (``members``) that every member snapshot is present, is the one pinned (same
    signature and content hash) and passes snapshot verification."""
    from okgen.snapshot.verify import verify_folder

    path = Path(folder) / MANIFEST
    rep = SeriesReport(name=Path(folder).name)
    try:
        m = read_manifest(path)
    except OkgenError as e:
        rep.problems.append(str(e))
        return rep
    rep.name, rep.signature = m.name, m.signature
    if manifest_hash(m) != m.manifest_sha256:
        rep.problems.append(f"{MANIFEST}: content changed (its hash does not match manifest_sha256)")
    elif path.read_bytes() != manifest_bytes(m):
        rep.problems.append(f"{MANIFEST}: bytes changed (not the canonical form written by okgen)")
    try:
        sig = SeriesSignature.parse(m.signature)
    except OkgenError as e:
        rep.problems.append(f"bad series signature: {e}")
        sig = None
    dates = [x.date for x in m.members]
    if dates != sorted(set(dates)):
        rep.problems.append("members are not one per day in date order")
    chash = combined_hash(m.members)
    if chash != m.content_hash:
        rep.problems.append("combined hash does not match the members")
    if sig is not None and (sig.content_hash != chash or sig.days != len(m.members) or sig.name != m.name
                            or sig.questions != sum(x.questions for x in m.members)):
        rep.problems.append("series signature does not match the members")
    if not members:
        return rep
    for x in m.members:
        try:
            snap = resolve(x.signature, ws)
        except OkgenError as e:
            rep.problems.append(f"{x.date}: member snapshot {x.name} not available ({e})")
            continue
        if snap.manifest.signature != x.signature or snap.manifest.content_hash != x.content_hash:
            rep.problems.append(f"{x.date}: snapshot {snap.name} is not the one the series pins")
            continue
        srep = verify_folder(snap.path)
        if not srep.ok:
            rep.problems.append(f"{x.date}: member snapshot {snap.name} failed verification: {srep.problems[0]}")
            continue
        rep.checked.append(str(x.date))
    return rep


def member_snapshots(m: SeriesManifest, ws: Workspace) -> list[Snapshot]:
    """Open every member snapshot (in date order).

    Raises:
        NotFoundError: a member is not available locally.
    """
    return [resolve(x.signature, ws) for x in m.members]
