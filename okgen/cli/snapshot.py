"""``okgen snapshot``: list, show, verify, archive and extract snapshots."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import click

from okgen.cli.common import (
    echo_json,
    echo_kv,
    echo_table,
    get_ctx,
    json_option,
    note,
    progress_enabled,
    split_list,
    want_json,
)
from okgen.errors import IntegrityError, OkgenError


@click.group()
def snapshot() -> None:
    """Build, list, show, verify and import snapshots."""


@snapshot.command("ls")
@json_option
def ls(json_out: bool) -> None:
    """List the snapshots of the workspace (catalogue records and folders), newest first."""
    from okgen.snapshot.store import list_snapshots

    ws = get_ctx().workspace
    rows = []
    for entry, snap in list_snapshots(ws):
        if entry is not None:
            rows.append({
                "date": str(entry.date), "hash": entry.content_hash[:12], "questions": entry.questions,
                "local": "yes" if snap is not None else "no", "text": "yes" if entry.text_included else "no",
                "name": entry.name, "signature": entry.short_signature,
            })
        elif snap is not None:
            m = snap.manifest
            rows.append({
                "date": str(m.date), "hash": m.content_hash[:12], "questions": m.counts.get("questions"),
                "local": "yes", "text": "yes" if m.text_included else "no", "name": snap.name,
                "signature": snap.signature.short,
            })
    if want_json(json_out):
        echo_json(rows)
        return
    if not rows:
        click.echo(f"no snapshots in {ws.home} (okgen daily builds one)", err=True)
        return
    echo_table(rows, ["date", "hash", "questions", "local", "text", "name"])


@snapshot.command("show")
@click.argument("ref")
@json_option
def show(ref: str, json_out: bool) -> None:
    """Show a snapshot's signature, counts and funnel. REF: signature, short form, hash, folder or archive."""
    from okgen.snapshot.quality import load_quality, render_quality
    from okgen.snapshot.store import resolve

    snap = resolve(ref, get_ctx().workspace)
    m = snap.manifest
    quality = load_quality(snap.path, m.content_hash)
    if want_json(json_out):
        data = m.model_dump(mode="json")
        data["short_signature"] = snap.signature.short
        data["path"] = str(snap.path)
        data["quality"] = quality.model_dump(mode="json") if quality else None
        echo_json(data)
        return
    c = m.counts
    echo_kv([
        ("signature", m.signature),
        ("short", snap.signature.short),
        ("path", snap.path),
        ("date", m.date),
        ("created", m.created_at.isoformat()),
        ("questions", c.get("questions")),
        ("articles", f"{c.get('articles')} ({', '.join(f'{w}d: {n}' for w, n in sorted(c.get('articles_by_window', {}).items(), key=lambda x: int(x[0])))})"),
        ("generator", m.generator.model),
        ("validator", m.validator.model if m.validator else "none"),
        ("probes", ", ".join(p.model for p in m.probes) or "none"),
        ("seed", m.seed),
        ("answer positions", ", ".join(f"{k}: {v}" for k, v in c.get("answer_positions", {}).items())),
        ("texts", "included" if m.text_included else "omitted"),
    ])
    if m.funnel:
        from okgen.generate.funnel import render_funnel

        try:  # the generation funnel, as okgen generate printed it (validator, probes, usage and cost too)
            lines = render_funnel(m.funnel, this_run=False).splitlines()[1:]
        except (KeyError, TypeError, ValueError):  # an imported set's own record
            lines = [f"  {k}: {v}" for k, v in m.funnel.items() if not isinstance(v, dict | list) and v is not None]
        click.echo("funnel:")
        for line in lines:
            click.echo(line)
    if quality is not None:
        click.echo("quality:")
        for line in render_quality(quality):
            click.echo(f"  {line}")


