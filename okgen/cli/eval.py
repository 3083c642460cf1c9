"""``okgen eval``: score a model on a snapshot in one or more settings."""

from __future__ import annotations

import click
from click.core import ParameterSource

from okgen.cli.common import echo_json, echo_table, get_ctx, json_option, split_list, want_json
from okgen.errors import ConfigError
from okgen.eval.scoring import SCORINGS


def _ints(value: str | None, name: str) -> list[int]:
    items = split_list(value, f"--{name}")
    try:
        return [int(x) for x in items]
    except ValueError:
        raise click.BadParameter(f"takes integers (comma-separated), got {value!r}", param_hint=f"--{name}") from None


@click.command("eval")
@click.option("--signature", "-s", "ref", default=None,
              help="Snapshot: signature (long or short), content hash, folder or .tar.gz archive.")
@click.option("--series", "series_ref", default=None,
              help="Score every snapshot of a series instead (name or series signature); the model is loaded once.")
@click.option("--stream", "stream_ref", default=None,
              help="Score a stream instead: every question at every interval (settings none, full, window:W, retrieval:R, "
                   "ctx:closest, ctx:latest, ctx:cumulative).")
@click.option("--model", "-m", required=True, help="Model spec backend/model[,key=value...], e.g. hf/Qwen/Qwen2.5-0.5B-Instruct.")
@click.option("--setting", default="none", show_default=True,
              help="none, oracle, retrieval, ctx:closest, ctx:latest or ctx:cumulative; comma-separated to run several with one loaded model.")
@click.option("--retriever", default="bm25", show_default=True, help="Retriever(s) for the retrieval setting, comma-separated.")
@click.option("--window", default=None, help="News window(s) in days, comma-separated (default: the snapshot's longest).")
@click.option("--k", "ks", default="5", show_default=True, help="Passages given, comma-separated (e.g. 1,5,10).")
@click.option("--scoring", type=click.Choice(SCORINGS), default="loglik", show_default=True,
              help="loglik: letter log-probability in one pass; loglik-full/-norm: each choice's text (lm-eval acc/acc_norm); generate: parse a written answer.")
@click.option("--format", "fmt", type=click.Choice(["mc", "open"]), default="mc", show_default=True,
              help="mc: multiple choice; open: short answer (always scored by generation).")
@click.option("--template", default=None, help="Prompt template (default: mc-v1 / open-v1).")
@click.option("--judge", default=None, help="LLM judge of open-answer misses: a model spec (openai/MODEL[,base_url=...], hf/PATH, vllm/ID) or 'default'.")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Score only the first N questions.")
@click.option("--seed", type=int, default=0, show_default=True, help="Evaluation seed (sampling, bootstrap).")
@click.option("--temperature", type=click.FloatRange(min=0), default=0.0, show_default=True, help="Generation temperature (0: greedy).")
@click.option("--max-tokens", type=click.IntRange(min=1), default=None, help="Answer token limit for generation (default 32 mc, 100 open).")
@click.option("--batch", "chunk", type=click.IntRange(min=1), default=64, show_default=True,
              help="Questions per backend batch; predictions are saved after each.")
@click.option("--out", type=click.Path(file_okay=False), default=None,
              help="Run folder (one run) or parent of run folders (default: data/runs/<snapshot>/<model>/).")
@click.option("--overwrite", is_flag=True, help="Start again instead of resuming an existing run folder.")
@click.option("--context-chars", type=click.IntRange(min=1), default=None,
              help="--stream only: characters of documents a prompt may hold (default 6000; the newest kept). "
                   "Raise it for a long-context model, or 'full' reads only the newest day of a real news stream.")
