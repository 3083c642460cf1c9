"""Timelines from series eval outcomes: per-bucket tables, the knowledge gap, cutoff estimates,
and the plot (matplotlib, colour-blind-safe palette)."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from okgen.errors import ConfigError
from okgen.series.cutoff import CutoffEstimate, estimate_cutoff
from okgen.series.stats import (
    MA_WINDOW,
    MIN_BOOT_DAYS,
    WILSON,
    DayTable,
    bucket_key,
    bucket_rows,
    day_table,
    knowledge_gap,
)

# Okabe & Ito's colour-blind-safe palette (black left out: it is used for reference lines).
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442")
MARKERS = ("o", "s", "^", "D", "v", "P", "X")
COLUMNS = ("model", "run", "bucket", "days", "n", "accuracy", "ci_low", "ci_high", "ci_method", "moving_average", "chance",
           "chance_corrected", "soft_gold", "gap_oracle_minus_none", "gap_questions", "gap_partial", "probe_known",
           "partial_days")

log = logging.getLogger(__name__)


@dataclass
class Timeline:
    """One (model, run) timeline: its per-day table, bucket rows and cutoff estimate."""

    model: str
    run: str
    days: DayTable
    rows: list[dict[str, Any]]
    cutoff: CutoffEstimate | None = None
    claimed: dt.date | None = None
    eval_dates: list[str] = field(default_factory=list)
    partial: list[dict[str, Any]] = field(default_factory=list)
    """Day-runs that scored fewer questions than their snapshot holds (``--limit``)."""
    series: list[str] = field(default_factory=list)
    """The series signatures its outcome files were scored under (one, unless folders were merged)."""
    eval_signatures: list[str] = field(default_factory=list)
    """The eval signature of every day-run it counts: what determined each day's number."""


def parse_claimed(values: Sequence[str]) -> dict[str, dt.date]:
    """``MODEL=2024-06`` or ``MODEL=2024-06-15`` pairs (a month means its first day)."""
    out = {}
    for v in values:
        model, eq, when = v.rpartition("=")
        if not eq or not model:
            raise ConfigError(f"--claimed takes MODEL=YYYY-MM[-DD], got {v!r}")
        try:
            out[model] = dt.date.fromisoformat(when if len(when) == 10 else f"{when}-01")
        except ValueError:
            raise ConfigError(f"--claimed {v!r}: {when!r} is not YYYY-MM or YYYY-MM-DD") from None
    return out


def snapshot_key(doc: dict[str, Any]) -> str:
    """The snapshot an outcome file scored: its signature, else its date."""
    return str(doc.get("snapshot_signature") or doc.get("snapshot_date") or "")


def partial_runs(docs: Sequence[dict[str, Any]], sizes: dict[str, int] | None = None) -> list[dict[str, Any]]:
    """Outcome files that scored fewer questions than their snapshot holds (a ``--limit`` run).

    A snapshot's size comes from ``sizes`` (:func:`snapshot_key` -> question count, e.g. read from
    the workspace's snapshot manifests), else from the runs of it that scored everything (no
    limit, or fewer rows than the limit). A limited run whose snapshot size is known neither way
    and that stopped at its limit counts as partial: nothing shows it complete. A (model, run) that
    also has a complete file for the same snapshot is not partial there.
    """
    known = dict(sizes or {})
    for d in docs:
        limit = (d.get("options") or {}).get("limit")
        if not limit or len(d["rows"]) < limit:
            k = snapshot_key(d)
            known[k] = max(known.get(k, 0), len(d["rows"]))
    out, complete = [], set()
    for d in docs:
        limit, n, size = (d.get("options") or {}).get("limit"), len(d["rows"]), known.get(snapshot_key(d))
        if (size is not None and n < size) or (size is None and limit and n >= limit):
            out.append({"model": d["model"], "run": d["run"], "snapshot": snapshot_key(d),
                        "snapshot_date": d.get("snapshot_date"), "n": n, "of": size, "limit": limit,
                        "dates": sorted({r["date"] for r in d["rows"]})})
        else:
            complete.add((d["model"], d["run"], snapshot_key(d)))
    return [p for p in out if (p["model"], p["run"], p["snapshot"]) not in complete]


