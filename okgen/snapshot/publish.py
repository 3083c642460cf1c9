"""Publish snapshot archives to a folder or any fsspec URL, and pull them back.

A destination holds ``archives/<name>[.notext].tar.gz`` and a catalogue ``index.json``::

    {"schema_version": 1, "kind": "okgen-index", "snapshots": [
        {"signature": "...", "short_signature": "...", "name": "...", "date": "2026-11-21",
         "questions": 412, "archive": "archives/<name>.tar.gz", "sha256": "...", "bytes": 123,
         "text_included": true, "signed": true, "key_id": "...", "published_at": "..."}]}

``s3://``, ``gs://`` and other URLs work when that fsspec filesystem's package is installed
(``s3fs``, ``gcsfs``). Pulling downloads the archive, checks its SHA-256 against the index,
extracts it safely, verifies every hash (and the Ed25519 signature when a public key is given)
and registers the snapshot locally; anything that fails is removed again.
"""

from __future__ import annotations

import json
import logging
import re
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from okgen.errors import ConfigError, IntegrityError, NotFoundError, OkgenError
from okgen.hashing import sha256_file
from okgen.schema import utcnow
from okgen.settings import Workspace
from okgen.signature import looks_like_signature, names_signed, parse_any
from okgen.snapshot import layout
from okgen.snapshot.archive import make_archive, safe_extract
from okgen.snapshot.catalogue import DATE_REF, HEX_PREFIX
from okgen.snapshot.store import Snapshot, register
from okgen.snapshot.verify import verify_folder

log = logging.getLogger(__name__)
INDEX = "index.json"
# Where an index entry's archive may be: a plain file name under archives/ (snapshots) or
# series/ (series), never ../ or /.
ARCHIVE_NAME = r"[A-Za-z0-9_][A-Za-z0-9._-]*\.tar\.gz"


def _fs(url: str):
    import fsspec

    try:
        fs, root = fsspec.core.url_to_fs(url)
    except ImportError as e:
        raise ConfigError(f"cannot open {url}: {e} (install the fsspec filesystem package for this URL scheme)") from None
    except ValueError as e:
        raise ConfigError(f"cannot open {url}: {e}") from None
    return fs, root.rstrip("/")


def read_index(src: str) -> dict[str, Any]:
    """Read a destination's ``index.json`` (an empty index when there is none).

    Raises:
        IntegrityError: the index exists but is not valid JSON of the right kind.
    """
    fs, root = _fs(src)
    path = f"{root}/{INDEX}"
    try:  # one read: fsspec's exists() answers False for a server it cannot reach
        raw = fs.cat_file(path)
    except FileNotFoundError:
        return {"schema_version": 1, "kind": "okgen-index", "snapshots": []}
    except Exception as e:  # noqa: BLE001 - the transport's own errors (aiohttp, botocore...) vary by URL scheme
        raise OkgenError(f"cannot read {src}/{INDEX}: {_reason(e)}; check the URL and the network") from None
    try:
        data = json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as e:
        raise IntegrityError(f"{src}/{INDEX}: corrupted ({e})") from None
    if not isinstance(data, dict) or data.get("kind") != "okgen-index" or not isinstance(data.get("snapshots"), list):
        raise IntegrityError(f"{src}/{INDEX}: not an okgen catalogue index")
    return data


def source_name(url: str) -> str:
    """A publication place as the catalogue records it: a URL as given, a folder as an absolute
    path (a relative one means nothing from another working folder)."""
    return url if "://" in url else str(Path(url).expanduser().resolve())


def _reason(e: BaseException) -> str:
    """What went wrong, in words: a local error's own ("Not a directory"; the path is named
    beside it), a transport's whole message ("Cannot connect to host ...")."""
    local = isinstance(e, OSError) and e.filename is not None and e.strerror
    return " ".join((e.strerror if local else str(e) or type(e).__name__).split())


def writable_fs(dest: str) -> tuple[Any, str]:
    """The filesystem and root of a publication destination.

    Raises:
        ConfigError: an http(s) URL (read-only for okgen: pull from it, publish to the folder or
            bucket it serves).
    """
    fs, root = _fs(dest)
    if {"http", "https"} & set(fs.protocol if isinstance(fs.protocol, tuple) else (fs.protocol,)):
        raise ConfigError(f"cannot publish to {dest}: an http(s) URL is read-only here; publish to the folder "
                          "or bucket (s3://, gs://...) the web server serves, and pull from the URL")
    return fs, root


