"""The memory-agent interface, and how memories are found (built-ins and the ``okgen.memories`` entry points).

A memory is fed the news day by day and asked for context when a question comes::

    m = load_memory("bm25", k=5)
    m.reset(seed=0)
    m.observe(day, articles)                 # every day, in date order
    passages = m.retrieve(query, as_of, k)   # Passages, none dated after as_of
    blob = m.state(); m.restore(blob)        # JSON-serialisable state, for resuming
    m.stats()                                # {"items": ..., "chars": ..., "tokens": ...}

Third-party memories register a class (or a factory taking keyword options) under the entry
point group ``okgen.memories``::

    [project.entry-points."okgen.memories"]
    mymem = "mypackage.okgen_adapter:MyMemory"
"""

from __future__ import annotations

import datetime as dt
from abc import ABC, abstractmethod
from collections.abc import Sequence
from importlib.metadata import entry_points
from typing import Any, ClassVar

from okgen.errors import ConfigError
from okgen.eval.templates import Passage
from okgen.schema import Article

ENTRY_POINT_GROUP = "okgen.memories"


class Memory(ABC):
    """A memory agent. Subclasses take their options as keyword arguments (``spec`` values)."""

    name: ClassVar[str] = ""

    def __init__(self, **options: Any):
        self.options = options

    @abstractmethod
    def reset(self, seed: int) -> None:
        """Forget everything; ``seed`` fixes any randomness."""

    @abstractmethod
    def observe(self, day: dt.date, articles: Sequence[Article]) -> None:
        """Take in one day's articles (called once per day, in date order)."""

    @abstractmethod
    def retrieve(self, query: str, as_of: dt.date, k: int) -> list[Passage]:
        """Context for ``query`` asked on ``as_of``: at most ``k`` passages (fewer, or a note, is fine)."""

    @abstractmethod
    def state(self) -> dict[str, Any]:
        """Everything needed to carry on, as JSON-serialisable data."""

    @abstractmethod
    def restore(self, state: dict[str, Any]) -> None:
        """Carry on from a :meth:`state`."""

    def stats(self) -> dict[str, Any]:
        """Size and cost so far: ``items``, ``chars``, ``tokens`` (LLM tokens the memory spent)."""
        return {}

    def identity(self) -> dict[str, Any]:
        """What determines the memory's behaviour (name and options), recorded with a run."""
        return {"memory": self.name, **{k: v for k, v in sorted(self.options.items()) if not k.startswith("_")}}

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release resources (models, connections)."""


BUILTINS: dict[str, str] = {
    "none": "okgen.memory.builtin:NoMemory",
    "full": "okgen.memory.builtin:FullContext",
    "recent": "okgen.memory.builtin:RecentWindow",
    "bm25": "okgen.memory.builtin:BM25Memory",
    "rag-recent": "okgen.memory.builtin:RagRecent",
    "summary": "okgen.memory.summary:RollingSummary",
    "ko-blind": "okgen.memory.structured:KOBlind",
    "ko-qaware": "okgen.memory.structured:KOQAware",
}


def known_memories() -> dict[str, str]:
    """Every memory name: the built-ins, then the ``okgen.memories`` entry points (``name -> module:attr``)."""
    out = dict(BUILTINS)
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        out.setdefault(ep.name, ep.value)
    return out


def parse_memory_spec(text: str) -> tuple[str, dict[str, Any]]:
    """``name[,key=value...]`` into the name and typed options."""
    from okgen.models.base import _typed

    name, *rest = [p.strip() for p in text.split(",")]
    opts: dict[str, Any] = {}
    for item in rest:
        if "=" not in item:
            raise ConfigError(f"memory option {item!r} in {text!r} is not key=value")
        k, v = item.split("=", 1)
        opts[k.strip()] = _typed(v.strip())
    return name, opts


def load_memory(spec: str, **extra: Any) -> Memory:
    """The memory a spec names (``bm25,window=2``), built-in or from an entry point.

    Raises:
        ConfigError: an unknown name (the known ones are listed) or a bad option.
    """
    import importlib

    name, opts = parse_memory_spec(spec)
    known = known_memories()
    if name not in known:
        raise ConfigError(f"unknown memory {name!r}; known: {', '.join(known)}")
    target = known[name]
    if name in BUILTINS:
        mod, attr = target.split(":")
        factory = getattr(importlib.import_module(mod), attr)
    else:
        ep = next(e for e in entry_points(group=ENTRY_POINT_GROUP) if e.name == name)
        factory = ep.load()
    try:
        mem = factory(**opts, **extra)
    except TypeError as e:
        raise ConfigError(f"memory {name}: {e}") from None
    if not isinstance(mem, Memory):
        raise ConfigError(f"memory {name} ({target}) is not an okgen.memory.base.Memory")
    mem.options = {**opts, **getattr(mem, "options", {})}
    return mem


def article_passage(a: Article) -> Passage:
    """An article as a dated passage."""
    return Passage(article_id=a.id, title=a.title, text=a.text, source=a.source_name or a.source,
                   date=a.date.isoformat())


__all__ = ["BUILTINS", "ENTRY_POINT_GROUP", "Memory", "article_passage", "known_memories", "load_memory",
           "parse_memory_spec"]
