"""A snapshot of real news for tests and benchmarks, built at run time from news-dev.

:func:`real_news_snapshot` reads one day of ``shared/data/news-dev`` (real third-party articles:
they are read where they lie and never copied into the repository), keeps articles of a
moderate length, runs the offline extractive generator on them and builds a verified snapshot
of the first ``n_questions`` questions. Same files + same arguments give the same snapshot.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

from okgen.hashing import sha256_text
from okgen.schema import Article, article_id
from okgen.settings import Workspace

NEWS_DAY = dt.date(2025, 4, 10)


def news_dev_dir() -> Path:
    """``shared/data/news-dev`` beside the checkout (CI clones the repo with ``shared/`` beside it)."""
    return Path(__file__).resolve().parents[2].parent / "shared" / "data" / "news-dev"


def read_articles(path: str | Path, date: dt.date, *, min_chars: int = 800, max_chars: int = 2500) -> list[Article]:
    """The articles of one news-dev file whose text has ``min_chars``..``max_chars`` characters."""
    out: dict[str, Article] = {}
    fetched = dt.datetime(date.year, date.month, date.day, 12, 0, tzinfo=dt.timezone.utc)
    for rec in json.loads(Path(path).read_text(encoding="utf-8")):
        text, url, title = (rec.get("article_text") or "").strip(), rec.get("link") or "", (rec.get("title") or "").strip()
        if not (url and title and min_chars <= len(text) <= max_chars):
            continue
        aid = article_id(url)
        out[aid] = Article(
            id=aid, url=url, canonical_url=url, source=str(rec.get("news_site") or "unknown"),
            source_name=rec.get("news_site"), category=rec.get("category"), title=title,
            published_at=fetched - dt.timedelta(hours=3), date=date, date_source="import", fetched_at=fetched,
            language="en", text=text, text_sha256=sha256_text(text), extractor="news-dev-import")
    return sorted(out.values(), key=lambda a: a.id)


def real_news_snapshot(ws: Workspace, *, n_questions: int = 40, n_articles: int = 60, per_article: int = 2,
                       date: dt.date = NEWS_DAY, news_dir: str | Path | None = None, seed: int = 0,
                       min_chars: int = 800, max_chars: int = 2500) -> Any:
    """Build and register a snapshot of ``n_questions`` extractive questions about real news.

    Raises:
        FileNotFoundError: the news-dev file of ``date`` is absent (callers skip).
    """
    from okgen.generate.pipeline import run_generate
    from okgen.snapshot.build import build_snapshot

    path = Path(news_dir or news_dev_dir()) / f"news_{date.isoformat()}.json"
    if not path.is_file():
        raise FileNotFoundError(path)
    arts = read_articles(path, date, min_chars=min_chars, max_chars=max_chars)[:n_articles]
    res = run_generate(date, ws, arts, per_article=per_article, seed=seed, progress=False)
    qs = sorted(res.questions, key=lambda q: q.id)[:n_questions]
    keep = {q.article_id for q in qs}
    corpus = [a for a in arts if a.id in keep]
    return build_snapshot(qs, corpus, date=date, generator=res.generator, prompt_hash=res.prompt_hash,
                          feeds_hash="0" * 12, seed=seed, windows=(1,), funnel=res.funnel,
                          timestamp=dt.datetime(date.year, date.month, date.day, 6, 0, tzinfo=dt.timezone.utc),
                          workspace=ws)
