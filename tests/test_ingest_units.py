"""Unit tests of the ingest building blocks: feed lists, URLs, dedup, filters, charsets, config,
feed parsing, address policy, retry waits, WARC repair, the importer and the article store."""

from __future__ import annotations

import datetime as dt
import gzip
import ipaddress
import json
import logging
import random
from pathlib import Path

import pytest

from okgen.errors import ConfigError
from okgen.hashing import sha256_text
from okgen.ingest import netpolicy
from okgen.ingest.config import IngestConfig, config_for, make_config
from okgen.ingest.dedup import (
    NearDupIndex,
    canonicalize_url,
    jaccard,
    minhash_signature,
    norm_text_hash,
)
from okgen.ingest.extract import decode_html, extract_page
from okgen.ingest.feeds import load_feed_list, parse_feed
from okgen.ingest.filters import apply_filters, detect_language
from okgen.ingest.importer import (
    ImportFormatError,
    make_mapping,
    parse_date,
    parse_mapping_options,
    read_dump,
)
from okgen.ingest.store import ArticleStore
from okgen.ingest.warc import WarcArchive, WarcError, WarcWriter, repair_warc
from okgen.schema import Article, article_id
from okgen.settings import Workspace
from okgen.testing.corpus import make_articles
from okgen.testing.news_site import article_html

FIX = Path(__file__).parent / "fixtures" / "ingest"
D = dt.date(2024, 5, 1)
ALL_FILTERS = ("video", "live_blog", "cookie_wall", "paywall", "too_short", "wrong_language")


# ------------------------------------------------------------------------------ feed lists
def test_default_feed_list_covers_the_okbench_outlets():
    fl = load_feed_list()
    ids = {o.id for o in fl.outlets}
    expected = {"cnn", "bbc", "reuters", "guardian", "foxnews", "nbcnews", "usatoday", "huffpost", "cbsnews",
                "aljazeera", "dw", "rt", "cna", "timesofindia", "scmp", "politico", "thehill", "npr", "techcrunch",
                "theverge", "engadget", "arstechnica", "gizmodo", "pcgamer", "techradar", "bloomberg", "gq",
                "vanityfair", "wikinews"}
    assert expected <= ids
    for o in fl.outlets:
        assert o.feeds and all(u.startswith(("http://", "https://")) for u in o.feeds)
        assert o.category and o.language == "en"
    assert len(fl.hash) == 64 and fl.hash == load_feed_list().hash


def test_toml_feed_list_and_hash_ignores_order(tmp_path):
    fl = load_feed_list(FIX / "feeds.toml")
    assert [o.id for o in fl.outlets] == ["bbc", "dw", "lemonde"]
    assert fl.get("dw").max_per_day == 2 and fl.get("bbc").max_per_day == 5
    assert fl.get("lemonde").language == "fr" and len(fl.get("lemonde").feeds) == 2
    text = (FIX / "feeds.toml").read_text()
    blocks = text.split("[[outlet]]")
    reordered = tmp_path / "r.toml"
    reordered.write_text(blocks[0] + "[[outlet]]" + blocks[3] + "\n[[outlet]]" + blocks[1] + "\n[[outlet]]" + blocks[2])
    assert load_feed_list(reordered).hash == fl.hash
    edited = tmp_path / "e.toml"
    edited.write_text(text.replace("max_per_day = 2", "max_per_day = 3"))
    assert load_feed_list(edited).hash != fl.hash


def test_opml_feed_list():
    fl = load_feed_list(FIX / "feeds.opml")
    bbc = fl.get("bbc-news")
    assert bbc is not None and len(bbc.feeds) == 2 and bbc.category == "mainstream"
    ars = fl.get("ars-technica")
    assert ars.max_per_day == 3 and ars.category == "technology"
    heise = fl.get("heise")
    assert heise.language == "de" and heise.category == "german"


