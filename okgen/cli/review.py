"""``okgen review``: review sheets for a snapshot, and their verdicts back into its quality evidence."""

from __future__ import annotations

import click

from okgen.cli.common import echo_json, get_ctx, json_option, want_json


class _ReviewGroup(click.Group):
    """``okgen review SIG ...`` writes a sheet; ``okgen review import FILE...`` records one."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h"):
            args = ["sheet", *args]
        return super().parse_args(ctx, args)


@click.group(cls=_ReviewGroup)
def review() -> None:
    """Review a snapshot's questions by hand, as OKBench's authors did.

    \b
      okgen review SIG --sample 80 --seed 7 --out reviews/     write a review sheet (CSV and JSONL)
      okgen review import reviews/review-*-s7.csv [MORE...]    record the filled sheets' verdicts

    Rate each criterion 0 or 1 and put your name under reviewer; leave a row blank to skip it:

    
      clear           understood without the article: self-contained, names who and what, grammatical
      answerable      given the article, exactly one option is right
      answer_correct  the marked option is that one
      distractors_ok  every wrong option is plausible, of the answer's kind, and well formed
      no_giveaway     neither the stem nor the options' shape gives the answer away
      day_news        it tests what the article reports of that day, not timeless knowledge
      publishable     all of the above: you would print it in a daily news quiz as is

    Import records the usable (publishable) rate with its 95 % interval, and the reviewers'
    agreement, in the snapshot's quality.json; `okgen snapshot show` prints them
    (docs/snapshots.md, "The review loop").
    """


@review.command("sheet")
@click.argument("ref")
@click.option("--sample", type=click.IntRange(1), default=80, show_default=True, help="Questions in the sheet.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the sample.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default=".", show_default=True,
              help="Folder for review-<hash>-s<seed>.csv and .jsonl.")
@click.option("--overwrite", is_flag=True, help="Replace a different sheet of the same name (its verdicts are lost).")
@json_option
def sheet(ref: str, sample: int, seed: int, out_dir: str, overwrite: bool, json_out: bool) -> None:
    """Write a review sheet for a seeded sample of snapshot REF's questions.

    REF: signature, short form, hash, folder or archive.
    """
    from okgen.generate.review import write_sheet
    from okgen.snapshot.store import resolve

    snap = resolve(ref, get_ctx().workspace)
    csv_path, jsonl_path = write_sheet(snap, out_dir, sample=sample, seed=seed, overwrite=overwrite)
    rows = min(sample, len(snap.questions))
    if want_json(json_out):
        echo_json({"csv": str(csv_path), "jsonl": str(jsonl_path), "snapshot": snap.name, "questions": rows})
    else:
        click.echo(f"wrote {csv_path}\nwrote {jsonl_path}")
        if rows < sample:
            click.echo(f"okgen: the snapshot has {rows} question(s): the sheet holds them all, not {sample}", err=True)


@review.command("import")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("--replace", is_flag=True, help="Drop the recorded verdicts of reviewers these sheets lack.")
@json_option
def import_cmd(files: tuple[str, ...], replace: bool, json_out: bool) -> None:
    """Record the verdicts of filled review sheets (one per reviewer) in their snapshot's quality.json.

    Every rating is kept with its notes: another reviewer's sheet, imported later, joins the
    recorded verdicts; a reviewer's own sheet imported again replaces theirs; --replace drops
    the reviewers these sheets lack."""
    from okgen.generate.review import import_sheets

    ws = get_ctx().workspace
    snap, summary = import_sheets(files, ws, replace=replace)
    from okgen.snapshot.store import catalogue

    entry = catalogue(ws).get_by_name(snap.name)
    for src in entry.sources if entry is not None else ():  # a release made before this review lacks it
        if src.startswith(("http://", "https://")):
            continue  # pulled from a server: that copy is its publisher's, not one to update from here
        click.echo(f"okgen: the copy of {snap.name} at {src} (published or pulled before this review) lacks it; "
                   f"a release of yours is updated by okgen publish {snap.signature.short_hash} --to {src}", err=True)
    if want_json(json_out):
        echo_json({"snapshot": snap.name, "review": summary.model_dump(mode="json")})
        return
    lo, hi = summary.usable_ci95
    click.echo(f"{snap.name}: {summary.usable}/{summary.items} questions usable ({summary.usable_rate:.1%}, "
               f"95% CI {lo:.1%}-{hi:.1%}); {summary.ratings} rating{'s' * (summary.ratings != 1)} by "
               f"{', '.join(summary.reviewers)}")
    for c, n in summary.criteria.items():
        click.echo(f"  {c:<15} {n.yes}/{n.rated}")
    if summary.agreement:
        click.echo("  agreement: " + ", ".join(f"{k} {v:.2f}" for k, v in summary.agreement.items()))
        import importlib.util
        import itertools

        if importlib.util.find_spec("sklearn") is not None:
            lacking = [f"{a}/{b}" for a, b in itertools.combinations(sorted(summary.reviewers), 2)
                       if f"kappa {a}/{b}" not in summary.agreement]
            if lacking:  # kappa is undefined when a reviewer gave one rating to every shared question
                click.echo(f"  no kappa for {', '.join(lacking)}: no shared question, or one of them rated every "
                           "shared question the same")
