"""Retriever specs: ``retrievers/NAME.toml`` files, found by name or path, and their hash.

A spec names the implementation, how articles are cut into units, and the implementation's
parameters::

    retriever = "bm25"                 # registry name (bm25, dpr, colbert)
    description = "BM25 over whole articles"

    [units]
    passage_words = 0                  # 0: whole articles; N: passages of about N words
    passage_overlap = 0                # words shared by consecutive passages

    [params]                           # the implementation's parameters (see docs/retrieval.md)
    k1 = 1.5

A name is looked up in the workspace's ``retrievers/`` folder first, then in the specs that
ship inside okgen (``okgen/data/retrievers``), so a workspace can override a default. The
**spec hash** (12 hex digits) covers the implementation, the units and every parameter that
can change a result, after defaults are filled in: comments, the description, the file name
and speed-only settings (device, batch size, backend) do not change it. It names the index
folder and goes into eval signatures as ``rspec``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from okgen.errors import ConfigError
from okgen.files import read_toml
from okgen.hashing import sha256_json
from okgen.settings import Workspace

SPEC_FORMAT = "okgen-retriever-spec-v1"
SPEC_DIR = "retrievers"
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_TOP_KEYS = {"retriever", "description", "units", "params"}
_UNIT_KEYS = {"passage_words", "passage_overlap"}
MIN_PASSAGE_WORDS = 10


@dataclass(frozen=True)
class RetrieverSpec:
    """A parsed, validated retriever spec.

    Attributes:
        name: spec name (the file name without ``.toml``); shown in tables and signatures.
        kind: registry name of the implementation (``bm25``, ``dpr``, ``colbert``).
        description: free text.
        passage_words: 0 for whole articles, else the passage length in words.
        passage_overlap: words shared by consecutive passages.
        params: the implementation's parameters, defaults filled in.
        path: the file it was read from (None when built in code).
        hash: the spec hash (12 hex digits).
    """

    name: str
    kind: str
    description: str
    passage_words: int
    passage_overlap: int
    params: dict[str, Any] = field(hash=False)
    path: Path | None
    hash: str

    @property
    def chunked(self) -> bool:
        """Whether articles are cut into passages."""
        return self.passage_words > 0

    def retriever_class(self) -> type:
        """The implementation class (imports its module)."""
        from okgen.retrieval.registry import RETRIEVERS

        return RETRIEVERS.get(self.kind)

    def to_dict(self) -> dict[str, Any]:
        """The spec as recorded in ``okgen_index.json`` and reports."""
        return {
            "name": self.name, "retriever": self.kind, "hash": self.hash, "description": self.description,
            "units": {"passage_words": self.passage_words, "passage_overlap": self.passage_overlap},
            "params": dict(self.params), "path": str(self.path) if self.path else None,
        }


def spec_from_dict(data: dict[str, Any], name: str, path: Path | None = None) -> RetrieverSpec:
    """Validate a spec given as a dict (the parsed TOML) and compute its hash.

    Raises:
        ConfigError: unknown keys, bad values or an unknown implementation (one line).
    """
    from okgen.retrieval.registry import RETRIEVERS

    where = str(path) if path else f"retriever spec {name!r}"
    if not _NAME_RE.match(name):
        raise ConfigError(f"{where}: a spec name must be letters, digits, '.', '_' or '-', got {name!r}")
    unknown = sorted(set(data) - _TOP_KEYS)
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r}; a spec has {', '.join(sorted(_TOP_KEYS))}")
    kind = data.get("retriever")
    if not isinstance(kind, str) or not kind:
        raise ConfigError(f"{where}: 'retriever' (the implementation: {', '.join(RETRIEVERS.names())}) is required")
    if kind not in RETRIEVERS:
        raise ConfigError(f"{where}: unknown retriever {kind!r}; known: {', '.join(RETRIEVERS.names())}")
    units = data.get("units", {})
    params = data.get("params", {})
    if not isinstance(units, dict) or not isinstance(params, dict):
        raise ConfigError(f"{where}: [units] and [params] must be tables")
    bad = sorted(set(units) - _UNIT_KEYS)
    if bad:
        raise ConfigError(f"{where}: unknown key units.{bad[0]}; known: {', '.join(sorted(_UNIT_KEYS))}")
    words, overlap = units.get("passage_words", 0), units.get("passage_overlap", 0)
    for key, v in (("passage_words", words), ("passage_overlap", overlap)):
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            raise ConfigError(f"{where}: units.{key} must be a whole number >= 0, got {v!r}")
    if 0 < words < MIN_PASSAGE_WORDS:
        raise ConfigError(f"{where}: units.passage_words must be 0 (whole articles) or at least {MIN_PASSAGE_WORDS}")
    if overlap and overlap >= max(words, 1):
        raise ConfigError(f"{where}: units.passage_overlap ({overlap}) must be smaller than passage_words ({words})")
    description = data.get("description", "")
    if not isinstance(description, str):
        raise ConfigError(f"{where}: description must be text")
    cls = RETRIEVERS.get(kind)
    resolved = cls.resolve_params(params, where)
    hashed = {k: v for k, v in resolved.items() if k not in cls.unhashed}
    digest = sha256_json({"format": SPEC_FORMAT, "retriever": kind,
                          "units": {"passage_words": words, "passage_overlap": overlap}, "params": hashed})
    return RetrieverSpec(name=name, kind=kind, description=description, passage_words=words,
                         passage_overlap=overlap if words else 0, params=resolved, path=path, hash=digest[:12])


def packaged_spec_dir() -> Path:
    """The folder of default specs shipped inside okgen."""
    return Path(str(resources.files("okgen") / "data" / SPEC_DIR))


def spec_dirs(workspace: Workspace | None) -> list[Path]:
    """Folders searched for a spec name, in order: the workspace's, then okgen's own."""
    dirs = []
    if workspace is not None:
        dirs.append(workspace.home / SPEC_DIR)
    dirs.append(packaged_spec_dir())
    return dirs


def available_specs(workspace: Workspace | None = None) -> dict[str, Path]:
    """Spec names found (workspace first), each with the file that would be used."""
    out: dict[str, Path] = {}
    for d in spec_dirs(workspace):
        if d.is_dir():
            for p in sorted(d.glob("*.toml")):
                out.setdefault(p.stem, p)
    return out


def find_spec_file(ref: str | Path, workspace: Workspace | None = None) -> Path:
    """The file a spec reference names: a path to a ``.toml`` file, or a spec name.

    Raises:
        ConfigError: no such file or name (the message lists the known names).
    """
    text = str(ref)
    p = Path(text).expanduser()
    looks_like_path = text.endswith(".toml") or "/" in text or "\\" in text
    if looks_like_path:
        if p.is_file():
            return p
        raise ConfigError(f"{p}: no such retriever spec file")
    for d in spec_dirs(workspace):
        candidate = d / f"{text}.toml"
        if candidate.is_file():
            return candidate
    known = ", ".join(available_specs(workspace)) or "none"
    raise ConfigError(f"no retriever spec named {text!r}; known: {known} (or give a path to a .toml file)")


def load_spec(ref: str | Path, workspace: Workspace | None = None) -> RetrieverSpec:
    """Read and validate a spec by name (``bm25``) or path (``my/spec.toml``).

    Raises:
        ConfigError: missing file, invalid TOML, or an invalid spec.
    """
    path = find_spec_file(ref, workspace)
    return spec_from_dict(read_toml(path), path.stem, path)
