"""Accuracy, its bootstrap 95% confidence interval, and breakdowns by source and position."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from okgen.eval.templates import LETTERS
from okgen.schema import Breakdown, Prediction, Question

N_BOOT = 1000


def bootstrap_ci(correct: Sequence[bool], n_boot: int = N_BOOT, seed: int = 0, level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``correct`` (resampling questions).

    Deterministic for a given seed; ``(0.0, 0.0)`` for no questions.
    """
    x = np.asarray(correct, dtype=np.float64)
    n = len(x)
    if n == 0:
        return (0.0, 0.0)
    rng = np.random.default_rng(seed)
    means = np.empty(n_boot)
    step = max(1, 2_000_000 // n)  # resample in chunks to bound memory
    for start in range(0, n_boot, step):
        m = min(step, n_boot - start)
        idx = rng.integers(0, n, size=(m, n))
        means[start:start + m] = x[idx].mean(axis=1)
    alpha = (1 - level) / 2
    lo, hi = np.quantile(means, [alpha, 1 - alpha])
    return (round(float(lo), 6), round(float(hi), 6))


def breakdown(pairs: Sequence[tuple[str, bool]]) -> dict[str, Breakdown]:
    """Accuracy per key from ``(key, correct)`` pairs, keys sorted."""
    acc: dict[str, list[int]] = {}
    for key, ok in pairs:
        a = acc.setdefault(key, [0, 0])
        a[0] += 1
        a[1] += int(ok)
    return {k: Breakdown(n=n, correct=c, accuracy=round(c / n, 6)) for k, (n, c) in sorted(acc.items())}


def summarize(questions: Sequence[Question], preds: dict[str, Prediction], n_boot: int = N_BOOT,
              seed: int = 0) -> dict:
    """Accuracy, CI, counts and breakdowns over ``questions`` (a missing prediction counts wrong)."""
    correct = [bool(preds[q.id].correct) if q.id in preds else False for q in questions]
    n = len(questions)
    k = sum(correct)
    got = [preds[q.id] for q in questions if q.id in preds]
    return {
        "n": n,
        "correct": k,
        "accuracy": round(k / n, 6) if n else 0.0,
        "ci95": bootstrap_ci(correct, n_boot, seed),
        "unparsed": sum(1 for p in got if not p.parsed and p.error is None),
        "errors": sum(1 for p in got if p.error is not None) + (n - len(got)),
        "truncated": sum(1 for p in got if p.truncated),
        "by_source": breakdown([(q.source, c) for q, c in zip(questions, correct)]),
        "by_position": breakdown([(LETTERS[q.answer_index], c) for q, c in zip(questions, correct)]),
    }
