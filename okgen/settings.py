"""The workspace: where okgen keeps snapshots, the signature catalogue and bulk data.

``OKGEN_HOME`` (default: the current directory) holds ``snapshots/``, ``signatures/`` and
``data/``, plus an optional ``okgen.toml`` configuration file. Run from a checkout, the
repository itself is the workspace. Environment variables may change only paths, speed and
output format, never what a dataset or a score is (DESIGN.md, habit 2).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from okgen.errors import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

CONFIG_FILE = "okgen.toml"
# The sections okgen.toml may have, and the page that documents each. A verb that reads a new
# section adds it here; any other section is refused (a typo such as [dialy] would otherwise
# be ignored without a word).
SECTIONS = {
    "ingest": "docs/ingest.md",
    "generate": "docs/generate.md",
    "daily": "docs/daily.md",
    "prices": "docs/generate.md",
}


@dataclass(frozen=True)
class Workspace:
    """Paths of one okgen workspace.

    Attributes:
        home: the workspace root (``OKGEN_HOME``).
    """

    home: Path

    def __post_init__(self) -> None:
        object.__setattr__(self, "home", Path(self.home).expanduser().resolve())

    @classmethod
    def from_env(cls, home: str | os.PathLike[str] | None = None) -> Workspace:
        """Build the workspace from an explicit path, ``OKGEN_HOME`` or the current directory."""
        root = home if home is not None else os.environ.get("OKGEN_HOME") or os.getcwd()
        return cls(Path(root).expanduser().resolve())

    @property
    def snapshots_dir(self) -> Path:
        """Local snapshot store: one folder (and archive) per snapshot."""
        return self.home / "snapshots"

    @property
    def signatures_dir(self) -> Path:
        """Catalogue: one JSON record per known signature."""
        return self.home / "signatures"

    @property
    def data_dir(self) -> Path:
        """Bulk data that never goes into git."""
        return self.home / "data"

    @property
    def db_path(self) -> Path:
        """The embedded SQLite store (articles, fetch log, questions, run checkpoints)."""
        return self.data_dir / "okgen.sqlite"

    @property
    def warc_dir(self) -> Path:
        """Raw HTTP captures, one WARC file per day."""
        return self.data_dir / "warc"

    @property
    def index_dir(self) -> Path:
        """Retrieval indexes, one folder per (snapshot, window, retriever spec)."""
        return self.data_dir / "indexes"

    @property
    def cache_dir(self) -> Path:
        """Response caches (LLM calls)."""
        return self.data_dir / "cache"

    @property
    def runs_dir(self) -> Path:
        """Evaluation runs."""
        return self.data_dir / "runs"

    @property
    def logs_dir(self) -> Path:
        """Log files of scheduled runs."""
        return self.data_dir / "logs"

    @property
    def config_path(self) -> Path:
        """The optional workspace configuration file."""
        return self.home / CONFIG_FILE

    def config(self) -> dict[str, Any]:
        """Return the parsed ``okgen.toml`` of this workspace, or ``{}`` when there is none.

        Raises:
            ConfigError: invalid TOML, or a section okgen does not know (the message names it).
        """
        data = load_config(self.config_path)
        check_sections(data, self.config_path)
        return data


def check_sections(data: dict[str, Any], where: str | os.PathLike[str]) -> None:
    """Refuse a top-level key of okgen.toml that is not one of :data:`SECTIONS`."""
    import difflib

    for key in data:
        if key not in SECTIONS:
            close = difflib.get_close_matches(key, list(SECTIONS), n=1)
            hint = f"; did you mean [{close[0]}]?" if close else ""
            raise ConfigError(f"{where}: unknown section [{key}] (known: {', '.join(sorted(SECTIONS))}){hint}")
        if not isinstance(data[key], dict):
            raise ConfigError(f"{where}: [{key}] must be a table")


def load_config(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a TOML configuration file; a missing file is an empty configuration.

    Raises:
        ConfigError: the file exists but is not valid TOML.
    """
    p = Path(path)
    if not p.exists():
        return {}
    try:
        with open(p, "rb") as f:
            return tomllib.load(f)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{p}: invalid TOML: {e}") from None
    except UnicodeDecodeError:  # tomllib decodes the bytes itself and lets this through
        raise ConfigError(f"{p}: invalid TOML: not UTF-8 text") from None


def read_toml(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a TOML file that must exist.

    Raises:
        ConfigError: the file is missing or not valid TOML.
    """
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"{p}: no such file")
    return load_config(p)
