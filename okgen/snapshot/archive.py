"""Deterministic ``.tar.gz`` archives of snapshot folders, and safe extraction.

The same snapshot folder always gives a byte-identical archive: entries sorted by path, fixed
mtime, owner and permissions, no gzip file name or timestamp. (The gzip stream comes from zlib;
the same zlib version gives the same bytes, which is what the catalogue's SHA-256 records.)

Extraction refuses absolute paths, ``..`` components, links, devices, FIFOs and members over
the size limits, checks every member before writing anything, and writes only inside a fresh
temporary folder that is renamed into place when complete.
"""

from __future__ import annotations

import gzip
import os
import shutil
import tarfile
import tempfile
import zlib
from pathlib import Path, PurePosixPath

from okgen.errors import ArchiveError, OkgenError
from okgen.files import normal_mode

# Fixed metadata for every entry: 2000-01-01T00:00:00Z, root-less owner, plain modes.
FIXED_MTIME = 946684800
MAX_MEMBER_BYTES = 8 << 30
MAX_TOTAL_BYTES = 32 << 30
MAX_MEMBERS = 10_000


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
    except ArchiveError:
        raise
    except (tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile, OSError) as e:
        raise ArchiveError(f"{archive.name}: truncated or corrupted archive ({_why(e)})") from None
    if not members:
        raise ArchiveError(f"{archive.name}: empty archive")
    return members


def safe_extract(archive: str | os.PathLike[str], dest: str | os.PathLike[str], *,
                 replace: bool = False, max_member_bytes: int = MAX_MEMBER_BYTES,
                 max_total_bytes: int = MAX_TOTAL_BYTES) -> Path:
    """Extract a snapshot archive into ``dest`` and return the snapshot folder.

    The archive must hold exactly one top-level folder. Everything is checked first, then
    extracted into a temporary folder inside ``dest`` and renamed into place, so nothing is
    ever written outside ``dest`` and a failed extraction leaves nothing behind.

    Args:
        archive: the ``.tar.gz`` file.
        dest: the folder that will contain the snapshot folder.
        replace: replace an existing snapshot folder of the same name.
        max_member_bytes: largest member accepted.
        max_total_bytes: largest total size accepted.

    Raises:
        ArchiveError: a refused member, or a truncated/corrupted archive.
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
    dest.mkdir(parents=True, exist_ok=True)
    final = dest / top
    if final.exists() and not replace:
        raise OkgenError(f"{final} already exists")
    tmp = Path(tempfile.mkdtemp(prefix=f".{top}.", suffix=".extract", dir=dest))
    normal_mode(tmp)
    root = tmp.resolve()
    try:
        with tarfile.open(archive, mode="r:gz") as tar:
            for m in tar:
                rel = _check_member(m, max_member_bytes)
                target = (tmp / Path(*rel.parts)).resolve()
                if root not in target.parents and target != root:
                    raise ArchiveError(f"refused member {m.name!r}: escapes the target folder")
                if m.isdir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                src = tar.extractfile(m)
                if src is None:
                    raise ArchiveError(f"refused member {m.name!r}: unreadable")
                written = 0
                with open(target, "xb") as f:
                    while chunk := src.read(1 << 20):
                        written += len(chunk)
                        if written > max_member_bytes:
                            raise ArchiveError(f"refused member {m.name!r}: larger than declared")
                        f.write(chunk)
        if final.exists():
            shutil.rmtree(final)
        os.replace(tmp / top, final)
    except ArchiveError:
        raise
    except (tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile) as e:
        raise ArchiveError(f"{archive.name}: truncated or corrupted archive ({_why(e)})") from None
    except FileExistsError as e:
        raise ArchiveError(f"{archive.name}: member {Path(e.filename).name!r} appears twice") from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return final


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
