"""``okgen series``: build, list, show, verify, archive, publish and pull snapshot series."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import click

from okgen.cli.common import (
    echo_json,
    echo_kv,
    echo_table,
    get_ctx,
    json_option,
    split_list,
    want_json,
)
from okgen.errors import IntegrityError


def _date(value: str, flag: str) -> dt.date:
    """``YYYY-MM-DD`` as a date; anything else is a usage error (exit 2) naming ``flag``."""
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise click.BadParameter(f"takes a date YYYY-MM-DD, got {value!r}", param_hint=flag) from None


@click.group()
def series() -> None:
    """Build, list, show, verify, archive, publish and pull series of daily snapshots."""


@series.command("build")
@click.argument("name")
@click.option("--from", "start", required=True, help="First news date (YYYY-MM-DD).")
@click.option("--to", "end", required=True, help="Last news date (YYYY-MM-DD).")
@click.option("--allow-differ", default="", help="Fields members may differ in, comma-separated: generator, validator, prompts, feeds.")
@click.option("--allow-gaps", is_flag=True, help="Build even when some days have no snapshot (they are recorded as missing).")
@click.option("--overwrite", is_flag=True, help="Replace an existing series of that name.")
@json_option
def build(name: str, start: str, end: str, allow_differ: str, allow_gaps: bool, overwrite: bool, json_out: bool) -> None:
    """Pin the snapshots dated FROM..TO (one per day, the newest) as series NAME.

    Example: okgen series build april --from 2025-04-10 --to 2025-04-14
    """
    from okgen.series.store import build_series

    allow = split_list(allow_differ, "--allow-differ")
    m = build_series(get_ctx().workspace, name, _date(start, "--from"), _date(end, "--to"), allow_differ=allow,
                     allow_gaps=allow_gaps, overwrite=overwrite)
    if want_json(json_out):
        echo_json(m.model_dump(mode="json"))
        return
    click.echo(f"series {m.name}: {len(m.members)} day(s), {sum(x.questions for x in m.members)} questions"
               + (f", {len(m.missing_days)} missing day(s)" if m.missing_days else ""), err=True)
    click.echo(m.signature)


@series.command("ls")
@json_option
def ls(json_out: bool) -> None:
    """List the series of the workspace."""
    from okgen.series.store import list_series

    rows = [{"name": m.name, "from": str(m.start), "to": str(m.end), "days": len(m.members),
             "missing": len(m.missing_days), "questions": sum(x.questions for x in m.members),
             "hash": m.content_hash[:12]} for m in list_series(get_ctx().workspace)]
    if want_json(json_out):
        echo_json(rows)
    elif not rows:
        click.echo("no series (okgen series build NAME --from D1 --to D2 makes one)", err=True)
    else:
        echo_table(rows)


@series.command("show")
@click.argument("ref")
@json_option
def show(ref: str, json_out: bool) -> None:
    """Show a series: signature, members, missing days. REF: name, signature or hash prefix."""
    from okgen.series.store import resolve_series
    from okgen.signature import SeriesSignature

    m, folder = resolve_series(ref, get_ctx().workspace)
    if want_json(json_out):
        echo_json({**m.model_dump(mode="json"), "path": str(folder)})
        return
    echo_kv([("signature", m.signature), ("short", SeriesSignature.parse(m.signature).short), ("path", folder),
             ("range", f"{m.start} .. {m.end}"), ("missing days", ", ".join(map(str, m.missing_days)) or "none"),
             ("allowed to differ", ", ".join(m.allowed_differences) or "nothing")])
    echo_table([{"date": str(x.date), "questions": x.questions, "hash": x.content_hash[:12], "snapshot": x.name}
                for x in m.members])


@series.command("verify")
@click.argument("ref")
@click.option("--pubkey", type=click.Path(dir_okay=False, exists=True), help="Also require a valid Ed25519 signature by this key.")
@json_option
def verify(ref: str, pubkey: str | None, json_out: bool) -> None:
    """Recompute the combined hash and verify every member snapshot; exit 1 on any problem."""
    from okgen.series.store import resolve_series, verify_series

    ws = get_ctx().workspace
    _, folder = resolve_series(ref, ws)
    rep = verify_series(folder, ws)
    if pubkey is not None and rep.ok:
        from okgen.snapshot.signing import verify_manifest_signature

        kid = verify_manifest_signature(folder, pubkey)
        click.echo(f"signed by key {kid}", err=True)
    if want_json(json_out):
        echo_json(rep.to_dict())
    if not rep.ok:
        for p in rep.problems[1:]:
            click.echo(f"  {p}", err=True)
        raise IntegrityError(f"series {rep.name}: {len(rep.problems)} problem(s); first: {rep.problems[0]}")
    if not want_json(json_out):
        click.echo(f"ok: series {rep.name}, {len(rep.checked)} member snapshot(s) verified")


@series.command("archive")
@click.argument("ref")
@click.option("--out", type=click.Path(file_okay=False), default=None, help="Folder for the archive (default: series/).")
def archive(ref: str, out: str | None) -> None:
    """Write the deterministic archive NAME.series.tar.gz of a series."""
    from okgen.series.publish import archive_series
    from okgen.series.store import resolve_series, series_dir

    ws = get_ctx().workspace
    _, folder = resolve_series(ref, ws)
    click.echo(str(archive_series(folder, Path(out) if out else series_dir(ws))))


@series.command("publish")
@click.argument("ref")
@click.option("--to", "dest", required=True, help="Destination folder or fsspec URL.")
@click.option("--sign-key", type=click.Path(dir_okay=False, exists=True), help="Ed25519 private key to sign the series and its members.")
@json_option
def publish(ref: str, dest: str, sign_key: str | None, json_out: bool) -> None:
    """Upload a series and the member snapshots DEST does not hold yet; update DEST/index.json."""
    from okgen.series.publish import publish_series
    from okgen.series.store import resolve_series

    ws = get_ctx().workspace
    _, folder = resolve_series(ref, ws)
    entry = publish_series(folder, dest, ws, sign_key=sign_key)
    if want_json(json_out):
        echo_json(entry)
    else:
        click.echo(f"published {entry['archive']} ({entry['days']} day(s), {entry['members_uploaded']} snapshot(s) uploaded now) to {dest}")


@series.command("pull")
@click.argument("ref")
@click.option("--from", "src", required=True, help="Source folder or fsspec URL holding index.json.")
@click.option("--pubkey", type=click.Path(dir_okay=False, exists=True), help="Require valid Ed25519 signatures by this key.")
def pull(ref: str, src: str, pubkey: str | None) -> None:
    """Download a published series and its member snapshots, verify them all, register them."""
    from okgen.series.publish import pull_series

    folder = pull_series(ref, src, get_ctx().workspace, pubkey=pubkey)
    click.echo(f"pulled series {folder.name} into {folder}")
