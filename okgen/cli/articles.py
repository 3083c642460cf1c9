"""``okgen articles``: list and show stored articles.

Examples::

    okgen articles ls --date 2024-05-01
    okgen articles ls --date 2024-05-01 --source bbc --json
    okgen articles show 3f2a9c01d4e5b6a7
    okgen articles dropped --date 2024-05-01
"""

from __future__ import annotations

from typing import Any

import click

from okgen.cli.common import echo_json, echo_kv, echo_table, get_ctx, json_option, want_json
from okgen.cli.ingest import parse_date


@click.group("articles")
def articles() -> None:
    """List and show stored articles, and the entries that did not become one."""


@articles.command("ls")
@click.option("--date", "date_str", default="today", show_default=True, metavar="DATE",
              help="News date (YYYY-MM-DD, today, yesterday).")
@click.option("--source", default=None, help="Only this outlet id.")
@click.option("--limit", type=click.IntRange(1), default=None, help="Show at most this many.")
@json_option
def ls(date_str: str, source: str | None, limit: int | None, json_out: bool) -> None:
    """List the articles stored for a date, oldest first."""
    from okgen.ingest.config import config_for
    from okgen.ingest.store import ArticleStore

    ws = get_ctx().workspace
    cfg = config_for(ws)
    date = parse_date(date_str, cfg.timezone)
    every = []
    if ws.db_path.exists():
        with ArticleStore(ws.db_path) as store:
            every = store.articles_for_date(date)
    matching = [a for a in every if source is None or a.source == source]
    found = matching[:limit] if limit else matching
    if want_json(json_out):
        echo_json([{k: v for k, v in a.model_dump(mode="json").items() if k != "text"} | {"words": len(a.text.split())}
                   for a in found])
        return
    if not found:
        known = sorted({a.source for a in every})
        hint = (f"; outlets stored that day: {', '.join(known)}" if source and known else " (okgen ingest fetches them)")
        click.echo(f"no articles stored for {date}" + (f" from {source}" if source else "") + hint, err=True)
        return
    rows = [{"id": a.id, "source": a.source, "published": _time(a, cfg.tz), "from": a.date_source,
             "words": len(a.text.split()), "title": a.title if len(a.title) <= 80 else a.title[:79] + "…"} for a in found]
    count = f"{len(found)} of {len(matching)}" if len(found) < len(matching) else f"{len(found)}"
    echo_table(rows, ["id", "source", "published", "from", "words", "title"],
               title=f"{count} articles, {date} (times in {cfg.timezone})")


@articles.command("dropped")
@click.option("--date", "date_str", default="today", show_default=True, metavar="DATE",
              help="News date (YYYY-MM-DD, today, yesterday).")
@click.option("--source", default=None, help="Only this outlet id.")
@json_option
def dropped(date_str: str, source: str | None, json_out: bool) -> None:
    """List the date's feed entries that did not become articles, with why: failed fetches
    (http_404, robots, timeout...), filters (out_of_window, paywall...), duplicates (and of which
    article), caps.

    Example: okgen articles dropped --date 2026-11-30
    """
    from okgen.ingest.config import config_for
    from okgen.ingest.store import ArticleStore

    ws = get_ctx().workspace
    date = parse_date(date_str, config_for(ws).timezone)
    items = []
    if ws.db_path.exists():
        with ArticleStore(ws.db_path) as store:
            items = [r for r in store.dropped_items(date) if source is None or r["outlet"] == source]
    if want_json(json_out):
        echo_json(items)
        return
    if not items:
        click.echo(f"no dropped entries for {date}" + (f" from {source}" if source else ""), err=True)
        return
    rows = [{"status": r["status"], "reason": r["reason"] or "", "source": r["outlet"], "url": r["url"],
             "copy of": r["dup_of"] or ""} for r in items]
    echo_table(rows, ["status", "reason", "source", "url", "copy of"], title=f"{len(items)} dropped entries, {date}")


def _time(a: Any, tz: Any) -> str:
    """The publication time in the news timezone, or "-" for a dump that gave only the day
    (imported at midnight)."""
    t = a.published_at.astimezone(tz)
    return "-" if a.date_source == "import" and (t.hour, t.minute, t.second) == (0, 0, 0) else t.strftime("%H:%M")


@articles.command("show")
@click.argument("article_id")
@click.option("--no-text", is_flag=True, help="Only the metadata.")
@json_option
def show(article_id: str, no_text: bool, json_out: bool) -> None:
    """Show one article: metadata and text. ARTICLE_ID may be a unique prefix."""
    from okgen.errors import NotFoundError
    from okgen.ingest.store import ArticleStore

    ws = get_ctx().workspace
    if not ws.db_path.exists():
        raise NotFoundError(f"no article {article_id!r}: {ws.home} has no article store")
    with ArticleStore(ws.db_path) as store:
        art = store.get(article_id)
        if art is None:
            ids = store.find(article_id)
            if len(ids) > 1:
                raise NotFoundError(f"{article_id!r} is ambiguous: {', '.join(ids[:5])}")
            art = store.get(ids[0]) if ids else None
    if art is None:
        raise NotFoundError(f"no article {article_id!r} (okgen articles ls --date D lists them)")
    data = art.model_dump(mode="json")
    if no_text:
        data.pop("text")
    if want_json(json_out):
        echo_json(data)
        return
    echo_kv([(k, v) for k, v in data.items() if k != "text"] + [("words", len(art.text.split()))])
    if not no_text:
        click.echo("")
        click.echo(art.text)
