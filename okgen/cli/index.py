"""``okgen index``: build, list and query retrieval indexes over news windows."""

from __future__ import annotations

import click

from okgen.cli.common import (
    echo_json,
    echo_table,
    get_ctx,
    json_option,
    note,
    split_list,
    want_json,
    warn,
)
from okgen.errors import ConfigError, OkgenError


@click.group()
def index() -> None:
    """Build retrieval indexes over news windows (one folder per snapshot x window x spec)."""


@index.command("build")
@click.option("--signature", "ref", required=True, help="Snapshot: signature (long or short), content hash, folder or archive.")
@click.option("--retriever", "retrievers", multiple=True, required=True,
              help="Spec name (bm25, bm25-passages, dpr, colbert) or path to a .toml spec; repeat or comma-separate.")
@click.option("--window", "windows", multiple=True, required=True, help="Window in days (1, 5, 10...); repeat or comma-separate.")
@click.option("--rebuild", is_flag=True, help="Replace existing indexes instead of reusing them.")
@json_option
def build(ref: str, retrievers: tuple[str, ...], windows: tuple[str, ...], rebuild: bool, json_out: bool) -> None:
    """Build (or reuse) the index of each retriever x window of a snapshot.

    An existing index is verified and reused; one built for another corpus is refused. Dense
    encoders take the vectors of passages already encoded (any window, any day) from the
    workspace's encoding store and encode only new ones: the `encoded` and `reused` columns.
    Failures are reported per index; the exit status is 1 when any failed. A retriever name no
    spec has is refused before any work.
    """
    from okgen.retrieval.evaluate import parse_int_list
    from okgen.retrieval.index import open_index
    from okgen.retrieval.specs import find_spec_file
    from okgen.snapshot.store import resolve

    ws = get_ctx().workspace
    names = list(dict.fromkeys(split_list(retrievers, "--retriever")))
    for name in names:  # a misspelt name is one line before any work, not a failed index each
        find_spec_file(name, ws)
    snap = resolve(ref, ws)
    try:
        wins = parse_int_list(",".join(windows), "--window")
    except ConfigError as e:  # the command line is wrong: a usage error (exit 2)
        raise click.UsageError(str(e)) from None
    warn_short_windows(snap, wins)
    rows, failed = [], 0
    for name in names:
        for w in wins:
            row = {"retriever": name, "window": w}
            try:
                row.update(_build_row(open_index(snap, name, w, ws, rebuild=rebuild)))
            except OkgenError as e:
                failed += 1
                row.update(error=str(e))
                click.echo(f"okgen: {name}, {w}-day window: {e}", err=True)
            rows.append(row)
    ok = [r for r in rows if not r["error"]]
    if want_json(json_out):
        echo_json(rows)
    elif ok:  # when every index failed, the error lines are the whole story: no empty table
        echo_table(ok, ["retriever", "window", "status", "rspec", "articles", "units", "encoded", "reused", "build_s",
                        "folder"])
    if failed:
        raise OkgenError(f"{failed} of {len(rows)} indexes failed")


def warn_short_windows(snap, windows: list[int]) -> None:
    """One warning line per window the stored news does not reach back through (a store that
    starts later): its index is not a w-day haystack, whatever its name says."""
    from okgen.retrieval.windows import window_coverage

    for cov in window_coverage(snap, windows).values():
        if cov.short:
            warn(f"okgen: warning: {cov.warning()}")


def _build_row(idx) -> dict:
    """A built or reused index as a result row; says on stderr what was encoded or reused.

    A reused index shows no build time: its manifest's is the original build's, not this run's.
    """
    counts, name, w = idx.encode_counts, idx.name, idx.window
    row = {"status": "reused" if idx.reused else "built", "rspec": idx.spec_hash, "articles": idx.num_docs,
           "units": idx.num_units, "encoded": counts.encoded if counts else None,
           "reused": counts.reused if counts else None, "build_s": None if idx.reused else idx.manifest.build_seconds,
           "built_at": idx.manifest.built_at.isoformat(), "folder": str(idx.folder), "error": None}
    if idx.reused:
        if idx.query_counts is not None:  # a dense index: all its vectors are reused, none encoded
            row.update(encoded=0, reused=idx.num_units)
        note(f"okgen: {name}, {w}-day window: existing index reused (built {idx.manifest.built_at:%Y-%m-%d %H:%M} UTC; "
             "--rebuild replaces it)")
    elif counts:
        note(f"okgen: {name}, {w}-day window: {counts.encoded} passages encoded, "
             f"{counts.reused} vectors reused from the store")
    return row


