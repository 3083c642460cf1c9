"""``okgen eval --stream``: score a model on a stream in one or more settings."""

from __future__ import annotations

from pathlib import Path

import click

from okgen.cli.common import echo_json, echo_table, get_ctx


def echo_stream_eval(ref: str, model: str, settings: list[str], limit: int | None, out: str | None,
                     json_out: bool, overwrite: bool = False, context_chars: int | None = None) -> None:
    """Run (or resume) every setting with one loaded model; print the metrics and transition tables; write
    ``report.md`` and ``accuracy.png`` beside the runs."""
    from okgen.errors import ConfigError
    from okgen.files import atomic_write_text
    from okgen.models.registry import load_backend
    from okgen.streams import report
    from okgen.streams.evaluate import Setting, run_stream_eval

    ws = get_ctx().workspace
    for s in settings:
        try:
            Setting.parse(s)  # every setting checked before the model loads
        except ConfigError as e:
            raise click.BadParameter(str(e), param_hint="--setting") from None
    backend = load_backend(model, ws)
    try:
        budget = {"budget_chars": context_chars} if context_chars else {}
        results = [run_stream_eval(ws, ref, model, s, limit=limit, backend=backend, overwrite=overwrite,
                                   out=Path(out) / Setting.parse(s).name if out else None, **budget) for s in settings]
    finally:
        backend.close()
    parent = Path(results[0]["path"]).parent
    left_out: list[str] = []
    every = report.with_earlier_settings(results, parent, left_out)
    atomic_write_text(parent / "report.md", report.markdown(every))
    png = report.plot_accuracy(every, parent / "accuracy.png")
    for r in results:
        if (cut := r.get("context_cut") or {}).get("pairs"):
            click.echo(f"warning: {r['setting']}: {cut['pairs']} of {cut['of']} (question, interval) pairs read only "
                       f"the {'best-ranked' if str(r['setting']).startswith('retrieval:') else 'newest'} documents "
                       f"that fit {r['budget_chars']:,} characters ({cut['documents']:,} left out; "
                       "--context-chars raises the budget)", err=True)
    if json_out:
        echo_json(results)
        return
    echo_table(report.metrics_rows(results), title=f"stream {results[0]['stream']}, model {model}")
    echo_table(report.transition_rows(results), title="transition classes: rate within the gold scenario (count)")
    echo_table(report.changes_rows(results), title="by number of answer changes")
    echo_table(report.dated_rows(results), title="stale and future answers, gold evidence: rate (pairs)")
    earlier = len(every) - len(results)
    click.echo(f"report: {parent / 'report.md'}, plot: {png}"
               + (f" (with {earlier} setting(s) of earlier runs of this model)" if earlier else "")
               + (f"; not in it: {', '.join(left_out)} (run with another --limit, --context-chars or template)"
                  if left_out else ""), err=True)
