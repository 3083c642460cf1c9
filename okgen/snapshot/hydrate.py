"""Hydrate a snapshot released without article texts: fetch each article again, extract it
with the same extractor settings, and keep the text only when it matches its recorded hash.

Articles whose page changed (a different text), vanished (the server no longer gives it), was
unreachable (no answer now: DNS, connection, timeout, 429, 5xx; a later run may get it) or was
refused (okgen's own network policy or robots.txt would not fetch it) stay without text and are
reported, as are articles read from a news dump (``okgen ingest --import``: no page of okgen's
extraction to fetch again); when every article matches, the hydrated folder is byte-for-byte the
original full release and verifies against the same signature.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Any

from okgen.hashing import sha256_text
from okgen.schema import Article
from okgen.settings import Workspace
from okgen.snapshot.store import Snapshot

log = logging.getLogger(__name__)


@dataclass
class HydrateReport:
    """What hydration found, article by article."""

    snapshot: str
    matched: list[str] = field(default_factory=list)
    changed: list[dict[str, Any]] = field(default_factory=list)
    vanished: list[dict[str, Any]] = field(default_factory=list)
    unreachable: list[dict[str, Any]] = field(default_factory=list)
    refused: list[dict[str, Any]] = field(default_factory=list)
    imported: list[dict[str, Any]] = field(default_factory=list)
    """Articles whose text came from a news dump (``okgen ingest --import``), not a page okgen
    fetched and extracted: re-extracting the page cannot be expected to give it back, so they
    are not fetched."""
    already: int = 0

    @property
    def complete(self) -> bool:
        """True when every text is present again."""
        return not (self.changed or self.vanished or self.unreachable or self.refused or self.imported)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"snapshot": self.snapshot, "matched": len(self.matched), "already_present": self.already,
                "changed": self.changed, "vanished": self.vanished, "unreachable": self.unreachable,
                "refused": self.refused, "imported": self.imported,
                "complete": self.complete}


IMPORTED = "okgen-import"  # the extractor id of articles read from a news dump (okgen ingest --import)
# Fetch results that are okgen's own refusal (settings can change them), not the page's fate.
REFUSED = ("blocked_address", "bad_scheme", "robots", "robots_error", "bad_url")
# Fetch results that say nothing of the page: no answer now (offline, the server down or busy).
UNREACHABLE = ("dns_error", "connect_error", "timeout", "http_408", "http_429", "http_5", "not fetched")


def hydrate(snapshot: Snapshot, workspace: Workspace, *, config: Any = None, progress: bool = False) -> tuple[Snapshot, HydrateReport]:
    """Re-fetch the omitted texts of ``snapshot`` and rewrite it in place.

    Args:
        snapshot: a snapshot whose corpus has omitted texts.
        workspace: for the ingest settings (``[ingest]`` of ``okgen.toml``: User-Agent,
            politeness, allowed networks, extractor options).
        config: an :class:`~okgen.ingest.config.IngestConfig` overriding the workspace's.
        progress: progress bar on stderr.

    Returns:
        The rewritten snapshot and the report.
    """
    from okgen.ingest.config import config_for
    from okgen.snapshot.notext import rewrite_corpus

    cfg = config or config_for(workspace)
    report = HydrateReport(snapshot=snapshot.name)
    corpus = snapshot.corpus
    todo = [a for a in corpus if a.text_omitted]
    report.already = len(corpus) - len(todo)
    if not todo:
        log.info("%s already has every text", snapshot.name)
        return snapshot, report
    # The workspace's own article store first: an article ingested here (fetched, or imported
    # from the same dump) gives its text back without a fetch, when its hash matches.
    texts = _from_store(workspace, todo)
    todo_now = [a for a in todo if a.id not in texts]
    dumped = {a.id for a in todo_now if (a.extractor or "").startswith(IMPORTED)}
    fetch = [a for a in todo_now if a.id not in dumped]
    if fetch:
        texts.update(asyncio.run(_fetch_all(fetch, cfg, progress)))
    new: list[Article] = []
    for a in corpus:
        if not a.text_omitted:
            new.append(a)
            continue
        if a.id in dumped and a.id not in texts:
            report.imported.append({"id": a.id, "url": a.url, "reason": "imported from a news dump"})
            new.append(a)
            continue
        got = texts.get(a.id)
        if got is None or got.get("error"):
            reason = (got or {}).get("error", "not fetched")
            bucket = report.refused if reason in REFUSED else \
                report.unreachable if reason.startswith(UNREACHABLE) else report.vanished
            bucket.append({"id": a.id, "url": a.url, "reason": reason})
            new.append(a)
        elif sha256_text(got["text"]) != a.text_sha256:
            report.changed.append({"id": a.id, "url": a.url, "words_now": len(got["text"].split())})
            new.append(a)
        else:
            report.matched.append(a.id)
            new.append(a.model_copy(update={"text": got["text"], "text_omitted": False}))
    if not report.matched:  # nothing restored: the release stays as it came (its manifest.sig too)
        return snapshot, report
    all_text = all(not a.text_omitted for a in new)
    snap = rewrite_corpus(snapshot, new, snapshot.path, text_included=all_text)
    from okgen.snapshot.store import register

    register(snap, workspace)
    return snap, report


def _from_store(workspace: Workspace, articles: list[Article]) -> dict[str, dict[str, Any]]:
    """Texts of ``articles`` the workspace's article store holds with the same hash."""
    if not workspace.db_path.is_file():
        return {}
    from okgen.ingest.store import ArticleStore

    out: dict[str, dict[str, Any]] = {}
    with ArticleStore(workspace.db_path) as store:
        for a in articles:
            got = store.get(a.id)
            if got is not None and got.text and got.text_sha256 == a.text_sha256:
                out[a.id] = {"text": got.text}
    return out


