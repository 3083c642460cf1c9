"""``okgen hydrate``: fetch the article texts of a snapshot released without them."""

from __future__ import annotations

import click

from okgen.cli.common import echo_json, get_ctx, json_option, want_json

SHOWN = 20  # rows listed per kind


@click.command("hydrate")
@click.argument("ref")
@json_option
def hydrate(ref: str, json_out: bool) -> None:
    """Re-fetch each article of a no-text snapshot and keep the texts that match their hashes.

    Reports what changed or vanished since the snapshot was built, and what could not be reached
    now (offline, a server down: rerun later). When every text matches,
    the snapshot is the original full release again (okgen snapshot verify passes).

    Example: okgen hydrate 'd:2026-11-21|w:10|...'
    """
    from okgen.snapshot.hydrate import hydrate as do_hydrate
    from okgen.snapshot.store import resolve

    ws = get_ctx().workspace
    snap = resolve(ref, ws)
    snap, report = do_hydrate(snap, ws, progress=True)  # a bar on a terminal, else a line every 10 s (-q: none)
    if want_json(json_out):
        echo_json(report.to_dict())
    else:
        click.echo(f"{snap.name}: {len(report.matched)} texts restored, {report.already} already present, "
                   f"{len(report.changed)} changed, {len(report.vanished)} vanished, "
                   f"{len(report.unreachable)} unreachable, {len(report.refused)} refused, "
                   f"{len(report.imported)} imported")
        for kind, rows in (("changed", report.changed), ("vanished", report.vanished),
                           ("unreachable", report.unreachable), ("refused", report.refused),
                           ("imported", report.imported)):
            for v in rows[:SHOWN]:
                click.echo(f"  {kind:11} {v['id']}  {v['url']}" + (f"  ({v['reason']})" if "reason" in v else ""))
            if len(rows) > SHOWN:
                click.echo(f"  {kind:11} ... {len(rows) - SHOWN} more (--json lists them all)")
        if report.complete and report.matched:
            click.echo("every text matches its hash: the snapshot is complete again")
        elif report.complete:
            click.echo("the snapshot has every article text already: nothing to do")
    if not report.complete:
        from okgen.errors import OkgenError

        missing = (len(report.changed) + len(report.vanished) + len(report.unreachable) + len(report.refused)
                   + len(report.imported))
        hints = []
        if report.imported:
            hints.append("imported texts came from a news dump, not pages okgen extracted: import that dump "
                         "into this workspace (okgen ingest --import FILE --date D) and hydrate again, or get the "
                         "release with texts from its publisher")
        if report.refused:
            hints.append("refused fetches follow [ingest] allow_networks and robots.txt: change the settings and rerun")
        if report.unreachable and all(u["reason"] in ("dns_error", "not fetched") for u in report.unreachable) \
                and any(u["reason"] == "dns_error" for u in report.unreachable) and len(report.unreachable) == missing:
            # "not fetched": the pages after the first 20 that all failed at DNS were not asked for
            hints.append("no host name resolved: no network? set HTTPS_PROXY/HTTP_PROXY (and NO_PROXY) for a proxy, "
                         "then rerun")
        elif report.unreachable:
            hints.append("unreachable pages may answer later: rerun then")
        if report.changed or report.vanished:
            hints.append("a changed or vanished page cannot give its recorded text back")
        hint = "; " + "; ".join(hints)
        raise OkgenError(f"{missing} text(s) still missing ({len(report.changed)} changed, {len(report.vanished)} "
                         f"vanished, {len(report.unreachable)} unreachable, {len(report.refused)} refused, "
                         f"{len(report.imported)} imported){hint}")
