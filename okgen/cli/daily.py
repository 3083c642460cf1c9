"""``okgen daily``: the whole chain for one date (or a range), resumable, printing the signature last."""

from __future__ import annotations

import dataclasses
import datetime as dt

import click

from okgen.cli.common import (
    echo_json,
    get_ctx,
    json_option,
    note,
    progress_enabled,
    want_json,
    warn,
)


def _date(value: str | None, hint: str) -> dt.date | None:
    from okgen.cli.ingest import parse_date

    if value is None:
        return None
    if not value.strip():  # `--date "$D"` with D unset: never silently some default day
        raise click.BadParameter("empty date (YYYY-MM-DD, today or yesterday; leave the option out for the default)",
                                 param_hint=hint)
    return parse_date(value, "UTC", hint)


def _from_command_line(name: str) -> bool:
    """Whether option ``name`` was typed on the command line (not read from OKGEN_DAILY_*: a bad
    value there is a setting's error, exit 1, named by the settings)."""
    from click.core import ParameterSource

    return click.get_current_context().get_parameter_source(name) == ParameterSource.COMMANDLINE


def _check_flags(ws, retrievers: str | None, windows: str | None) -> None:
    """Usage errors (exit 2) for bad --windows and --retrievers values, before any work."""
    from okgen.daily.pipeline import check_retrievers
    from okgen.errors import ConfigError
    from okgen.ingest.config import split_list  # a JSON array or comma-separated, as settings read

    def items(value: str, flag: str) -> list[str]:
        try:
            return [str(x).strip() for x in split_list(value) if str(x).strip()]
        except ValueError as e:
            raise click.BadParameter(str(e), param_hint=flag) from None

    if windows is not None and _from_command_line("windows"):
        parts = items(windows, "--windows")
        if not parts:
            raise click.BadParameter(f"{windows!r}: give at least one window in days, e.g. 1,5,10", param_hint="--windows")
        for w in parts:
            if not w.isdigit() or int(w) < 1:
                raise click.BadParameter(f"{w!r} is not a number of days >= 1 (e.g. --windows 1,5,10)",
                                         param_hint="--windows")
    if retrievers and _from_command_line("retrievers"):
        try:
            check_retrievers(items(retrievers, "--retrievers"), ws, origin="--retrievers")
        except ConfigError as e:
            raise click.BadParameter(str(e).removeprefix("--retrievers: "), param_hint="--retrievers") from None


