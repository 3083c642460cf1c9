"""``okgen report``: the OKBench tables and plots from eval runs.

* **Settings table**: accuracy (with its 95% CI) per model in the no-context and oracle
  settings, and the oracle gain.
* **Retrieval table**: accuracy per model x retriever x window, one column per k.
* Plots (PNG, matplotlib): accuracy by setting across models (bars with CI whiskers), and
  accuracy against k (one line per model, retriever and window).

Runs are read from ``results.json`` files found under the given folders. Rows are grouped by
snapshot, question count (a ``--limit`` run is not a full one), scoring mode, format, template
and judge, so numbers that are not comparable never share a row; when the same run appears
twice the newest one is kept, with a warning naming both folders if their results differ. Runs
that cannot be shown (unfinished ones, unreadable ``results.json`` files) are named in a warning
line, never dropped without a word.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from okgen.errors import NotFoundError, OkgenError
from okgen.eval.stats import MIN_QUESTIONS_TO_WARN, degenerate_warning
from okgen.eval.tables import few_answers, mode_label, n_label, setting_label
from okgen.files import read_model_json
from okgen.schema import EvalRecord
from okgen.signature import EvalSignature, signature_diff

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
    limit: int | None = None
    """``--limit``: only the first ``limit`` questions were scored."""

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
    which have reports of their own, are left out (NotFoundError when nothing else is found).

    What is left out is said in one warning line each, so a missing row never goes unnoticed:
    unfinished runs (predictions but no ``results.json``), unreadable ``results.json`` files,
    and older copies of a run whose results differ from the kept one.
    """
    paths = list(paths)
    _warn_unfinished(paths)
    found = _snapshot_results(paths)
    rows, skipped = [], []
    for f in found:
        try:
            rows.append(read_row(f))
        except (OkgenError, OSError) as e:
            why = str(e).removeprefix(f"{f.name}: ")
            log.warning("skipped %s: %s", f, why)
            skipped.append(f"{f}: {why}")
    if not rows:
        raise NotFoundError(f"no readable run under the given paths (skipped {_some(skipped)})")
    return sorted(_dedupe(rows), key=lambda r: (r.date, r.group, r.model, r.setting, r.retriever, r.window or 0, r.k or 0))


def _snapshot_results(paths: Iterable[str | Path]) -> list[Path]:
    """The ``results.json`` files of snapshot runs; stream and memory runs are left out with a line."""
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
    return found


def read_row(f: Path) -> RunRow:
    """One ``results.json`` as a report row.

    Raises:
        OkgenError: the file is not JSON, not a run's results, or its signature does not parse.
    """
    rec = read_model_json(f, EvalRecord)
    sig = EvalSignature.parse(rec.signature)
    limit = rec.extra.get("limit") or sig.limit  # extra: what was scored, even where the signature lags
    return RunRow(
        snapshot=sig.short_hash, date=str(sig.date), model=model_label(rec.model), setting=sig.setting,
        retriever=sig.retriever, window=sig.ret_window, k=sig.k, scoring=sig.scoring, format=sig.answer_format,
        template=sig.template, judge=sig.judge, n=rec.n, accuracy=rec.accuracy, ci_low=rec.ci95[0],
        ci_high=rec.ci95[1], unparsed=rec.unparsed, truncated=rec.truncated, created_at=rec.created_at.isoformat(),
        path=str(f.parent), signature=rec.signature, errors=rec.errors,
        by_source={k: b.model_dump() for k, b in rec.by_source.items()},
        by_position={k: b.model_dump() for k, b in rec.by_position.items()},
        diagnostics=rec.extra.get("diagnostics"), limit=limit if isinstance(limit, int) else None)


SHOWN = 3  # paths named in one warning line


def _some(items: Sequence[str]) -> str:
    """The first few items, and how many more: a warning stays one readable line."""
    more = len(items) - SHOWN
    return ", ".join(items[:SHOWN]) + (f" and {more} more" if more > 0 else "")


def unfinished_runs(paths: Iterable[str | Path]) -> list[Path]:
    """Run folders under the given folders that hold predictions but no ``results.json``: runs
    that were interrupted or failed (a rerun of the same ``okgen eval`` finishes them)."""
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            out += [f.parent for f in sorted(p.rglob("predictions.jsonl"))
                    if not (f.parent / "results.json").exists() and _snapshot_run(f.parent)]
    return list(dict.fromkeys(out))


def _snapshot_run(folder: Path) -> bool:
    """Whether a run folder is ``okgen eval``'s on a snapshot (stream and memory runs have
    commands and reports of their own); a folder without a readable run.json counts as one."""
    import json

    try:
        data = json.loads((folder / "run.json").read_text(encoding="utf-8"))
        kinds = (data.get("kind"), (data.get("config") or {}).get("kind"))
    except (OSError, ValueError, AttributeError):
        return True
    return kinds[0] in (None, "okgen-eval-run") and kinds[1] is None  # streams' and memory's name theirs in config


