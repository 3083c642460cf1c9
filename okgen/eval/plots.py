"""The report's figures (matplotlib, written as PNG and SVG or PDF).

* ``accuracy_by_setting``: per model, grouped horizontal bars for no context, oracle article and
  retrieval, with bootstrap 95% CI whiskers and a chance line.
* ``accuracy_vs_k``: accuracy against the number of retrieved passages, ticks at the k's run, one
  line per model x retriever x window, the legend beside the axes.
* ``accuracy_by_outlet`` / ``accuracy_by_position``: heat maps (model and setting x outlet, and x
  gold answer position) with each cell's accuracy written in it.

Colours are the Okabe-Ito palette (distinguishable with the common colour-vision deficiencies),
and line styles and markers vary too, so no figure depends on colour alone. Sizes grow with the
number of models, and model names sit on the y axis one per row, so labels never overlap
(:func:`overlapping_texts` checks the drawn bounding boxes; the tests render 12 models).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

# Okabe & Ito (2008), "Color Universal Design".
OKABE_ITO = ["#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7", "#000000"]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]
LINESTYLES = ["-", "--", "-.", ":"]
SETTING_LABEL = {"none": "no context", "oracle": "oracle article", "retrieval": "retrieval"}


def _plt() -> Any:
    from okgen.registry import require

    mpl = require("matplotlib", "plot", "report plots")
    mpl.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _label(r: dict[str, Any], several_modes: bool, several_days: bool = False) -> str:
    """The model, with its scoring (open format and judge too) where runs differ in it, and its
    news day where several are shown: no two rows of a figure read the same."""
    from okgen.eval.tables import mode_label

    return (r["model"] + (f" · {mode_label(r)}" if several_modes else "")
            + (f" · {r.get('date') or r['snapshot']}" if several_days else ""))


def _save(fig: Any, out_dir: Path, stem: str, formats: Sequence[str]) -> list[Path]:
    import warnings

    with warnings.catch_warnings():  # a legend too wide for tight_layout: bbox_inches="tight" below still fits it
        warnings.filterwarnings("ignore", "Tight layout not applied", UserWarning)
        fig.tight_layout()
    paths = []
    for fmt in formats:
        p = out_dir / f"{stem}.{fmt}"
        fig.savefig(p, dpi=150, bbox_inches="tight")
        paths.append(p)
    return paths


def _retrieval_pick(report: dict[str, Any]) -> dict[tuple, dict[str, Any]]:
    """Per (model, group): the retrieval cell the bar chart shows (bm25 first, longest window, k=5 or the largest)."""
    best: dict[tuple, tuple[tuple, dict[str, Any]]] = {}
    for r in report["retrieval"]:
        key = (r["model"], r["scoring"], r["snapshot"])
        ks = sorted(int(k) for k in r["by_k"])
        k = 5 if 5 in ks else ks[-1]
        rank = (r["retriever"] == "bm25", r["window"] or 0, k == 5)
        if key not in best or rank > best[key][0]:
            best[key] = (rank, {**r["by_k"][str(k)], "what": f"{r['retriever']} {r['window']}d k={k}"})
    return {k: v[1] for k, v in best.items()}


def plot_by_setting(report: dict[str, Any], out_dir: Path, formats: Sequence[str]) -> tuple[list[Path], Any]:
    """Grouped bars by model and setting with 95% CI whiskers."""
    plt = _plt()
    rows = report["settings"]
    ret = _retrieval_pick(report)
    several = len({(r["scoring"], r["format"], r["judge"]) for r in rows}) > 1
    days = len({r["snapshot"] for r in rows}) > 1
    settings = ["none", "oracle"] + (["retrieval"] if ret else [])
    n = len(rows)
    fig, ax = plt.subplots(figsize=(8.0, max(2.6, 0.5 * n * len(settings) / 2 + 1.4)))
    height = 0.8 / len(settings)
    for j, s in enumerate(settings):
        ys, acc, lo, hi = [], [], [], []
        for i, r in enumerate(rows):
            cell = r.get(s) if s != "retrieval" else ret.get((r["model"], r["scoring"], r["snapshot"]))
            if not cell:
                continue
            ys.append(n - 1 - i + (len(settings) / 2 - j - 0.5) * height)
            acc.append(100 * cell["accuracy"])
            lo.append(100 * (cell["accuracy"] - cell["ci95"][0]))
            hi.append(100 * (cell["ci95"][1] - cell["accuracy"]))
        ax.barh(ys, acc, height, xerr=[lo, hi], capsize=2, color=OKABE_ITO[j], edgecolor="black", linewidth=0.4,
                hatch=["", "//", ".."][j], label=SETTING_LABEL[s], error_kw={"elinewidth": 0.8})
    ax.set_yticks(range(n), [_label(r, several, days) for r in reversed(rows)], fontsize=8)
    ax.set_xlim(0, 100)
    ax.set_xlabel("accuracy (%), bootstrap 95% CI")
    ax.axvline(25, color="grey", linestyle=":", linewidth=1, label="chance (4 choices)")
    ax.set_title("Accuracy by model and setting")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    return _save(fig, out_dir, "accuracy_by_setting", formats), fig


def plot_vs_k(report: dict[str, Any], out_dir: Path, formats: Sequence[str]) -> tuple[list[Path], Any]:
    """Accuracy against k, ticks at the k's run."""
    plt = _plt()
    rows = report["retrieval"]
    several = len({(r["scoring"], r["format"], r["judge"]) for r in rows}) > 1
    days = len({r["snapshot"] for r in rows}) > 1
    fig, ax = plt.subplots(figsize=(8.0, max(3.5, 0.22 * len(rows) + 1.0)))
    all_k: set[int] = set()
    for i, r in enumerate(rows):
        ks = sorted(int(k) for k in r["by_k"])
        all_k.update(ks)
        acc = [100 * r["by_k"][str(k)]["accuracy"] for k in ks]
        ax.plot(ks, acc, color=OKABE_ITO[i % len(OKABE_ITO)], marker=MARKERS[(i + i // len(OKABE_ITO)) % len(MARKERS)],
                linestyle=LINESTYLES[(i // len(OKABE_ITO)) % len(LINESTYLES)],
                label=f"{_label(r, several, days)} · {r['retriever']} {r['window']}d")
    ks = sorted(all_k)
    ax.set_xticks(ks, [str(k) for k in ks])
    if len(ks) > 1 and ks[-1] / max(1, ks[0]) >= 20:
        ax.set_xscale("log")
        ax.set_xticks(ks, [str(k) for k in ks])
        ax.minorticks_off()
    ax.set_xlabel("k (retrieved passages in the prompt)")
    ax.set_ylabel("accuracy (%)")
    ax.set_ylim(0, 100)
    ax.set_title("Accuracy against k")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7, frameon=False)
    return _save(fig, out_dir, "accuracy_vs_k", formats), fig


def _heatmap(rows: list[tuple[str, dict[str, float]]], cols: list[str], title: str, xlabel: str, out_dir: Path,
             stem: str, formats: Sequence[str]) -> tuple[list[Path], Any]:
    import numpy as np

    plt = _plt()
    data = np.array([[v.get(c, np.nan) for c in cols] for _, v in rows], dtype=float)
    fig, ax = plt.subplots(figsize=(max(4.0, 0.62 * len(cols) + 3.5), max(2.5, 0.36 * len(rows) + 1.6)))
    im = ax.imshow(100 * data, cmap="cividis", vmin=0, vmax=100, aspect="auto")
    ax.set_xticks(range(len(cols)), cols, rotation=45, ha="right", rotation_mode="anchor", fontsize=8)
    ax.set_yticks(range(len(rows)), [label for label, _ in rows], fontsize=8)
    for i in range(len(rows)):
        for j in range(len(cols)):
            if not np.isnan(data[i, j]):
                ax.text(j, i, f"{100 * data[i, j]:.0f}", ha="center", va="center", fontsize=6.5,
                        color="white" if data[i, j] < 0.6 else "black")
    ax.set_xlabel(xlabel)
    ax.set_title(title)
    fig.colorbar(im, ax=ax, label="accuracy (%)", fraction=0.04, pad=0.02)
    return _save(fig, out_dir, stem, formats), fig


def _runs_for_heatmaps(report: dict[str, Any]) -> list[dict[str, Any]]:
    runs = [r for r in report["runs"] if r["setting"] in ("none", "oracle")]
    return sorted(runs, key=lambda r: (r["model"], r["setting"]))


def plot_by_outlet(report: dict[str, Any], out_dir: Path, formats: Sequence[str]) -> tuple[list[Path], Any] | None:
    """Accuracy per outlet (model and setting x outlet)."""
    runs = [r for r in _runs_for_heatmaps(report) if r.get("by_source")]
    if not runs:
        return None
    cols = sorted({s for r in runs for s in r["by_source"]})
    rows = [(f"{r['model']} · {r['setting']}", {k: b["accuracy"] for k, b in r["by_source"].items()}) for r in runs]
    return _heatmap(rows, cols, "Accuracy by outlet", "outlet", out_dir, "accuracy_by_outlet", formats)


def plot_by_position(report: dict[str, Any], out_dir: Path, formats: Sequence[str]) -> tuple[list[Path], Any] | None:
    """Accuracy per gold answer position (model and setting x letter)."""
    runs = [r for r in _runs_for_heatmaps(report) if r.get("by_position")]
    if not runs:
        return None
    cols = sorted({s for r in runs for s in r["by_position"]})
    rows = []
    for r in runs:
        bias = (r.get("diagnostics") or {}).get("position_bias")
        label = f"{r['model']} · {r['setting']}" + (f" (bias {bias:.2f})" if bias is not None else "")
        rows.append((label, {k: b["accuracy"] for k, b in r["by_position"].items()}))
    return _heatmap(rows, cols, "Accuracy by gold answer position", "position of the correct answer", out_dir,
                    "accuracy_by_position", formats)


def plot_all(report: dict[str, Any], out_dir: str | Path, formats: Sequence[str] = ("png", "svg"),
             keep_open: bool = False) -> list[Path]:
    """Write every figure the report has data for; return the files (figures closed unless ``keep_open``)."""
    plt = _plt()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    jobs = []
    if report["settings"]:
        jobs.append(plot_by_setting)
    if report["retrieval"]:
        jobs.append(plot_vs_k)
    jobs += [plot_by_outlet, plot_by_position]
    for job in jobs:
        got = job(report, out, formats)
        if got is None:
            continue
        written += got[0]
        if not keep_open:
            plt.close(got[1])
    return written


def figures(report: dict[str, Any], out_dir: str | Path) -> dict[str, Any]:
    """Every figure drawn (PNG only) and left open, by name: for checking their layout."""
    out: dict[str, Any] = {}
    for job in (plot_by_setting, plot_vs_k, plot_by_outlet, plot_by_position):
        got = job(report, Path(out_dir), ("png",))
        if got is not None:
            out[job.__name__] = got[1]
    return out


def overlapping_texts(fig: Any) -> list[tuple[str, str]]:
    """Pairs of visible, non-empty texts of ``fig`` (tick labels, titles, legend entries, cell values)
    whose drawn bounding boxes overlap."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    texts = [t for t in fig.findobj(lambda a: a.__class__.__name__ == "Text")
             if t.get_visible() and t.get_text().strip() and t.figure is fig]
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in texts]
    bad = []
    for i in range(len(boxes)):
        for j in range(i + 1, len(boxes)):
            a, b = boxes[i][1], boxes[j][1]
            # A 0.5-pixel tolerance: touching boxes are not overlapping ones.
            if a.x0 < b.x1 - 0.5 and b.x0 < a.x1 - 0.5 and a.y0 < b.y1 - 0.5 and b.y0 < a.y1 - 0.5:
                bad.append((boxes[i][0], boxes[j][0]))
    return bad
