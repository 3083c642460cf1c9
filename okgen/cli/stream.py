"""``okgen stream``: build, list, show, verify, archive, publish, pull, import and export streams."""

from __future__ import annotations

import json
from pathlib import Path

import click

from okgen.cli.common import echo_json, echo_kv, echo_table, get_ctx, json_option, want_json
from okgen.errors import ConfigError, IntegrityError


@click.group()
def stream() -> None:
    """Evolving-fact streams: questions asked every day while their answers change."""


@stream.command("build")
@click.argument("name")
@click.option("--series", "series_ref", required=True, help="Series to build from (name, signature or hash prefix).")
@click.option("--min-changes", type=click.IntRange(min=1), default=2, show_default=True,
              help="Least answer changes (not known yet -> first value counts) for a track to be streamed.")
@click.option("--min-outlets", type=click.IntRange(min=1), default=2, show_default=True,
              help="Outlets that must report a new value the same day for it to count as a change.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of option order and distractors.")
@click.option("--pipeline", default=None, help="spaCy pipeline of the fact extractor (default: en_core_web_sm).")
@click.option("--extractor", default=None, metavar="SPEC",
              help="Fact extractor: rules (default) or a model spec (openai/NAME[,base_url=URL], hf/PATH, vllm/ID).")
@click.option("--validator", default=None, metavar="SPEC",
              help="Model spec of the transition validator: a new value from fewer than --min-outlets outlets "
                   "counts when it judges it a real change (default: none, outlets only).")
@click.option("--max-cost", type=click.FloatRange(min=0), default=None, metavar="USD",
              help="Budget of the extractor's and of the validator's LLM calls, each.")
@click.option("--no-cache", is_flag=True, help="Neither read nor write the LLM response cache.")
@click.option("--overwrite", is_flag=True, help="Replace an existing stream of that name.")
@json_option
def build(name: str, series_ref: str, min_changes: int, min_outlets: int, seed: int, pipeline: str | None,
          extractor: str | None, validator: str | None, max_cost: float | None, no_cache: bool,
          overwrite: bool, json_out: bool) -> None:
    """Extract the facts of every day of a series, follow them as tracks, stream those that change.

    Examples:

      okgen stream build april-facts --series april

      okgen stream build april-facts --series april --validator openai/gpt-4.1-mini --max-cost 2
    """
    from okgen.streams.build import build_stream

    m = build_stream(get_ctx().workspace, name, series_ref, min_changes=min_changes, min_outlets=min_outlets,
                     seed=seed, overwrite=overwrite, pipeline=pipeline, extractor=extractor,
                     validator=None if (validator or "").strip().lower() in ("", "none", "off") else validator,
                     max_cost=max_cost, use_cache=not no_cache)
    if want_json(json_out):
        echo_json(m.model_dump(mode="json"))
        return
    click.echo(f"stream {m.name}: " + ", ".join(f"{k} {v}" for k, v in m.counts.items()), err=True)
    click.echo(m.signature)


@stream.command("ls")
@json_option
def ls(json_out: bool) -> None:
    """List the streams of the workspace."""
    from okgen.streams.store import list_streams

    rows = [{"name": m.name, "origin": m.origin, "intervals": len(m.intervals), "questions": m.counts.get("questions", 0),
             "tracks": m.counts.get("tracks"), "hash": m.content_hash[:12], "signature": m.signature}
            for m in list_streams(get_ctx().workspace)]
    if want_json(json_out):
        echo_json(rows)  # an imported stream has no tracks: null, not ""
    elif not rows:
        click.echo("no streams (okgen stream build NAME --series S makes one)", err=True)
    else:
        echo_table([{k: ("" if v is None else v) for k, v in r.items() if k != "signature"} for r in rows])


@stream.command("show")
@click.argument("ref")
@click.option("--tracks", "show_tracks", is_flag=True, help="Also list every track with its values per interval.")
@json_option
def show(ref: str, show_tracks: bool, json_out: bool) -> None:
    """Show a stream: signature, counts and its questions with the answer per interval.

    Example: okgen stream show april-facts --tracks
    """
    from okgen.streams.store import open_stream, resolve_stream

    s = open_stream(resolve_stream(ref, get_ctx().workspace))
    m = s.manifest
    if want_json(json_out):
        echo_json({"manifest": m.model_dump(mode="json"), "questions": [q.model_dump(mode="json") for q in s.questions],
                   **({"tracks": [t.model_dump(mode="json") for t in s.tracks]} if show_tracks else {})})
        return
    echo_kv([("signature", m.signature), ("path", s.path), ("intervals", " ".join(iv.label for iv in m.intervals)),
             *([("validator", m.validator)] if m.validator else []),
             ("counts", ", ".join(f"{k} {v}" for k, v in m.counts.items()))])
    echo_table([{"question": q.question, "changes": q.changes, "options": len(q.choices),
                 "answers": " | ".join(q.choices[a] for a in q.answers)} for q in s.questions])
    if show_tracks:
        echo_table([{"track": t.id, "days": " ".join(d.status + ("(validator)" if d.rule == "validator" else "")
                                                    for d in t.days),
                     "values": " | ".join(t.labels.get(v, "-") if v else "-" for v in t.gold),
                     "excluded": t.excluded or ""} for t in s.tracks])


