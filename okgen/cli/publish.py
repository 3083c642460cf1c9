"""``okgen publish``, ``okgen pull`` and ``okgen keygen``."""

from __future__ import annotations

from pathlib import Path

import click

from okgen.cli.common import echo_json, get_ctx, json_option, want_json


@click.command("publish")
@click.argument("ref")
@click.option("--to", "dest", required=True, help="Destination folder or fsspec URL (s3://bucket/okgen, gs://...).")
@click.option("--sign-key", type=click.Path(dir_okay=False, exists=True), help="Ed25519 private key (okgen keygen) to sign the manifest.")
@click.option("--no-text", is_flag=True, help="Publish without article bodies (URLs, titles and text hashes only).")
@json_option
def publish(ref: str, dest: str, sign_key: str | None, no_text: bool, json_out: bool) -> None:
    """Upload a snapshot's deterministic archive and update DEST/index.json.

    Example: okgen publish 2026-11-21 --to /srv/okgen --sign-key okgen.key
    """
    from okgen.snapshot.publish import publish as do_publish
    from okgen.snapshot.store import resolve

    ws = get_ctx().workspace
    snap = resolve(ref, ws)
    entry = do_publish(snap, dest, ws, sign_key=sign_key, no_text=no_text)
    if want_json(json_out):
        echo_json(entry)
    else:
        signed = f", signed by key {entry['key_id']}" if entry["signed"] else ""
        click.echo(f"published {entry['archive']} ({entry['bytes']} bytes, sha256 {entry['sha256'][:12]}{signed}) to {dest}")


@click.command("pull")
@click.argument("ref")
@click.option("--from", "src", required=True, help="Source folder or fsspec URL holding index.json.")
@click.option("--pubkey", type=click.Path(dir_okay=False, exists=True), help="Require a valid Ed25519 manifest signature by this key.")
@click.option("--no-text", "prefer_no_text", is_flag=True, help="Prefer the release without article bodies.")
@json_option
def pull(ref: str, src: str, pubkey: str | None, prefer_no_text: bool, json_out: bool) -> None:
    """Download a published snapshot, verify its SHA-256 and hashes, extract it safely and register it.

    Example: okgen pull 'd:2026-11-21|w:10|...' --from /srv/okgen --pubkey okgen.pub
    """
    from okgen.snapshot.publish import pull as do_pull

    ws = get_ctx().workspace
    snap = do_pull(ref, src, ws, pubkey=pubkey, prefer_text=not prefer_no_text)
    kid = None
    if pubkey is not None:  # pull raised unless the signature verified with it
        from okgen.snapshot.signing import _load_public, key_id

        kid = key_id(_load_public(Path(pubkey)))
    has_sig = (snap.path / "manifest.sig").is_file()
    if want_json(json_out):
        echo_json({"path": str(snap.path), "signature": snap.manifest.signature, "text_included": snap.manifest.text_included,
                   "signed": kid is not None, "key_id": kid, "unchecked_signature": has_sig and kid is None})
    else:
        how = (f"manifest signature verified with key {kid}" if kid is not None
               else "its manifest.sig was not checked: give --pubkey KEY" if has_sig else "unsigned")
        click.echo(f"pulled {snap.name} into {snap.path} ({how})")
        click.echo(snap.manifest.signature)


@click.command("keygen")
@click.option("--out", default="okgen.key", show_default=True, type=click.Path(dir_okay=False), help="Private key file; the public key goes next to it as .pub.")
@click.option("--force", is_flag=True, help="Overwrite existing key files.")
@json_option
def keygen(out: str, force: bool, json_out: bool) -> None:
    """Create an Ed25519 key pair for signing snapshots.

    Example: okgen keygen --out keys/okgen.key
    """
    from okgen.snapshot.signing import generate_keypair

    priv, pub = generate_keypair(out, overwrite=force)
    if want_json(json_out):
        from okgen.snapshot.signing import _load_public, key_id

        echo_json({"private_key": str(priv), "public_key": str(pub), "key_id": key_id(_load_public(pub))})
        return
    click.echo(f"private key: {priv} (keep it secret)")
    click.echo(f"public key:  {pub} (share it: okgen snapshot verify --pubkey {pub} ...)")
