"""``okgen eval --series``: score one model on every snapshot of a series, loading it once.

Each day and setting is an ordinary eval run (:func:`okgen.eval.runner.run_eval`, given the
already loaded backend) in ``<out>/<date>/<run>/``, so a killed run resumes question by
question exactly as ``okgen eval`` does. When a day's run completes, its outcomes are written
atomically to ``<out>/<date>/<run>/outcomes.json``: one row per question with the question's
date, whether it was answered correctly, the soft score of the gold option (softmax of the
per-choice scores; none for generated answers), its number of choices and its freshness-probe
flag, plus the eval date. A day with that file is done and is never scored again.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from okgen.errors import ConfigError, IntegrityError
from okgen.eval.runner import (
    SPEED_OPTIONS,
    EvalOptions,
    RunSpec,
    model_slug,
    read_predictions,
    run_eval,
)
from okgen.files import atomic_write_text, pretty_json
from okgen.models.base import Backend, ModelSpec, parse_model_spec
from okgen.schema import Prediction, Question, utcnow
from okgen.series.store import member_snapshots, resolve_series, verify_series
from okgen.settings import Workspace

log = logging.getLogger(__name__)
OUTCOMES = "outcomes.json"
PROBE_FLAG = "probe_known"


@dataclass
class SeriesEvalOutcome:
    """What a series eval did."""

    path: Path
    series: str
    model: str
    days: list[dict[str, Any]] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    """The days in the series' range without a snapshot (``--allow-gaps``)."""
    series_signature: str = ""
    """The series' signature: with each day's ``eval_signature``, what determined the numbers."""

    @property
    def scored_now(self) -> int:
        """Questions scored by this call (0 when everything was already done)."""
        return sum(d["scored_now"] for d in self.days)


def soft_gold(p: Prediction, q: Question) -> float | None:
    """Probability of the gold option: softmax of the per-choice scores (None without scores)."""
    if not p.scores or len(p.scores) != len(q.choices) or p.error is not None:
        return None
    from scipy.special import softmax

    return float(softmax(p.scores)[q.answer_index])


def outcome_rows(questions: Sequence[Question], preds: dict[str, Prediction]) -> list[dict[str, Any]]:
    """One row per scored question: id, date, correct, soft score of the gold option, choices, probe flag."""
    rows = []
    for q in questions:
        p = preds.get(q.id)
        if p is None:
            continue
        rows.append({"question_id": q.id, "date": str(q.date), "correct": bool(p.correct and p.error is None),
                     "soft_gold": soft_gold(p, q), "n_choices": len(q.choices), "probe_known": PROBE_FLAG in q.flags,
                     "source": q.source, "error": p.error})
    return rows


def run_series_eval(ref: str, model: str | ModelSpec, runs: Sequence[RunSpec], opts: EvalOptions | None = None, *,
                    workspace: Workspace | None = None, out: str | Path | None = None,
                    backend: Backend | None = None) -> SeriesEvalOutcome:
    """Score ``model`` on every day of the series ``ref`` in every run of ``runs``.

    Args:
        ref: series name, signature or hash prefix.
        model: model spec.
        runs: the settings (see :func:`okgen.eval.runner.plan_runs`).
        opts: scoring options (``limit`` applies per day).
        workspace: the okgen workspace.
        out: parent folder of the day folders (default ``data/runs/series/<series>/<model>/``).
        backend: an already loaded backend (not closed); by default the model is loaded once,
            on the first day that still has questions to score.

    Raises:
        IntegrityError: the series or a member snapshot fails verification (checked before any
            model is loaded).
    """
    ws = workspace or Workspace.from_env()
    opts = replace(opts) if opts is not None else EvalOptions()
    spec = model if isinstance(model, ModelSpec) else parse_model_spec(model)
    manifest, folder = resolve_series(ref, ws)
    rep = verify_series(folder, ws)
    if not rep.ok:
        raise IntegrityError(f"series {manifest.name} failed verification ({len(rep.problems)} problem(s); first: "
                             f"{rep.problems[0]}); refusing to evaluate it")
    root = Path(out) if out else ws.data_dir / "runs" / "series" / manifest.name / model_slug(spec)
    # What this call creates, so that a failure removes that much and no more.
    top = root
    while not top.parent.exists():
        top = top.parent
    before = {p for p in root.rglob("*") if p.is_dir()} if root.exists() else set()
    created = not root.exists()
    root.mkdir(parents=True, exist_ok=True)
    result = SeriesEvalOutcome(root, manifest.name, spec.text, missing=[str(d) for d in manifest.missing_days],
                               series_signature=manifest.signature)
    model_options = {k: v for k, v in sorted(spec.options.items()) if k not in SPEED_OPTIONS}
    ident = {"model": spec.name, "model_options": model_options, "scoring": opts.scoring, "format": opts.fmt, "template": opts.template,
             "limit": opts.limit, "seed": opts.seed, "temperature": opts.temperature, "max_tokens": opts.max_tokens,
             "judge": opts.judge}
    owned = backend is None
    try:
        for snap in member_snapshots(manifest, ws):
            for rs in runs:
                if rs.setting == "retrieval" and rs.window is None:
                    rs = RunSpec(rs.setting, rs.retriever, snap.signature.window, rs.k)
                run_dir = root / str(snap.manifest.date) / rs.slug()
                if (run_dir / OUTCOMES).is_file() and not opts.overwrite:
                    done = _check_same_run(run_dir / OUTCOMES, ident, snap.manifest.signature)
                    result.days.append({"date": str(snap.manifest.date), "run": rs.slug(), "scored_now": 0, "done_before": True,
                                        "accuracy": done.get("accuracy"), "n": len(done.get("rows") or []),
                                        "eval_signature": done.get("eval_signature")})
                    continue
                if backend is None:
                    from okgen.models.registry import load_backend

                    log.info("loading %s once for %d day(s)", spec.text, len(manifest.members))
                    backend = load_backend(spec, ws)
                (o,) = run_eval(str(snap.path), spec, [rs], opts, workspace=ws, out=run_dir, backend=backend)
                questions = snap.questions[: opts.limit] if opts.limit else snap.questions
                rows = outcome_rows(questions, read_predictions(run_dir / "predictions.jsonl"))
                doc = {"kind": "okgen-series-outcomes", "schema_version": 1, "series": manifest.name,
                       "series_signature": manifest.signature, "model": spec.text, "run": rs.slug(),
                       "setting": rs.setting, "snapshot_date": str(snap.manifest.date),
                       "snapshot_signature": snap.manifest.signature, "eval_signature": o.record.signature,
                       "eval_date": str(utcnow().date()), "options": ident, "accuracy": o.record.accuracy,
                       "rows": rows}
                atomic_write_text(run_dir / OUTCOMES, pretty_json(doc))
                result.days.append({"date": str(snap.manifest.date), "run": rs.slug(), "scored_now": o.scored_now,
                                    "resumed": o.resumed, "accuracy": o.record.accuracy, "n": o.record.n,
                                    "done_before": False, "eval_signature": o.record.signature})
    except BaseException:
        _prune_empty(root, before, top if created else None)  # a failed run leaves no empty folder of its own
        raise
    finally:
        if owned and backend is not None:
            backend.close()
    atomic_write_text(root / "series-run.json", json.dumps(
        {"kind": "okgen-series-run", "series": manifest.name, "series_signature": manifest.signature,
         "model": spec.text, "runs": [rs.slug() for rs in runs], "updated_at": utcnow().isoformat()}, indent=2) + "\n")
    return result


