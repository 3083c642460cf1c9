"""Snapshots for retrieval tests and benchmarks, built from synthetic or hand-written articles.

* :func:`article`: one :class:`~okgen.schema.Article` from a title and text.
* :func:`snapshot_from`: a real snapshot (via ``build_snapshot``) holding given articles.
* :func:`synthetic_snapshot`: ``make_articles``/``make_questions`` in a snapshot.
* :func:`daily_corpus`: ``per_day`` synthetic articles on each of ``days`` days (benchmarks).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from okgen.hashing import sha256_text
from okgen.schema import AgentInfo, Article, Question, article_id
from okgen.settings import Workspace

FIXED_TS = dt.datetime(2026, 1, 1, 6, 0, tzinfo=dt.timezone.utc)


def article(title: str, text: str, date: dt.date, *, key: str | None = None, source: str = "test",
            language: str = "en") -> Article:
    """An article with a stable id derived from ``key`` (default: the title)."""
    url = f"https://news.example.org/{source}/{date:%Y/%m/%d}/{sha256_text(key or title)[:12]}"
    published = dt.datetime(date.year, date.month, date.day, 9, 0, tzinfo=dt.timezone.utc)
    return Article(id=article_id(url), url=url, canonical_url=url, source=source, title=title, published_at=published,
                   date=date, fetched_at=published + dt.timedelta(hours=1), language=language, text=text,
                   text_sha256=sha256_text(text), extractor="okgen.testing.retrieval")


def snapshot_from(workspace: Workspace, articles: Sequence[Article], questions: Sequence[Question] = (), *,
                  date: dt.date | None = None, windows: Sequence[int] = (1, 5, 10), include_text: bool = True,
                  seed: int = 1):
    """Build a real snapshot of ``articles`` (dated up to ``date``, default the latest) in ``workspace``."""
    from okgen.snapshot.build import build_snapshot

    date = date or max(a.date for a in articles)
    return build_snapshot(list(questions), list(articles), date=date, generator=AgentInfo(model="synthetic-v1"),
                          prompt_hash="ab" * 32, feeds_hash="cd" * 32, seed=seed, windows=windows, timestamp=FIXED_TS,
                          include_text=include_text, workspace=workspace, archive=False)


def synthetic_snapshot(workspace: Workspace, n_articles: int, end_date: dt.date, *, days: int = 10, seed: int = 0,
                       facts_per_article: int = 4, per_article: int = 2):
    """A snapshot of ``n_articles`` synthetic articles over ``days`` days, with their questions.

    Returns:
        (snapshot, articles, facts).
    """
    from okgen.testing.corpus import make_articles, make_questions

    articles, facts = make_articles(n_articles, end_date, days=days, seed=seed, facts_per_article=facts_per_article)
    questions = make_questions(articles, facts, end_date, seed=seed, per_article=per_article)
    windows = sorted({1, 5, days} if days >= 5 else {1, days})
    return snapshot_from(workspace, articles, questions, date=end_date, windows=windows, seed=seed), articles, facts


def daily_corpus(per_day: int, days: int, end_date: dt.date, *, seed: int = 0, facts_per_article: int = 12):
    """``per_day`` synthetic articles on each of the ``days`` days ending ``end_date`` (for benchmarks).

    With 12 facts an article is about 400 words, the length of a typical news story.

    Returns:
        (articles, facts) as :func:`okgen.testing.corpus.make_articles` gives them.
    """
    from okgen.testing.corpus import make_articles

    return make_articles(per_day * days, end_date, days=days, seed=seed, facts_per_article=facts_per_article)
