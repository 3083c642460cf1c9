"""The scheduler: a controlled clock, one fire a day, a missed day caught up, SIGTERM."""

from __future__ import annotations

import datetime as dt
import os
import signal
import subprocess
import sys
import time

import pytest

from okgen.daily import scheduler as sch

UTC = dt.timezone.utc


class Clock:
    def __init__(self, start: dt.datetime):
        self.t = start

    def set(self, t: dt.datetime) -> None:
        self.t = t


@pytest.fixture
def clock(monkeypatch):
    import apscheduler.executors.base as exec_base
    import apscheduler.schedulers.base as sched_base

    c = Clock(dt.datetime(2026, 11, 20, 5, 0, tzinfo=UTC))

    class FakeDatetime(dt.datetime):
        @classmethod
        def now(cls, tz=None):
            return c.t.astimezone(tz) if tz else c.t.replace(tzinfo=None)

    monkeypatch.setattr(sched_base, "datetime", FakeDatetime)
    monkeypatch.setattr(exec_base, "datetime", FakeDatetime)
    monkeypatch.setattr(sch, "now", lambda tz: c.t.astimezone(tz))
    return c


def manual_scheduler(ws):
    """A real APScheduler with the persistent store whose loop the test drives by hand."""
    from apscheduler.executors.debug import DebugExecutor
    from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
    from apscheduler.schedulers.base import BaseScheduler

    class Manual(BaseScheduler):
        def wakeup(self):
            pass

        def shutdown(self, wait=True):
            super().shutdown(wait)

    ws.data_dir.mkdir(parents=True, exist_ok=True)
    s = Manual(jobstores={"default": SQLAlchemyJobStore(url=sch.store_url(ws))}, executors={"default": DebugExecutor()}, timezone=UTC)
    s.start(paused=True)
    return s


def recorder(runs):
    """Stand in for the daily pipeline: record the date and a finished run."""
    from okgen.daily.state import RunState

    def run_one(date, ws):
        runs.append(date)
        with RunState(ws.db_path) as st:
            run_id, _ = st.start_or_resume(date)
            st.finish_run(run_id, "done", signature=f"sig-{date}")
        return f"sig-{date}"

    return run_one


def test_fires_once_a_day_and_catches_up_a_missed_day(workspace, clock, monkeypatch):
    runs: list[dt.date] = []
    monkeypatch.setattr(sch, "run_one", recorder(runs))

    s = manual_scheduler(workspace)
    job = sch.configure(s, workspace, at="06:00", tz="UTC")
    assert job.next_run_time == dt.datetime(2026, 11, 20, 6, 0, tzinfo=UTC)
    s.resume()
    for t in (dt.datetime(2026, 11, 20, 5, 59, tzinfo=UTC), dt.datetime(2026, 11, 20, 6, 0, 1, tzinfo=UTC),
              dt.datetime(2026, 11, 20, 6, 30, tzinfo=UTC), dt.datetime(2026, 11, 20, 23, 0, tzinfo=UTC),
              dt.datetime(2026, 11, 21, 6, 0, 2, tzinfo=UTC), dt.datetime(2026, 11, 21, 18, 0, tzinfo=UTC)):
        clock.set(t)
        s._process_jobs()
    assert runs == [dt.date(2026, 11, 19), dt.date(2026, 11, 20)]  # once per day, the day before
    s.shutdown(wait=False)

    # The machine is down through the 22nd 06:00 fire; it comes back at 09:30 that day.
    clock.set(dt.datetime(2026, 11, 22, 9, 30, tzinfo=UTC))
    s2 = manual_scheduler(workspace)
    job = sch.configure(s2, workspace, at="06:00", tz="UTC")
    assert job.next_run_time == dt.datetime(2026, 11, 22, 6, 0, tzinfo=UTC)  # the stored, missed fire
    s2.resume()
    s2._process_jobs()
    s2._process_jobs()
    assert runs[2:] == [dt.date(2026, 11, 21)]  # the missed day, once
    clock.set(dt.datetime(2026, 11, 23, 6, 0, 1, tzinfo=UTC))
    s2._process_jobs()
    assert runs[3:] == [dt.date(2026, 11, 22)]
    assert sch.next_run_time(workspace) == dt.datetime(2026, 11, 24, 6, 0, tzinfo=UTC)
    s2.shutdown(wait=False)


def test_down_for_days_runs_once_and_catches_up_one_more(workspace, clock, monkeypatch):
    runs: list[dt.date] = []
    monkeypatch.setattr(sch, "run_one", recorder(runs))
    s = manual_scheduler(workspace)
    sch.configure(s, workspace, at="06:00", tz="UTC")
    s.resume()
    clock.set(dt.datetime(2026, 11, 20, 6, 0, 1, tzinfo=UTC))
    s._process_jobs()
    assert runs == [dt.date(2026, 11, 19)]  # the first run builds only yesterday
    s.shutdown(wait=False)
    # Down from the 20th 06:00 to the 23rd 07:00: three fires missed, one run (coalesced),
    # which builds the 22nd and catches up the 21st (catch_up_days=1).
    clock.set(dt.datetime(2026, 11, 23, 7, 0, tzinfo=UTC))
    s2 = manual_scheduler(workspace)
    sch.configure(s2, workspace, at="06:00", tz="UTC")
    s2.resume()
    s2._process_jobs()
    s2._process_jobs()
    assert runs[1:] == [dt.date(2026, 11, 21), dt.date(2026, 11, 22)]
    s2.shutdown(wait=False)


