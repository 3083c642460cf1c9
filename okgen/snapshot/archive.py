"""Deterministic ``.tar.gz`` archives of snapshot folders, and safe extraction.

The same snapshot folder always gives a byte-identical archive: entries sorted by path, fixed
mtime, owner and permissions, no gzip file name or timestamp. (The gzip stream comes from zlib;
the same zlib version gives the same bytes, which is what the catalogue's SHA-256 records.)

Extraction refuses absolute paths, ``..`` components, links, devices, FIFOs, members over the
size limits and members the manifest does not list; it checks every header before writing
anything, extracts with the standard library's ``data`` filter into a fresh temporary folder,
verifies it against its manifest and only then renames it into place.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import tarfile
import tempfile
import zlib
from pathlib import Path, PurePosixPath

from okgen.errors import ArchiveError, IntegrityError, OkgenError
from okgen.files import normal_mode

# Fixed metadata for every entry: 2000-01-01T00:00:00Z, root-less owner, plain modes.
FIXED_MTIME = 946684800
MAX_MEMBER_BYTES = 8 << 30
MAX_TOTAL_BYTES = 32 << 30
MAX_MEMBERS = 10_000
MAX_MANIFEST_BYTES = 64 << 20


def make_archive(folder: str | os.PathLike[str], out: str | os.PathLike[str]) -> Path:
    """Write a deterministic ``.tar.gz`` of ``folder`` to ``out`` (atomically).

    Members are stored under ``<folder name>/``. Only regular files and folders are archived;
    a link or special file inside ``folder`` is an error.
    """
    folder = Path(folder)
    out = Path(out)
    if not folder.is_dir():
        raise OkgenError(f"{folder}: not a folder")
    entries: list[tuple[str, Path]] = []
    for path in sorted(folder.rglob("*"), key=lambda p: p.relative_to(folder).as_posix()):
        if path.is_symlink():
            raise ArchiveError(f"{path}: links are not archived")
        if not (path.is_file() or path.is_dir()):
            raise ArchiveError(f"{path}: not a regular file")
        entries.append((f"{folder.name}/{path.relative_to(folder).as_posix()}", path))
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent)
    try:
        normal_mode(tmp)
        with os.fdopen(fd, "wb") as raw:
            with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as gz:
                with tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar:
                    tar.addfile(_info(folder.name, is_dir=True))
                    for name, path in entries:
                        if path.is_dir():
                            tar.addfile(_info(name, is_dir=True))
                        else:
                            info = _info(name, size=path.stat().st_size)
                            with open(path, "rb") as f:
                                tar.addfile(info, f)
            raw.flush()
            os.fsync(raw.fileno())
        os.replace(tmp, out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return out


def _info(name: str, size: int = 0, is_dir: bool = False) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.mtime = FIXED_MTIME
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    if is_dir:
        info.type = tarfile.DIRTYPE
        info.mode = 0o755
    else:
        info.type = tarfile.REGTYPE
        info.mode = 0o644
        info.size = size
    return info


def _check_member(m: tarfile.TarInfo, max_member_bytes: int) -> PurePosixPath:
    name = m.name
    if "\x00" in name or "\\" in name:
        raise ArchiveError(f"refused member {name!r}: unusual characters in its name")
    p = PurePosixPath(name)
    if p.is_absolute() or name.startswith("/"):
        raise ArchiveError(f"refused member {name!r}: absolute path")
    if any(part == ".." for part in p.parts):
        raise ArchiveError(f"refused member {name!r}: '..' in its path")
    if m.issym() or m.islnk():
        raise ArchiveError(f"refused member {name!r}: links are not allowed")
    if m.isdev() or m.isfifo() or not (m.isfile() or m.isdir()):
        raise ArchiveError(f"refused member {name!r}: devices and special files are not allowed")
    if m.isfile() and m.size > max_member_bytes:
        raise ArchiveError(f"refused member {name!r}: {m.size} bytes is over the {max_member_bytes}-byte limit")
    return p


def list_members(archive: str | os.PathLike[str], max_member_bytes: int = MAX_MEMBER_BYTES,
                 max_total_bytes: int = MAX_TOTAL_BYTES) -> list[tarfile.TarInfo]:
    """Read and check every member header of an archive without extracting anything.

    Raises:
        ArchiveError: truncated or corrupted archive, or a member that may not be extracted.
    """
    archive = Path(archive)
    if not archive.is_file():
        raise OkgenError(f"{archive}: no such archive")
    members: list[tarfile.TarInfo] = []
    total = 0
    try:
        with tarfile.open(archive, mode="r:gz") as tar:
            for m in tar:
                _check_member(m, max_member_bytes)
                total += m.size if m.isfile() else 0
                if total > max_total_bytes:
                    raise ArchiveError(f"{archive.name}: more than {max_total_bytes} bytes in all")
                members.append(m)
                if len(members) > MAX_MEMBERS:
                    raise ArchiveError(f"{archive.name}: more than {MAX_MEMBERS} members")
        _check_stream(archive, max_total_bytes + TAR_OVERHEAD * (len(members) + 2))
    except ArchiveError:
        raise
    except (tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile, OSError) as e:
        raise ArchiveError(f"{archive.name}: truncated or corrupted archive ({_why(e)})") from None
    if not members:
        raise ArchiveError(f"{archive.name}: empty archive")
    return members


TAR_OVERHEAD = 10 << 10  # bytes of headers and padding a member may add to the uncompressed stream


def _check_stream(archive: Path, limit: int) -> None:
    """Read the whole gzip stream, so its CRC and length are checked: tar stops at its end
    marker, and a changed byte after it (or in its padding) would go unnoticed."""
    read = 0
    with gzip.open(archive, "rb") as f:
        while chunk := f.read(1 << 20):
            read += len(chunk)
            if read > limit:
                raise ArchiveError(f"{archive.name}: the compressed stream holds more than its members ({limit} bytes)")


def safe_extract(archive: str | os.PathLike[str], dest: str | os.PathLike[str], *,
                 replace: bool = False, max_member_bytes: int = MAX_MEMBER_BYTES,
                 max_total_bytes: int = MAX_TOTAL_BYTES, verify: bool = True,
                 only: frozenset[str] | None = None) -> Path:
    """Extract a snapshot archive into ``dest`` and return the snapshot folder.

    The archive must hold exactly one top-level folder with a ``manifest.json``; every other
    file must be one the manifest lists, with the size it records (so the manifest bounds what
    the archive may unpack). Headers are checked first, then the standard library's ``data``
    extraction filter writes into a temporary folder inside ``dest``; with ``verify`` the
    folder must pass :func:`~okgen.snapshot.verify.verify_folder` before it is renamed into
    place. A refused or failed extraction leaves nothing behind.

    Raises:
        ArchiveError: a refused or unlisted member, or a truncated/corrupted archive.
        IntegrityError: a member of another size than the manifest records, or (with
            ``verify``) content that does not match its manifest.

    Args:
        only: for an archive that is not a snapshot (a series): the only file names its folder
            may hold, in place of the snapshot manifest's list; the caller verifies the content.
    """
    archive = Path(archive)
    dest = Path(dest)
    members = list_members(archive, max_member_bytes, max_total_bytes)
    tops = {PurePosixPath(m.name).parts[0] for m in members if PurePosixPath(m.name).parts}
    if len(tops) != 1:
        raise ArchiveError(f"{archive.name}: expected one top-level folder, found {len(tops)}")
    top = tops.pop()
    if top in (".", ""):
        raise ArchiveError(f"{archive.name}: bad top-level folder name {top!r}")
    if only is None:
        _check_listed(archive, top, members)
    else:
        for m in members:
            rel = PurePosixPath(*PurePosixPath(m.name).parts[1:]).as_posix()
            if not m.isdir() and rel not in only:
                raise ArchiveError(f"refused member {m.name!r}: not a file such an archive holds")
    if not hasattr(tarfile, "data_filter"):  # pragma: no cover - Python < 3.10.12 / 3.11.4
        raise OkgenError("safe extraction needs Python 3.10.12, 3.11.4 or newer (tarfile's data filter)")
    dest.mkdir(parents=True, exist_ok=True)
    final = dest / top
    if final.exists() and not replace:
        raise OkgenError(f"{final} already exists")
    tmp = Path(tempfile.mkdtemp(prefix=f".{top}.", suffix=".extract", dir=dest))
    normal_mode(tmp)
    try:
        with tarfile.open(archive, mode="r:gz") as tar:
            tar.extractall(tmp, members=members, filter="data")
        if verify:
            from okgen.snapshot.verify import verify_folder

            rep = verify_folder(tmp / top)
            if not rep.ok:
                raise IntegrityError(f"{archive.name}: does not match its manifest ({rep.problems[0]}); nothing was registered")
        if final.exists():
            shutil.rmtree(final)
        os.replace(tmp / top, final)
    except (ArchiveError, IntegrityError):
        raise
    except (tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile) as e:
        raise ArchiveError(f"{archive.name}: truncated or corrupted archive ({_why(e)})") from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return final


def _check_listed(archive: Path, top: str, members: list[tarfile.TarInfo]) -> None:
    """Refuse a member the manifest does not list, or one of another size than it records."""
    from okgen.snapshot import layout

    try:
        manifest = json.loads(read_member(archive, f"{top}/{layout.MANIFEST}"))
        files = {name: int(entry["bytes"]) for name, entry in manifest["files"].items()}
    except (ValueError, KeyError, TypeError, AttributeError):
        raise ArchiveError(f"{archive.name}: {layout.MANIFEST} is not a snapshot manifest") from None
    files[layout.MANIFEST] = -1
    files[layout.MANIFEST_SIG] = -1
    files[layout.QUALITY] = -1  # outside the content hash, checked against it when loaded
    seen: set[str] = set()
    for m in members:
        rel = PurePosixPath(*PurePosixPath(m.name).parts[1:]).as_posix()
        if m.isdir():
            continue
        if rel not in files:
            raise ArchiveError(f"refused member {m.name!r}: not listed in the manifest")
        if rel in seen:
            raise ArchiveError(f"{archive.name}: member {rel!r} appears twice")
        seen.add(rel)
        if files[rel] >= 0 and m.size != files[rel]:
            raise IntegrityError(f"refused member {m.name!r}: {m.size} bytes, the manifest says {files[rel]}")
        if files[rel] < 0 and m.size > MAX_MANIFEST_BYTES:
            raise ArchiveError(f"refused member {m.name!r}: {m.size} bytes is too large")


def _why(e: BaseException) -> str:
    text = str(e).strip() or type(e).__name__
    return text.splitlines()[0]


def read_member(archive: str | os.PathLike[str], name: str, max_bytes: int = 64 << 20) -> bytes:
    """Read one small member (``<top>/manifest.json``) of an archive without extracting it."""
    try:
        with tarfile.open(archive, mode="r:gz") as tar:
            for m in tar:
                if m.name == name or PurePosixPath(m.name).parts[1:] == PurePosixPath(name).parts:
                    _check_member(m, max_bytes)
                    f = tar.extractfile(m)
                    if f is None:
                        break
                    return f.read()
    except (tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile) as e:
        raise ArchiveError(f"{Path(archive).name}: truncated or corrupted archive ({_why(e)})") from None
    raise ArchiveError(f"{Path(archive).name}: no member {name!r}")


__all__ = ["make_archive", "safe_extract", "list_members", "read_member"]
