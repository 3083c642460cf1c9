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
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from okgen.errors import NotFoundError, OkgenError
from okgen.eval.stats import degenerate_warning
from okgen.eval.tables import mode_label
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
    by_source: dict[str, Any] | None = None
    by_position: dict[str, Any] | None = None
    diagnostics: dict[str, Any] | None = None

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


# Results of runs ``okgen report`` does not read: they have reports of their own.
OWN_REPORTS = {"okgen-stream-eval": "okgen eval --stream writes report.md in the model's folder of the stream",
               "okgen-stream-memory-results": "okgen memory eval --stream writes its own comparison",
               "okgen-stream-results": "okgen memory eval writes comparison.md beside its runs"}


def _other_kind(path: Path) -> str | None:
    """The ``kind`` of a results file that is not a snapshot run's (None: read it as one)."""
    import json

    try:
        kind = json.loads(path.read_text(encoding="utf-8")).get("kind")
    except (OSError, ValueError, AttributeError):
        return None
    return kind if kind in OWN_REPORTS else None


def load_rows(paths: Iterable[str | Path]) -> list[RunRow]:
    """Report rows of every run found (the newest of duplicates kept); stream and memory runs,
    which have reports of their own, are left out (NotFoundError when nothing else is found)."""
    rows: dict[tuple, RunRow] = {}
    found, others = [], Counter()
    for f in find_results(paths):
        if (kind := _other_kind(f)) is not None:
            others[kind] += 1
        else:
            found.append(f)
    if others:
        what = "; ".join(f"{n} {k.removeprefix('okgen-')} run(s): {OWN_REPORTS[k]}" for k, n in sorted(others.items()))
        if not found:
            raise NotFoundError(f"no snapshot runs to report under the given paths ({what})")
        log.warning("left out %s", what)
    for f in found:
        rec = read_model_json(f, EvalRecord)
        sig = EvalSignature.parse(rec.signature)
        row = RunRow(
            snapshot=sig.short_hash, date=str(sig.date), model=model_label(rec.model), setting=sig.setting,
            retriever=sig.retriever, window=sig.ret_window, k=sig.k, scoring=sig.scoring, format=sig.answer_format,
            template=sig.template, judge=sig.judge, n=rec.n, accuracy=rec.accuracy, ci_low=rec.ci95[0],
            ci_high=rec.ci95[1], unparsed=rec.unparsed, truncated=rec.truncated, created_at=rec.created_at.isoformat(),
            path=str(f.parent), signature=rec.signature, errors=rec.errors,
            by_source={k: b.model_dump() for k, b in rec.by_source.items()},
            by_position={k: b.model_dump() for k, b in rec.by_position.items()},
            diagnostics=rec.extra.get("diagnostics"))
        key = (row.group, row.model, row.setting, row.retriever, row.window, row.k)
        if key not in rows or rows[key].created_at <= row.created_at:
            rows[key] = row
    return sorted(rows.values(), key=lambda r: (r.date, r.group, r.model, r.setting, r.retriever, r.window or 0, r.k or 0))


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
    dates = {r.group: r.date for r in rows}
    for group in sorted(dates, key=lambda g: (dates[g], g)):  # the news days in order
        g = [r for r in rows if r.group == group]
        for model in sorted({r.model for r in g}):
            m = {r.setting: r for r in g if r.model == model and r.setting != "retrieval"}
            if m:
                none, oracle = m.get("none"), m.get("oracle")
                settings.append({
                    "date": dates[group], "snapshot": group[0], "scoring": group[1], "format": group[2], "template": group[3],
                    "judge": group[4], "n": group[5], "model": model,
                    "none": _cell(none), "oracle": _cell(oracle),
                    "oracle_gain": round(oracle.accuracy - none.accuracy, 6) if none and oracle else None,
                })
            for ret in sorted({(r.retriever, r.window) for r in g if r.model == model and r.setting == "retrieval"},
                              key=lambda x: (x[0], x[1] or 0)):
                cells = {r.k: _cell(r) for r in g if r.model == model and r.setting == "retrieval"
                         and (r.retriever, r.window) == ret}
                retrieval.append({"date": dates[group], "snapshot": group[0], "scoring": group[1], "format": group[2], "template": group[3],
                                  "judge": group[4], "n": group[5], "model": model, "retriever": ret[0], "window": ret[1],
                                  "by_k": {str(k): v for k, v in sorted(cells.items())}})
    warnings = []
    for r in settings:
        if r["oracle_gain"] is not None and r["oracle_gain"] <= 0 and not r["model"].startswith("random/"):
            warnings.append(f"{r['model']} ({r['scoring']}), snapshot {r['snapshot']} ({r['date']}, n={r['n']}): "
                            "oracle accuracy is not above no-context accuracy")
    for r in rows:
        w = degenerate_warning(f"{r.model} {r.setting}, snapshot {r.snapshot} ({r.date})", r.diagnostics or {})
        if w:
            warnings.append(w)
    return {"kind": "okgen-report", "settings": settings, "retrieval": retrieval, "runs": [asdict(r) for r in rows],
            "warnings": warnings}


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
                "| date | snapshot | n | model | scoring | none | oracle | oracle gain |",
                "| --- | --- | --- | --- | --- | --- | --- | --- |"]
        for r in report["settings"]:
            gain = f"{100 * r['oracle_gain']:+.1f}" if r["oracle_gain"] is not None else "–"
            out.append(f"| {r['date']} | {r['snapshot']} | {r['n']} | {r['model']} | {mode_label(r)} | {_fmt(r['none'])} | "
                       f"{_fmt(r['oracle'])} | {gain} |")
        out.append("")
    if report["retrieval"]:
        ks = sorted({int(k) for r in report["retrieval"] for k in r["by_k"]})
        out += ["## Accuracy with retrieval (retriever x window x k)", "",
                "| date | snapshot | n | model | scoring | retriever | window | " + " | ".join(f"k={k}" for k in ks) + " |",
                "| --- | --- | --- | --- | --- | --- | --- | " + " | ".join("---" for _ in ks) + " |"]
        for r in report["retrieval"]:
            cells = " | ".join(_fmt(r["by_k"].get(str(k))) for k in ks)
            out.append(f"| {r['date']} | {r['snapshot']} | {r['n']} | {r['model']} | {mode_label(r)} | {r['retriever']} | "
                       f"{r['window']}d | {cells} |")
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
    diag = [r for r in report["runs"] if r.get("diagnostics") and r["format"] == "mc"]  # letters: multiple choice only
    if diag:
        out += ["## Answer diagnostics", "",
                "Share of each predicted letter, accuracy per gold position, and the position bias (total-variation "
                "distance between predicted and gold letters: 0 unbiased, 0.75 always one letter of four).", "",
                "| date | snapshot | n | model | scoring | setting | predicted letters | accuracy by gold position | position bias |",
                "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        for r in diag:
            d = r["diagnostics"]
            n = max(1, d["answered"])
            pred = " ".join(f"{k} {100 * v / n:.0f}%" for k, v in d["predicted_letters"].items())
            pos = " ".join(f"{k} {100 * v:.0f}%" for k, v in d["accuracy_by_gold_position"].items())
            flag = " ⚠" if d.get("dominant_letter") else ""
            out.append(f"| {r['date']} | {r['snapshot']} | {r['n']} | {r['model']} | {mode_label(r)} | {_setting(r)} | {pred} | "
                       f"{pos} | {d['position_bias']:.2f}{flag} |")
        out.append("")
    if report.get("warnings"):
        out += ["## Warnings", ""] + [f"- {w}" for w in report["warnings"]] + [""]
    out += ["Accuracy in %, bootstrap 95% confidence interval in brackets. Signatures of every run:", ""]
    out += [f"- `{r['model']}` | `{r['signature']}`" for r in report["runs"]]
    return "\n".join(out) + "\n"


def _setting(r: dict[str, Any]) -> str:
    if r["setting"] != "retrieval":
        return r["setting"]
    return f"retrieval {r['retriever']} {r['window']}d k={r['k']}"




def plot_report(report: dict[str, Any], out_dir: str | Path, formats: Sequence[str] = ("png", "svg")) -> list[Path]:
    """Write the report's figures (see :mod:`okgen.eval.plots`)."""
    from okgen.eval.plots import plot_all

    return plot_all(report, out_dir, formats)
