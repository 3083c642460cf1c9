"""``okgen export``: a snapshot as an lm-eval task, a Hugging Face datasets folder or inspect_ai JSONL."""

from __future__ import annotations

import click

from okgen.cli.common import echo_json, get_ctx, json_option, want_json


@click.command("export")
@click.option("--signature", "-s", "ref", required=True, help="Snapshot: signature, short form, hash, folder or archive.")
@click.option("--format", "fmt", type=click.Choice(["lm-eval", "hf", "inspect"]), required=True,
              help="lm-eval: task YAML + data; hf: parquet + dataset card; inspect: inspect_ai JSONL.")
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Folder to write into.")
@click.option("--setting", type=click.Choice(["none", "oracle", "retrieval"]), default="none", show_default=True,
              help="oracle: put the source article in the prompt; retrieval: the top-k passages, as okgen eval gives them.")
@click.option("--retriever", default=None, help="Retriever of the retrieval setting (default bm25).")
@click.option("--window", type=click.IntRange(min=1), default=None,
              help="News window in days of the retrieval setting (default: the snapshot's longest).")
@click.option("--k", type=click.IntRange(min=1), default=None, help="Passages per question of the retrieval setting (default 5).")
@json_option
def export(ref: str, fmt: str, out: str, setting: str, retriever: str | None, window: int | None, k: int | None,
           json_out: bool) -> None:
    """Export a verified snapshot for lm-evaluation-harness, Hugging Face datasets or inspect_ai.

    \b
      okgen export -s 9ea10582e33a --format lm-eval --out exports/lm-eval
      lm_eval --model hf --model_args pretrained=Qwen/Qwen2.5-0.5B --include_path exports/lm-eval \\
          --tasks okgen_2026_03_14_9ea10582
      okgen export -s 9ea10582e33a --format lm-eval --out exports/lm-eval --setting retrieval --retriever bm25 --window 1 --k 5
    """
    from okgen.errors import IntegrityError
    from okgen.eval.export import export_snapshot, read_export_manifest
    from okgen.signature import expected_snapshot
    from okgen.snapshot.store import resolve
    from okgen.snapshot.verify import verify_folder

    snap = resolve(ref, get_ctx().workspace)
    report = verify_folder(snap.path, expected_snapshot(ref, snap.signature))
    if not report.ok:
        raise IntegrityError(f"snapshot {snap.name} failed verification (first: {report.problems[0]}); not exporting it")
    files = export_snapshot(snap, fmt, out, setting, retriever=retriever, window=window, k=k, workspace=get_ctx().workspace)
    if want_json(json_out):
        echo_json({"task": read_export_manifest(out)["task"], "format": fmt, "files": [str(f) for f in files]})
        return
    for f in files:
        click.echo(str(f))