@index.command("ls")
@json_option
def ls(json_out: bool) -> None:
    """List the indexes of the workspace (data/indexes)."""
    from okgen.retrieval.index import disk_bytes, list_indexes

    ws = get_ctx().workspace
    rows = []
    listed = sorted(list_indexes(ws), key=lambda t: (str(t[1].date), t[1].content_hash, t[1].spec_name, t[1].window)
                    if t[1] else ("~", str(t[0]), "", 0))  # by date, then name; unreadable last
    for folder, m, err in listed:
        if m is None:
            rows.append({"folder": str(folder), "error": err})
            continue
        rows.append({"date": str(m.date), "snapshot": m.content_hash[:12], "retriever": m.spec_name, "rspec": m.spec_hash,
                     "window": m.window, "articles": m.num_articles, "units": m.num_units,
                     "mb": round(disk_bytes(folder) / 1e6, 2), "built": m.built_at.isoformat(), "folder": str(folder),
                     "error": None})
    if want_json(json_out):
        echo_json(rows)
        return
    if not rows:
        click.echo(f"no indexes in {ws.index_dir} (okgen index build makes one)", err=True)
        return
    echo_table([r for r in rows if not r.get("error")], ["date", "snapshot", "retriever", "rspec", "window", "articles", "units", "mb"])
    for r in rows:
        if r.get("error"):
            click.echo(f"unreadable: {r['folder']}: {r['error']}", err=True)


@index.command("search")
@click.option("--signature", "ref", required=True, help="Snapshot: signature, content hash, folder or archive.")
@click.option("--retriever", required=True, help="Spec name or path to a .toml spec.")
@click.option("--window", type=int, required=True, help="Window in days.")
@click.option("-k", "k", type=int, default=5, show_default=True, help="Results per query.")
@click.option("--passages", is_flag=True, help="Show passages (units) instead of articles.")
@click.option("--no-build", is_flag=True, help="Fail instead of building a missing index.")
@click.argument("queries", nargs=-1, required=True)
@json_option
def search(ref: str, retriever: str, window: int, k: int, passages: bool, no_build: bool,
           queries: tuple[str, ...], json_out: bool) -> None:
    """Search a window's index with one or more QUERIES (article hits, or passages with --passages)."""
    from okgen.retrieval.index import open_index
    from okgen.snapshot.store import resolve

    if k < 1:  # the command line is wrong: a usage error (exit 2), as in retrieval-eval --k
        raise click.UsageError(f"-k must be >= 1, got {k}")
    ws = get_ctx().workspace
    snap = resolve(ref, ws)
    idx = open_index(snap, retriever, window, ws, build=not no_build)
    titles = {a.id: a.title for a in snap.window(window)}
    # Which index answered: a number read off a search is only worth the snapshot, window and spec.
    note(f"okgen: {idx.name} (rspec {idx.spec_hash}), {window}-day window of {snap.manifest.date} "
         f"({idx.num_docs} articles), snapshot {snap.name}")
    rows = []
    if passages:
        for qi, hits in enumerate(idx.search_units(list(queries), k)):
            rows += [{"query": qi + 1, "rank": h.rank, "score": round(h.score, 4), "unit": h.unit_id,
                      "title": titles.get(h.article_id, ""), "text": h.text} for h in hits]
    else:
        for qi, hits in enumerate(idx.search(list(queries), k)):
            rows += [{"query": qi + 1, "rank": h.rank, "score": round(h.score, 4), "article": h.doc_id,
                      "title": titles.get(h.doc_id, "")} for h in hits]
    if want_json(json_out):
        echo_json(rows)
        return
    if not rows:
        click.echo("no results (no query had an indexable token)", err=True)
        return
    cols = ["query", "rank", "score", "unit", "title"] if passages else ["query", "rank", "score", "article", "title"]
    echo_table(rows, cols)
