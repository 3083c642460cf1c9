"""The report's figures (matplotlib, written as PNG and SVG or PDF).

* ``accuracy_by_setting``: per model, grouped horizontal bars for no context, oracle article and
  retrieval, with bootstrap 95% CI whiskers and a chance line. Each retrieval configuration
  (retriever, window, k) is a series of its own, so bars of different configurations never
  share a legend entry; a bar at 0% gets a marker on the axis, so it does not read as a run
  that is missing.
* ``accuracy_vs_k``: accuracy against the number of retrieved passages, ticks at the k's run, one
  line per model x retriever x window, the legend beside the axes.
* ``accuracy_by_outlet`` / ``accuracy_by_position``: heat maps (every run, retrieval ones with
  their configuration, x outlet and x gold answer position) with each cell's accuracy written in
  it. Rows name the scoring and the news day where runs differ in them, and a run with fewer
  answers than the degenerate-letter warning needs is marked with its n: its cells say little.

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
HATCHES = ["", "//", "..", "xx", "\\\\", "oo", "++", "--"]
SETTING_LABEL = {"none": "no context", "oracle": "oracle article", "retrieval": "retrieval"}


def _plt() -> Any:
    from okgen.registry import require

    mpl = require("matplotlib", "plot", "report plots")
    mpl.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _label(r: dict[str, Any], several_modes: bool, several_days: bool = False, models: Sequence[str] = ()) -> str:
    """The model, with its scoring (open format and judge too) where runs differ in it, its news
    day where several are shown, and its question count when ``--limit`` cut it: no two rows of a
    figure read the same."""
    from okgen.eval.tables import mode_label

    return (shown_model(r["model"], models) + (f" (limit {r['n']})" if r.get("limit") else "")  # a part is not the whole
            + (f" · {mode_label(r)}" if several_modes else "")
            + (f" · {r.get('date') or r['snapshot']}" if several_days else ""))


def shown_model(label: str, models: Sequence[str] = ()) -> str:
    """A model as a figure names it: a local folder by the shortest end of its path that no other
    of the figure's ``models`` shares, not by its absolute path on the machine that ran it
    (``hf//root/.cache/m/SmolLM2`` is ``hf/SmolLM2``; ``.../run1/final`` beside ``.../run2/final``
    is ``hf/run1/final``), which would take most of the figure's width; the tables keep the whole spec."""
    head, sep, opts = label.partition(",")
    backend, _, model = head.partition("/")
    parts = Path(model.rstrip("/")).parts
    if not model.startswith(("/", "~")) or len(parts) < 2:
        return label
    others = {m for m in models if m != label}
    for n in range(1, len(parts)):
        short = f"{backend}/{'/'.join(parts[-n:])}{sep}{opts}"
        if all(shown_suffix(m, n) != short for m in others):
            return short
    return label


def shown_suffix(label: str, n: int) -> str:
    """``label`` with a local folder cut to the last ``n`` parts of its path (others as they are)."""
    head, sep, opts = label.partition(",")
    backend, _, model = head.partition("/")
    if not model.startswith(("/", "~")):
        return label
    return f"{backend}/{'/'.join(Path(model.rstrip('/')).parts[-n:])}{sep}{opts}"


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
    """Per bar-chart row (:func:`_row_key`): the retrieval cell it shows, with its configuration as
    ``what``. The configuration most of them ran comes first, so bars compare like with like;
    then bm25, the longest window, and k=5 or the largest k."""
    cells = [(_row_key(r), (r["retriever"], r["window"] or 0, int(k)), c)
             for r in report["retrieval"] for k, c in r["by_k"].items() if c]
    runs_of: dict[tuple, set[tuple]] = {}
    for key, cfg, _ in cells:
        runs_of.setdefault(cfg, set()).add(key)
    best: dict[tuple, tuple[tuple, dict[str, Any]]] = {}
    for key, (retriever, window, k), cell in cells:
        rank = (len(runs_of[(retriever, window, k)]), retriever == "bm25", window, k == 5, k)
        if key not in best or rank > best[key][0]:
            best[key] = (rank, {**cell, "what": f"retrieval {retriever} {window}d k={k}"})
    return {k: v[1] for k, v in best.items()}


def _row_key(r: dict[str, Any]) -> tuple:
    """What a settings-table line and a retrieval-table line must share to be drawn in one row."""
    return (r["model"], r["snapshot"], r["scoring"], r["format"], r["template"], r["judge"], r["n"])


