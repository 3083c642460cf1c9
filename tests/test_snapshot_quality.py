"""quality.json on a built snapshot, and the review loop: sheet out, verdicts in, bad input refused."""

from __future__ import annotations

import csv
import json
import logging
from collections import Counter

import pytest

from okgen.cli.main import main
from okgen.generate.review import COLUMNS, CRITERIA
from okgen.snapshot.quality import QUALITY, QualityEvidence, compute_quality, load_quality
from okgen.snapshot.verify import verify_folder
from okgen.testing.review import fill, write_rows

pytest.importorskip("spacy")


def run_cli(capsys, *args: str) -> tuple[int, str, str]:
    try:
        with pytest.raises(SystemExit) as e:
            main(list(args))
    finally:
        root = logging.getLogger()
        for h in [h for h in root.handlers if getattr(h, "_okgen", False)]:
            root.removeHandler(h)
    out = capsys.readouterr()
    return e.value.code, out.out, out.err


FUNNEL = {"quality_gates": True, "candidates": 50, "checks": {"passed": 40, "rejected": {"stem_overlap": 6, "fluency": 4}},
          "check_failures": {"stem_overlap": 9, "fluency": 4}, "dedup": {"kept": 38, "near_duplicate": 2,
                                                                      "near_duplicate_recent": 0},
          "balance": {"kept": 38, "outlet_balance": 0, "by_outlet": {}}}


def test_quality_json_is_written_beside_the_manifest_and_verified(make_snapshot):
    snap = make_snapshot(funnel=FUNNEL)
    m = snap.manifest
    path = snap.path / QUALITY
    assert path.is_file() and QUALITY not in m.files  # outside the content hash and the file list
    q = load_quality(snap.path, m.content_hash)
    assert q is not None and q.content_hash == m.content_hash and q.questions == len(snap.questions)
    assert q.gates["stem_overlap"].failed == 9 and q.gates["stem_overlap"].rejected == 6
    assert q.gates["stem_overlap"].rate == pytest.approx(9 / 50)
    # A gate no candidate failed is listed with 0: the evidence says it ran.
    assert q.gates["giveaway"].failed == 0 and q.gates["one_answer"].rate == 0.0
    from okgen.generate.gates import GATES

    assert set(GATES) <= set(q.gates)
    off = compute_quality(snap.questions, snap.corpus, {**FUNNEL, "quality_gates": False}, m.content_hash, 0)
    assert set(off.gates) == {"stem_overlap", "fluency"}  # gates off: only what failed
    unsaid = compute_quality(snap.questions, snap.corpus, {k: v for k, v in FUNNEL.items() if k != "quality_gates"},
                             m.content_hash, 0)
    assert set(unsaid.gates) == {"stem_overlap", "fluency"}  # an older funnel, which does not say: the same
    assert q.day_level["near_duplicate"] == 2
    assert q.outlets == dict(Counter(x.source for x in snap.questions))
    assert sum(q.answer_types.values()) == len(snap.questions)
    o = q.stem_overlap
    assert o is not None and sum(o["histogram"].values()) == len(snap.questions) and o["max"] >= o["median"]
    t = q.distractor_type_agreement
    assert t is not None and 0 <= t["agreeing"] <= t["distractors"]
    x = q.options_answering_another
    assert x is not None and x["distractors"] == sum(
        1 for c in snap.questions for o in c.choices if o != c.answer and not any(ch.isdigit() for ch in o))
    assert "options answering another question" in (snap.path / "README.md").read_text()
    ids = {x.id for x in snap.questions}
    assert len(q.sample) == min(20, len(ids)) and {s.id for s in q.sample} <= ids
    assert "## Quality evidence" in (snap.path / "README.md").read_text()
    assert verify_folder(snap.path).ok
    # Evidence about another snapshot is refused on load and reported by verify.
    data = json.loads(path.read_text())
    data["content_hash"] = "f" * 64
    path.write_text(json.dumps(data))
    rep = verify_folder(snap.path)
    assert not rep.ok and any(QUALITY in str(p) for p in rep.problems)