def build_timelines(docs: Sequence[dict[str, Any]], *, bucket: str = "month", ma_window: int = MA_WINDOW,
                    since: dt.date | None = None, exclude_probe_known: bool = False, estimate: bool = False,
                    claimed: dict[str, dt.date] | None = None, n_boot: int = 1000, seed: int = 0,
                    min_side: int = 14, min_drop: float = 0.05,
                    snapshot_sizes: dict[str, int] | None = None) -> list[Timeline]:
    """Group outcome files by (model, run), filter, and compute buckets and (optionally) cutoffs.

    A question is counted once per (model, run) even if several files hold it. Buckets holding
    days of a partial run (:func:`partial_runs`, given ``snapshot_sizes``) count them in
    ``partial_days``.
    """
    partial: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for p in partial_runs(docs, snapshot_sizes):
        partial.setdefault((p["model"], p["run"]), []).append(p)
    groups: dict[tuple[str, str], dict[str, dict]] = {}
    evals: dict[tuple[str, str], set[str]] = {}
    series: dict[tuple[str, str], set[str]] = {}
    sigs: dict[tuple[str, str], set[str]] = {}
    options: dict[tuple[str, str], dict[str, Any]] = {}
    warned: set[tuple[tuple[str, str], tuple[str, ...]]] = set()
    for d in docs:
        key = (d["model"], d["run"])
        seen = groups.setdefault(key, {})
        evals.setdefault(key, set()).add(d.get("eval_date", ""))
        series.setdefault(key, set()).update([d["series_signature"]] if d.get("series_signature") else [])
        sigs.setdefault(key, set()).update([d["eval_signature"]] if d.get("eval_signature") else [])
        opts = {k: v for k, v in (d.get("options") or {}).items() if k != "limit"}  # a limit is marked partial
        first = options.setdefault(key, opts)
        differ = tuple(sorted(k for k in opts.keys() | first.keys() if opts.get(k) != first.get(k)))
        if differ and (key, differ) not in warned:
            warned.add((key, differ))
            log.warning("%s / %s: merging runs scored with other options (%s differ): their numbers are not "
                        "one measurement; give the run folders apart", key[0], key[1], ", ".join(differ))
        for r in d["rows"]:
            if since is not None and dt.date.fromisoformat(r["date"]) < since:
                continue
            if exclude_probe_known and r.get("probe_known"):
                continue
            seen.setdefault(r["question_id"], r)
    out = []
    for (model, run), rows in sorted(groups.items()):
        if not rows:
            continue
        t = day_table(rows.values())
        tl = Timeline(model, run, t, bucket_rows(t, bucket, ma_window=ma_window, n_boot=n_boot, seed=seed),
                      claimed=(claimed or {}).get(model), eval_dates=sorted(evals[(model, run)]),
                      partial=partial.get((model, run), []), series=sorted(series[(model, run)]),
                      eval_signatures=sorted(sigs[(model, run)]))
        pdays = {dt.date.fromisoformat(x) for p in tl.partial for x in p["dates"]} & set(t.dates)
        for r in tl.rows:
            r["partial_days"] = sum(1 for d in pdays if str(bucket_key(d, bucket)) == r["bucket"])
        if estimate:
            tl.cutoff = estimate_cutoff(t.dates, t.correct, t.n, t.soft, t.soft_sq, t.soft_n, n_boot=n_boot, seed=seed,
                                        min_side=min_side, min_drop=min_drop)
        out.append(tl)
    if not out:
        raise ConfigError("no questions left after --since/--exclude-probe-known")
    by_model: dict[str, dict[str, Timeline]] = {}
    for tl in out:
        by_model.setdefault(tl.model, {})[tl.run] = tl
    for runs in by_model.values():
        if "oracle" in runs and "none" in runs:
            gap = knowledge_gap(groups[(runs["oracle"].model, "oracle")], groups[(runs["none"].model, "none")], bucket)
            oracle_n = {r["bucket"]: r["n"] for r in runs["oracle"].rows}
            for r in runs["none"].rows:  # the no-context run's gap to its oracle: on its rows only, not repeated
                g, paired = gap.get(r["bucket"], (None, 0))
                r["gap_oracle_minus_none"], r["gap_questions"] = g, paired
                # Fewer paired questions than either run scored: the gap is not the difference of the
                # two accuracies shown, and the table says so.
                r["gap_partial"] = g is not None and (paired != r["n"] or paired != oracle_n.get(r["bucket"]))
    return out


def table_rows(timelines: Sequence[Timeline]) -> list[dict[str, Any]]:
    """Flat rows (one per model, run and bucket) for CSV and Markdown."""
    return [{"model": tl.model, "run": tl.run, **{c: r.get(c) for c in COLUMNS[2:]}} for tl in timelines for r in tl.rows]


def _fmt(v: Any) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return ""
    if isinstance(v, float):
        return f"{v:.4f}"
    return str(v)


def to_csv(rows: Sequence[dict[str, Any]]) -> str:
    """CSV text of :func:`table_rows`."""
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(COLUMNS), lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: _fmt(r.get(k)) for k in COLUMNS})
    return buf.getvalue()


