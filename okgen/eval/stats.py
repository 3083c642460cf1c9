"""Accuracy, its bootstrap 95% confidence interval, and breakdowns by source and position."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from okgen.eval.templates import LETTERS
from okgen.schema import Breakdown, Prediction, Question

N_BOOT = 1000


def bootstrap_ci(correct: Sequence[bool], n_boot: int = N_BOOT, seed: int = 0, level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``correct`` (questions resampled with
    replacement, :func:`scipy.stats.bootstrap`, as the series intervals are).

    Deterministic for a given seed; ``(0.0, 0.0)`` for no questions. When every answer is right or
    every one wrong the bootstrap distribution is that one point and would claim certainty (0/6
    right: [0, 0]): the Wilson score interval of the count is given instead (0/6: [0, 0.39]).
    Equal fractional scores (the same share for every question) give their value.
    """
    from scipy import stats

    x = np.asarray(correct, dtype=np.float64)
    if len(x) == 0:
        return (0.0, 0.0)
    if np.all(x == x[0]):
        if x[0] not in (0.0, 1.0):  # equal fractional scores (a share of intervals): no count to bound
            return (float(x[0]), float(x[0]))
        ci = stats.binomtest(int(round(x.sum())), len(x)).proportion_ci(level, method="wilson")
        return (round(float(ci.low), 6), round(float(ci.high), 6))
    res = stats.bootstrap((x,), np.mean, vectorized=True, n_resamples=n_boot, method="percentile",
                          confidence_level=level, batch=max(1, 2_000_000 // len(x)),
                          rng=np.random.default_rng(seed))
    ci = res.confidence_interval
    return (round(float(ci.low), 6), round(float(ci.high), 6))


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


# A letter taking more than this share of the predictions on a balanced set marks a degenerate run.
DOMINANT_SHARE = 0.70
# A set is balanced when no gold letter is more than this above a uniform share.
BALANCE_SLACK = 0.15
MIN_QUESTIONS_TO_WARN = 8


def diagnostics(questions: Sequence[Question], preds: dict[str, Prediction]) -> dict:
    """What catches a degenerate model: predicted-letter and gold-letter distributions, accuracy per
    gold position, and a position-bias score.

    ``position_bias`` is the total-variation distance between the predicted and the gold letter
    distributions (0: the model picks letters as often as they are right; 0.75: a model that
    always answers "A" on a balanced 4-choice set). ``recall_std`` is the standard deviation of
    the accuracy per gold position (Zheng et al. 2024's RStd, as a fraction). ``dominant_letter``
    is set when one letter takes over 70 % of the answers on a balanced set.
    """
    n_choices = max((len(q.choices) for q in questions), default=0)
    letters = LETTERS[:n_choices]
    gold = {c: 0 for c in letters}
    pred = {c: 0 for c in letters}
    answered = 0
    for q in questions:
        gold[LETTERS[q.answer_index]] += 1
        p = preds.get(q.id)
        if p is not None and p.pred_index is not None and p.error is None:
            pred[LETTERS[p.pred_index]] = pred.get(LETTERS[p.pred_index], 0) + 1
            answered += 1
    n = len(questions)
    gold_share = {c: round(v / n, 6) if n else 0.0 for c, v in gold.items()}
    pred_share = {c: round(v / answered, 6) if answered else 0.0 for c, v in pred.items()}
    tv = 0.5 * sum(abs(pred_share.get(c, 0.0) - gold_share.get(c, 0.0)) for c in set(gold_share) | set(pred_share))
    per_pos = breakdown([(LETTERS[q.answer_index], bool(preds[q.id].correct) if q.id in preds else False)
                         for q in questions])
    recalls = [b.accuracy for b in per_pos.values()]
    balanced = bool(n_choices) and max(gold_share.values(), default=0.0) <= 1 / n_choices + BALANCE_SLACK
    top = max(pred_share, key=lambda c: pred_share[c]) if answered else None
    dominant = top if (top is not None and balanced and answered >= MIN_QUESTIONS_TO_WARN
                       and pred_share[top] > DOMINANT_SHARE) else None
    return {
        "predicted_letters": pred, "gold_letters": gold, "answered": answered, "balanced": balanced,
        "accuracy_by_gold_position": {k: b.accuracy for k, b in per_pos.items()},
        "position_bias": round(tv, 6), "recall_std": round(float(np.std(recalls)), 6) if recalls else 0.0,
        "dominant_letter": dominant, "dominant_share": pred_share[top] if top is not None else 0.0,
    }


def degenerate_warning(name: str, diag: dict) -> str | None:
    """The one-line warning for a run whose answers are mostly one letter, or None."""
    if not diag.get("dominant_letter"):
        return None
    return (f"{name}: {100 * diag['dominant_share']:.0f}% of the answers are \"{diag['dominant_letter']}\" on a "
            f"balanced set (position bias {diag['position_bias']:.2f}): the model's answers look degenerate "
            "(check BOS, chat template and prompt format)")
