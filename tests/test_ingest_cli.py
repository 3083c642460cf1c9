"""The ``okgen ingest`` and ``okgen articles`` verbs, and a run killed with SIGKILL then restarted."""

from __future__ import annotations

import datetime as dt
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from okgen.cli.main import main
from okgen.ingest.config import config_for
from okgen.ingest.pipeline import run_ingest
from okgen.ingest.store import ArticleStore
from okgen.settings import Workspace
from okgen.testing.corpus import make_articles
from okgen.testing.news_site import NewsSite
from okgen.testing.web import WebServer

D = dt.date(2024, 5, 1)
TOML = ('[ingest]\nallow_networks = ["loopback"]\nper_host_delay = 0.0\nper_host_concurrency = {phc}\n'
        'concurrency = {phc}\nextract_workers = 1\nmin_words = 60\nmax_retries = 1\nbackoff_base = 0.05\n')


def cli(capsys, *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as e:
        main(list(args))
    out, err = capsys.readouterr()
    return e.value.code, out, err


def test_cli_modules_load_light():
    code = ("import sys, okgen.cli.ingest, okgen.cli.articles; "
            "print([m for m in ('trafilatura', 'aiohttp', 'feedparser', 'datasketch', 'warcio', 'torch') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_ingest_and_articles_verbs(tmp_path, capsys):
    arts, _ = make_articles(6, D, days=1, seed=41, facts_per_article=6)
    (tmp_path / "okgen.toml").write_text(TOML.format(phc=8))
    home = str(tmp_path)
    with WebServer() as web:
        site = NewsSite(arts).install(web)
        feeds = tmp_path / "feeds.toml"
        feeds.write_text(site.feed_list_toml())
        code, out, err = cli(capsys, "--home", home, "ingest", "--date", D.isoformat(), "--feeds", str(feeds), "--json")
        assert code == 0, err
        summary = json.loads(out)
        assert summary["stored"] == 6 and summary["feeds_ok"] == len(site.outlets) and summary["mode"] == "live"
        code, out, _ = cli(capsys, "--home", home, "ingest", "--date", D.isoformat(), "--feeds", str(feeds))
        assert code == 0 and "already done" in out and "stored" in out
    code, out, _ = cli(capsys, "--home", home, "articles", "ls", "--date", D.isoformat(), "--json")
    listed = json.loads(out)
    assert code == 0 and len(listed) == 6 and "text" not in listed[0] and listed[0]["words"] > 60
    code, out, _ = cli(capsys, "--home", home, "articles", "ls", "--date", D.isoformat())
    assert code == 0 and "6 articles" in out and listed[0]["id"] in out
    one = listed[0]
    code, out, _ = cli(capsys, "--home", home, "articles", "show", one["id"][:8])
    with ArticleStore(tmp_path / "data" / "okgen.sqlite") as store:
        text = store.get(one["id"]).text
    assert code == 0 and one["title"] in out and text.splitlines()[-1] in out
    code, out, _ = cli(capsys, "--home", home, "--json", "articles", "show", one["id"], "--no-text")
    assert code == 0 and json.loads(out)["id"] == one["id"] and "text" not in json.loads(out)
    code, _, err = cli(capsys, "--home", home, "articles", "show", "0000deadbeef")
    assert code == 1 and "no article" in err and "Traceback" not in err
    code, _, err = cli(capsys, "--home", home, "articles", "ls", "--date", "2024-05-02")
    assert code == 0 and "no articles stored" in err
    code, out, _ = cli(capsys, "--home", home, "articles", "ls", "--date", D.isoformat(), "--limit", "2")
    assert code == 0 and "2 of 6 articles" in out and "(times in UTC)" in out
    code, _, err = cli(capsys, "--home", home, "articles", "ls", "--date", D.isoformat(), "--source", "nosuch")
    assert code == 0 and "outlets stored that day: " in err and listed[0]["source"] in err
    # Entries that became no article, with why (here: none failed; one is added by hand).
    code, _, err = cli(capsys, "--home", home, "articles", "dropped", "--date", D.isoformat())
    assert code == 0 and "no dropped entries" in err
    with ArticleStore(tmp_path / "data" / "okgen.sqlite") as store:
        store.set_item(D, "https://rivertown.example/gone", "rivertown", "https://rivertown.example/gone", "failed", "http_404")
    code, out, _ = cli(capsys, "--home", home, "--json", "articles", "dropped", "--date", D.isoformat())
    assert code == 0 and [(r["status"], r["reason"], r["url"]) for r in json.loads(out)] == [
        ("failed", "http_404", "https://rivertown.example/gone")]
    warc = tmp_path / "data" / "warc" / f"okgen-{D.isoformat()}.warc.gz"
    replay_home = tmp_path / "replay"
    replay_home.mkdir()
    (replay_home / "okgen.toml").write_text(TOML.format(phc=8))
    code, out, err = cli(capsys, "--home", str(replay_home), "ingest", "--date", D.isoformat(), "--replay", str(warc), "--json")
    assert code == 0, err
    assert json.loads(out)["stored"] == 6


def test_ingest_errors_are_one_line(tmp_path, capsys):
    home = str(tmp_path)
    code, _, err = cli(capsys, "--home", home, "ingest", "--date", "2024-13-01")
    assert code == 2 and "not a date" in err
    code, _, err = cli(capsys, "--home", home, "ingest", "--date", "2024-05-01", "--replay", str(tmp_path / "nope.warc.gz"))
    assert code == 1 and "no such WARC file" in err and len(err.strip().splitlines()) == 1
    code, _, err = cli(capsys, "--home", home, "ingest", "--feeds", str(tmp_path / "none.opml"))
    assert code == 1 and "no such feed list" in err
    bad = tmp_path / "bad.warc.gz"
    bad.write_bytes(b"garbage bytes")
    code, _, err = cli(capsys, "--home", home, "ingest", "--date", "2024-05-01", "--replay", str(bad))
    assert code == 1 and "not a WARC file" in err
    dump = tmp_path / "d.jsonl"
    text = make_articles(1, D, seed=3, facts_per_article=8)[0][0].text
    dump.write_text(json.dumps({"headline": "h", "body": text, "when": "2024-05-01T10:00:00Z"}) + "\n")
    code, _, err = cli(capsys, "--home", home, "ingest", "--date", "2024-05-01", "--import", str(dump), "--map", "bad")
    assert code == 2 and "FIELD=KEY" in err  # a usage error
    code, _, err = cli(capsys, "--home", home, "ingest", "--date", "2024-05-01", "--import", str(dump), "--replay", "x")
    assert code == 2 and "give one of --replay and --import" in err
    code, _, err = cli(capsys, "--home", home, "ingest", "--date", "2024-05-01", "--map", "title=headline")
    assert code == 2 and "--map applies to --import only" in err
    code, _, err = cli(capsys, "--home", home, "ingest", "--date", "2024-05-01", "--allow-net", "bogus")
    assert code == 2 and "Invalid value for --allow-net: 'bogus' is neither one of loopback" in err
    code, out, err = cli(capsys, "--home", home, "ingest", "--date", "2024-05-01", "--import", str(dump),
                         "--map", "title=headline", "--map", "text=body", "--map", "date=when", "--json")
    assert code == 0, err
    assert json.loads(out)["stored"] == 1
    (tmp_path / "okgen.toml").write_text("[ingest]\nmax_per_outlet = -1\n")
    code, _, err = cli(capsys, "--home", home, "ingest", "--date", "2024-05-01", "--import", str(dump))
    assert code == 1 and "max_per_outlet" in err


@pytest.mark.slow
def test_allow_net_option(tmp_path, capsys):
    arts, _ = make_articles(2, D, days=1, seed=43, facts_per_article=6)
    (tmp_path / "okgen.toml").write_text(TOML.format(phc=4).replace('allow_networks = ["loopback"]\n', ""))
    with WebServer() as web:
        site = NewsSite(arts).install(web)
        feeds = tmp_path / "feeds.toml"
        feeds.write_text(site.feed_list_toml())
        args = ["--home", str(tmp_path), "ingest", "--date", D.isoformat(), "--feeds", str(feeds)]
        code, out, err = cli(capsys, *args)
        assert code == 1 and "feeds failed" in err and "blocked_address" in err and "blocked_address" in out
        assert "allow them with --allow-net loopback" in err and "no network?" not in err  # okgen's policy, said so
        assert not any(q.path.startswith("/feeds/") for q in web.requests)  # refused before connecting
        code, out, err = cli(capsys, *args, "--allow-net", "loopback", "--json")
        assert code == 0, err
        assert json.loads(out)["stored"] == 2


def _staged(db: Path) -> dict[str, str]:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as c:
            return dict(c.execute("SELECT key, status FROM ingest_items"))
    except sqlite3.OperationalError:
        return {}


@pytest.mark.slow
def test_killed_run_resumes_and_stores_every_article_once(tmp_path):
    arts, _ = make_articles(40, D, days=1, seed=31, facts_per_article=6)
    (tmp_path / "okgen.toml").write_text(TOML.format(phc=2))
    db = tmp_path / "data" / "okgen.sqlite"
    with WebServer() as web:
        site = NewsSite(arts, latency=0.25).install(web)
        feeds = tmp_path / "feeds.toml"
        feeds.write_text(site.feed_list_toml())
        env = {**os.environ, "OKGEN_HOME": str(tmp_path), "OKGEN_NO_PROGRESS": "1"}
        proc = subprocess.Popen([sys.executable, "-m", "okgen", "ingest", "--date", D.isoformat(), "--feeds", str(feeds)],
                                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and sum(s == "staged" for s in _staged(db).values()) < 8:
            assert proc.poll() is None, "the run ended before it could be killed"
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGKILL)  # the run, and its extraction worker with it
        proc.wait(timeout=30)
        before = _staged(db)
        staged_before = {k for k, s in before.items() if s == "staged"}
        hits_before = dict(web.hits)
        assert 8 <= len(staged_before) < 40
        with ArticleStore(db) as store:
            assert store.count(D) == 0  # killed before the final step
        summary = run_ingest(D, Workspace(tmp_path), feeds=feeds)
        assert summary.resumed >= len(staged_before)
    with ArticleStore(db) as store:
        got = store.articles_for_date(D)
        n_rows = store.conn.execute("SELECT COUNT(*) FROM articles").fetchone()[0]
    paths = sorted(a.url.split("/", 3)[3] for a in got)
    assert paths == sorted(site.page_path(a).lstrip("/") for a in arts)  # none lost
    assert n_rows == len(got) == len({a.id for a in got}) == len({a.canonical_url for a in got}) == 40  # each once
    for key in staged_before:  # what was done before the kill was not fetched again
        path = "/" + key.split("/", 3)[3]
        assert web.hits[path] == hits_before[path] == 1
    replay = run_ingest(D, Workspace(tmp_path / "replay"), replay=summary.warc, config=config_for(Workspace(tmp_path)))
    assert replay.stored == 40  # the WARC file left by the killed run was repaired and is complete


def test_articles_ls_shows_no_time_for_a_dump_that_gave_only_the_day():
    from types import SimpleNamespace

    from okgen.cli.articles import _time

    utc = dt.timezone.utc
    midnight = dt.datetime(2025, 4, 11, tzinfo=dt.timezone.utc)
    assert _time(SimpleNamespace(published_at=midnight, date_source="import"), utc) == "-"
    assert _time(SimpleNamespace(published_at=midnight.replace(hour=9, minute=5), date_source="import"), utc) == "09:05"
    assert _time(SimpleNamespace(published_at=midnight, date_source="feed"), utc) == "00:00"  # a feed said midnight
    # In the news timezone: 00:10 UTC on the 12th is 20:10 on a New York day of the 11th.
    from zoneinfo import ZoneInfo

    late = SimpleNamespace(published_at=midnight.replace(day=12, minute=10), date_source="feed")
    assert _time(late, ZoneInfo("America/New_York")) == "20:10"


def test_a_day_that_has_not_begun_is_refused_for_a_live_run(tmp_path, capsys):
    """A typo such as 2027 for 2026 fetched every feed, stored nothing and exited 0."""
    future = (dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=90)).date().isoformat()
    code, _, err = cli(capsys, "--home", str(tmp_path), "ingest", "--date", future)
    assert code == 2 and "there is no news of it yet" in err
    code, _, err = cli(capsys, "--home", str(tmp_path), "daily", "--date", future)
    assert code == 2 and "there is no news of it yet" in err
    assert not (tmp_path / "data").exists()


def test_a_home_under_a_file_is_one_line(tmp_path, capsys):
    (tmp_path / "afile").write_text("x")
    dump = tmp_path / "dump.json"
    dump.write_text(json.dumps([{"title": "Harbour reopens", "article_text": "The Lakeport harbour reopened. " * 30,
                                 "news_site": "bbc", "link": "https://example.org/a"}]))
    code, _, err = cli(capsys, "--home", str(tmp_path / "afile" / "sub"), "ingest", "--date", "2025-04-10",
                       "--import", str(dump))
    assert code == 1 and "not a folder" in err and "check --home" in err and "internal error" not in err, err
    assert f"{tmp_path / 'afile'} is a file" in err  # the file in the way, not the folder it blocked


def test_a_refused_feed_list_or_capture_creates_nothing(tmp_path, capsys):
    bad = tmp_path / "feeds.toml"
    bad.write_text("[[outlet]]\nidx = 'rivertown'\n")
    notwarc = tmp_path / "x.warc.gz"
    notwarc.write_text("not a capture")
    home = tmp_path / "ws"
    for args in (["--feeds", str(bad)], ["--replay", str(notwarc)]):
        code, _, err = cli(capsys, "--home", str(home), "ingest", "--date", "2025-04-10", *args)
        assert code == 1 and err.count("\n") == 1, err
    assert not home.exists()
