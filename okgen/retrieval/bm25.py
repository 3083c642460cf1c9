"""``bm25``: BM25 with bm25s, PyStemmer stemming and stopwords.

bm25s precomputes every (term, document) score into a sparse matrix at index time, so a query
is a sum of a few sparse rows: much faster than scoring documents one by one (rank_bm25).
The numpy backend is the default: bm25s would pick numba when it is installed, and numba's
compile time makes the small daily runs slower.

Tokenisation (:class:`Tokenizer`): lower-case, words of two or more letters/digits (Unicode
aware, so any script tokenises), stopwords removed, then Snowball stemming.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from okgen.errors import ConfigError, OkgenError
from okgen.retrieval.base import Doc, Ranked, Retriever

log = logging.getLogger(__name__)

# Runs of two or more word characters (the same tokens as bm25s's default pattern).
TOKEN_RE = re.compile(r"\w\w+")
METHODS = ("robertson", "lucene", "atire", "bm25l", "bm25+")
BACKENDS = ("numpy", "numba", "auto")


def _stopword_lists() -> dict[str, tuple[str, ...]]:
    import bm25s.stopwords as sw

    out = {name[len("STOPWORDS_"):].lower(): tuple(getattr(sw, name)) for name in dir(sw) if name.startswith("STOPWORDS_")}
    out["english"] = out["en"]
    return out


class Tokenizer:
    """BM25 tokenisation shared by indexing and queries (and by the reference in the tests).

    Args:
        stemmer: a PyStemmer (Snowball) algorithm name, or ``"none"``.
        stopwords: a bm25s stopword list name (``en``, ``en_plus``, ``german``...), or ``"none"``.
    """

    def __init__(self, stemmer: str = "english", stopwords: str = "en"):
        self.stemmer_name = stemmer
        self.stopwords_name = stopwords
        lists = _stopword_lists()
        if stopwords != "none" and stopwords not in lists:
            raise ConfigError(f"unknown stopword list {stopwords!r}; known: none, {', '.join(sorted(lists))}")
        self.stopwords = frozenset(lists.get(stopwords, ()))
        self._stem = None
        if stemmer != "none":
            import Stemmer

            if stemmer not in Stemmer.algorithms():
                raise ConfigError(f"unknown stemmer {stemmer!r}; known: none, {', '.join(Stemmer.algorithms())}")
            self._stem = Stemmer.Stemmer(stemmer).stemWords
        self._cache: dict[str, str | None] = {}  # word -> stem, None for a stopword

    def _learn(self, words: set[str]) -> None:
        cache = self._cache
        new = [w for w in words if w not in cache]
        if new:
            if len(cache) > 2_000_000:  # bound memory on endless vocabularies
                cache.clear()
            kept = [w for w in new if w not in self.stopwords]
            cache.update(dict.fromkeys(new))
            cache.update(zip(kept, self._stem(kept) if self._stem is not None else kept))

    def tokenize_one(self, text: str) -> list[str]:
        """Tokens of one text."""
        words = TOKEN_RE.findall(text.lower())
        self._learn(set(words))
        return [t for t in map(self._cache.__getitem__, words) if t is not None]

    def __call__(self, texts: Sequence[str]) -> list[list[str]]:
        """Tokens of each text."""
        return [self.tokenize_one(t) for t in texts]

    def ids(self, texts: Sequence[str], vocab: dict[str, int]) -> list[list[int]]:
        """Token ids of each text, adding new tokens to ``vocab`` (the same tokens as ``__call__``).

        One dictionary lookup per word: the hot loop of indexing.
        """
        word_id: dict[str, int | None] = {}
        out = []
        for text in texts:
            words = TOKEN_RE.findall(text.lower())
            new = set(words).difference(word_id)
            if new:
                self._learn(new)
                for w in new:
                    t = self._cache[w]
                    word_id[w] = None if t is None else vocab.setdefault(t, len(vocab))
            out.append([i for i in map(word_id.__getitem__, words) if i is not None])
        return out


class BM25Retriever(Retriever):
    """BM25 over bm25s's precomputed sparse score matrix."""

    name: ClassVar[str] = "bm25"
    defaults: ClassVar[dict[str, Any]] = {
        "k1": 1.5, "b": 0.75, "delta": 0.5, "method": "lucene",
        "stemmer": "english", "stopwords": "en", "backend": "numpy", "mmap": False,
    }
    unhashed: ClassVar[frozenset[str]] = frozenset({"backend", "mmap"})

    def __init__(self, params: dict[str, Any]):
        super().__init__(params)
        self.model = None

    @classmethod
    def check_params(cls, params: dict[str, Any], where: str) -> None:
        if params["method"] not in METHODS:
            raise ConfigError(f"{where}: bm25 method must be one of {', '.join(METHODS)}, got {params['method']!r}")
        if params["backend"] not in BACKENDS:
            raise ConfigError(f"{where}: bm25 backend must be one of {', '.join(BACKENDS)}, got {params['backend']!r}")
        if params["k1"] < 0 or not 0 <= params["b"] <= 1 or params["delta"] < 0:
            raise ConfigError(f"{where}: bm25 needs k1 >= 0, 0 <= b <= 1 and delta >= 0")
        Tokenizer(params["stemmer"], params["stopwords"])  # validates both names

    @cached_property
    def tokenizer(self) -> Tokenizer:
        """The tokenizer of this spec."""
        return Tokenizer(self.params["stemmer"], self.params["stopwords"])

    def _backend(self) -> str:
        backend = self.params["backend"]
        if backend == "numba":
            import importlib.util

            if importlib.util.find_spec("numba") is None:
                raise ConfigError("the bm25 spec asks for the numba backend but numba is not installed: pip install numba")
        return backend

    def build(self, docs: Sequence[Doc], folder: Path) -> None:
        import bm25s

        vocab: dict[str, int] = {}
        ids = self.tokenizer.ids([d.text for d in docs], vocab)
        p = self.params
        model = bm25s.BM25(k1=p["k1"], b=p["b"], delta=p["delta"], method=p["method"], backend=self._backend())
        model.index((ids, vocab), show_progress=False)
        model.save(str(folder / "bm25s"), show_progress=False)
        self.model = model

    @classmethod
    def load(cls, folder: Path, params: dict[str, Any]) -> BM25Retriever:
        import bm25s

        self = cls(params)
        try:
            self.model = bm25s.BM25.load(str(folder / "bm25s"), mmap=params["mmap"], load_vocab=True,
                                         override_params={"backend": self._backend()}, show_progress=False)
        except (OSError, ValueError, KeyError) as e:
            raise OkgenError(f"{folder}: unreadable bm25 index ({type(e).__name__}: {e})") from None
        return self

    def query_ids(self, query: str) -> list[int]:
        """Vocabulary ids of a query's tokens (unknown tokens dropped)."""
        vocab = self.model.vocab_dict
        return [vocab[t] for t in self.tokenizer.tokenize_one(query) if t in vocab]

    def search(self, queries: Sequence[str], k: int, limits: Sequence[int]) -> Ranked:
        out: Ranked = []
        for query, limit in zip(queries, limits):
            ids = self.query_ids(query)
            if not ids or limit <= 0:
                out.append([])  # nothing indexable: no ranking rather than an arbitrary one
                continue
            scores = self.model.get_scores_from_ids(ids)[:limit]
            kk = min(k, limit)
            top = np.argpartition(-scores, kk - 1)[:kk] if kk < limit else np.arange(limit)
            # Stable order: by score, then by position, so ties rank the same on every run.
            top = top[np.lexsort((top, -scores[top]))]
            out.append([(int(i), float(scores[i])) for i in top if scores[i] > 0])
        return out

    def versions(self) -> dict[str, str]:
        from importlib.metadata import version

        return {"bm25s": version("bm25s"), "PyStemmer": version("PyStemmer"), "numpy": np.__version__}
