"""A synthetic news site for :class:`~okgen.testing.web.WebServer`: RSS/Atom feeds and article pages.

Pages look like real news pages (navigation, header, byline, ``<time>``, JSON-LD, related links,
footer) around the article text, so trafilatura has boilerplate to remove. Used by the ingest
tests and benchmarks::

    articles, _ = make_articles(20, date)
    with WebServer() as web:
        site = NewsSite(articles).install(web)
        feeds_toml = site.feed_list_toml()
"""

from __future__ import annotations

import datetime as dt
import html
from collections.abc import Sequence
from email.utils import format_datetime
from typing import Any

from okgen.schema import Article
from okgen.testing.web import Route, WebServer

NAV = ["World", "Politics", "Business", "Technology", "Science", "Health", "Sport", "Culture", "Opinion",
       "Travel", "Climate", "Video", "Podcasts", "Newsletters", "Weather"]


def article_html(title: str, text: str, *, author: str | None = None, published: dt.datetime | None = None,
                 lang: str = "en", canonical: str | None = None, ld_type: str = "NewsArticle",
                 og_type: str = "article", extra_head: str = "", related: int = 12, site: str = "Example News",
                 charset: str | None = "utf-8") -> str:
    """A realistic article page around ``text`` (paragraphs split on blank lines or sentences)."""
    esc = html.escape
    paras = [p for p in text.split("\n\n") if p.strip()] or [text]
    body = "\n".join(f"      <p>{esc(p.strip())}</p>" for p in paras)
    nav = "".join(f'<li><a href="/section/{n.lower()}">{n}</a></li>' for n in NAV)
    rel = "".join(f'<li><a href="/related/{i}">Related story number {i} about something else entirely</a></li>'
                  for i in range(related))
    iso = published.isoformat() if published else ""
    meta_date = f'<meta property="article:published_time" content="{iso}">' if published else ""
    time_tag = f'<time datetime="{iso}">{published:%d %B %Y}</time>' if published else ""
    byline = f'<p class="byline">By <span class="author">{esc(author)}</span></p>' if author else ""
    meta_author = f'<meta name="author" content="{esc(author)}">' if author else ""
    canon = f'<link rel="canonical" href="{esc(canonical)}">' if canonical else ""
    ld = (f'<script type="application/ld+json">{{"@context":"https://schema.org","@type":"{ld_type}",'
          f'"headline":"{esc(title)}","datePublished":"{iso}"}}</script>') if ld_type else ""
    cs = f'<meta charset="{charset}">' if charset else ""
    return f"""<!DOCTYPE html>
<html lang="{lang}">
<head>
  {cs}
  <title>{esc(title)} | {esc(site)}</title>
  <meta property="og:type" content="{og_type}">
  <meta property="og:title" content="{esc(title)}">
  <meta property="og:site_name" content="{esc(site)}">
  {meta_date}
  {meta_author}
  {canon}
  {ld}
  {extra_head}
</head>
<body>
  <header><div class="logo">{esc(site)}</div><nav><ul>{nav}</ul></nav>
    <form action="/search"><input name="q"><button>Search</button></form></header>
  <main>
    <article>
      <h1>{esc(title)}</h1>
      {byline}
      {time_tag}
{body}
    </article>
    <aside><h2>More stories</h2><ul>{rel}</ul></aside>
  </main>
  <footer><p>&copy; {esc(site)}. All rights reserved.</p><ul><li><a href="/about">About us</a></li>
    <li><a href="/privacy">Privacy policy</a></li><li><a href="/terms">Terms of use</a></li></ul></footer>
</body>
</html>
"""


