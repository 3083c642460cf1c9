"""A run killed outright (SIGKILL) leaves no extraction worker or resource tracker behind."""

from __future__ import annotations

import datetime as dt
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from okgen.testing.corpus import make_articles
from okgen.testing.news_site import NewsSite
from okgen.testing.web import Route, WebServer

DAY = dt.date(2026, 11, 21)
PROC = Path("/proc")


def _descendants(pid: int) -> dict[int, str]:
    """pid -> command line of every process whose parent chain reaches ``pid``."""
    parents: dict[int, int] = {}
    for p in PROC.iterdir():
        if p.name.isdigit():
            try:
                parents[int(p.name)] = int((p / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    out, frontier = {}, {pid}
    while frontier:
        kids = {c for c, pp in parents.items() if pp in frontier}
        for c in kids:
            try:
                out[c] = (PROC / str(c) / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                pass
        frontier = kids
    return out


def _alive(pid: int) -> bool:
    try:
        return (PROC / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _wait(predicate, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:  # waiting on real processes: no fake clock can stand in
        if predicate():
            return True
        time.sleep(0.1)
    return predicate()


@pytest.mark.skipif(not PROC.is_dir(), reason="needs /proc (Linux)")
def test_sigkill_during_fetch_leaves_no_worker_or_tracker(tmp_path):
    articles, _ = make_articles(8, DAY, days=1, seed=4)
    web = WebServer().start()
    try:
        site = NewsSite(articles).install(web)
        for a in articles:  # every page hangs: the run is killed while fetching
            web.set(site.page_path(a), Route(hang=True, hang_seconds=60))
        (tmp_path / "feeds.toml").write_text(site.feed_list_toml())
        home = tmp_path / "ws"
        home.mkdir()
        (home / "okgen.toml").write_text('[ingest]\nallow_networks = ["loopback"]\nper_host_delay = 0.0\n'
                                         "extract_workers = 1\nread_timeout = 60.0\ntotal_timeout = 60.0\n")
        env = dict(os.environ, OKGEN_HOME=str(home), OKGEN_NO_PROGRESS="1")
        p = subprocess.Popen([sys.executable, "-m", "okgen", "ingest", "--date", str(DAY), "--feeds",
                              str(tmp_path / "feeds.toml")], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            assert _wait(lambda: any("multiprocessing" in c for c in _descendants(p.pid).values())
                         and sum(web.hits.values()) > len(site.outlets), 120), "no extraction worker started"
            helpers = _descendants(p.pid)
            p.send_signal(signal.SIGKILL)
            p.wait(timeout=30)
            # A worker still importing its modules (seconds on a loaded machine) starts watching
            # its parent only then: allow for that before calling it left behind.
            assert _wait(lambda: not any(_alive(pid) for pid in helpers), 90), (
                f"left behind: {[c for pid, c in helpers.items() if _alive(pid)]}")
        finally:
            if p.poll() is None:
                p.kill()
    finally:
        web.stop()


def test_a_worker_whose_parent_died_before_it_started_watching_leaves_at_once():
    """The parent's pid comes from the parent: a worker that finishes its imports after the
    parent was killed (reparented, getppid() is now another process) must not take that one for
    its parent and wait for it forever (a CI run left such a worker behind)."""
    code = ("import time; from okgen.ingest.extract import _init_worker; _init_worker(0, 2**22 + 7); "
            "time.sleep(20); print('still here')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "still here" not in out.stdout, (out.stdout, out.stderr)
