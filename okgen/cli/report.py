"""``okgen report``: tables and plots from eval runs."""

from __future__ import annotations

import json
from pathlib import Path

import click
from click.core import ParameterSource

from okgen.cli.common import echo_json, json_option, split_list, want_json

FIGURE_FORMATS = ("png", "svg", "pdf")


@click.command("report")
@click.argument("runs", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("--out", type=click.Path(file_okay=False), default=None,
              help="Write report.md, report.json, CSV and LaTeX tables and the figures into this folder.")
@click.option("--plots/--no-plots", default=True, show_default=True, help="Draw the figures (needs --out and matplotlib).")
@click.option("--figures", "figure_formats", default="png,svg", show_default=True,
              help="Figure formats, comma-separated: png, svg, pdf.")
@json_option
def report(runs: tuple[str, ...], out: str | None, plots: bool, figure_formats: str, json_out: bool) -> None:
    """Render the OKBench tables and figures from RUN folders (or any folder holding runs).

    Accuracy per model without context, with the oracle article and with retrieval (per
    retriever x window x k), answer diagnostics (predicted letters, accuracy per gold position,
    position bias) and warnings, as Markdown (or JSON with --json) on stdout; with --out also
    report.md, report.json, settings/retrieval tables as CSV and LaTeX, and the figures
    accuracy_by_setting, accuracy_vs_k, accuracy_by_outlet and accuracy_by_position. Example:

    \b
      okgen report data/runs/2026-03-14_* --out reports/2026-03-14 --figures png,pdf
    """
    from okgen.cli.common import get_ctx
    from okgen.eval.report import build_report, load_rows, plot_report, render_markdown
    from okgen.eval.tables import write_tables
    from okgen.snapshot.quality import render_quality_markdown
    from okgen.snapshot.store import quality_of_snapshots

    formats = [f.lower() for f in split_list(figure_formats, "--figures")]
    bad = [f for f in formats if f not in FIGURE_FORMATS]
    if bad or not formats:
        raise click.BadParameter(f"takes {', '.join(FIGURE_FORMATS)} (comma-separated; --no-plots for none), "
                                 f"got {figure_formats!r}", param_hint="--figures")
    if not out and click.get_current_context().get_parameter_source("figure_formats") == ParameterSource.COMMANDLINE:
        raise click.UsageError("--figures needs --out (the folder the figures go to)")
    rows = load_rows(runs)
    data = build_report(rows)
    # The snapshots' quality evidence (review verdicts included), for those in this workspace.
    evidence = quality_of_snapshots([r.snapshot for r in rows], get_ctx().workspace)
    data["quality"] = {k: v.model_dump(mode="json") for k, v in evidence.items()}
    md = render_markdown(data) + render_quality_markdown(evidence)
    if out:
        folder = Path(out)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "report.md").write_text(md, encoding="utf-8")
        (folder / "report.json").write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        for p in [folder / "report.md", folder / "report.json", *write_tables(data, folder)]:
            click.echo(f"wrote {p}", err=True)
        if plots:
            for p in plot_report(data, folder, formats):
                click.echo(f"wrote {p}", err=True)
    if want_json(json_out):
        echo_json(data)
    else:
        click.echo(md, nl=False)
