"""The retriever interface: build, save, load and batched search.

A retriever indexes :class:`Doc` records (whole articles, or passages of them) and answers a
batch of queries with ranked (unit position, score) pairs. :class:`okgen.retrieval.index.WindowIndex`
wraps one with the index store, the temporal filter and the folding of passages into articles,
and answers with :class:`Hit` (articles) or :class:`UnitHit` (passages).

Units are always given to :meth:`Retriever.build` sorted by date, so the units a query dated
``d`` may see (those dated on or before ``d``) are a prefix of the index: the temporal filter
is one number per query, ``limits[i]``, and a retriever must never return a position at or
past it. Retrievers are registered lazily in :data:`okgen.retrieval.registry.RETRIEVERS` and
configured by a spec (``retrievers/*.toml``, see :mod:`okgen.retrieval.specs`).
"""

from __future__ import annotations

import datetime as dt
from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar, NamedTuple

from okgen.errors import ConfigError


class ModelLoadError(ConfigError):
    """A retriever's model or checkpoint cannot be loaded (not downloadable, not a folder)."""


def short_reason(e: BaseException, limit: int = 120) -> str:
    """``Type: first sentence`` of an exception, trimmed, for one-line messages."""
    text = (str(e).strip().splitlines() or [""])[0].split(". ")[0].strip()
    text = text if len(text) <= limit else text[:limit].rstrip() + "..."
    return f"{type(e).__name__}: {text}" if text else type(e).__name__


class Doc(NamedTuple):
    """One indexed unit: an article or a passage of one."""

    id: str
    """Unit id: the article id, or ``<article id>#<passage number>`` for passages."""
    article_id: str
    """The article it comes from."""
    text: str
    """Text to index (title and body, or title and passage)."""
    date: dt.date
    """News date of the article (for the temporal filter)."""


class Hit(NamedTuple):
    """One article-level search result."""

    doc_id: str
    """Article id (passage hits are folded into their article: best passage score)."""
    score: float
    """Retriever score (higher is better)."""
    rank: int
    """1-based rank."""


class UnitHit(NamedTuple):
    """One unit-level search result: a passage (or a whole article when not chunked)."""

    unit_id: str
    """Unit id (``<article id>#<n>`` for passages, the article id otherwise)."""
    article_id: str
    """The article the unit comes from."""
    text: str
    """The unit's text as indexed (title, then the passage)."""
    score: float
    """Retriever score (higher is better)."""
    rank: int
    """1-based rank."""


Ranked = list[list[tuple[int, float]]]
"""Per query, (unit position, score) pairs, best first."""


class Retriever(ABC):
    """Base class of retrievers.

    Subclasses declare their spec parameters in :attr:`defaults` (a spec may set only these
    keys) and name in :attr:`unhashed` the ones that change speed but not results (batch
    size, device, backend): those stay out of the spec hash.

    Args:
        params: the ``[params]`` table of the spec, already merged with :attr:`defaults`.
    """

    name: ClassVar[str] = ""
    defaults: ClassVar[dict[str, Any]] = {}
    unhashed: ClassVar[frozenset[str]] = frozenset()
    stores_vectors: ClassVar[bool] = False
    """True for retrievers that keep their encodings in the workspace's encoding store."""

    def __init__(self, params: dict[str, Any]):
        self.params = dict(params)
        self.folder: Path | None = None
        self.store: Any = None
        """The encoding store (:class:`okgen.retrieval.vectors.VectorStore`), attached by ``open_index``."""
        self.used_on: dt.date | None = None
        """Date of the window being built or searched (marks stored vectors for ``okgen gc``)."""

    @classmethod
    def resolve_params(cls, params: dict[str, Any], where: str = "spec") -> dict[str, Any]:
        """Merge ``params`` over :attr:`defaults`, refusing unknown keys and wrong types.

        Raises:
            ConfigError: an unknown key, or a value of another type than its default.
        """
        unknown = sorted(set(params) - set(cls.defaults))
        if unknown:
            raise ConfigError(f"{where}: unknown {cls.name} parameter {unknown[0]!r}; known: {', '.join(sorted(cls.defaults))}")
        out = dict(cls.defaults)
        for key, value in params.items():
            default = cls.defaults[key]
            ok = isinstance(value, type(default)) and not (isinstance(value, bool) and not isinstance(default, bool))
            if isinstance(default, float) and isinstance(value, int) and not isinstance(value, bool):
                value, ok = float(value), True
            if not ok:
                raise ConfigError(f"{where}: {cls.name} parameter {key!r} must be {type(default).__name__}, got {value!r}")
            out[key] = value
        cls.check_params(out, where)
        return out

    @classmethod
    def check_params(cls, params: dict[str, Any], where: str) -> None:
        """Validate resolved parameters (override to check ranges and choices)."""
        return None

    @abstractmethod
    def build(self, docs: Sequence[Doc], folder: Path) -> None:
        """Index ``docs`` (sorted by date) and write the index files into ``folder``.

        Afterwards the retriever can search. ``folder`` may be a temporary folder that is
        renamed afterwards; :attr:`folder` is updated by the caller.
        """

    @classmethod
    @abstractmethod
    def load(cls, folder: Path, params: dict[str, Any]) -> Retriever:
        """Load an index written by :meth:`build`."""

    @abstractmethod
    def search(self, queries: Sequence[str], k: int, limits: Sequence[int]) -> Ranked:
        """Return, for each query, up to ``k`` (unit position, score) pairs, best first.

        Args:
            queries: non-empty query texts.
            k: results wanted per query (at most ``limits[i]`` are possible).
            limits: per query, how many leading units it may see (the temporal filter).
        """

    def versions(self) -> dict[str, str]:
        """Library versions that determine the index (recorded in ``okgen_index.json``)."""
        return {}

    @staticmethod
    def installed_versions(*packages: str) -> dict[str, str]:
        """``{package: version}`` for those of ``packages`` that are installed."""
        from importlib.metadata import PackageNotFoundError, version

        out = {}
        for pkg in packages:
            try:
                out[pkg] = version(pkg)
            except PackageNotFoundError:
                pass
        return out

    def describe(self) -> dict[str, Any]:
        """Extra facts about the built index for ``okgen_index.json`` (model fingerprint...)."""
        return {}

    def weights(self) -> str | None:
        """What identifies the weights of the model that encodes documents and queries (a local
        folder's content hash, a Hugging Face commit), None for a retriever without one. An index
        is searched only with the weights that built it: a model folder updated in place would
        rank new query vectors against the old passage vectors."""
        return None
