"""``okgen generate``: write, check, validate and probe questions for one date's articles."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path
from typing import Any

import click

from okgen.cli.common import echo_json, get_ctx, json_option, progress_enabled, want_json


class _Date(click.ParamType):
    """A date, or ``today`` / ``yesterday`` (kept as words: resolved in the news timezone)."""

    name = "DATE"

    def convert(self, value: Any, param: Any, ctx: Any) -> dt.date | str:
        if isinstance(value, dt.date):
            return value
        text = str(value).strip().lower()
        if text in ("today", "yesterday"):
            return text
        try:
            return dt.date.fromisoformat(text)
        except ValueError:
            self.fail(f"{value!r} is not a date (YYYY-MM-DD, today or yesterday)", param, ctx)


@click.command("generate")
@click.option("--date", "date", type=_Date(), required=True, help="News date (YYYY-MM-DD, today, yesterday).")
@click.option("--generator", default=None, metavar="SPEC",
              help="extractive (offline, the default), openai/MODEL[,base_url=URL,key=value...], hf/PATH[,...] (in-process) or vllm/ID.")
@click.option("--validator", default=None, metavar="SPEC", help="A model spec (openai/MODEL[,...], hf/PATH, vllm/ID) or none (the default).")
@click.option("--probe", "probes", multiple=True, metavar="SPEC",
              help="Freshness probe model spec (openai/MODEL..., hf/PATH, vllm/ID); repeat for several.")
@click.option("--drop-known/--flag-known", default=None,
              help="Drop questions every probe answers correctly, or only flag them (default: the probe spec); "
                   "needs --probe or [generate] probes.")
@click.option("--per-article", type=click.IntRange(1, 50), default=None, help="Questions per article (default 5).")
@click.option("--concurrency", type=click.IntRange(1, 1024), default=None,
              help="LLM calls in flight at once (default 16, or [generate] concurrency).")
@click.option("--max-cost", type=click.FloatRange(min=0), default=None, metavar="USD",
              help="Stop cleanly once this many USD are spent (finished articles are kept; "
                   "default: [generate] max_cost, else no limit).")
@click.option("--no-cache", is_flag=True, help="Neither read nor write the LLM response cache.")
@click.option("--seed", type=int, default=None, help="Snapshot seed (default 1234, or [generate] seed).")
@click.option("--articles", "articles_file", type=click.Path(exists=True, dir_okay=False),
              help="Read articles from a JSONL file instead of the article store.")
@click.option("--agents", "agents_dir", type=click.Path(exists=True, file_okay=False),
              help="Agents folder (default: [generate] agents_dir, else <workspace>/agents, else the packaged specs).")
@click.option("--prices", multiple=True, type=click.Path(exists=True, dir_okay=False),
              help="Extra price table (TOML, [prices.\"model\"] input/output per 1M tokens).")
@click.option("--fresh", is_flag=True, help="Forget this run's finished articles and generate again.")
@click.option("--out", type=click.Path(dir_okay=False), help="Also write the kept questions as JSONL.")
@json_option
def generate(date: dt.date | str, generator: str | None, validator: str | None, probes: tuple[str, ...],
             drop_known: bool | None, per_article: int | None, concurrency: int | None, max_cost: float | None,
             no_cache: bool, seed: int | None, articles_file: str | None, agents_dir: str | None,
             prices: tuple[str, ...], fresh: bool, out: str | None, json_out: bool) -> None:
    """Write and validate questions for a date's articles.

    Finished articles are stored as they complete, so an interrupted run resumes where it
    stopped and a finished date is answered from the store. The funnel (counts at every
    stage, tokens and cost) is printed at the end.

    \b
    Examples:
      okgen generate --date 2026-11-21
      okgen generate --date 2026-11-21 --generator openai/gpt-4.1-mini --validator openai/gpt-4.1 --max-cost 5
      okgen generate --date 2026-11-21 --generator openai/Qwen2.5-7B-Instruct,base_url=http://127.0.0.1:8000/v1
      okgen generate --date 2026-11-21 --generator hf//data/models/SmolLM2-135M-Instruct,max_tokens=512
    """
    from okgen.daily.pipeline import check_model_specs
    from okgen.errors import BudgetExceeded, ConfigError, OkgenError
    from okgen.files import read_jsonl, write_jsonl
    from okgen.generate.funnel import cause
    from okgen.generate.pipeline import DEFAULT_PER_ARTICLE, DEFAULT_SEED, run_generate
    from okgen.schema import Article

    try:  # a malformed spec on the command line is a usage error (one in okgen.toml is a setting's: exit 1)
        check_model_specs(generator, None if validator in (None, "", "none") else validator, probes or ())
    except ConfigError as e:
        raise click.UsageError(str(e)) from None
    ws = get_ctx().workspace
    settings = ws.settings(generate=dict(generator=generator, validator=validator, probes=probes or None,
                                         per_article=per_article, concurrency=concurrency, max_cost=max_cost,
                                         seed=seed, drop_known=drop_known))
    g = settings.generate
    if drop_known is not None:  # the flag acts on probe verdicts: without a probe it would silently do nothing
        from okgen.generate.runner import is_off

        if not [p for p in (g.probes or ()) if not is_off(p)]:
            flag = "--drop-known" if drop_known else "--flag-known"
            if probes:  # --probe none turned off those of okgen.toml
                raise click.UsageError(f"{flag} acts on freshness probes, and --probe none turned them off")
            raise click.UsageError(f"{flag} acts on freshness probes, and none is set: add --probe SPEC "
                                   "(or [generate] probes in okgen.toml)")
    if isinstance(date, str):  # today / yesterday: the news day of `okgen ingest` ([ingest] timezone)
        from okgen.cli.ingest import parse_date

        date = parse_date(date, settings.ingest.timezone)
    if out:  # checked now, not after an hour of generation
        parent = Path(out).expanduser().resolve().parent
        if not parent.is_dir() or not os.access(parent, os.W_OK):
            raise OkgenError(f"--out {out}: folder {parent} does not exist or is not writable")
    articles = read_jsonl(articles_file, Article) if articles_file else None
    result = run_generate(
        date, ws, articles,
        generator=g.generator or "extractive", validator=g.validator, probes=g.probes or (),
        per_article=g.per_article or DEFAULT_PER_ARTICLE, concurrency=g.concurrency or 16, max_cost=g.max_cost,
        use_cache=not no_cache, seed=g.seed if g.seed is not None else DEFAULT_SEED,
        config=settings.model_dump(exclude_unset=True), fresh=fresh, drop_known=g.drop_known, agents_dir=agents_dir,
        prices=prices,
        progress=progress_enabled(),
    )
    if out:
        write_jsonl(out, result.questions)
    if want_json(json_out):
        echo_json({
            "date": str(result.date), "questions": len(result.questions), "complete": result.complete,
            "stopped": result.stopped, "generator": result.generator.model_dump(mode="json"),
            "validator": result.validator.model_dump(mode="json") if result.validator else None,
            "probes": [p.model_dump(mode="json") for p in result.probes], "prompt_hash": result.prompt_hash,
            "seed": result.seed, "run_key": result.run_key, "out": out, "funnel": result.funnel,
        })
    else:
        click.echo(result.render_funnel())
        if out:
            click.echo(f"wrote {len(result.questions)} questions to {out}")
    a = result.funnel["articles"]
    if result.stopped == "budget":
        spent = (result.funnel.get("usage") or {}).get("this_run_cost_usd", 0.0)
        raise BudgetExceeded(f"budget of ${g.max_cost} reached (${spent:.4f} spent by this run): "
                             f"{a['generated'] + sum(a['failed'].values())} of {a['total']} articles finished and kept; "
                             "rerun with a higher --max-cost to finish the rest")
    if not result.complete:
        reasons = ", ".join(f"{k} {v}" for k, v in a["pending_by_reason"].items())
        raise OkgenError(f"{a['pending']} of {a['total']} articles could not be processed ({reasons})"
                         f"{cause(a['pending_by_reason'], a, '; last {kind} error: {msg}')}; "
                         "finished ones are kept: rerun to retry the rest (an article left so by errors of its "
                         "own in [generate] give_up_after runs, 3 by default, is then given up)")
    if not result.questions and a["total"]:
        why = ", ".join(f"{k} {v}" for k, v in a["failed"].items()) or "every candidate was rejected"
        raise OkgenError(f"no question kept for {result.date} from {a['total']} articles: {why}"
                         f"{cause(a['failed'], a, ' ({kind}: {msg})')}; "
                         "see the funnel above, and `okgen generate --fresh` to redo the date")
