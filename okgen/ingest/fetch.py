"""The polite asynchronous fetcher (aiohttp).

One :class:`Fetcher` serves a whole run:

- a global limit on requests in flight and a per-host limit, plus a minimum delay between the
  starts of two requests to one host (raised to robots.txt's Crawl-delay, up to a bound);
- robots.txt checked before article pages (:mod:`okgen.ingest.robots`);
- http/https only; every hop's host resolved and refused when it is private, loopback or
  link-local unless allowed (:mod:`okgen.ingest.netpolicy`); redirects followed by hand so each
  hop is checked, with a limit and loop detection;
- connect/read timeouts and a total deadline per attempt; retries with exponential backoff and
  jitter on timeouts, connection errors, 429 and 5xx, honouring ``Retry-After``;
- a maximum body size enforced while streaming (decoded bytes, so a compression bomb stops too);
  article responses must be HTML (by Content-Type, and by sniffing when it is missing or lies);
- every response captured in the day's WARC file and every fetch written to the fetch log.

Failures are returned as :class:`FetchResult` with a reason code, never raised.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
import random
import time
import urllib.request
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol
from urllib.parse import urljoin, urlsplit

from okgen.ingest import netpolicy
from okgen.ingest.config import IngestConfig
from okgen.ingest.robots import ROBOTS_MAX_BYTES, RobotsCache
from okgen.schema import utcnow
from okgen.tls import tls_context

if TYPE_CHECKING:
    from okgen.ingest.warc import WarcWriter

log = logging.getLogger(__name__)

_timeout = getattr(asyncio, "timeout", None)
Kind = Literal["feed", "article", "robots"]
REDIRECTS = (301, 302, 303, 307, 308)
MAX_HEADER_LINE = 64 * 1024
MAX_HEADERS = 1024
RETRYABLE_ERRORS = frozenset({"timeout", "connect_error"})
ACCEPT = {
    "article": "text/html,application/xhtml+xml;q=0.9,*/*;q=0.1",
    "feed": "application/rss+xml,application/atom+xml,application/rdf+xml;q=0.9,application/xml;q=0.9,text/xml;q=0.8,*/*;q=0.5",
    "robots": "text/plain,*/*;q=0.5",
}


@dataclass
class FetchResult:
    """The outcome of one fetch (after redirects and retries)."""

    url: str
    """URL asked for."""
    kind: str = "article"
    """feed, article or robots."""
    final_url: str | None = None
    """URL of the last response (after redirects)."""
    status: int | None = None
    """HTTP status of the last response; None when none was received."""
    headers: dict[str, str] = field(default_factory=dict)
    """Response headers, lowercased names."""
    body: bytes = b""
    """Decoded body (empty when refused before reading)."""
    error: str | None = None
    """Reason code when the fetch failed: ``http_404``, ``timeout``, ``too_large``, ``not_html``,
    ``redirect_loop``, ``too_many_redirects``, ``bad_scheme``, ``blocked_address``, ``dns_error``,
    ``robots``, ``connect_error``, ``bad_url``, ``not_in_archive``."""
    detail: str | None = None
    """One-line explanation of the error."""
    attempts: int = 0
    """Attempts made."""
    elapsed: float = 0.0
    """Seconds spent, waits included."""
    fetched_at: dt.datetime = field(default_factory=utcnow)
    """When the last response arrived (UTC, seconds)."""
    redirects: list[str] = field(default_factory=list)
    """URLs redirected from, in order."""
    retry_after: float | None = None
    """Seconds asked by the server's Retry-After."""

    @property
    def ok(self) -> bool:
        """True for a 2xx (or a 304 to a conditional GET) without error."""
        return self.error is None and self.status is not None and (200 <= self.status < 300 or self.status == 304)

    @property
    def content_type(self) -> str | None:
        """The Content-Type header."""
        return self.headers.get("content-type")

    @property
    def retryable(self) -> bool:
        """Whether another attempt may succeed (timeouts, connection errors, 429, 5xx)."""
        if self.error in RETRYABLE_ERRORS:
            return True
        return self.error is not None and self.error.startswith("http_") and (self.status == 429 or (self.status or 0) >= 500)

    def log_row(self) -> dict[str, Any]:
        """The fetch-log row of this result."""
        return {"kind": self.kind, "url": self.url, "final_url": self.final_url, "status": self.status,
                "bytes": len(self.body), "started_at": self.fetched_at.isoformat(), "elapsed_s": round(self.elapsed, 4),
                "attempts": self.attempts, "error": f"{self.error}: {self.detail}" if self.error and self.detail else self.error}


