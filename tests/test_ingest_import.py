"""The dump importer reads the keys common news dumps use."""


def test_common_dump_keys_are_read_without_a_mapping(tmp_path):
    """A news dump with article_text / news_site / link (the news-dev and OKBench dumps) imports
    with no --map option; an explicit mapping still wins."""
    import datetime as dt
    import json

    from okgen.ingest.importer import read_dump

    p = tmp_path / "dump.json"
    p.write_text(json.dumps([{"title": "Harbour opens", "article_text": "The harbour opened on Monday.",
                              "news_site": "bbc", "link": "https://example.org/a", "body": "other"}]))
    rec = next(read_dump(p, None, default_date=dt.date(2025, 4, 12)))
    assert rec.error is None
    assert (rec.fields["text"], rec.fields["source"], rec.fields["url"]) == (
        "The harbour opened on Monday.", "bbc", "https://example.org/a")
    rec = next(read_dump(p, {"text": "body"}, default_date=dt.date(2025, 4, 12)))
    assert rec.fields["text"] == "other"


def test_titles_escaped_twice_are_decoded_and_ampersands_kept(tmp_path):
    """A title whose HTML references survived one round of parsing (The Verge's feed in the
    news-dev dumps: "Baldur&#8217;s Gate 3 ...") is stored decoded, by the importer and the
    feed reader alike; a bare ampersand ("AT&T") and the article text are left as they are."""
    import datetime as dt
    import json

    from okgen.ingest.feeds import _clean
    from okgen.ingest.importer import read_dump

    p = tmp_path / "dump.json"
    p.write_text(json.dumps([
        {"title": "Harbour&#8217;s new pier opens &amp; ferries return", "article_text": "AT&T paid &#8217; here.",
         "news_site": "bbc", "link": "https://example.org/a?id=1&amp;times=3", "author": "Tom &amp; Ann"},
        {"title": "AT&T and P&G report results", "article_text": "Text.", "news_site": "bbc",
         "link": "https://example.org/b"}]))
    recs = list(read_dump(p, None, default_date=dt.date(2025, 4, 12)))
    assert recs[0].fields["title"] == "Harbour\u2019s new pier opens & ferries return"
    assert recs[0].fields["author"] == "Tom & Ann"
    assert recs[0].fields["url"] == "https://example.org/a?id=1&amp;times=3"  # a link is kept as written (its id)
    assert recs[0].fields["text"] == "AT&T paid &#8217; here."  # the text is the extractor's business
    assert recs[1].fields["title"] == "AT&T and P&G report results"
    assert _clean("<b>Baldur&#8217;s</b> Gate &#x2019;3") == "Baldur\u2019s Gate \u20193"
    assert _clean("AT&T wins") == "AT&T wins"
    assert _clean("&lt;b&gt;Live&lt;/b&gt; results") == "Live results"  # markup escaped twice is markup