def test_options_that_answer_another_question_are_counted(make_snapshot):
    from okgen.snapshot.quality import _cross_answers

    qs = [q for q in make_snapshot().questions if not any(ch.isdigit() for ch in "".join(q.choices))][:3]
    assert len(qs) == 3 and len({q.answer for q in qs}) == 3
    clean = _cross_answers(qs)
    assert clean["distractors"] == sum(len(q.choices) - 1 for q in qs) and clean["answering_another"] == 0
    # The second question offers the first one's answer, written with another case and "the".
    i = next(j for j, c in enumerate(qs[1].choices) if c != qs[1].answer)
    choices = list(qs[1].choices)
    choices[i] = "The " + qs[0].answer.upper()
    qs[1] = qs[1].model_copy(update={"choices": choices})
    got = _cross_answers(qs)
    assert got["answering_another"] == 1 and got["examples"] == [f"The {qs[0].answer.upper()} (in {qs[1].id})"]
    assert got["rate"] == round(1 / got["distractors"], 4)
    # Numbers and dates do not count: each is drawn around its own answer.
    choices[i] = "12%"
    numbered = [qs[0], qs[1].model_copy(update={"choices": choices}), qs[2]]
    assert _cross_answers(numbered)["distractors"] == got["distractors"] - 1


def test_the_same_snapshot_gives_the_same_sample(make_snapshot, workspace, tmp_path):
    a = make_snapshot()
    first = QualityEvidence.model_validate_json((a.path / QUALITY).read_bytes())
    b = make_snapshot(out_dir=tmp_path / "again", register_it=False, archive=False)
    second = QualityEvidence.model_validate_json((b.path / QUALITY).read_bytes())
    assert first.sample == second.sample and first.sample_seed == 13


def test_review_sheet_round_trip_with_two_reviewers(make_snapshot, tmp_path, capsys):
    from scipy.stats import binomtest

    snap = make_snapshot()
    code, out, err = run_cli(capsys, "review", snap.signature.short, "--sample", "12", "--seed", "5",
                             "--out", str(tmp_path / "rev"))
    assert code == 0, err
    sheet = tmp_path / "rev" / f"review-{snap.manifest.content_hash[:12]}-s5.csv"
    jsonl = sheet.with_suffix(".jsonl")
    rows = list(csv.DictReader(sheet.open(encoding="utf-8")))
    assert len(rows) == 12 and list(rows[0]) == list(COLUMNS)
    assert "question(s)" not in err  # 12 asked, 12 in the sheet: no notice
    # More asked than the snapshot holds: the sheet holds them all, and says so in one line.
    n = len(snap.questions)
    code, _, err = run_cli(capsys, "review", snap.signature.short, "--sample", str(n + 50), "--out", str(tmp_path / "all"))
    assert code == 0 and f"the snapshot has {n} question(s): the sheet holds them all, not {n + 50}" in err, err
    assert [json.loads(x)["question_id"] for x in jsonl.read_text().splitlines()] == [r["question_id"] for r in rows]
    by_id = {q.id: q for q in snap.questions}
    for r in rows:
        q = by_id[r["question_id"]]
        assert r["marked_answer"] == f"{'ABCD'[q.answer_index]}: {q.answer}" and [r[x] for x in "ABCD"] == list(q.choices)
        assert all(r[c] == "" for c in CRITERIA)
    b = tmp_path / "b.csv"
    b.write_bytes(sheet.read_bytes())
    fill(sheet, "ana", lambda i: int(i % 3 != 0))  # 8 of 12
    fill(b, "ben", lambda i: int(i % 4 != 0))  # 9 of 12
    code, out, err = run_cli(capsys, "review", "import", str(sheet), str(b))
    assert code == 0, err
    r = load_quality(snap.path, snap.manifest.content_hash).review
    # usable per question, when both call it publishable: i % 3 and i % 4 both non-zero, 6 of 12
    assert r.reviewers == ("ana", "ben") and r.items == 12 and r.ratings == 24 and r.usable == 6
    ci = binomtest(6, 12).proportion_ci(method="wilson")
    assert r.usable_ci95 == (round(ci.low, 4), round(ci.high, 4))
    assert r.criteria["clear"].yes == 24
    same = sum(int(i % 3 != 0) == int(i % 4 != 0) for i in range(12))
    assert r.agreement["raw"] == round(same / 12, 4) and "kappa ana/ben" in r.agreement
    code, out, _ = run_cli(capsys, "snapshot", "show", snap.signature.short)
    assert code == 0 and "review: 6/12 questions usable" in out and "24 ratings by ana, ben" in out
    assert "reviewer agreement" in out
    # A rate that 4 decimals do not hold exactly (6/9 is stored as 0.6667) still reads per question.
    from okgen.snapshot.quality import render_quality

    q = load_quality(snap.path, snap.manifest.content_hash)
    nine = q.model_copy(update={"review": r.model_copy(update={"items": 9, "usable": 6, "usable_rate": 0.6667, "ratings": 18})})
    assert any(line.startswith("review: 6/9 questions usable (66.7%") for line in render_quality(nine))
    # Reports (okgen report) show the evidence of the runs' snapshots found in the workspace.
    from okgen.settings import Workspace
    from okgen.snapshot.quality import render_quality_markdown
    from okgen.snapshot.store import quality_of_snapshots

    short = snap.manifest.content_hash[:12]
    found = quality_of_snapshots([short, "0123456789ab"], Workspace.from_env())
    assert list(found) == [short] and "review: 6/12 questions usable" in render_quality_markdown(found)


