"""The progress helper: a bar on a terminal, a log line every ~10 s elsewhere, nothing with -q (fake clock)."""

from __future__ import annotations

import io
import logging

import pytest

from okgen import progress
from okgen.errors import ConfigError


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def lines(caplog, monkeypatch):
    monkeypatch.delenv("OKGEN_QUIET", raising=False)
    monkeypatch.delenv("OKGEN_PROGRESS_SECONDS", raising=False)
    monkeypatch.setattr(progress.log, "level", logging.INFO)
    caplog.set_level(logging.INFO, logger=progress.LOGGER)
    return lambda: [r.getMessage() for r in caplog.records if r.name == progress.LOGGER]


def test_off_a_terminal_one_line_every_ten_seconds_with_rate_and_eta(lines):
    clock = Clock()
    with progress.bar(total=300, desc="dpr: encode passages", unit="text", clock=clock) as pb:
        assert isinstance(pb, progress.LogBar)
        for _ in range(100):  # 3 texts every 0.5 s: 6 texts/s, 50 s of work
            clock.t += 0.5
            pb.update(3)
    got = lines()
    assert len(got) == 5  # at 10, 20, 30, 40 and 50 s; none at the start
    assert got[0] == "dpr: encode passages: 60/300 (20%), 6.0 text/s, elapsed 00:10, ETA 00:40"
    assert got[-1].startswith("dpr: encode passages: 300/300 (100%)")


def test_a_short_job_logs_nothing_and_a_long_one_says_where_it_ended(lines):
    clock = Clock()
    with progress.bar(total=10, desc="quick", clock=clock) as pb:
        clock.t += 3
        pb.update(10)
    assert lines() == []
    with progress.bar(total=10, desc="slow", clock=clock) as pb:
        clock.t += 12
        pb.update(4)
        clock.t += 1
        pb.update(2)  # stopped early (an error, say): the last line tells where
    assert [m.split(",")[0] for m in lines()] == ["slow: 4/10 (40%)", "slow: 6/10 (60%)"]


def test_the_rate_is_the_average_so_far_not_the_first_items(lines):
    # A slow first item (a model loading), then 29 quick ones within the same interval: the last
    # line said "11.00s/article", the first item's rate.
    clock = Clock()
    with progress.bar(total=30, desc="parse", unit="article", clock=clock) as pb:
        clock.t += 11
        pb.update(1)
        for _ in range(29):
            clock.t += 0.1
            pb.update(1)
    got = lines()
    assert got[0].startswith("parse: 1/30 (3%), 11.0 s/article")
    assert got[-1].startswith("parse: 30/30 (100%), 2.2 article/s"), got[-1]  # 30 in 13.9 s


def test_a_resumed_jobs_rate_counts_this_runs_work(lines):
    # 20 of 30 done by an earlier run, 5 more in 10 s: 2 s each, not 25 in 10 s.
    clock = Clock()
    with progress.bar(total=30, initial=20, desc="eval", unit="q", clock=clock) as pb:
        for _ in range(5):
            clock.t += 2
            pb.update(1)
    assert lines()[-1].startswith("eval: 25/30 (83%), 2.0 s/q, elapsed 00:10"), lines()


def test_quiet_silences_lines_and_bars(lines, monkeypatch):
    clock = Clock()
    monkeypatch.setenv("OKGEN_QUIET", "1")
    with progress.bar(total=5, desc="x", clock=clock) as pb:
        clock.t += 30
        pb.update(5)
    assert pb.disable and lines() == []
    monkeypatch.delenv("OKGEN_QUIET")
    monkeypatch.setattr(progress.log, "level", logging.ERROR)  # what `okgen -q` sets
    assert progress.quiet() and progress.bar(total=5).disable


def test_a_terminal_gets_a_tqdm_bar(lines, monkeypatch):
    err = io.StringIO()
    err.isatty = lambda: True  # type: ignore[method-assign]
    monkeypatch.setattr("sys.stderr", err)
    monkeypatch.delenv("OKGEN_NO_PROGRESS", raising=False)
    with progress.bar(total=4, desc="index", unit="cell") as pb:
        assert not isinstance(pb, progress.LogBar)
        pb.update(4)
    assert err.getvalue().startswith("\rindex:   0%|") and "0/4" in err.getvalue() and lines() == []


