"""``okgen hydrate``: fetch the article texts of a snapshot released without them."""

from __future__ import annotations

import click

from okgen.cli.common import echo_json, get_ctx, json_option, progress_enabled, want_json


@click.command("hydrate")
@click.argument("ref")
@json_option
def hydrate(ref: str, json_out: bool) -> None:
    """Re-fetch each article of a no-text snapshot and keep the texts that match their hashes.

    Reports what changed or vanished since the snapshot was built. When every text matches,
    the snapshot is the original full release again (okgen snapshot verify passes).

    Example: okgen hydrate 'd:2026-11-21|w:10|...'
    """
    from okgen.snapshot.hydrate import hydrate as do_hydrate
    from okgen.snapshot.store import resolve

    ws = get_ctx().workspace
    snap = resolve(ref, ws)
    snap, report = do_hydrate(snap, ws, progress=progress_enabled())
    if want_json(json_out):
        echo_json(report.to_dict())
        return
    click.echo(f"{snap.name}: {len(report.matched)} texts restored, {report.already} already present, "
               f"{len(report.changed)} changed, {len(report.vanished)} vanished")
    for c in report.changed[:20]:
        click.echo(f"  changed   {c['id']}  {c['url']}")
    for v in report.vanished[:20]:
        click.echo(f"  vanished  {v['id']}  {v['url']}  ({v['reason']})")
    if report.complete:
        click.echo("every text matches its hash: the snapshot is complete again")