@pytest.mark.parametrize("breakage, message", [
    (lambda rows: [{k: v for k, v in r.items() if k != "day_news"} for r in rows], "missing column(s) day_news"),
    (lambda rows: [{**r, "question_id": "0000000000000000"} for r in rows], "not in snapshot"),
    (lambda rows: [{**r, "publishable": "2"} for r in rows], "publishable must be 0 or 1"),
    (lambda rows: [{**r, "day_news": ""} for r in rows], "is rated by ana but day_news is blank: rate it 0 or 1, or clear"),
    (lambda rows: [{**r, "reviewer": ""} for r in rows], "has no reviewer"),
    (lambda rows: [{**r, "answer_correct": "0"} for r in rows], "is publishable but answer_correct is 0"),
    (lambda rows: [{**r, "snapshot": ""} if i == 2 else r for i, r in enumerate(rows)],
     "row 4 is rated by ana but its snapshot cell is blank"),
])
def test_bad_sheets_are_one_line_errors_and_write_nothing(make_snapshot, tmp_path, capsys, breakage, message):
    snap = make_snapshot()
    assert run_cli(capsys, "review", snap.signature.short, "--sample", "5", "--out", str(tmp_path))[0] == 0
    sheet = next(tmp_path.glob("review-*.csv"))
    fill(sheet, "ana", lambda i: 1)
    rows = breakage(list(csv.DictReader(sheet.open(encoding="utf-8"))))
    write_rows(sheet, rows, list(rows[0]))
    before = (snap.path / QUALITY).read_bytes()
    code, out, err = run_cli(capsys, "review", "import", str(sheet))
    assert code == 1 and message in err and len(err.strip().splitlines()) == 1
    assert (snap.path / QUALITY).read_bytes() == before


def test_a_filled_sheet_is_never_written_over(make_snapshot, tmp_path, capsys):
    # The documented workflow fills the written sheet in place: writing it again (or another
    # --sample under the same seed) would lose every verdict.
    snap = make_snapshot()
    args = ("review", snap.signature.short, "--sample", "5", "--seed", "3", "--out", str(tmp_path))
    assert run_cli(capsys, *args)[0] == 0
    sheet = next(tmp_path.glob("review-*-s3.csv"))
    assert run_cli(capsys, *args)[0] == 0  # the very same sheet again: nothing to lose
    fill(sheet, "ana", lambda i: 1)
    filled = sheet.read_bytes()
    for again in (args, (*args[:3], "4", *args[4:])):
        code, _, err = run_cli(capsys, *again)
        assert code == 1 and "exists and differs from this sheet" in err and "--overwrite" in err, err
        assert sheet.read_bytes() == filled
    code, _, err = run_cli(capsys, *args, "--overwrite")
    assert code == 0 and sheet.read_bytes() != filled and "ana" not in sheet.read_text()


def test_unrated_rows_are_skipped_and_spreadsheet_forms_read(make_snapshot, tmp_path, capsys):
    snap = make_snapshot()
    assert run_cli(capsys, "review", snap.signature.short, "--sample", "6", "--out", str(tmp_path))[0] == 0
    sheet = next(tmp_path.glob("review-*.csv"))
    rows = list(csv.DictReader(sheet.open(encoding="utf-8")))
    for i, r in enumerate(rows[:4]):  # two rows left blank: questions this reviewer did not rate
        r.update({c: "1.0" for c in CRITERIA}, reviewer="Ana " if i % 2 else "ana")  # a spreadsheet's "1.0"
    write_rows(sheet, rows)
    code, out, err = run_cli(capsys, "review", "import", str(sheet))
    assert code == 0, err
    r = load_quality(snap.path, snap.manifest.content_hash).review
    assert r.items == 4 and r.usable == 4 and r.reviewers == ("ana",)  # "Ana " is ana
    for row in rows:
        row.update({c: "" for c in CRITERIA}, reviewer="")
    write_rows(sheet, rows)
    code, _, err = run_cli(capsys, "review", "import", str(sheet))
    assert code == 1 and "no row is rated" in err