def to_markdown(rows: Sequence[dict[str, Any]], timelines: Sequence[Timeline]) -> str:
    """A Markdown table of the buckets, notes on its marks, then one line per cutoff estimate."""
    cols = ["model", "run", "bucket", "n", "accuracy", "95% CI", "moving avg", "chance-corr.", "soft",
            "gap (oracle-none)", "probe-known", "partial days"]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        ci = f"[{r['ci_low']:.3f}, {r['ci_high']:.3f}]" + (" W" if r.get("ci_method") == WILSON else "")
        vals = [r["model"], r["run"], r["bucket"], r["n"], _fmt(r["accuracy"]), ci, _fmt(r["moving_average"]),
                _fmt(r["chance_corrected"]), _fmt(r.get("soft_gold")),
                _fmt(r.get("gap_oracle_minus_none")) + (f" ({r['gap_questions']})" if r.get("gap_partial") else ""),
                r["probe_known"], r.get("partial_days") or ""]
        lines.append("| " + " | ".join(str(v) for v in vals) + " |")
    if any(r.get("ci_method") == WILSON for r in rows):
        lines += ["", f"W: Wilson interval of the bucket's pooled count (under {MIN_BOOT_DAYS} days, or every day "
                      "the same accuracy); other intervals are day-block bootstraps."]
    if any(r.get("gap_partial") for r in rows):
        lines += ["", "gap (k): oracle − none over the k questions both runs scored, where either run scored "
                      "others too: not the difference of the two accuracies shown."]
    if any(r.get("partial_days") for r in rows):
        lines += ["", "partial days: days whose run scored fewer questions than the snapshot holds (--limit)."]
    for tl in timelines:
        if tl.cutoff is not None:
            lines.append("")
            lines.append(f"- {tl.model} / {tl.run}: {describe_cutoff(tl.cutoff)}")
    series = sorted({s for tl in timelines for s in tl.series})
    if series:  # what the numbers were scored on (each day-run's eval signature is in timeline.json)
        lines += ["", "Series:", ""] + [f"- `{s}`" for s in series]
    return "\n".join(lines) + "\n"


def describe_cutoff(est: CutoffEstimate) -> str:
    """One sentence for a cutoff estimate."""
    h = est.hard
    if h.identified:
        text = (f"estimated cutoff {h.cutoff} (95% CI {h.cutoff_ci[0]}..{h.cutoff_ci[1]}), accuracy {h.p_pre:.3f} -> "
                f"{h.p_post:.3f}, drop {h.delta:+.3f} (95% CI {h.delta_ci[0]:+.3f}..{h.delta_ci[1]:+.3f})")
    else:
        text = f"cutoff not identified: {h.reason}"
    if est.soft is not None:
        s = est.soft
        text += f"; soft scores: {f'cutoff {s.cutoff}' if s.identified else 'not identified'}"
    if est.disagree:
        text += " [DISAGREE: " + "; ".join(est.notes) + "]"
    return text


