"""The report's tables as CSV and LaTeX (booktabs), beside ``report.md``.

* ``settings.csv`` / ``settings.tex``: accuracy per model without context and with the oracle
  article, their 95% CIs, the oracle gain, and the position bias of each run.
* ``retrieval.csv`` / ``retrieval.tex``: accuracy per model x retriever x window, one column per k,
  with their 95% CIs.
* ``contexts.csv``: accuracy per model in each dated-context setting (``ctx:closest``...), with
  their 95% CIs.

Accuracies are fractions in CSV (for further computation) and percentages in LaTeX. A
``--limit`` run's question count reads ``3 (limit)`` in LaTeX and Markdown; CSV keeps ``n`` a
number and says the limit in a ``limit`` column.
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
        row: dict[str, Any] = {"date": r.get("date", ""), "snapshot": r["snapshot"], "n": r["n"],
                               "limit": r.get("limit") or "", "model": r["model"], "scoring": r["scoring"],
                               "format": r["format"], "template": r["template"]}
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
    """One flat row per retrieval-table line: a column per k, and its CI bounds as settings have."""
    ks = sorted({int(k) for r in report["retrieval"] for k in r["by_k"]})
    out = []
    for r in report["retrieval"]:
        row: dict[str, Any] = {"date": r.get("date", ""), "snapshot": r["snapshot"], "n": r["n"],
                               "limit": r.get("limit") or "", "model": r["model"], "scoring": r["scoring"],
                               "format": r["format"], "template": r["template"], "retriever": r["retriever"],
                               "window": r["window"]}
        for k in ks:
            c = r["by_k"].get(str(k))
            row[f"k={k}"] = c["accuracy"] if c else ""
            row[f"k={k}_ci_low"] = c["ci95"][0] if c else ""
            row[f"k={k}_ci_high"] = c["ci95"][1] if c else ""
        out.append(row)
    return out


def contexts_rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    """One flat row per dated-contexts line: a column per ``ctx:`` setting, with its CI bounds."""
    names = sorted({s for r in report.get("contexts", []) for s in r["by_setting"]})
    out = []
    for r in report.get("contexts", []):
        row: dict[str, Any] = {"date": r.get("date", ""), "snapshot": r["snapshot"], "n": r["n"],
                               "limit": r.get("limit") or "", "model": r["model"], "scoring": r["scoring"],
                               "format": r["format"], "template": r["template"]}
        for name in names:
            c = r["by_setting"].get(name)
            row[name] = c["accuracy"] if c else ""
            row[f"{name}_ci_low"] = c["ci95"][0] if c else ""
            row[f"{name}_ci_high"] = c["ci95"][1] if c else ""
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


def _pct(cell: dict[str, Any] | None) -> str:
    if not cell:
        return "--"
    lo, hi = cell["ci95"]
    return f"{100 * cell['accuracy']:.1f} {{\\scriptsize [{100 * lo:.1f}, {100 * hi:.1f}]}}"


def mode_label(r: dict[str, Any]) -> str:
    """A run's scoring as every table and figure names it: ``loglik``, ``open/generate +judge``."""
    s = r["scoring"] if r["format"] == "mc" else f"open/{r['scoring']}"
    return s + ("" if r["judge"] == "none" else " +judge")


def n_label(r: dict[str, Any]) -> str:
    """A table line's question count, marked when ``--limit`` cut it: a partial run must not read as a full one."""
    return f"{r['n']} (limit)" if r.get("limit") else str(r["n"])


def setting_label(r: dict[str, Any]) -> str:
    """A run's setting, with the retrieval configuration: runs with different ones are not the same setting."""
    if r["setting"] != "retrieval":
        return r["setting"]
    return f"retrieval {r['retriever']} {r['window']}d k={r['k']}"


def few_answers(r: dict[str, Any]) -> int | None:
    """A run's answered questions when they are too few for its per-letter and per-cell numbers to
    mean much (under the degenerate-letter warning's threshold), else None."""
    from okgen.eval.stats import MIN_QUESTIONS_TO_WARN

    answered = (r.get("diagnostics") or {}).get("answered", r["n"])
    return answered if answered < MIN_QUESTIONS_TO_WARN else None


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
                     f"{n_label(r)} & {_pct(r['none'])} & {_pct(r['oracle'])} & {gain} \\\\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(lines) + "\n"


def retrieval_latex(report: dict[str, Any]) -> str:
    """A booktabs tabular: (news day,) model, scoring, n, retriever, window, one column per k (with CIs)."""
    ks = sorted({int(k) for r in report["retrieval"] for k in r["by_k"]})
    day = _dated(report["retrieval"])
    lines = [r"\begin{tabular}{" + "l" * day + "llrll" + "r" * len(ks) + "}", r"\toprule",
             ("Date & " if day else "") + "Model & Scoring & $n$ & Retriever & Window & "
             + " & ".join(f"$k={k}$" for k in ks) + r" \\", r"\midrule"]
    for r in report["retrieval"]:
        cells = " & ".join(_pct(r["by_k"].get(str(k))) for k in ks)
        lines.append((f"{r['date']} & " if day else "")
                     + f"{latex_escape(r['model'])} & {latex_escape(mode_label(r))} & {n_label(r)} & "
                     f"{latex_escape(r['retriever'])} & {r['window']}d & {cells} \\\\")
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
    if report.get("contexts"):
        atomic_write_text(out / "contexts.csv", to_csv(contexts_rows(report)))
        written.append(out / "contexts.csv")
    return written
