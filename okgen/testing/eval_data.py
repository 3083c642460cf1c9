"""Small synthetic snapshots and tiny models for eval tests and benchmarks (offline).

:func:`make_test_snapshot` builds a real, verified snapshot from :mod:`okgen.testing.corpus`;
:func:`tiny_model_for` builds a tiny causal LM whose tokenizer was trained on that snapshot's
corpus (see :mod:`okgen.testing.tiny_lm`).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from okgen.schema import AgentInfo
from okgen.settings import Workspace
from okgen.testing.corpus import make_articles, make_questions

DATE = dt.date(2026, 3, 14)


def make_test_snapshot(ws: Workspace, *, n_articles: int = 24, days: int = 4, date: dt.date = DATE,
                       per_article: int = 2, seed: int = 0, windows: tuple[int, ...] = (1, 5, 10)) -> Any:
    """Build and register a snapshot of synthetic news in ``ws`` (deterministic for a seed)."""
    from okgen.snapshot.build import build_snapshot

    arts, facts = make_articles(n_articles, date, days=days, seed=seed)
    qs = make_questions(arts, facts, date, seed=seed, per_article=per_article)
    return build_snapshot(
        qs, arts, date=date, generator=AgentInfo(model="synthetic-v1"), prompt_hash="0" * 12,
        feeds_hash="1" * 12, seed=seed, windows=windows,
        timestamp=dt.datetime(date.year, date.month, date.day, 6, 0, tzinfo=dt.timezone.utc), workspace=ws)


def tiny_model_for(snapshot: Any, out_dir: str | Path, **kw: Any) -> Path:
    """A tiny causal LM with a tokenizer trained on the snapshot's corpus and questions."""
    from okgen.testing.tiny_lm import build_tiny_lm

    texts = [a.title + "\n" + a.text for a in snapshot.corpus]
    texts += [q.question + "\n" + "\n".join(q.choices) for q in snapshot.questions]
    return build_tiny_lm(out_dir, texts, **kw)