@snapshot.command("verify")
@click.argument("ref")
@click.option("--pubkey", type=click.Path(dir_okay=False, exists=True), help="Also check the Ed25519 manifest signature with this public key.")
@json_option
def verify(ref: str, pubkey: str | None, json_out: bool) -> None:
    """Recompute every hash of a snapshot and report any changed byte with its file.

    REF is a snapshot folder, a .tar.gz archive, or a signature (long, short, or hash) from the
    catalogue. Exits with status 1 when anything is wrong.
    """
    from okgen.signature import expected_snapshot, looks_like_signature
    from okgen.snapshot.archive import safe_extract
    from okgen.snapshot.store import catalogue, path_exists, resolve
    from okgen.snapshot.verify import verify_folder

    ws = get_ctx().workspace
    p = Path(ref).expanduser()
    archive_problem = None
    if not looks_like_signature(ref) and path_exists(p) and p.is_file():
        with tempfile.TemporaryDirectory(prefix="okgen-verify-") as tmp:
            folder = safe_extract(p, tmp, verify=False)  # the report below lists every problem
            report = verify_folder(folder)
            report.path = str(p)
            _check_pubkey(report, folder, pubkey)
            sig_present = (folder / "manifest.sig").is_file()
    else:
        snap = resolve(ref, ws)
        sig_present = (snap.path / "manifest.sig").is_file()
        report = verify_folder(snap.path, expected_snapshot(ref, snap.signature))
        _check_pubkey(report, snap.path, pubkey)
        entry = catalogue(ws).get_by_name(snap.name)
        if entry is not None and entry.archive and entry.archive_sha256:
            from okgen.hashing import sha256_file

            a = catalogue(ws).resolve_path(entry.archive)
            if a is not None and a.is_file() and sha256_file(a) != entry.archive_sha256:
                archive_problem = f"{a.name}: archive SHA-256 differs from the catalogue record"
                report.add(a.name, "archive SHA-256 differs from the catalogue record")
    if want_json(json_out):
        echo_json(report.to_dict())
    elif report.ok:
        evidence = {True: "; quality.json signed too", False: "; quality.json not covered by it"}.get(report.quality_signed, "")
        extra = f" (manifest signature verified{evidence})" if report.signed else ""
        if not report.signed and pubkey is None and sig_present:
            extra = " (it has a manifest.sig, not checked: give --pubkey KEY to check it)"
        click.echo(f"ok: {report.path}: {len(report.checked)} files verified{extra}")
    else:
        for prob in report.problems:
            click.echo(f"FAIL {prob}", err=True)
    if not report.ok:
        first = report.problems[0]
        raise IntegrityError(f"{report.path}: {len(report.problems)} problem(s); first: {first}" if archive_problem is None else archive_problem)


def _check_pubkey(report, folder: Path, pubkey: str | None) -> None:
    if pubkey is None:
        return
    try:
        from okgen.snapshot.signing import verify_manifest_signature
    except ImportError:  # pragma: no cover - signing lands with publishing
        report.add("manifest.sig", "manifest signing is not available in this okgen")
        return
    try:
        verify_manifest_signature(folder, Path(pubkey))
        report.signed = True
        if (folder / "quality.json").is_file():
            from okgen.snapshot.signing import quality_signed

            report.quality_signed = quality_signed(folder)
    except IntegrityError as e:
        report.signed = False
        report.add("manifest.sig", str(e))


@snapshot.command("archive")
@click.argument("ref")
@click.option("--out", type=click.Path(dir_okay=False), help="Archive path (default: next to the folder).")
@json_option
def archive_cmd(ref: str, out: str | None, json_out: bool) -> None:
    """Write the deterministic .tar.gz of a snapshot and record its checksum in the catalogue."""
    from okgen.snapshot.archive import make_archive
    from okgen.snapshot.store import register, resolve

    ws = get_ctx().workspace
    snap = resolve(ref, ws)
    path = Path(out) if out else snap.path.parent / f"{snap.name}.tar.gz"
    make_archive(snap.path, path)
    register(snap, ws, archive=path)
    if want_json(json_out):
        from okgen.hashing import sha256_file

        echo_json({"archive": str(path), "bytes": path.stat().st_size, "sha256": sha256_file(path),
                   "signature": snap.manifest.signature})
        return
    click.echo(str(path))


@snapshot.command("extract")
@click.argument("archive", type=click.Path(dir_okay=False, exists=True))
@click.option("--to", "dest", type=click.Path(file_okay=False), help="Folder to extract into (default: the workspace's snapshots/).")
def extract(archive: str, dest: str | None) -> None:
    """Safely extract a snapshot archive and register it in the catalogue."""
    from okgen.snapshot.archive import safe_extract
    from okgen.snapshot.store import Snapshot, register

    ws = get_ctx().workspace
    folder = safe_extract(archive, Path(dest) if dest else ws.snapshots_dir)
    snap = Snapshot(folder)
    register(snap, ws)
    click.echo(str(folder))