def _finite(v: Any) -> Any:
    """``v`` with every NaN or infinite float replaced by None (JSON has no NaN)."""
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if isinstance(v, dict):
        return {k: _finite(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_finite(x) for x in v]
    return v


def to_json(timelines: Sequence[Timeline], settings: dict[str, Any]) -> dict[str, Any]:
    """Every number: per-day sums, bucket rows, partial runs and cutoff fits (NaN as null)."""
    return _finite({"kind": "okgen-timeline", "schema_version": 1, "settings": settings, "timelines": [
        {"model": tl.model, "run": tl.run, "claimed_cutoff": None if tl.claimed is None else str(tl.claimed),
         "eval_dates": tl.eval_dates, "series_signatures": tl.series, "eval_signatures": tl.eval_signatures,
         "days": [{"date": str(d), "n": int(n), "correct": int(k)} for d, n, k in zip(tl.days.dates, tl.days.n, tl.days.correct)],
         "buckets": tl.rows, "partial_runs": [{k: v for k, v in p.items() if k != "dates"} for p in tl.partial],
         "cutoff": None if tl.cutoff is None else tl.cutoff.to_dict()} for tl in timelines]})


# Moving-average line styles, one per timeline: settings differ by more than colour (the cutoff
# lines keep ":" for claimed and "--" for estimated, drawn upright).
MA_STYLES = ("-", (0, (6, 2)), (0, (1.5, 1.5)), (0, (6, 2, 1.5, 2)))
BUCKET_DAYS = {"day": 1, "week": 7, "month": 30}


def dodge(i: int, count: int, bucket: str) -> dt.timedelta:
    """The x shift of the ``i``-th of ``count`` timelines: points of several settings on one bucket
    sit side by side, not on top of each other (at most 60% of a bucket apart in all)."""
    width = BUCKET_DAYS.get(bucket, 1)
    step = min(0.15, 0.6 / max(count, 1)) * width
    return dt.timedelta(days=(i - (count - 1) / 2) * step)


def draw(timelines: Sequence[Timeline], *, title: str = "Accuracy over time", bucket: str = "month",
         ma_window: int = MA_WINDOW) -> Any:
    """The timeline figure (left open): accuracy per bucket with 95% intervals, the moving average,
    chance, claimed and estimated cutoffs. Each timeline has its own colour, marker, moving-average
    line style and a small x shift, so settings on the same buckets stay apart."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.dates as mdates
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(10, 5.5), dpi=120)
    all_x = [dt.date.fromisoformat(r["bucket"]) for tl in timelines for r in tl.rows]
    xmin, xmax = (min(all_x), max(all_x)) if all_x else (dt.date.min, dt.date.max)
    claimed_done: set[str] = set()
    for i, tl in enumerate(timelines):
        color, marker = PALETTE[i % len(PALETTE)], MARKERS[i % len(MARKERS)]
        shift = dodge(i, len(timelines), bucket)
        x = [dt.datetime.fromisoformat(r["bucket"]) + shift for r in tl.rows]
        y = [r["accuracy"] for r in tl.rows]
        lo = [r["accuracy"] - r["ci_low"] for r in tl.rows]
        hi = [r["ci_high"] - r["accuracy"] for r in tl.rows]
        label = f"{tl.model} / {tl.run}"
        ax.errorbar(x, y, yerr=[lo, hi], fmt=marker, color=color, ms=5, capsize=3, lw=1, alpha=0.9, label=label)
        ax.plot(x, [r["moving_average"] for r in tl.rows], color=color, ls=MA_STYLES[i % len(MA_STYLES)], lw=2,
                label=f"{label}: moving average ({ma_window} {bucket}s)")
        if tl.claimed is not None and tl.model not in claimed_done:
            claimed_done.add(tl.model)
            if xmin <= tl.claimed <= xmax:
                ax.axvline(tl.claimed, color=color, ls=":", lw=1.5, label=f"{tl.model}: claimed cutoff {tl.claimed}")
            else:  # a line far outside the data would squeeze the data into a corner
                side = "before" if tl.claimed < xmin else "after"
                ax.plot([], [], color=color, ls=":", lw=1.5,
                        label=f"{tl.model}: claimed cutoff {tl.claimed} ({side} the plotted range)")
        est = tl.cutoff
        if est is not None and est.hard.identified:
            ax.axvline(est.hard.cutoff, color=color, ls="--", lw=1.5, label=f"{label}: estimated cutoff {est.hard.cutoff}")
            ax.axvspan(est.hard.cutoff_ci[0], est.hard.cutoff_ci[1], color=color, alpha=0.12)
    if timelines:
        chance = sum(float(tl.days.chance.sum()) for tl in timelines) / sum(float(tl.days.n.sum()) for tl in timelines)
        ax.axhline(chance, color="black", ls="-.", lw=1, label=f"chance ({chance:.2f})")
    ax.set_ylim(-0.03, 1.03)  # a point at 0 or 1 drawn whole, not cut in half by the axis
    ax.set_ylabel("accuracy")
    ax.set_xlabel(f"question date ({bucket} buckets)")
    ax.set_title(title)
    locator = mdates.DayLocator() if bucket == "day" and (xmax - xmin).days <= 31 else mdates.AutoDateLocator()
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    return fig


def plot(timelines: Sequence[Timeline], path: Path, *, title: str = "Accuracy over time", bucket: str = "month",
         ma_window: int = MA_WINDOW) -> Path:
    """Write :func:`draw`'s figure to ``path``."""
    import matplotlib.pyplot as plt

    fig = draw(timelines, title=title, bucket=bucket, ma_window=ma_window)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path


def write_outputs(timelines: Sequence[Timeline], out: Path, settings: dict[str, Any], *, plot_it: bool = True,
                  bucket: str = "month", ma_window: int = MA_WINDOW) -> dict[str, Path]:
    """Write timeline.md, timeline.csv, timeline.json and timeline.png into ``out``."""
    from okgen.files import atomic_write_text

    out.mkdir(parents=True, exist_ok=True)
    rows = table_rows(timelines)
    files = {"markdown": out / "timeline.md", "csv": out / "timeline.csv", "json": out / "timeline.json"}
    atomic_write_text(files["markdown"], to_markdown(rows, timelines))
    atomic_write_text(files["csv"], to_csv(rows))
    atomic_write_text(files["json"], json.dumps(to_json(timelines, settings), indent=2, default=str, allow_nan=False) + "\n")
    if plot_it:
        files["plot"] = plot(timelines, out / "timeline.png", bucket=bucket, ma_window=ma_window)
    return files
