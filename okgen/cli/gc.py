"""``okgen gc``: delete old raw captures, indexes and ingest working state."""

from __future__ import annotations

import click

from okgen.cli.common import echo_json, get_ctx, json_option, want_json


@click.command("gc")
@click.option("--keep-days", type=click.IntRange(min=0, max=36500), required=True, help="Keep what belongs to the last N days.")
@click.option("--articles", is_flag=True, help="Also delete stored articles older than the cutoff minus the 10-day window.")
@click.option("--dry-run", is_flag=True, help="List what would be deleted, delete nothing.")
@click.option("--force", is_flag=True, help="Delete even when the cutoff passes the newest news day (all of it goes).")
@click.option("--compact", is_flag=True, help="Also give the article store's free space back to the disk (VACUUM: "
              "rewrites the file, needs room for a copy; refused while okgen daily runs).")
@json_option
def gc(keep_days: int, articles: bool, dry_run: bool, force: bool, compact: bool, json_out: bool) -> None:
    """Delete WARC captures, retrieval indexes, stored encodings and ingest state older than --keep-days.

    Snapshots and their archives are never deleted.

    Example: okgen gc --keep-days 30 --dry-run
    """
    from okgen.daily.gc import collect_garbage

    rep = collect_garbage(get_ctx().workspace, keep_days, dry_run=dry_run, articles=articles, force=force,
                          compact=compact)
    if rep.warning:
        from okgen.cli.common import warn

        warn(f"okgen: warning: {rep.warning}")
    if want_json(json_out):
        echo_json(rep.to_dict())
        return
    verb = "would delete" if dry_run else "deleted"
    click.echo(f"cutoff {rep.cutoff}: {verb} {len(rep.warc)} WARC file(s), the indexes of {len(rep.indexes)} snapshot(s), "
               f"{rep.vectors} stored vector(s), "
               f"{', '.join(f'{v} {k}' for k, v in rep.store.items()) or 'no store rows'}; {rep.bytes_freed / 1e6:.1f} MB")
    if rep.free_bytes >= 1e6 and not compact:  # SQLite keeps the space of deleted rows in its file
        click.echo(f"the article store keeps {rep.free_bytes / 1e6:.1f} MB of deleted rows in its file: "
                   "okgen gc --compact gives it back (when no okgen runs)")
    if dry_run:  # what exactly would go
        for kind, names in (("WARC", rep.warc), ("indexes", rep.indexes)):
            for name in names[:20]:
                click.echo(f"  {kind:8} {name}")
            if len(names) > 20:
                click.echo(f"  {kind:8} ... {len(names) - 20} more (--json lists them all)")
