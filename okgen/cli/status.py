"""``okgen status``: recent runs, stage states, counts, failures and the next scheduled run."""

from __future__ import annotations

import datetime as dt

import click

from okgen.cli.common import echo_json, echo_table, get_ctx, json_option, want_json

# Runs recorded before interrupted runs were named plainly kept the Python class name.
_OLD_INTERRUPTS = {"_Terminated": "terminated (SIGTERM)", "KeyboardInterrupt": "interrupted (Ctrl-C)"}


def _fmt_error(error: str | None) -> str | None:
    """A recorded error as a user reads it (``terminated (SIGTERM)``, not ``_Terminated:``)."""
    if error is None:
        return None
    name, sep, rest = error.partition(":")
    if sep and name in _OLD_INTERRUPTS:
        return _OLD_INTERRUPTS[name] + (f": {rest.strip()}" if rest.strip() else "")
    return error


def _fmt_time(ts: float | None) -> str:
    if ts is None:
        return ""
    return dt.datetime.fromtimestamp(ts, dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%SZ")


def _ingest_runs(ws, limit: int) -> list[dict]:
    """The newest ``limit`` ingest runs of the workspace (a verb of their own, or daily's stage)."""
    import json

    if not ws.db_path.is_file():
        return []
    from okgen.ingest.store import ArticleStore

    with ArticleStore(ws.db_path) as store:
        rows = list(store.runs(limit=limit))
    out = []
    for r in rows:
        try:
            summary = json.loads(r.get("summary") or "{}")
        except ValueError:
            summary = {}
        out.append({"run_id": r["run_id"], "date": r["date"], "mode": r["mode"],
                    "started": str(r["started_at"])[:19].replace("T", " ") + "Z",
                    "finished": str(r["finished_at"])[:19].replace("T", " ") + "Z" if r.get("finished_at") else None,
                    "stored": summary.get("stored"), "stored_total": summary.get("stored_total")})
    return out


@click.command("status")
@click.option("--limit", default=10, show_default=True, type=click.IntRange(min=1), help="Runs to show.")
@json_option
def status(limit: int, json_out: bool) -> None:
    """Show recent ingest runs, recent daily runs with their stages and failures, and the next
    scheduled run; a broken okgen.toml or OKGEN_* setting is reported first (exit status 1).

    Example: okgen status --limit 5
    """
    from okgen.daily.scheduler import next_run_time, scheduler_running
    from okgen.daily.state import RunState
    from okgen.errors import ConfigError

    ws = get_ctx().workspace
    from okgen.daily.pipeline import DailyOptions

    try:  # what the next run would read: a broken okgen.toml (a setting, a model spec, a retriever) first
        DailyOptions.resolve(ws)
        config_error = None
    except ConfigError as e:  # also an okgen.toml that cannot be read (okgen.files.load_config)
        config_error = str(e)
    runs = []
    if ws.db_path.is_file():
        with RunState(ws.db_path) as st:
            runs = st.runs(limit=limit)
    ingests = _ingest_runs(ws, limit)
    nxt = next_run_time(ws)
    running = scheduler_running(ws)
    data = {
        "workspace": str(ws.home),
        "config_error": config_error,
        "next_scheduled_run": nxt.isoformat() if nxt else None,
        "scheduler_running": running,
        "ingest_runs": ingests,
        "runs": [
            {
                "run_id": r.run_id, "date": str(r.date), "status": r.status, "forced": r.forced,
                "started": _fmt_time(r.started_at), "finished": _fmt_time(r.finished_at),
                "signature": r.signature, "error": _fmt_error(r.error),
                "stages": [{"stage": s.stage, "status": s.status, "seconds": round(s.seconds, 2) if s.seconds is not None else None,
                            "counts": s.counts, "error": _fmt_error(s.error)} for s in r.stages],
            }
            for r in runs
        ],
    }
    if want_json(json_out):
        echo_json(data)
        if config_error:
            raise click.exceptions.Exit(1)
        return
    click.echo(f"workspace: {ws.home}")
    if config_error:
        click.echo(f"config: error: {config_error} (every verb that reads it stops on it)")
    idle = "" if nxt is None or running else " (no okgen schedule is running now: it fires only while one runs)"
    click.echo(f"next scheduled run: {nxt.isoformat() + idle if nxt else 'none (okgen schedule is not set up here)'}")
    if ingests:
        click.echo("recent ingest runs (okgen ingest, and the ingest stage of okgen daily):")
        echo_table([{"date": r["date"], "mode": r["mode"], "started": r["started"],
                     "finished": r["finished"] or "not finished (running, or stopped)", "stored": "" if r["stored"] is None else r["stored"],
                     "in store": "" if r["stored_total"] is None else r["stored_total"]} for r in ingests],
                   ["date", "mode", "started", "finished", "stored", "in store"])
    if not runs:
        click.echo("no daily runs yet (okgen daily starts one)")
        if config_error:
            raise click.exceptions.Exit(1)
        return
    click.echo("recent daily runs:")
    rows = []
    for r in runs:
        stages = " ".join(f"{s.stage}:{s.status}" for s in r.stages)
        rows.append({"run": r.run_id, "date": str(r.date), "status": r.status, "started": _fmt_time(r.started_at),
                     "stages": stages, "error": (_fmt_error(r.error) or "")[:80]})
    echo_table(rows, ["run", "date", "status", "started", "stages", "error"])
    failures = [(r, s) for r in runs for s in r.stages if s.status == "failed"]
    for r, s in failures[:10]:
        click.echo(f"failed: run {r.run_id} ({r.date}) stage {s.stage}: {_fmt_error(s.error)}")
    if config_error:
        raise click.exceptions.Exit(1)