def _prune_empty(root: Path, before: set[Path], top: Path | None) -> None:
    """Remove the empty folders under ``root`` that were not in ``before``; with ``top`` (the
    highest folder this call created), ``root`` and its parents up to ``top`` too, when empty."""
    made = [p for p in root.rglob("*") if p.is_dir() and not p.is_symlink() and p not in before]
    for d in sorted(made, key=lambda p: len(p.parts), reverse=True):
        with contextlib.suppress(OSError):
            d.rmdir()  # only an empty folder goes
    if top is None:
        return
    d = root
    while True:
        try:
            d.rmdir()
        except OSError:
            return
        if d == top:
            return
        d = d.parent


def _check_same_run(path: Path, ident: dict[str, Any], snapshot_signature: str | None = None) -> dict[str, Any]:
    """A finished day-run is reused only for the same model and options, and for the snapshot
    the series now has for that day; returns its outcomes.

    Raises:
        ConfigError: the folder holds a run with other options (they are named), or outcomes of
            another snapshot of the day (a series rebuilt with ``--overwrite`` after the day was
            rebuilt or imported anew: its old outcomes would stand for questions never scored).
    """
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        stored = doc.get("options", {})
    except (OSError, ValueError, AttributeError):
        raise ConfigError(f"{path}: corrupted; use --overwrite to score that day again") from None
    old = doc.get("snapshot_signature")
    if snapshot_signature is not None and old and old != snapshot_signature:
        from okgen.signature import signature_diff

        raise ConfigError(f"{path.parent} holds outcomes of another snapshot of {doc.get('snapshot_date')} "
                          f"({signature_diff(old, snapshot_signature)}): the series' member changed; move that "
                          "folder aside to score the new one (--overwrite scores every day again), or give "
                          "another --out")
    diff = sorted(k for k in ident if stored.get(k) != ident[k])
    if diff:
        raise ConfigError(f"{path.parent} holds a run with other options (differs in {', '.join(diff)}); "
                          "use another --out or --overwrite")
    return doc


def read_outcomes(paths: Sequence[str | Path]) -> list[dict[str, Any]]:
    """Every ``outcomes.json`` under the given run folders (or the files themselves).

    Raises:
        OkgenError: a path holds no outcomes, or a file is not an outcomes file.
    """
    from okgen.errors import NotFoundError, SchemaError

    docs = []
    for p in map(Path, paths):
        files = [p] if p.is_file() else sorted(p.rglob(OUTCOMES)) if p.is_dir() else []
        if not files:
            raise NotFoundError(f"{p}: no series eval outcomes ({OUTCOMES}) there (okgen eval --series writes them)")
        for f in files:
            try:
                doc = json.loads(f.read_text(encoding="utf-8"))
            except (OSError, ValueError) as e:
                raise SchemaError(f"{f}: unreadable outcomes file ({e})") from None
            if not isinstance(doc, dict) or doc.get("kind") != "okgen-series-outcomes":
                raise SchemaError(f"{f}: not an okgen series outcomes file")
            docs.append(doc)
    return docs