def _writing(dest: str, what: str, act: Callable[[], Any]) -> Any:
    """Run a write to ``dest``; its failure is one line naming the destination (nothing half-written
    is listed: the index is written last)."""
    try:
        return act()
    except OkgenError:
        raise
    except Exception as e:  # noqa: BLE001 - local OSErrors and each transport's own errors
        raise OkgenError(f"cannot write {what} to {dest}: {_reason(e)}") from None


def upload_archive(archive: Path, dest: str, folder: str) -> dict[str, Any]:
    """Put ``archive`` under ``dest/folder/``; the index fields that name it (archive, sha256, bytes)."""
    digest, size = sha256_file(archive), archive.stat().st_size
    fs, root = writable_fs(dest)
    remote = f"{folder}/{archive.name}"
    _writing(dest, remote, lambda: (fs.makedirs(f"{root}/{folder}", exist_ok=True),
                                    fs.put_file(str(archive), f"{root}/{remote}")))
    return {"archive": remote, "sha256": digest, "bytes": size}


def fetch_archive(entry: dict[str, Any], src: str, into: Path, folder: str) -> Path:
    """Download the archive an index entry names into the folder ``into`` and check its SHA-256.

    Raises:
        IntegrityError: the entry's path leaves ``src/folder/`` or the bytes differ from the index.
        NotFoundError: the index lists an archive that is not there.
    """
    remote = entry.get("archive")
    if not isinstance(remote, str) or not re.fullmatch(f"{folder}/{ARCHIVE_NAME}", remote):
        raise IntegrityError(f"{src}/{INDEX}: archive path {remote!r} is not a file under {folder}/ "
                             "of the publication folder; refusing it")
    fs, root = _fs(src)
    local = into / Path(remote).name
    try:
        fs.get_file(f"{root}/{remote}", str(local))
    except FileNotFoundError:
        raise NotFoundError(f"{src}/{remote}: listed in the index but missing") from None
    except Exception as e:  # noqa: BLE001 - a transport's errors (reset, 403, timeout) vary by URL scheme
        raise OkgenError(f"cannot download {src}/{remote}: {_reason(e)}; nothing was kept, rerun to retry") from None
    digest = sha256_file(local)
    if digest != entry.get("sha256"):
        raise IntegrityError(f"{remote}: SHA-256 {digest[:12]}… differs from the index ({str(entry.get('sha256'))[:12]}…); refusing it")
    return local


