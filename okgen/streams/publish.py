"""Stream archives, publishing and pulling, on the snapshot and series machinery.

A stream archive is the deterministic ``.tar.gz`` (:func:`okgen.snapshot.archive.make_archive`)
of its folder, signed with the snapshots' Ed25519 scheme when a key is given. Publishing a
stream built from a series first publishes the series (:func:`okgen.series.publish.publish_series`,
which uploads the member snapshots the destination lacks), then the stream archive to
``streams/<name>.stream.tar.gz``, recorded under ``"streams"`` in the destination's
``index.json``. Pulling checks the archive's SHA-256 against the index, extracts it safely,
pulls the series (when it has one) and verifies the whole stream before installing it.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from okgen.errors import IntegrityError, NotFoundError
from okgen.hashing import sha256_file
from okgen.schema import utcnow
from okgen.settings import Workspace
from okgen.snapshot import publish as snap_publish
from okgen.snapshot.archive import make_archive, safe_extract
from okgen.snapshot.layout import MANIFEST_SIG
from okgen.streams.store import FILES, MANIFEST, read_manifest, streams_dir, verify_stream

STREAM_FILES = frozenset({MANIFEST, MANIFEST_SIG, *FILES})


def archive_stream(folder: Path, out_dir: Path) -> Path:
    """Write the deterministic archive ``<name>.stream.tar.gz`` of a stream folder."""
    folder = Path(folder)
    return make_archive(folder, Path(out_dir) / f"{folder.name}.stream.tar.gz")


def publish_stream(folder: Path, dest: str, ws: Workspace, *, sign_key: str | Path | None = None) -> dict[str, Any]:
    """Publish a stream (and its series and member snapshots) to ``dest``.

    Raises:
        IntegrityError: the stream or its series fails verification (nothing is uploaded).
    """
    folder = Path(folder)
    problems = verify_stream(folder, ws)
    if problems:
        raise IntegrityError(f"refusing to publish stream {folder.name}: {problems[0]}")
    m = read_manifest(folder / MANIFEST)
    if m.origin == "series":
        from okgen.series.publish import publish_series
        from okgen.series.store import resolve_series

        _, sfolder = resolve_series(m.series or "", ws)
        publish_series(sfolder, dest, ws, sign_key=sign_key)
    with tempfile.TemporaryDirectory(prefix="okgen-stream-") as tmpdir:
        work = Path(tmpdir) / m.name
        shutil.copytree(folder, work)
        if sign_key is not None:
            from okgen.snapshot.signing import sign_manifest

            sign_manifest(work, sign_key)
            shutil.copyfile(work / MANIFEST_SIG, folder / MANIFEST_SIG)
        signed = (work / MANIFEST_SIG).is_file()
        key_id = json.loads((work / MANIFEST_SIG).read_text(encoding="utf-8")).get("key_id") if signed else None
        archive = archive_stream(work, Path(tmpdir))
        digest, size = sha256_file(archive), archive.stat().st_size
        fs, root = snap_publish._fs(dest)
        fs.makedirs(f"{root}/streams", exist_ok=True)
        remote = f"streams/{archive.name}"
        fs.put_file(str(archive), f"{root}/{remote}")
    entry = {"name": m.name, "signature": m.signature, "content_hash": m.content_hash, "origin": m.origin,
             "series": m.series, "archive": remote, "sha256": digest, "bytes": size, "signed": signed, "key_id": key_id,
             "published_at": utcnow().isoformat()}
    index = snap_publish.read_index(dest)
    index["streams"] = sorted([e for e in index.get("streams", []) if e.get("name") != m.name] + [entry],
                              key=lambda e: e.get("name", ""))
    index["updated_at"] = utcnow().isoformat()
    snap_publish._write_index(fs, root, index)
    return entry


def pull_stream(ref: str, src: str, ws: Workspace, *, pubkey: str | Path | None = None) -> Path:
    """Download a published stream (and its series), verify everything, install it locally.

    Raises:
        NotFoundError: no published stream matches ``ref``.
        IntegrityError: a SHA-256, hash or signature check fails (nothing is installed).
    """
    index = snap_publish.read_index(src)
    entries = [e for e in index.get("streams", []) if ref in (e.get("name"), e.get("signature"))
               or str(e.get("content_hash", "")).startswith(ref.lower()) and len(ref) >= 6]
    if len(entries) != 1:
        known = ", ".join(e.get("name", "?") for e in index.get("streams", [])) or "none"
        raise NotFoundError(f"{'no' if not entries else 'more than one'} published stream matches {ref!r} in {src} (published: {known})")
    entry = entries[0]
    fs, root = snap_publish._fs(src)
    target = streams_dir(ws)
    target.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".pull-", dir=target) as tmpdir:
        local = Path(tmpdir) / Path(entry["archive"]).name
        try:
            fs.get_file(f"{root}/{entry['archive']}", str(local))
        except FileNotFoundError:
            raise NotFoundError(f"{src}/{entry['archive']}: listed in the index but missing") from None
        if sha256_file(local) != entry["sha256"]:
            raise IntegrityError(f"{entry['archive']}: SHA-256 differs from the index; refusing it")
        folder = safe_extract(local, Path(tmpdir) / "x", verify=False, only=STREAM_FILES)
        if pubkey is not None:
            from okgen.snapshot.signing import verify_manifest_signature

            verify_manifest_signature(folder, pubkey)
        problems = verify_stream(folder, ws, series=False)
        if problems:
            raise IntegrityError(f"stream {folder.name}: {problems[0]}")
        m = read_manifest(folder / MANIFEST)
        if m.origin == "series":
            from okgen.series.publish import pull_series
            from okgen.signature import SeriesSignature

            pull_series(SeriesSignature.parse(m.series or "").name, src, ws, pubkey=pubkey)
            problems = verify_stream(folder, ws)
            if problems:
                raise IntegrityError(f"stream {folder.name}: {problems[0]}")
        final = target / folder.name
        if final.exists():
            shutil.rmtree(final)
        folder.rename(final)
    return final
