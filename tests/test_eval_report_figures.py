"""Report figures and tables with 12 models: every figure renders, in PNG and SVG, with no
overlapping labels (drawn bounding boxes checked); CSV and LaTeX tables; diagnostics."""

from __future__ import annotations

import copy
import csv
import json

import pytest

from okgen.eval.report import build_report, load_rows, render_markdown
from okgen.eval.runner import EvalOptions, plan_runs, run_eval
from okgen.settings import Workspace
from okgen.testing.eval_data import make_test_snapshot

pytest.importorskip("matplotlib")

MODELS = 12


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    ws = Workspace(tmp_path_factory.mktemp("ws"))
    snap = make_test_snapshot(ws)
    runs = plan_runs(["none", "oracle", "retrieval"], ["bm25"], [4], [1, 3, 10])
    root = tmp_path_factory.mktemp("runs")
    for seed in range(MODELS):
        run_eval(snap.name, f"random/seed{seed}", runs, EvalOptions(n_boot=200), workspace=ws, out=root / f"m{seed}")
    return build_report(load_rows([root])), root


def _long_names(rep):
    """The same report with long, realistic model names (the hardest case for labels)."""
    rep = copy.deepcopy(rep)
    names = {f"random/seed{i}": f"hf/meta-llama/Llama-3.{i}-8B-Instruct-long-variant-{i}" for i in range(MODELS)}
    for key in ("settings", "retrieval", "runs"):
        for r in rep[key]:
            r["model"] = names.get(r["model"], r["model"])
    return rep


@pytest.mark.parametrize("long_names", [False, True], ids=["seed-names", "long-names"])
def test_every_figure_renders_with_12_models_and_no_overlapping_labels(report, long_names, tmp_path):
    import matplotlib.pyplot as plt

    from okgen.eval.plots import figures, overlapping_texts

    rep = _long_names(report[0]) if long_names else report[0]
    assert len(rep["settings"]) == MODELS
    figs = figures(rep, tmp_path)
    assert set(figs) == {"plot_by_setting", "plot_vs_k", "plot_by_outlet", "plot_by_position"}
    for name, fig in figs.items():
        labels = [t.get_text() for ax in fig.axes for t in ax.get_yticklabels() + ax.get_xticklabels()]
        assert labels, name
        assert overlapping_texts(fig) == [], name
        plt.close(fig)
    ticks = [int(t.get_text()) for t in figs["plot_vs_k"].axes[0].get_xticklabels() if t.get_text()]
    assert ticks == [1, 3, 10]
    # Every line has CI whiskers, its n in the legend, and its own x positions around each k, so
    # lines of equal accuracy do not hide each other.
    ax = figs["plot_vs_k"].axes[0]
    assert len(ax.containers) == len(rep["retrieval"])
    assert all("(n=" in t.get_text() for t in ax.get_legend().get_texts())
    xs = [tuple(c.lines[0].get_xdata()) for c in ax.containers]
    assert len(set(xs)) == len(xs)


def test_overlap_check_catches_overlapping_labels():
    import matplotlib.pyplot as plt

    from okgen.eval.plots import overlapping_texts

    fig, ax = plt.subplots(figsize=(2, 2))
    ax.set_xticks(range(12), [f"a very long model name {i}" for i in range(12)])
    assert overlapping_texts(fig)
    plt.close(fig)


def test_report_writes_png_svg_csv_latex_and_diagnostics(report, tmp_path):
    from click.testing import CliRunner

    from okgen.cli.main import cli

    _, root = report
    out = tmp_path / "rep"
    res = CliRunner().invoke(cli, ["report", str(root), "--out", str(out), "--figures", "png,pdf"])
    assert res.exit_code == 0, res.output
    for name in ("report.md", "report.json", "settings.csv", "retrieval.tex", "accuracy_by_setting.pdf"):
        assert f"wrote {out / name}" in res.stderr, name
    for stem in ("accuracy_by_setting", "accuracy_vs_k", "accuracy_by_outlet", "accuracy_by_position"):
        assert (out / f"{stem}.png").stat().st_size > 5000 and (out / f"{stem}.pdf").stat().st_size > 1000
    rows = list(csv.DictReader((out / "settings.csv").open(encoding="utf-8")))
    assert len(rows) == MODELS and {"model", "none", "none_ci_low", "oracle", "oracle_gain"} <= set(rows[0])
    assert float(rows[0]["none"]) == pytest.approx(json.loads((out / "report.json").read_text())["settings"][0]["none"]["accuracy"])
    ret = list(csv.DictReader((out / "retrieval.csv").open(encoding="utf-8")))
    assert len(ret) == MODELS and {"k=1", "k=3", "k=10"} <= set(ret[0])
    tex = (out / "settings.tex").read_text()
    assert tex.startswith("\\begin{tabular}") and "\\toprule" in tex and "random/seed0" in tex
    assert tex.count("\\\\") == MODELS + 1
    md = (out / "report.md").read_text()
    assert "## Answer diagnostics" in md and "position bias" in md
    # A format matplotlib cannot write is a usage error (exit 2), like any bad option value.
    bad = CliRunner().invoke(cli, ["report", str(root), "--out", str(tmp_path / "bad"), "--figures", "png,jpg"])
    assert bad.exit_code == 2 and "--no-plots for none" in bad.output and not (tmp_path / "bad").exists()


