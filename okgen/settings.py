"""The workspace: where okgen keeps snapshots, the signature catalogue and bulk data.

``OKGEN_HOME`` (default: the current directory) holds ``snapshots/``, ``signatures/`` and
``data/``, plus an optional ``okgen.toml`` configuration file. Run from a checkout, the
repository itself is the workspace. Environment variables may change only paths, speed and
output format, never what a dataset or a score is (DESIGN.md, habit 2). The configuration itself
(defaults < okgen.toml < environment < flags) is resolved by :mod:`okgen.config`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from okgen.files import load_config, read_toml, tomllib

if TYPE_CHECKING:
    from okgen.config import Settings

__all__ = ["CONFIG_FILE", "Workspace", "load_config", "read_toml", "tomllib"]  # the TOML readers live in files

CONFIG_FILE = "okgen.toml"


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
        if home is None:
            from okgen.config import global_settings

            home = global_settings().home
        root = home or os.getcwd()
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

    def settings(self, **flags: dict[str, Any] | None) -> Settings:
        """The resolved settings: defaults < ``okgen.toml`` < ``OKGEN_*`` environment < ``flags``
        (per section: ``settings(generate={"seed": 3})``; None values are unset).

        Raises:
            ConfigError: invalid TOML, an unknown section or key, or a bad value (one line).
        """
        from okgen.config import load_settings

        return load_settings(self.config_path, **flags)

    def config(self) -> dict[str, Any]:
        """The settings (file and environment) that were set, as plain tables by section;
        ``{}`` when nothing is.

        Raises:
            ConfigError: as :meth:`settings`.
        """
        return self.settings().model_dump(exclude_unset=True)