@pytest.mark.parametrize("content, message", [
    ("[[outlet]]\nid = 'x'\n", "no feed URL"),
    ("[[outlet]]\nid = 'x'\nurl = 'ftp://a/b'\n", "not http"),
    ("[[outlet]]\nid = 'Bad Id'\nurl = 'http://a/b'\n", "must be lowercase"),
    ("[[outlet]]\nid = 'x'\nurl = 'http://a/b'\n[[outlet]]\nid = 'x'\nurl = 'http://a/c'\n", "duplicate id"),
    ("[[outlet]]\nid = 'x'\nurl = 'http://a/b'\ncolour = 'red'\n", "unknown key"),
    ("[[outlet]]\nid = 'x'\nurl = 'http://a/b'\nmax_per_day = 0\n", "max_per_day"),
    ("[[outlet]]\nid = 'x'\nurl = 'http://a/b'\nmax_per_day = true\n", "max_per_day"),
    ("[[outlet]]\nid = 'x'\nfeeds = 5\n", "a list of URLs"),
    ("[[outlet]]\nid = 'x'\nfeeds = ['http://a/b', 3]\n", "a list of URLs"),
    ("[[outlet]]\nid = 'x'\nurl = 'http://[::1/feed'\n", "not http"),
    ("title = 'no outlets'\n", "no [[outlet]]"),
    ("[[outlet]\n", "invalid TOML"),
])
def test_bad_toml_feed_lists(tmp_path, content, message):
    p = tmp_path / "feeds.toml"
    p.write_text(content)
    with pytest.raises(ConfigError, match=message.replace("[", r"\[")):
        load_feed_list(p)


def test_feed_list_not_utf8_is_one_line(tmp_path):
    p = tmp_path / "feeds.toml"
    p.write_bytes(b"\xff\xfe[[outlet]]\nid = 'x'\n")
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_feed_list(p)


def test_bad_opml_and_missing_list(tmp_path):
    with pytest.raises(ConfigError, match="no such feed list"):
        load_feed_list(tmp_path / "nope.toml")
    bad = tmp_path / "x.opml"
    bad.write_text("<opml><body><outline text='a'")
    with pytest.raises(ConfigError, match="invalid OPML"):
        load_feed_list(bad)
    empty = tmp_path / "y.opml"
    empty.write_text("<opml version='2.0'><body><outline text='folder'/></body></opml>")
    with pytest.raises(ConfigError, match="no outline with an xmlUrl"):
        load_feed_list(empty)


# ------------------------------------------------------------------------------ feed parsing
def test_parse_feed_good_malformed_empty_and_html():
    items = "".join(
        f"<item><title>Story {i}</title><link>http://a.org/s/{i}</link><pubDate>Wed, 01 May 2024 0{i}:00:00 GMT</pubDate></item>"
        for i in range(3))
    good = f'<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>{items}<item><title>no link</title></item></channel></rss>'
    r = parse_feed("a", "http://a.org/feed", good.encode(), content_type="application/rss+xml")
    assert r.ok and len(r.entries) == 3
    assert r.entries[1].published_at == dt.datetime(2024, 5, 1, 1, tzinfo=dt.timezone.utc)
    bad = parse_feed("a", "http://a.org/feed", (FIX / "malformed.xml").read_bytes(), content_type="application/rss+xml")
    assert not bad.ok and bad.bozo and "malformed feed" in bad.error
    empty = parse_feed("a", "http://a.org/feed", (FIX / "empty.xml").read_bytes(), content_type="application/rss+xml")
    assert empty.ok and empty.entries == ()
    html = parse_feed("a", "http://a.org/feed", (FIX / "nav_only.html").read_bytes(), content_type="text/html")
    assert not html.ok
    blank = parse_feed("a", "http://a.org/feed", b"  \n")
    assert not blank.ok and "empty" in blank.error


def test_parse_feed_relative_links_and_atom():
    atom = ('<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>t</title><id>x</id>'
            '<entry><title>One</title><link href="/news/1"/><id>u1</id><updated>2024-05-01T10:00:00+02:00</updated></entry></feed>')
    r = parse_feed("a", "http://a.org/feed", atom.encode(), final_url="http://a.org/feeds/atom", content_type="application/atom+xml")
    assert r.ok and r.entries[0].url == "http://a.org/news/1"
    assert r.entries[0].published_at == dt.datetime(2024, 5, 1, 8, tzinfo=dt.timezone.utc)


