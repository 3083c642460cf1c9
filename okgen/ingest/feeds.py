"""Feed lists (TOML or OPML) and feed parsing.

A feed list names outlets, each with one or more RSS/Atom URLs, a category, a language and an
optional cap on articles per day. The packaged default (``okgen/data/feeds.toml``) covers the
outlets of the OKBench paper. :attr:`FeedList.hash` is the SHA-256 of the canonical list and goes
into snapshot signatures, so reordering the file does not change it but any edit does.

Feeds are parsed by feedparser from bytes okgen fetched itself (feedparser has no timeout). A
broken feed is recorded in its :class:`~okgen.schema.FeedResult` (feedparser's bozo model), never
raised.
"""

from __future__ import annotations

import calendar
import datetime as dt
import html
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from okgen.errors import ConfigError
from okgen.files import read_toml, tomllib
from okgen.hashing import sha256_json
from okgen.schema import FeedEntry, FeedResult

DEFAULT_FEEDS = "feeds.toml"
BENIGN_BOZO = ("NonXMLContentType", "CharacterEncodingOverride", "CharacterEncodingUnknown")
# expat's words for a document that stops in the middle (a cut connection, a full disk upstream).
TRUNCATION = ("no element found", "unclosed token", "unexpected end")
_ID_RE = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")


@dataclass(frozen=True)
class Outlet:
    """One outlet of a feed list.

    Attributes:
        id: short stable id (``bbc``), used as the article's ``source``.
        name: display name.
        feeds: RSS/Atom URLs, in priority order.
        category: mainstream, international, politics, technology, business, culture, ...
        language: ISO 639-1 code of the outlet's articles.
        max_per_day: cap on stored articles per day (None: the configured default).
    """

    id: str
    name: str
    feeds: tuple[str, ...]
    category: str | None = None
    language: str | None = None
    max_per_day: int | None = None

    def canonical(self) -> dict[str, Any]:
        """The outlet as canonical JSON data (hashed)."""
        return {"id": self.id, "name": self.name, "feeds": sorted(self.feeds), "category": self.category,
                "language": self.language, "max_per_day": self.max_per_day}


@dataclass(frozen=True)
class FeedList:
    """A validated list of outlets.

    Attributes:
        outlets: the outlets, in file order.
        source: where the list was read from (``default`` for the packaged list).
    """

    outlets: tuple[Outlet, ...]
    source: str = "default"
    _by_id: dict[str, Outlet] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        self._by_id.update({o.id: o for o in self.outlets})

    @property
    def hash(self) -> str:
        """SHA-256 of the canonical list (outlets sorted by id); goes into snapshot signatures."""
        return sha256_json(self.to_data())

    def to_data(self) -> dict[str, Any]:
        """Canonical JSON data of the list."""
        return {"outlets": [o.canonical() for o in sorted(self.outlets, key=lambda o: o.id)]}

    def get(self, outlet_id: str) -> Outlet | None:
        """The outlet with this id, or None."""
        return self._by_id.get(outlet_id)

    def feeds(self) -> list[tuple[Outlet, str]]:
        """Every (outlet, feed URL) pair, in list order."""
        return [(o, url) for o in self.outlets for url in o.feeds]

    def __len__(self) -> int:
        return len(self.outlets)

    @classmethod
    def from_data(cls, data: dict[str, Any], source: str) -> FeedList:
        """Rebuild a list from :meth:`to_data` output (e.g. the copy embedded in a WARC file)."""
        return _build(data.get("outlets", []), {}, source)


def load_feed_list(path: str | Path | None = None) -> FeedList:
    """Read a feed list: the packaged default (None), a TOML file or an OPML file.

    Raises:
        ConfigError: the file is missing, unreadable, or an outlet is invalid (one line).
    """
    if path is None:
        text = resources.files("okgen").joinpath("data", DEFAULT_FEEDS).read_bytes()
        return _from_toml(tomllib.loads(text.decode("utf-8")), "default")
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"{p}: no such feed list")
    if p.suffix.lower() in (".opml", ".xml"):
        return _from_opml(p)
    return _from_toml(read_toml(p), str(p))


def _from_toml(data: dict[str, Any], source: str) -> FeedList:
    defaults = data.get("defaults", {})
    outlets = data.get("outlet", data.get("outlets"))
    if not isinstance(outlets, list) or not outlets:
        raise ConfigError(f"{source}: no [[outlet]] tables found")
    return _build(outlets, defaults, source)


