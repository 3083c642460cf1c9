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


LLM_STYLE_QUESTIONS = Path(__file__).resolve().parents[2] / "bench" / "data" / "llm_style_questions.jsonl"


def llm_style_snapshot(ws: Workspace, *, path: str | Path = LLM_STYLE_QUESTIONS, news_dir: str | Path | None = None,
                       n_questions: int | None = None, max_chars: int | None = None, seed: int = 0) -> Any:
    """A snapshot of the hand-written questions in ``bench/data/llm_style_questions.jsonl``: real
    news-dev articles with two or three questions each, as an LLM generator writes them (the
    offline generator asks about one fact of most articles; an LLM's snapshot asks several of
    one article, which is what the evaluator's shared-article prefix reuse is for).

    Every question of the file is taken (good and flawed alike: the set measures scoring, not
    quality), in file order, the first ``n_questions`` of them; with ``max_chars``, only those
    whose article is at most that long. A snapshot has one date: its articles and questions are
    all dated the file's last day (each stem keeps the date it names), a one-day window. Raises
    FileNotFoundError when a news-dev day is absent.
    """
    from okgen.generate.positions import balanced_positions, place
    from okgen.ingest.dedup import canonicalize_url
    from okgen.schema import AgentInfo, Question
    from okgen.snapshot.build import build_snapshot

    items = [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]
    days = sorted({dt.date.fromisoformat(it["date"]) for it in items})
    articles: dict[str, Article] = {}
    for day in days:
        f = Path(news_dir or news_dev_dir()) / f"news_{day.isoformat()}.json"
        if not f.is_file():
            raise FileNotFoundError(f)
        for a in read_articles(f, day, min_chars=0, max_chars=10**9):
            # The id okgen ingest gives it (the file names articles by it).
            aid = article_id(canonicalize_url(a.url))
            articles[aid] = a.model_copy(update={"id": aid, "date": days[-1]})
    items = [it for it in items if it["article_id"] in articles
             and (max_chars is None or len(articles[it["article_id"]].text) <= max_chars)][:n_questions]
    if not items:
        raise ValueError(f"no question of {path} has its article in the news-dev files")
    positions = balanced_positions(len(items), seed)
    questions = []
    for it, pos in zip(items, positions):
        a = articles[it["article_id"]]
        qid = Question.make_id(a.id, it["question"])
        distractors = [c for c in it["choices"] if c != it["answer"]]
        choices, idx = place(it["answer"], distractors, pos, seed, qid)
        questions.append(Question(
            id=qid, article_id=a.id, date=a.date, source=a.source, question=it["question"], choices=choices,
            answer_index=idx, answer=choices[idx], short_answer=it.get("short_answer") or it["answer"],
            rationale=it.get("rationale", ""), generator="llm-style-handwritten"))
    keep = {q.article_id for q in questions}
    corpus = [a for a in articles.values() if a.id in keep]
    last = days[-1]
    return build_snapshot(questions, corpus, date=last, generator=AgentInfo(model="llm-style-handwritten"),
                          prompt_hash="0" * 12, feeds_hash="0" * 12, seed=seed, windows=(1,),
                          timestamp=dt.datetime(last.year, last.month, last.day, 6, 0, tzinfo=dt.timezone.utc),
                          workspace=ws)
