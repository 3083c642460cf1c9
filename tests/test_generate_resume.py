"""Kill-and-resume: SIGKILL a generating subprocess mid-run, rerun, and lose nothing."""

from __future__ import annotations

import datetime as dt
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

from okgen.files import write_jsonl
from okgen.generate.pipeline import run_generate
from okgen.settings import Workspace
from okgen.testing.corpus import make_articles
from okgen.testing.llm_agents import AgentResponder
from okgen.testing.openai_server import OpenAIServer, Reply

DAY = dt.date(2026, 11, 21)


def finished_rows(db) -> int:
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1)
        try:
            return con.execute("SELECT COUNT(*) FROM gen_articles").fetchone()[0]
        finally:
            con.close()
    except sqlite3.Error:
        return 0


def start_generating(ws: Workspace, path, spec: str, rows: int) -> subprocess.Popen:
    """``okgen generate`` in a subprocess, returned once ``rows`` articles are finished."""
    env = dict(os.environ, OKGEN_HOME=str(ws.home), OKGEN_NO_PROGRESS="1")  # gates on, as in this process
    proc = subprocess.Popen(
        [sys.executable, "-m", "okgen", "generate", "--date", str(DAY), "--articles", str(path),
         "--generator", spec, "--validator", spec, "--concurrency", "4"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.time() + 60
    while finished_rows(ws.db_path) < rows:
        if proc.poll() is not None or time.time() > deadline:
            proc.kill()
            raise AssertionError(f"the subprocess never finished {rows} articles: {proc.stderr.read().decode()}")
        time.sleep(0.05)
    return proc


def test_sigkill_mid_run_then_resume(tmp_path):
    articles, _ = make_articles(12, DAY, days=1, seed=11)
    path = tmp_path / "articles.jsonl"
    write_jsonl(path, articles)
    ws = Workspace(tmp_path / "ws")
    responder = AgentResponder(articles, seed=2)
    with OpenAIServer(responder=responder, latency=0.3) as slow:
        spec = f"openai/fake,base_url={slow.base_url}"
        proc = start_generating(ws, path, spec, 3)
        try:
            proc.send_signal(signal.SIGKILL)
            proc.wait(10)
        finally:
            if proc.poll() is None:
                proc.kill()
        assert proc.returncode == -signal.SIGKILL
        killed_at = finished_rows(ws.db_path)
        assert 3 <= killed_at < 12  # really stopped mid-run
        gen_calls_before = responder.calls["generator"]
        resumed = run_generate(DAY, ws, articles, generator=spec, validator=spec, concurrency=4)
    assert resumed.complete and resumed.funnel["articles"]["resumed"] == killed_at
    # Finished articles were not generated again (at most the ones in flight at the kill).
    assert responder.calls["generator"] - gen_calls_before <= 12 - killed_at
    con = sqlite3.connect(ws.db_path)
    rows = con.execute("SELECT article_id, COUNT(*) FROM gen_articles GROUP BY article_id").fetchall()
    con.close()
    assert len(rows) == 12 and all(n == 1 for _, n in rows)

    # Reference: the same run, never interrupted, in a fresh workspace.
    with OpenAIServer(responder=AgentResponder(articles, seed=2)) as fast:
        ref = run_generate(DAY, Workspace(tmp_path / "ref"), articles,
                           generator=f"openai/fake,base_url={fast.base_url}",
                           validator=f"openai/fake,base_url={fast.base_url}")
    assert [q.id for q in resumed.questions] == [q.id for q in ref.questions]
    # (the offline generator behind the scripted server asks about 1 question per synthetic
    # article, 7 of these 12 at e88a78c: the floor only guards against a run that asks nothing)
    # The fake generator writes the offline generator's questions: 5 on these 12 synthetic articles
    # since no name is an option of two questions of a day (6 before).
    assert len({q.id for q in resumed.questions}) == len(resumed.questions) >= 5
    assert [q.model_dump() for q in resumed.questions] == [q.model_dump() for q in ref.questions]


def test_sigterm_mid_run_exits_143_with_a_message_and_resumes(tmp_path):
    articles, _ = make_articles(12, DAY, days=1, seed=11)
    path = tmp_path / "articles.jsonl"
    write_jsonl(path, articles)
    ws = Workspace(tmp_path / "ws")
    with OpenAIServer(responder=AgentResponder(articles, seed=2), latency=0.3) as slow:
        spec = f"openai/fake,base_url={slow.base_url}"
        proc = start_generating(ws, path, spec, 2)
        try:
            proc.send_signal(signal.SIGTERM)  # what `kill`, scancel and docker stop send
            err = proc.communicate(timeout=30)[1].decode()
        finally:
            if proc.poll() is None:
                proc.kill()
        assert proc.returncode == 143 and "okgen: terminated" in err and "Traceback" not in err
        stopped_at = finished_rows(ws.db_path)
        assert 2 <= stopped_at < 12
        resumed = run_generate(DAY, ws, articles, generator=spec, validator=spec, concurrency=4)
    assert resumed.complete and resumed.funnel["articles"]["resumed"] == stopped_at


# --- a budget, a dead endpoint and a refused article: the run stops (or not) for the right reason ---

def test_a_budget_is_spent_close_to_its_limit_at_concurrency_and_a_rerun_finishes(tmp_path):
    # Every generator call reserves its longest answer (512 tokens, $0.004) and costs far less:
    # at concurrency 8 the reservations alone held most of the $0.04 budget, and the first refused
    # one stopped the run (30 % of the budget spent, measured before the fix). A call that does not
    # fit now waits for the calls in flight; the run stops only when nothing is in flight and the
    # next call would pass the limit.
    articles, _ = make_articles(30, DAY, days=1, seed=5)
    cfg = {"prices": {"fake": {"input": 2.0, "output": 8.0}}}
    ws = Workspace(tmp_path / "ws")
    with OpenAIServer(responder=AgentResponder(articles)) as srv:
        spec = f"openai/fake,base_url={srv.base_url}"
        kw = dict(generator=f"{spec},max_tokens=512", validator=spec, per_article=4, config=cfg)
        res = run_generate(DAY, ws, articles, max_cost=0.04, concurrency=8, **kw)
        f = res.funnel
        assert res.stopped == "budget" and f["articles"]["pending_by_reason"].get("budget", 0) >= 1
        spent = f["usage"]["this_run_cost_usd"]
        assert 0.04 * 0.7 <= spent <= 0.04, spent  # measured 0.034 (85 %)
        assert "budget reached: $0.0" in f["articles"]["errors"]["budget"] and "of $0.04 spent" in f["articles"]["errors"]["budget"]
        done = run_generate(DAY, ws, articles, concurrency=8, **kw)
    assert done.complete and done.funnel["articles"]["resumed"] == f["articles"]["generated"]


def test_a_dead_endpoint_stops_the_run_in_seconds(tmp_path, monkeypatch, caplog):
    import socket

    import okgen.llm.openai_chat as openai_chat

    waits: list[float] = []

    def no_wait(state):  # the backoff is recorded, not slept (tenacity asks before it knows it stops)
        waits.append(openai_chat._backoff(state))
        return 0.0

    monkeypatch.setattr(openai_chat, "_wait", no_wait)
    articles, _ = make_articles(30, DAY, days=1, seed=5)
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    spec = f"openai/m,base_url={url}"
    with caplog.at_level("WARNING"):
        res = run_generate(DAY, Workspace(tmp_path / "ws"), articles, generator=spec, validator=spec, concurrency=4)
    f = res.funnel
    assert res.stopped == "errors" and not res.complete and f["articles"]["pending"] == 30
    # Before: 30 articles x 6 retries with backoffs up to 16 s, a warning line each.
    assert f["usage"]["this_run_retries"] <= 4 * 2 and all(w < 10 for w in waits)
    assert f["usage"]["this_run_calls"] <= 16
    lines = [r for r in caplog.records if r.levelname in ("WARNING", "ERROR")]
    assert len(lines) <= 3, [r.getMessage() for r in lines]
    msg = f["articles"]["errors"]["unreachable"]
    assert url in msg and "base_url" in msg and f["articles"]["errors"]["errors"] == msg
    # The run's line says its calls were never answered (it read as 16 calls made, $0).
    failed = f["usage"]["this_run_errors"]
    assert failed and set(failed) <= {"unreachable", "connection"}
    assert sum(failed.values()) == f["usage"]["this_run_calls"]
    from okgen.generate.funnel import render_funnel

    line = next(x for x in render_funnel(f).splitlines() if x.strip().startswith("this run"))
    assert f"{sum(failed.values())} failed: " in line and "unreachable" in line


def test_a_content_filter_refusal_is_a_final_article_failure(tmp_path):
    # Azure OpenAI's content filter answers HTTP 400 with the code content_filter: asked again, it
    # refuses again. The article is recorded failed (not left pending), so the day finishes and a
    # rerun does not ask again.
    articles, _ = make_articles(6, DAY, days=1, seed=5)
    body = {"error": {"message": "The response was filtered due to the prompt triggering Azure OpenAI's content "
                                 "management policy.", "type": None, "param": "prompt", "code": "content_filter",
                      "status": 400}}
    blocked = articles[2].title
    r = AgentResponder(articles, overrides={blocked: Reply(status=400, raw=json.dumps(body))})
    ws = Workspace(tmp_path / "ws")
    with OpenAIServer(responder=r) as srv:
        spec = f"openai/fake,base_url={srv.base_url}"
        res = run_generate(DAY, ws, articles, generator=spec, validator=spec, concurrency=2)
        a = res.funnel["articles"]
        assert res.complete and a["pending"] == 0 and a["failed"] == {"content_filter": 1}
        assert r.calls["generator"] == 6
        again = run_generate(DAY, ws, articles, generator=spec, validator=spec, concurrency=2)
    assert again.complete and r.calls["generator"] == 6  # nothing asked again
    assert again.funnel["articles"]["failed"] == {"content_filter": 1}
