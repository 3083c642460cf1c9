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

The options a memory takes are the named keyword parameters of its ``__init__`` (and its
bases'), or the keys its ``option_names`` declares; a spec with any other key, or with a value
of the wrong type for a parameter's default or annotation (``int``, ``float``, ``bool``), is
refused (:func:`check_memory_spec`) before anything loads. A factory function with ``**kwargs``
takes any key.
"""

from __future__ import annotations

import datetime as dt
import inspect
import typing
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
    # The option keys the memory takes; None: the named keyword parameters of its __init__ and its bases'.
    option_names: ClassVar[tuple[str, ...] | None] = None

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


_TYPES = {bool: "true or false", int: "an integer", float: "a number", str: "a string"}


def _expected(p: inspect.Parameter, hint: Any) -> type | None:
    """The type an option wants: its default's, else its annotation's (``int | None`` -> int); None: any."""
    if p.default is not inspect.Parameter.empty and type(p.default) in _TYPES:
        return type(p.default)
    args = [a for a in typing.get_args(hint) if a is not type(None)] if typing.get_args(hint) else [hint]
    return args[0] if len(args) == 1 and args[0] in _TYPES else None


def memory_options(factory: Any) -> dict[str, type | None] | None:
    """The options a memory class or factory takes, with the type each wants (None: any type).

    Returns None when it takes any key (a factory function with ``**kwargs``).
    """
    is_class = isinstance(factory, type)
    funcs = [c.__dict__["__init__"] for c in factory.__mro__ if c not in (Memory, object) and "__init__" in c.__dict__] \
        if is_class else [factory]
    out: dict[str, type | None] = {}
    open_ended = False
    for f in funcs:
        try:
            hints = typing.get_type_hints(f)
        except Exception:  # an annotation that does not resolve: the default's type still applies
            hints = {}
        params = list(inspect.signature(f).parameters.values())[1 if is_class else 0:]
        for p in params:
            if p.kind is inspect.Parameter.VAR_KEYWORD:
                open_ended = True
            elif p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY):
                out.setdefault(p.name, _expected(p, hints.get(p.name)))
    declared = getattr(factory, "option_names", None) if is_class else None
    if declared is not None:
        return {k: out.get(k) for k in declared}
    return None if open_ended and not is_class else out


def check_options(name: str, factory: Any, opts: dict[str, Any]) -> None:
    """Refuse an option the memory does not take, or a value of the wrong type (one line).

    Raises:
        ConfigError: names the memory and the options it takes, or the option and the type it wants.
    """
    takes = memory_options(factory)
    if takes is None:
        return
    for key, value in opts.items():
        if key not in takes:
            valid = f"its options: {', '.join(sorted(takes))}" if takes else "it takes none"
            hint = " (the number of passages is --k)" if key == "k" else ""
            raise ConfigError(f"memory {name!r} has no option {key!r}; {valid}{hint}")
        want = takes[key]
        if want in (None, str):
            continue
        ok = isinstance(value, want) if want is bool else \
            isinstance(value, int if want is int else (int, float)) and not isinstance(value, bool)
        if not ok:
            raise ConfigError(f"memory {name!r}: option {key} must be {_TYPES[want]}, got {value!r}")


def _factory(name: str) -> Any:
    import importlib

    known = known_memories()
    if name not in known:
        raise ConfigError(f"unknown memory {name!r}; known: {', '.join(known)}")
    if name in BUILTINS:
        mod, attr = known[name].split(":")
        return getattr(importlib.import_module(mod), attr)
    return next(e for e in entry_points(group=ENTRY_POINT_GROUP) if e.name == name).load()


def check_memory_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """The name and options of a spec, checked against what the memory takes (nothing is built).

    Raises:
        ConfigError: an unknown name (the known ones are listed), an unknown option (the valid
            ones are listed) or a value of the wrong type.
    """
    name, opts = parse_memory_spec(spec)
    check_options(name, _factory(name), opts)
    return name, opts


def load_memory(spec: str, **extra: Any) -> Memory:
    """The memory a spec names (``recent,window=2``), built-in or from an entry point.

    Raises:
        ConfigError: an unknown name (the known ones are listed), an unknown option or a bad value.
    """
    name, opts = parse_memory_spec(spec)
    factory = _factory(name)
    check_options(name, factory, {**opts, **extra})
    try:
        mem = factory(**opts, **extra)
    except (TypeError, ValueError) as e:
        raise ConfigError(f"memory {name}: {e}") from None
    if not isinstance(mem, Memory):
        raise ConfigError(f"memory {name} ({known_memories()[name]}) is not an okgen.memory.base.Memory")
    mem.options = {**opts, **getattr(mem, "options", {})}
    return mem


def article_passage(a: Article) -> Passage:
    """An article as a dated passage."""
    return Passage(article_id=a.id, title=a.title, text=a.text, source=a.source_name or a.source,
                   date=a.date.isoformat())


__all__ = ["BUILTINS", "ENTRY_POINT_GROUP", "Memory", "article_passage", "check_memory_spec", "check_options",
           "known_memories", "load_memory", "memory_options", "parse_memory_spec"]