def test_changed_time_replaces_the_job(workspace, clock):
    s = manual_scheduler(workspace)
    sch.configure(s, workspace, at="06:00", tz="UTC")
    job = sch.configure(s, workspace, at="07:15", tz="Europe/Berlin")
    assert job.next_run_time == dt.datetime(2026, 11, 20, 7, 15, tzinfo=dt.timezone(dt.timedelta(hours=1))).astimezone(job.next_run_time.tzinfo)
    s.shutdown(wait=False)


def test_a_changed_misfire_grace_is_set_on_the_stored_job(workspace, clock):
    """It was kept at the old grace without a word; the pending fire time stays."""
    s = manual_scheduler(workspace)
    first = sch.configure(s, workspace, at="06:00", tz="UTC", misfire_grace=100)
    again = sch.configure(s, workspace, at="06:00", tz="UTC", misfire_grace=5000)
    assert again.misfire_grace_time == 5000 and again.next_run_time == first.next_run_time
    s.shutdown(wait=False)


def test_bad_at_and_tz(workspace):
    from okgen.errors import ConfigError

    with pytest.raises(ConfigError, match="HH:MM"):
        sch.parse_at("25:00")
    with pytest.raises(ConfigError, match="unknown time zone"):
        sch.parse_tz("Mars/Olympus")


def test_schedule_cli_stops_cleanly_on_sigterm(workspace):
    # A daily-verb option in the environment is named once: the scheduled runs read settings.
    env = dict(os.environ, OKGEN_HOME=str(workspace.home), OKGEN_DAILY_GENERATOR="openai/x", OKGEN_DAILY_WINDOWS="1")
    p = subprocess.Popen([sys.executable, "-m", "okgen", "schedule", "--at", "03:00"], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    log = workspace.logs_dir / "schedule.log"
    deadline = time.time() + 30
    while time.time() < deadline and not (log.is_file() and "scheduler started" in log.read_text()):
        time.sleep(0.2)
    assert log.is_file() and "scheduler started" in log.read_text()
    # One scheduler a workspace: a second one is refused in one line while the first runs.
    assert sch.scheduler_running(workspace)
    second = subprocess.run([sys.executable, "-m", "okgen", "schedule", "--at", "04:00"], env=env,
                            capture_output=True, text=True, timeout=60)
    assert second.returncode != 0 and "another okgen schedule is running" in second.stderr.strip().splitlines()[-1]
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=30)
    assert p.returncode == 143, err  # 128 + SIGTERM, like every other verb
    assert "Traceback" not in err
    warned = [ln for ln in err.splitlines() if "sets an option of `okgen daily`" in ln]  # once, not twice
    assert len(warned) == 1 and "OKGEN_DAILY_GENERATOR" in warned[0], err  # OKGEN_DAILY_WINDOWS is a [daily] key
    assert "set [generate] generator in okgen.toml or OKGEN_GENERATE_GENERATOR" in warned[0]
    assert "scheduler stopped" in log.read_text()
    assert sch.next_run_time(workspace) is not None
    # The stored next run stays; status says no scheduler runs to fire it.
    assert not sch.scheduler_running(workspace)
    status = subprocess.run([sys.executable, "-m", "okgen", "status"], env=env, capture_output=True, text=True, timeout=60)
    assert "no okgen schedule is running now" in status.stdout, status.stdout


def test_a_quiet_day_is_caught_up_once_and_returns_no_signature(workspace, clock, monkeypatch, caplog):
    """A day finished with no snapshot (no question kept) counts as done: the job logs it, returns
    only the days with signatures, and the next day's run does not catch the quiet one up again."""
    from okgen.daily.state import RunState

    runs: list[dt.date] = []

    def quiet_then_busy(date, ws):
        runs.append(date)
        with RunState(ws.db_path) as st:
            run_id, _ = st.start_or_resume(date)
            sig = None if date == dt.date(2026, 11, 19) else f"sig-{date}"
            st.finish_run(run_id, "done", signature=sig, error=None if sig else "no question kept")
        return sig

    monkeypatch.setattr(sch, "run_one", quiet_then_busy)
    clock.set(dt.datetime(2026, 11, 20, 6, 0, 1, tzinfo=UTC))
    with caplog.at_level("WARNING", logger=sch.log.name):
        assert sch.scheduled_run(str(workspace.home)) == []
    assert any("2026-11-19 has no snapshot" in r.getMessage() for r in caplog.records)
    clock.set(dt.datetime(2026, 11, 21, 6, 0, 1, tzinfo=UTC))
    assert sch.scheduled_run(str(workspace.home)) == ["sig-2026-11-20"]
    assert runs == [dt.date(2026, 11, 19), dt.date(2026, 11, 20)]  # the quiet day is not retried


def test_a_reported_failure_is_one_log_line_and_a_bug_keeps_its_traceback(workspace, clock, monkeypatch, caplog):
    from okgen.errors import ConfigError

    def failing(date, ws):
        if date == dt.date(2026, 11, 19):
            raise ConfigError("dump.json: none of the 3 records could be read\n(first problem: bad_date)")
        raise RuntimeError("a bug")

    monkeypatch.setattr(sch, "run_one", failing)
    with caplog.at_level("ERROR", logger=sch.log.name):
        for day in (20, 21):  # yesterday: the 19th (an okgen error), then the 20th (a bug)
            clock.set(dt.datetime(2026, 11, day, 6, 0, 1, tzinfo=UTC))
            assert sch.scheduled_run(str(workspace.home)) == []
    reported = [r for r in caplog.records if "2026-11-19 failed" in r.getMessage()]
    assert len(reported) == 1 and reported[0].exc_info is None
    assert reported[0].getMessage().endswith("none of the 3 records could be read (first problem: bad_date)")
    bug = [r for r in caplog.records if "2026-11-20 failed" in r.getMessage()]
    assert len(bug) == 1 and bug[0].exc_info is not None
