"""okgen's exception hierarchy.

Every error meant for a user derives from :class:`OkgenError`; the CLI prints its message as
one line and exits with status 1. Anything else is a bug and is reported as such.
"""

from __future__ import annotations


class OkgenError(Exception):
    """Base class of errors that are reported to the user as one line."""

    exit_code = 1


class ConfigError(OkgenError):
    """A setting, spec string or configuration file is invalid."""


class SignatureError(OkgenError):
    """A signature string is malformed, has an unknown key or a bad value."""


class SchemaError(OkgenError):
    """A record on disk does not match its schema (names the file and line)."""


class IntegrityError(OkgenError):
    """A file's content no longer matches its recorded hash."""


class ArchiveError(OkgenError):
    """An archive is truncated, corrupted or holds a member that may not be extracted."""


class NotFoundError(OkgenError):
    """A snapshot, article, index or run could not be found."""


class MissingExtraError(OkgenError):
    """An optional dependency is not installed; the message names the extra to install."""

    def __init__(self, package: str, extra: str, feature: str | None = None):
        self.package = package
        self.extra = extra
        what = f" for {feature}" if feature else ""
        super().__init__(
            f"{package} is needed{what} but is not installed: pip install \"okgen[{extra}]\""
        )


class LockedError(OkgenError):
    """Another okgen process holds the lock for this work."""


class BudgetExceeded(OkgenError):
    """A configured spending limit was reached; completed work has been kept."""


def describe_os_error(e: BaseException) -> str | None:
    """A one-line message saying what happened and what to do for a full disk, a read-only or
    unwritable workspace, a file where a folder should be, or an over-long name (None for any
    other exception)."""
    import errno
    import sqlite3

    if isinstance(e, OSError) and e.errno is not None:
        where = f": {_short(str(e.filename))}" if e.filename else ""
        if e.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)):
            return (f"no space left on the device{where}; free some space (okgen gc deletes old captures) "
                    "and rerun: finished work is kept")
        if e.errno == errno.EROFS:
            return f"read-only file system{where}; point --home (OKGEN_HOME) at a writable folder"
        if e.errno in (errno.EACCES, errno.EPERM):
            return f"permission denied{where}; point --home (OKGEN_HOME) at a folder you may write"
        if e.errno == errno.ENOTDIR:
            blocker = _file_in_the_way(str(e.filename)) if e.filename else None
            what = f": {_short(blocker)} is a file" if blocker else where
            return (f"not a folder{what}, where okgen needs one; check --home (OKGEN_HOME) and the paths given")
        if e.errno == errno.ENAMETOOLONG:
            return f"file name too long{where}; give a shorter path, signature or hash prefix"
    if isinstance(e, sqlite3.OperationalError):
        text = str(e).lower()
        if "readonly" in text or "read-only" in text:
            return "the workspace database is read-only; point --home (OKGEN_HOME) at a writable folder"
        if "disk is full" in text:
            return "no space left for the workspace database; free some space and rerun: finished work is kept"
    return None


def _file_in_the_way(path: str) -> str | None:
    """The nearest ancestor of ``path`` that exists as a file (what made a folder impossible)."""
    from pathlib import Path

    for parent in Path(path).parents:
        if parent.is_file():
            return str(parent)
    return None


def _short(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
