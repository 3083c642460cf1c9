"""Series archives, publishing and pulling, on top of the snapshot machinery.

A series archive is the deterministic ``.tar.gz`` (:func:`okgen.snapshot.archive.make_archive`)
of its folder: ``manifest.json`` and, when signed, ``manifest.sig`` (the same Ed25519 scheme as
snapshots, :mod:`okgen.snapshot.signing`). Publishing uploads every member snapshot that the
destination does not hold yet (:func:`okgen.snapshot.publish.publish`), then the series
archive to ``series/<name>.series.tar.gz``, recorded under ``"series"`` in the same
``index.json``. Pulling downloads the series archive, checks its SHA-256, extracts it safely,
pulls every member (:func:`okgen.snapshot.publish.pull`) and verifies the whole series.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
from pathlib import Path
from typing import Any

from okgen.errors import IntegrityError, NotFoundError
from okgen.schema import utcnow
from okgen.series.store import MANIFEST, member_snapshots, read_manifest, series_dir, verify_series
from okgen.settings import Workspace
from okgen.signature import SeriesSignature, looks_like_series_signature
from okgen.snapshot import publish as snap_publish
from okgen.snapshot.archive import make_archive, safe_extract
from okgen.snapshot.layout import MANIFEST_SIG

log = logging.getLogger(__name__)

# What a series archive holds: its manifest and, when published signed, the manifest's signature.
SERIES_FILES = frozenset({MANIFEST, MANIFEST_SIG})


def archive_series(folder: Path, out_dir: Path) -> Path:
    """Write the deterministic archive ``<name>.series.tar.gz`` of a series folder into ``out_dir``."""
    folder = Path(folder)
    return make_archive(folder, Path(out_dir) / f"{folder.name}.series.tar.gz")


def publish_series(folder: Path, dest: str, ws: Workspace, *, sign_key: str | Path | None = None) -> dict[str, Any]:
    """Publish a series and its member snapshots to ``dest`` (a folder or fsspec URL).

    Raises:
        IntegrityError: the series or a member fails verification (nothing is uploaded).
    """
    rep = verify_series(folder, ws)
    if not rep.ok:
        raise IntegrityError(f"refusing to publish series {rep.name}: {rep.problems[0]}")
    m = read_manifest(Path(folder) / MANIFEST)
    index = snap_publish.read_index(dest)
    have = {(e.get("signature"), e.get("text_included", True)) for e in index["snapshots"]}
    uploaded = 0
    for snap in member_snapshots(m, ws):
        if (snap.manifest.signature, True) not in have:
            snap_publish.publish(snap, dest, ws, sign_key=sign_key)
            uploaded += 1
    key_id = None
    with tempfile.TemporaryDirectory(prefix="okgen-series-") as tmpdir:
        work = Path(tmpdir) / m.name
        work.mkdir()
        shutil.copyfile(Path(folder) / MANIFEST, work / MANIFEST)
        if sign_key is not None:
            from okgen.snapshot.signing import sign_manifest

            sign_manifest(work, sign_key)
            shutil.copyfile(work / "manifest.sig", Path(folder) / "manifest.sig")
            key_id = _key_id(work / "manifest.sig")
        elif (Path(folder) / "manifest.sig").is_file():
            shutil.copyfile(Path(folder) / "manifest.sig", work / "manifest.sig")
            key_id = _key_id(work / "manifest.sig")
        where = snap_publish.upload_archive(archive_series(work, Path(tmpdir)), dest, "series")
    entry = {"name": m.name, "signature": m.signature, "short_signature": SeriesSignature.parse(m.signature).short,
             "content_hash": m.content_hash, "start": str(m.start), "end": str(m.end), "days": len(m.members),
             **where, "signed": key_id is not None, "key_id": key_id,
             "published_at": utcnow().isoformat()}
    index = snap_publish.read_index(dest)  # re-read: member uploads rewrote it
    index["series"] = [e for e in index.get("series", []) if e.get("name") != m.name] + [entry]
    index["series"].sort(key=lambda e: e.get("name", ""))
    index["updated_at"] = utcnow().isoformat()
    snap_publish._write_index(*snap_publish._fs(dest), index)
    log.info("published series %s (%d member(s) uploaded now) to %s", m.name, uploaded, dest)
    return {**entry, "members_uploaded": uploaded}


def _key_id(sig_path: Path) -> str | None:
    import json

    try:
        return json.loads(sig_path.read_text(encoding="utf-8")).get("key_id")
    except (OSError, ValueError):
        return None


def pull_series(ref: str, src: str, ws: Workspace, *, pubkey: str | Path | None = None) -> Path:
    """Download a published series and its members, verify everything, register it locally.

    Raises:
        NotFoundError: no published series matches ``ref``.
        IntegrityError: a SHA-256, hash or signature check fails (the series is not installed).
    """
    index = snap_publish.read_index(src)
    entries = index.get("series", [])
    if looks_like_series_signature(ref):
        long = SeriesSignature.parse(ref).format()
        matches = [e for e in entries if e.get("signature") == long]
    else:
        matches = [e for e in entries if e.get("name") == ref or str(e.get("content_hash", "")).startswith(ref.lower())]
    if len(matches) != 1:
        known = ", ".join(e.get("name", "?") for e in entries) or "none"
        raise NotFoundError(f"{'no' if not matches else 'more than one'} published series matches {ref!r} in {src} (published: {known})")
    entry = matches[0]
    target_root = series_dir(ws)
    target_root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".pull-", dir=target_root) as tmpdir:
        local = snap_publish.fetch_archive(entry, src, Path(tmpdir), "series")
        folder = safe_extract(local, Path(tmpdir) / "x", verify=False, only=SERIES_FILES)
        m = read_manifest(folder / MANIFEST)
        if m.signature != entry["signature"]:
            raise IntegrityError(f"{entry['archive']}: its manifest's signature differs from the index")
        if pubkey is not None:
            from okgen.snapshot.signing import verify_manifest_signature

            verify_manifest_signature(folder, pubkey)
        rep = verify_series(folder, ws, members=False)
        if not rep.ok:
            raise IntegrityError(f"series {m.name}: {rep.problems[0]}")
        for x in m.members:
            snap_publish.pull(x.signature, src, ws, pubkey=pubkey)
        rep = verify_series(folder, ws)
        if not rep.ok:
            raise IntegrityError(f"series {m.name}: {rep.problems[0]}")
        final = target_root / folder.name
        if final.exists():
            shutil.rmtree(final)
        folder.rename(final)
    return final
