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