# ------------------------------------------------------------------------------ URLs and dedup
@pytest.mark.parametrize("url, canonical", [
    ("https://WWW.Example.com:443/a/b/?utm_source=x&id=2#top", "https://example.com/a/b?id=2"),
    ("https://amp.example.com/world/story", "https://example.com/world/story"),
    ("https://example.com/world/story/amp/", "https://example.com/world/story"),
    ("https://example.com/world/story.amp", "https://example.com/world/story"),
    ("https://example.com/amp/world/story", "https://example.com/world/story"),
    ("https://m.example.com/world/story?outputType=amp", "https://example.com/world/story"),
    ("http://example.com:80/x?b=2&a=1&fbclid=zz&gclid=1", "http://example.com/x?a=1&b=2"),
    ("http://example.com:8080/x/", "http://example.com:8080/x"),
    ("https://example.com", "https://example.com/"),
    ("https://example.com/story?id=7&ns_campaign=rss&ito=1", "https://example.com/story?id=7"),
])
def test_canonicalize_url(url, canonical):
    assert canonicalize_url(url) == canonical
    assert canonicalize_url(canonical) == canonical


def test_exact_and_near_duplicates():
    arts, _ = make_articles(3, D, days=1, seed=3)
    a, b = arts[0].text, arts[1].text
    assert norm_text_hash(a) == norm_text_hash("  " + a.upper().replace(" ", "  ") + "\n")
    assert norm_text_hash(a) != norm_text_hash(b)
    wire = "LONDON (Wire) - " + a + " Additional reporting by a staff writer."
    sa, sw, sb = (minhash_signature(t) for t in (a, wire, b))
    assert jaccard(sa, sw) > 0.8 > jaccard(sa, sb)
    index = NearDupIndex(threshold=0.8)
    index.add("a", sa)
    index.add("b", sb)
    hit = index.query(sw)
    assert hit is not None and hit[0] == "a"
    assert index.query(minhash_signature(arts[2].text)) is None
    assert minhash_signature(a) == minhash_signature(a)  # stable across calls (fixed seed)


# ------------------------------------------------------------------------------ filters, language
def test_language_detection():
    en, _ = make_articles(1, D, seed=1)
    assert detect_language(en[0].text) == "en"
    de = ("Die Regierung hat am Mittwoch angekündigt, dass sie die Steuern für kleine Unternehmen senken wird. "
          "Der Minister sagte, dass die Maßnahme im nächsten Jahr in Kraft treten soll und dass sie auch für die "
          "Länder gelten wird, die bisher nicht an dem Programm teilgenommen haben.")
    assert detect_language(de) == "de"
    assert detect_language("Москва заявила, что переговоры продолжатся на следующей неделе в Женеве.") == "ru"
    assert detect_language("too short") is None


def _page(name: str, url: str) -> dict:
    return extract_page((FIX / name).read_bytes(), url)


@pytest.mark.parametrize("name, reason", [
    ("nav_only.html", {"no_content", "too_short"}),
    ("video.html", {"video"}),
    ("live_blog.html", {"live_blog"}),
    ("paywall.html", {"paywall"}),
    ("cookie_wall.html", {"cookie_wall"}),
])
def test_boilerplate_pages_are_filtered_with_reasons(name, reason):
    url = f"https://example.com/news/{name.split('.')[0]}"
    got = apply_filters(_page(name, url), url=url, title=None, expected_languages=["en"], min_words=120,
                        paywall_max_words=400, enabled=ALL_FILTERS)
    assert got in reason


