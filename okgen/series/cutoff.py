"""Knowledge-cutoff estimate: a step model fitted by maximum likelihood, with day-block
bootstrap intervals.

Model: a question dated before day ``c`` is answered correctly with probability ``p_pre``, one
dated on or after ``c`` with ``p_post``. Every candidate ``c`` with at least ``min_side`` days
of data on each side is tried; the one with the highest binomial log-likelihood wins, and the
fit is compared with a constant model by BIC. The day-block bootstrap resamples whole days
with replacement (questions of one day stay together, as their errors are correlated) through
:func:`scipy.stats.bootstrap`, refits on every resample and takes percentile intervals for
``c`` and for the drop ``delta = p_pre - p_post``.

An estimate is reported only when the drop's interval excludes 0, the drop is at least
``min_drop`` and ``c``'s interval stays away from the first and last candidate days (a
change point piling up at an end means there is no change inside the range); otherwise the
result says "not identified" and why. The same fit on the soft scores (probability of the gold
option; a Gaussian step model) is reported beside it and flagged when it disagrees.
"""

from __future__ import annotations

import datetime as dt
import warnings
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

MIN_SIDE = 14
MIN_DROP = 0.05
N_BOOT = 1000


@dataclass
class StepFit:
    """One fit of the step model (``kind`` binomial on correct/incorrect, or gaussian on soft scores)."""

    kind: str
    identified: bool
    reason: str
    n_days: int
    cutoff: dt.date | None = None
    cutoff_ci: tuple[dt.date, dt.date] | None = None
    delta: float | None = None
    delta_ci: tuple[float, float] | None = None
    p_pre: float | None = None
    p_post: float | None = None
    loglik_step: float | None = None
    loglik_constant: float | None = None
    bic_step: float | None = None
    bic_constant: float | None = None
    n_boot: int = 0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (dates as ISO strings)."""
        d = asdict(self)
        for k in ("cutoff",):
            d[k] = None if d[k] is None else str(d[k])
        if d["cutoff_ci"] is not None:
            d["cutoff_ci"] = [str(x) for x in d["cutoff_ci"]]
        return d


@dataclass
class CutoffEstimate:
    """The hard (accuracy) fit, the soft-score fit, and whether they disagree."""

    hard: StepFit
    soft: StepFit | None = None
    disagree: bool = False
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"hard": self.hard.to_dict(), "soft": None if self.soft is None else self.soft.to_dict(),
                "disagree": self.disagree, "notes": self.notes}


def _profile(w: np.ndarray, y: np.ndarray, n: np.ndarray, q: np.ndarray | None, lo: int, hi: int, kind: str):
    """Log-likelihood of the step model at every candidate split, for a batch of day weights.

    Args:
        w: day weights, shape (B, D) (1 for the data itself; bootstrap multiplicities).
        y: per-day sums (correct answers, or soft scores), shape (D,).
        n: per-day question counts, shape (D,).
        q: per-day sums of squared soft scores (gaussian only).
        lo, hi: first and last candidate split index (the first post day).

    Returns:
        (loglik of shape (B, C), pre means (B, C), post means (B, C), constant loglik (B,)).
    """
    from scipy.special import xlogy

    Y, N = np.cumsum(w * y, axis=-1), np.cumsum(w * n, axis=-1)
    ty, tn = Y[..., -1:], N[..., -1:]
    idx = np.arange(lo, hi + 1) - 1  # cumulative sums up to the day before the split
    ypre, npre = Y[..., idx], N[..., idx]
    ypost, npost = ty - ypre, tn - npre
    with np.errstate(divide="ignore", invalid="ignore"):
        mpre, mpost, mall = ypre / npre, ypost / npost, ty / tn
        if kind == "binomial":
            def ll(k, m, p):
                return xlogy(k, p) + xlogy(m - k, 1 - p)
            step = ll(ypre, npre, mpre) + ll(ypost, npost, mpost)
            const = ll(ty, tn, mall)[..., 0]
        else:
            Q = np.sum(w * q, axis=-1, keepdims=True)
            sse = Q - ypre * mpre - ypost * mpost
            sse0 = Q - ty * mall
            step = -0.5 * tn * np.log(np.maximum(sse, 1e-12) / tn)
            const = (-0.5 * tn * np.log(np.maximum(sse0, 1e-12) / tn))[..., 0]
    step = np.where((npre > 0) & (npost > 0), step, -np.inf)
    return step, mpre, mpost, const


def fit_step(dates: list[dt.date], y: np.ndarray, n: np.ndarray, q: np.ndarray | None = None, *, kind: str = "binomial",
             min_side: int = MIN_SIDE, min_drop: float = MIN_DROP, n_boot: int = N_BOOT, seed: int = 0) -> StepFit:
    """Fit the step model to per-day data and decide whether the cutoff is identified.

    Args:
        dates: the days with data, ascending.
        y: per-day sums (correct answers for ``binomial``, soft scores for ``gaussian``).
        n: per-day question counts.
        q: per-day sums of squared soft scores (``gaussian``).
        kind: ``binomial`` or ``gaussian``.
        min_side: least days of data on each side of a candidate cutoff.
        min_drop: least drop (p_pre - p_post) reported as a cutoff.
        n_boot: bootstrap resamples.
        seed: bootstrap seed.
    """
    from scipy import stats

    y, n = np.asarray(y, float), np.asarray(n, float)
    D = len(dates)
    if 2 * min_side > D:
        return StepFit(kind, False, f"only {D} day(s) of data; a cutoff needs at least {min_side} days on each side",
                       D)
    lo, hi = min_side, D - min_side
    one = np.ones((1, D))
    step, mpre, mpost, const = _profile(one, y, n, q, lo, hi, kind)
    j = int(np.argmax(step[0]))
    n_q = float(n.sum())
    fit = StepFit(kind, False, "", D, cutoff=dates[lo + j], delta=float(mpre[0, j] - mpost[0, j]),
                  p_pre=float(mpre[0, j]), p_post=float(mpost[0, j]), loglik_step=float(step[0, j]),
                  loglik_constant=float(const[0]), n_boot=n_boot)
    fit.bic_step = -2 * fit.loglik_step + 3 * np.log(n_q)
    fit.bic_constant = -2 * fit.loglik_constant + 1 * np.log(n_q)

    def statistic(days: np.ndarray, axis: int = -1) -> np.ndarray:
        d = np.asarray(days, int)
        flat = d.reshape(-1, d.shape[-1])
        w = np.zeros((flat.shape[0], D))
        np.add.at(w, (np.repeat(np.arange(flat.shape[0]), flat.shape[1]), flat.ravel()), 1.0)
        st, a, b, _ = _profile(w, y, n, q, lo, hi, kind)
        jj = np.argmax(st, axis=-1)
        rows = np.arange(len(jj))
        # A resample with no candidate that has days on both sides has no fit (NaN), not split 0.
        fitted = np.isfinite(st[rows, jj])
        out = np.stack([np.where(fitted, jj, np.nan), np.where(fitted, a[rows, jj] - b[rows, jj], np.nan)])
        return out.reshape((2,) + d.shape[:-1])

    with warnings.catch_warnings():  # NaN resamples are counted and reported below, not warned about
        warnings.simplefilter("ignore", stats.DegenerateDataWarning)
        res = stats.bootstrap((np.arange(D),), statistic, vectorized=True, n_resamples=n_boot, method="percentile",
                              confidence_level=0.95, rng=np.random.default_rng(seed))
    reasons = []
    unfit = int(np.isnan(res.bootstrap_distribution).any(axis=0).sum())
    if unfit:
        reasons.append(f"the bootstrap intervals could not be computed: in {unfit} of {n_boot} resamples no candidate "
                       f"cutoff had days on both sides (only {D} days of data, {hi - lo + 1} candidate cutoff(s))")
    else:
        (clo, dlo), (chi, dhi) = res.confidence_interval.low, res.confidence_interval.high
        ci_lo, ci_hi = int(np.floor(clo)), int(np.ceil(chi))
        fit.cutoff_ci = (dates[lo + ci_lo], dates[lo + ci_hi])
        fit.delta_ci = (float(dlo), float(dhi))
        if not (dlo > 0 or dhi < 0):
            reasons.append(f"the drop's 95% interval [{dlo:+.3f}, {dhi:+.3f}] includes 0")
    if fit.delta < min_drop:
        reasons.append(f"the drop {fit.delta:+.3f} is under {min_drop:.2f}")
    if fit.cutoff_ci is not None and (ci_lo <= 0 or ci_hi >= hi - lo):
        reasons.append(f"the cutoff's interval {fit.cutoff_ci[0]}..{fit.cutoff_ci[1]} reaches an end of the candidate "
                       f"range {dates[lo]}..{dates[hi]}")
    if fit.bic_step >= fit.bic_constant:
        reasons.append("the constant model fits better by BIC")
    fit.identified = not reasons
    fit.reason = "; ".join(reasons) if reasons else "drop interval excludes 0, drop large enough, cutoff inside the range"
    return fit


def estimate_cutoff(dates: list[dt.date], correct: np.ndarray, n: np.ndarray, soft: np.ndarray | None = None,
                    soft_sq: np.ndarray | None = None, soft_n: np.ndarray | None = None, **kw: Any) -> CutoffEstimate:
    """Fit on accuracy and, when given, on soft scores; flag when the two disagree.

    ``soft``/``soft_sq``/``soft_n`` are per-day sums of the gold option's probability, of its
    square, and the number of questions that have one (generated answers have none).
    """
    hard = fit_step(dates, correct, n, kind="binomial", **kw)
    est = CutoffEstimate(hard)
    if soft is not None and soft_n is not None and np.asarray(soft_n).sum() > 0:
        keep = np.asarray(soft_n) > 0
        sd = [d for d, k in zip(dates, keep) if k]
        est.soft = fit_step(sd, np.asarray(soft)[keep], np.asarray(soft_n)[keep], np.asarray(soft_sq)[keep],
                            kind="gaussian", **kw)
        if est.soft.identified != hard.identified:
            est.disagree = True
            est.notes.append("the accuracy fit and the soft-score fit disagree on whether a cutoff is identified")
        elif hard.identified and est.soft.cutoff_ci and hard.cutoff_ci and (
                est.soft.cutoff_ci[1] < hard.cutoff_ci[0] or hard.cutoff_ci[1] < est.soft.cutoff_ci[0]):
            est.disagree = True
            est.notes.append("the accuracy fit and the soft-score fit give non-overlapping cutoff intervals")
    return est