def _write_index(fs: Any, root: str, data: dict[str, Any], dest: str = "") -> None:
    payload = (json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")
    tmp = f"{root}/.{INDEX}.{utcnow():%Y%m%dT%H%M%S}.tmp"

    def write() -> None:
        with fs.open(tmp, "wb") as f:
            f.write(payload)
        fs.mv(tmp, f"{root}/{INDEX}")

    _writing(dest or root, INDEX, write)


def publish(snapshot: Snapshot, dest: str, workspace: Workspace, *, sign_key: str | Path | None = None,
            no_text: bool = False) -> dict[str, Any]:
    """Upload a snapshot's deterministic archive to ``dest`` and record it in ``dest/index.json``.

    Args:
        snapshot: the local snapshot (verified before anything is uploaded).
        dest: a folder or fsspec URL.
        workspace: the local workspace (its catalogue records where the snapshot went).
        sign_key: Ed25519 private key; adds ``manifest.sig`` to what is published.
        no_text: publish questions and article metadata and text hashes, without bodies.

    Returns:
        The index entry written.
    """
    writable_fs(dest)  # before any work: an http(s) URL is refused in one line
    report = verify_folder(snapshot.path)
    if not report.ok:
        raise IntegrityError(f"refusing to publish {snapshot.name}: {report.problems[0]}")
    with tempfile.TemporaryDirectory(prefix="okgen-publish-") as tmpdir:
        work = Path(tmpdir) / snapshot.name
        if no_text:
            from okgen.snapshot.notext import strip_texts

            variant = strip_texts(snapshot, work)
        else:
            shutil.copytree(snapshot.path, work)
            variant = Snapshot(work)
        key_id = None
        if sign_key is not None:
            from okgen.snapshot.signing import sign_manifest, verify_manifest_signature

            sign_manifest(variant.path, sign_key)
            pub = _public_from_private(Path(sign_key), Path(tmpdir))
            key_id = verify_manifest_signature(variant.path, pub)
        else:  # an unsigned publish publishes no signature (one an earlier signed publish left locally)
            (variant.path / layout.MANIFEST_SIG).unlink(missing_ok=True)
        suffix = ".notext.tar.gz" if no_text else ".tar.gz"
        archive = make_archive(variant.path, Path(tmpdir) / f"{snapshot.name}{suffix}")
        where = upload_archive(archive, dest, "archives")
        m = snapshot.manifest
        entry = {
            "signature": m.signature,
            "short_signature": snapshot.signature.short,
            "content_hash": m.content_hash,
            "name": snapshot.name,
            "date": str(m.date),
            "questions": m.counts.get("questions"),
            **where,
            "text_included": not no_text,
            "signed": key_id is not None,
            "key_id": key_id,
            "published_at": utcnow().isoformat(),
        }
        index = read_index(dest)
        index["snapshots"] = [e for e in index["snapshots"] if not (e.get("name") == entry["name"] and e.get("text_included") == entry["text_included"])]
        index["snapshots"].append(entry)
        index["snapshots"].sort(key=lambda e: (e.get("date", ""), e.get("name", ""), not e.get("text_included", True)))
        index["updated_at"] = utcnow().isoformat()
        _write_index(*_fs(dest), index, dest)
        # Only now, with the release in place, does the local copy change: a failed upload leaves
        # it as it was. A signed release's signature and archive become the local ones; an
        # unsigned release's archive is the local one only where the folder has no signature.
        local = snapshot.path.parent / archive.name
        if not no_text and key_id is not None:
            shutil.copyfile(variant.path / layout.MANIFEST_SIG, snapshot.path / layout.MANIFEST_SIG)
            shutil.copyfile(archive, local)
        elif not no_text and not (snapshot.path / layout.MANIFEST_SIG).is_file():
            shutil.copyfile(archive, local)
    register(snapshot, workspace, archive=local if not no_text and local.is_file() else None,
             source=source_name(dest), verified=True if key_id is not None and not no_text else None)
    log.info("published %s to %s (%s, %d bytes)", snapshot.name, dest, where["archive"], where["bytes"])
    return entry


def _check_entry(entry: dict[str, Any], folder: Path) -> None:
    """Refuse an archive that is not what the index says it is (a ref by date, hash or name is
    matched against the index's fields, which anyone serving the index may write): its date,
    content hash and name must be its manifest's, and its folder named after its manifest."""
    from okgen.signature import format_timestamp

    m = Snapshot(folder).manifest
    sig = parse_any(m.signature)
    name = layout.snapshot_name(str(sig.date), format_timestamp(sig.timestamp), m.content_hash)
    if folder.name != name:
        raise IntegrityError(f"{entry.get('archive')}: its folder is named {folder.name}, but its manifest makes it {name}")
    for key, have in (("date", str(m.date)), ("content_hash", m.content_hash), ("name", name)):
        if entry.get(key) is not None and str(entry[key]) != have:
            raise IntegrityError(f"{entry.get('archive')}: index.json gives {key} {entry[key]!r}, but the archive holds "
                                 f"{have!r}: the index does not describe it")


def _public_from_private(private: Path, tmpdir: Path) -> Path:
    from cryptography.hazmat.primitives import serialization

    key = serialization.load_pem_private_key(private.read_bytes(), password=None)
    pub = tmpdir / "signer.pub"
    pub.write_bytes(key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    return pub


def find_entry(index: dict[str, Any], ref: str, prefer_text: bool = True) -> dict[str, Any]:
    """Find the index entry for a signature, short signature, hash prefix, name or date (the
    newest snapshot of that day)."""
    ref = ref.strip()
    entries = index.get("snapshots", [])
    if looks_like_signature(ref):
        given = parse_any(ref)
        long = given.snapshot_signature().format()
        matches = [e for e in entries if e.get("signature") == long
                   or isinstance(e.get("signature"), str) and names_signed(given, e["signature"])]
    elif DATE_REF.match(ref):
        day = sorted((e for e in entries if e.get("date") == ref), key=lambda e: str(e.get("name", "")))
        matches = [e for e in day if e.get("name") == day[-1].get("name")] if day else []
    else:
        matches = [e for e in entries if e.get("name") == ref
                   or (HEX_PREFIX.match(ref) and str(e.get("content_hash", "")).startswith(ref))]
    if not matches:
        hint = " (a content-hash prefix needs 6 or more hex digits)" if re.fullmatch(r"[0-9a-f]{1,5}", ref) else ""
        raise NotFoundError(f"no published snapshot matches {ref!r}{hint}")
    names = {e["name"] for e in matches}
    if len(names) > 1:
        raise NotFoundError(f"{ref!r} matches {len(names)} published snapshots; give the full signature")
    matches.sort(key=lambda e: e.get("text_included", True) != prefer_text)
    return matches[0]


def pull(ref: str, src: str, workspace: Workspace, *, pubkey: str | Path | None = None,
         prefer_text: bool = True) -> Snapshot:
    """Download, check and register a published snapshot.

    Raises:
        IntegrityError: the archive's SHA-256 differs from the index, a file hash fails, or the
            signature does not verify with ``pubkey``. Nothing is left behind.
    """
    index = read_index(src)
    fs, root = _fs(src)
    if not index["snapshots"] and "file" in (fs.protocol if isinstance(fs.protocol, tuple) else (fs.protocol,)) \
            and not fs.isdir(root):
        raise NotFoundError(f"{src}: no such folder; check --from")
    if not index["snapshots"]:
        raise NotFoundError(f"{src}: no snapshot is published there (its {INDEX} lists none, or there is none); "
                            "check --from")
    entry = find_entry(index, ref, prefer_text)
    ws = workspace
    made = not ws.snapshots_dir.exists()
    ws.snapshots_dir.mkdir(parents=True, exist_ok=True)
    try:
        return _pull_into(entry, src, ws, pubkey)
    except BaseException:
        if made and not any(ws.snapshots_dir.iterdir()):  # a failed first pull leaves the workspace as it was
            ws.snapshots_dir.rmdir()
        raise


def _pull_into(entry: dict, src: str, ws: Workspace, pubkey: str | Path | None) -> Snapshot:
    """Download, verify and move one published entry into ``ws.snapshots_dir`` (see :func:`pull`)."""
    with tempfile.TemporaryDirectory(prefix=".pull-", dir=ws.snapshots_dir) as tmpdir:
        local_archive = fetch_archive(entry, src, Path(tmpdir), "archives")
        folder = safe_extract(local_archive, Path(tmpdir) / "x", verify=False)  # verified just below
        rep = verify_folder(folder, parse_any(entry["signature"]))
        if not rep.ok:
            raise IntegrityError(f"{entry['archive']}: {rep.problems[0]}")
        _check_entry(entry, folder)
        if pubkey is not None:
            from okgen.snapshot.signing import quality_signed, verify_manifest_signature

            verify_manifest_signature(folder, pubkey)
            if (folder / layout.QUALITY).is_file() and not quality_signed(folder):
                log.warning("%s: the signature covers the questions and articles, not quality.json, so its quality "
                            "evidence is unauthenticated (a release signed before okgen signed it, or evidence "
                            "changed and its signature removed on the way)", folder.name)
        final = ws.snapshots_dir / folder.name
        if final.exists():
            existing = verify_folder(final)
            if existing.ok and Snapshot(final).manifest.content_hash != Snapshot(folder).manifest.content_hash:
                raise IntegrityError(f"{final} holds another snapshot than its name says (content hash "
                                     f"{Snapshot(final).manifest.content_hash[:12]}): move it aside, then pull again")
            if existing.ok and Snapshot(final).manifest.text_included >= Snapshot(folder).manifest.text_included:
                snap = Snapshot(final)
                here = final / layout.MANIFEST_SIG
                # Only onto the very manifest it signs: a no-text release's signature signs its own
                # manifest, not the full copy's.
                if pubkey is not None and (final / layout.MANIFEST).read_bytes() == (folder / layout.MANIFEST).read_bytes() \
                        and (here.read_bytes() if here.is_file() else b"") != (folder / layout.MANIFEST_SIG).read_bytes():
                    # The same snapshot, here unsigned (or signed otherwise): the verified signature
                    # and its archive become the local copy's.
                    shutil.copyfile(folder / layout.MANIFEST_SIG, final / layout.MANIFEST_SIG)
                    archive_dst = None
                    if entry.get("text_included", True) and snap.manifest.text_included:
                        archive_dst = ws.snapshots_dir / local_archive.name
                        shutil.move(str(local_archive), archive_dst)
                    log.info("%s is already present: added the publisher's verified signature to it", final.name)
                    register(snap, ws, archive=archive_dst, source=source_name(src), verified=True)
                    return snap
                log.info("%s is already present and verified", final.name)
                same = (final / layout.MANIFEST).read_bytes() == (folder / layout.MANIFEST).read_bytes()
                register(snap, ws, source=source_name(src), verified=True if pubkey is not None and same else None)
                return snap
            log.warning("replacing the local copy of %s (%s) with the published one", final.name,
                        "it fails verification" if not existing.ok else "it has no article texts")
            shutil.rmtree(final)
        folder.rename(final)
        archive_dst = None
        if entry.get("text_included", True):
            archive_dst = ws.snapshots_dir / local_archive.name
            shutil.move(str(local_archive), archive_dst)
    snap = Snapshot(final)
    register(snap, ws, archive=archive_dst, source=source_name(src), verified=pubkey is not None)
    return snap
