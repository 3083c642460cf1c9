"""Feeds to staged articles: the asynchronous part of a live (or replayed) ingest run.

Each outlet runs as one task: its feeds are fetched together (conditional GET), their entries
merged and windowed, then its pages are fetched and handed to the extraction pool while other
outlets keep fetching. Every page's outcome is written to ``ingest_items`` as soon as it is
known (extracted articles as ``staged``); :mod:`okgen.ingest.finalize` stores them afterwards.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import gzip
import logging
import math
import re
from collections.abc import Sequence
from typing import Any

from okgen.files import record_line
from okgen.hashing import sha256_text
from okgen.ingest import netpolicy
from okgen.ingest.config import IngestConfig
from okgen.ingest.dedup import canonicalize_url, same_site
from okgen.ingest.extract import Extractor, extractor_name, strip_title
from okgen.ingest.feeds import FeedList, Outlet, parse_feed
from okgen.ingest.fetch import FetcherLike, FetchResult
from okgen.ingest.filters import apply_filters
from okgen.ingest.store import ArticleStore
from okgen.ingest.summary import IngestSummary
from okgen.schema import Article, FeedEntry, FeedResult, article_id

log = logging.getLogger(__name__)

# Failures a later run may overcome; the others settle the entry for the day.
TRANSIENT = ("timeout", "connect_error", "dns_error", "robots_error", "http_408", "http_429", "http_5", "extract_",
             "not_in_archive", "internal_error")
SETTLED = ("staged", "stored", "duplicate", "filtered", "over_cap")


def is_settled(status: str, reason: str | None) -> bool:
    """Whether an entry seen before needs no more work today."""
    if status in SETTLED:
        return True
    return status == "failed" and not (reason or "").startswith(TRANSIENT)


def _preload(extractor: Extractor) -> None:
    try:
        extractor.warm()
        import datasketch.lsh  # noqa: F401  (pulls in scipy: seconds, better spent now)
    except Exception:  # only an optimisation: extraction reports its own failures
        log.debug("preloading failed", exc_info=True)


class DayRun:
    """State of one live/replay run for one date.

    Args:
        date: news date D.
        config: ingest settings.
        feed_list: outlets to read.
        store: article store (ingest tables).
        fetcher: live :class:`~okgen.ingest.fetch.Fetcher` or a replay fetcher.
        extractor: the extraction pool.
        summary: counts are written here.
        live: True for network runs (feed state is read and saved, 304 bodies cached in the WARC).
        warc: the WARC writer of a live run, or None.
        progress: a tqdm-like bar for pages (``update``/``total``), or None.
    """

    def __init__(self, date: dt.date, config: IngestConfig, feed_list: FeedList, store: ArticleStore,
                 fetcher: FetcherLike, extractor: Extractor, summary: IngestSummary, *, live: bool,
                 warc: Any = None, progress: Any = None):
        self.date, self.config, self.feed_list, self.store = date, config, feed_list, store
        self.fetcher, self.extractor, self.summary = fetcher, extractor, summary
        self.live, self.warc, self.progress = live, warc, progress
        self.states = store.item_states(date)
        self.seen_keys: set[str] = set()
        self.alternates: dict[str, list[str]] = {}
        """Other feeds' links to an entry already claimed (an AMP link beside the publisher's), by key."""
        self.extractor_name = extractor_name()
        bound = max(2 * config.concurrency, 8 * extractor.workers, 64)
        self._inflight = asyncio.Semaphore(bound)  # bounds bodies held between fetch and extraction

    async def run(self) -> None:
        """Process every outlet of the feed list."""
        # Start the extraction workers (and load the dedup index's imports) while feeds are
        # being fetched, instead of when the first page arrives.
        warm = asyncio.create_task(asyncio.to_thread(_preload, self.extractor))
        # Every feed first, then the entries claimed outlet by outlet in the canonical order of the
        # list (outlets by id, feeds by URL: the order its hash and a WARC's embedded copy keep): a
        # page two outlets list goes to the same one whatever feed answered first, so a replay
        # rebuilds the records of the live run.
        outlets = sorted(self.feed_list.outlets, key=lambda o: o.id)
        results = await asyncio.gather(*(asyncio.gather(*(self._feed(o, url) for url in sorted(o.feeds)))
                                         for o in outlets))
        plans = [self._plan(o, res) for o, res in zip(outlets, results)]
        await asyncio.gather(*(self._fetch_plan(plan) for plan in plans))
        await warm

    # ------------------------------------------------------------------------- feeds
    async def _feed(self, outlet: Outlet, url: str) -> FeedResult:
        state = self.store.feed_state(url) if self.live else None
        headers: dict[str, str] = {}
        if state and state.get("body"):
            if state.get("etag"):
                headers["If-None-Match"] = state["etag"]
            if state.get("last_modified"):
                headers["If-Modified-Since"] = state["last_modified"]
        r = await self.fetcher.fetch(url, "feed", headers or None)
        res = await self._parse_feed(outlet, url, r, state)
        earlier = None if self.live else getattr(self.fetcher, "earlier", None)
        if earlier is not None:
            # A replay reads every capture of the feed (at the address it redirected to): entries
            # that left it between two live runs of the day are only in the first one.
            addresses = dict.fromkeys([url, r.final_url or url])  # a feed that began redirecting in the day
            prev = [p for a in addresses for old in earlier(a, "feed")
                    if (p := await self._parse_feed(outlet, url, old, None)).ok]
            prev.sort(key=lambda p: p.fetched_at or dt.datetime.min.replace(tzinfo=dt.timezone.utc))
            if not res.ok and prev:  # the last capture failed: the latest one that did not stands
                res = prev.pop()
            have = {canonicalize_url(e.url) for e in res.entries}
            older = []
            for p in prev if res.ok else ():
                for e in p.entries:
                    if (k := canonicalize_url(e.url)) not in have:
                        have.add(k)
                        older.append(e)
            if older:
                res = res.model_copy(update={"entries": older + list(res.entries)})
        return res

    async def _parse_feed(self, outlet: Outlet, url: str, r: FetchResult, state: dict[str, Any] | None) -> FeedResult:
        body, not_modified, ctype = r.body, False, r.content_type
        if r.ok and r.status == 304:
            not_modified = True
            if state and state.get("body"):
                # The cached body is read as what it was served as: a 304 has no content type of
                # its own, and feedparser called every valid feed malformed without one.
                body, ctype = gzip.decompress(state["body"]), state.get("content_type") or r.content_type
                if self.warc is not None:  # so a replay finds the body this 304 stood for
                    await asyncio.to_thread(self.warc.write_resource, url, body, ctype or "application/octet-stream",
                                            "feed-cache", r.fetched_at)
        if not r.ok:
            res = FeedResult(outlet=outlet.id, feed_url=url, ok=False, status=r.status, fetched_at=r.fetched_at,
                             error=f"{r.error}" + (f": {r.detail}" if r.detail else ""))
        else:
            res = parse_feed(outlet.id, url, body, status=r.status, final_url=r.final_url,
                             content_type=ctype, etag=r.headers.get("etag"),
                             last_modified=r.headers.get("last-modified"), fetched_at=r.fetched_at,
                             not_modified=not_modified)
        if self.live:
            self._save_state(outlet, url, r, res, body)
        return res

    def _save_state(self, outlet: Outlet, url: str, r: FetchResult, res: FeedResult, body: bytes) -> None:
        values: dict[str, Any] = {"status": r.status, "ok": int(res.ok), "error": res.error,
                                  "fetched_at": r.fetched_at.isoformat()}
        if res.ok and r.status == 200:
            values.update(etag=r.headers.get("etag"), last_modified=r.headers.get("last-modified"),
                          body=gzip.compress(body, 6), content_type=r.content_type, final_url=r.final_url)
        self.store.save_feed_state(url, outlet.id, **values)

    def _count_feed(self, res: FeedResult) -> None:
        s = self.summary
        s.feeds_total += 1
        if res.ok:
            s.feeds_ok += 1
            s.feeds_not_modified += int(res.not_modified)
            s.feeds_bozo += int(res.bozo)
            if res.truncated:
                s.feeds_truncated += 1
                log.warning("feed %s (%s) is truncated (%s): read %d entries; later ones are missing",
                            res.feed_url, res.outlet, res.bozo_reason, len(res.entries))
            elif res.bozo:
                log.warning("feed %s (%s) is malformed (%s): read %d entries as feedparser recovered them",
                            res.feed_url, res.outlet, _short(res.bozo_reason), len(res.entries))
        else:
            s.feeds_failed += 1
            s.failed_feeds.append({"outlet": res.outlet, "url": res.feed_url, "status": res.status, "error": res.error})
            # One line per feed only with -v: offline, every feed fails alike and the run ends
            # with one summary line (see ingest.pipeline.failed_feeds_message).
            log.info("feed %s (%s) failed: %s", res.feed_url, res.outlet, res.error)

    # ------------------------------------------------------------------------- entries
    def _feed_date(self, entry: FeedEntry, now: dt.datetime) -> dt.datetime | None:
        pub = entry.published_at
        if pub is None:
            self.summary.undated += 1
            return None
        if pub > now + dt.timedelta(seconds=self.config.future_tolerance):
            self.summary.future_dated += 1  # a date in the future is not trusted: page or fetch date instead
            return None
        return pub

    def _plan(self, outlet: Outlet, results: Sequence[FeedResult]) -> list[tuple[Outlet, dt.datetime | None, str, FeedEntry]]:
        """The outlet's pages to fetch: its feeds' entries of the date not claimed by an outlet
        before it, within its budget."""
        plan: list[tuple[dt.datetime | None, str, FeedEntry]] = []
        settled_here = sum(1 for st in self.states.values() if st[2] == outlet.id and is_settled(st[0], st[1]))
        for res in results:
            self._count_feed(res)
            for entry in res.entries:
                self.summary.entries += 1
                key = canonicalize_url(entry.url)
                if key in self.seen_keys:
                    self.summary.duplicate_entries += 1
                    if entry.url not in self.alternates.setdefault(key, []):
                        self.alternates[key].append(entry.url)  # tried if the claimed link is gone
                    continue
                self.seen_keys.add(key)
                st = self.states.get(key)
                if st is not None and is_settled(st[0], st[1]):
                    self.summary.resumed += 1
                    continue
                pub = self._feed_date(entry, res.fetched_at)
                if pub is not None:
                    if self.config.local_date(pub) != self.date:
                        self.summary.out_of_window += 1
                        continue
                    self.summary.in_window += 1
                plan.append((pub, key, entry))
        # Dated entries first, oldest first, then undated ones: a fixed order, so the budget
        # picks the same pages whatever order the feeds answered in.
        plan.sort(key=lambda p: (p[0] is None, p[0] or dt.datetime.min.replace(tzinfo=dt.timezone.utc), p[1]))
        cap = outlet.max_per_day or self.config.max_per_outlet
        budget = max(0, math.ceil(cap * self.config.fetch_factor) - settled_here)
        self.summary.over_budget += max(0, len(plan) - budget)
        plan = plan[:budget]
        if self.progress is not None:
            self.progress.total = (self.progress.total or 0) + len(plan)
            self.progress.refresh()
        return [(outlet, pub, key, entry) for pub, key, entry in plan]

    async def _fetch_plan(self, plan: Sequence[tuple[Outlet, dt.datetime | None, str, FeedEntry]]) -> None:
        await asyncio.gather(*(self._guarded(outlet, pub, key, entry) for outlet, pub, key, entry in plan))

    # ------------------------------------------------------------------------- pages
    async def _guarded(self, outlet: Outlet, pub: dt.datetime | None, key: str, entry: FeedEntry) -> None:
        try:
            async with self._inflight:
                await self._article(outlet, pub, key, entry)
        except asyncio.CancelledError:
            raise
        except Exception as e:  # a bug on one page must not end the run; it is retried next run
            log.exception("internal error on %s", entry.url)
            self.summary.fetch_failed["internal_error"] += 1
            self.store.set_item(self.date, key, outlet.id, entry.url, "failed", f"internal_error: {type(e).__name__}")
        finally:
            if self.progress is not None:
                self.progress.update(1)

    async def _article(self, outlet: Outlet, pub: dt.datetime | None, key: str, entry: FeedEntry) -> None:
        s, cfg = self.summary, self.config
        r = await self.fetcher.fetch(entry.url, "article")
        if not r.ok and r.status is not None and 400 <= r.status < 500 and r.status not in (408, 429):
            # The claimed link is gone (an AMP link that 404s): another feed's link to the same
            # story may still answer. Not for timeouts or a host asking to slow down (a rerun
            # retries), nor okgen's refusals.
            for alt in (u for u in self.alternates.get(key, []) if u != entry.url):
                other = await self.fetcher.fetch(alt, "article")
                if other.ok and other.status != 304:
                    r, entry = other, entry.model_copy(update={"url": alt})
                    break
        if not r.ok or r.status == 304:
            reason = r.error or f"http_{r.status}"
            s.fetch_failed[reason] += 1
            self.store.set_item(self.date, key, outlet.id, entry.url, "failed", reason)
            return
        s.fetched += 1
        page = await self.extractor.extract(r.body, r.final_url or entry.url, netpolicy.charset_of(r.content_type))
        if not page.get("ok"):
            s.extract_failed += 1
            self.store.set_item(self.date, key, outlet.id, entry.url, "failed", page.get("error", "extract_error"))
            return
        s.extracted += 1
        published, date_source = self._resolve_date(pub, page.get("date"), r.fetched_at)
        final = r.final_url or entry.url
        title = entry.title or page.get("title") or ""
        if cfg.local_date(published) != self.date:
            s.filtered["out_of_window"] += 1
            self.store.set_item(self.date, key, outlet.id, entry.url, "filtered", "out_of_window")
            return
        expected = cfg.languages or ((outlet.language,) if outlet.language else ())
        reason = apply_filters(page, url=final, title=title, expected_languages=expected, min_words=cfg.min_words,
                               paywall_max_words=cfg.paywall_max_words, enabled=cfg.filters)
        if reason is None and not title.strip():
            reason = "no_title"
        if reason:
            s.filtered[reason] += 1
            self.store.set_item(self.date, key, outlet.id, entry.url, "filtered", reason)
            return
        page_url = page.get("page_url")
        canonical = canonicalize_url(page_url if trusted_canonical(page_url, final) else final)
        text = strip_title(page["text"], title)
        art = Article(
            id=article_id(canonical), url=final, canonical_url=canonical, source=outlet.id, source_name=outlet.name,
            category=outlet.category, title=title.strip(), author=page.get("author") or entry.author,
            published_at=published, date=self.date, date_source=date_source, fetched_at=r.fetched_at,
            language=page.get("language") or outlet.language, text=text, text_sha256=sha256_text(text),
            extractor=self.extractor_name,
        )
        self.store.set_item(self.date, key, outlet.id, entry.url, "staged", article_id=art.id,
                            sort_key=f"{published.isoformat()}|{canonical}", record=record_line(art),
                            minhash=page.get("minhash"), norm_sha256=page.get("norm_sha256"))

    def _resolve_date(self, feed_pub: dt.datetime | None, page_date: str | None,
                      fetched_at: dt.datetime) -> tuple[dt.datetime, str]:
        """Publication time and where it came from: the feed, else the page's metadata date (with
        its time where the page gives one; a date alone is the day's start), else the fetch."""
        if feed_pub is not None:
            return feed_pub, "feed"
        when = page_time(page_date, self.config) if page_date else None
        if when is not None and when <= fetched_at + dt.timedelta(seconds=self.config.future_tolerance):
            return when, "page"
        return fetched_at, "fetch"


