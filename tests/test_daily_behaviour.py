"""okgen daily as a newcomer meets it: offline, -q, the short signature, --force on an LLM day."""

from __future__ import annotations

import datetime as dt
import json
import socket

import pytest

from okgen.settings import Workspace
from okgen.signature import Signature
from okgen.testing.corpus import make_articles
from okgen.testing.news_site import NewsSite
from okgen.testing.web import WebServer
from tests.test_daily import DAY, okgen, write_config


@pytest.fixture
def site(tmp_path):
    articles, _ = make_articles(24, DAY, days=3, seed=5)
    web = WebServer().start()
    feeds = tmp_path / "feeds.toml"
    feeds.write_text(NewsSite(articles).install(web).feed_list_toml())
    yield articles, feeds, web
    web.stop()


@pytest.fixture
def llm_day(site, tmp_path):
    """A workspace on the site's feeds and a test server answering as an instruction model:
    (workspace, server, generator spec, the responder, the articles)."""
    from okgen.testing.llm_agents import AgentResponder
    from okgen.testing.openai_server import OpenAIServer

    articles, feeds, _ = site
    ws = Workspace(tmp_path / "ws")
    write_config(ws, feeds, retrievers=[])
    agents = AgentResponder(articles, seed=3)
    with OpenAIServer(responder=agents) as srv:
        yield ws, srv, f"openai/fake-llm,base_url={srv.base_url}", agents, articles


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_offline_daily_is_one_line_with_what_to_do(tmp_path):
    feeds = tmp_path / "feeds.toml"
    feeds.write_text("".join(f'[[outlet]]\nid = "o{i}"\nname = "O{i}"\nurl = "http://127.0.0.1:{_closed_port()}/rss"\n\n'
                             for i in range(6)))
    ws = Workspace(tmp_path / "ws")
    write_config(ws, feeds)
    out = okgen(ws, "daily", "--date", str(DAY))
    assert out.returncode == 1
    lines = out.stderr.strip().splitlines()
    failed = [ln for ln in lines if "failed" in ln]
    assert len(failed) == 1, out.stderr  # not one warning per feed
    assert failed[0].startswith("okgen: error: all 6 feeds failed")
    for hint in ("--import", "--replay", "HTTPS_PROXY"):
        assert hint in failed[0]
    verbose = okgen(ws, "-v", "ingest", "--date", str(DAY), "--feeds", str(feeds))
    assert sum("feed http://127.0.0.1" in ln for ln in verbose.stderr.splitlines()) == 6  # -v lists each


@pytest.mark.slow
def test_quiet_daily_and_the_short_signature(site, tmp_path):
    _, feeds, _ = site
    ws = Workspace(tmp_path / "ws")
    write_config(ws, feeds, retrievers=[])
    out = okgen(ws, "daily", "--date", str(DAY))
    assert out.returncode == 0, out.stderr
    sig = Signature.parse(out.stdout.strip().splitlines()[-1])
    short = [ln for ln in out.stderr.splitlines() if ln.startswith("short:")]
    assert short and short[0].split(None, 1)[1] == sig.short and len(sig.short) < len(sig.format())
    quiet = okgen(ws, "-q", "daily", "--date", str(DAY), "--force")
    assert quiet.returncode == 0 and quiet.stderr == ""
    assert Signature.parse(quiet.stdout.strip()).content_hash == sig.content_hash


@pytest.mark.slow
def test_force_keeps_the_llm_generator_of_the_day(llm_day):
    ws, srv, spec, _, _ = llm_day
    first = okgen(ws, "daily", "--date", str(DAY), "--generator", spec, "--per-article", "2")
    assert first.returncode == 0, first.stderr
    calls = srv.calls["chat"]
    forced = okgen(ws, "daily", "--date", str(DAY), "--force")
    assert forced.returncode == 0, forced.stderr
    # The same questions per article too (they are in the run key): the store answers every
    # article, nothing is asked (or paid for) again.
    assert srv.calls["chat"] == calls
    a = Signature.parse(first.stdout.strip().splitlines()[-1])
    b = Signature.parse(forced.stdout.strip().splitlines()[-1])
    assert b.generator == a.generator and "extractive" not in b.generator
    assert b.content_hash == a.content_hash and b.prompt_hash == a.prompt_hash
    assert "was built with generator" in forced.stderr


