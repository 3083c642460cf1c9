"""``okgen report``: the OKBench tables and plots from eval runs.

* **Settings table**: accuracy (with its 95% CI) per model in the no-context and oracle
  settings, and the oracle gain.
* **Retrieval table**: accuracy per model x retriever x window, one column per k.
* Plots (PNG, matplotlib): accuracy by setting across models (bars with CI whiskers), and
  accuracy against k (one line per model, retriever and window).

Runs are read from ``results.json`` files found under the given folders. Rows are grouped by
snapshot, question count (a ``--limit`` run is not a full one), scoring mode, format, template
and judge, so numbers that are not comparable never share a row; when the same run appears
twice the newest one is kept.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from okgen.errors import NotFoundError, OkgenError
from okgen.files import read_model_json
from okgen.schema import EvalRecord
from okgen.signature import EvalSignature

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RunRow:
    """One run as a report row."""

    snapshot: str
    date: str
    model: str
    setting: str
    retriever: str
    window: int | None
    k: int | None
    scoring: str
    format: str
    template: str
    judge: str
    n: int
    accuracy: float
    ci_low: float
    ci_high: float
    unparsed: int
    truncated: int
    created_at: str
    path: str
    signature: str
    errors: int = 0

    @property
    def group(self) -> tuple[str, str, str, str, str, int]:
        """What makes two numbers comparable: snapshot, scoring, format, template, judge, questions."""
        return (self.snapshot, self.scoring, self.format, self.template, self.judge, self.n)


def find_results(paths: Iterable[str | Path]) -> list[Path]:
    """Every ``results.json`` at or under the given files and folders.

    Raises:
        NotFoundError: a path does not exist, or nothing was found.
    """
    found: list[Path] = []
    for p in map(Path, paths):
        if not p.exists():
            raise NotFoundError(f"{p}: no such file or folder")
        if p.is_file():
            found.append(p)
        else:
            found.extend(sorted(p.rglob("results.json")))
    if not found:
        raise NotFoundError("no results.json under the given paths (okgen eval writes one per run)")
    return list(dict.fromkeys(found))


def load_rows(paths: Iterable[str | Path]) -> list[RunRow]:
    """Report rows of every run found (the newest of duplicates kept)."""
    rows: dict[tuple, RunRow] = {}
    for f in find_results(paths):
        rec = read_model_json(f, EvalRecord)
        sig = EvalSignature.parse(rec.signature)
        row = RunRow(
            snapshot=sig.short_hash, date=str(sig.date), model=model_label(rec.model), setting=sig.setting,
            retriever=sig.retriever, window=sig.ret_window, k=sig.k, scoring=sig.scoring, format=sig.answer_format,
            template=sig.template, judge=sig.judge, n=rec.n, accuracy=rec.accuracy, ci_low=rec.ci95[0],
            ci_high=rec.ci95[1], unparsed=rec.unparsed, truncated=rec.truncated, created_at=rec.created_at.isoformat(),
            path=str(f.parent), signature=rec.signature, errors=rec.errors)
        key = (row.group, row.model, row.setting, row.retriever, row.window, row.k)
        if key not in rows or rows[key].created_at <= row.created_at:
            rows[key] = row
    return sorted(rows.values(), key=lambda r: (r.group, r.model, r.setting, r.retriever, r.window or 0, r.k or 0))


def model_label(spec: str) -> str:
    """A model spec without the options that change only speed or location (batch size, URL...)."""
    from okgen.eval.runner import SPEED_OPTIONS
    from okgen.models.base import parse_model_spec

    try:
        ms = parse_model_spec(spec)
    except OkgenError:
        return spec
    opts = [f"{k}={v}" for k, v in sorted(ms.options.items()) if k not in SPEED_OPTIONS]
    return ",".join([ms.name, *opts])


def build_report(rows: Sequence[RunRow]) -> dict[str, Any]:
    """The report as data: the settings table, the retrieval table and every run."""
    settings, retrieval = [], []
    for group in sorted({r.group for r in rows}):
        g = [r for r in rows if r.group == group]
        for model in sorted({r.model for r in g}):
            m = {r.setting: r for r in g if r.model == model and r.setting != "retrieval"}
            if m:
                none, oracle = m.get("none"), m.get("oracle")
                settings.append({
                    "snapshot": group[0], "scoring": group[1], "format": group[2], "template": group[3],
                    "judge": group[4], "n": group[5], "model": model,
                    "none": _cell(none), "oracle": _cell(oracle),
                    "oracle_gain": round(oracle.accuracy - none.accuracy, 6) if none and oracle else None,
                })
            for ret in sorted({(r.retriever, r.window) for r in g if r.model == model and r.setting == "retrieval"},
                              key=lambda x: (x[0], x[1] or 0)):
                cells = {r.k: _cell(r) for r in g if r.model == model and r.setting == "retrieval"
                         and (r.retriever, r.window) == ret}
                retrieval.append({"snapshot": group[0], "scoring": group[1], "format": group[2], "template": group[3],
                                  "judge": group[4], "n": group[5], "model": model, "retriever": ret[0], "window": ret[1],
                                  "by_k": {str(k): v for k, v in sorted(cells.items())}})
    return {"kind": "okgen-report", "settings": settings, "retrieval": retrieval, "runs": [asdict(r) for r in rows]}


def _cell(r: RunRow | None) -> dict[str, Any] | None:
    if r is None:
        return None
    return {"accuracy": r.accuracy, "ci95": [r.ci_low, r.ci_high], "n": r.n}


def _fmt(cell: dict[str, Any] | None) -> str:
    if not cell:
        return "–"
    lo, hi = cell["ci95"]
    return f"{100 * cell['accuracy']:.1f} [{100 * lo:.1f}, {100 * hi:.1f}]"


def render_markdown(report: dict[str, Any]) -> str:
    """Markdown tables (accuracy in %, 95% CI in brackets)."""
    out = ["# okgen report", ""]
    if report["settings"]:
        out += ["## Accuracy without context and with the source article (oracle)", "",
                "| snapshot | n | model | scoring | none | oracle | oracle gain |", "| --- | --- | --- | --- | --- | --- | --- |"]
        for r in report["settings"]:
            gain = f"{100 * r['oracle_gain']:+.1f}" if r["oracle_gain"] is not None else "–"
            out.append(f"| {r['snapshot']} | {r['n']} | {r['model']} | {_mode(r)} | {_fmt(r['none'])} | {_fmt(r['oracle'])} | {gain} |")
        out.append("")
    if report["retrieval"]:
        ks = sorted({int(k) for r in report["retrieval"] for k in r["by_k"]})
        out += ["## Accuracy with retrieval (retriever x window x k)", "",
                "| snapshot | n | model | scoring | retriever | window | " + " | ".join(f"k={k}" for k in ks) + " |",
                "| --- | --- | --- | --- | --- | --- | " + " | ".join("---" for _ in ks) + " |"]
        for r in report["retrieval"]:
            cells = " | ".join(_fmt(r["by_k"].get(str(k))) for k in ks)
            out.append(f"| {r['snapshot']} | {r['n']} | {r['model']} | {_mode(r)} | {r['retriever']} | {r['window']}d | {cells} |")
        out.append("")
    issues = [r for r in report["runs"] if r["unparsed"] or r["errors"] or r["truncated"]]
    if issues:
        out += ["## Answers counted wrong, and truncated contexts", "",
                "Unparseable answers and backend errors count as wrong; a truncated context lost its end "
                "(see the eval docs' truncation rule).", "",
                "| snapshot | n | model | setting | retriever | window | k | unparsed | errors | truncated |",
                "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        for r in issues:
            window = f"{r['window']}d" if r["window"] else "–"
            out.append(f"| {r['snapshot']} | {r['n']} | {r['model']} | {r['setting']} | {r['retriever']} | {window} | "
                       f"{r['k'] or '–'} | {r['unparsed']} | {r['errors']} | {r['truncated']} |")
        out.append("")
    out += ["Accuracy in %, bootstrap 95% confidence interval in brackets. Signatures of every run:", ""]
    out += [f"- `{r['model']}` | `{r['signature']}`" for r in report["runs"]]
    return "\n".join(out) + "\n"


def _mode(r: dict[str, Any]) -> str:
    s = r["scoring"] if r["format"] == "mc" else f"open/{r['scoring']}"
    return s + ("" if r["judge"] == "none" else " +judge")


def plot_report(report: dict[str, Any], out_dir: str | Path) -> list[Path]:
    """Write ``accuracy_by_setting.png`` and ``accuracy_vs_k.png`` (those with data)."""
    from okgen.registry import require

    mpl = require("matplotlib", "plot", "report plots")
    mpl.use("Agg")
    import matplotlib.pyplot as plt

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    if report["settings"]:
        rows = report["settings"]
        labels = [f"{r['model']}\n{_mode(r)}" for r in rows]
        fig, ax = plt.subplots(figsize=(max(5.0, 1.4 * len(rows) + 2), 4))
        width = 0.38
        for j, setting in enumerate(("none", "oracle")):
            xs = [i + (j - 0.5) * width for i in range(len(rows))]
            acc = [100 * (r[setting] or {}).get("accuracy", float("nan")) for r in rows]
            err = [[100 * (r[setting]["accuracy"] - r[setting]["ci95"][0]) if r[setting] else 0 for r in rows],
                   [100 * (r[setting]["ci95"][1] - r[setting]["accuracy"]) if r[setting] else 0 for r in rows]]
            ax.bar(xs, acc, width, yerr=err, capsize=3, label="no context" if setting == "none" else "oracle article")
        ax.set_xticks(range(len(rows)), labels, fontsize=8)
        ax.set_ylabel("accuracy (%)")
        ax.set_ylim(0, 100)
        ax.set_title("Accuracy by setting")
        ax.legend()
        fig.tight_layout()
        written.append(out_dir / "accuracy_by_setting.png")
        fig.savefig(written[-1], dpi=120)
        plt.close(fig)
    if report["retrieval"]:
        fig, ax = plt.subplots(figsize=(6, 4))
        for r in report["retrieval"]:
            ks = sorted(int(k) for k in r["by_k"])
            acc = [100 * r["by_k"][str(k)]["accuracy"] for k in ks]
            ax.plot(ks, acc, marker="o", label=f"{r['model']} · {r['retriever']} {r['window']}d")
        ax.set_xlabel("k (passages given)")
        ax.set_ylabel("accuracy (%)")
        ax.set_ylim(0, 100)
        ax.set_title("Accuracy against k")
        ax.legend(fontsize=7)
        fig.tight_layout()
        written.append(out_dir / "accuracy_vs_k.png")
        fig.savefig(written[-1], dpi=120)
        plt.close(fig)
    return written
