"""``okgen schedule``: run ``okgen daily`` every day (APScheduler 3, persistent job store)."""

from __future__ import annotations

import logging
import signal
import threading

import click

from okgen.cli.common import get_ctx


@click.command("schedule")
@click.option("--at", default="06:00", show_default=True, help="Time of day to run, HH:MM (24-hour).")
@click.option("--tz", default="UTC", show_default=True, help="IANA time zone of --at and of 'yesterday'.")
@click.option("--misfire-grace", default=20 * 3600, show_default=True, type=click.IntRange(min=1),
              help="Seconds a missed run may start late (after downtime); later ones are skipped.")
@click.option("--catch-up-days", default=1, show_default=True, type=click.IntRange(min=0),
              help="Also build up to this many earlier days that have no finished run.")
def schedule(at: str, tz: str, misfire_grace: int, catch_up_days: int) -> None:
    """Run the daily job every day at --at in --tz until stopped (SIGTERM or Ctrl-C).

    Each run builds the previous day's snapshot. Logs go to data/logs/schedule.log.

    Example: okgen schedule --at 06:30 --tz Europe/Berlin
    """
    from okgen.daily.scheduler import configure, file_logging, new_scheduler, parse_at, parse_tz
    from okgen.errors import ConfigError

    for flag, parse, value in (("--at", parse_at, at), ("--tz", parse_tz, tz)):
        try:
            parse(value)
        except ConfigError as e:  # a bad option value is a usage error (exit 2)
            raise click.BadParameter(str(e).removeprefix(f"{flag} "), param_hint=flag) from None
    ws = get_ctx().workspace
    ignored = [f"{var} sets an option of `okgen daily`, which the scheduled runs do not read: ignored ({hint})"
               for var, hint in _daily_options_in_env()]
    from okgen.daily.lock import RunLock
    from okgen.daily.scheduler import lock_path

    held = RunLock(lock_path(ws), message=f"another okgen schedule is running in {ws.home}{{holder}} "
                                          "(one scheduler a workspace)")
    held.acquire()
    file_logging(ws)
    log = logging.getLogger("okgen.schedule")
    for line in ignored:
        log.warning("%s", line)  # on stderr and in schedule.log, where a service's operator looks
    sched = new_scheduler(ws, "background")
    sched.start(paused=True)  # paused: the stored job (and a missed fire time) is read first
    job = configure(sched, ws, at=at, tz=tz, misfire_grace=misfire_grace, catch_up_days=catch_up_days)
    stopped = threading.Event()
    received: list[int] = []

    def stop(signum, frame):  # clean shutdown: no new runs; an interrupted run resumes next time
        log.info("received %s: stopping the scheduler", signal.Signals(signum).name)
        received.append(signum)
        stopped.set()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    log.info("scheduler started: okgen daily at %s %s; next run %s", at, tz, job.next_run_time)
    click.echo(f"okgen daily scheduled at {at} {tz}; next run {job.next_run_time}; logs in {ws.logs_dir / 'schedule.log'}", err=True)
    sched.resume()
    while not stopped.wait(1.0):
        pass
    sched.shutdown(wait=False)
    held.release()
    log.info("scheduler stopped")
    click.echo("scheduler stopped", err=True)
    # The shell's convention (128 + signal): 143 after SIGTERM, 130 after Ctrl-C, as every verb.
    raise click.exceptions.Exit(128 + received[0] if received else 0)


def _daily_options_in_env() -> list[tuple[str, str]]:
    """``OKGEN_DAILY_<OPTION>`` variables that set an option of the ``daily`` verb but no
    ``[daily]`` key (the scheduled runs read the settings, not the verb's options), each with the
    setting that does the same where one exists."""
    import os

    from okgen.cli.daily import daily
    from okgen.config import SECTIONS, Settings

    options = {p.name for p in daily.params if p.name and not p.envvar}  # --json reads OKGEN_JSON
    keys = set(Settings.model_fields["daily"].annotation.model_fields)
    out = []
    for var in sorted(os.environ):
        if not var.upper().startswith("OKGEN_DAILY_"):
            continue
        name = var.upper()[len("OKGEN_DAILY_"):].lower()
        if name not in options or name in keys:
            continue
        where = next((sec for sec in SECTIONS if name in getattr(Settings.model_fields[sec].annotation, "model_fields", {})), None)
        out.append((var, f"set [{where}] {name} in okgen.toml or OKGEN_{where.upper()}_{name.upper()}" if where
                    else "no okgen.toml setting does the same"))
    return out