def test_the_interval_is_a_setting(lines, monkeypatch):
    monkeypatch.setenv("OKGEN_PROGRESS_SECONDS", "0")
    assert progress.interval() == 0
    monkeypatch.delenv("OKGEN_PROGRESS_SECONDS")
    assert progress.interval() == progress.LOG_EVERY
    monkeypatch.setenv("OKGEN_PROGRESS_SECONDS", "soon")  # a typo is an error naming the variable
    with pytest.raises(ConfigError, match="OKGEN_PROGRESS_SECONDS='soon'"):
        progress.interval()


def test_a_ticker_says_what_runs_and_for_how_long(lines):
    clock = Clock()
    t = progress.Ticker("colbert: index 600 passages", clock=clock)
    clock.t += 75
    t.phase = "k-means"
    t.tick()
    assert lines() == ["colbert: index 600 passages (k-means): elapsed 01:15"]


def test_a_ticker_logs_from_its_thread_while_the_block_runs_and_stops_after(lines, monkeypatch):
    import threading

    monkeypatch.setenv("OKGEN_PROGRESS_SECONDS", "0.01")
    seen = threading.Event()

    class Seen(logging.Handler):
        def emit(self, record):
            seen.set()

    handler = Seen()
    progress.log.addHandler(handler)
    try:
        with progress.ticker("work", phase="one") as t:
            assert any(th.name == "okgen-ticker" for th in threading.enumerate())
            assert seen.wait(60), "no line while the block ran"  # the block blocks; the thread reports
    finally:
        progress.log.removeHandler(handler)
    n = t.lines
    assert n >= 1 and lines()[0].startswith("work (one): elapsed 00:00")
    assert t.lines == n  # the thread stopped with the block


def test_quiet_silences_the_ticker(lines, monkeypatch):
    monkeypatch.setenv("OKGEN_QUIET", "1")
    monkeypatch.setenv("OKGEN_PROGRESS_SECONDS", "0.01")
    import threading

    with progress.ticker("work") as t:
        assert not any(th.name == "okgen-ticker" for th in threading.enumerate())  # no thread started
    assert t.lines == 0 and lines() == []


def test_a_step_that_takes_minutes_still_shows_the_job_alive(lines):
    # A model's first batch can take minutes: no step done, and no line said the job was running.
    clock = Clock()
    with progress.bar(total=3, desc="generate 2026-11-21", unit="article", clock=clock) as pb:
        clock.t += 4
        pb.beat()  # the heartbeat thread's call, every interval
        assert lines() == []  # nothing for 4 s
        clock.t += 7
        pb.beat()
        clock.t += 3
        pb.beat()  # a line came 3 s ago: not yet another
        clock.t += 8
        pb.beat()
        pb.update(1)
    got = lines()
    assert got[:2] == ["generate 2026-11-21: 0/3 (0%), ? article/s, elapsed 00:11, ETA ?",
                       "generate 2026-11-21: 0/3 (0%), ? article/s, elapsed 00:22, ETA ?"], got


def test_the_heartbeat_thread_ends_with_its_bar(lines, monkeypatch):
    # A bar dropped without close() (an error escaping its loop) must not log on for ever.
    import gc
    import threading

    monkeypatch.setenv("OKGEN_PROGRESS_SECONDS", "3600")
    before = {t for t in threading.enumerate() if t.name == "okgen-progress"}
    pb = progress.bar(total=3, desc="x")
    assert isinstance(pb, progress.LogBar)
    mine = [t for t in threading.enumerate() if t.name == "okgen-progress" and t not in before]
    assert len(mine) == 1
    pb.close()  # close stops it at once
    mine[0].join(timeout=60)
    assert not mine[0].is_alive()
    pb = progress.bar(total=3, desc="y")
    ref = __import__("weakref").ref(pb)
    del pb
    gc.collect()
    assert ref() is None  # the thread does not keep the bar alive


def test_an_update_right_after_the_heartbeats_line_logs_no_second_line(lines):
    # The heartbeat logged "14/30" at 10 s; the update a moment later logged "15/30" in the same
    # second: two lines where one interval should give one.
    clock = Clock()
    with progress.bar(total=30, desc="generate", unit="article", clock=clock) as pb:
        for _ in range(14):
            clock.t += 0.7
            pb.update(1)
        clock.t = 1010.0
        pb.beat()
        clock.t = 1010.05
        pb.update(1)
        assert len(lines()) == 1 and "14/30" in lines()[0]
        clock.t = 1020.1
        pb.update(1)  # an interval after the heartbeat's line: the next one
        assert len(lines()) == 2 and "16/30" in lines()[1]
