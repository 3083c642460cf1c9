"""``okgen timeline``: accuracy over time from series eval runs, with cutoff estimates; and the
rendering of ``okgen eval --series``."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import click

from okgen.cli.common import echo_json, echo_table, get_ctx, json_option, want_json
from okgen.errors import ConfigError


@click.command("timeline")
@click.argument("runs", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("--bucket", type=click.Choice(["day", "week", "month"]), default="month", show_default=True,
              help="Aggregate accuracy by day, ISO week or month (Daily Oracle: month).")
@click.option("--ma-window", type=click.IntRange(min=1), default=5, show_default=True,
              help="Trailing moving average over this many buckets (expanding at the start).")
@click.option("--estimate-cutoff", is_flag=True, help="Fit the step model and bootstrap intervals for the cutoff and the drop.")
@click.option("--claimed", multiple=True, help="A vendor's stated cutoff, MODEL=YYYY-MM[-DD] (repeatable).")
@click.option("--since", default=None, help="Only questions dated on or after this day (YYYY-MM-DD).")
@click.option("--exclude-probe-known", is_flag=True, help="Leave out questions the freshness probe answered without the article.")
@click.option("--min-side", type=click.IntRange(min=2), default=14, show_default=True, help="Least days of data each side of a candidate cutoff.")
@click.option("--min-drop", type=click.FloatRange(min=0), default=0.05, show_default=True, help="Least drop reported as a cutoff.")
@click.option("--n-boot", type=click.IntRange(min=100), default=1000, show_default=True, help="Bootstrap resamples.")
@click.option("--seed", type=int, default=0, show_default=True, help="Bootstrap seed.")
@click.option("--out", type=click.Path(file_okay=False), default=None,
              help="Folder for timeline.md/.csv/.json/.png (default: data/reports/timeline/).")
@click.option("--no-plot", is_flag=True, help="Tables and JSON only.")
@json_option
def timeline(runs: tuple[str, ...], bucket: str, ma_window: int, estimate_cutoff: bool, claimed: tuple[str, ...],
             since: str | None, exclude_probe_known: bool, min_side: int, min_drop: float, n_boot: int, seed: int,
             out: str | None, no_plot: bool, json_out: bool) -> None:
    """Accuracy over time per model and setting from `okgen eval --series` runs (RUNS: their folders).

    \b
      okgen timeline data/runs/series/april --bucket day
      okgen timeline data/runs/series/2025 --estimate-cutoff --claimed HuggingFaceTB/SmolLM2-135M-Instruct=2024-06
    """
    from okgen.series.evaluate import read_outcomes
    from okgen.series.timeline import (
        build_timelines,
        describe_cutoff,
        parse_claimed,
        table_rows,
        to_json,
        write_outputs,
    )

    try:
        since_d = dt.date.fromisoformat(since) if since else None
    except ValueError:
        raise ConfigError(f"--since takes a date YYYY-MM-DD, got {since!r}") from None
    claimed_d = parse_claimed(claimed)
    docs = read_outcomes(runs)
    tls = build_timelines(docs, bucket=bucket, ma_window=ma_window, since=since_d, exclude_probe_known=exclude_probe_known,
                          estimate=estimate_cutoff, claimed=_claimed_for(docs, claimed_d), n_boot=n_boot, seed=seed,
                          min_side=min_side, min_drop=min_drop, snapshot_sizes=_snapshot_sizes(docs))
    settings = {"bucket": bucket, "ma_window": ma_window, "since": since, "exclude_probe_known": exclude_probe_known,
                "min_side": min_side, "min_drop": min_drop, "n_boot": n_boot, "seed": seed}
    folder = Path(out) if out else get_ctx().workspace.data_dir / "reports" / "timeline"
    files = write_outputs(tls, folder, settings, plot_it=not no_plot, bucket=bucket, ma_window=ma_window)
    partial = [p for tl in tls for p in tl.partial]
    if partial:
        named = ", ".join(f"{p['model']} / {p['run']} {p['snapshot_date']} "
                          + (f"({p['n']} of {p['of']})" if p["of"] else f"({p['n']}, limit {p['limit']})") for p in partial[:3])
        click.echo(f"warning: {len(partial)} day-run(s) scored fewer questions than their snapshot holds (--limit): "
                   f"{named}{', ...' if len(partial) > 3 else ''}; their buckets count them in 'partial'", err=True)
    if want_json(json_out):
        echo_json({**to_json(tls, settings), "files": {k: str(v) for k, v in files.items()}})
        return
    short = {"model": "model", "run": "run", "bucket": "bucket", "n": "n", "accuracy": "acc", "ci_low": "ci_lo",
             "ci_high": "ci_hi", "ci_method": "ci", "moving_average": "MA", "chance_corrected": "chance-corr",
             "soft_gold": "soft", "gap_oracle_minus_none": "gap", "probe_known": "probe", "partial_days": "partial"}
    shown = {"bootstrap": "boot", "wilson": "wilson"}
    echo_table([{short[k]: (f"{v:.4f}" if isinstance(v, float) else shown.get(v, v) if k == "ci_method" else v)
                 for k, v in r.items() if k in short} for r in table_rows(tls)])
    for tl in tls:
        if tl.cutoff is not None:
            click.echo(f"{tl.model} / {tl.run}: {describe_cutoff(tl.cutoff)}")
    click.echo(f"tables{'' if no_plot else ' and plot'} in {folder}", err=True)


def _snapshot_sizes(docs: list[dict[str, Any]]) -> dict[str, int]:
    """Question counts of the snapshots that limited runs scored, from the workspace's manifests
    (best effort: a snapshot not found here is judged from the runs alone)."""
    from okgen.errors import OkgenError
    from okgen.series.timeline import snapshot_key
    from okgen.snapshot.store import resolve

    ws, out = get_ctx().workspace, {}
    for sig in {d.get("snapshot_signature") for d in docs if (d.get("options") or {}).get("limit")} - {None}:
        try:
            n = resolve(sig, ws, extract=False).manifest.counts.get("questions")
        except (OkgenError, OSError, ValueError):
            continue
        if isinstance(n, int):
            out[snapshot_key({"snapshot_signature": sig})] = n
    return out


def _claimed_for(docs: list[dict[str, Any]], claimed: dict[str, Any]) -> dict[str, Any]:
    """Match --claimed names to model specs: the full spec or the model id without its backend."""
    out = {}
    for d in docs:
        spec = d["model"]
        bare = spec.split("/", 1)[1] if "/" in spec else spec
        for name in (spec, bare, bare.split(",", 1)[0]):
            if name in claimed:
                out[spec] = claimed[name]
    unknown = [k for k in claimed if not any(k in (d["model"], d["model"].split("/", 1)[-1], d["model"].split("/", 1)[-1].split(",", 1)[0]) for d in docs)]
    if unknown:
        models = sorted({d["model"] for d in docs})
        raise ConfigError(f"--claimed names {unknown[0]!r}, which is not a model of these runs ({', '.join(models)})")
    return out


def echo_series_eval(ref: str, model: str, runs: list, opts: Any, ws: Any, out: str | None, as_json: bool) -> None:
    """Run ``okgen eval --series`` and print one row per day and setting."""
    from okgen.series.evaluate import run_series_eval

    res = run_series_eval(ref, model, runs, opts, workspace=ws, out=out)
    if as_json:
        echo_json({"path": str(res.path), "series": res.series, "series_signature": res.series_signature,
                   "model": res.model, "scored_now": res.scored_now, "days": res.days, "missing": res.missing})
        return
    echo_table([{"date": d["date"], "run": d["run"], "n": d.get("n", ""),
                 "accuracy": "" if d.get("accuracy") is None else f"{d['accuracy']:.4f}",
                 "scored now": "0 (done before)" if d.get("done_before") else d["scored_now"]} for d in res.days],
               title=f"series {res.series}, model {res.model}")
    if res.missing:
        click.echo(f"no snapshot in the series for {', '.join(res.missing)} (recorded as missing when it was built)",
                   err=True)
    click.echo(f"series signature: {res.series_signature}", err=True)  # each day's eval signature: outcomes.json, --json
    click.echo(f"runs in {res.path}; next: okgen timeline {res.path}", err=True)