@json_option
def eval_cmd(ref: str | None, series_ref: str | None, stream_ref: str | None, model: str, setting: str, retriever: str, window: str | None, ks: str, scoring: str, fmt: str,
             template: str | None, judge: str | None, limit: int | None, seed: int, temperature: float,
             max_tokens: int | None, chunk: int, out: str | None, overwrite: bool, context_chars: int | None,
             json_out: bool) -> None:
    """Score a model on a snapshot: accuracy with a 95% CI, by source and answer position.

    Writes predictions.jsonl (resumable) and results.json per run. Examples:

    \b
      okgen eval -s 9ea10582e33a -m hf/Qwen/Qwen2.5-0.5B-Instruct --setting none,oracle
      okgen eval -s SIG -m vllm/meta-llama/Llama-3.1-8B-Instruct,tensor_parallel_size=2 \\
          --setting retrieval --retriever bm25 --window 1,5,10 --k 1,5,10
      okgen eval -s SIG -m openai/gpt-4.1-mini --scoring generate --format open --judge default
      okgen eval --series april -m hf/HuggingFaceTB/SmolLM2-135M-Instruct --setting none,oracle
      okgen eval --stream april-facts -m hf/HuggingFaceTB/SmolLM2-135M-Instruct --setting none,full,window:1
      okgen eval --stream april-facts -m hf/PATH --setting ctx:closest,ctx:latest,ctx:cumulative
    """
    from okgen.eval.runner import EvalOptions, plan_runs, run_eval

    ws = get_ctx().workspace
    if stream_ref is not None:
        if ref is not None or series_ref is not None:
            raise click.UsageError("give only one of --signature, --series and --stream")
        from okgen.cli.stream_eval import echo_stream_eval

        echo_stream_eval(stream_ref, model, split_list(setting, "--setting"), limit, out, want_json(json_out), overwrite,
                         context_chars=context_chars)
        return
    if context_chars is not None:
        raise click.UsageError("--context-chars is for --stream runs (a snapshot's contexts follow the model's window)")
    if (ref is None) == (series_ref is None):
        raise click.UsageError("give exactly one of --signature and --series")
    if series_ref is not None:
        ref = ""
    given = _eval_signature(ref)
    if given is not None:  # reproduce a reported score: its settings unless overridden
        ctx = click.get_current_context()
        dflt = {name for name in ctx.params if ctx.get_parameter_source(name) == ParameterSource.DEFAULT}
        fill = {"setting": given.setting, "scoring": given.scoring, "fmt": given.answer_format, "seed": given.eval_seed,
                "temperature": given.eval_temperature, "template": given.template.split("+")[0]}
        if given.setting == "retrieval":
            fill.update(retriever=given.retriever, window=str(given.ret_window), ks=str(given.k))
        if given.scoring == "generate":
            fill["max_tokens"] = given.eval_max_tokens
        if given.limit is not None:
            fill["limit"] = given.limit
        for name, value in fill.items():
            if name in dflt:
                ctx.params[name] = value
        setting, scoring, fmt, seed = ctx.params["setting"], ctx.params["scoring"], ctx.params["fmt"], ctx.params["seed"]
        temperature, template, limit = ctx.params["temperature"], ctx.params["template"], ctx.params["limit"]
        retriever, window, ks, max_tokens = ctx.params["retriever"], ctx.params["window"], ctx.params["ks"], ctx.params["max_tokens"]
        if given.judge != "none" and not judge:
            raise ConfigError(f"the signature was judged by {given.judge}: give --judge openai/MODEL[,base_url=...]")
    if fmt == "open" and scoring == "loglik":
        if click.get_current_context().get_parameter_source("scoring") == ParameterSource.COMMANDLINE:
            raise click.UsageError("--format open is scored by generation: use --scoring generate (or leave it out)")
        scoring = "generate"  # the open format is always generated
    if "retrieval" not in split_list(setting, "--setting"):
        ctx = click.get_current_context()
        stray = [f"--{flag}" for flag, name in (("retriever", "retriever"), ("window", "window"), ("k", "ks"))
                 if ctx.get_parameter_source(name) == ParameterSource.COMMANDLINE]
        if stray:  # silently ignoring them would report a run the user did not ask for
            verb = "applies" if len(stray) == 1 else "apply"
            raise click.UsageError(f"{', '.join(stray)} {verb} to --setting retrieval only (got --setting {setting})")
    try:
        runs = plan_runs(split_list(setting, "--setting"), split_list(retriever, "--retriever") or ["bm25"], _ints(window, "window"), _ints(ks, "k") or [5])
    except ConfigError as e:  # an unknown setting, k or window below 1: the command line is wrong
        raise click.UsageError(str(e)) from None
    opts = EvalOptions(scoring=scoring, fmt=fmt, template=template, limit=limit, seed=seed, temperature=temperature,
                       max_tokens=max_tokens, judge=judge, chunk_size=chunk, overwrite=overwrite)
    if series_ref is not None:
        from okgen.cli.timeline import echo_series_eval

        echo_series_eval(series_ref, model, runs, opts, ws, out, want_json(json_out))
        return
    outcomes = run_eval(ref, model, runs, opts, workspace=ws, out=out)
    if want_json(json_out):
        echo_json([{"path": str(o.path), "scored_now": o.scored_now, "resumed": o.resumed,
                    **o.record.model_dump(mode="json")} for o in outcomes])
        return
    rows = []
    for o in outcomes:
        r = o.record
        run = r.extra.get("run", {})
        rows.append({
            "setting": run.get("setting"), "retriever": run.get("retriever") or "", "window": run.get("window") or "",
            "k": run.get("k") or "", "n": r.n, "accuracy": f"{r.accuracy:.4f}", "95% CI": f"[{r.ci95[0]:.3f}, {r.ci95[1]:.3f}]",
            "unparsed": r.unparsed, "errors": r.errors, "truncated": r.truncated,
            "q/s": r.timings.get("questions_per_second", ""), "run": o.path.name,
        })
    echo_table(rows, title=f"model: {outcomes[0].record.model}" if outcomes else None)
    for o in outcomes:  # the dated-context runs (ctx:*): how often the model took a stale or a future answer
        d = o.record.extra.get("dated")
        run = o.record.extra.get("run", {})
        if run.get("setting") == "retrieval" and d and d.get("stale_answer_rate") is None \
                and d.get("future_answer_rate") is None:
            continue  # no retrieved context offered a stale or a future answer: nothing to say
        if d:
            from okgen.eval.tables import setting_label

            label = setting_label({**run, "setting": run.get("setting") or ""}) if run.get("setting") else "?"
            click.echo(f"{label}: stale-answer rate "
                       f"{_rate(d, 'stale_answer_rate', 'with_stale_choice')}, future-answer rate "
                       f"{_rate(d, 'future_answer_rate', 'with_future_choice')}, gold article among the retrieved "
                       f"{'-' if d.get('gold_in_context') is None else format(d['gold_in_context'], '.3f')}")
    if outcomes:
        click.echo(f"runs in {outcomes[0].path.parent}" if len(outcomes) > 1 else f"run in {outcomes[0].path}", err=True)
    for o in outcomes:
        click.echo(f"{o.record.model} | {o.record.signature}")
    if given is not None and len(outcomes) == 1 and outcomes[0].record.signature != given.format():
        from okgen.signature import EvalSignature

        got = EvalSignature.parse(outcomes[0].record.signature)
        diff = [f"{r['key']}: {r['value']} (given {g['value']})" for r, g in zip(got.explain(), given.explain())
                if r["value"] != g["value"]]
        click.echo(f"note: the signature differs from the one given: {'; '.join(diff)}", err=True)


def _rate(d: dict, key: str, n_key: str) -> str:
    return "-" if d.get(key) is None else f"{d[key]:.3f} (of {d.get(n_key, 0)} with one)"


def _eval_signature(ref: str):
    from okgen.errors import OkgenError
    from okgen.signature import EvalSignature, looks_like_signature, parse_any

    if not looks_like_signature(ref):
        return None
    try:
        sig = parse_any(ref)
    except OkgenError:
        return None
    return sig if isinstance(sig, EvalSignature) else None