def _build(rows: list[Any], defaults: dict[str, Any], source: str) -> FeedList:
    allowed = {"id", "name", "url", "feeds", "category", "language", "max_per_day"}
    out: list[Outlet] = []
    seen: set[str] = set()
    for i, row in enumerate(rows, 1):
        where = f"{source}: outlet {i}"
        if not isinstance(row, dict):
            raise ConfigError(f"{where}: must be a table")
        unknown = set(row) - allowed
        if unknown:
            raise ConfigError(f"{where}: unknown key {sorted(unknown)[0]!r}")
        oid = str(row.get("id") or "").strip().lower()
        if not _ID_RE.match(oid):
            raise ConfigError(f"{where}: id {row.get('id')!r} must be lowercase letters, digits, '_', '-' or '.'")
        if oid in seen:
            raise ConfigError(f"{where}: duplicate id {oid!r}")
        seen.add(oid)
        urls = row.get("feeds", row.get("url"))
        urls = [urls] if isinstance(urls, str) else urls if isinstance(urls, list) else [] if urls is None else None
        if urls is None or not all(isinstance(u, str) for u in urls):
            raise ConfigError(f"{where} ({oid}): feeds must be a URL or a list of URLs")
        if not urls:
            raise ConfigError(f"{where} ({oid}): no feed URL (url or feeds)")
        for u in urls:
            try:
                parts = urlsplit(u)
                ok = parts.scheme in ("http", "https") and bool(parts.hostname)
            except ValueError:  # an unbalanced IPv6 bracket
                ok = False
            if not ok:
                raise ConfigError(f"{where} ({oid}): feed URL {u!r} is not http(s)")
        cap = row.get("max_per_day", defaults.get("max_per_day"))
        if cap is not None and (isinstance(cap, bool) or not isinstance(cap, int) or cap < 1):
            raise ConfigError(f"{where} ({oid}): max_per_day must be a positive integer")
        lang = row.get("language", defaults.get("language"))
        out.append(Outlet(
            id=oid, name=str(row.get("name") or oid), feeds=tuple(dict.fromkeys(str(u) for u in urls)),
            category=row.get("category", defaults.get("category")),
            language=str(lang).lower().split("-")[0] if lang else None, max_per_day=cap,
        ))
    return FeedList(tuple(out), source)


def _slug(text: str) -> str:
    s = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return s or "outlet"


def _from_opml(path: Path) -> FeedList:
    """OPML: every outline with ``xmlUrl`` is a feed; outlines with the same title form one outlet.

    The category is the outline's ``category`` attribute (its last path part) or the title of
    the enclosing outline; ``language``, ``id`` and ``max_per_day`` attributes are read when present.
    """
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        raise ConfigError(f"{path}: invalid OPML ({e})") from None
    body = root.find("body")
    if root.tag != "opml" or body is None:
        raise ConfigError(f"{path}: not an OPML file (no <opml><body>)")
    rows: dict[str, dict[str, Any]] = {}

    def walk(node: ET.Element, parent_title: str | None) -> None:
        for child in node.findall("outline"):
            title = child.get("title") or child.get("text") or ""
            url = child.get("xmlUrl")
            if url:
                oid = (child.get("id") or _slug(title or urlsplit(url).hostname or "outlet")).lower()
                cat = child.get("category")
                if cat:
                    cat = cat.split(",")[0].strip("/").split("/")[-1] or None
                row = rows.setdefault(oid, {"id": oid, "name": title or oid, "feeds": []})
                row["feeds"].append(url)
                row.setdefault("category", (cat or parent_title or "").lower() or None)
                if child.get("language"):
                    row["language"] = child.get("language")
                if child.get("max_per_day"):
                    try:
                        row["max_per_day"] = int(child.get("max_per_day", ""))
                    except ValueError:
                        raise ConfigError(f"{path}: outline {title!r}: max_per_day must be an integer") from None
            walk(child, title if not url else parent_title)

    walk(body, None)
    if not rows:
        raise ConfigError(f"{path}: no outline with an xmlUrl")
    return _build(list(rows.values()), {}, str(path))


