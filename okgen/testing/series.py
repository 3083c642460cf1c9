"""Runs of small synthetic daily snapshots for series tests (offline, deterministic)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from okgen.schema import AgentInfo
from okgen.settings import Workspace
from okgen.testing.corpus import make_articles, make_questions


def day_snapshot(ws: Workspace, date: dt.date, generator: str = "synthetic-v1", n_articles: int = 8,
                 per_article: int = 1, feeds_hash: str = "1" * 12) -> Any:
    """Build and register one day's snapshot of synthetic news (seeded by the date)."""
    from okgen.snapshot.build import build_snapshot

    seed = date.toordinal() % 1000
    arts, facts = make_articles(n_articles, date, days=2, seed=seed)
    qs = make_questions(arts, facts, date, seed=seed, per_article=per_article)
    return build_snapshot(qs, arts, date=date, generator=AgentInfo(model=generator), prompt_hash="0" * 12,
                          feeds_hash=feeds_hash, seed=seed, windows=(1, 2), workspace=ws,
                          timestamp=dt.datetime(date.year, date.month, date.day, 6, tzinfo=dt.timezone.utc))
