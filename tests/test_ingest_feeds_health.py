"""A feed that stops in the middle is read as far as it goes and flagged, never taken as healthy."""

from __future__ import annotations

import datetime as dt
import logging

from okgen.ingest.feeds import parse_feed
from okgen.ingest.pipeline import run_ingest
from okgen.settings import Workspace
from okgen.testing.corpus import make_articles
from okgen.testing.news_site import NewsSite, fast_ingest_config
from okgen.testing.web import Route, WebServer

DAY = dt.date(2026, 11, 21)


def _rss(n: int) -> bytes:
    items = "".join(f"<item><title>Story {i}</title><link>http://n.example/{i}</link>"
                    f"<pubDate>Sat, 21 Nov 2026 10:00:00 GMT</pubDate></item>" for i in range(n))
    return (f'<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel><title>N</title>{items}'
            "</channel></rss>").encode()


def test_parse_feed_flags_a_cut_document():
    doc = _rss(10)
    whole = parse_feed("o", "http://n.example/rss", doc, content_type="application/rss+xml")
    assert whole.ok and not whole.truncated and len(whole.entries) == 10
    for cut in (len(doc) - 20, len(doc) // 2):
        part = parse_feed("o", "http://n.example/rss", doc[:cut], content_type="application/rss+xml")
        assert part.ok and part.truncated and 0 < len(part.entries) <= 10


def test_ingest_warns_about_a_truncated_feed(tmp_path, caplog):
    articles, _ = make_articles(12, DAY, days=1, seed=5)
    web = WebServer().start()
    try:
        site = NewsSite(articles).install(web)
        outlet = site.outlets[0]
        whole = web.routes[site.feed_path(outlet)].body
        whole = whole if isinstance(whole, bytes) else whole.encode()
        # Cut after the first item, inside what follows it: an entry is whole, the document is not.
        cut = whole.index(b"</item>") + len(b"</item>") + 5
        assert cut < whole.index(b"</rss>")
        web.set(site.feed_path(outlet), Route(body=whole[:cut], content_type="application/rss+xml"))
        feeds = tmp_path / "feeds.toml"
        feeds.write_text(site.feed_list_toml())
        with caplog.at_level(logging.WARNING, logger="okgen"):
            summary = run_ingest(DAY, Workspace(tmp_path / "ws"), feeds=feeds, config=fast_ingest_config())
    finally:
        web.stop()
    assert summary.feeds_truncated == 1 and summary.feeds_ok == len(site.outlets)
    assert any("is truncated" in r.getMessage() and outlet in r.getMessage() for r in caplog.records)
    assert any("truncated" in str(v) for _, v in summary.rows())


def test_stored_text_does_not_repeat_the_title(tmp_path):
    from okgen.ingest.store import ArticleStore

    articles, _ = make_articles(6, DAY, days=1, seed=8)
    web = WebServer().start()
    try:
        site = NewsSite(articles).install(web)
        feeds = tmp_path / "feeds.toml"
        feeds.write_text(site.feed_list_toml())
        ws = Workspace(tmp_path / "ws")
        summary = run_ingest(DAY, ws, feeds=feeds, config=fast_ingest_config())
    finally:
        web.stop()
    assert summary.stored == len(articles)
    with ArticleStore(ws.db_path) as store:
        stored = store.articles_between(DAY - dt.timedelta(days=1), DAY)
    assert len(stored) == len(articles)
    originals = {x.title: x for x in articles}
    for a in stored:
        # The body is the article's text, not headline + text (the headline has its own field).
        assert " ".join(a.text.split()) == " ".join(originals[a.title].text.split()), a.title