def test_real_article_passes_and_wrong_language_is_caught():
    arts, _ = make_articles(1, D, seed=5, facts_per_article=6)
    url = "https://example.com/news/story"
    page = extract_page(article_html(arts[0].title, arts[0].text, author="Ann Lee").encode(), url)
    assert page["words"] > 100 and page["language"] == "en" and page["author"] == "Ann Lee"
    kw = dict(url=url, title=arts[0].title, min_words=100, paywall_max_words=400, enabled=ALL_FILTERS)
    assert apply_filters(page, expected_languages=["en"], **kw) is None
    assert apply_filters(page, expected_languages=["de"], **kw) == "wrong_language"
    assert apply_filters(page, expected_languages=[], **kw) is None
    assert apply_filters(page, expected_languages=["en"], **{**kw, "min_words": 10_000}) == "too_short"
    assert apply_filters(page, expected_languages=["en"], **{**kw, "title": "Live: election night"}) == "live_blog"


# ------------------------------------------------------------------------------ charsets
def test_extraction_workers_leave_ctrl_c_to_the_parent():
    import signal

    from okgen.ingest.extract import ExtractOptions, Extractor

    # Ctrl-C goes to the whole process group; the parent stops the run and closes the pool.
    with Extractor(1, ExtractOptions()) as ex:
        assert ex._pool.submit(signal.getsignal, signal.SIGINT).result(timeout=60) == signal.SIG_IGN


def test_decode_wrong_and_missing_charsets():
    text = ("<html><body><p>Le président a annoncé mercredi une réforme du système de santé, qui prévoit la création "
            "de nouveaux hôpitaux dans les régions rurales. Selon le ministère, les travaux débuteront dès l'été "
            "prochain et coûteront près de deux milliards d'euros. Les syndicats ont salué une « étape importante ».</p>"
            "</body></html>")
    utf8, cp = text.encode("utf-8"), text.encode("cp1252")
    assert decode_html(utf8, "iso-8859-1") == (text, "utf-8")  # header lies, UTF-8 wins
    assert decode_html(cp, "utf-8")[0] == text  # header lies the other way
    assert decode_html(cp, None)[0] == text  # no charset anywhere
    assert decode_html(cp, "latin-1") == (text, "cp1252")  # latin-1 label means windows-1252
    meta = b'<html><head><meta charset="windows-1252"></head><body>' + "Café".encode("cp1252") + b"</body></html>"
    assert "Café" in decode_html(meta, None)[0]
    assert decode_html(b"\xef\xbb\xbf<p>x</p>", None) == ("<p>x</p>", "utf-8")
    assert decode_html("<p>é</p>".encode("utf-16"), None)[0] == "<p>é</p>"
    pl = ("<p>Rząd ogłosił w środę, że od przyszłego roku zmniejszy podatki dla małych firm. Minister powiedział, "
          "że zmiana obejmie również przedsiębiorców, którzy dotąd nie korzystali z programu wsparcia.</p>")
    assert decode_html(pl.encode("cp1250"), None)[0] == pl


# ------------------------------------------------------------------------------ config
def test_config_defaults_workspace_and_errors(tmp_path):
    ws = Workspace(tmp_path)
    assert config_for(ws) == IngestConfig()
    (tmp_path / "okgen.toml").write_text('[ingest]\ntimezone = "Europe/Berlin"\nmax_per_outlet = 7\n'
                                         'allow_networks = ["loopback", "10.0.0.0/8"]\n')
    cfg = config_for(ws)
    assert cfg.max_per_outlet == 7 and cfg.local_date(dt.datetime(2024, 4, 30, 23, tzinfo=dt.timezone.utc)) == D
    assert cfg.day_start(D) == dt.datetime(2024, 4, 30, 22, tzinfo=dt.timezone.utc)
    assert cfg.content_hash != IngestConfig().content_hash
    assert make_config(concurrency=3).content_hash == IngestConfig().content_hash  # speed is not content
    (tmp_path / "okgen.toml").write_text("[ingest]\nconcurency = 3\n")
    with pytest.raises(ConfigError, match="concurency: unknown key"):
        config_for(ws)
    for bad in ({"timezone": "Mars/Base"}, {"allow_networks": ["intranet"]}, {"concurrency": 0}):
        with pytest.raises(ConfigError):
            make_config(bad)
    with pytest.raises(ConfigError, match="filters: .*unknown filter 'vidoe'"):
        make_config({"filters": ["vidoe", "paywall"]})
    assert make_config({"filters": ["paywall"]}).filters == ("paywall",)


