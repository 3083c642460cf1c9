"""OAKS's metrics: closed-form checks on AAABBBBCCC, the sum-to-one property, transition classes."""

from __future__ import annotations

import random

import pytest

from okgen.streams.metrics import (
    GOLD_CHANGES,
    GOLD_STAYS,
    changes,
    phases,
    question_metrics,
    score,
    transition_counts,
    transition_rates,
)

GOLD = list("AAABBBBCCC")


def close(m, acc, al, ds, pm):
    return m == pytest.approx({"acc": acc, "al": al, "ds": ds, "pm": pm})


def test_closed_form_aaabbbbccc():
    assert phases(GOLD) == [(0, 3), (3, 7), (7, 10)] and changes(GOLD) == 2
    assert close(question_metrics(GOLD, GOLD), 1, 0, 0, 0)                      # oracle
    assert close(question_metrics(GOLD, ["A"] * 10), 0.3, 0, 0, 0.7)            # always A
    late = [GOLD[0]] + GOLD[:-1]                                                # one step late
    assert close(question_metrics(GOLD, late), 0.8, 0.2, 0, 0)
    # right, then distracted: A in phase B after getting B once
    distracted = list("AAABABBCCC")
    assert close(question_metrics(GOLD, distracted), 0.9, 0, 0.1, 0)
    assert close(question_metrics(GOLD, [None] * 10), 0, 0, 0, 1)


def test_sum_is_one_for_random_predictions():
    rng = random.Random(7)
    for _ in range(2000):
        c = rng.randint(1, 15)
        labels = "ABCDE"[:rng.randint(1, 5)]
        gold = [rng.choice(labels) for _ in range(c)]
        pred = [rng.choice(labels + "X") if rng.random() > 0.1 else None for _ in range(c)]
        m = question_metrics(gold, pred)
        assert sum(m.values()) == pytest.approx(1.0)
        assert all(0 <= v <= 1 for v in m.values())


def test_sum_is_one_hypothesis():
    hyp = pytest.importorskip("hypothesis")
    st = hyp.strategies

    @hyp.given(st.lists(st.tuples(st.sampled_from("ABC"), st.one_of(st.none(), st.sampled_from("ABCD"))), min_size=1, max_size=20))
    @hyp.settings(max_examples=300, deadline=None)
    def check(pairs):
        gold, pred = [g for g, _ in pairs], [p for _, p in pairs]
        assert sum(question_metrics(gold, pred).values()) == pytest.approx(1.0)

    check()


def test_transition_classes_and_rates():
    late = [GOLD[0]] + GOLD[:-1]
    counts = transition_counts(GOLD, late)
    # gold changes at t=3 and t=7: the late model stays (wrong) -> stubbornness twice; it then
    # moves to the gold that stayed -> lag twice; the other 5 steps are stability.
    assert counts == {"stubbornness": 2, "lag": 2, "stability": 5}
    rates = transition_rates(counts)
    assert rates["stubbornness"] == 1.0 and rates["lag"] == pytest.approx(2 / 7)
    assert sum(rates[c] for c in GOLD_CHANGES) == pytest.approx(1)
    assert sum(rates[c] for c in GOLD_STAYS) == pytest.approx(1)
    oracle = transition_counts(GOLD, GOLD)
    assert oracle == {"adaptability": 2, "stability": 7}
    always_a = transition_counts(GOLD, ["A"] * 10)
    assert always_a == {"stubbornness": 2, "stability": 2, "obstinacy": 5}
    # a model that had already moved: prescience; one that moves to a wrong answer: maladaptation
    assert transition_counts(list("AB"), list("BB")) == {"prescience": 1}
    assert transition_counts(list("AB"), list("AC")) == {"maladaptation": 1}
    assert transition_counts(list("AA"), list("AC")) == {"volatility": 1}
    assert transition_rates(transition_counts(list("AA"), list("AA")))["adaptability"] is None


def test_score_aggregates_by_interval_and_changes():
    items = [(GOLD, GOLD), (GOLD, ["A"] * 10), (list("AAAAAAAAAA"), list("AAAAAAAAAB"))]
    s = score(items)
    assert s.n == 3
    assert s.acc == pytest.approx((1 + 0.3 + 0.9) / 3)
    assert s.acc + s.al + s.ds + s.pm == pytest.approx(1)
    assert s.acc_by_interval[0] == 1 and s.acc_by_interval[9] == pytest.approx(1 / 3)
    assert s.by_changes[2]["n"] == 2 and s.by_changes[0]["acc"] == pytest.approx(0.9)
    d = s.to_dict()
    assert set(d) >= {"acc", "al", "ds", "pm", "rates", "transitions", "by_changes"}
    with pytest.raises(ValueError, match="gold has 10 intervals, predictions 9"):
        question_metrics(GOLD, GOLD[:9])
