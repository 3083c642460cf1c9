"""``okgen facts``: extract and show the dated facts of a news day."""

from __future__ import annotations

import click

from okgen.cli.common import echo_json, echo_table, get_ctx, json_option, want_json
from okgen.cli.series import _date


@click.group()
def facts() -> None:
    """Extract and show dated facts (office holders, death tolls, prices, ...) of a news day."""


@facts.command("extract")
@click.option("--date", "date_", required=True, help="News date (YYYY-MM-DD) of the articles to read.")
@click.option("--extractor", default=None, metavar="SPEC",
              help="rules (default: rules-v1 over the spaCy parse) or a model spec: openai/NAME[,base_url=URL,...], "
                   "hf/PATH, vllm/ID (llm-v1: the facts agent, every fact checked against its article).")
@click.option("--pipeline", default=None, help="spaCy pipeline of rules-v1 (default: the generator's, en_core_web_sm).")
@click.option("--max-cost", type=click.FloatRange(min=0), default=None, metavar="USD",
              help="Budget of the LLM extractor's calls (needs a price for the model).")
@click.option("--no-cache", is_flag=True, help="Neither read nor write the LLM response cache.")
@click.option("--concurrency", type=click.IntRange(1, 1024), default=8, show_default=True,
              help="LLM calls in flight at once.")
@json_option
def extract(date_: str, extractor: str | None, pipeline: str | None, max_cost: float | None, no_cache: bool,
            concurrency: int, json_out: bool) -> None:
    """Extract the facts of the day's articles into data/facts/DATE.json.

    Examples:

      okgen facts extract --date 2025-04-11

      okgen facts extract --date 2025-04-11 --extractor openai/gpt-4.1-mini --max-cost 1
    """
    from okgen.facts.extract import extract_day, facts_path, make_extractor, relation_counts

    ws = get_ctx().workspace
    d = _date(date_, "--date")
    ex = make_extractor(extractor, ws, pipeline=pipeline, max_cost=max_cost, use_cache=not no_cache,
                        concurrency=concurrency)
    try:
        ff = extract_day(ws, d, extractor=ex)
    finally:
        ex.close()
    counts = relation_counts(ff.facts)
    funnel = {k: v for k, v in (ff.funnel or {}).items() if k != "drops"}
    if want_json(json_out):
        echo_json({"date": str(d), "extractor": ff.extractor, "articles": ff.articles, "facts": len(ff.facts),
                   "by_relation": counts, "path": str(facts_path(ws, d)), **({"funnel": funnel} if funnel else {})})
        return
    click.echo(f"{d}: {len(ff.facts)} fact(s) from {ff.articles} article(s) by {ff.extractor}", err=True)
    if funnel:
        a = funnel["articles"]
        click.echo(f"articles read {a['read']} of {a['total']}" + "".join(f", failed {k} {v}" for k, v in a["failed"].items())
                   + f"; facts proposed {funnel['proposed']}, kept {funnel['kept']}"
                   + "".join(f", dropped {k} {v}" for k, v in funnel["dropped"].items()), err=True)
    echo_table([{"relation": k, "facts": v} for k, v in counts.items()])
    click.echo(str(facts_path(ws, d)))


@facts.command("show")
@click.option("--date", "date_", required=True, help="News date (YYYY-MM-DD).")
@click.option("--relation", default=None, help="Only this relation.")
@json_option
def show(date_: str, relation: str | None, json_out: bool) -> None:
    """Show the extracted facts of a day.

    Example: okgen facts show --date 2025-04-11 --relation tariff_rate
    """
    from okgen.errors import ConfigError
    from okgen.facts.extract import read_facts
    from okgen.facts.records import RELATIONS

    if relation is not None and relation not in RELATIONS:
        raise ConfigError(f"unknown relation {relation!r} (known: {', '.join(RELATIONS)})")
    ff = read_facts(get_ctx().workspace, _date(date_, "--date"))
    rows = [f for f in ff.facts if relation is None or f.relation == relation]
    if want_json(json_out):
        echo_json([f.model_dump(mode="json") for f in rows])
        return
    echo_table([{"relation": f.relation, "subject": f.subject, "object": f.object, "outlet": f.outlet,
                 "valid_from": f.valid_from or "", "past": "yes" if f.past else "", "article": f.article_id[:8]}
                for f in rows])
