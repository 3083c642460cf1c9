"""The timeline plot keeps settings apart: points of several settings on one bucket are shifted
side by side, and each moving average has its own line style, not only its own colour."""

from __future__ import annotations

import datetime as dt

import pytest

from okgen.series.timeline import build_timelines, draw

pytest.importorskip("matplotlib")


def _docs(run, accuracy):
    """Ten days of four questions each for one model and setting (correct on the first ``accuracy`` share)."""
    out = []
    for i in range(10):
        d = dt.date(2025, 3, 1) + dt.timedelta(days=i)
        rows = [{"question_id": f"{run}-{i}-{j}", "date": str(d), "correct": j < 4 * accuracy, "n_choices": 4,
                 "source": "Rivertown Herald", "error": None} for j in range(4)]
        out.append({"kind": "okgen-series-outcomes", "model": "hf/Orbis", "run": run, "eval_date": "2025-04-01",
                    "snapshot_date": str(d), "rows": rows})
    return out


@pytest.mark.parametrize("bucket", ["day", "week"])
def test_settings_on_the_same_buckets_are_dodged_and_styled_apart(bucket):
    import matplotlib.dates as mdates
    import matplotlib.pyplot as plt

    tls = build_timelines(_docs("none", 0.5) + _docs("oracle", 0.5), bucket=bucket, ma_window=3)
    fig = draw(tls, bucket=bucket, ma_window=3)
    ax = fig.axes[0]
    points = [c.lines[0] for c in ax.containers]  # the errorbar markers of each setting
    xs = [list(mdates.date2num(p.get_xdata())) for p in points]
    assert len(xs) == 2 and len(xs[0]) == len(xs[1])
    assert all(a < b for a, b in zip(*xs))  # every bucket: "none" left of "oracle", not on top of it
    assert points[0].get_marker() != points[1].get_marker()
    ma = [line for line in ax.get_lines() if "moving average" in line.get_label()]
    assert len(ma) == 2 and ma[0].get_linestyle() != ma[1].get_linestyle()
    plt.close(fig)
