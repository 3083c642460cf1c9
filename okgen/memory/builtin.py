"""Built-in memories: none, full context, recent window, BM25 RAG, RAG + recent window.

They keep the articles they observed (their state is those articles, as JSON) and differ in
what they give back:

| name | ``retrieve(query, as_of, k)`` gives |
| --- | --- |
| ``none`` | nothing (the no-context baseline, fed like the others) |
| ``full`` | every article observed up to ``as_of``, oldest first (the prompt keeps the newest that fit) |
| ``recent`` (``window=1``) | the articles of the last ``window`` days up to ``as_of``, oldest first |
| ``bm25`` | the top-k articles by BM25 (bm25s, okgen's stemmed tokenizer) among those dated ``<= as_of`` |
| ``rag-recent`` (``window=1``) | the BM25 top-k plus, after them, the top-k of the recent window (no duplicates) |
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

from okgen.eval.templates import Passage
from okgen.memory.base import Memory, article_passage
from okgen.schema import Article


class _Store(Memory):
    """Keeps observed articles in date order."""

    def __init__(self, **options: Any):
        super().__init__(**options)
        self.articles: list[Article] = []

    def reset(self, seed: int) -> None:
        self.articles = []

    def observe(self, day: dt.date, articles: Sequence[Article]) -> None:
        self.articles.extend(sorted(articles, key=lambda a: (a.date, a.published_at, a.id)))

    def state(self) -> dict[str, Any]:
        return {"articles": [a.model_dump(mode="json") for a in self.articles]}

    def restore(self, state: dict[str, Any]) -> None:
        self.articles = [Article.model_validate(a) for a in state.get("articles", [])]

    def stats(self) -> dict[str, Any]:
        return {"items": len(self.articles), "chars": sum(len(a.text) for a in self.articles), "tokens": 0}

    def upto(self, as_of: dt.date) -> list[Article]:
        return [a for a in self.articles if a.date <= as_of]

    def recent(self, as_of: dt.date, window: int) -> list[Article]:
        start = as_of - dt.timedelta(days=max(1, int(window)) - 1)
        return [a for a in self.articles if start <= a.date <= as_of]


class NoMemory(_Store):
    """Remembers nothing useful: no context."""

    name = "none"

    def observe(self, day: dt.date, articles: Sequence[Article]) -> None:
        pass

    def retrieve(self, query: str, as_of: dt.date, k: int) -> list[Passage]:
        return []


class FullContext(_Store):
    """Everything observed, oldest first."""

    name = "full"
    chronological = True

    def retrieve(self, query: str, as_of: dt.date, k: int) -> list[Passage]:
        return [article_passage(a) for a in self.upto(as_of)]


class RecentWindow(_Store):
    """The last ``window`` days' articles."""

    name = "recent"
    chronological = True

    def __init__(self, window: int = 1, **options: Any):
        super().__init__(window=int(window), **options)

    def retrieve(self, query: str, as_of: dt.date, k: int) -> list[Passage]:
        return [article_passage(a) for a in self.recent(as_of, self.options["window"])]


class BM25Memory(_Store):
    """BM25 over the observed articles (bm25s), rebuilt when new articles arrived."""

    name = "bm25"

    def __init__(self, **options: Any):
        super().__init__(**options)
        self._model: Any = None
        self._indexed = -1

    def _index(self) -> Any:
        if self._indexed != len(self.articles):
            import bm25s

            from okgen.retrieval.bm25 import Tokenizer

            self._tok = Tokenizer()
            vocab: dict[str, int] = {}
            ids = self._tok.ids([a.title + "\n" + a.text for a in self.articles], vocab)
            self._model = bm25s.BM25(method="lucene", backend="numpy")
            self._model.index((ids, vocab), show_progress=False)
            self._indexed = len(self.articles)
        return self._model

    def search(self, query: str, as_of: dt.date, k: int) -> list[Article]:
        if not self.articles:
            return []
        model = self._index()
        vocab = model.vocab_dict
        qids = [vocab[t] for t in self._tok.tokenize_one(query) if t in vocab]
        if not qids:
            return []
        scores = model.get_scores_from_ids(qids)
        order = sorted(range(len(self.articles)), key=lambda i: (-scores[i], i))
        return [self.articles[i] for i in order if scores[i] > 0 and self.articles[i].date <= as_of][:k]

    def retrieve(self, query: str, as_of: dt.date, k: int) -> list[Passage]:
        return [article_passage(a) for a in self.search(query, as_of, k)]


class RagRecent(BM25Memory):
    """BM25 top-k, then the recent window's top-k by BM25 (no duplicates)."""

    name = "rag-recent"

    def __init__(self, window: int = 1, **options: Any):
        super().__init__(window=int(window), **options)

    def retrieve(self, query: str, as_of: dt.date, k: int) -> list[Passage]:
        top = self.search(query, as_of, k)
        recent = {a.id for a in self.recent(as_of, self.options["window"])}
        more = [a for a in self.search(query, as_of, len(self.articles)) if a.id in recent][:k]
        seen: dict[str, Article] = {a.id: a for a in top}
        for a in more:
            seen.setdefault(a.id, a)
        return [article_passage(a) for a in seen.values()]