def _warn_unfinished(paths: Iterable[str | Path]) -> None:
    if got := unfinished_runs(paths):
        log.warning("left out %d unfinished or failed run(s), with predictions but no results.json (rerun the same "
                    "okgen eval to finish them): %s", len(got), _some([str(p) for p in got]))


def _dedupe(rows: Iterable[RunRow]) -> list[RunRow]:
    """One row per model, setting and comparable group: the newest run. Identical copies (a
    series' runs beside the single-day ones) go silently; copies whose results differ are named
    in a warning, since which one the report shows then matters."""
    kept: dict[tuple, RunRow] = {}
    for row in rows:
        key = (row.group, row.model, row.setting, row.retriever, row.window, row.k)
        old = kept.get(key)
        if old is not None and row.created_at < old.created_at:
            old, row = row, old
        if old is not None and _outcome(old) != _outcome(row):
            log.warning("%s", _conflict(old, row))
        kept[key] = row
    return list(kept.values())


def _outcome(r: RunRow) -> tuple:
    """What a run found (not when or where it ran, nor its bootstrap interval)."""
    return (r.n, r.accuracy, r.unparsed, r.errors, r.truncated, r.by_source, r.by_position)


def _conflict(old: RunRow, new: RunRow) -> str:
    """The warning for two runs the report shows as one row whose results differ."""
    how = ("share a signature" if old.signature == new.signature
           else f"fall in one report row (their signatures differ in {signature_diff(old.signature, new.signature, 'vs')})")
    what = f"accuracy {old.accuracy:.3f} vs {new.accuracy:.3f}" + (f", n {old.n} vs {new.n}" if old.n != new.n else "")
    newer = " (the newer)" if new.created_at > old.created_at else ""
    return f"runs {old.path} and {new.path} {how} but their results differ ({what}): the report shows {new.path}{newer}"


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
    settings, retrieval, dated = [], [], []
    dates = {r.group: r.date for r in rows}
    for group in sorted(dates, key=lambda g: (dates[g], g)):  # the news days in order
        g = [r for r in rows if r.group == group]
        for model in sorted({r.model for r in g}):
            m = {r.setting: r for r in g if r.model == model and r.setting != "retrieval"}
            ctx = {s: r for s, r in sorted(m.items()) if s.startswith("ctx:")}
            if ctx:  # dated contexts (okgen memory's settings): a table of their own
                dated.append({"date": dates[group], "snapshot": group[0], "scoring": group[1], "format": group[2],
                              "template": group[3], "judge": group[4], "n": group[5], "limit": _limit(*ctx.values()),
                              "model": model, "by_setting": {s: _cell(r) for s, r in ctx.items()}})
            if "none" in m or "oracle" in m:
                none, oracle = m.get("none"), m.get("oracle")
                settings.append({
                    "date": dates[group], "snapshot": group[0], "scoring": group[1], "format": group[2], "template": group[3],
                    "judge": group[4], "n": group[5], "limit": _limit(none, oracle), "model": model,
                    "none": _cell(none), "oracle": _cell(oracle),
                    "oracle_gain": round(oracle.accuracy - none.accuracy, 6) if none and oracle else None,
                })
            for ret in sorted({(r.retriever, r.window) for r in g if r.model == model and r.setting == "retrieval"},
                              key=lambda x: (x[0], x[1] or 0)):
                runs = {r.k: r for r in g if r.model == model and r.setting == "retrieval" and (r.retriever, r.window) == ret}
                retrieval.append({"date": dates[group], "snapshot": group[0], "scoring": group[1], "format": group[2], "template": group[3],
                                  "judge": group[4], "n": group[5], "limit": _limit(*runs.values()), "model": model,
                                  "retriever": ret[0], "window": ret[1],
                                  "by_k": {str(k): _cell(r) for k, r in sorted(runs.items(), key=lambda kv: kv[0] or 0)}})
    warnings = []
    for r in settings:
        if r["oracle_gain"] is not None and r["oracle_gain"] <= 0 and not r["model"].startswith("random/"):
            warnings.append(f"{r['model']} ({r['scoring']}), snapshot {r['snapshot']} ({r['date']}, n={r['n']}): "
                            "oracle accuracy is not above no-context accuracy")
    for r in rows:
        w = degenerate_warning(f"{r.model} {setting_label(asdict(r))}, snapshot {r.snapshot} ({r.date})", r.diagnostics or {})
        if w:
            warnings.append(w)
    return {"kind": "okgen-report", "settings": settings, "retrieval": retrieval, "contexts": dated,
            "runs": [asdict(r) for r in rows], "warnings": warnings}