def test_a_rerun_without_the_flags_resumes_with_the_models_the_day_was_begun_with(llm_day):
    # An LLM daily run interrupted mid-way, rerun as the docs say ("rerun to resume") but without
    # repeating --generator: it is finished by the same LLM, not closed empty by the offline generator.
    from okgen.daily.pipeline import DailyOptions, run_daily
    from okgen.daily.state import RunState

    ws, srv, spec, _, _ = llm_day
    begun = DailyOptions.resolve(ws, generator=spec, per_article=2)
    with RunState(ws.db_path) as state:  # what an interrupted first run leaves: its options recorded
        run_id, _ = state.start_or_resume(DAY, config={**begun.__dict__, "probes": []})
        state.finish_run(run_id, "interrupted", error="KeyboardInterrupt")
    result = run_daily(DAY, ws, DailyOptions.resolve(ws))
    assert srv.calls["chat"] > 0
    assert result.run_id == run_id and result.status == "done" and result.signature
    sig = Signature.parse(result.signature)
    assert sig.generator == "openai/fake-llm" and sig.questions > 0


def test_a_forced_run_in_the_same_second_gets_a_later_timestamp(tmp_path):
    from okgen.daily.state import RunState

    with RunState(tmp_path / "okgen.sqlite") as state:
        first, _ = state.start_or_resume(DAY, force=True)
        state.finish_run(first, "done", signature="x")
        second, _ = state.start_or_resume(DAY, force=True)
        third, _ = state.start_or_resume(DAY, force=True)
        started = {r.run_id: int(r.started_at) for r in state.runs(date=DAY)}
    assert started[first] < started[second] < started[third]  # each forced run: its own signature


