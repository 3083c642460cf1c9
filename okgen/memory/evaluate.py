"""``okgen memory eval``: every setting over a series' days, one model load, resumable.

The series is verified (every member, every hash) before anything loads. Its days become a
stream (:class:`okgen.memory.harness.StreamDay`): each member snapshot gives the articles of its
own date (its corpus's articles of that day) and its questions. Each setting runs into
``<out>/<setting>/`` (see :mod:`okgen.memory.harness`); ``<out>/comparison.json`` and
``comparison.md`` compare them (:func:`okgen.memory.report.compare`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from okgen.errors import ConfigError, IntegrityError
from okgen.files import atomic_write_text, pretty_json
from okgen.memory.harness import StreamDay, StreamOptions, parse_setting, run_stream
from okgen.memory.report import by_age_markdown, compare, markdown
from okgen.models.base import Backend, parse_model_spec
from okgen.settings import Workspace

log = logging.getLogger(__name__)


def stream_from_series(ref: str, ws: Workspace) -> tuple[Any, list[StreamDay]]:
    """The series' manifest and its days as a stream (verified first).

    Raises:
        IntegrityError: the series or a member fails verification.
    """
    from okgen.series.store import member_snapshots, resolve_series, verify_series

    manifest, folder = resolve_series(ref, ws)
    report = verify_series(folder, ws)
    if not report.ok:
        raise IntegrityError(f"series {manifest.name} failed verification: {report.problems[0]}")
    days, seen = [], set()
    for snap in member_snapshots(manifest, ws):
        date = snap.signature.date
        arts = [a for a in snap.corpus if a.date == date and a.id not in seen]
        seen.update(a.id for a in arts)
        days.append(StreamDay(date, arts, list(snap.questions)))
    return manifest, days


def slug(setting: str) -> str:
    """Folder name of a setting (``mem:recent,window=2`` -> ``mem-recent_window=2``)."""
    return setting.replace(":", "-").replace(",", "_").replace("/", "_")


def check_settings(settings: Sequence[str]) -> None:
    """Refuse a bad setting, an unknown memory or an option its memory does not take (before
    anything is verified or loaded, see :func:`okgen.memory.base.check_memory_spec`)."""
    from okgen.memory.base import check_memory_spec

    if not settings:
        raise ConfigError("no setting given: use --setting and/or --memory")
    for s in settings:
        kind, mspec = parse_setting(s)
        if kind == "memory":
            check_memory_spec(mspec)


def _run_settings(spec: Any, ws: Workspace, backend: Backend | None, settings: Sequence[str], label: str,
                  root: Path, run_one: Callable[[str, Backend], dict[str, Any]]) -> list[dict[str, Any]]:
    """Each setting's run with the model under test loaded once (``backend`` when given: not
    closed here).

    Every setting's run folder (``root/<setting>``) is locked before the model loads: a second
    process writing the same folder would append every prediction twice (it is refused in one
    line, and settings in other folders may run beside it)."""
    from contextlib import ExitStack

    from okgen.eval.rundir import folder_lock

    with ExitStack() as locks:
        for s in dict.fromkeys(settings):
            locks.enter_context(folder_lock(ws, root / slug(s), "okgen memory eval"))
        owned = backend is None
        if backend is None:
            from okgen.models.registry import load_backend

            backend = load_backend(spec, ws)
        runs = []
        try:
            for s in settings:
                log.info("%s: %s", label, s)
                runs.append(run_one(s, backend))
        finally:
            if owned:
                backend.close()
        return runs


def run_memory_eval(ref: str, model: str, settings: Sequence[str], opts: StreamOptions | None = None, *,
                    workspace: Workspace | None = None, out: str | Path | None = None,
                    memory_model: str | None = None, backend: Backend | None = None) -> dict[str, Any]:
    """Run ``settings`` over the series ``ref`` with ``model``; returns the comparison.

    Args:
        ref: series name, signature or hash prefix.
        model: model spec under test (loaded once).
        settings: ``none``, ``ctx:closest``/``ctx:latest``/``ctx:cumulative``, ``mem:SPEC``...
        opts: stream options (k, ask, limit per day...).
        workspace: okgen workspace.
        out: parent folder (default ``data/runs/memory/<series>/<model>/``).
        memory_model: chat model spec for memories that need one (``summary``).
        backend: an already loaded backend (not closed).
    """
    from okgen.eval.runner import model_slug

    ws = workspace or Workspace.from_env()
    check_settings(settings)
    manifest, days = stream_from_series(ref, ws)
    spec = parse_model_spec(model)
    root = Path(out) if out is not None else ws.runs_dir / "memory" / manifest.name / model_slug(spec)
    runs = _run_settings(spec, ws, backend, settings, manifest.name, root,
                         lambda s, be: run_stream(days, s, be, root / slug(s), opts, memory_model=memory_model))
    rows = compare(runs)
    summary = {"series": manifest.signature, "model": spec.text or spec.name, "rows": rows,
               "options": vars(opts or StreamOptions())}
    root.mkdir(parents=True, exist_ok=True)
    atomic_write_text(root / "comparison.json", pretty_json(summary))
    atomic_write_text(root / "comparison.md", f"series `{manifest.name}`, model `{spec.text or spec.name}`\n\n"
                      + series_markdown(summary))
    summary["path"] = str(root)
    return summary


def run_memory_stream_eval(ref: str, model: str, settings: Sequence[str], opts: StreamOptions | None = None, *,
                           workspace: Workspace | None = None, out: str | Path | None = None,
                           memory_model: str | None = None, backend: Backend | None = None) -> dict[str, Any]:
    """Run ``settings`` over the stream ``ref`` (every question at every interval, see
    :mod:`okgen.memory.on_streams`) with ``model`` loaded once; returns the comparison.

    ``<out>/comparison.json`` and ``comparison.md`` hold the comparison table (with OAKS's
    Acc/AL/DS/PM), the transition classes and the subsets by number of answer changes.

    Raises:
        ConfigError: a bad setting, ``--ask end``.
        IntegrityError: the stream fails verification.
    """
    from okgen.eval.runner import model_slug
    from okgen.memory.on_streams import run_stream_memory
    from okgen.streams import report as sreport
    from okgen.streams.store import open_verified_stream

    ws = workspace or Workspace.from_env()
    opts = opts or StreamOptions()
    check_settings(settings)
    if opts.ask != "same-day":
        raise ConfigError("a stream asks every question at every interval: --ask end does not apply to --stream")
    stream = open_verified_stream(ref, ws)
    spec = parse_model_spec(model)
    root = Path(out) if out is not None else ws.runs_dir / "memory" / "streams" / stream.manifest.name / model_slug(spec)
    runs = _run_settings(spec, ws, backend, settings, stream.manifest.name, root,
                         lambda s, be: run_stream_memory(stream, s, be, root / slug(s), opts, memory_model=memory_model))
    rows = compare(runs)
    summary = {"stream": stream.manifest.signature, "model": spec.text or spec.name, "rows": rows,
               "transitions": sreport.transition_rows(runs), "by_changes": sreport.changes_rows(runs),
               "options": vars(opts)}
    root.mkdir(parents=True, exist_ok=True)
    atomic_write_text(root / "comparison.json", pretty_json(summary))
    atomic_write_text(root / "comparison.md", stream_markdown(summary, stream.manifest.name))
    summary["path"] = str(root)
    return summary


def series_markdown(summary: dict[str, Any]) -> str:
    """The comparison of series runs; with ``--ask end``, the retention table (accuracy by age) after it."""
    end = summary.get("options", {}).get("ask") == "end"
    return markdown(summary["rows"]) + (by_age_markdown(summary["rows"]) if end else "")


def stream_markdown(summary: dict[str, Any], name: str) -> str:
    """The comparison of stream runs: the settings table, then the transition classes and the
    subsets by number of answer changes (:mod:`okgen.streams.report`'s tables)."""
    from okgen.streams.report import table

    return (f"stream `{name}`, model `{summary['model']}`\n\n" + markdown(summary["rows"])
            + "\n## Transition classes (rate within the gold scenario, count)\n\n" + table(summary["transitions"])
            + "\n## By number of answer changes\n\n" + table(summary["by_changes"]))
