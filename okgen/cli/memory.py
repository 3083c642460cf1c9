"""``okgen memory``: dated contexts and memory agents over a series' days (see docs/memory.md)."""

from __future__ import annotations

import click

from okgen.cli.common import echo_json, get_ctx, json_option, split_list, want_json


@click.group()
def memory() -> None:
    """Compare dated contexts and memory agents on a series' days or on a stream."""


@memory.command("ls")
@json_option
def ls(json_out: bool) -> None:
    """List the memories: the built-ins and those of the okgen.memories entry points.

    Example: okgen memory ls
    """
    from okgen.memory.base import BUILTINS, known_memories

    rows = [{"name": n, "target": t, "kind": "built-in" if n in BUILTINS else "entry point"}
            for n, t in known_memories().items()]
    if want_json(json_out):
        echo_json(rows)
        return
    for r in rows:
        click.echo(f"{r['name']:<12} {r['kind']:<12} {r['target']}")


@memory.command("eval")
@click.option("--series", "series_ref", default=None, help="Series name, signature or hash prefix.")
@click.option("--stream", "stream_ref", default=None,
              help="Stream name, signature or hash prefix instead: every question asked at every interval, "
                   "with OAKS's Acc/AL/DS/PM and the transition classes.")
@click.option("--model", "-m", required=True, help="Model spec under test (loaded once).")
@click.option("--setting", default="none,ctx:closest,ctx:latest,ctx:cumulative", show_default=True,
              help="Comma-separated: none, ctx:closest, ctx:latest, ctx:cumulative, mem:NAME.")
@click.option("--memory", "memories", multiple=True,
              help="A memory with its options, repeatable: bm25, full, recent,window=2, rag-recent, "
                   "summary, ko-blind, ko-qaware, or an entry point's (mem0-rest,base_url=http://...).")
@click.option("--k", type=click.IntRange(min=1), default=5, show_default=True, help="Passages or entries a memory gives.")
@click.option("--ask", type=click.Choice(["same-day", "end"]), default="same-day", show_default=True,
              help="Ask each question on its own day, or all after the last day (retention by age).")
@click.option("--limit", type=click.IntRange(min=1), default=None,
              help="Questions per day (the first N); with --stream, the stream's first N questions.")
@click.option("--scoring", type=click.Choice(["loglik", "loglik-full", "loglik-norm"]), default="loglik", show_default=True)
@click.option("--memory-model", default=None, help="Chat model spec for memories that need one (summary), e.g. hf/PATH.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--out", type=click.Path(file_okay=False), default=None,
              help="Parent folder of the runs (default: data/runs/memory/<series>/<model>/).")
@click.option("--overwrite", is_flag=True, help="Start every setting again instead of resuming.")
@json_option
def eval_memory(series_ref: str | None, stream_ref: str | None, model: str, setting: str, memories: tuple[str, ...], k: int, ask: str, limit: int | None, scoring: str,
                memory_model: str | None, seed: int, out: str | None, overwrite: bool, json_out: bool) -> None:
    """Run each setting over a series or a stream day by day and print the comparison.

    \b
    Examples:
      okgen memory eval --series april -m hf/HuggingFaceTB/SmolLM2-135M-Instruct \\
          --setting none,ctx:closest --memory bm25 --memory recent,window=2 --memory summary --memory-model hf/PATH
      okgen memory eval --stream april-facts -m hf/PATH --memory bm25 --memory ko-blind
    """
    from okgen.memory.evaluate import (
        run_memory_eval,
        run_memory_stream_eval,
        series_markdown,
        stream_markdown,
    )
    from okgen.memory.harness import StreamOptions

    if (series_ref is None) == (stream_ref is None):
        raise click.UsageError("give exactly one of --series and --stream")
    settings = split_list(setting, "--setting") + [f"mem:{m}" for m in memories]
    opts = StreamOptions(k=k, ask=ask, limit=limit, seed=seed, scoring=scoring, overwrite=overwrite)
    if stream_ref is not None:
        if scoring != "loglik":
            raise click.UsageError("a stream is scored by the letters' log-likelihood: --scoring applies to --series only")
        res = run_memory_stream_eval(stream_ref, model, settings, opts, workspace=get_ctx().workspace, out=out,
                                     memory_model=memory_model)
    else:
        res = run_memory_eval(series_ref, model, settings, opts, workspace=get_ctx().workspace, out=out,
                              memory_model=memory_model)
    if want_json(json_out):
        echo_json(res)
        return
    if stream_ref is not None:
        click.echo(stream_markdown(res, stream_ref), nl=False)
    else:
        click.echo(series_markdown(res), nl=False)
    click.echo(f"runs in {res['path']}", err=True)