@pytest.mark.slow
@pytest.mark.parametrize("after", ["ingest", "generate"])
def test_sigterm_at_any_stage_ends_cleanly_and_the_rerun_resumes(site, tmp_path, after):
    import os
    import signal
    import subprocess
    import sys

    _, feeds, _ = site
    ws = Workspace(tmp_path / "ws")
    write_config(ws, feeds)
    env = dict(os.environ, OKGEN_HOME=str(ws.home), OKGEN_NO_PROGRESS="1")
    p = subprocess.Popen([sys.executable, "-m", "okgen", "daily", "--date", str(DAY)], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen = []
    for line in p.stderr:  # the stage lines arrive as the stages finish: no timing guesses
        seen.append(line)
        if line.startswith(f"okgen: {after}: done"):
            p.send_signal(signal.SIGTERM)
            break
    out, err = p.communicate(timeout=300)
    err = "".join(seen) + err
    assert p.returncode == 143, err
    assert "Traceback" not in err and err.strip().splitlines()[-1].startswith("okgen: terminated (finished work is kept")
    again = okgen(ws, "daily", "--date", str(DAY))
    assert again.returncode == 0, again.stderr
    assert f"okgen: {after}: done" not in again.stderr  # that stage was not run twice
    Signature.parse(again.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_a_replay_signs_the_feed_list_of_its_capture(site, tmp_path):
    """[daily] feeds must not replace, in the signature, the list a replayed capture was made with."""
    _, feeds, _ = site
    ws = Workspace(tmp_path / "ws")
    write_config(ws, feeds, retrievers=[])
    first = okgen(ws, "daily", "--date", str(DAY))
    assert first.returncode == 0, first.stderr
    captured = Signature.parse(first.stdout.strip().splitlines()[-1])
    capture = ws.warc_dir / f"okgen-{DAY}.warc.gz"
    other = tmp_path / "other-feeds.toml"  # another list: its first outlet only
    other.write_text(feeds.read_text().split("\n[[outlet]]")[0] + "\n")
    ws2 = Workspace(tmp_path / "ws2")
    write_config(ws2, other, retrievers=[])
    replayed = okgen(ws2, "daily", "--date", str(DAY), "--replay", str(capture))
    assert replayed.returncode == 0, replayed.stderr
    sig = Signature.parse(replayed.stdout.strip().splitlines()[-1])
    assert sig.feeds_hash == captured.feeds_hash and sig.content_hash == captured.content_hash


QUIET_TEXT = ("Bread needs only flour, water, salt and time. Mix the flour with the water and leave it to rest "
              "for half an hour, then add the salt and knead the dough until it is smooth and springs back. "
              "Let it rise somewhere warm until it has doubled, shape it gently into a round loaf and let it rise "
              "again. Bake it in a very hot oven until the crust is deep brown and the loaf sounds hollow when "
              "tapped underneath. Leave it to cool on a rack before cutting it, or the crumb turns gummy. ")


def test_a_quiet_day_is_done_without_a_snapshot_and_is_no_failure(tmp_path):
    """A day whose articles give no question: exit 0, one warning that says why, nothing on stdout
    (no signature), the run recorded as done with the reason, and a rerun that does not retry it."""
    dump = tmp_path / "quiet.jsonl"
    dump.write_text(json.dumps({"title": "Baking bread at home", "text": QUIET_TEXT * 2, "url": "https://bakery.example/1",
                                "date": f"{DAY}T08:00:00Z", "source": "bakery"}) + "\n")
    ws = Workspace(tmp_path / "ws")
    out = okgen(ws, "daily", "--date", str(DAY), "--import", str(dump), "--retrievers", "")
    assert out.returncode == 0, out.stderr
    assert out.stdout == ""  # no signature to print
    assert "1 article for the date, 1 new" in out.stderr and "feeds ok" not in out.stderr, out.stderr  # no feed read
    warn = [ln for ln in out.stderr.splitlines() if "has no snapshot" in ln]
    assert len(warn) == 1 and "no question kept" in warn[0] and "0 candidates from 1 article)" in warn[0], out.stderr
    assert not list(ws.snapshots_dir.glob("*/manifest.json"))
    runs = json.loads(okgen(ws, "--json", "status").stdout)["runs"]
    assert [r["status"] for r in runs] == ["done"] and runs[0]["signature"] is None
    assert "no question kept" in runs[0]["error"]
    assert {s["stage"]: s["status"] for s in runs[0]["stages"]} == {
        "ingest": "done", "generate": "done", "snapshot": "skipped", "index": "skipped", "publish": "skipped"}
    again = okgen(ws, "--json", "daily", "--date", str(DAY), "--import", str(dump))
    assert again.returncode == 0, again.stderr
    res = json.loads(again.stdout)
    assert res["status"] == "empty" and res["already_done"] and res["signature"] is None
    assert "no question kept" in res["error"]


def test_quiet_keeps_the_warning_of_a_day_without_a_snapshot(tmp_path):
    """``-q`` silences progress, not warnings: a cron job run with it still learns of a day with no snapshot."""
    dump = tmp_path / "quiet.jsonl"
    dump.write_text(json.dumps({"title": "Baking bread at home", "text": QUIET_TEXT * 2, "url": "https://bakery.example/1",
                                "date": f"{DAY}T08:00:00Z", "source": "bakery"}) + "\n")
    out = okgen(Workspace(tmp_path / "ws"), "-q", "daily", "--date", str(DAY), "--import", str(dump), "--retrievers", "")
    assert out.returncode == 0, out.stderr
    warn = [ln for ln in out.stderr.splitlines() if "has no snapshot" in ln]
    assert len(warn) == 1 and "no question kept" in warn[0], out.stderr


def test_a_backfill_refuses_a_dump_whose_records_have_no_date(tmp_path):
    """An undated record would be filed under every day of the range: refused before anything runs."""
    dump = tmp_path / "undated.jsonl"
    dump.write_text(json.dumps({"title": "Baking bread at home", "text": QUIET_TEXT * 2,
                                "url": "https://bakery.example/1", "source": "bakery"}) + "\n")
    ws = Workspace(tmp_path / "ws")
    out = okgen(ws, "daily", "--from", str(DAY), "--to", str(DAY + dt.timedelta(days=1)), "--import", str(dump),
                "--retrievers", "")
    assert out.returncode == 1
    assert "record 1 has no date" in out.stderr and "--date" in out.stderr
    assert not (ws.data_dir / "okgen.sqlite").exists()
    # One day with --date still takes the dump's undated records as that day's.
    one = okgen(ws, "daily", "--date", str(DAY), "--import", str(dump), "--retrievers", "")
    assert one.returncode == 0, one.stderr


def test_a_day_with_unfinished_articles_says_why_in_one_line(llm_day):
    # One article's every call fails on the server: daily names the kind and the server's own
    # message, as `okgen generate` does, not a bare "(errors)".
    from okgen.testing.openai_server import Reply

    ws, srv, spec, agents, articles = llm_day
    doomed = next(a for a in articles if a.date == DAY)

    def responder(req, endpoint):
        a = agents.article_of(req)
        if a is not None and a.id == doomed.id:
            return Reply(status=500, error="shard 7 is overloaded")
        return agents(req, endpoint)

    srv.responder = responder
    out = okgen(ws, "daily", "--date", str(DAY), "--generator", f"{spec},max_retries=0")
    assert out.returncode == 1
    err = [ln for ln in out.stderr.splitlines() if ln.startswith("okgen: error:")]
    assert len(err) == 1 and "1 article(s) could not be finished (http_500 1)" in err[0], out.stderr
    assert "shard 7 is overloaded" in err[0] and "rerun to retry them" in err[0]


def test_what_a_rerun_keeps_of_the_run_it_resumes():
    from okgen.daily.pipeline import DailyOptions, _keep_generator, _public

    begun = _public(DailyOptions(generator="openai/g", validator="openai/v", probes=("openai/p",), max_cost=5.0,
                                 per_article=2, generator_chosen=True, validator_chosen=True, probes_chosen=True))
    plain = _keep_generator(DailyOptions(), begun, DAY, force=False)
    # The models, the questions per article and the budget: a day begun under $5 is not finished without one.
    assert (plain.generator, plain.validator, plain.probes, plain.per_article, plain.max_cost) == \
        ("openai/g", "openai/v", ("openai/p",), 2, 5.0)
    # okgen.toml naming the same generator keeps the validator and probes the day was begun with.
    same = _keep_generator(DailyOptions(generator="openai/g", generator_chosen=True), begun, DAY, force=False)
    assert (same.validator, same.probes) == ("openai/v", ("openai/p",))
    # Chosen anew: another generator, or --validator none, is what runs.
    other = _keep_generator(DailyOptions(generator="openai/h", generator_chosen=True), begun, DAY, force=False)
    assert (other.generator, other.validator, other.probes) == ("openai/h", None, ())
    novalidator = _keep_generator(DailyOptions(validator_chosen=True), begun, DAY, force=False)
    assert novalidator.generator == "openai/g" and novalidator.validator is None
    assert _keep_generator(DailyOptions(max_cost=9.0), begun, DAY, force=False).max_cost == 9.0
    # The windows (they make the snapshot's corpus) and retrievers, unless given: a resume that
    # read the defaults built a 10-day snapshot of a day begun with --windows 1.
    narrow = _public(DailyOptions(retrievers=("bm25",), windows=(1,), retrievers_chosen=True, windows_chosen=True))
    again = _keep_generator(DailyOptions(retrievers=("bm25", "dpr")), narrow, DAY, force=True)
    assert (again.retrievers, again.windows) == (("bm25",), (1,))
    given = _keep_generator(DailyOptions(windows=(1, 5), windows_chosen=True), narrow, DAY, force=True)
    assert given.windows == (1, 5)


def test_a_finished_date_is_printed_again_without_options_said_for_another_run(tmp_path):
    # Run 1 finished; a later --force attempt (other options) failed: a plain rerun prints run 1,
    # and says nothing of the failed attempt's options.
    from okgen.daily.pipeline import DailyOptions, run_daily
    from okgen.daily.state import RunState

    ws = Workspace(tmp_path / "ws")
    with RunState(ws.db_path) as state:
        done, _ = state.start_or_resume(DAY, config={"generator": "openai/g"})
        state.finish_run(done, "done", signature="sig-of-run-1")
        failed, _ = state.start_or_resume(DAY, force=True, config={"generator": "extractive"})
        state.finish_run(failed, "failed", error="boom")
        assert state.rerun_target(DAY)[:2] == (done, "done")
    seen = []
    result = run_daily(DAY, ws, DailyOptions(retrievers=()), on_options=seen.append)
    assert result.already_done and result.run_id == done and result.signature == "sig-of-run-1"
    assert seen == []


def test_a_copied_workspace_finds_its_own_snapshot_folder(tmp_path):
    """A run records its snapshot's folder as an absolute path: in a copy of the workspace it
    named (and the index and publish stages would have used) the original's folder."""
    from okgen.daily.pipeline import _local_path

    ws = Workspace(tmp_path / "copy")
    name = "2025-04-11_20261201T034405Z_b7c76adc4e78"
    (ws.snapshots_dir / name).mkdir(parents=True)
    original = str(tmp_path / "original" / "snapshots" / name)
    assert _local_path(ws, original) == str(ws.snapshots_dir / name)
    assert _local_path(ws, str(tmp_path / "elsewhere" / "other")) == str(tmp_path / "elsewhere" / "other")
    assert _local_path(ws, f"snapshots/{name}") == str(ws.home / "snapshots" / name)
    assert _local_path(ws, None) is None