def trusted_canonical(page_url: str | None, final: str) -> bool:
    """Whether a page's ``rel=canonical`` may name the article: an http(s) URL of the same
    site that is not the site's home page nor a section above the page ("/", "/news/"; a story's
    id above its slug is trusted), which a
    misconfigured CMS gives every article (they then shared one id, and all but the first were
    dropped as copies, on every later day too)."""
    from urllib.parse import urlsplit

    if not page_url or not page_url.startswith(("http://", "https://")) or not same_site(page_url, final):
        return False
    path = urlsplit(page_url).path.rstrip("/")
    own = urlsplit(final).path.rstrip("/")
    if not path:
        return False
    # Above the page: a section ("/news", "/us-news", "/world/middle-east") or a date archive
    # ("/2026/11/30", "/news/2026") is no article's name; a story's own id above its slug
    # ("/article/1234567" of "/article/1234567/new-title": five digits or more) is.
    last = path.rsplit("/", 1)[-1]
    story_id = re.search(r"\d{5,}", last) is not None
    return not (path != own and own.startswith(path + "/") and not story_id)


def page_time(text: str, cfg: IngestConfig) -> dt.datetime | None:
    """A page's date as htmldate gives it (:data:`~okgen.ingest.extract.PAGE_DATE_FORMAT`, or a
    bare ``YYYY-MM-DD``) as a UTC instant: with its offset where it has one, else in the news
    timezone; a date without a time (midnight, no offset) is the day's start. None when unreadable."""
    try:
        when = dt.datetime.fromisoformat(text.strip())
    except ValueError:
        return None
    if when.tzinfo is None:
        if when.time() == dt.time(0):
            return cfg.day_start(when.date())
        when = when.replace(tzinfo=cfg.tz)
    return when.astimezone(dt.timezone.utc)


def _short(text: str | None, limit: int = 160) -> str:
    text = " ".join(str(text or "").split())
    return text if len(text) <= limit else text[:limit] + "..."
