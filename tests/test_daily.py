"""okgen daily end to end against real local servers: extractive and LLM, resume, lock, force, backfill."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from okgen.settings import Workspace
from okgen.signature import Signature
from okgen.snapshot.store import resolve
from okgen.snapshot.verify import verify_folder
from okgen.testing.corpus import make_articles
from okgen.testing.news_site import NewsSite
from okgen.testing.web import WebServer

DAY = dt.date(2026, 11, 21)


def write_config(ws: Workspace, feeds_path, **daily):
    lines = [
        "[ingest]",
        'allow_networks = ["loopback"]',
        "per_host_delay = 0.0",
        "per_host_concurrency = 16",
        "extract_workers = 1",
        "min_words = 60",
        "connect_timeout = 2.0",
        "read_timeout = 5.0",
        "max_retries = 1",
        "backoff_base = 0.05",
        "",
        "[daily]",
        f'feeds = "{feeds_path}"',
    ]
    for k, v in daily.items():
        lines.append(f"{k} = {json.dumps(v)}")
    ws.home.mkdir(parents=True, exist_ok=True)
    (ws.home / "okgen.toml").write_text("\n".join(lines) + "\n")


def okgen(ws: Workspace, *args, timeout=300, env=None):
    e = dict(os.environ, OKGEN_HOME=str(ws.home), OKGEN_NO_PROGRESS="1")
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "okgen", *args], capture_output=True, text=True, env=e, timeout=timeout)


@pytest.fixture
def site(tmp_path):
    articles, _ = make_articles(24, DAY, days=3, seed=5)
    web = WebServer().start()
    news = NewsSite(articles).install(web)
    feeds = tmp_path / "feeds.toml"
    feeds.write_text(news.feed_list_toml())
    yield articles, feeds, web
    web.stop()


def test_daily_extractive_end_to_end(site, tmp_path):
    articles, feeds, _ = site
    ws = Workspace(tmp_path / "ws")
    write_config(ws, feeds)
    out = okgen(ws, "daily", "--date", str(DAY))
    assert out.returncode == 0, out.stderr
    assert "offline generator (gen:extractive-v2" in out.stderr
    sig_text = out.stdout.strip().splitlines()[-1]
    sig = Signature.parse(sig_text)  # the signature is printed last and parses
    assert sig.date == DAY and re.match(r"extractive-v2\.[0-9a-f]{8}\+", sig.generator) and sig.questions > 0
    snap = resolve(sig_text, ws)
    assert verify_folder(snap.path).ok
    assert {a.date for a in snap.corpus} == {DAY}  # only the date was ingested
    assert len(snap.corpus) == sum(a.date == DAY for a in articles)
    ver = okgen(ws, "snapshot", "verify", sig.short)
    assert ver.returncode == 0, ver.stderr
    # bm25 indexes of every window were built.
    assert len(list(ws.index_dir.glob("*/okgen_index.json"))) + len(list(ws.index_dir.glob("*/*/okgen_index.json"))) >= 1
    # Idempotent: the same date again prints the same signature and builds nothing.
    again = okgen(ws, "daily", "--date", str(DAY))
    assert again.returncode == 0 and again.stdout.strip().splitlines()[-1] == sig_text
    assert "already built" in again.stderr
    assert len([p for p in ws.snapshots_dir.iterdir() if p.is_dir()]) == 1
    # --force: new timestamp and signature, same content (even within the same second: no sleep).
    forced = okgen(ws, "daily", "--date", str(DAY), "--force")
    assert forced.returncode == 0, forced.stderr
    sig2 = Signature.parse(forced.stdout.strip().splitlines()[-1])
    assert sig2 != sig and sig2.timestamp > sig.timestamp and sig2.content_hash == sig.content_hash
    st = okgen(ws, "--json", "status")
    runs = json.loads(st.stdout)["runs"]
    assert [r["status"] for r in runs] == ["done", "done"]
    assert {s["stage"]: s["status"] for s in runs[0]["stages"]} == {
        "ingest": "done", "generate": "done", "snapshot": "done", "index": "done", "publish": "skipped"}


@pytest.mark.slow
def test_daily_with_local_llm_and_publish(site, tmp_path):
    from okgen.testing.llm_agents import AgentResponder
    from okgen.testing.openai_server import OpenAIServer

    articles, feeds, _ = site
    ws = Workspace(tmp_path / "ws")
    dest = tmp_path / "published"
    write_config(ws, feeds, publish_to=str(dest), retrievers=[])
    with OpenAIServer(responder=AgentResponder(articles, seed=3)) as srv:
        spec = f"openai/fake-llm,base_url={srv.base_url}"
        out = okgen(ws, "daily", "--date", str(DAY), "--generator", spec, "--validator", spec)
        assert out.returncode == 0, out.stderr
        assert srv.calls["chat"] > 0
    sig = Signature.parse(out.stdout.strip().splitlines()[-1])
    assert sig.generator == "fake-llm" or sig.generator.endswith("fake-llm")
    assert sig.validator != "none"
    snap = resolve(sig.short, ws)
    assert verify_folder(snap.path).ok and snap.manifest.funnel
    index = json.loads((dest / "index.json").read_text())
    assert index["snapshots"][0]["signature"] == sig.format()
    ws2 = Workspace(tmp_path / "ws2")
    pulled = okgen(ws2, "pull", sig.short, "--from", str(dest))
    assert pulled.returncode == 0, pulled.stderr


def _rows(db, table="gen_articles") -> int:
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1)
        try:
            return con.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
        finally:
            con.close()
    except sqlite3.Error:
        return 0


@pytest.mark.slow
def test_daily_killed_in_generation_resumes_with_nothing_lost(site, tmp_path):
    from okgen.testing.llm_agents import AgentResponder
    from okgen.testing.openai_server import OpenAIServer

    articles, feeds, _ = site
    n_day = sum(a.date == DAY for a in articles)
    ws = Workspace(tmp_path / "ws")
    write_config(ws, feeds, retrievers=[])
    with OpenAIServer(responder=AgentResponder(articles, seed=3), latency=0.4) as srv:
        spec = f"openai/fake-llm,base_url={srv.base_url},concurrency=2"
        env = dict(os.environ, OKGEN_HOME=str(ws.home), OKGEN_NO_PROGRESS="1")
        proc = subprocess.Popen([sys.executable, "-m", "okgen", "daily", "--date", str(DAY), "--generator", spec],
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 120
        while _rows(ws.db_path) < 2:
            assert proc.poll() is None, proc.stderr.read()
            assert time.time() < deadline
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        killed_at = _rows(ws.db_path)
        assert 2 <= killed_at < n_day
        # A second run while nothing holds the lock resumes the same run.
        out = okgen(ws, "daily", "--date", str(DAY), "--generator", spec)
        assert out.returncode == 0, out.stderr
        resumed_sig = Signature.parse(out.stdout.strip().splitlines()[-1])
        # A clean run in another workspace gives exactly the same questions.
        ws_clean = Workspace(tmp_path / "clean")
        write_config(ws_clean, feeds, retrievers=[])
        clean = okgen(ws_clean, "daily", "--date", str(DAY), "--generator", spec)
        assert clean.returncode == 0, clean.stderr
    clean_sig = Signature.parse(clean.stdout.strip().splitlines()[-1])
    a, b = resolve(resumed_sig.short, ws), resolve(clean_sig.short, ws_clean)
    qa, qb = [q.id for q in a.questions], [q.id for q in b.questions]
    assert len(qa) == len(set(qa))  # every question once
    assert qa == qb and a.questions == b.questions  # none lost, nothing changed
    # (content hashes differ only because the corpora were fetched at different times)
    assert [x.model_copy(update={"fetched_at": DAY}) for x in a.corpus] == [x.model_copy(update={"fetched_at": DAY}) for x in b.corpus]
    st = json.loads(okgen(ws, "--json", "status").stdout)
    assert len(st["runs"]) == 1 and st["runs"][0]["status"] == "done"  # resumed, not restarted


def test_second_concurrent_run_is_refused(site, tmp_path):
    from okgen.daily.lock import RunLock

    _, feeds, _ = site
    ws = Workspace(tmp_path / "ws")
    write_config(ws, feeds)
    with RunLock(ws.data_dir / "locks" / "daily.lock"):
        out = okgen(ws, "daily", "--date", str(DAY))
    assert out.returncode == 1
    assert "another okgen daily is running in this workspace" in out.stderr
    assert len(out.stderr.strip().splitlines()[-1:]) == 1 and "Traceback" not in out.stderr


@pytest.mark.slow
def test_backfill_from_replayed_captures(site, tmp_path):
    articles, feeds, web = site
    ws = Workspace(tmp_path / "ws")
    write_config(ws, feeds, retrievers=[])
    days = [DAY - dt.timedelta(days=2), DAY - dt.timedelta(days=1), DAY]
    live = okgen(ws, "daily", "--from", str(days[0]), "--to", str(days[-1]))
    assert live.returncode == 0, live.stderr
    lines = [ln.split() for ln in live.stdout.strip().splitlines()]
    assert [ln[0] for ln in lines] == [str(d) for d in days] and all(ln[1] == "done" for ln in lines)
    web.stop()  # no network from here on: rebuild the same days from the WARC captures
    ws2 = Workspace(tmp_path / "ws2")
    write_config(ws2, feeds, retrievers=[])
    replayed = okgen(ws2, "daily", "--from", str(days[0]), "--to", str(days[-1]), "--replay-dir", str(ws.warc_dir))
    assert replayed.returncode == 0, replayed.stderr
    for d in days:
        a = resolve([ln[2] for ln in lines if ln[0] == str(d)][0], ws)
        b_line = [ln for ln in replayed.stdout.strip().splitlines() if ln.startswith(str(d))][0]
        b = resolve(b_line.split()[2], ws2)
        assert [q.id for q in a.questions] == [q.id for q in b.questions]


@pytest.mark.slow
def test_no_text_release_hydrates_back_to_the_original(site, tmp_path):
    from okgen.snapshot import layout
    from okgen.testing.web import Route

    articles, feeds, web = site
    ws = Workspace(tmp_path / "ws")
    dest = tmp_path / "pub"
    write_config(ws, feeds, retrievers=[], publish_to=str(dest), no_text=True)
    out = okgen(ws, "daily", "--date", str(DAY))
    assert out.returncode == 0, out.stderr
    sig = Signature.parse(out.stdout.strip().splitlines()[-1])
    original = resolve(sig.short, ws)
    ws2 = Workspace(tmp_path / "ws2")
    write_config(ws2, feeds)
    assert okgen(ws2, "pull", sig.short, "--from", str(dest), "--no-text").returncode == 0
    bare = resolve(sig.short, ws2)
    assert not bare.manifest.text_included and all(a.text == "" for a in bare.corpus)
    hyd = okgen(ws2, "--json", "hydrate", sig.short)
    assert hyd.returncode == 0, hyd.stderr
    rep = json.loads(hyd.stdout)
    assert rep["complete"] and rep["matched"] == len(original.corpus)
    for name in (layout.MANIFEST, layout.QUESTIONS, layout.CORPUS, layout.README):
        assert (bare.path / name).read_bytes() == (original.path / name).read_bytes(), name
    assert okgen(ws2, "snapshot", "verify", sig.format()).returncode == 0
    # A page that changed and one that vanished are reported, and their texts stay omitted.
    ws3 = Workspace(tmp_path / "ws3")
    write_config(ws3, feeds)
    assert okgen(ws3, "pull", sig.short, "--from", str(dest), "--no-text").returncode == 0
    corpus = resolve(sig.short, ws3).corpus
    changed, gone, down = corpus[0], corpus[1], corpus[2]
    path_of = {a.url: a.url.split(str(web.port), 1)[1] for a in corpus}
    from okgen.testing.news_site import article_html

    web.set(path_of[changed.url], Route(body=article_html(changed.title, changed.text + " A correction was appended later today.")))
    web.set(path_of[gone.url], Route(status=410, body="gone"))
    web.set(path_of[down.url], Route(status=503, body="busy"))  # no answer now: not vanished
    hyd = okgen(ws3, "--json", "hydrate", sig.short)
    assert hyd.returncode == 1 and "3 text(s) still missing" in hyd.stderr and "1 unreachable" in hyd.stderr
    assert "unreachable pages may answer later" in hyd.stderr and "cannot give its recorded text back" in hyd.stderr
    rep = json.loads(hyd.stdout)
    assert not rep["complete"] and rep["refused"] == []
    assert [c["id"] for c in rep["changed"]] == [changed.id] and [v["id"] for v in rep["vanished"]] == [gone.id]
    assert [u["id"] for u in rep["unreachable"]] == [down.id] and rep["unreachable"][0]["reason"] == "http_503"
    after = resolve(sig.short, ws3)
    assert not after.manifest.text_included
    assert sum(not a.text_omitted for a in after.corpus) == len(corpus) - 3
    assert okgen(ws3, "snapshot", "verify", sig.short).returncode == 0
    # Fetches okgen itself refuses (loopback is not allowed by default) are not "vanished".
    ws4 = Workspace(tmp_path / "ws4")
    assert okgen(ws4, "pull", sig.short, "--from", str(dest), "--no-text").returncode == 0
    hyd = okgen(ws4, "--json", "hydrate", sig.short)
    rep = json.loads(hyd.stdout)
    assert hyd.returncode == 1 and "refused" in hyd.stderr.splitlines()[-1]
    assert len(rep["refused"]) == len(corpus) and rep["vanished"] == [] and rep["matched"] == 0
    assert {r["reason"] for r in rep["refused"]} == {"blocked_address"}


@pytest.mark.slow
def test_gc_keeps_recent_days_and_every_snapshot(site, tmp_path):
    from okgen.daily.gc import collect_garbage
    from okgen.errors import ConfigError
    from okgen.ingest.store import ArticleStore

    _, feeds, _ = site
    ws = Workspace(tmp_path / "ws")
    write_config(ws, feeds)  # bm25 indexes for every window
    days = [DAY - dt.timedelta(days=2), DAY - dt.timedelta(days=1), DAY]
    out = okgen(ws, "daily", "--from", str(days[0]), "--to", str(days[-1]))
    assert out.returncode == 0, out.stderr
    warcs = sorted(p.name for p in ws.warc_dir.iterdir())
    assert warcs == [f"okgen-{d}.warc.gz" for d in days]
    hashes = {resolve(str(d), ws).manifest.content_hash[:12]: d for d in days}
    assert {p.name for p in ws.index_dir.iterdir()} == set(hashes)
    snaps_before = sorted(p.name for p in ws.snapshots_dir.iterdir())

    # today is the 22nd: --keep-days 2 keeps the 20th onwards.
    dry = collect_garbage(ws, 2, today=DAY + dt.timedelta(days=1), dry_run=True)
    assert dry.warc == [f"okgen-{days[0]}.warc.gz"] and len(dry.indexes) == 1 and dry.bytes_freed > 0
    assert sorted(p.name for p in ws.warc_dir.iterdir()) == warcs  # nothing deleted

    rep = collect_garbage(ws, 2, today=DAY + dt.timedelta(days=1))
    assert sorted(p.name for p in ws.warc_dir.iterdir()) == [f"okgen-{d}.warc.gz" for d in days[1:]]
    assert {hashes[p.name] for p in ws.index_dir.iterdir()} == set(days[1:])
    assert rep.store["ingest_items"] > 0 and rep.store["articles"] == 0
    assert sorted(p.name for p in ws.snapshots_dir.iterdir()) == snaps_before  # releases stay
    with ArticleStore(ws.db_path) as st:
        assert st.count(days[0]) > 0  # articles stay without --articles
    with pytest.raises(ConfigError, match=r"is after the newest news day here, .*--keep-days 10 keeps"):
        collect_garbage(ws, 0, today=DAY + dt.timedelta(days=10), articles=True)  # all of this news would go
    collect_garbage(ws, 0, today=DAY + dt.timedelta(days=10), articles=True, force=True)  # articles before the 21st go
    with ArticleStore(ws.db_path) as st:
        assert st.count(days[0]) == 0 and st.count(DAY) > 0  # the 10-day window before the cutoff stays
    cli = okgen(ws, "--json", "gc", "--keep-days", "30", "--dry-run")
    assert cli.returncode == 0, cli.stderr
    assert json.loads(cli.stdout)["dry_run"] is True


def test_gc_dry_run_lists_what_would_go_and_deletes_nothing(tmp_path):
    from click.testing import CliRunner

    from okgen.cli.main import cli

    ws = Workspace(tmp_path)
    ws.warc_dir.mkdir(parents=True)
    (ws.warc_dir / "okgen-2020-01-02.warc.gz").write_bytes(b"x")
    for name in ("0123456789ab", "ba9876543210"):  # indexes of snapshots the workspace no longer has
        (ws.index_dir / name / "bm25-w1-abc").mkdir(parents=True)
    r = CliRunner().invoke(cli, ["--home", str(tmp_path), "gc", "--keep-days", "30", "--dry-run"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    assert "would delete 1 WARC file(s), the indexes of 2 snapshot(s)" in r.stdout, r.stdout
    assert "  WARC     okgen-2020-01-02.warc.gz" in r.stdout and "  indexes  0123456789ab (no such snapshot)" in r.stdout
    assert (ws.warc_dir / "okgen-2020-01-02.warc.gz").exists() and len(list(ws.index_dir.iterdir())) == 2
    assert "without --dry-run this is refused: the cutoff" in r.stderr  # the dry run says what the real run would do
    # Without --dry-run: the workspace's newest news (2020-01-02) is before the cutoff, so all of it
    # would go (a backfill of past news, --keep-days counting from today): refused in one line.
    r = CliRunner().invoke(cli, ["--home", str(tmp_path), "gc", "--keep-days", "30"])
    assert "is after the newest news day here, 2020-01-02" in str(r.exception) and "--force" in str(r.exception)
    assert (ws.warc_dir / "okgen-2020-01-02.warc.gz").exists() and len(list(ws.index_dir.iterdir())) == 2
    r = CliRunner().invoke(cli, ["--home", str(tmp_path), "gc", "--keep-days", "30", "--force"], catch_exceptions=False)
    assert r.exit_code == 0 and not (ws.warc_dir / "okgen-2020-01-02.warc.gz").exists()


@pytest.mark.slow
def test_stages_one_by_one_match_daily(site, tmp_path):
    """ingest, then snapshot build (which generates), then index build: the same questions as daily."""
    _, feeds, _ = site
    ws = Workspace(tmp_path / "ws")
    write_config(ws, feeds)
    assert okgen(ws, "ingest", "--date", str(DAY), "--feeds", str(feeds)).returncode == 0
    built = okgen(ws, "snapshot", "build", "--date", str(DAY))
    assert built.returncode == 0, built.stderr
    sig = Signature.parse(built.stdout.strip().splitlines()[-1])
    snap = resolve(sig.short, ws)
    assert verify_folder(snap.path).ok
    assert snap.manifest.feeds_hash != "" and sig.feeds_hash == snap.manifest.feeds_hash[:12]
    idx = okgen(ws, "index", "build", "--signature", sig.short, "--retriever", "bm25", "--window", "1,10")
    assert idx.returncode == 0, idx.stderr
    ws2 = Workspace(tmp_path / "ws2")
    write_config(ws2, feeds, retrievers=[])
    d = okgen(ws2, "daily", "--date", str(DAY))
    assert d.returncode == 0, d.stderr
    other = resolve(Signature.parse(d.stdout.strip().splitlines()[-1]).short, ws2)
    assert [q.id for q in other.questions] == [q.id for q in snap.questions]
    assert other.signature.feeds_hash == sig.feeds_hash and other.signature.prompt_hash == sig.prompt_hash
    bad = okgen(ws, "snapshot", "build", "--date", "2026-13-01")
    assert bad.returncode == 2 and "not a date" in bad.stderr


@pytest.mark.parametrize(("toml", "message"), [
    ("[daily]\nbogus = 1\n", "[daily] bogus: unknown key"),
    ("[daily]\nwindows = ['a']\n", "[daily] windows.0: Input should be a valid integer"),
    ("[daily]\nwindows = [0, 5]\n", "[daily] windows.0: Input should be greater than or equal to 1"),
    ("[generate]\nper_article = 'five'\n", "[generate] per_article: Input should be a valid integer"),
    ("[generate]\nmax_cost = 'lots'\n", "[generate] max_cost: Input should be a valid number"),
    ("[daily]\nno_text = 'maybe'\n", "[daily] no_text: Input should be a valid boolean"),
    ("[daily]\ntimezone = 'Mars/Olympus'\n", "unknown time zone"),
])
def test_daily_options_refuse_bad_config(tmp_path, toml, message):
    from okgen.daily.pipeline import DailyOptions
    from okgen.errors import ConfigError

    (tmp_path / "okgen.toml").write_text(toml)
    with pytest.raises(ConfigError) as info:
        DailyOptions.resolve(Workspace(tmp_path))
    assert message in str(info.value) and "okgen.toml" in str(info.value)


def test_daily_options_from_config_and_overrides(tmp_path):
    from okgen.daily.pipeline import DailyOptions

    (tmp_path / "okgen.toml").write_text(
        '[generate]\ngenerator = "openai/m,base_url=http://127.0.0.1:1/v1"\nprobes = "openai/p,base_url=http://x/v1"\n'
        '[daily]\nwindows = [10, 1, 5]\nretrievers = ["bm25", "dpr"]\nfeeds = "f.toml"\n')
    o = DailyOptions.resolve(Workspace(tmp_path), retrievers="", per_article=3)
    assert o.llm_configured and o.probes == ("openai/p,base_url=http://x/v1",)  # one spec, not split
    assert o.windows == (1, 5, 10) and o.retrievers == () and o.per_article == 3
    assert o.generator_chosen and o.feeds_from_config
    o = DailyOptions.resolve(Workspace(tmp_path), feeds="mine.toml", windows="5,1")  # flags as the CLI gives them
    assert o.feeds == "mine.toml" and not o.feeds_from_config and o.windows == (1, 5)


def test_bad_config_is_one_line_on_the_cli(tmp_path):
    ws = Workspace(tmp_path / "ws")
    ws.home.mkdir()
    (ws.home / "okgen.toml").write_text("[daily]\nwindows = [0]\n")
    out = okgen(ws, "daily", "--date", str(DAY))
    last = out.stderr.strip().splitlines()[-1]
    assert out.returncode == 1 and last.startswith("okgen: error: ") and "[daily] windows.0:" in last


def test_gc_refuses_to_wipe_a_backfill_known_only_from_its_stored_articles(tmp_path):
    # No capture (warc = false) and no snapshot yet: the stored articles still say which days the
    # workspace's news is of, and --articles would have deleted them all.
    from okgen.daily.gc import collect_garbage
    from okgen.errors import ConfigError
    from okgen.ingest.store import ArticleStore
    from okgen.testing.evolving import make_article

    ws = Workspace(tmp_path)
    day = dt.date(2020, 1, 2)
    with ArticleStore.for_workspace(ws) as st:
        st.upsert(make_article(day, "rivertown-gazette", "Lakeport opens a bridge", "Lakeport opened a bridge. " * 20))
    with pytest.raises(ConfigError, match="after the newest news day here, 2020-01-02"):
        collect_garbage(ws, 30, articles=True)
    with ArticleStore(ws.db_path) as st:
        assert st.count(day) == 1