def _limit(*runs: RunRow | None) -> int | None:
    """The ``--limit`` of a table line's runs (they share a question count, so one limit)."""
    return next((r.limit for r in runs if r is not None and r.limit), None)


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
            out.append(f"| {r['date']} | {r['snapshot']} | {n_label(r)} | {r['model']} | {mode_label(r)} | {_fmt(r['none'])} | "
                       f"{_fmt(r['oracle'])} | {gain} |")
        out.append("")
    if report["retrieval"]:
        ks = sorted({int(k) for r in report["retrieval"] for k in r["by_k"]})
        out += ["## Accuracy with retrieval (retriever x window x k)", "",
                "| date | snapshot | n | model | scoring | retriever | window | " + " | ".join(f"k={k}" for k in ks) + " |",
                "| --- | --- | --- | --- | --- | --- | --- | " + " | ".join("---" for _ in ks) + " |"]
        for r in report["retrieval"]:
            cells = " | ".join(_fmt(r["by_k"].get(str(k))) for k in ks)
            out.append(f"| {r['date']} | {r['snapshot']} | {n_label(r)} | {r['model']} | {mode_label(r)} | {r['retriever']} | "
                       f"{r['window']}d | {cells} |")
        out.append("")
    if report.get("contexts"):
        names = sorted({s for r in report["contexts"] for s in r["by_setting"]})
        out += ["## Accuracy with dated contexts (okgen memory's ctx: settings)", "",
                "| date | snapshot | n | model | scoring | " + " | ".join(names) + " |",
                "| --- | --- | --- | --- | --- | " + " | ".join("---" for _ in names) + " |"]
        for r in report["contexts"]:
            cells = " | ".join(_fmt(r["by_setting"].get(s)) for s in names)
            out.append(f"| {r['date']} | {r['snapshot']} | {n_label(r)} | {r['model']} | {mode_label(r)} | {cells} |")
        out.append("")
    issues = [r for r in report["runs"] if r["unparsed"] or r["errors"] or r["truncated"]]
    if issues:
        out += ["## Answers counted wrong, and truncated contexts", "",
                "Unparseable answers and backend errors count as wrong; a truncated prompt was cut to fit the "
                "model's window: its first tokens under truncation=left (the default, lm-eval's), the end of its "
                "context under truncation=context (the run's backend.conventions.truncation says which).", "",
                "| snapshot | n | model | setting | retriever | window | k | unparsed | errors | truncated |",
                "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        for r in issues:
            window = f"{r['window']}d" if r["window"] else "–"
            out.append(f"| {r['snapshot']} | {n_label(r)} | {r['model']} | {r['setting']} | {r['retriever']} | {window} | "
                       f"{r['k'] or '–'} | {r['unparsed']} | {r['errors']} | {r['truncated']} |")
        out.append("")
    diag = [r for r in report["runs"] if r.get("diagnostics") and r["format"] == "mc"]  # letters: multiple choice only
    if diag:
        out += ["## Answer diagnostics", "",
                "Share of each predicted letter, accuracy per gold position, and the position bias (total-variation "
                "distance between predicted and gold letters: 0 unbiased, 0.75 always one letter of four on a balanced "
                f"set). A bias over fewer than {MIN_QUESTIONS_TO_WARN} answers says little: it is marked with its n.", "",
                "| date | snapshot | n | model | scoring | setting | predicted letters | accuracy by gold position | position bias |",
                "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        for r in diag:
            d = r["diagnostics"]
            n = max(1, d["answered"])
            pred = " ".join(f"{k} {100 * v / n:.0f}%" for k, v in d["predicted_letters"].items())
            pos = " ".join(f"{k} {100 * v:.0f}%" for k, v in d["accuracy_by_gold_position"].items())
            flag = " ⚠" if d.get("dominant_letter") else ""
            few = f" (n={answered})" if (answered := few_answers(r)) is not None else ""
            out.append(f"| {r['date']} | {r['snapshot']} | {n_label(r)} | {r['model']} | {mode_label(r)} | {setting_label(r)} | "
                       f"{pred} | {pos} | {d['position_bias']:.2f}{few}{flag} |")
        out.append("")
    if report.get("warnings"):
        out += ["## Warnings", ""] + [f"- {w}" for w in report["warnings"]] + [""]
    out += ["Accuracy in %, bootstrap 95% confidence interval in brackets. Signatures of every run:", ""]
    out += [f"- `{r['model']}` | `{r['signature']}`" for r in report["runs"]]
    return "\n".join(out) + "\n"


def plot_report(report: dict[str, Any], out_dir: str | Path, formats: Sequence[str] = ("png", "svg")) -> list[Path]:
    """Write the report's figures (see :mod:`okgen.eval.plots`)."""
    from okgen.eval.plots import plot_all

    return plot_all(report, out_dir, formats)
