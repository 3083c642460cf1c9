"""What the fetcher may connect to, how long it waits between retries, and what counts as HTML.

- :class:`AddressPolicy` refuses private, loopback, link-local and other non-public addresses
  (after DNS resolution) unless explicitly allowed, so a feed cannot point okgen at an internal
  service; :func:`guarded_resolver` checks again the addresses each new connection goes to,
  so a DNS answer that changes between the check and the connect (DNS rebinding) is refused too.
- :func:`backoff` and :func:`parse_retry_after` decide retry waits.
- :func:`html_content_type` and :func:`sniff_not_html` decide whether an article response is HTML.
"""

from __future__ import annotations

import asyncio
import email.utils
import ipaddress
import random
import socket
import time
from typing import Any
from urllib.parse import urlsplit

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

HTML_TYPES = ("text/html", "application/xhtml+xml")
# Magic numbers of common non-HTML payloads served under article links.
_MAGIC = {b"%PDF": "PDF", b"\x89PNG": "PNG image", b"\xff\xd8\xff": "JPEG image", b"GIF8": "GIF image",
          b"RIFF": "RIFF media", b"PK\x03\x04": "ZIP archive", b"\x1f\x8b": "gzip data", b"ID3": "MP3 audio"}
DNS_TTL = 300.0


class AddressPolicy:
    """Decide whether an address may be fetched.

    Args:
        allow: ``loopback``, ``private``, ``link-local`` and/or CIDR networks allowed although
            not public.
    """

    def __init__(self, allow: tuple[str, ...] = ()):
        self.allow_loopback = "loopback" in allow
        self.allow_private = "private" in allow
        self.allow_link_local = "link-local" in allow
        self.networks = [ipaddress.ip_network(x, strict=False) for x in allow
                         if x not in ("loopback", "private", "link-local")]
        self._dns: dict[tuple[str, int], tuple[float, list[str]]] = {}
        self._verdicts: dict[tuple[str, int], tuple[float, str | None]] = {}

    def refusal(self, ip: IPAddress) -> str | None:
        """Why ``ip`` may not be fetched (``loopback``, ``link-local``, ``private``), or None."""
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
        if any(ip in net for net in self.networks):
            return None
        if ip.is_unspecified or ip.is_multicast:  # 0.0.0.0 reaches the local host on Linux
            return "non-public"
        if ip.is_loopback:
            return None if self.allow_loopback else "loopback"
        if ip.is_link_local:
            return None if self.allow_link_local else "link-local"
        if ip.is_private:
            return None if self.allow_private else "private"
        if ip.is_reserved or not ip.is_global:
            return "non-public"
        return None

    async def check(self, host: str, port: int) -> str | None:
        """None when every address ``host`` resolves to may be fetched, else a one-line reason.

        Raises:
            OSError: the name does not resolve (socket.gaierror).
        """
        key = (host, port)
        hit = self._verdicts.get(key)
        if hit is not None and time.monotonic() - hit[0] < DNS_TTL:
            return hit[1]
        try:
            addrs = [str(ipaddress.ip_address(host.strip("[]")))]
        except ValueError:
            addrs = await self._resolve(host, port)
        verdict = None
        for a in addrs:
            why = self.refusal(ipaddress.ip_address(a.split("%")[0]))
            if why:
                verdict = f"{host} resolves to {why} address {a}"
                break
        self._verdicts[key] = (time.monotonic(), verdict)
        return verdict

    async def _resolve(self, host: str, port: int) -> list[str]:
        key = (host, port)
        hit = self._dns.get(key)
        now = time.monotonic()
        if hit and now - hit[0] < DNS_TTL:
            return hit[1]
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
        addrs = sorted({info[4][0] for info in infos})
        self._dns[key] = (now, addrs)
        return addrs


class BlockedAddress(OSError):
    """A connection the address policy refuses, raised before anything is sent."""


def guarded_resolver(policy: AddressPolicy, trusted: set[str] | frozenset[str] = frozenset()) -> Any:
    """An aiohttp resolver that refuses a name resolving to an address ``policy`` refuses.

    aiohttp connects only to the addresses its resolver returns, so this check sees the
    address each new connection really goes to, not an earlier DNS answer: a name that changes
    between the fetcher's check and the connect (DNS rebinding) is refused before anything is
    sent, with :class:`BlockedAddress`. IP literals skip resolvers; the fetcher checks those
    itself before each hop. Through a proxy the name resolved is the proxy's: names in
    ``trusted`` (the proxies the user configured) are not checked.
    """
    from aiohttp.resolver import ThreadedResolver

    class _GuardedResolver(ThreadedResolver):
        async def resolve(self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET) -> Any:
            infos = await super().resolve(host, port, family)
            if host in trusted:
                return infos
            for info in infos:
                try:
                    ip: Any = ipaddress.ip_address(str(info["host"]).split("%")[0])
                    why = policy.refusal(ip)
                except ValueError:
                    why, ip = "unknown", info["host"]
                if why:
                    raise BlockedAddress(f"{host} resolved at connect time to {why} address {ip}")
            return infos

    return _GuardedResolver()


def url_host_port(url: str) -> tuple[str, str, int]:
    """(scheme, host, port) of an http(s) URL.

    Raises:
        ValueError: not http/https or no host.
    """
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise ValueError(f"scheme {scheme or 'none'!r} is not http or https")
    host = parts.hostname
    if not host:
        raise ValueError("no host")
    port = parts.port or (443 if scheme == "https" else 80)
    return scheme, host.lower(), port


def backoff(attempt: int, base: float, cap: float, rng: random.Random | None = None) -> float:
    """Exponential backoff with jitter: half of ``base * 2**(attempt-1)`` (capped) plus a random half.

    "Equal jitter" keeps a floor, so retries never hammer a struggling server, while spreading
    clients that failed together.
    """
    r = rng or random
    b = min(cap, base * (2 ** max(0, attempt - 1)))
    return b / 2 + r.uniform(0, b / 2)


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or HTTP-date); None if absent/invalid."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    now = time.time() if now is None else now
    return max(0.0, when.timestamp() - now)


def media_type(content_type: str | None) -> str:
    """The lowercased media type of a Content-Type header (``text/html``), or ``""``."""
    return (content_type or "").split(";", 1)[0].strip().lower()


def charset_of(content_type: str | None) -> str | None:
    """The ``charset`` parameter of a Content-Type header, if any."""
    for part in (content_type or "").split(";")[1:]:
        k, _, v = part.partition("=")
        if k.strip().lower() == "charset" and v.strip():
            return v.strip().strip("\"'").lower()
    return None


def html_content_type(content_type: str | None) -> bool | None:
    """True for an HTML media type, False for another one, None when the header is absent."""
    mt = media_type(content_type)
    if not mt:
        return None
    return mt in HTML_TYPES


def sniff_not_html(body: bytes) -> str | None:
    """A reason when the body's first bytes show a non-HTML payload (PDF, image, archive), else None."""
    head = body[:16].lstrip()
    for magic, name in _MAGIC.items():
        if head.startswith(magic):
            return f"binary payload ({name})"
    if not body.startswith((b"\xff\xfe", b"\xfe\xff")) and body[:2048].count(b"\x00") > 8:  # UTF-16 has NULs
        return "binary payload"
    return None
