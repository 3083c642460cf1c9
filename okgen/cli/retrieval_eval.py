"""``okgen retrieval-eval``: compare retrievers by hit rate@k and MRR@k per news window."""

from __future__ import annotations

from pathlib import Path

import click

from okgen.cli.common import echo_json, get_ctx, json_option, note, split_list, want_json, warn
from okgen.errors import OkgenError


@click.command("retrieval-eval")
@click.option("--signature", "ref", required=True, help="Snapshot: signature (long or short), content hash, folder or archive.")
@click.option("--retrievers", default="bm25,dpr,colbert", show_default=True,
              help="Comma-separated spec names (retrievers/*.toml) or paths to .toml specs.")
@click.option("--windows", default="1,5,10", show_default=True, help="Comma-separated window lengths in days.")
@click.option("--k", "ks", default="1,3,5,10", show_default=True, help="Comma-separated cut-offs.")
@click.option("--with-choices", is_flag=True, help="Append the answer choices to each query.")
@click.option("--no-build", is_flag=True, help="Use existing indexes only (a missing one is an error in its cell).")
@click.option("--out", type=click.Path(file_okay=False), default=None,
              help="Folder for retrieval.json/.md/.png (default: data/runs/retrieval-eval/<date>_<hash>_<time>).")
@click.option("--no-plot", is_flag=True, help="Skip the PNG plot.")
@json_option
def retrieval_eval(ref: str, retrievers: str, windows: str, ks: str, with_choices: bool, no_build: bool,
                   out: str | None, no_plot: bool, json_out: bool) -> None:
    """Compare retrievers on a snapshot: hit rate@k (gold article in the top k) and MRR@k.

    Prints the Markdown table (or JSON with --json) and writes JSON, Markdown and a PNG plot
    of hit rate against k per window. Indexes are built when missing and reused otherwise.
    A retriever or window that fails is reported in its cell; the exit status is 1 only when
    every cell failed.

    Example: okgen retrieval-eval --signature SIG --retrievers bm25,dpr,colbert --windows 1,5,10 --k 1,3,5,10
    """
    from okgen.retrieval.evaluate import compare_retrievers, parse_int_list
    from okgen.retrieval.specs import find_spec_file
    from okgen.retrieval.windows import plural
    from okgen.schema import utcnow
    from okgen.snapshot.store import resolve

    ws = get_ctx().workspace
    from okgen.errors import ConfigError

    try:
        wins, cutoffs = parse_int_list(windows, "--windows"), parse_int_list(ks, "--k")
    except ConfigError as e:  # the command line is wrong: a usage error (exit 2)
        raise click.UsageError(str(e)) from None
    names = split_list(retrievers, "--retrievers")
    for name in names:  # a misspelt name is one line before any work, not a run of failed cells
        find_spec_file(name, ws)
    snap = resolve(ref, ws)
    report = compare_retrievers(snap, ws, names, wins, cutoffs, with_choices=with_choices,
                                build=not no_build)
    if out is None:
        stamp = utcnow().strftime("%Y%m%dT%H%M%SZ")
        folder = ws.runs_dir / "retrieval-eval" / f"{snap.manifest.date}_{snap.manifest.content_hash[:12]}_{stamp}"
    else:
        folder = Path(out)
    for cov in report.coverage.values():
        if cov.short:
            warn(f"okgen: warning: {cov.warning()}")
    for c in report.cells:
        if c.encoded_units is not None:
            queries = "" if c.encoded_queries is None else \
                f"; {plural(c.encoded_queries, 'query', 'queries')} encoded, {c.reused_queries} reused"
            note(f"okgen: {c.retriever}, {c.window}-day window: {c.passages_text()}{queries}")
    paths = report.save(folder, plot=not no_plot)
    note(f"okgen: wrote {', '.join(str(p) for p in paths.values())}")
    if want_json(json_out):
        data = report.to_dict()
        data["files"] = {k: str(v) for k, v in paths.items()}
        echo_json(data)
    else:
        click.echo(report.to_markdown())
    if all(c.error for c in report.cells):
        raise OkgenError(f"every retriever x window failed (first: {report.cells[0].error})")