# ----------------------------------------------------------------------------- parsing
def _struct_to_dt(value: Any) -> dt.datetime | None:
    if not value:
        return None
    try:
        return dt.datetime.fromtimestamp(calendar.timegm(value), dt.timezone.utc)
    except (TypeError, ValueError, OverflowError):
        return None


def parse_feed(outlet: str, feed_url: str, body: bytes, *, status: int | None = 200,
               final_url: str | None = None, content_type: str | None = None,
               etag: str | None = None, last_modified: str | None = None,
               fetched_at: dt.datetime | None = None, not_modified: bool = False) -> FeedResult:
    """Parse a fetched feed body with feedparser into a :class:`FeedResult`.

    A feed that feedparser cannot read at all (no entries and a bozo error, or no feed element)
    is ``ok=False`` with the reason; a recoverable problem is ``ok=True, bozo=True``.
    """
    import feedparser

    headers = {"content-location": final_url or feed_url}
    if content_type:
        headers["content-type"] = content_type
    kw: dict[str, Any] = {"status": status, "etag": etag, "last_modified": last_modified, "not_modified": not_modified}
    if fetched_at is not None:
        kw["fetched_at"] = fetched_at
    if not body.strip():
        return FeedResult(outlet=outlet, feed_url=feed_url, ok=False, error="empty response body", **kw)
    parsed = feedparser.parse(body, response_headers=headers, sanitize_html=False, resolve_relative_uris=False)
    bozo = bool(parsed.get("bozo"))
    reason = _one_line(parsed.get("bozo_exception")) if bozo else None
    entries = []
    for e in parsed.entries:
        link = _entry_link(e)
        if not link:
            continue
        published = _struct_to_dt(e.get("published_parsed")) or _struct_to_dt(e.get("updated_parsed"))
        entries.append(FeedEntry(
            outlet=outlet, feed_url=feed_url, url=link, title=_clean(e.get("title")) or "",
            published_at=published, summary=_clean(e.get("summary")), author=_clean(e.get("author")),
            guid=e.get("id") or None,
        ))
    version = parsed.get("version") or ""
    # A wrong Content-Type or charset label is a warning; a syntax error with nothing recovered is a failure.
    benign = type(parsed.get("bozo_exception")).__name__ in BENIGN_BOZO
    if not entries and bozo and not benign:
        return FeedResult(outlet=outlet, feed_url=feed_url, ok=False, bozo=True, bozo_reason=reason,
                          error=f"malformed feed: {reason}", **kw)
    if not entries and not version:
        return FeedResult(outlet=outlet, feed_url=feed_url, ok=False, bozo=bozo, bozo_reason=reason,
                          error="not an RSS or Atom feed", **kw)
    truncated = bozo and not benign and any(t in (reason or "").lower() for t in TRUNCATION)
    return FeedResult(outlet=outlet, feed_url=feed_url, ok=True, bozo=bozo, bozo_reason=reason,
                      truncated=truncated, entries=tuple(entries), **kw)


def _entry_link(entry: Any) -> str | None:
    from urllib.parse import urljoin

    base = entry.get("link") or ""
    if not base:
        for link in entry.get("links", []):
            if link.get("rel", "alternate") == "alternate" and link.get("href"):
                base = link["href"]
                break
    if not base and str(entry.get("id", "")).startswith(("http://", "https://")):
        base = entry["id"]
    if not base:
        return None
    base = base.strip()
    src = entry.get("title_detail", {}).get("base") or ""
    url = urljoin(src, base) if src else base
    return url if urlsplit(url).scheme in ("http", "https") else None


def _clean(value: Any) -> str | None:
    if not value:
        return None
    text = re.sub(r"<[^>]+>", " ", unescape_entities(str(value)))  # "&lt;b&gt;" escaped twice: a tag too
    text = " ".join(text.split())
    return text or None


_ENTITY = re.compile(r"&(?:#\d+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]*);")


def unescape_entities(text: str) -> str:
    """``text`` with HTML character references decoded ("Baldur&#8217;s" -> "Baldur’s"): some
    feeds and export files escape their titles twice, so one is left after parsing. Text without
    a complete reference ("AT&T") is returned as it is."""
    return html.unescape(text) if _ENTITY.search(text) else text


def _one_line(value: Any) -> str | None:
    if value is None:
        return None
    text = " ".join(str(value).split())
    return text[:300] or type(value).__name__
