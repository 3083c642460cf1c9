"""Timelines from outcome files: probe-flagged questions kept and marked (or excluded), --since,
the knowledge gap, the cutoff on a clear drop, and the disagreement flag."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest

from okgen.errors import ConfigError
from okgen.series.timeline import build_timelines, parse_claimed, table_rows, to_csv, to_markdown

START = dt.date(2025, 1, 1)


def docs(model="hf/m", run="none", days=60, drop_at=30, pre=0.8, post=0.4, per_day=40, soft_flat=False, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for i in range(days):
        d = START + dt.timedelta(days=i)
        p = pre if i < drop_at else post
        rows = []
        for j in range(per_day):
            ok = bool(rng.random() < p)
            rows.append({"question_id": f"{i}-{j}", "date": str(d), "correct": ok, "n_choices": 4,
                         "soft_gold": 0.25 if soft_flat else (0.9 if ok else 0.1), "probe_known": j < 5 and i < drop_at,
                         "source": "x", "error": None})
        out.append({"kind": "okgen-series-outcomes", "model": model, "run": run, "eval_date": "2026-11-25",
                    "snapshot_date": str(d), "rows": rows})
    return out


def test_probe_flags_kept_and_marked_or_excluded_and_since():
    (tl,) = build_timelines(docs(), bucket="week")
    assert sum(r["probe_known"] for r in tl.rows) == 30 * 5
    (ex,) = build_timelines(docs(), bucket="week", exclude_probe_known=True)
    assert sum(r["probe_known"] for r in ex.rows) == 0 and sum(r["n"] for r in ex.rows) == 60 * 40 - 150
    (late,) = build_timelines(docs(), bucket="day", since=START + dt.timedelta(days=50))
    assert [r["bucket"] for r in late.rows][0] == str(START + dt.timedelta(days=50)) and len(late.rows) == 10
    with pytest.raises(ConfigError, match="no questions left"):
        build_timelines(docs(), since=START + dt.timedelta(days=400))


def test_gap_cutoff_claimed_and_tables():
    both = docs(run="none") + docs(run="oracle", pre=0.9, post=0.9, seed=1)
    tls = build_timelines(both, bucket="month", estimate=True, claimed=parse_claimed(["hf/m=2024-12"]), n_boot=300)
    by = {t.run: t for t in tls}
    jan = by["none"].rows[0]
    assert jan["gap_oracle_minus_none"] == pytest.approx(by["oracle"].rows[0]["accuracy"] - jan["accuracy"])
    assert by["oracle"].rows[0].get("gap_oracle_minus_none") is None  # shown once, on the no-context row
    h = by["none"].cutoff.hard
    assert h.identified and h.cutoff_ci[0] <= START + dt.timedelta(days=30) <= h.cutoff_ci[1]
    assert not by["none"].cutoff.disagree
    assert not by["oracle"].cutoff.hard.identified  # no drop with the article in hand
    assert by["none"].claimed == dt.date(2024, 12, 1)
    rows = table_rows(tls)
    assert to_csv(rows).count("\n") == len(rows) + 1
    md = to_markdown(rows, tls)
    assert "estimated cutoff" in md and "cutoff not identified" in md
    with pytest.raises(ConfigError, match="MODEL=YYYY-MM"):
        parse_claimed(["2024-06"])


def test_soft_scores_that_do_not_move_are_flagged():
    (tl,) = build_timelines(docs(soft_flat=True), bucket="day", estimate=True, n_boot=300)
    assert tl.cutoff.hard.identified and not tl.cutoff.soft.identified
    assert tl.cutoff.disagree and "disagree" in tl.cutoff.notes[0]


def test_the_gap_pairs_the_questions_both_runs_scored():
    # none scored 4 of a day's 9 questions (--limit 4), oracle all 9: the gap is over those 4.
    day = str(START)
    def doc(run, correct):
        rows = [{"question_id": f"q{i}", "date": day, "correct": c, "n_choices": 4, "soft_gold": None,
                 "probe_known": False, "source": "x", "error": None} for i, c in enumerate(correct)]
        return {"kind": "okgen-series-outcomes", "model": "hf/m", "run": run, "eval_date": "2026-11-25",
                "snapshot_date": day, "rows": rows}
    none = doc("none", [False] * 4)  # 0/4
    oracle = doc("oracle", [False] * 4 + [True] * 2 + [False] * 3)  # 0/4 on those four, 2/9 in all
    tls = {t.run: t for t in build_timelines([none, oracle], bucket="day")}
    row = tls["none"].rows[0]
    assert tls["oracle"].rows[0]["accuracy"] == pytest.approx(2 / 9)  # unpaired, the gap would read 0.222
    assert row["gap_oracle_minus_none"] == 0.0 and row["gap_questions"] == 4
    md = to_markdown(table_rows(list(tls.values())), list(tls.values()))
    assert "| 0.0000 (4) |" in md  # oracle scored 9: the gap is over 4, not 0.222 - 0.000
    both = {t.run: t for t in build_timelines([none, {**oracle, "rows": oracle["rows"][:4]}], bucket="day")}
    md = to_markdown(table_rows(list(both.values())), list(both.values()))
    assert "(4)" not in md and "gap (k)" not in md  # the same 4 questions on both sides: nothing to mark
    # Paired but fewer than the bucket's n: the count is shown beside the gap.
    none9 = doc("none", [False] * 9)
    oracle4 = {**oracle, "rows": oracle["rows"][:4]}
    tls = {t.run: t for t in build_timelines([none9, oracle4], bucket="day")}
    assert tls["none"].rows[0]["gap_questions"] == 4
    md = to_markdown(table_rows(list(tls.values())), list(tls.values()))
    assert "0.0000 (4)" in md and "gap (k)" in md


def test_points_at_0_and_1_are_drawn_whole():
    import matplotlib.pyplot as plt

    from okgen.series.timeline import draw

    day = str(START)
    rows = [{"question_id": f"q{i}", "date": day, "correct": True, "n_choices": 4, "soft_gold": None,
             "probe_known": False, "source": "x", "error": None} for i in range(3)]
    tls = build_timelines([{"kind": "okgen-series-outcomes", "model": "hf/m", "run": "oracle", "eval_date": "2026-11-25",
                            "snapshot_date": day, "rows": rows}], bucket="day")
    fig = draw(tls, bucket="day")
    lo, hi = fig.axes[0].get_ylim()
    plt.close(fig)
    assert lo < 0 and hi > 1  # accuracy 1.0 sits inside the axes, its marker not cut by the frame


def test_merging_runs_of_other_eval_options_is_said(caplog):
    import logging

    a, b = docs(days=3), docs(days=6)[3:]
    for d in a:
        d["options"] = {"model": "hf/m", "seed": 0, "limit": None}
    for d in b:
        d["options"] = {"model": "hf/m", "seed": 7, "limit": 5}
    with caplog.at_level(logging.WARNING, logger="okgen.series.timeline"):
        build_timelines([x for pair in zip(a, b) for x in pair], bucket="day")  # interleaved: said once
    got = [r.getMessage() for r in caplog.records]
    assert len(got) == 1 and "hf/m / none: merging runs scored with other options (seed differ)" in got[0]
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="okgen.series.timeline"):
        build_timelines(a, bucket="day")  # one set of options: nothing to say
    assert caplog.records == []
