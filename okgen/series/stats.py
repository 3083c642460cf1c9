"""Per-day tables, day/week/month buckets with day-block bootstrap intervals, chance-corrected
accuracy, the knowledge gap and Daily Oracle's trailing moving average."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

BUCKETS = ("day", "week", "month")
MA_WINDOW = 5


@dataclass
class DayTable:
    """Per-day sums of one (model, setting) timeline, days ascending."""

    dates: list[dt.date]
    n: np.ndarray
    correct: np.ndarray
    chance: np.ndarray
    soft: np.ndarray
    soft_sq: np.ndarray
    soft_n: np.ndarray
    probe_known: np.ndarray


def day_table(rows: Iterable[dict]) -> DayTable:
    """Sum outcome rows (``date``, ``correct``, ``n_choices``, ``soft_gold``, ``probe_known``) by day."""
    acc: dict[dt.date, list[float]] = {}
    for r in rows:
        d = r["date"] if isinstance(r["date"], dt.date) else dt.date.fromisoformat(r["date"])
        a = acc.setdefault(d, [0.0] * 7)
        a[0] += 1
        a[1] += bool(r["correct"])
        a[2] += 1.0 / max(1, int(r.get("n_choices") or 4))
        s = r.get("soft_gold")
        if s is not None:
            a[3] += s
            a[4] += s * s
            a[5] += 1
        a[6] += bool(r.get("probe_known"))
    dates = sorted(acc)
    cols = np.array([acc[d] for d in dates], float).reshape(-1, 7).T
    return DayTable(dates, *cols)


def bucket_key(d: dt.date, bucket: str) -> dt.date:
    """The first day of ``d``'s bucket: the day, its ISO week's Monday, or its month's first day."""
    if bucket == "day":
        return d
    if bucket == "week":
        return d - dt.timedelta(days=d.weekday())
    if bucket == "month":
        return d.replace(day=1)
    raise ValueError(f"unknown bucket {bucket!r}; known: {', '.join(BUCKETS)}")


# Fewest day blocks a bucket's bootstrap interval is taken from. A block bootstrap over k days
# knows only k values: its spread is at most (k-1)/k of the plug-in variance, a percentile
# interval lands on a handful of distinct values, and cluster-bootstrap coverage is known to be
# poor with fewer than about 10 clusters (Cameron, Gelbach & Miller 2008, REStat 90(3)). Below
# this, the Wilson interval of the pooled count is given instead (a week bucket always gets it).
MIN_BOOT_DAYS = 10
BOOTSTRAP, WILSON = "bootstrap", "wilson"


def _wilson(k: float, n: float) -> tuple[float, float]:
    from scipy import stats

    ci = stats.binomtest(int(round(k)), int(n)).proportion_ci(0.95, method="wilson")
    return float(ci.low), float(ci.high)


def ratio_interval(y: np.ndarray, n: np.ndarray, *, n_boot: int = 1000, seed: int = 0,
                   min_days: int = MIN_BOOT_DAYS) -> tuple[float, float, str]:
    """95% interval of ``sum(y) / sum(n)`` and the method that gave it (``bootstrap`` or ``wilson``).

    A day-block bootstrap over the days given (whole days resampled with replacement,
    :func:`scipy.stats.bootstrap`, percentile method), or the Wilson interval of the pooled count
    when there are fewer than ``min_days`` days (too few blocks for a valid bootstrap) or every day
    has the same ratio (the bootstrap would be one point and claim certainty).
    """
    from scipy import stats

    y, n = np.asarray(y, float), np.asarray(n, float)
    if len(y) < max(2, min_days) or np.all(y / n == y[0] / n[0]):
        return (*_wilson(y.sum(), n.sum()), WILSON)

    def ratio(yy: np.ndarray, nn: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.sum(yy, axis=axis) / np.sum(nn, axis=axis)

    res = stats.bootstrap((y, n), ratio, paired=True, vectorized=True, n_resamples=n_boot, method="percentile",
                          rng=np.random.default_rng(seed))
    return float(res.confidence_interval.low), float(res.confidence_interval.high), BOOTSTRAP


def ratio_ci(y: np.ndarray, n: np.ndarray, *, n_boot: int = 1000, seed: int = 0,
             min_days: int = MIN_BOOT_DAYS) -> tuple[float, float]:
    """The interval of :func:`ratio_interval` without its method."""
    lo, hi, _ = ratio_interval(y, n, n_boot=n_boot, seed=seed, min_days=min_days)
    return lo, hi


def moving_average(values: Sequence[float], window: int = MA_WINDOW) -> list[float]:
    """Trailing moving average as Daily Oracle computes it: the mean of the last ``window`` values
    (monthly accuracies), expanding at the start (the first value is itself, the second the mean
    of two, ...)."""
    if window < 1:
        raise ValueError("the moving-average window is at least 1")
    v = np.asarray(values, float)
    c = np.concatenate([[0.0], np.cumsum(v)])
    i = np.arange(1, len(v) + 1)
    start = np.maximum(0, i - window)
    return [float(x) for x in (c[i] - c[start]) / (i - start)]


def chance_corrected(acc: float, chance: float) -> float:
    """``(acc - chance) / (1 - chance)``: 0 at chance, 1 when every answer is right."""
    return (acc - chance) / (1 - chance) if chance < 1 else float("nan")


def bucket_rows(t: DayTable, bucket: str, *, ma_window: int = MA_WINDOW, n_boot: int = 1000, seed: int = 0) -> list[dict]:
    """One row per bucket: n, accuracy with its 95% interval and the interval's method,
    chance-corrected accuracy, mean soft score, probe-flagged count, and the trailing moving
    average of the bucket accuracies."""
    keys = [bucket_key(d, bucket) for d in t.dates]
    order = sorted(set(keys))
    rows = []
    for b in order:
        sel = np.array([k == b for k in keys])
        n, k = t.n[sel].sum(), t.correct[sel].sum()
        acc = k / n
        lo, hi, method = ratio_interval(t.correct[sel], t.n[sel], n_boot=n_boot, seed=seed)
        chance = t.chance[sel].sum() / n
        sn = t.soft_n[sel].sum()
        rows.append({"bucket": str(b), "days": int(sel.sum()), "n": int(n), "correct": int(k), "accuracy": float(acc),
                     "ci_low": lo, "ci_high": hi, "ci_method": method, "chance": float(chance),
                     "chance_corrected": float(chance_corrected(acc, chance)),
                     "soft_gold": float(t.soft[sel].sum() / sn) if sn else None,
                     "probe_known": int(t.probe_known[sel].sum())})
    for r, ma in zip(rows, moving_average([r["accuracy"] for r in rows], ma_window)):
        r["moving_average"] = ma
    return rows


def knowledge_gap(oracle: dict[str, dict], none: dict[str, dict], bucket: str) -> dict[str, tuple[float, int]]:
    """Oracle minus no-context accuracy per bucket, **paired**: over the questions both runs
    scored (outcome rows by question id), so a ``--limit`` or an unfinished day on one side does
    not compare two different sets of questions. Per bucket: (gap, questions paired); a bucket
    with none paired is left out."""
    sums: dict[str, list[int]] = {}
    for qid in oracle.keys() & none.keys():
        b = str(bucket_key(dt.date.fromisoformat(none[qid]["date"]), bucket))
        s = sums.setdefault(b, [0, 0])
        s[0] += int(bool(oracle[qid]["correct"])) - int(bool(none[qid]["correct"]))
        s[1] += 1
    return {b: (d / n, n) for b, (d, n) in sums.items() if n}
