"""run_ingest end to end against a real HTTP server on 127.0.0.1 serving fixture feeds and pages:
every bad-input case of the issue, the window and date sources, filters, duplicates, caps,
conditional GET, resume, WARC replay and import."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from okgen.errors import ConfigError, LockedError, NotFoundError
from okgen.ingest.pipeline import IngestError, run_ingest
from okgen.ingest.store import ArticleStore
from okgen.settings import Workspace
from okgen.testing.corpus import make_articles
from okgen.testing.news_site import article_html, fast_ingest_config, rss
from okgen.testing.web import Request, Route, WebServer

FIX = Path(__file__).parent / "fixtures" / "ingest"
NOW = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
D = NOW.date()
MIDNIGHT = dt.datetime.combine(D, dt.time(0), dt.timezone.utc)


def during_d(frac: float) -> dt.datetime:
    """A time on D before now (so it is neither tomorrow nor in the future)."""
    return (MIDNIGHT + (NOW - MIDNIGHT) * frac).replace(microsecond=0)


def page(a, **kw) -> Route:
    return Route(body=article_html(a.title, a.text, author=a.author, **kw))


class BadWeb:
    """A site with every kind of bad input, and the expected outcome of each."""

    def __init__(self, web: WebServer):
        self.web = web
        arts, _ = make_articles(14, D, days=1, seed=11, facts_per_article=6)
        self.arts = arts
        u = web.url
        good = arts[:4]
        # -- outlet "news": 4 good articles, an ETag for conditional GET
        items = [{"title": a.title, "link": u(f"/news/{i}"), "published": during_d(0.1 + i / 10)} for i, a in enumerate(good)]
        items.append({"title": "Yesterday's story", "link": u("/news/old"), "published": MIDNIGHT - dt.timedelta(hours=3)})
        for i, a in enumerate(good):
            web.set(f"/news/{i}", page(a, published=items[i]["published"]))
        body = rss(items)

        def news_feed(req: Request) -> Route:
            if req.headers.get("if-none-match") == '"news-v1"':
                return Route(status=304)
            return Route(body=body, content_type="application/rss+xml", headers={"ETag": '"news-v1"'})
        web.set("/feeds/news.xml", news_feed)
        # -- outlet "wire": an exact and a near copy of news articles, plus a fresh one
        near = "WASHINGTON (Wire Service) - " + good[1].text + "\n\nReporting by Staff; editing by the desk."
        wire = [("exact", good[0].title, good[0].text), ("near", "Wire: " + good[1].title, near),
                ("fresh", arts[4].title, arts[4].text)]
        for slug, title, text in wire:  # the exact copy keeps byline and date, so its text is the same
            extra = {"author": good[0].author, "published": items[0]["published"]} if slug == "exact" else {}
            web.set(f"/wire/{slug}", Route(body=article_html(title, text, **extra)))
        web.set("/feeds/wire.xml", Route(body=rss([{"title": t, "link": u(f"/wire/{s}"), "published": during_d(0.9)}
                                                   for s, t, _ in wire]), content_type="application/rss+xml"))
        # -- broken feeds
        web.set("/feeds/broken.xml", Route(body=(FIX / "malformed.xml").read_bytes(), content_type="application/rss+xml"))
        web.set("/feeds/empty.xml", Route(body=(FIX / "empty.xml").read_bytes(), content_type="application/rss+xml"))
        # -- outlet "mixed": one entry per bad page
        cafe = arts[5].text.replace("Analysts", "Café analysts")
        latin1 = article_html(arts[5].title, cafe, charset=None).encode("cp1252")
        wrong = article_html(arts[6].title, arts[6].text.replace("Analysts", "Crème analysts"), charset="utf-8").encode("cp1252")
        routes = {
            "404": Route(status=404), "410": Route(status=410),
            "pdf": Route(body=(FIX / "report.pdf").read_bytes(), content_type="application/pdf"),
            "png": Route(body=(FIX / "image.png").read_bytes(), content_type="image/png"),
            "loop": Route(status=302, headers={"Location": "/mixed/loop2"}),
            "endless": Route(body="<p>spam</p>" * 200, endless=True),
            "hang": Route(hang=True, hang_seconds=4),
            "flaky": [Route(status=500), page(arts[7])],
            "busy": [Route(status=429, headers={"Retry-After": "1"}), page(arts[8])],
            "nav": Route(body=(FIX / "nav_only.html").read_bytes()),
            "video": Route(body=(FIX / "video.html").read_bytes()),
            "live": Route(body=(FIX / "live_blog.html").read_bytes()),
            "paywall": Route(body=(FIX / "paywall.html").read_bytes()),
            "cookies": Route(body=(FIX / "cookie_wall.html").read_bytes()),
            "latin1": Route(body=latin1, content_type="text/html"),
            "wrongcharset": Route(body=wrong, content_type="text/html; charset=utf-8"),
        }
        for slug, route in routes.items():
            web.set(f"/mixed/{slug}", route)
        web.set("/mixed/loop2", Route(status=302, headers={"Location": "/mixed/loop"}))
        # undated entries: one page with a metadata date of D, one without any date (fetch time)
        web.set("/mixed/undated-page", page(arts[9], published=during_d(0.2)))
        web.set("/mixed/undated-none", page(arts[10]))
        web.set("/mixed/future", page(arts[11], published=during_d(0.3)))
        mixed = [{"title": f"Item {s}", "link": u(f"/mixed/{s}"), "published": during_d(0.5)} for s in routes]
        mixed += [{"title": arts[9].title, "link": u("/mixed/undated-page")},
                  {"title": arts[10].title, "link": u("/mixed/undated-none")},
                  {"title": arts[11].title, "link": u("/mixed/future"), "published": NOW + dt.timedelta(days=3)}]
        web.set("/feeds/mixed.xml", Route(body=rss(mixed), content_type="application/rss+xml"))
        # -- outlet "many": more than its cap
        many, _ = make_articles(8, D, days=1, seed=12, facts_per_article=6)
        for i, a in enumerate(many):
            web.set(f"/many/{i}", page(a))
        web.set("/feeds/many.xml", Route(body=rss([{"title": a.title, "link": u(f"/many/{i}"), "published": during_d(0.4 + i / 100)}
                                                   for i, a in enumerate(many)]), content_type="application/rss+xml"))

    def feed_list(self, path: Path) -> Path:
        u = self.web.url
        rows = [("news", "/feeds/news.xml", ""), ("wire", "/feeds/wire.xml", ""), ("broken", "/feeds/broken.xml", ""),
                ("empty", "/feeds/empty.xml", ""), ("missing", "/feeds/missing.xml", ""), ("mixed", "/feeds/mixed.xml", ""),
                ("many", "/feeds/many.xml", "max_per_day = 3\n")]
        path.write_text("".join(f'[[outlet]]\nid = "{i}"\nname = "{i.title()}"\ncategory = "test"\nlanguage = "en"\n'
                                f'url = "{u(p)}"\n{extra}\n' for i, p, extra in rows))
        return path


CFG = dict(read_timeout=0.5, total_timeout=3, max_retries=1, max_bytes=100_000, max_redirects=4)


@pytest.fixture(scope="module")
def bad_run(tmp_path_factory):
    """One live run over the bad site, a second run, and a replay of the WARC in a fresh workspace."""
    tmp = tmp_path_factory.mktemp("bad")
    with WebServer() as web:
        site = BadWeb(web)
        feeds = site.feed_list(tmp / "feeds.toml")
        ws = Workspace(tmp / "ws")
        cfg = fast_ingest_config(**CFG)
        first = run_ingest(D, ws, feeds=feeds, config=cfg)
        hits_after_first = dict(web.hits)
        second = run_ingest(D, ws, feeds=feeds, config=cfg)
        hits_after_second = dict(web.hits)
    replay_ws = Workspace(tmp / "replay")
    replayed = run_ingest(D, replay_ws, replay=first.warc, config=cfg)
    return {"site": site, "ws": ws, "first": first, "second": second, "replayed": replayed, "replay_ws": replay_ws,
            "hits1": hits_after_first, "hits2": hits_after_second, "web": web}


def stored(ws: Workspace) -> dict[str, object]:
    with ArticleStore(ws.db_path) as store:
        return {a.url.split("/", 3)[3]: a for a in store.articles_for_date(D)}


def test_feeds_ok_and_failed_are_recorded(bad_run):
    s = bad_run["first"]
    assert (s.feeds_total, s.feeds_ok, s.feeds_failed) == (7, 5, 2)
    errors = {f["outlet"]: f["error"] for f in s.failed_feeds}
    assert errors["broken"].startswith("malformed feed") and errors["missing"].startswith("http_404")
    with ArticleStore(bad_run["ws"].db_path) as store:
        assert store.feed_state(bad_run["web"].url("/feeds/missing.xml"))["status"] == 404
        assert store.feed_state(bad_run["web"].url("/feeds/news.xml"))["etag"] == '"news-v1"'


def test_bad_pages_fail_with_reasons(bad_run):
    s = bad_run["first"]
    assert s.fetch_failed["http_404"] == 1 and s.fetch_failed["http_410"] == 1
    assert s.fetch_failed["not_html"] == 2  # the PDF and the image
    assert s.fetch_failed["redirect_loop"] == 1 and s.fetch_failed["too_large"] == 1 and s.fetch_failed["timeout"] == 1
    assert s.filtered["video"] == 1 and s.filtered["live_blog"] == 1 and s.filtered["paywall"] == 1
    assert s.filtered["cookie_wall"] == 1 and s.filtered["too_short"] + s.filtered["no_content"] == 1
    got = stored(bad_run["ws"])
    assert "mixed/flaky" in got and "mixed/busy" in got  # 500 then success; 429 with Retry-After
    for bad in ("404", "410", "pdf", "png", "loop", "endless", "hang", "nav", "video", "live", "paywall", "cookies"):
        assert f"mixed/{bad}" not in got


def test_charsets_window_and_date_sources(bad_run):
    got = stored(bad_run["ws"])
    assert "Café analysts" in got["mixed/latin1"].text
    assert "Crème analysts" in got["mixed/wrongcharset"].text
    assert got["mixed/undated-page"].date_source == "page"
    # the page's own time, not the day's midnight (which sorted it before the feed-dated original
    # of a wire story, so the copy won the dedup)
    assert got["mixed/undated-page"].published_at == during_d(0.2)
    assert got["mixed/undated-none"].date_source == "fetch" and got["mixed/undated-none"].published_at == got["mixed/undated-none"].fetched_at
    assert got["mixed/future"].date_source == "page"  # the feed's future date is not trusted
    assert got["news/0"].date_source == "feed" and all(a.date == D for a in got.values())
    s = bad_run["first"]
    assert s.out_of_window == 1 and s.future_dated == 1 and s.undated == 2
    assert "news/old" not in got and bad_run["hits1"].get("/news/old", 0) == 0


def test_syndicated_copies_count_once_and_cap_holds(bad_run):
    s = bad_run["first"]
    got = stored(bad_run["ws"])
    assert s.duplicates["exact"] == 1 and s.duplicates["near"] == 1
    assert "wire/fresh" in got and "wire/exact" not in got and "wire/near" not in got
    assert sum(1 for k in got if k.startswith("many/")) == 3
    assert s.over_budget == 2 and s.over_cap == 3  # 3 x fetch_factor 2 fetched, 3 kept
    assert s.stored == len(got) == s.stored_total
    a = got["news/1"]
    assert a.extractor.startswith("trafilatura==") and a.source_name == "News" and a.category == "test"
    assert a.language == "en" and a.author and a.canonical_url.endswith("/news/1")


def test_second_run_resumes_with_conditional_get(bad_run):
    s2 = bad_run["second"]
    assert s2.stored == 0 and s2.stored_total == bad_run["first"].stored_total
    assert s2.feeds_not_modified == 1 and s2.resumed > 0
    # the cached body of the 304 is read as the RSS it was served as, not as a malformed feed
    assert s2.feeds_bozo == bad_run["first"].feeds_bozo
    h1, h2 = bad_run["hits1"], bad_run["hits2"]
    refetched = {p for p in h2 if p.startswith(("/news/", "/wire/", "/mixed/", "/many/")) and h2[p] != h1.get(p, 0)}
    assert refetched == {"/mixed/hang"}  # only the transient failure is tried again


def test_replay_rebuilds_the_same_articles(bad_run):
    live, replayed = stored(bad_run["ws"]), stored(bad_run["replay_ws"])
    assert live == replayed
    r = bad_run["replayed"]
    assert r.mode == "replay" and r.feeds_ok == 5 and r.stored == len(live)


def test_all_feeds_failing_is_an_error_that_keeps_the_summary(tmp_path):
    with WebServer() as web:
        feeds = tmp_path / "f.toml"
        feeds.write_text(f'[[outlet]]\nid = "a"\nurl = "{web.url("/nope.xml")}"\n')
        with pytest.raises(IngestError, match="all 1 feeds failed") as e:
            run_ingest(D, Workspace(tmp_path), feeds=feeds, config=fast_ingest_config())
        assert e.value.summary.feeds_failed == 1


def test_argument_errors(tmp_path):
    ws = Workspace(tmp_path)
    with pytest.raises(NotFoundError, match="no such WARC file"):
        run_ingest(D, ws, replay=tmp_path / "x.warc.gz", config=fast_ingest_config())
    with pytest.raises(ConfigError, match="cannot be used together"):
        run_ingest(D, ws, replay=tmp_path / "x", import_file=tmp_path / "y", config=fast_ingest_config())
    with pytest.raises(ConfigError, match="no such feed list"):
        run_ingest(D, ws, feeds=tmp_path / "none.toml", config=fast_ingest_config())


def test_a_second_run_of_the_same_date_is_refused_while_one_runs(tmp_path):
    fcntl = pytest.importorskip("fcntl")
    ws = Workspace(tmp_path)
    lock = ws.data_dir / "locks" / f"ingest-{D.isoformat()}.lock"
    lock.parent.mkdir(parents=True)
    dump = tmp_path / "d.json"
    dump.write_text("[]")
    with open(lock, "a+") as f:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)
        with pytest.raises(LockedError, match="another okgen process is ingesting"):
            run_ingest(D, ws, import_file=dump, config=fast_ingest_config())
    assert run_ingest(D, ws, import_file=dump, config=fast_ingest_config()).stored == 0  # free again


def test_import_with_mapping_dedup_and_resume(tmp_path):
    arts, _ = make_articles(6, D, days=2, seed=21, facts_per_article=6)
    recs = [{"headline": a.title, "body": a.text, "link": a.url, "meta": {"ts": a.published_at.isoformat()}, "outlet": a.source}
            for a in arts]
    base, art = next((r, a) for r, a in zip(recs, arts) if a.date == D)
    recs.append({**base, "link": base["link"] + "?utm_source=dump"})  # the same article again
    recs.append({"headline": "copy", "body": "Copy: " + art.text, "link": "https://other.org/copy",
                 "meta": {"ts": base["meta"]["ts"]}, "outlet": "other"})  # a near copy elsewhere
    dump = tmp_path / "dump.jsonl"
    dump.write_text("\n".join(json.dumps(r) for r in recs) + "\nnot json\n")
    mapping = {"title": "headline", "text": "body", "url": "link", "date": "meta.ts", "source": "outlet"}
    ws = Workspace(tmp_path / "ws")
    cfg = fast_ingest_config()
    s = run_ingest(D, ws, import_file=dump, import_mapping=mapping, config=cfg)
    on_d = [a for a in arts if a.date == D]
    assert s.stored == len(on_d) and s.out_of_window == 6 - len(on_d)
    assert s.import_failed["bad_json"] == 1 and s.duplicates["url"] == 1 and s.duplicates["near"] == 1
    with ArticleStore(ws.db_path) as store:
        got = store.articles_for_date(D)
    assert {a.url for a in got} == {a.url for a in on_d}
    assert all(a.date_source == "import" and a.extractor.startswith("okgen-import") for a in got)
    again = run_ingest(D, ws, import_file=dump, import_mapping=mapping, config=cfg)
    assert again.stored == 0 and again.resumed == len(on_d) + 1  # the stored ones and the near copy
    with pytest.raises(ConfigError, match="none of the"):
        run_ingest(D, ws, import_file=dump, import_mapping={"text": "nothing"}, config=cfg)


def test_a_wrong_mapping_warns_a_few_records_then_counts_the_rest(tmp_path, caplog):
    """Every record failing for one reason (a wrong --map) gives five lines and a count, not one per record."""
    dump = tmp_path / "d.jsonl"
    dump.write_text("".join(json.dumps({"title": f"t{i}", "text": "some words", "url": f"https://x.example/{i}",
                                        "date": f"{D}T08:00:00Z"}) + "\n" for i in range(40)))
    ws = Workspace(tmp_path / "ws")
    with caplog.at_level("WARNING", logger="okgen.ingest.pipeline"), pytest.raises(ConfigError, match="none of the 40"):
        run_ingest(D, ws, import_file=dump, import_mapping={"text": "nothing"}, config=fast_ingest_config())
    lines = [r.getMessage() for r in caplog.records if r.name == "okgen.ingest.pipeline"]
    assert len(lines) == 6 and lines[-1] == "d.jsonl: 35 more record(s) failed with missing_text", lines


def test_a_page_two_outlets_list_goes_to_the_same_one_whatever_feed_answers_first(tmp_path):
    """Whichever feed answers first: the outlet first in the list's canonical order (by id) gets the
    shared page, and a replay of the capture stores the same record; before, the outlet whose feed
    answered first took it."""
    arts, _ = make_articles(2, D, days=1, seed=21, facts_per_article=6)
    with WebServer() as web:
        u = web.url
        web.set("/shared/1", page(arts[0], published=during_d(0.3)))
        web.set("/own/2", page(arts[1], published=during_d(0.4)))
        slow = rss([{"title": "Shared story (slow outlet)", "link": u("/shared/1"), "published": during_d(0.3)}])
        fast = rss([{"title": "Shared story (fast outlet)", "link": u("/shared/1"), "published": during_d(0.3)},
                    {"title": arts[1].title, "link": u("/own/2"), "published": during_d(0.4)}])
        web.set("/feeds/slow.xml", Route(body=slow, content_type="application/rss+xml", delay=0.3))
        web.set("/feeds/fast.xml", Route(body=fast, content_type="application/rss+xml"))
        feeds = tmp_path / "feeds.toml"
        feeds.write_text("".join(f'[[outlet]]\nid = "{i}"\nname = "{i}"\ncategory = "test"\nlanguage = "en"\n'
                                 f'url = "{u(p)}"\n\n' for i, p in (("beta", "/feeds/fast.xml"), ("alpha", "/feeds/slow.xml"))))
        ws = Workspace(tmp_path / "ws")
        first = run_ingest(D, ws, feeds=feeds, config=fast_ingest_config(**CFG))
    got = stored(ws)
    assert got["shared/1"].source == "alpha" and got["shared/1"].title == "Shared story (slow outlet)"
    assert got["own/2"].source == "beta" and first.duplicate_entries == 1
    replay_ws = Workspace(tmp_path / "replay")
    run_ingest(D, replay_ws, replay=first.warc, config=fast_ingest_config(**CFG))
    again = stored(replay_ws)["shared/1"]
    fields = ("id", "source", "title", "published_at", "date_source", "text_sha256")
    assert [getattr(again, f) for f in fields] == [getattr(got["shared/1"], f) for f in fields]


def test_a_malformed_feed_read_as_recovered_is_said(tmp_path, caplog):
    """A feed feedparser reads despite a fault (an unescaped '&') counts as ok, and the run says it
    was malformed: a warning naming it and a count in the summary."""
    arts, _ = make_articles(1, D, days=1, seed=23, facts_per_article=6)
    with WebServer() as web:
        web.set("/a/1", page(arts[0], published=during_d(0.3)))
        body = rss([{"title": "Harbour news", "link": web.url("/a/1"), "published": during_d(0.3)}])
        web.set("/feeds/amp.xml", Route(body=body.replace("Harbour news", "Harbour & ferry news"),
                                        content_type="application/rss+xml"))
        feeds = tmp_path / "feeds.toml"
        feeds.write_text(f'[[outlet]]\nid = "amp"\nname = "Amp"\ncategory = "test"\nlanguage = "en"\n'
                         f'url = "{web.url("/feeds/amp.xml")}"\n')
        with caplog.at_level("WARNING", logger="okgen.ingest"):
            s = run_ingest(D, Workspace(tmp_path / "ws"), feeds=feeds, config=fast_ingest_config(**CFG))
    assert s.feeds_ok == 1 and s.feeds_bozo == 1 and s.stored == 1
    assert any("is malformed" in r.getMessage() and "amp.xml" in r.getMessage() for r in caplog.records)
    assert "(1 malformed, read as recovered)" in dict(s.rows())["feeds ok / failed"]


def test_a_canonical_link_to_the_home_page_does_not_merge_articles(tmp_path):
    """A CMS that gives every article rel=canonical of the home page made them share one id:
    only the first was stored, the rest dropped as copies (on later days too)."""
    from okgen.ingest.live import trusted_canonical

    arts, _ = make_articles(3, D, days=1, seed=29, facts_per_article=6)
    with WebServer() as web:
        home = web.url("/")
        for i, a in enumerate(arts):
            web.set(f"/cms/{i}", Route(body=article_html(a.title, a.text, published=during_d(0.2 + i / 10),
                                                        canonical=home if i else web.url("/news/")),
                                       content_type="text/html"))
        body = rss([{"title": a.title, "link": web.url(f"/cms/{i}"), "published": during_d(0.2 + i / 10)}
                    for i, a in enumerate(arts)])
        web.set("/feeds/cms.xml", Route(body=body, content_type="application/rss+xml"))
        feeds = tmp_path / "feeds.toml"
        feeds.write_text(f'[[outlet]]\nid = "cms"\nname = "Cms"\ncategory = "test"\nlanguage = "en"\n'
                         f'url = "{web.url("/feeds/cms.xml")}"\n')
        s = run_ingest(D, Workspace(tmp_path / "ws"), feeds=feeds, config=fast_ingest_config(**CFG))
    assert s.stored == 3 and not s.duplicates
    assert trusted_canonical("https://a.example/story-1", "https://a.example/amp/story-1?utm_source=x")
    assert not trusted_canonical("https://a.example/", "https://a.example/2026/11/30/story")
    assert not trusted_canonical("https://a.example/news/", "https://a.example/news/2026/story")
    assert not trusted_canonical("https://b.example/story-1", "https://a.example/story-1")
    assert trusted_canonical("https://a.example/article/123456", "https://a.example/article/123456/new-title")
    for section in ("/world/europe", "/us-news", "/world/middle-east", "/2026/11/30", "/news/2026"):
        assert not trusted_canonical(f"https://a.example{section}", f"https://a.example{section}/story-9"), section


def test_a_replay_reads_every_capture_of_a_feed(tmp_path):
    """A day ingested in two runs, with a story leaving the feed between them: the replay of the
    day's capture stores it too (it read only the last capture of each feed, and lost it)."""
    arts, _ = make_articles(3, D, days=1, seed=31, facts_per_article=6)
    with WebServer() as web:
        for i, a in enumerate(arts):
            web.set(f"/roll/{i}", page(a, published=during_d(0.2 + i / 10)))
        items = [{"title": a.title, "link": web.url(f"/roll/{i}"), "published": during_d(0.2 + i / 10)}
                 for i, a in enumerate(arts)]
        web.set("/feeds/roll.xml", Route(body=rss(items[:2]), content_type="application/rss+xml"))
        feeds = tmp_path / "feeds.toml"
        feeds.write_text(f'[[outlet]]\nid = "roll"\nname = "Roll"\ncategory = "test"\nlanguage = "en"\n'
                         f'url = "{web.url("/feeds/roll.xml")}"\n')
        ws = Workspace(tmp_path / "ws")
        first = run_ingest(D, ws, feeds=feeds, config=fast_ingest_config(**CFG))
        web.set("/feeds/roll.xml", Route(body=rss(items[1:]), content_type="application/rss+xml"))  # story 0 rolled out
        second = run_ingest(D, ws, feeds=feeds, config=fast_ingest_config(**CFG))
    assert (first.stored, second.stored, second.stored_total) == (2, 1, 3)
    replayed = run_ingest(D, Workspace(tmp_path / "replay"), replay=first.warc, config=fast_ingest_config(**CFG))
    assert replayed.stored == 3 and set(stored(Workspace(tmp_path / "replay"))) == set(stored(ws))