@snapshot.command("import")
@click.argument("file", type=click.Path(dir_okay=False, exists=True))
@click.option("--date", "date_", default=None, help="Import only the questions of this date (YYYY-MM-DD).")
@click.option("--all-dates", is_flag=True, help="Build one snapshot per date found in the file.")
@click.option("--windows", default="1,5,10", show_default=True, help="News windows (days) the corpus supports.")
@click.option("--name", default=None, help="Name of the set (generator field; default: the file name).")
@click.option("--strict", is_flag=True, help="Stop at the first bad line instead of skipping it.")
@json_option
def import_cmd(file: str, date_: str | None, all_dates: bool, windows: str, name: str | None, strict: bool,
               json_out: bool) -> None:
    """Turn an external multiple-choice JSONL set (question, choices, answer, date, optional url/text) into snapshots."""
    import datetime as dt

    from okgen.errors import ConfigError
    from okgen.eval.importer import SKIPS_SHOWN, import_mc_jsonl

    try:
        day = dt.date.fromisoformat(date_) if date_ else None
        wins = tuple(int(w) for w in split_list(windows, "--windows"))
    except ValueError:
        raise ConfigError("--date takes YYYY-MM-DD and --windows comma-separated day counts") from None
    if not wins:
        raise ConfigError("--windows needs at least one day count (e.g. 1,5,10)")
    res = import_mc_jsonl(file, get_ctx().workspace, date=day, all_dates=all_dates, windows=wins, name=name, strict=strict)
    rows = [{"date": str(s.manifest.date), "questions": s.manifest.counts.get("questions"),
             "articles": s.manifest.counts.get("articles"), "name": s.name, "signature": s.signature.short,
             "new": "no" if s.name in res.existing else "yes"} for s in res.snapshots]
    if want_json(json_out):
        echo_json({"snapshots": rows, "items": res.items, "skipped": [{"line": n, "reason": r} for n, r in res.skipped]})
        return
    echo_table(rows, ["date", "questions", "articles", "new", "name"])
    if res.skipped:
        n = len(res.skipped)  # the importer has warned of the first five, line by line
        click.echo(f"{n} line(s) skipped" + (f" (the first {SKIPS_SHOWN} listed above)" if n > SKIPS_SHOWN else " (above)"),
                   err=True)


def finished_run(ws: Any, date: Any, generator: str | None, validator: str | None,
                 explicit: bool = True) -> tuple[dict[str, Any] | None, str | None]:
    """The arguments of the date's newest complete generation run by ``generator`` (its spec as
    typed, or its model name; None: any) and ``validator`` that covers the date's articles as the
    store holds them now, and else why none can be taken up (None, None: nothing stands in the way
    of generating). ``explicit``: the generator was asked for on the command line (no run by
    another one is a reason not to generate with it)."""
    from okgen.generate.store import GenerateStore
    from okgen.ingest.store import ArticleStore

    def same(given: str | None, typed: str | None, info: dict[str, Any] | None) -> bool:
        if given is None:
            return True
        if given in ("", "none"):
            return typed in (None, "", "none")
        return given == typed or (info is not None and given == info.get("model"))

    with ArticleStore(ws.db_path) as articles:
        now = {a.id: a.text_sha256 for a in articles.articles_for_date(date)}
    why, others = None, []
    with GenerateStore(ws.db_path) as store:
        unrecorded = store.unrecorded_runs(date.isoformat())
        for r in store.complete_runs(date.isoformat()):
            a, p = r["args"], r["params"]
            if not (same(generator, a["generator"], p.get("generator")) and same(validator, a["validator"], p.get("validator"))):
                others.append(f"{a['generator']} (validator {a['validator'] or 'none'})")
                continue
            done = store.finished_hashes(r["run_key"])
            changed = sum(1 for i, h in now.items() if done.get(i) != h)
            if a.get("articles_given") or changed:  # starting it again would generate: not a read
                why = why or ((f"the finished generation by {a['generator']} was made from an --articles file"
                               if a.get("articles_given") else
                               f"the finished generation by {a['generator']} lacks {changed} of the date's "
                               f"{len(now)} articles as the store holds them now (new or changed since)")
                              + f": finish it with `okgen generate --date {date}` and the same settings, then build "
                              "(snapshot build only reads a finished generation; it spends nothing on one)")
                continue
            return a, None
    if why is None and others and not explicit:  # finished questions by another generator: no reason to pay again
        return None, (f"no finished generation of {date} by {generator} (okgen.toml's generator, validator "
                      f"{validator or 'any'}); the date has finished runs by {', '.join(dict.fromkeys(others))}: "
                      "name one with --generator/--validator, or pass the one you want to generate with --generator")
    if why is None and unrecorded:
        why = (f"the date's {unrecorded} finished run(s) were made before okgen recorded run arguments and cannot "
               f"be read back: rerun `okgen generate --date {date}` with their settings (answered from the store "
               "and the response cache), then build")
    return None, why