# ------------------------------------------------------------------------------ network policy
@pytest.mark.parametrize("ip, allow, refused", [
    ("127.0.0.1", (), "loopback"), ("127.0.0.1", ("loopback",), None), ("::1", (), "loopback"),
    ("10.1.2.3", (), "private"), ("192.168.0.5", ("private",), None), ("169.254.169.254", (), "link-local"),
    ("169.254.169.254", ("link-local",), None), ("0.0.0.0", (), "non-public"), ("100.64.0.1", (), "non-public"),
    ("::ffff:127.0.0.1", (), "loopback"), ("10.9.9.9", ("10.0.0.0/8",), None), ("93.184.216.34", (), None),
])
def test_address_policy(ip, allow, refused):
    assert netpolicy.AddressPolicy(allow).refusal(ipaddress.ip_address(ip)) == refused


def test_retry_waits():
    rng = random.Random(0)
    waits = [netpolicy.backoff(n, 1.0, 8.0, rng) for n in range(1, 7)]
    for n, w in enumerate(waits, 1):
        b = min(8.0, 2 ** (n - 1))
        assert b / 2 <= w <= b
    assert netpolicy.parse_retry_after("7") == 7.0
    assert netpolicy.parse_retry_after("Wed, 01 May 2024 00:00:10 GMT", now=dt.datetime(2024, 5, 1, tzinfo=dt.timezone.utc).timestamp()) == 10.0
    assert netpolicy.parse_retry_after("soon") is None
    assert netpolicy.sniff_not_html((FIX / "report.pdf").read_bytes()) == "binary payload (PDF)"
    assert netpolicy.sniff_not_html((FIX / "image.png").read_bytes()) == "binary payload (PNG image)"
    assert netpolicy.sniff_not_html(b"<html>") is None
    assert netpolicy.charset_of('text/html; charset="ISO-8859-1"') == "iso-8859-1"


# ------------------------------------------------------------------------------ WARC
def test_warc_partial_record_is_repaired(tmp_path):
    p = tmp_path / "day.warc.gz"
    now = dt.datetime(2024, 5, 1, 12, tzinfo=dt.timezone.utc)
    with WarcWriter(p) as w:
        for i in range(3):
            w.submit_response(f"http://a.org/{i}", 200, "OK", [("Content-Type", "text/html")], b"<p>%d</p>" % i,
                              fetched_at=now, kind="article").result()
    whole = p.stat().st_size
    with open(p, "ab") as f:  # a killed run's half-written record
        f.write(gzip.compress(b"WARC/1.1\r\nWARC-Type: response\r\n" + random.randbytes(5000))[:300])
    assert repair_warc(p) > 0 and p.stat().st_size == whole
    with WarcWriter(p) as w:
        w.submit_response("http://a.org/9", 301, "Moved", [("Location", "/0")], b"", fetched_at=now, kind="article").result()
    arch = WarcArchive(p)
    assert sorted(arch.responses) == [f"http://a.org/{i}" for i in (0, 1, 2, 9)]
    assert arch.lookup("http://a.org/1").body() == b"<p>1</p>" and arch.lookup("http://a.org/1").date == now
    bad = tmp_path / "bad.warc.gz"
    bad.write_bytes(b"not a warc at all")
    with pytest.raises(WarcError, match="not a WARC file"):
        WarcArchive(bad)
    with pytest.raises(WarcError, match="no such"):
        WarcArchive(tmp_path / "missing.warc.gz")