def test_random_seed_names_and_diagnostics(report):
    rep, _ = report
    assert [r["model"] for r in rep["settings"]][:3] == ["random/seed0", "random/seed1", "random/seed10"]
    d = rep["runs"][0]["diagnostics"]
    assert sum(d["predicted_letters"].values()) == d["answered"] > 0
    assert 0 <= d["position_bias"] <= 1 and set(d["accuracy_by_gold_position"]) == set(d["gold_letters"])
    # A seeded chance baseline answers like chance: no letter dominates.
    assert all(r["diagnostics"]["dominant_letter"] is None for r in rep["runs"])
    assert "| random/seed0 | loglik | none |" in render_markdown(rep)


def _legend(fig):
    return [t.get_text() for t in fig.axes[0].get_legend().get_texts()]


def _keep_ks(rep, ks_of):
    """The report with each model's retrieval runs cut down to the k's ``ks_of(model)`` names."""
    rep = copy.deepcopy(rep)
    for r in rep["retrieval"]:
        r["by_k"] = {k: c for k, c in r["by_k"].items() if k in ks_of(r["model"])}
    return rep


def test_retrieval_bars_name_their_configuration_and_prefer_a_common_one(report, tmp_path):
    import matplotlib.pyplot as plt
    from matplotlib.container import BarContainer

    from okgen.eval.plots import overlapping_texts, plot_by_setting

    # Every model ran k = 1, 3 and 10: the largest k, for all of them, in one legend entry.
    _, fig = plot_by_setting(report[0], tmp_path, ("png",))
    assert [t for t in _legend(fig) if t.startswith("retrieval")] == ["retrieval bm25 4d k=10"]
    plt.close(fig)
    # One model ran only k=1, the others k=1 and k=10: k=1 is the one they all ran.
    rep = _keep_ks(report[0], lambda m: {"1"} if m == "random/seed0" else {"1", "10"})
    _, fig = plot_by_setting(rep, tmp_path, ("png",))
    assert [t for t in _legend(fig) if t.startswith("retrieval")] == ["retrieval bm25 4d k=1"]
    plt.close(fig)
    # No configuration in common: two series, each named, each model's bar in its own.
    rep = _keep_ks(report[0], lambda m: {"3"} if m == "random/seed0" else {"10"})
    _, fig = plot_by_setting(rep, tmp_path, ("png",))
    assert [t for t in _legend(fig) if t.startswith("retrieval")] == ["retrieval bm25 4d k=10", "retrieval bm25 4d k=3"]
    bars = {c.get_label(): len(c.patches) for c in fig.axes[0].containers if isinstance(c, BarContainer)}
    assert bars["retrieval bm25 4d k=3"] == 1 and bars["retrieval bm25 4d k=10"] == MODELS - 1
    assert overlapping_texts(fig) == []
    plt.close(fig)


def test_a_bar_at_zero_is_still_drawn(report, tmp_path):
    import matplotlib.pyplot as plt

    from okgen.eval.plots import MARKERS, OKABE_ITO, plot_by_setting

    def oracle_markers(rep):
        _, fig = plot_by_setting(rep, tmp_path, ("png",))
        got = [(list(line.get_xdata()), list(line.get_ydata()), line.get_color(), line.get_clip_on())
               for line in fig.axes[0].get_lines() if line.get_marker() == MARKERS[1]]
        plt.close(fig)
        return got

    base = copy.deepcopy(report[0])
    for r in base["settings"]:  # every oracle bar with a length: no marker
        if r["oracle"]["accuracy"] == 0:
            r["oracle"].update(accuracy=0.1, ci95=[0.02, 0.3])
    assert oracle_markers(base) == []
    rep = copy.deepcopy(base)
    rep["settings"][0]["oracle"].update(accuracy=0.0, ci95=[0.0, 0.2])
    # The top row's oracle bar has no length: a marker in the oracle series' colour at 0, drawn
    # over the axis (not clipped in half by it).
    assert oracle_markers(rep) == [([0], [MODELS - 1], OKABE_ITO[1], False)]


def test_heat_maps_show_every_run_retrieval_included(report, tmp_path):
    import matplotlib.pyplot as plt

    from okgen.eval.plots import plot_by_outlet, plot_by_position

    rep = report[0]
    for plot in (plot_by_outlet, plot_by_position):
        _, fig = plot(rep, tmp_path, ("png",))
        labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
        assert len(labels) == len(set(labels)) == len(rep["runs"]) == MODELS * 5
        assert any(label.startswith("random/seed0 · retrieval bm25 4d k=10") for label in labels)
        plt.close(fig)
