"""Timeline fixes: Wilson intervals for buckets of few days (and the method recorded), no NaN and no
library warning from a cutoff fit on too few days, partial (--limit) runs marked, the soft score
shown, and "tables in" without a plot."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
import warnings

import numpy as np
import pytest

from okgen.series.cutoff import fit_step
from okgen.series.stats import MIN_BOOT_DAYS, ratio_interval
from okgen.series.timeline import (
    build_timelines,
    partial_runs,
    table_rows,
    to_csv,
    to_json,
    to_markdown,
)

START = dt.date(2025, 4, 10)  # a Thursday: days 0..3 fall in one ISO week


def doc(day: int, correct: list[bool], *, model="hf/m", run="none", limit=None, sig=None):
    d = START + dt.timedelta(days=day)
    rows = [{"question_id": f"{day}-{j}", "date": str(d), "correct": ok, "n_choices": 4, "soft_gold": 0.7 if ok else 0.2,
             "probe_known": False, "source": "x", "error": None} for j, ok in enumerate(correct)]
    return {"kind": "okgen-series-outcomes", "model": model, "run": run, "eval_date": "2026-11-25",
            "snapshot_date": str(d), "snapshot_signature": sig or f"date:{d}", "options": {"limit": limit}, "rows": rows}


def walk_docs():
    """The walkthrough's shape: 1 right of 13 over 4 days (9 + 1 + 1 + 2 questions)."""
    return [doc(0, [False]), doc(1, [True] + [False] * 8), doc(2, [False]), doc(3, [False, False])]


def test_a_bucket_of_few_days_gets_the_wilson_interval_and_says_so():
    (tl,) = build_timelines(walk_docs(), bucket="week")
    (r,) = tl.rows
    assert r["days"] == 4 and r["n"] == 13 and r["ci_method"] == "wilson"
    assert r["ci_low"] == pytest.approx(0.0137, abs=1e-3) and r["ci_high"] == pytest.approx(0.3331, abs=1e-3)
    rows = table_rows([tl])
    assert "ci_method" in to_csv(rows).splitlines()[0] and ",wilson," in to_csv(rows)
    md = to_markdown(rows, [tl])
    assert "[0.014, 0.333] W" in md and "W: Wilson interval" in md
    # Enough days with varying accuracy: the day-block bootstrap, recorded as such.
    rng = np.random.default_rng(0)
    y, n = rng.integers(2, 9, MIN_BOOT_DAYS).astype(float), np.full(MIN_BOOT_DAYS, 10.0)
    assert ratio_interval(y, n)[2] == "bootstrap"
    assert ratio_interval(y[:-1], n[:-1])[2] == "wilson"
    assert ratio_interval(np.full(12, 3.0), np.full(12, 10.0))[2] == "wilson"  # every day the same


def test_a_cutoff_fit_on_too_few_days_gives_no_nan_and_no_warning():
    dates = [START + dt.timedelta(days=i) for i in range(4)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fit = fit_step(dates, np.array([0, 1, 0, 0.0]), np.array([1, 9, 1, 2.0]), min_side=2, min_drop=0, n_boot=300)
    assert not fit.identified and fit.delta_ci is None and fit.cutoff_ci is None
    assert "could not be computed" in fit.reason and "nan" not in fit.reason.lower()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tls = build_timelines(walk_docs(), bucket="day", estimate=True, min_side=2, min_drop=0, n_boot=300)
    text = json.dumps(to_json(tls, {}), allow_nan=False)
    assert json.loads(text)["timelines"][0]["cutoff"]["hard"]["delta_ci"] is None


def test_partial_runs_are_found_and_marked():
    full = walk_docs()
    limited = [doc(1, [True, False], model="random/seed0", limit=2), doc(3, [False, True], model="random/seed0", limit=2)]
    # Day 1 has 9 questions (the full run shows it); day 3 has 2, so limit 2 scored all of it.
    found = partial_runs(full + limited)
    assert [(p["model"], p["snapshot_date"], p["n"], p["of"]) for p in found] == [("random/seed0", "2025-04-11", 2, 9)]
    # Alone, a run that stopped at its limit cannot be told complete, unless the snapshot size is known.
    assert len(partial_runs(limited)) == 2
    assert len(partial_runs(limited, {"date:2025-04-11": 9, "date:2025-04-13": 2})) == 1
    tls = {t.model: t for t in build_timelines(full + limited, bucket="day")}
    assert [r["partial_days"] for r in tls["random/seed0"].rows] == [1, 0]
    assert all(r["partial_days"] == 0 for r in tls["hf/m"].rows)
    assert to_json(list(tls.values()), {})["timelines"][1]["partial_runs"][0]["of"] == 9


def test_soft_score_in_the_markdown_table():
    (tl,) = build_timelines(walk_docs(), bucket="week")
    md = to_markdown(table_rows([tl]), [tl])
    assert "| soft |" in md and f"{(0.7 + 12 * 0.2) / 13:.4f}" in md


def test_cli_marks_partial_runs_shows_soft_and_ci_method_and_no_plot(tmp_path):
    runs = tmp_path / "runs"
    for d in walk_docs() + [doc(1, [True, False], model="random/seed0", limit=2)]:
        f = runs / d["model"].replace("/", "_") / d["snapshot_date"] / d["run"] / "outcomes.json"
        f.parent.mkdir(parents=True)
        f.write_text(json.dumps(d))
    out = tmp_path / "rep"
    r = subprocess.run([sys.executable, "-m", "okgen", "--home", str(tmp_path / "home"), "timeline", str(runs),
                        "--bucket", "week", "--no-plot", "--out", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert f"tables in {out}" in r.stderr and "plot" not in r.stderr
    assert not (out / "timeline.png").exists()
    assert "warning: 1 day-run(s) scored fewer questions" in r.stderr and "random/seed0 / none 2025-04-11 (2 of 9)" in r.stderr
    header, *lines = r.stdout.splitlines()
    assert {"ci", "soft", "partial"} <= set(header.split())
    assert all("wilson" in line.split() for line in lines)