PROBE_HOSTS = 20  # one page of each of the first this many hosts is fetched first ...
OFFLINE_HOSTS = 3  # ... and when every one (of at least this many hosts) failed at DNS, no other is asked for


async def _fetch_all(articles: list[Article], cfg: Any, progress: bool) -> dict[str, dict[str, Any]]:
    from urllib.parse import urlsplit

    from okgen.ingest.extract import ExtractOptions, Extractor, strip_title
    from okgen.ingest.fetch import Fetcher
    from okgen.ingest.netpolicy import charset_of
    from okgen.progress import bar

    opts = ExtractOptions(cfg.favor_precision, cfg.favor_recall, cfg.include_tables, False, cfg.num_perm, cfg.shingle_size)
    out: dict[str, dict[str, Any]] = {}
    pbar = bar(total=len(articles), desc="hydrate", unit="page") if progress else None
    # An offline machine fails every host at DNS, and asking 500 pages takes minutes: one page of
    # each of the first hosts is asked first, all answers awaited (a dead host among live ones
    # answers first, the live ones later), and only a DNS failure from each of several hosts
    # stops the rest ("not fetched": unreachable, a later run asks again).
    probe, hosts = [], set()
    for a in articles:
        host = urlsplit(a.url).hostname or a.url
        if host not in hosts and len(hosts) < PROBE_HOSTS:
            hosts.add(host)
            probe.append(a)
    with Extractor(cfg.extract_workers, opts) as extractor:
        async with Fetcher(cfg) as fetcher:

            async def one(a: Article) -> None:
                r = await fetcher.fetch(a.url, "article")
                if not r.ok:
                    out[a.id] = {"error": r.error or f"http_{r.status}"}
                else:
                    page = await extractor.extract(r.body, r.final_url or a.url, charset_of(r.content_type))
                    out[a.id] = ({"text": strip_title(page.get("text", ""), a.title)} if page.get("ok")
                                 else {"error": page.get("error", "extract_error")})
                if pbar is not None:
                    pbar.update(1)

            await asyncio.gather(*(one(a) for a in probe))
            rest = [a for a in articles if a.id not in out]
            if len(probe) >= OFFLINE_HOSTS and all(out[a.id].get("error") == "dns_error" for a in probe):
                out.update({a.id: {"error": "not fetched"} for a in rest})
                if pbar is not None:
                    pbar.update(len(rest))
            else:
                await asyncio.gather(*(one(a) for a in rest))
    if pbar is not None:
        pbar.close()
    return out
