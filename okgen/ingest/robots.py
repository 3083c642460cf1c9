"""robots.txt, fetched once per origin and applied as RFC 9309 says.

- 2xx: parse the rules (the first 512 KiB) and honour them, including ``Crawl-delay``.
- 4xx (404, 410, also 401/403): no rules, everything may be fetched.
- 5xx, 429 or no answer: the site is "unreachable", so nothing is fetched from it in this run.

The rules are parsed and matched by ``protego`` (RFC 9309: the longest matching rule wins,
``*`` and ``$`` wildcards), which the standard library's ``urllib.robotparser`` does not do.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

log = logging.getLogger(__name__)

ROBOTS_MAX_BYTES = 512 * 1024


@dataclass
class RobotsRules:
    """The rules of one origin."""

    parser: Any | None
    """Parsed rules (a ``protego.Protego``); None means "allow everything"."""
    disallow_all: bool = False
    """True when robots.txt was unreachable (5xx, 429, network error)."""
    crawl_delay: float | None = None
    """Crawl-delay for our user agent, if any."""
    status: int | None = None
    """HTTP status of robots.txt."""
    error: str | None = None
    """Why robots.txt could not be read (``connect_error``, ``timeout``, ``http_503`` ...)."""

    def allows(self, user_agent: str, url: str) -> bool:
        """Whether ``url`` may be fetched."""
        if self.disallow_all:
            return False
        if self.parser is None:
            return True
        return bool(self.parser.can_fetch(url, user_agent))


class RobotsCache:
    """Fetch and cache robots.txt per origin.

    Args:
        fetch: coroutine ``fetch(url) -> (status or None, body bytes, error or None)`` that gets robots.txt.
        user_agent: our User-Agent (its product token is matched against the groups).
    """

    def __init__(self, fetch: Callable[[str], Awaitable[tuple[int | None, bytes, str | None]]], user_agent: str):
        self._fetch = fetch
        self.user_agent = user_agent
        self._rules: dict[str, RobotsRules] = {}
        self._pending: dict[str, asyncio.Future[RobotsRules]] = {}

    @staticmethod
    def origin(url: str) -> str:
        """``scheme://host[:port]`` of a URL."""
        p = urlsplit(url)
        return f"{p.scheme.lower()}://{p.netloc.lower()}"

    def cached(self, url: str) -> RobotsRules | None:
        """The rules of ``url``'s origin if already fetched."""
        return self._rules.get(self.origin(url))

    async def rules(self, url: str) -> RobotsRules:
        """The rules of ``url``'s origin, fetching robots.txt once (concurrent callers share it)."""
        origin = self.origin(url)
        hit = self._rules.get(origin)
        if hit is not None:
            return hit
        pending = self._pending.get(origin)
        if pending is not None:
            return await asyncio.shield(pending)
        fut: asyncio.Future[RobotsRules] = asyncio.get_running_loop().create_future()
        self._pending[origin] = fut
        try:
            rules = await self._load(origin)
        except asyncio.CancelledError:
            self._pending.pop(origin, None)
            fut.cancel()
            raise
        except Exception as e:  # a broken robots.txt must not stop the run: treat as unreachable
            log.warning("robots.txt of %s: %s", origin, e)
            rules = RobotsRules(None, disallow_all=True, error="robots_error")
        self._rules[origin] = rules
        self._pending.pop(origin, None)
        fut.set_result(rules)
        return rules

    async def _load(self, origin: str) -> RobotsRules:
        status, body, error = await self._fetch(origin + "/robots.txt")
        if status is None or status == 429 or status >= 500:
            log.info("robots.txt of %s unreachable (%s): not fetching from it", origin, error or status)
            return RobotsRules(None, disallow_all=True, status=status, error=error or f"http_{status}")
        if 400 <= status < 500 or not (200 <= status < 300):
            return RobotsRules(None, status=status)
        from protego import Protego

        parser = Protego.parse(body[:ROBOTS_MAX_BYTES].decode("utf-8", errors="replace"))
        delay = None
        try:
            d = parser.crawl_delay(self.user_agent)
            delay = float(d) if d is not None else None
        except (TypeError, ValueError):
            delay = None
        return RobotsRules(parser, crawl_delay=delay, status=status)

    async def allowed(self, url: str) -> bool:
        """Whether our user agent may fetch ``url``."""
        return (await self.rules(url)).allows(self.user_agent, url)