@snapshot.command("build")
@click.option("--date", "date_s", required=True, help="News date (YYYY-MM-DD).")
@click.option("--generator", metavar="SPEC", help="Generator whose finished questions to use (default: [generate] generator when set, else the newest finished run's).")
@click.option("--validator", metavar="SPEC", help="Validator of that generation run (default: [generate] validator when a generator is set there).")
@click.option("--windows", default="1,5,10", show_default=True, help="News windows in days (the longest bounds the corpus).")
@click.option("--no-text", is_flag=True, help="Build without article bodies (URLs, titles and text hashes only).")
@json_option
def build_cmd(date_s: str, generator: str | None, validator: str | None, windows: str, no_text: bool, json_out: bool) -> None:
    """Build a date's snapshot from the store: its generated questions and the window's articles.

    Takes the date's finished generation (refusing, in one line naming `okgen generate --date D`,
    when any article has no finished questions under these settings), then writes the snapshot
    folder, its archive and its catalogue record, and prints the signature.

    Example: okgen snapshot build --date 2026-11-21
    """
    import datetime as dt

    from okgen.daily.pipeline import DailyOptions
    from okgen.generate.pipeline import DEFAULT_PER_ARTICLE, DEFAULT_SEED, run_generate
    from okgen.snapshot.from_store import build_from_store

    try:
        date = dt.date.fromisoformat(date_s)
    except ValueError:
        raise click.BadParameter(f"{date_s!r} is not a date (YYYY-MM-DD)", param_hint="--date") from None
    try:
        wins = tuple(sorted({int(w) for w in split_list(windows, "--windows")}))
    except ValueError:
        raise click.BadParameter(f"{windows!r} is not a comma-separated list of days", param_hint="--windows") from None
    ws = get_ctx().workspace
    o = DailyOptions.resolve(ws, generator=generator, validator=validator, check_indexes=False)
    explicit = generator is not None
    if generator is None and o.generator_chosen:  # okgen.toml names the generator: its run, not any newer one
        generator, validator = o.generator, validator if validator is not None else (o.validator or "none")
    run, why = finished_run(ws, date, generator, validator, explicit)
    if run is None and why is not None:
        raise OkgenError(why)
    if run is not None:  # the date's finished generation, started again with its own arguments: one read
        note(f"questions: the finished generation of {date} by {run['generator']} "
             f"(validator {run['validator'] or 'none'}, {run['per_article']} per article, "
             f"probes {', '.join(run['probes']) or 'none'})")
        res = run_generate(date, ws, generator=run["generator"], validator=run["validator"], probes=run["probes"],
                           per_article=run["per_article"], seed=run["seed"], drop_known=run["drop_known"],
                           agents_dir=run["agents_dir"], progress=False, require_finished=True)
    else:
        note(f"questions: no finished generation of {date} by {o.generator}: generating now "
             f"(validator {o.validator or 'none'}; the [generate] settings of okgen.toml)")
        res = run_generate(date, ws, generator=o.generator, validator=o.validator, probes=o.probes,
                           per_article=o.per_article or DEFAULT_PER_ARTICLE, seed=o.seed if o.seed is not None else DEFAULT_SEED,
                           max_cost=o.max_cost, progress=progress_enabled())
    snap = build_from_store(date, ws, res, windows=wins, include_text=not no_text)
    if want_json(json_out):
        echo_json({"path": str(snap.path), "signature": snap.manifest.signature, "short": snap.signature.short})
        return
    note(f"snapshot: {snap.path}")
    note(f"short:    {snap.signature.short}")
    click.echo(snap.manifest.signature)