# ------------------------------------------------------------------------------ importer
def test_importer_mapping_dates_and_bad_records(tmp_path):
    p = tmp_path / "dump.jsonl"
    lines = [
        {"headline": "One", "body": "Text one.", "link": "https://x.org/1", "meta": {"when": "2024-05-01T09:30:00Z"}, "outlet": "X"},
        {"headline": "Two", "body": "Text two.", "link": "https://x.org/2", "meta": {"when": 1714550400}},
        {"headline": "Three", "body": "", "meta": {"when": "2024-05-01"}},
        {"headline": "Four", "body": "Text four.", "meta": {"when": "someday"}},
        {"headline": "Five", "body": "Text five."},
    ]
    p.write_text("\n".join(json.dumps(x) for x in lines[:3]) + "\n{broken json\n" + "\n".join(json.dumps(x) for x in lines[3:]) + "\n")
    mapping = {"title": "headline", "text": "body", "url": "link", "date": "meta.when", "source": "outlet"}
    recs = list(read_dump(p, mapping))
    assert [r.line for r in recs] == [1, 2, 3, 4, 5, 6]
    assert recs[0].fields["title"] == "One" and recs[0].fields["source"] == "X"
    assert recs[0].published_at == dt.datetime(2024, 5, 1, 9, 30, tzinfo=dt.timezone.utc)
    assert recs[1].published_at == dt.datetime(2024, 5, 1, 8, tzinfo=dt.timezone.utc)
    assert [(r.error or "").split(":")[0] for r in recs[2:]] == ["missing_text", "bad_json", "bad_date", "missing_date"]
    assert parse_date("2024-05-01")[1] is True
    assert parse_date("Wed, 01 May 2024 10:00:00 +0200")[0] == dt.datetime(2024, 5, 1, 8, tzinfo=dt.timezone.utc)
    with pytest.raises(ConfigError, match="unknown field"):
        make_mapping({"headline": "title"})
    with pytest.raises(ConfigError, match="FIELD=KEY"):
        parse_mapping_options(["title"])
    j = tmp_path / "dump.json"
    j.write_text(json.dumps({"articles": [{"title": "A", "text": "B", "date": "2024-05-01"}]}))
    assert [r.fields["title"] for r in read_dump(j)] == ["A"]
    for content, msg in ((b"", "empty"), (b"[1, 2", "not valid JSON"), (b"\xff\xfe\x00bad", "not UTF-8"), (b'"text"', "expected a list"),
                         (b"# News dump\n\nRecords follow.\n", "neither JSON nor JSONL"),
                         (b'{"articles": [\n  {"title": "A",\n   "text" "B"}\n]}\n', r"not valid JSON \(line 3")):
        bad = tmp_path / "bad.json"
        bad.write_bytes(content)
        with pytest.raises(ImportFormatError, match=msg):
            list(read_dump(bad))


def test_a_broken_first_line_of_a_dump_loses_only_that_record(tmp_path):
    dump = tmp_path / "dump.json"  # JSONL content under a .json name, as dumps often come
    dump.write_text('{"title": "One", "text": "Text one." BROKEN\n'
                    + json.dumps({"title": "Two", "text": "Text two.", "date": "2024-05-01"}) + "\n")
    recs = list(read_dump(dump))
    assert [(r.line, (r.error or "").split(":")[0]) for r in recs] == [(1, "bad_json"), (2, "")]
    assert recs[1].fields["title"] == "Two"


def test_an_empty_list_imports_nothing_and_says_so(tmp_path, caplog):
    empty = tmp_path / "empty.json"
    empty.write_text("[]")
    with caplog.at_level(logging.WARNING, logger="okgen.ingest.importer"):
        assert list(read_dump(empty)) == []
    assert any("no record (an empty list)" in r.getMessage() for r in caplog.records)


def test_a_dump_that_is_not_json_is_refused_before_the_store_is_opened(tmp_path):
    from okgen.ingest.pipeline import run_ingest

    ws = Workspace(tmp_path / "ws")
    bad = tmp_path / "bad.json"
    bad.write_bytes(b"[1, 2")
    with pytest.raises(ImportFormatError, match="not valid JSON"):
        run_ingest(D, ws, import_file=bad)
    assert not ws.db_path.exists()  # refused before the store (shared by the whole workspace) is opened
    good = tmp_path / "good.json"
    good.write_text(json.dumps([{"title": "Harbour strike ends", "text": "The strike at the port ended. " * 40,
                                 "url": "https://example.org/strike", "date": D.isoformat(), "source": "example"}]))
    assert run_ingest(D, ws, import_file=good).stored == 1
    with pytest.raises(ImportFormatError):
        run_ingest(D, ws, import_file=bad)
    with ArticleStore(ws.db_path) as store:  # a store that already held articles stays
        assert store.count(D) == 1