def test_a_dead_link_to_a_story_falls_back_to_another_feeds_link(tmp_path):
    """Two feeds link one story (canonically the same URL): the first claimant's AMP link 404s,
    and the story was lost though the other feed's link answered."""
    arts, _ = make_articles(1, D, days=1, seed=37, facts_per_article=6)
    a = arts[0]
    with WebServer() as web:
        web.set("/story/harbour", page(a, published=during_d(0.3)))
        web.set("/story/harbour/amp", Route(status=404, body=b"gone"))
        for name, link in (("alpha", "/story/harbour/amp"), ("beta", "/story/harbour")):
            web.set(f"/feeds/{name}.xml", Route(body=rss([{"title": a.title, "link": web.url(link),
                                                            "published": during_d(0.3)}]),
                                                content_type="application/rss+xml"))
        feeds = tmp_path / "feeds.toml"
        feeds.write_text("".join(f'[[outlet]]\nid = "{n}"\nname = "{n}"\ncategory = "test"\nlanguage = "en"\n'
                                 f'url = "{web.url(f"/feeds/{n}.xml")}"\n\n' for n in ("alpha", "beta")))
        s = run_ingest(D, Workspace(tmp_path / "ws"), feeds=feeds, config=fast_ingest_config(**CFG))
    assert s.stored == 1 and not s.fetch_failed, (s.stored, dict(s.fetch_failed))
    got = stored(Workspace(tmp_path / "ws"))
    assert list(got) == ["story/harbour"] and got["story/harbour"].source == "alpha"
