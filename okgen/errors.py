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
