"""OAKS's metrics for answers given at every interval of a stream.

For one question with gold answers ``g[0..C-1]`` and predictions ``p[0..C-1]`` (C intervals),
the gold sequence splits into **phases**: maximal runs of one gold answer. In each phase of
length L:

* the intervals answered correctly count to **Acc**;
* if some interval of the phase is answered correctly, the intervals before the first correct
  one are its **acquisition latency** (AL) and the wrong answers after it its **distraction**
  (DS);
* if none is, all L intervals are a **phase miss** (PM).

Each is divided by C, so per question ``acc + al + ds + pm == 1`` (every interval is exactly one
of: correct, before the first correct answer of its phase, wrong after it, in a missed phase).
The gold sequence AAABBBBCCC gives: an oracle 1/0/0/0, always "A" .3/0/0/.7, one step late
(``p[t] = g[t-1]``) .8/.2/0/0.

Between consecutive intervals the gold answer changes or stays, the model's answer changes or
stays, and the model is right or wrong at the later interval: eight **transition classes**,

==============  ===============  ==================  ============
gold            model            right at t          wrong at t
==============  ===============  ==================  ============
changes         changes          Adaptability        Maladaptation
changes         stays            Prescience          Stubbornness
stays           changes          Lag                 Volatility
stays           stays            Stability           Obstinacy
==============  ===============  ==================  ============

reported as rates within each gold scenario (the four "gold changes" classes sum to 1, and so
do the four "gold stays" ones). "Lag" is a late catch-up: the gold stayed, the model moved to
it. A missing prediction (``None``) is wrong and differs from every answer.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field

CLASSES = {
    (True, True, True): "adaptability", (True, True, False): "maladaptation",
    (True, False, True): "prescience", (True, False, False): "stubbornness",
    (False, True, True): "lag", (False, True, False): "volatility",
    (False, False, True): "stability", (False, False, False): "obstinacy",
}
GOLD_CHANGES = ("adaptability", "maladaptation", "prescience", "stubbornness")
GOLD_STAYS = ("lag", "volatility", "stability", "obstinacy")
_MISSING = object()


def phases(gold: Sequence[Hashable]) -> list[tuple[int, int]]:
    """Maximal runs of one gold answer, as (start, end) with ``end`` exclusive."""
    out, start = [], 0
    for t in range(1, len(gold) + 1):
        if t == len(gold) or gold[t] != gold[start]:
            out.append((start, t))
            start = t
    return out


def changes(gold: Sequence[Hashable]) -> int:
    """Number of intervals whose gold answer differs from the one before."""
    return sum(1 for a, b in zip(gold, gold[1:]) if a != b)


def question_metrics(gold: Sequence[Hashable], pred: Sequence[Hashable | None]) -> dict[str, float]:
    """Acc, AL, DS and PM of one question (each normalised by the number of intervals).

    Raises:
        ValueError: the sequences differ in length or are empty.
    """
    if len(gold) != len(pred) or not gold:
        raise ValueError(f"gold has {len(gold)} intervals, predictions {len(pred)}")
    right = [p is not None and p == g for g, p in zip(gold, pred)]
    acc = al = ds = pm = 0
    for s, e in phases(gold):
        first = next((t for t in range(s, e) if right[t]), None)
        if first is None:
            pm += e - s
            continue
        al += first - s
        acc += sum(right[s:e])
        ds += sum(1 for t in range(first + 1, e) if not right[t])
    c = len(gold)
    return {"acc": acc / c, "al": al / c, "ds": ds / c, "pm": pm / c}


def transition_counts(gold: Sequence[Hashable], pred: Sequence[Hashable | None]) -> Counter[str]:
    """How often each of the eight transition classes occurs between consecutive intervals."""
    p = [_MISSING if x is None else x for x in pred]
    out: Counter[str] = Counter()
    for t in range(1, len(gold)):
        out[CLASSES[(gold[t] != gold[t - 1], p[t] != p[t - 1], p[t] == gold[t])]] += 1
    return out


def transition_rates(counts: Counter[str]) -> dict[str, float | None]:
    """Each class's share of its gold scenario (None when the scenario never occurs)."""
    out: dict[str, float | None] = {}
    for group in (GOLD_CHANGES, GOLD_STAYS):
        total = sum(counts[c] for c in group)
        for c in group:
            out[c] = counts[c] / total if total else None
    return out


@dataclass
class StreamScores:
    """Metrics of a whole run: means over questions, by interval and by number of changes."""

    n: int = 0
    acc: float = 0.0
    al: float = 0.0
    ds: float = 0.0
    pm: float = 0.0
    acc_by_interval: list[float] = field(default_factory=list)
    transitions: dict[str, int] = field(default_factory=dict)
    rates: dict[str, float | None] = field(default_factory=dict)
    by_changes: dict[int, dict[str, float]] = field(default_factory=dict)

    def to_dict(self) -> dict:
        """JSON-ready form, OAKS's short names on top."""
        return {"n": self.n, "acc": self.acc, "al": self.al, "ds": self.ds, "pm": self.pm,
                "acc_by_interval": self.acc_by_interval, "transitions": self.transitions, "rates": self.rates,
                "by_changes": {str(k): v for k, v in sorted(self.by_changes.items())}}


def score(items: Sequence[tuple[Sequence[Hashable], Sequence[Hashable | None]]]) -> StreamScores:
    """Score (gold, predictions) pairs, one per question, all over the same intervals."""
    if not items:
        return StreamScores()
    per = [question_metrics(g, p) for g, p in items]
    n = len(items)
    c = len(items[0][0])
    counts: Counter[str] = Counter()
    groups: dict[int, list[dict[str, float]]] = defaultdict(list)
    for (g, p), m in zip(items, per):
        counts.update(transition_counts(g, p))
        groups[changes(g)].append(m)
    mean = {k: sum(m[k] for m in per) / n for k in ("acc", "al", "ds", "pm")}
    by_t = [sum(1 for g, p in items if p[t] is not None and p[t] == g[t]) / n for t in range(c)]
    by_changes = {k: {"n": len(v), **{m: sum(x[m] for x in v) / len(v) for m in ("acc", "al", "ds", "pm")}}
                  for k, v in groups.items()}
    return StreamScores(n=n, acc_by_interval=by_t, transitions={k: counts[k] for k in (*GOLD_CHANGES, *GOLD_STAYS)},
                        rates=transition_rates(counts), by_changes=by_changes, **mean)