@stream.command("verify")
@click.argument("ref")
@click.option("--pubkey", type=click.Path(dir_okay=False, exists=True), help="Also require a valid Ed25519 signature by this key.")
@json_option
def verify(ref: str, pubkey: str | None, json_out: bool) -> None:
    """Check every file hash, the signature and (for built streams) the series and its snapshots."""
    from okgen.streams.store import resolve_stream, verify_stream

    ws = get_ctx().workspace
    folder = resolve_stream(ref, ws)
    problems = verify_stream(folder, ws)
    if pubkey is not None and not problems:
        from okgen.snapshot.signing import verify_manifest_signature

        click.echo(f"signed by key {verify_manifest_signature(folder, pubkey)}", err=True)
    if want_json(json_out):
        echo_json({"name": folder.name, "ok": not problems, "problems": problems})
    if problems:
        raise IntegrityError(f"stream {folder.name}: {len(problems)} problem(s); first: {problems[0]}")
    if not want_json(json_out):
        click.echo(f"ok: stream {folder.name}")


@stream.command("archive")
@click.argument("ref")
@click.option("--out", type=click.Path(file_okay=False), default=None, help="Folder for the archive (default: streams/).")
def archive(ref: str, out: str | None) -> None:
    """Write the deterministic archive NAME.stream.tar.gz of a stream."""
    from okgen.streams.publish import archive_stream
    from okgen.streams.store import resolve_stream, streams_dir

    ws = get_ctx().workspace
    click.echo(str(archive_stream(resolve_stream(ref, ws), Path(out) if out else streams_dir(ws))))


@stream.command("publish")
@click.argument("ref")
@click.option("--to", "dest", required=True, help="Destination folder or fsspec URL.")
@click.option("--sign-key", type=click.Path(dir_okay=False, exists=True), help="Ed25519 private key.")
@json_option
def publish(ref: str, dest: str, sign_key: str | None, json_out: bool) -> None:
    """Upload a stream (its series and snapshots first); update DEST/index.json."""
    from okgen.streams.publish import publish_stream
    from okgen.streams.store import resolve_stream

    ws = get_ctx().workspace
    entry = publish_stream(resolve_stream(ref, ws), dest, ws, sign_key=sign_key)
    if want_json(json_out):
        echo_json(entry)
    else:
        click.echo(f"published {entry['archive']} to {dest}")


@stream.command("pull")
@click.argument("ref")
@click.option("--from", "src", required=True, help="Source folder or fsspec URL holding index.json.")
@click.option("--pubkey", type=click.Path(dir_okay=False, exists=True), help="Require valid Ed25519 signatures by this key.")
def pull(ref: str, src: str, pubkey: str | None) -> None:
    """Download a published stream (and its series), verify it all, install it."""
    from okgen.streams.publish import pull_stream

    folder = pull_stream(ref, src, get_ctx().workspace, pubkey=pubkey)
    click.echo(f"pulled stream {folder.name} into {folder}")


@stream.command("import")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(["oaks"]), required=True, help="File format.")
@click.option("--name", required=True, help="Stream name (NAME-<bid> per document when the file holds several).")
@click.option("--overwrite", is_flag=True, help="Replace existing streams of those names.")
def import_cmd(file: str, fmt: str, name: str, overwrite: bool) -> None:
    """Import OAKS's public JSON (documents with chunks and chunk_to_answer) as streams.

    Example: okgen stream import --format oaks oaks-n.split_2k.json --name oaks-n
    """
    from okgen.streams.oaks import import_oaks

    for m in import_oaks(get_ctx().workspace, Path(file), name, overwrite=overwrite):
        click.echo(f"imported {m.name}: {len(m.intervals)} chunk(s), {m.counts.get('questions', 0)} question(s)", err=True)
        click.echo(m.signature)


@stream.command("export")
@click.argument("ref")
@click.option("--format", "fmt", type=click.Choice(["oaks"]), required=True, help="File format.")
@click.option("--out", type=click.Path(dir_okay=False), default=None, help="Output file (default: stdout).")
def export(ref: str, fmt: str, out: str | None) -> None:
    """Write a stream in OAKS's JSON format (a list of one document).

    Example: okgen stream export april-facts --format oaks --out april-facts.oaks.json
    """
    from okgen.files import atomic_write_text
    from okgen.streams.oaks import export_oaks
    from okgen.streams.store import open_stream, resolve_stream

    text = json.dumps([export_oaks(open_stream(resolve_stream(ref, get_ctx().workspace)))], indent=1, ensure_ascii=False)
    if out is None:
        click.echo(text)
    else:
        if Path(out).is_dir():
            raise ConfigError(f"--out {out} is a folder; give a file name")
        atomic_write_text(Path(out), text + "\n")
        click.echo(out, err=True)