def _series(rows: list[dict[str, Any]], ret: dict[tuple, dict[str, Any]]) -> list[tuple[str, int, list]]:
    """The bar chart's series: (legend label, slot in a model's group of bars, cell per row). No
    context and oracle take the first two slots; every retrieval configuration shares the third
    (a row has one retrieval bar), told apart by colour, hatch and legend entry."""
    out = [(SETTING_LABEL[s], j, [r.get(s) for r in rows]) for j, s in enumerate(("none", "oracle"))]
    picked = [ret.get(_row_key(r)) for r in rows]
    for what in sorted({c["what"] for c in picked if c}):
        out.append((what, 2, [c if c and c["what"] == what else None for c in picked]))
    return out


def plot_by_setting(report: dict[str, Any], out_dir: Path, formats: Sequence[str]) -> tuple[list[Path], Any]:
    """Grouped bars by model and setting with 95% CI whiskers."""
    plt = _plt()
    rows = report["settings"]
    several = len({(r["scoring"], r["format"], r["judge"]) for r in rows}) > 1
    days = len({r["snapshot"] for r in rows}) > 1
    series = _series(rows, _retrieval_pick(report))
    slots = max(slot for _, slot, _ in series) + 1
    n = len(rows)
    fig, ax = plt.subplots(figsize=(8.0, max(2.6, 0.5 * n * slots / 2 + 1.4)))
    height = 0.8 / slots
    for j, (label, slot, cells) in enumerate(series):
        ys, acc, lo, hi = [], [], [], []
        for i, cell in enumerate(cells):
            if not cell:
                continue
            ys.append(n - 1 - i + (slots / 2 - slot - 0.5) * height)
            acc.append(100 * cell["accuracy"])
            lo.append(100 * (cell["accuracy"] - cell["ci95"][0]))
            hi.append(100 * (cell["ci95"][1] - cell["accuracy"]))
        color = OKABE_ITO[j % len(OKABE_ITO)]
        ax.barh(ys, acc, height, xerr=[lo, hi], capsize=2, color=color, edgecolor="black", linewidth=0.4,
                hatch=HATCHES[j % len(HATCHES)], label=label, error_kw={"elinewidth": 0.8})
        zero = [y for y, a in zip(ys, acc) if a == 0]
        if zero:  # a bar of no length: a marker on the axis says "ran, scored 0%", not "not run"
            ax.plot([0] * len(zero), zero, linestyle="none", marker=MARKERS[j % len(MARKERS)], markersize=5,
                    color=color, markeredgecolor="black", markeredgewidth=0.6, clip_on=False, zorder=3)
    models = sorted({r["model"] for r in rows})
    ax.set_yticks(range(n), [_label(r, several, days, models) for r in reversed(rows)], fontsize=8)
    ax.set_xlim(0, 100)
    ax.set_xlabel("accuracy (%), bootstrap 95% CI")
    if any(r["format"] == "mc" for r in rows):  # an open answer has no chance line
        label = "chance (4 choices)" if all(r["format"] == "mc" for r in rows) else "chance of multiple choice (4)"
        ax.axvline(25, color="grey", linestyle=":", linewidth=1, label=label)
    ax.set_title("Accuracy by model and setting")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    return _save(fig, out_dir, "accuracy_by_setting", formats), fig


