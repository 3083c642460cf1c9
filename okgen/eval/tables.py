"""The report's tables as CSV and LaTeX (booktabs), beside ``report.md``.

* ``settings.csv`` / ``settings.tex``: accuracy per model without context and with the oracle
  article, their 95% CIs, the oracle gain, and the position bias of each run.
* ``retrieval.csv`` / ``retrieval.tex``: accuracy per model x retriever x window, one column per k.

Accuracies are fractions in CSV (for further computation) and percentages in LaTeX.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

_LATEX_ESCAPES = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                  "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def latex_escape(text: str) -> str:
    """Text safe inside a LaTeX table cell."""
    return "".join(_LATEX_ESCAPES.get(c, c) for c in str(text))


def _bias(report: dict[str, Any], r: dict[str, Any], setting: str) -> float | None:
    for run in report["runs"]:
        if (run["model"], run["setting"], run["scoring"], run["snapshot"], run["n"]) == (
                r["model"], setting, r["scoring"], r["snapshot"], r["n"]):
            return (run.get("diagnostics") or {}).get("position_bias")
    return None


def settings_rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    """One flat row per settings-table line."""
    out = []
    for r in report["settings"]:
        row: dict[str, Any] = {"date": r.get("date", ""), "snapshot": r["snapshot"], "n": r["n"], "model": r["model"],
                               "scoring": r["scoring"], "format": r["format"], "template": r["template"]}
        for s in ("none", "oracle"):
            c = r[s]
            row[s] = c["accuracy"] if c else ""
            row[f"{s}_ci_low"] = c["ci95"][0] if c else ""
            row[f"{s}_ci_high"] = c["ci95"][1] if c else ""
            b = _bias(report, r, s)
            row[f"{s}_position_bias"] = "" if b is None else b
        row["oracle_gain"] = "" if r["oracle_gain"] is None else r["oracle_gain"]
        out.append(row)
    return out


def retrieval_rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    """One flat row per retrieval-table line, a column per k."""
    ks = sorted({int(k) for r in report["retrieval"] for k in r["by_k"]})
    out = []
    for r in report["retrieval"]:
        row: dict[str, Any] = {"date": r.get("date", ""), "snapshot": r["snapshot"], "n": r["n"], "model": r["model"],
                               "scoring": r["scoring"], "retriever": r["retriever"], "window": r["window"]}
        for k in ks:
            c = r["by_k"].get(str(k))
            row[f"k={k}"] = c["accuracy"] if c else ""
        out.append(row)
    return out


def to_csv(rows: list[dict[str, Any]]) -> str:
    """CSV text with a header line."""
    buf = io.StringIO()
    if rows:
        w = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    return buf.getvalue()


def _pct(cell: dict[str, Any] | None, ci: bool = True) -> str:
    if not cell:
        return "--"
    lo, hi = cell["ci95"]
    return f"{100 * cell['accuracy']:.1f}" + (f" {{\\scriptsize [{100 * lo:.1f}, {100 * hi:.1f}]}}" if ci else "")


def mode_label(r: dict[str, Any]) -> str:
    """A run's scoring as every table and figure names it: ``loglik``, ``open/generate +judge``."""
    s = r["scoring"] if r["format"] == "mc" else f"open/{r['scoring']}"
    return s + ("" if r["judge"] == "none" else " +judge")


def _dated(rows: list[dict[str, Any]]) -> bool:
    """Whether the rows span several news days (the LaTeX tables then open with a date column)."""
    return len({r.get("date") for r in rows}) > 1


def settings_latex(report: dict[str, Any]) -> str:
    """A booktabs tabular: (news day,) model, scoring, none, oracle (with CIs), oracle gain."""
    day = _dated(report["settings"])
    lines = [r"\begin{tabular}{" + "l" * day + r"llrrrr}", r"\toprule",
             ("Date & " if day else "") + r"Model & Scoring & $n$ & No context & Oracle & Gain \\", r"\midrule"]
    for r in report["settings"]:
        gain = "--" if r["oracle_gain"] is None else f"{100 * r['oracle_gain']:+.1f}"
        lines.append((f"{r['date']} & " if day else "") + f"{latex_escape(r['model'])} & {latex_escape(mode_label(r))} & "
                     f"{r['n']} & {_pct(r['none'])} & {_pct(r['oracle'])} & {gain} \\\\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(lines) + "\n"


def retrieval_latex(report: dict[str, Any]) -> str:
    """A booktabs tabular: model, retriever, window, one column per k."""
    ks = sorted({int(k) for r in report["retrieval"] for k in r["by_k"]})
    day = _dated(report["retrieval"])
    lines = [r"\begin{tabular}{" + "l" * day + "lll" + "r" * len(ks) + "}", r"\toprule",
             ("Date & " if day else "") + "Model & Retriever & Window & " + " & ".join(f"$k={k}$" for k in ks) + r" \\",
             r"\midrule"]
    for r in report["retrieval"]:
        cells = " & ".join(_pct(r["by_k"].get(str(k)), ci=False) for k in ks)
        lines.append((f"{r['date']} & " if day else "")
                     + f"{latex_escape(r['model'])} & {latex_escape(r['retriever'])} & {r['window']}d & {cells} \\\\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(lines) + "\n"


def write_tables(report: dict[str, Any], out_dir: str | Path) -> list[Path]:
    """Write the CSV and LaTeX tables that have rows; return the files."""
    from okgen.files import atomic_write_text

    out = Path(out_dir)
    written = []
    if report["settings"]:
        for name, text in (("settings.csv", to_csv(settings_rows(report))), ("settings.tex", settings_latex(report))):
            atomic_write_text(out / name, text)
            written.append(out / name)
    if report["retrieval"]:
        for name, text in (("retrieval.csv", to_csv(retrieval_rows(report))), ("retrieval.tex", retrieval_latex(report))):
            atomic_write_text(out / name, text)
            written.append(out / name)
    return written