def _header_text(raw: bytes) -> str:
    """A header name or value as text: UTF-8 when it is valid UTF-8, else Latin-1 (as httpx
    does), so no surrogate escapes reach the store or the WARC file."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def _header_dict(pairs: list[tuple[str, str]]) -> dict[str, str]:
    """Headers by lowercased name; repeated headers joined with ", " (RFC 9110, as httpx does),
    so every check sees the same value."""
    out: dict[str, str] = {}
    for k, v in pairs:
        k = k.lower()
        out[k] = f"{out[k]}, {v}" if k in out else v
    return out


class FetcherLike(Protocol):
    """What the pipeline needs from a fetcher (live or replay)."""

    async def fetch(self, url: str, kind: Kind = "article", headers: dict[str, str] | None = None) -> FetchResult:
        """Fetch one URL."""
        ...


def classify(result: FetchResult, *, kind: str) -> FetchResult:
    """Set ``result.error`` from its status and, for articles, whether the body is HTML.

    Shared by the live fetcher and the WARC replay, so both refuse the same responses.
    """
    if result.error or result.status is None:
        return result
    if result.status == 304 or 200 <= result.status < 300:
        if kind == "article" and result.status != 304:
            is_html = netpolicy.html_content_type(result.content_type)
            sniffed = netpolicy.sniff_not_html(result.body) if result.body else None
            if is_html is False:
                result.error, result.detail = "not_html", f"content type {netpolicy.media_type(result.content_type)}"
            elif sniffed:
                result.error, result.detail = "not_html", sniffed
            elif is_html is None and result.body and b"<" not in result.body[:4096]:
                result.error, result.detail = "not_html", "no content type and no markup"
        return result
    result.error = f"http_{result.status}"
    return result


class Fetcher:
    """Fetch URLs politely; use as an async context manager.

    Args:
        config: ingest settings (limits, timeouts, retries, User-Agent, allowed networks).
        warc: writer that captures every response, or None.
        on_log: called with each fetch-log row (see :meth:`FetchResult.log_row`).
        rng: random source for jitter (seed it in tests).
    """

    def __init__(self, config: IngestConfig, *, warc: WarcWriter | None = None,
                 on_log: Callable[[dict[str, Any]], None] | None = None, rng: random.Random | None = None):
        self.config = config
        self.warc = warc
        self.on_log = on_log
        self.rng = rng or random.Random()
        self.policy = netpolicy.AddressPolicy(config.allow_networks)
        self.robots = RobotsCache(self._fetch_robots, config.user_agent)
        self._session: Any = None
        self._proxies: dict[str, str] = {}
        self._global = asyncio.Semaphore(config.concurrency)
        self._host_sem: dict[str, asyncio.Semaphore] = {}
        self._next_start: dict[str, float] = {}

    async def __aenter__(self) -> Fetcher:
        import aiohttp

        c = self.config
        # Proxies from the environment (read once: see trust_env below). The user chose them, so
        # the address policy does not apply to them; a value without a scheme means http://.
        env = urllib.request.getproxies()  # includes "no" (NO_PROXY), which the bypass test reads
        for k in ("http", "https"):
            if env.get(k) and "://" not in env[k]:
                env[k] = "http://" + env[k]
        self._proxies = env if (env.get("http") or env.get("https")) else {}
        proxy_hosts = {urlsplit(env[k]).hostname for k in ("http", "https") if env.get(k)} - {None}
        # One connection pool for the run (aiohttp's costs little per request at any size); the
        # global and per-host limits are the fetcher's own semaphores. Names are resolved by the
        # guarded resolver, so every connection goes to an address the policy allows.
        connector = aiohttp.TCPConnector(limit=c.concurrency, limit_per_host=0,
                                         ssl=tls_context(),
                                         resolver=netpolicy.guarded_resolver(self.policy, trusted=proxy_hosts))
        try:
            self._session = aiohttp.ClientSession(
                connector=connector,
                timeout=aiohttp.ClientTimeout(total=None, connect=c.connect_timeout, sock_read=c.read_timeout),
                headers={"User-Agent": c.user_agent},
                # News sites send long Content-Security-Policy and Set-Cookie lines and many
                # Set-Cookie headers; aiohttp's defaults (8 KB per line, 128 lines) would fail them.
                max_line_size=MAX_HEADER_LINE, max_field_size=MAX_HEADER_LINE, max_headers=MAX_HEADERS,
                auto_decompress=True,  # the size limit applies to decoded bytes: a compression bomb stops too
                # No trust_env: it would look up ~/.netrc for every request (in a thread) and send
                # those credentials to news sites. Proxies from the environment are honoured above.
                trust_env=False,
            )
        except BaseException:
            await connector.close()
            raise
        return self

    def _proxy(self, url: str) -> str | None:
        """The proxy for ``url`` from HTTP_PROXY/HTTPS_PROXY, unless NO_PROXY exempts its host."""
        if not self._proxies:
            return None
        parts = urlsplit(url)
        proxy = self._proxies.get(parts.scheme)
        if proxy and urllib.request.proxy_bypass_environment(parts.hostname or "", self._proxies):
            return None
        return proxy

    async def __aexit__(self, *exc: Any) -> None:
        if self._session is not None:
            await self._session.close()
        self._session = None

    # ------------------------------------------------------------------------ public
    async def fetch(self, url: str, kind: Kind = "article", headers: dict[str, str] | None = None) -> FetchResult:
        """Fetch ``url`` with retries; never raises for network or HTTP problems.

        Args:
            url: http(s) URL.
            kind: ``article`` (HTML only, robots.txt checked), ``feed`` or ``robots``.
            headers: extra request headers (``If-None-Match`` for conditional GET).
        """
        t0 = time.monotonic()
        c = self.config
        result = FetchResult(url, kind)
        for attempt in range(1, c.max_retries + 2):
            result = await self._attempt(url, kind, headers)
            result.attempts = attempt
            if not result.retryable or attempt > c.max_retries:
                break
            if result.retry_after is not None:
                if result.retry_after > c.max_retry_after:
                    result.detail = f"Retry-After {result.retry_after:.0f} s exceeds max_retry_after"
                    break
                wait = result.retry_after + self.rng.uniform(0, min(1.0, result.retry_after * 0.1))
            else:
                wait = netpolicy.backoff(attempt, c.backoff_base, c.backoff_max, self.rng)
            log.debug("retrying %s in %.2f s after %s", url, wait, result.error)
            await asyncio.sleep(wait)
        result.elapsed = time.monotonic() - t0
        if self.on_log is not None:
            self.on_log(result.log_row())
        return result

    # ------------------------------------------------------------------------ one attempt
    async def _attempt(self, url: str, kind: Kind, headers: dict[str, str] | None) -> FetchResult:
        current = url
        seen = {url}
        redirects: list[str] = []
        for _hop in range(self.config.max_redirects + 1):
            try:
                _, host, port = netpolicy.url_host_port(current)
            except ValueError as e:
                return FetchResult(url, kind, final_url=current, error="bad_scheme", detail=str(e), redirects=redirects)
            try:
                why = await self.policy.check(host, port)
            except OSError as e:
                return FetchResult(url, kind, final_url=current, error="dns_error", detail=str(e), redirects=redirects)
            if why:
                return FetchResult(url, kind, final_url=current, error="blocked_address", detail=why, redirects=redirects)
            if kind == "article" and self.config.respect_robots:
                rules = await self.robots.rules(current)
                if rules.disallow_all:  # robots.txt unreachable: report why, so a later run retries
                    return FetchResult(url, kind, final_url=current, error=rules.error or "robots",
                                       detail="robots.txt unreachable", redirects=redirects)
                if not rules.allows(self.config.user_agent, current):
                    return FetchResult(url, kind, final_url=current, error="robots", detail="disallowed by robots.txt",
                                       redirects=redirects)
            result = await self._request(url, current, kind, host, headers)
            result.redirects = redirects
            location = result.headers.get("location")
            if result.status in REDIRECTS and location and not result.error:
                nxt = urljoin(current, location.strip())
                if nxt in seen:
                    result.error, result.detail = "redirect_loop", f"{current} redirects back to {nxt}"
                    return result
                redirects.append(current)
                seen.add(nxt)
                current = nxt
                continue
            return classify(result, kind=kind)
        return FetchResult(url, kind, final_url=current, error="too_many_redirects",
                           detail=f"more than {self.config.max_redirects} redirects", redirects=redirects)

    @contextlib.asynccontextmanager
    async def _slot(self, host: str, url: str) -> AsyncIterator[None]:
        """Hold a per-host and a global slot, after waiting for the host's delay."""
        sem = self._host_sem.get(host)
        if sem is None:
            sem = self._host_sem[host] = asyncio.Semaphore(self.config.per_host_concurrency)
        async with sem:
            delay = self._host_delay(url)
            if delay <= 0:
                async with self._global:
                    yield
                return
            # The host's next start is set when a request really starts (global slot held): a
            # time reserved earlier may pass while the request queues for a global slot, and two
            # requests to one host would then start together.
            while True:
                wait = self._next_start.get(host, 0.0) - time.monotonic()
                if wait > 0:
                    await asyncio.sleep(wait)
                await self._global.acquire()
                now = time.monotonic()
                if self._next_start.get(host, 0.0) <= now:
                    break
                self._global.release()  # another request to this host started while this one queued
            self._next_start[host] = now + delay
            try:
                yield
            finally:
                self._global.release()

    def _host_delay(self, url: str) -> float:
        delay = self.config.per_host_delay
        rules = self.robots.cached(url)
        if rules is not None and rules.crawl_delay:
            delay = max(delay, min(rules.crawl_delay, self.config.max_crawl_delay))
        return delay

    async def _request(self, url: str, current: str, kind: Kind, host: str, headers: dict[str, str] | None) -> FetchResult:
        limit = {"article": self.config.max_bytes, "feed": self.config.feed_max_bytes}.get(kind, ROBOTS_MAX_BYTES)
        req_headers = {"Accept": ACCEPT[kind], **(headers or {})}
        capture: list[Any] = []
        async with self._slot(host, current):
            try:
                if _timeout is not None:  # Python 3.11+: a deadline without an extra task per request
                    async with _timeout(self.config.total_timeout):
                        result = await self._send(url, current, kind, req_headers, limit, capture)
                else:
                    result = await asyncio.wait_for(self._send(url, current, kind, req_headers, limit, capture),
                                                    timeout=self.config.total_timeout)
            except (asyncio.TimeoutError, TimeoutError):
                return FetchResult(url, kind, final_url=current, error="timeout",
                                   detail=f"no complete answer within {self.config.total_timeout:g} s")
        if self.warc is not None and capture:  # after the slot is free: compression must not hold it
            args, kw = capture
            await self.warc.write_response(*args, **kw)
        return result

    async def _send(self, url: str, current: str, kind: Kind, headers: dict[str, str], limit: int,
                    capture: list[Any]) -> FetchResult:
        import aiohttp

        if self._session is None:
            raise RuntimeError("use the Fetcher as an async context manager (async with Fetcher(...) as f)")
        result = FetchResult(url, kind, final_url=current)
        truncated: str | None = None
        try:
            async with self._session.get(current, headers=headers, allow_redirects=False,
                                         proxy=self._proxy(current)) as resp:
                result.status = resp.status
                raw_headers = [(_header_text(k), _header_text(v)) for k, v in resp.raw_headers]
                result.headers = _header_dict(raw_headers)
                result.fetched_at = utcnow()
                result.retry_after = netpolicy.parse_retry_after(result.headers.get("retry-after"))
                declared = result.headers.get("content-length")
                is_page = kind == "article" and 200 <= resp.status < 300
                if is_page and netpolicy.html_content_type(result.content_type) is False:
                    truncated = "unspecified"  # not read: a PDF or image is of no use and may be large
                elif declared and declared.isdigit() and int(declared) > limit:
                    result.error, result.detail, truncated = "too_large", f"Content-Length {declared} > {limit}", "length"
                elif resp.status in REDIRECTS:
                    pass  # the body of a redirect is of no interest
                else:
                    chunks, n = [], 0
                    async for chunk in resp.content.iter_any():
                        n += len(chunk)
                        if n > limit:
                            result.error, result.detail, truncated = "too_large", f"body over {limit} bytes", "length"
                            break
                        chunks.append(chunk)
                    result.body = b"".join(chunks) if not truncated else b""
                capture[:] = [(current, result.status, resp.reason or "", raw_headers, result.body),
                              {"fetched_at": result.fetched_at, "kind": kind,
                               "http_version": f"HTTP/{resp.version.major}.{resp.version.minor}", "truncated": truncated}]
        except asyncio.TimeoutError as e:  # aiohttp's connect and read timeouts
            result.error, result.detail = "timeout", f"{type(e).__name__}"
        except aiohttp.ClientConnectorError as e:
            if isinstance(e.os_error, netpolicy.BlockedAddress):  # the name now resolves to a refused address
                result.error, result.detail = "blocked_address", str(e.os_error)[:300]
            else:  # aiohttp's own text names "ssl:default" even for http: the host and the cause only
                why = getattr(e.os_error, "strerror", None) or str(e.os_error)
                result.error, result.detail = "connect_error", f"cannot connect to {e.host}:{e.port}: {why}"[:300]
        except (aiohttp.InvalidURL, ValueError) as e:
            result.error, result.detail = "bad_url", f"{e}"[:300]
        except aiohttp.ClientError as e:
            where = "" if result.status is None else "body: "  # a broken body: a retry may get it whole
            result.error, result.detail = "connect_error", f"{where}{type(e).__name__}: {e}"[:300]
        return result

    async def _fetch_robots(self, robots_url: str) -> tuple[int | None, bytes, str | None]:
        r = await self.fetch(robots_url, "robots")
        if r.error and not r.error.startswith("http_"):
            return None, b"", r.error
        return r.status, r.body, r.error