# ------------------------------------------------------------------------------ store
def test_article_store_upsert_queries_and_context(tmp_path):
    arts, _ = make_articles(12, D, days=3, seed=2)
    db = tmp_path / "data" / "okgen.sqlite"
    with ArticleStore(db) as store:
        assert all(store.upsert(a) for a in arts)
        assert not any(store.upsert(a) for a in arts)  # idempotent
        changed = arts[0].model_copy(update={"title": "New title"})
        assert store.upsert(changed) and store.get(arts[0].id).title == "New title"
        assert store.count() == 12 and store.count(D) == 4
        assert [a.date for a in store.articles_for_date(D)] == [D] * 4
        between = store.articles_between(D - dt.timedelta(days=2), D)
        assert {a.date for a in between} == {D, D - dt.timedelta(days=1)} and len(between) == 8
        assert store.get("0" * 16) is None
        assert arts[1].id in store.find(arts[1].id[:6])
        assert store.find("zz%") == []
        assert store.dates()[0] == (D, 4)
    text = "A fresh text."
    art = Article(id=article_id("https://x.org/a"), url="https://x.org/a", canonical_url="https://x.org/a", source="x",
                  title="t", published_at=dt.datetime(2024, 5, 1, tzinfo=dt.timezone.utc), date=D,
                  fetched_at=dt.datetime(2024, 5, 1, tzinfo=dt.timezone.utc), text=text, text_sha256=sha256_text(text),
                  extractor="test")
    store = ArticleStore(db)
    assert store.upsert(art) and store.count() == 13
    store.close()


def test_store_prune_working_state_and_old_articles(tmp_path):
    arts, _ = make_articles(9, D, days=3, seed=4)
    with ArticleStore(tmp_path / "db.sqlite") as store:
        for a in arts:
            store.upsert(a)
            store.set_item(a.date, a.canonical_url, a.source, a.url, "stored", article_id=a.id)
            store.log_fetch({"run_id": "r", "date": a.date.isoformat(), "kind": "article", "url": a.url, "status": 200})
        old = D - dt.timedelta(days=1)
        assert store.prune(old, dry_run=True) == {"ingest_items": 3, "fetch_log": 3, "ingest_runs": 0, "articles": 0}
        assert store.count() == 9 and len(store.item_states(D - dt.timedelta(days=2))) == 3
        got = store.prune(old, articles_before=old)
        assert got == {"ingest_items": 3, "fetch_log": 3, "ingest_runs": 0, "articles": 3}
        assert store.count() == 6 and store.item_states(D - dt.timedelta(days=2)) == {}
        assert len(store.fetch_log(run_id="r")) == 6



def test_a_page_is_dated_by_its_metadata_not_by_dates_in_its_text():
    # An undated page naming a year or an event's date: htmldate's extensive search dated it by
    # the text (2019-01-01 for "in 2019", the event's date), and the day's article fell out of
    # the day (out_of_window).
    text = ("Sales fell in 2019 and the talks began on March 3, 2025 in Geneva. The trade body named Monterrey "
            "as the host of its next summit. Local business groups welcomed the announcement. ") * 4
    page = extract_page(article_html("Monterrey to host the summit", text).encode(), "https://example.org/a", None)
    assert page["text"] and page["date"] is None
    dated = extract_page(article_html("Monterrey to host the summit", text,
                                      published=dt.datetime(2026, 3, 4, 9, tzinfo=dt.timezone.utc)).encode(),
                         "https://example.org/b", None)
    assert dated["date"] == "2026-03-04T09:00:00+0000"  # with its time: a midnight made it the day's first


