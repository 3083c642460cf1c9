"""The last ingest step: dedup the day's staged articles and store the survivors.

Extraction results are staged in ``ingest_items`` as they finish (so a killed run loses
nothing); this step then walks the staged articles in a fixed order (publication time, then
canonical URL) and stores each one unless it is

- a URL duplicate: an article with the same id or canonical URL is already stored;
- an exact duplicate: same normalised text as a stored article;
- a near-duplicate: MinHash/LSH similarity at or above the threshold with an article of D or
  of the previous ``dedup_days`` days (syndicated wire copy);
- over its outlet's daily cap.

The fixed order makes the outcome independent of network timing: a replay of the day's WARC file
stores the same articles. The step runs in one transaction, so a kill during it changes nothing
and the rerun does it again.
"""

from __future__ import annotations

import datetime as dt
import logging

from okgen.ingest.config import IngestConfig
from okgen.ingest.dedup import NearDupIndex
from okgen.ingest.store import ArticleStore
from okgen.ingest.summary import IngestSummary
from okgen.schema import Article, utcnow

log = logging.getLogger(__name__)


def finalize_date(store: ArticleStore, date: dt.date, config: IngestConfig, caps: dict[str, int],
                  summary: IngestSummary) -> int:
    """Dedup and store the staged articles of ``date``; return how many were stored.

    Args:
        store: the article store.
        date: news date.
        config: ingest settings (threshold, permutations, dedup window, default cap).
        caps: per-outlet caps that differ from ``config.max_per_outlet``.
        summary: counts are added here (``duplicates``, ``over_cap``, ``stored``, ``by_outlet``).
    """
    staged = store.staged(date)
    if not staged:
        return 0
    start = date - dt.timedelta(days=config.dedup_days + 1)
    index = NearDupIndex(config.near_dup_threshold, config.num_perm)
    ids: set[str] = set()
    urls: dict[str, str] = {}
    norms: dict[str, str] = {}
    for row in store.dedup_keys(start, date):
        ids.add(row["id"])
        urls.setdefault(row["canonical_url"], row["id"])
        if row["norm_sha256"]:
            norms.setdefault(row["norm_sha256"], row["id"])
        if row["minhash"]:
            index.add(row["id"], row["minhash"])
    counts = store.counts_by_source(date)
    stored = 0
    conn = store.conn
    with conn:  # one transaction: all or nothing
        for row in staged:
            art = Article.model_validate_json(row["record"])
            key, norm, sig = row["key"], row["norm_sha256"], row["minhash"]
            dup_of, kind = None, None
            if art.id in ids or art.canonical_url in urls:
                dup_of, kind = urls.get(art.canonical_url, art.id), "url"
            elif norm and norm in norms:
                dup_of, kind = norms[norm], "exact"
            elif sig and (hit := index.query(sig)) is not None:
                dup_of, kind = hit[0], "near"
            if kind is not None:
                summary.duplicates[kind] += 1
                store.mark_item(date, key, "duplicate", kind, dup_of)
                continue
            cap = caps.get(art.source, config.max_per_outlet)
            if counts.get(art.source, 0) >= cap:
                summary.over_cap += 1
                store.mark_item(date, key, "over_cap", f"cap {cap}")
                continue
            cur = conn.execute(  # OR IGNORE: an article stored meanwhile by another process stays as it is
                "INSERT OR IGNORE INTO articles (id, date, source, canonical_url, published_at, norm_sha256, minhash,"
                " record, stored_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (art.id, art.date.isoformat(), art.source, art.canonical_url, art.published_at.isoformat(), norm, sig,
                 row["record"], utcnow().isoformat()))
            if cur.rowcount == 0:
                summary.duplicates["url"] += 1
                store.mark_item(date, key, "duplicate", "url", art.id)
                continue
            store.mark_item(date, key, "stored")
            ids.add(art.id)
            urls[art.canonical_url] = art.id
            if norm:
                norms[norm] = art.id
            if sig:
                index.add(art.id, sig)
            counts[art.source] = counts.get(art.source, 0) + 1
            summary.by_outlet[art.source] += 1
            summary.date_sources[art.date_source] += 1
            stored += 1
    summary.stored += stored
    log.info("%s: stored %d of %d staged articles", date, stored, len(staged))
    return stored