def plot_vs_k(report: dict[str, Any], out_dir: Path, formats: Sequence[str]) -> tuple[list[Path], Any]:
    """Accuracy against k, ticks at the k's run, bootstrap 95% CI whiskers, lines set side by
    side around each k so that equal ones stay visible, n in the legend."""
    plt = _plt()
    rows = report["retrieval"]
    several = len({(r["scoring"], r["format"], r["judge"]) for r in rows}) > 1
    days = len({r["snapshot"] for r in rows}) > 1
    fig, ax = plt.subplots(figsize=(8.0, max(3.5, 0.22 * len(rows) + 1.0)))
    models = sorted({r["model"] for r in rows})
    all_k = sorted({int(k) for r in rows for k in r["by_k"]})
    log_x = len(all_k) > 1 and all_k[-1] / max(1, all_k[0]) >= 20
    gap = min((b - a for a, b in zip(all_k, all_k[1:])), default=1)
    for i, r in enumerate(rows):
        ks = sorted(int(k) for k in r["by_k"])
        cells = [r["by_k"][str(k)] for k in ks]
        acc = [100 * c["accuracy"] for c in cells]
        err = [[100 * (c["accuracy"] - c["ci95"][0]) for c in cells], [100 * (c["ci95"][1] - c["accuracy"]) for c in cells]]
        # Lines side by side around each k, so equal results (two baselines at one accuracy) do
        # not hide each other; whiskers are the bootstrap 95% CIs.
        shift = (i - (len(rows) - 1) / 2) * min(0.04, 0.24 / max(1, len(rows) - 1))  # within a quarter of the gap
        xs = [k * (1 + shift / 2) for k in ks] if log_x else [k + shift * gap for k in ks]
        n = max((c.get("n") or 0) for c in cells)
        ax.errorbar(xs, acc, yerr=err, capsize=2, elinewidth=0.7, color=OKABE_ITO[i % len(OKABE_ITO)],
                    marker=MARKERS[(i + i // len(OKABE_ITO)) % len(MARKERS)], markeredgecolor="black",
                    markeredgewidth=0.5, linestyle=LINESTYLES[(i // len(OKABE_ITO)) % len(LINESTYLES)],
                    label=f"{_label(r, several, days, models)} · {r['retriever']} {r['window']}d (n={n})")
    ks = all_k
    ax.set_xticks(ks, [str(k) for k in ks])
    if log_x:
        ax.set_xscale("log")
        ax.set_xticks(ks, [str(k) for k in ks])
        ax.minorticks_off()
    ax.set_xlabel("k (retrieved passages in the prompt); whiskers: bootstrap 95% CI")
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
    # The row labels take their width from the figure: wide labels must not squeeze the columns.
    label_width = 0.065 * max(len(label) for label, _ in rows)
    fig, ax = plt.subplots(figsize=(max(4.0, 0.62 * len(cols) + 2.0 + label_width), max(2.5, 0.36 * len(rows) + 1.6)))
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


def _heatmap_labels(runs: list[dict[str, Any]], bias: bool = False) -> list[str]:
    """A heat map's row labels: model (scoring and news day where runs differ in them) and setting
    with its retrieval configuration, so no two rows read the same; then the position bias when
    asked, and ``n=`` for a run with too few answers for its cells to mean much."""
    from okgen.eval.tables import few_answers, setting_label

    several = len({(r["scoring"], r["format"], r["judge"]) for r in runs}) > 1
    days = len({r["snapshot"] for r in runs}) > 1
    models = sorted({r["model"] for r in runs})
    out = []
    for r in runs:
        b = (r.get("diagnostics") or {}).get("position_bias") if bias else None
        notes = ([f"bias {b:.2f}"] if b is not None else []) + ([f"n={few}"] if (few := few_answers(r)) is not None else [])
        out.append(f"{_label(r, several, days, models)} · {setting_label(r)}" + (f" ({', '.join(notes)})" if notes else ""))
    return out


def plot_by_outlet(report: dict[str, Any], out_dir: Path, formats: Sequence[str]) -> tuple[list[Path], Any] | None:
    """Accuracy per outlet (every run x outlet, in the report's order: day, model, setting)."""
    runs = [r for r in report["runs"] if r.get("by_source")]
    if not runs:
        return None
    cols = sorted({s for r in runs for s in r["by_source"]})
    rows = [(label, {k: b["accuracy"] for k, b in r["by_source"].items()})
            for label, r in zip(_heatmap_labels(runs), runs)]
    return _heatmap(rows, cols, "Accuracy by outlet", "outlet", out_dir, "accuracy_by_outlet", formats)


def plot_by_position(report: dict[str, Any], out_dir: Path, formats: Sequence[str]) -> tuple[list[Path], Any] | None:
    """Accuracy per gold answer position (every run x letter), with each run's position bias."""
    runs = [r for r in report["runs"] if r.get("by_position")]
    if not runs:
        return None
    cols = sorted({s for r in runs for s in r["by_position"]})
    rows = [(label, {k: b["accuracy"] for k, b in r["by_position"].items()})
            for label, r in zip(_heatmap_labels(runs, bias=True), runs)]
    return _heatmap(rows, cols, "Accuracy by gold answer position", "position of the correct answer", out_dir,
                    "accuracy_by_position", formats)


def _jobs(report: dict[str, Any]) -> list[Any]:
    """The figures the report has data for (the heat maps say so themselves, by returning None)."""
    return (([plot_by_setting] if report["settings"] else []) + ([plot_vs_k] if report["retrieval"] else [])
            + [plot_by_outlet, plot_by_position])


def plot_all(report: dict[str, Any], out_dir: str | Path, formats: Sequence[str] = ("png", "svg"),
             keep_open: bool = False) -> list[Path]:
    """Write every figure the report has data for; return the files (figures closed unless ``keep_open``)."""
    plt = _plt()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for job in _jobs(report):
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
    for job in _jobs(report):
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