def test_a_read_only_database_reads_its_tables_and_finds_missing_ones_empty(tmp_path):
    """What connect() opens on a read-only workspace (the file as it is, immutable): the tables it
    has are read, a table a verb expects but the workspace never made reads as empty, and a
    write fails with the message describe_os_error turns into one line."""
    import sqlite3

    from okgen.db import connect, ensure_schema
    from okgen.errors import describe_os_error

    db = tmp_path / "okgen.sqlite"
    with connect(db) as conn:
        conn.execute("CREATE TABLE kept (x INTEGER)")
        conn.execute("INSERT INTO kept VALUES (7)")
    conn.close()
    ro = sqlite3.connect(f"file:{db}?immutable=1", uri=True)
    ensure_schema(ro, "CREATE TABLE IF NOT EXISTS kept (x INTEGER);\nCREATE TABLE IF NOT EXISTS runs (id TEXT);\n"
                      "CREATE INDEX IF NOT EXISTS runs_id ON runs (id);")
    assert ro.execute("SELECT x FROM kept").fetchall() == [(7,)]
    assert ro.execute("SELECT id FROM runs").fetchall() == []
    with pytest.raises(sqlite3.OperationalError) as e:
        ro.execute("INSERT INTO kept VALUES (8)")
    assert "read-only" in describe_os_error(e.value)
    # A ';' inside a string, WITHOUT ROWID, and every okgen module's own DDL on an empty database.
    ensure_schema(ro, "CREATE TABLE IF NOT EXISTS notes (k TEXT PRIMARY KEY, v TEXT DEFAULT 'a;b') WITHOUT ROWID;")
    assert ro.execute("SELECT k, v FROM notes").fetchall() == []
    from okgen.daily.state import DDL as daily
    from okgen.generate.store import DDL as generate
    from okgen.ingest.store import DDL as ingest
    from okgen.models.cache import DDL as cache
    from okgen.retrieval.vectors import _SCHEMA as vectors

    empty = tmp_path / "empty.sqlite"
    sqlite3.connect(empty).close()
    ro_empty = sqlite3.connect(f"file:{empty}?immutable=1", uri=True)
    for ddl in (daily, generate, ingest, cache, vectors):
        ensure_schema(ro_empty, ddl)
    assert ro_empty.execute("SELECT COUNT(*) FROM daily_runs").fetchone() == (0,)


def test_pruned_articles_give_their_space_back(tmp_path):
    """gc deleted rows and the file kept its size, the deleted texts still in its free pages,
    without a word: the free space is said, and --compact gives it back."""
    import datetime as dt

    from okgen.daily.gc import collect_garbage
    from okgen.ingest.store import ArticleStore
    from okgen.settings import Workspace
    from okgen.testing.corpus import make_articles

    ws = Workspace(tmp_path / "ws")
    ws.db_path.parent.mkdir(parents=True, exist_ok=True)
    day = dt.date(2025, 1, 10)
    arts, _ = make_articles(120, day, days=1, seed=3, facts_per_article=6)
    with ArticleStore(ws.db_path) as store:
        for a in arts:
            store.upsert(a.model_copy(update={"text": a.text * 20}))
        store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    before = ws.db_path.stat().st_size
    rep = collect_garbage(ws, 1, today=day + dt.timedelta(days=60), articles=True, force=True)
    assert rep.store["articles"] == 120 and rep.free_bytes > before / 2  # said, not yet given back
    # --compact gives it back; never while a daily run holds the workspace.
    from okgen.daily.lock import RunLock
    from okgen.errors import LockedError

    with RunLock(ws.data_dir / "locks" / "daily.lock"):
        with pytest.raises(LockedError, match="okgen gc --compact"):
            collect_garbage(ws, 1, today=day + dt.timedelta(days=60), force=True, compact=True)
    rep = collect_garbage(ws, 1, today=day + dt.timedelta(days=60), force=True, compact=True)
    assert rep.bytes_freed > 0 and rep.free_bytes == 0
    assert ws.db_path.stat().st_size < before / 2