@click.command("daily")
@click.option("--date", "date_s", metavar="DATE", help="News date (default: yesterday in [daily] timezone).")
@click.option("--from", "from_s", metavar="DATE", help="Backfill from this date (with --to).")
@click.option("--to", "to_s", metavar="DATE", help="Backfill up to this date, inclusive.")
@click.option("--force", is_flag=True, help="Rebuild a finished date with a new timestamp and signature.")
@click.option("--feeds", type=click.Path(exists=True, dir_okay=False), help="Feed list (TOML or OPML).")
@click.option("--replay", type=click.Path(exists=True, dir_okay=False), help="Ingest from this WARC capture instead of the network.")
@click.option("--replay-dir", type=click.Path(exists=True, file_okay=False), help="Backfill from okgen-<date>.warc.gz captures in this folder.")
@click.option("--import", "import_file", type=click.Path(exists=True, dir_okay=False), help="Ingest from a JSON/JSONL news dump.")
@click.option("--generator", metavar="SPEC", help="extractive, openai/MODEL[,base_url=URL,...], hf/PATH or vllm/ID (default: [generate] generator, else extractive).")
@click.option("--validator", metavar="SPEC", help="A model spec (openai/MODEL[,...], hf/PATH, vllm/ID) or none.")
@click.option("--probe", "probes", multiple=True, metavar="SPEC", help="Freshness probe model; repeat for several.")
@click.option("--per-article", type=click.IntRange(1, 50), help="Questions per article.")
@click.option("--max-cost", type=click.FloatRange(min=0), metavar="USD", help="Stop generation cleanly at this spend.")
@click.option("--no-cache", is_flag=True, help="Bypass the LLM response cache.")
@click.option("--retrievers", metavar="LIST", help="Indexes to build, comma-separated (default bm25; '' for none).")
@click.option("--windows", metavar="LIST", help="News windows in days, comma-separated (default 1,5,10).")
@click.option("--publish-to", metavar="DEST", help="Publish the archive to this folder or fsspec URL.")
@click.option("--sign-key", type=click.Path(exists=True, dir_okay=False), help="Sign the published manifest with this Ed25519 key.")
@click.option("--no-text", is_flag=True, default=None, help="Publish without article bodies.")
@json_option
def daily(date_s, from_s, to_s, force, feeds, replay, replay_dir, import_file, generator, validator, probes, per_article,
          max_cost, no_cache, retrievers, windows, publish_to, sign_key, no_text, json_out) -> None:
    """Run ingest, generate, snapshot, index and publish for one date; print the signature last.

    With no configuration it uses the packaged feed list, the SQLite store and WARC captures in
    data/, the offline extractive generator, snapshots/ and signatures/. Running a date again
    resumes where it stopped; a finished date prints its signature again.

    \b
    Examples:
      okgen daily
      okgen daily --date 2026-11-21 --generator openai/gpt-4.1-mini --validator openai/gpt-4.1
      okgen daily --from 2026-11-01 --to 2026-11-10 --replay-dir data/warc
    """
    from okgen.daily.pipeline import DailyOptions, run_daily, run_range, summarize
    from okgen.errors import OkgenError
    from okgen.signature import Signature

    ws = get_ctx().workspace
    date, start, end = _date(date_s, "--date"), _date(from_s, "--from"), _date(to_s, "--to")
    if (start is None) != (end is None):
        raise click.UsageError("--from and --to go together")
    if start is not None and date is not None:
        raise click.UsageError("use either --date or --from/--to")
    if replay_dir and start is None:
        raise click.UsageError("--replay-dir is for backfills (--from/--to); use --replay for one date")
    if start is not None and end < start:
        raise click.BadParameter(f"{end} is before --from {start}", param_hint="--to")
    _check_flags(ws, retrievers, windows)
    opts = DailyOptions.resolve(ws, feeds=feeds, replay=replay, import_file=import_file, generator=generator,
                                validator=validator, probes=probes or None, per_article=per_article, max_cost=max_cost,
                                publish_to=publish_to, sign_key=sign_key, no_text=no_text, retrievers=retrievers,
                                windows=windows, use_cache=False if no_cache else None)
    if not replay and not replay_dir and not import_file:
        # A day after today in the news timezone has no news yet: a typo (2027 for 2026)
        # fetched the feeds, stored nothing and said only "no question kept".
        from zoneinfo import ZoneInfo

        from okgen.ingest.config import config_for

        # the later of the two news days: daily's own zone (what "yesterday" is) and ingest's
        today = max(dt.datetime.now(ZoneInfo(tz)).date() for tz in {opts.timezone, config_for(ws).timezone})
        for d, hint in ((date, "--date"), (end, "--to")):
            if d is not None and d > today:
                raise click.BadParameter(f"{d} is after today ({today}): there is no news of it yet", param_hint=hint)
    said = []

    def offline_note(o) -> None:  # once, for the first date that runs the offline generator
        if not o.llm_configured and not said:
            said.append(True)
            note("okgen: no LLM endpoint configured: using the offline generator (gen:extractive-v2, spaCy); "
                 "set [generate] generator in okgen.toml or pass --generator openai/MODEL")

    def on_stage(stage, status, counts):
        note(f"okgen: {stage}: {status} ({_brief(stage, counts)})")

    def on_result(r):  # one line a date as it finishes: a long backfill is not silent until the end
        note(f"okgen: {r.date}: {_brief_result(r)}")

    if start is not None:
        results = run_range(start, end, ws, opts, force=force, progress=progress_enabled(), replay_dir=replay_dir,
                            on_result=on_result, on_options=offline_note)
        if want_json(json_out):
            echo_json({"summary": summarize(results), "runs": [r.to_dict() for r in results]})
        else:
            for r in results:
                click.echo(f"{r.date}  {r.status:7}  {r.signature or r.error}")
        failed = [r for r in results if r.status not in ("done", "empty")]  # a quiet day is no failure
        if failed:
            raise OkgenError(f"{len(failed)} of {len(results)} date(s) failed (first: {failed[0].date}: {failed[0].error})")
        return
    if opts.import_file and date_s is None:  # yesterday is no statement about the dump's undated records
        opts = dataclasses.replace(opts, import_undated=False)
    # Said once the lock is held and a rerun's or --force's models are known: a day begun with an
    # LLM is resumed with it, and a run refused by the lock says only that.
    result = run_daily(date, ws, opts, force=force, progress=progress_enabled(), on_stage=on_stage,
                       on_options=offline_note)
    if want_json(json_out):
        echo_json(result.to_dict())
        return
    if result.already_done:
        note(f"okgen: {result.date} was already built (run {result.run_id}); --force rebuilds it")
    if result.signature is None:
        # A quiet day: nothing failed, so no error and exit 0; stdout stays empty (no signature).
        warn(f"okgen: warning: {result.date} has no snapshot: {result.error}; "
             f"`okgen generate --date {result.date}` prints the funnel")
        return
    note(f"snapshot: {result.snapshot}")
    note(f"short:    {Signature.parse(result.signature).short}")
    click.echo(result.signature)


def _n(count, noun: str) -> str:
    """``1 question``, ``3 questions``."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _brief_result(r) -> str:
    """One backfill date: status, questions and the short signature, or the error."""
    from okgen.signature import Signature

    if r.status == "failed" or (r.signature is None and r.status != "empty"):
        return f"{r.status}: {r.error}"
    if r.signature is None:
        return f"{r.status} (no snapshot: {r.error})"
    questions = ((r.stages.get("snapshot") or {}).get("counts") or {}).get("questions")
    earlier = ", built earlier" if r.already_done else ""
    count = f"{_n(questions, 'question')}, " if questions is not None else ""
    return f"{r.status} ({count}{Signature.parse(r.signature).short}{earlier})"


def _brief(stage: str, c: dict) -> str:
    if stage == "ingest":
        feeds = f"; feeds ok {c.get('feeds_ok', 0)}/{c.get('feeds_total')}" if c.get("feeds_total") else ""  # none read on an import
        return f"{_n(c.get('stored_total', 0), 'article')} for the date, {c.get('stored', 0)} new{feeds}"
    if stage == "generate":
        return f"{_n(c.get('kept', 0), 'question')} kept of {_n(c.get('candidates', 0), 'candidate')}"
    if "reason" in c:
        return c["reason"]
    if stage == "snapshot":
        return f"{_n(c.get('questions'), 'question')}, {_n(c.get('articles'), 'corpus article')}"
    if stage == "index":
        return ", ".join(c.get("indexes", {}))
    if stage == "publish":
        return c.get("dest", "")
    return ""
