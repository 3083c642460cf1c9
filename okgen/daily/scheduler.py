"""``okgen schedule``: run the daily job every day with APScheduler 3.

* A persistent SQLite job store (``data/scheduler.sqlite``) remembers the next fire time, so
  a machine that was down when the job should have fired runs it once when it comes back
  (coalescing merges every missed fire into one run; ``misfire_grace_time`` bounds how late).
* A cron trigger fires at ``--at HH:MM`` in ``--tz``; each fire builds the snapshot of the
  previous (complete) day in that timezone and, when the day before it has no finished run,
  catches that day up too (``catch_up_days``, default 1).
* One job instance at a time; SIGTERM/SIGINT shut the scheduler down cleanly; logs go to
  ``data/logs/schedule.log``.
"""

from __future__ import annotations

import datetime as dt
import logging
import sqlite3
from pathlib import Path
from typing import Any

from okgen.daily.times import parse_at, parse_tz  # noqa: F401  (part of this module's API)
from okgen.errors import OkgenError
from okgen.settings import Workspace

log = logging.getLogger(__name__)

JOB_ID = "okgen-daily"
JOB_FUNC = "okgen.daily.scheduler:scheduled_run"
DEFAULT_GRACE = 20 * 3600


def now(tz: dt.tzinfo) -> dt.datetime:
    """The current time in ``tz`` (a seam for tests that control the clock)."""
    return dt.datetime.now(tz)


def store_url(ws: Workspace) -> str:
    """SQLAlchemy URL of the persistent job store."""
    return f"sqlite:///{ws.data_dir / 'scheduler.sqlite'}"


def configure(scheduler: Any, ws: Workspace, at: str = "06:00", tz: str = "UTC",
              misfire_grace: int = DEFAULT_GRACE, catch_up_days: int = 1) -> Any:
    """Add the daily job to a (started, paused) scheduler unless the store already has it.

    Keeping a stored job with the same trigger keeps its pending fire time, which is what lets a
    missed fire run once after downtime. A changed time or zone replaces the job; a changed
    misfire grace is set on the stored job (its pending fire time kept).
    """
    from apscheduler.triggers.cron import CronTrigger

    hour, minute = parse_at(at)
    zone = parse_tz(tz)
    trigger = CronTrigger(hour=hour, minute=minute, timezone=zone)
    kwargs = {"home": str(ws.home), "tz": tz, "catch_up_days": catch_up_days}
    existing = scheduler.get_job(JOB_ID)
    if existing is not None and str(existing.trigger) == str(trigger) and existing.kwargs == kwargs:
        if existing.misfire_grace_time != misfire_grace:  # a new grace, the pending fire time kept
            existing.modify(misfire_grace_time=misfire_grace)
            log.info("the stored daily job's misfire grace is now %s s", misfire_grace)
        log.info("keeping the stored daily job (next run %s)", existing.next_run_time)
        return scheduler.get_job(JOB_ID)
    return scheduler.add_job(JOB_FUNC, trigger=trigger, id=JOB_ID, name="okgen daily", kwargs=kwargs,
                             replace_existing=True, coalesce=True, max_instances=1, misfire_grace_time=misfire_grace)


def new_scheduler(ws: Workspace, kind: str = "blocking", executor: Any = None) -> Any:
    """A scheduler with the persistent SQLite job store (``blocking`` or ``background``)."""
    from apscheduler.executors.pool import ThreadPoolExecutor
    from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore

    ws.data_dir.mkdir(parents=True, exist_ok=True)
    jobstores = {"default": SQLAlchemyJobStore(url=store_url(ws))}
    executors = {"default": executor or ThreadPoolExecutor(1)}
    if kind == "blocking":
        from apscheduler.schedulers.blocking import BlockingScheduler as cls
    elif kind == "background":
        from apscheduler.schedulers.background import BackgroundScheduler as cls
    else:
        raise ValueError(kind)
    return cls(jobstores=jobstores, executors=executors, timezone=dt.timezone.utc)


def scheduled_run(home: str, tz: str = "UTC", catch_up_days: int = 1) -> list[str]:
    """The job: build yesterday's snapshot (in ``tz``), catching up missed days first.

    Returns the signatures built (or found already built).
    """
    ws = Workspace(Path(home))
    zone = parse_tz(tz)
    yesterday = (now(zone) - dt.timedelta(days=1)).date()
    dates = [yesterday - dt.timedelta(days=i) for i in range(catch_up_days, 0, -1)] + [yesterday]
    from okgen.daily.state import RunState

    with RunState(ws.db_path) as state:
        done = state.done_dates()
    # Catch up only days missed since the first finished run, not days before okgen ran here.
    first = min(done) if done else yesterday
    todo = [d for d in dates if d == yesterday or (d not in done and d > first)]
    out = []
    for d in todo:
        log.info("scheduled run for %s", d)
        try:
            sig = run_one(d, ws)
        except OkgenError as e:  # a reported failure (bad input, no network...): one line, as the CLI says it
            log.error("daily run for %s failed: %s", d, " ".join(str(e).split()))
            continue
        except Exception:  # a bug: keep the scheduler alive; the traceback is in the log
            log.exception("daily run for %s failed", d)
            continue
        if sig is None:
            log.warning("%s has no snapshot: no question kept (okgen status says more)", d)
        else:
            out.append(sig)
    return out


def run_one(date: dt.date, ws: Workspace) -> str:
    """Run the daily job for one date (a seam tests replace)."""
    from okgen.daily.pipeline import run_daily

    return run_daily(date, ws).signature


def lock_path(ws: Workspace) -> Path:
    """The lock an ``okgen schedule`` process holds while it runs (one scheduler a workspace)."""
    return ws.data_dir / "locks" / "schedule.lock"


def scheduler_running(ws: Workspace) -> bool:
    """Whether an ``okgen schedule`` process runs in this workspace now: the holder its lock
    records (:class:`~okgen.daily.lock.RunLock`) is a live process."""
    from okgen.daily.lock import RunLock

    return RunLock(lock_path(ws)).held_by_live_process()


def next_run_time(ws: Workspace) -> dt.datetime | None:
    """Next fire time stored in the job store, read without starting a scheduler."""
    path = ws.data_dir / "scheduler.sqlite"
    if not path.is_file():
        return None
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            row = conn.execute("SELECT next_run_time FROM apscheduler_jobs WHERE id = ?", (JOB_ID,)).fetchone()
        finally:
            conn.close()
    except sqlite3.Error:
        return None
    if not row or row[0] is None:
        return None
    return dt.datetime.fromtimestamp(row[0], dt.timezone.utc)


def file_logging(ws: Workspace) -> logging.Handler:
    """Send okgen's and APScheduler's logs to ``data/logs/schedule.log`` (CLI use only)."""
    from logging.handlers import RotatingFileHandler

    ws.logs_dir.mkdir(parents=True, exist_ok=True)
    handler = RotatingFileHandler(ws.logs_dir / "schedule.log", maxBytes=10 << 20, backupCount=5, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    for name in ("okgen", "apscheduler"):
        lg = logging.getLogger(name)
        lg.addHandler(handler)
        lg.setLevel(logging.INFO)
    return handler
