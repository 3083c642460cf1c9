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


def test_the_fallback_date_keys_give_the_date(tmp_path):
    """A dump whose date is under `published` / `published_at` / `date_publish` (no `date`, no
    --map) is read with that date; before, every such record failed as bad_date."""
    import datetime as dt
    import json

    from okgen.ingest.importer import read_dump

    p = tmp_path / "dump.jsonl"
    p.write_text("\n".join(json.dumps({"title": "Harbour opens", "text": "The harbour opened.", key: value})
                           for key, value in [("published", "2026-11-28T08:00:00Z"),
                                              ("published_at", "2026-11-27T08:00:00Z"),
                                              ("date_publish", "2026-11-26 08:00:00")]))
    recs = list(read_dump(p, None))
    assert [r.error for r in recs] == [None, None, None]
    assert [r.published_at.date() for r in recs] == [dt.date(2026, 11, 28), dt.date(2026, 11, 27), dt.date(2026, 11, 26)]


def test_an_undated_dump_needs_an_explicit_date(tmp_path, capsys):
    """Without --date, the records of an undated dump are not stored as today's news: the run is
    refused in one line naming --date; with --date they are that day's."""
    import json

    import pytest

    from okgen.cli.main import main

    p = tmp_path / "dump.json"
    text = " ".join(["The Lakeport harbour reopened after the storm and ferries to Rivertown resumed."] * 12)
    p.write_text(json.dumps([{"title": "Harbour reopens", "article_text": text, "news_site": "bbc",
                              "link": "https://example.org/a"}]))
    home = str(tmp_path / "ws")
    with pytest.raises(SystemExit) as e:
        main(["--home", home, "ingest", "--import", str(p)])
    err = capsys.readouterr().err
    assert e.value.code == 1 and "1 of its 1 records carry no date: give the dump's news day with --date" in err
    with pytest.raises(SystemExit) as e:
        main(["--home", home, "--json", "ingest", "--date", "2025-04-12", "--import", str(p)])
    out = capsys.readouterr().out
    assert e.value.code in (0, None) and json.loads(out)["stored"] == 1


def test_an_imported_day_is_hashed_by_its_dump(tmp_path):
    """The `feeds` hash of an imported day is that of the dump file, the same for every import
    of it (before, `okgen ingest --import` gave a hash of the run id: a new one each time)."""
    import datetime as dt
    import json

    from okgen.hashing import sha256_file, sha256_text
    from okgen.ingest.pipeline import run_ingest
    from okgen.settings import Workspace
    from okgen.snapshot.from_store import ingest_feeds_hash

    p = tmp_path / "dump.json"
    text = " ".join(["The Lakeport harbour reopened after the storm and ferries to Rivertown resumed."] * 12)
    p.write_text(json.dumps([{"title": "Harbour reopens", "article_text": text, "news_site": "bbc",
                              "link": "https://example.org/a"}]))
    day = dt.date(2025, 4, 12)
    hashes = set()
    for name in ("a", "b"):
        ws = Workspace(tmp_path / name)
        s = run_ingest(day, ws, import_file=p)
        hashes |= {s.feeds_hash, ingest_feeds_hash(ws, day)}
    assert hashes == {sha256_text(f"import:{sha256_file(p)}")}


def test_an_imported_outlet_id_gets_its_name_from_the_feed_list(tmp_path):
    """A dump that gives outlets by id ("guardian", as news-dev does) stores the packaged feed
    list's name ("The Guardian"), which prompts and rationales then use; an id the list does not
    know stays as written, and a record's own `source_name` wins."""
    import datetime as dt
    import json

    from okgen.ingest.pipeline import run_ingest
    from okgen.ingest.store import ArticleStore
    from okgen.settings import Workspace

    text = " ".join(["The Lakeport harbour reopened after the storm and ferries to Rivertown resumed."] * 12)
    rows = [{"title": f"Harbour reopens {i}", "article_text": f"{text} Story {i}.", "link": f"https://example.org/{i}",
             **extra} for i, extra in enumerate([{"news_site": "guardian"}, {"news_site": "rivertown-gazette"},
                                                 {"news_site": "bbc", "source_name": "BBC World Service"}])]
    p = tmp_path / "dump.json"
    p.write_text(json.dumps(rows))
    day = dt.date(2025, 4, 12)
    ws = Workspace(tmp_path / "ws")
    run_ingest(day, ws, import_file=p)
    with ArticleStore(ws.db_path) as store:
        names = {a.source: a.source_name for a in store.articles_for_date(day)}
    assert names == {"guardian": "The Guardian", "rivertown-gazette": "rivertown-gazette", "bbc": "BBC World Service"}


def test_status_lists_ingest_runs(tmp_path):
    """`okgen status` shows ingest runs too (a user who ran `okgen ingest` saw "no daily runs
    yet" and nothing else)."""
    import json
    import subprocess
    import sys

    p = tmp_path / "dump.json"
    text = " ".join(["The Lakeport harbour reopened after the storm and ferries to Rivertown resumed."] * 12)
    p.write_text(json.dumps([{"title": "Harbour reopens", "article_text": text, "news_site": "bbc",
                              "link": "https://example.org/a"}]))
    run = [sys.executable, "-m", "okgen", "--home", str(tmp_path / "ws")]
    assert subprocess.run([*run, "ingest", "--import", str(p), "--date", "2025-04-12"], capture_output=True).returncode == 0
    out = subprocess.run([*run, "status"], capture_output=True, text=True)
    assert out.returncode == 0 and "recent ingest runs" in out.stdout and "2025-04-12  import" in out.stdout, out.stdout
    js = json.loads(subprocess.run([*run, "--json", "status"], capture_output=True, text=True).stdout)
    assert [(r["date"], r["mode"], r["stored"]) for r in js["ingest_runs"]] == [("2025-04-12", "import", 1)]


def test_gc_keeps_the_feeds_hash_a_snapshot_build_reads(tmp_path):
    """gc deleted the ingest run records, and a snapshot built after it signed "unknown feeds"."""
    import datetime as dt
    import json

    from okgen.daily.gc import collect_garbage
    from okgen.ingest.pipeline import run_ingest
    from okgen.settings import Workspace
    from okgen.snapshot.from_store import ingest_feeds_hash

    p = tmp_path / "dump.json"
    text = " ".join(["The Lakeport harbour reopened after the storm and ferries to Rivertown resumed."] * 12)
    p.write_text(json.dumps([{"title": "Harbour reopens", "article_text": text, "news_site": "bbc",
                              "link": "https://example.org/a"}]))
    day = dt.date(2025, 4, 12)
    ws = Workspace(tmp_path / "ws")
    run_ingest(day, ws, import_file=p)
    before = ingest_feeds_hash(ws, day)
    collect_garbage(ws, 0, today=day + dt.timedelta(days=30), force=True)
    assert ingest_feeds_hash(ws, day) == before
