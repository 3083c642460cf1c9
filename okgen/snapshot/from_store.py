"""Build a date's snapshot from the workspace store: the generated questions and the corpus.

Used by ``okgen snapshot build`` and the daily job's snapshot stage. Generation is resumed (or
answered from the store when the date is finished), the corpus is every stored article of the
longest window, and the feed-list hash comes from the date's ingest runs.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
from collections.abc import Sequence
from typing import Any

from okgen.errors import OkgenError
from okgen.hashing import sha256_text
from okgen.settings import Workspace
from okgen.snapshot.store import Snapshot

log = logging.getLogger(__name__)


def ingest_feeds_hash(ws: Workspace, date: dt.date) -> str:
    """The feed-list hash of the date's latest finished ingest run (a fixed marker when unknown)."""
    from okgen.ingest.store import ArticleStore

    with ArticleStore(ws.db_path) as store:
        for run in store.runs(date):
            summary = json.loads(run.get("summary") or "{}")
            if summary.get("feeds_hash"):
                return summary["feeds_hash"]
            if run.get("mode") == "import":
                return sha256_text(f"import:{run.get('run_id')}")
    return sha256_text("unknown-feeds")


def build_from_store(date: dt.date, ws: Workspace, generation: Any, *, windows: Sequence[int] = (1, 5, 10),
                     timestamp: dt.datetime | None = None, feeds_hash: str | None = None,
                     extra: dict[str, Any] | None = None, include_text: bool = True) -> Snapshot:
    """Build the snapshot of ``date`` from a finished :class:`~okgen.generate.pipeline.GenerateResult`.

    Raises:
        OkgenError: the generation is not complete or kept no question.
    """
    from okgen.ingest.store import ArticleStore
    from okgen.snapshot.build import build_snapshot

    res = generation
    if not res.complete:
        raise OkgenError(f"generation of {date} is not finished ({res.pending} article(s) pending); run okgen generate again")
    if not res.questions:
        raise OkgenError(f"no question survived the checks for {date}")
    longest = max(windows)
    with ArticleStore(ws.db_path) as store:
        corpus = store.articles_between(date - dt.timedelta(days=longest), date)
    return build_snapshot(
        res.questions, corpus, date=date, generator=res.generator, validator=res.validator, probes=res.probes,
        prompt_hash=res.prompt_hash, feeds_hash=feeds_hash or ingest_feeds_hash(ws, date), seed=res.seed,
        windows=windows, funnel=res.funnel, timestamp=timestamp, workspace=ws, extra=extra, include_text=include_text,
    )