def rss(items: Sequence[dict[str, Any]], *, title: str = "Example feed", link: str = "http://example.org/") -> str:
    """An RSS 2.0 document; each item has ``title``, ``link`` and optional ``published`` (datetime),
    ``author``, ``guid``, ``summary``."""
    out = []
    for it in items:
        pub = f"<pubDate>{format_datetime(it['published'])}</pubDate>" if it.get("published") else ""
        author = f"<author>{html.escape(it['author'])}</author>" if it.get("author") else ""
        guid = f"<guid>{html.escape(it.get('guid') or it['link'])}</guid>"
        summary = f"<description>{html.escape(it.get('summary') or '')}</description>"
        out.append(f"<item><title>{html.escape(it['title'])}</title><link>{html.escape(it['link'])}</link>"
                   f"{pub}{author}{guid}{summary}</item>")
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n<rss version="2.0"><channel><title>{html.escape(title)}</title>'
            f"<link>{html.escape(link)}</link><description>{html.escape(title)}</description>{''.join(out)}</channel></rss>\n")


def atom(items: Sequence[dict[str, Any]], *, title: str = "Example feed") -> str:
    """An Atom 1.0 document with the same item keys as :func:`rss`."""
    out = []
    for it in items:
        pub = f"<updated>{it['published'].isoformat()}</updated><published>{it['published'].isoformat()}</published>" \
            if it.get("published") else ""
        out.append(f"<entry><title>{html.escape(it['title'])}</title><link rel=\"alternate\" href=\"{html.escape(it['link'])}\"/>"
                   f"<id>{html.escape(it.get('guid') or it['link'])}</id>{pub}</entry>")
    return (f'<?xml version="1.0" encoding="utf-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom"><title>{html.escape(title)}</title>'
            f"<id>urn:example:feed</id><updated>2024-01-01T00:00:00Z</updated>{''.join(out)}</feed>\n")


class NewsSite:
    """Feeds and pages for a list of articles, one feed per outlet.

    Args:
        articles: the articles to serve (their ``source`` is the outlet).
        latency: seconds the server waits before each answer of this site (per route).
    """

    def __init__(self, articles: Sequence[Article], latency: float = 0.0):
        self.articles = list(articles)
        self.latency = latency
        self.web: WebServer | None = None
        self.outlets = sorted({a.source for a in self.articles})

    def page_path(self, a: Article) -> str:
        """Path of an article's page."""
        return f"/{a.source}/{a.date:%Y/%m/%d}/{a.id}"

    def feed_path(self, outlet: str) -> str:
        """Path of an outlet's feed."""
        return f"/feeds/{outlet}.xml"

    def install(self, web: WebServer) -> NewsSite:
        """Add the feed and page routes to ``web``."""
        self.web = web
        for a in self.articles:
            web.set(self.page_path(a), Route(body=article_html(a.title, a.text, author=a.author, published=a.published_at,
                                                                 lang=a.language or "en"), delay=self.latency))
        for o in self.outlets:
            items = [{"title": a.title, "link": web.url(self.page_path(a)), "published": a.published_at, "author": a.author}
                     for a in self.articles if a.source == o]
            web.set(self.feed_path(o), Route(body=rss(items, title=o), content_type="application/rss+xml; charset=utf-8",
                                             delay=self.latency))
        return self

    def feed_list_toml(self, **extra: Any) -> str:
        """A TOML feed list of the site's outlets (``extra`` keys are added to every outlet)."""
        assert self.web is not None, "install() first"
        lines = []
        for o in self.outlets:
            lines += ["[[outlet]]", f'id = "{o}"', f'name = "{o.title()}"', 'category = "test"', 'language = "en"',
                      f'feeds = ["{self.web.url(self.feed_path(o))}"]']
            lines += [f"{k} = {v!r}" if not isinstance(v, str) else f'{k} = "{v}"' for k, v in extra.items()]
            lines.append("")
        return "\n".join(lines)


def fast_ingest_config(**overrides: Any):
    """An :class:`~okgen.ingest.config.IngestConfig` for tests: loopback allowed, no politeness
    delays, short timeouts and backoffs, one extraction process, a low word minimum."""
    from okgen.ingest.config import make_config

    base: dict[str, Any] = {
        "allow_networks": ("loopback",), "per_host_delay": 0.0, "per_host_concurrency": 16, "concurrency": 16,
        "connect_timeout": 2.0, "read_timeout": 2.0, "total_timeout": 5.0, "max_retries": 2, "backoff_base": 0.05,
        "backoff_max": 0.2, "extract_workers": 1, "min_words": 60,
    }
    base.update(overrides)
    return make_config(base)