def test_a_row_cut_short_is_named_as_such(make_snapshot, tmp_path, capsys):
    snap = make_snapshot()
    assert run_cli(capsys, "review", snap.signature.short, "--sample", "5", "--out", str(tmp_path))[0] == 0
    sheet = next(tmp_path.glob("review-*.csv"))
    fill(sheet, "ana", lambda i: 1)
    lines = sheet.read_text(encoding="utf-8").splitlines(keepends=True)
    short = next(i for i, x in enumerate(lines) if i and x.count(",") > 3 and '"' not in x[:30])
    lines[short] = ",".join(lines[short].split(",")[:3]) + "\n"
    sheet.write_text("".join(lines), encoding="utf-8")
    before = (snap.path / QUALITY).read_bytes()
    code, _, err = run_cli(capsys, "review", "import", str(sheet))
    assert code == 1 and f"row {short + 1} has 3 field(s), the header {len(COLUMNS)}" in err, err
    assert (snap.path / QUALITY).read_bytes() == before


def test_a_spreadsheets_semicolon_or_legacy_encoding_sheet(make_snapshot, tmp_path, capsys):
    """A sheet a European-locale spreadsheet saved with ";" (and a BOM, CRLF) reads as the same
    sheet; one saved in the legacy encoding is one line asking for UTF-8."""
    snap = make_snapshot()
    assert run_cli(capsys, "review", snap.signature.short, "--sample", "5", "--out", str(tmp_path))[0] == 0
    sheet = next(tmp_path.glob("review-*.csv"))
    fill(sheet, "ana", lambda i: int(i != 2))
    rows = list(csv.DictReader(sheet.open(encoding="utf-8")))
    semi = tmp_path / "semi.csv"
    with semi.open("w", encoding="utf-8-sig", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]), delimiter=";", lineterminator="\r\n")
        w.writeheader()
        w.writerows(rows)
    code, out, err = run_cli(capsys, "review", "import", str(semi))
    assert code == 0, err
    r = load_quality(snap.path, snap.manifest.content_hash).review
    assert (r.items, r.usable) == (5, 4)
    tabs = tmp_path / "tabs.tsv"
    with tabs.open("w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]), delimiter="\t")
        w.writeheader()
        w.writerows(rows)
    code, out, err = run_cli(capsys, "review", "import", str(tabs))
    assert code == 0, err
    legacy = tmp_path / "legacy.csv"
    legacy.write_bytes(sheet.read_text(encoding="utf-8").replace("Question", "Question \u2019").encode("cp1252", "replace")
                       + "\u2019".encode("cp1252"))
    code, _, err = run_cli(capsys, "review", "import", str(legacy))
    assert code == 1 and "save the sheet as CSV UTF-8" in err and len(err.strip().splitlines()) == 1


def test_a_later_import_keeps_other_reviewers_verdicts_and_the_archive_carries_the_review(make_snapshot, tmp_path,
                                                                                            capsys):
    import tarfile

    snap = make_snapshot()
    assert run_cli(capsys, "review", snap.signature.short, "--sample", "4", "--out", str(tmp_path))[0] == 0
    ana = next(tmp_path.glob("review-*.csv"))
    ben = tmp_path / "ben.csv"
    ben.write_bytes(ana.read_bytes())
    fill(ana, "ana", lambda i: 1)
    fill(ben, "ben", lambda i: int(i % 2 == 0))
    code, out, _ = run_cli(capsys, "review", "import", str(ana), str(ben))
    assert code == 0 and "no kappa for ana/ben" in out  # ana rated every question 1: said, not left out silently
    both = load_quality(snap.path, snap.manifest.content_hash).review
    # A reviewer's sheet imported again replaces their verdicts and keeps the other's.
    rows = list(csv.DictReader(ben.open(encoding="utf-8")))
    write_rows(ben, [{**r, "publishable": "0", "notes": "options  of two kinds" if i == 0 else ""}
                     for i, r in enumerate(rows)], list(rows[0]))
    code, out, err = run_cli(capsys, "review", "import", str(ben))
    assert code == 0 and "by ana, ben" in out, err
    again = load_quality(snap.path, snap.manifest.content_hash).review
    assert again.reviewers == ("ana", "ben") and again.ratings == both.ratings == 8
    assert [v for v in again.verdicts if v.reviewer == "ana"] == [v for v in both.verdicts if v.reviewer == "ana"]
    assert sum(v.ratings["publishable"] for v in again.verdicts if v.reviewer == "ben") == 0
    assert again.usable == 0 < both.usable
    assert [v.notes for v in again.verdicts if v.reviewer == "ben"][0] == "options of two kinds"
    code, out, _ = run_cli(capsys, "snapshot", "show", snap.signature.short)
    assert code == 0 and "review note (ben, " in out and "not publishable: options of two kinds" in out
    # A review recorded before okgen kept verdicts cannot take one reviewer's sheet alone: the
    # others' verdicts could not be rebuilt.
    q = json.loads((snap.path / QUALITY).read_text())
    del q["review"]["verdicts"]
    (snap.path / QUALITY).write_text(json.dumps(q))
    before = (snap.path / QUALITY).read_bytes()
    code, _, err = run_cli(capsys, "review", "import", str(ben))
    assert code == 1 and "holds the review of ana, ben" in err and "without its verdicts" in err and "--replace" in err
    assert (snap.path / QUALITY).read_bytes() == before
    fill(ben, "ben", lambda i: int(i % 2 == 0))
    assert run_cli(capsys, "review", "import", str(ana), str(ben))[0] == 0
    # The local archive (what a restore or a publish ships) carries the recorded review.
    archive = snap.path.parent / f"{snap.name}.tar.gz"
    assert archive.is_file()
    with tarfile.open(archive) as tf:
        member = next(m for m in tf.getmembers() if m.name.endswith("/" + QUALITY))
        assert json.loads(tf.extractfile(member).read())["review"]["reviewers"] == ["ana", "ben"]
    assert run_cli(capsys, "snapshot", "verify", snap.signature.short)[0] == 0
    # A copy published before the review is named as lacking it.
    from okgen.settings import Workspace
    from okgen.snapshot.publish import publish

    publish(snap, str(tmp_path / "pub"), Workspace.from_env())
    code, _, err = run_cli(capsys, "review", "import", str(ana), str(ben))
    assert code == 0 and f"copy of {snap.name} at {tmp_path / 'pub'}" in err and "okgen publish" in err
    # The same reviewer written otherwise (" ANA ") is no reviewer dropped.
    rows = list(csv.DictReader(ana.open(encoding="utf-8")))
    write_rows(ana, [{**r, "reviewer": " ANA "} for r in rows], list(rows[0]))
    code, _, err = run_cli(capsys, "review", "import", str(ana), str(ben))
    assert code == 0, err
    code, _, err = run_cli(capsys, "review", "import", "--replace", str(ben))
    assert code == 0, err
    assert load_quality(snap.path, snap.manifest.content_hash).review.reviewers == ("ben",)


def test_showing_an_archive_whose_snapshot_is_here_says_the_evidence_differs(make_snapshot, tmp_path, capsys, caplog):
    """The workspace's folder is shown for an archive of the same snapshot: when a review was
    imported since, the archive's evidence is not what is shown, and a line says so."""
    import logging
    import shutil

    snap = make_snapshot()
    old = tmp_path / "before-review.tar.gz"
    shutil.copyfile(snap.path.parent / f"{snap.name}.tar.gz", old)
    assert run_cli(capsys, "review", snap.signature.short, "--sample", "3", "--out", str(tmp_path))[0] == 0
    sheet = next(tmp_path.glob("review-*.csv"))
    fill(sheet, "ana", lambda i: 1)
    assert run_cli(capsys, "review", "import", str(sheet))[0] == 0
    with caplog.at_level(logging.WARNING, logger="okgen.snapshot.store"):
        code, out, _ = run_cli(capsys, "snapshot", "show", str(old))
    assert code == 0 and any("quality evidence differs from the archive's" in r.getMessage() for r in caplog.records)
