"""``okgen ingest``: fetch the day's feeds and articles into the article store.

Examples::

    okgen ingest --date 2024-05-01
    okgen ingest --date yesterday --feeds my-feeds.opml
    okgen ingest --date 2024-05-01 --replay data/warc/okgen-2024-05-01.warc.gz
    okgen ingest --date 2024-05-01 --import dump.jsonl --map title=headline --map text=body
"""

from __future__ import annotations

import datetime as dt

import click
from click.core import ParameterSource

from okgen.cli.common import echo_json, echo_kv, get_ctx, json_option, progress_enabled, want_json


def parse_date(value: str | None, tz_name: str = "UTC", hint: str = "--date") -> dt.date:
    """``YYYY-MM-DD``, ``today`` or ``yesterday`` (in the news timezone) as a date.

    Raises:
        click.BadParameter: anything else (usage error, exit 2).
    """
    from zoneinfo import ZoneInfo

    if value is not None and not value.strip():  # `--date "$D"` with D unset: not today by accident
        raise click.BadParameter("is empty (YYYY-MM-DD, today or yesterday)", param_hint=hint)
    v = (value or "today").strip().lower()
    today = dt.datetime.now(ZoneInfo(tz_name)).date()
    if v == "today":
        return today
    if v == "yesterday":
        return today - dt.timedelta(days=1)
    try:
        return dt.date.fromisoformat(v)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a date (YYYY-MM-DD, today or yesterday)", param_hint=hint) from None


def _check_date(date: dt.date, tz_name: str, replay: str | None, import_file: str | None) -> None:
    """A live run of a day that has not begun is refused (a typo such as 2027 for 2026 stored
    nothing and said nothing); a replay or import of one, or a capture named after another day
    than --date, gets a warning."""
    import logging
    import re
    from pathlib import Path
    from zoneinfo import ZoneInfo

    log = logging.getLogger("okgen.ingest")
    today = dt.datetime.now(ZoneInfo(tz_name)).date()
    if date > today:
        if not replay and not import_file:
            raise click.BadParameter(f"{date} is after today ({today} in {tz_name}): there is no news of it yet",
                                     param_hint="--date")
        log.warning("--date %s is after today (%s in %s)", date, today, tz_name)
    if replay and (m := re.search(r"okgen-(\d{4}-\d{2}-\d{2})\.warc", Path(replay).name)) and m.group(1) != str(date):
        log.warning("%s is named as the capture of %s, and --date is %s: only that day's entries are replayed; "
                    "pages the capture lacks come out as not_in_archive", Path(replay).name, m.group(1), date)


@click.command("ingest")
@click.option("--date", "date_str", default="today", show_default=True, metavar="DATE",
              help="News date D (YYYY-MM-DD, today, yesterday) in the configured timezone.")
@click.option("--feeds", type=click.Path(dir_okay=False), default=None,
              help="Feed list, TOML or OPML (default: the packaged OKBench outlets).")
@click.option("--replay", type=click.Path(dir_okay=False), default=None,
              help="Rebuild the articles from this WARC file, without the network.")
@click.option("--import", "import_file", type=click.Path(dir_okay=False), default=None,
              help="Load a JSON or JSONL news dump instead of fetching.")
@click.option("--map", "mappings", multiple=True, metavar="FIELD=KEY",
              help="Import field mapping, e.g. --map title=headline --map date=meta.published (repeatable).")
@click.option("--allow-net", multiple=True, metavar="NET",
              help="Also fetch from loopback, private, link-local or a CIDR (repeatable; refused by default).")
@click.option("--concurrency", type=click.IntRange(1, 1024), default=None, help="Requests in flight (all hosts).")
@click.option("--workers", type=click.IntRange(0, 256), default=None, help="Extraction processes (0: one per CPU).")
@json_option
def ingest(date_str: str, feeds: str | None, replay: str | None, import_file: str | None, mappings: tuple[str, ...],
           allow_net: tuple[str, ...], concurrency: int | None, workers: int | None, json_out: bool) -> None:
    """Fetch the day's feeds and articles into the article store.

    Reads every feed of the list, keeps entries published on DATE, fetches their pages politely,
    extracts the text with trafilatura, filters and deduplicates, and stores the articles in
    data/okgen.sqlite; every response is captured in data/warc/okgen-DATE.warc.gz. Rerunning
    resumes: what is stored is skipped. Prints a summary of every stage.
    """
    from okgen.errors import ConfigError
    from okgen.ingest.config import config_for
    from okgen.ingest.importer import parse_mapping_options
    from okgen.ingest.pipeline import IngestError, run_ingest

    ctx = get_ctx()
    ws = ctx.workspace
    sources = [flag for flag, v in (("--feeds", feeds), ("--replay", replay), ("--import", import_file)) if v]
    if replay and import_file:
        raise click.UsageError("give one of --replay and --import")
    if mappings and not import_file:
        raise click.UsageError(f"--map applies to --import only (got {', '.join(sources) or 'a live run'})")
    try:
        mapping = parse_mapping_options(mappings) if mappings else None
    except ConfigError as e:
        raise click.BadParameter(str(e), param_hint="--map") from None
    overrides: dict = {"concurrency": concurrency, "extract_workers": workers}
    base = config_for(ws)
    if allow_net:
        import ipaddress

        from okgen.ingest.config import NETWORK_KEYWORDS

        for net in allow_net:
            try:
                if net not in NETWORK_KEYWORDS:
                    ipaddress.ip_network(net, strict=False)
            except ValueError:
                raise click.BadParameter(f"{net!r} is neither one of {', '.join(NETWORK_KEYWORDS)} nor a CIDR",
                                         param_hint="--allow-net") from None
        overrides["allow_networks"] = tuple(dict.fromkeys((*base.allow_networks, *allow_net)))
    cfg = config_for(ws, **overrides)
    date = parse_date(date_str, cfg.timezone)
    _check_date(date, cfg.timezone, replay, import_file)
    # Undated records of a dump take --date only when it was given: today's date is no statement
    # about an old dump (its articles would be stored as today's news).
    date_given = click.get_current_context().get_parameter_source("date_str") != ParameterSource.DEFAULT
    try:
        summary = run_ingest(date, ws, feeds=feeds, replay=replay, import_file=import_file, import_mapping=mapping,
                             config=cfg, progress=progress_enabled(), undated_on_date=date_given)
    except IngestError as e:
        if e.summary is not None:
            _render(e.summary, want_json(json_out))
        raise
    _render(summary, want_json(json_out))


def _render(summary, as_json: bool) -> None:
    if as_json:
        echo_json(summary.to_dict())
    else:
        echo_kv(summary.rows())
