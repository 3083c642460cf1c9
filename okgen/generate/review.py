"""The human review loop: review sheets out, verdicts back into a snapshot's quality evidence.

:func:`write_sheet` draws a seeded sample of a snapshot's questions and writes it as CSV and
JSONL with one empty column per criterion of the review guide (``clear``, ``answerable``,
``answer_correct``, ``distractors_ok``, ``no_giveaway``, ``day_news``, ``publishable``) plus
``reviewer`` and ``notes``. :func:`import_sheets` reads filled sheets (one or several
reviewers), checks every row, and records a :class:`~okgen.snapshot.quality.ReviewSummary` in
the snapshot's ``quality.json``: the usable (publishable) rate with its Wilson 95 % interval
(scipy) and, with several reviewers, their agreement (Cohen's kappa from scikit-learn when it
is installed, and raw pairwise agreement). Nothing is written unless every row is valid.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import logging
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from okgen.errors import ConfigError, OkgenError
from okgen.files import atomic_write_text
from okgen.hashing import sha256_file
from okgen.settings import Workspace

log = logging.getLogger(__name__)

CRITERIA = ("clear", "answerable", "answer_correct", "distractors_ok", "no_giveaway", "day_news", "publishable")
LETTERS = "ABCD"
COLUMNS = ("snapshot", "question_id", "source", "date", "article_id", "url", "question", "A", "B", "C", "D",
           "marked_answer", "source_excerpt", *CRITERIA, "reviewer", "notes")
"""The sheet's columns: the article's date, id (``okgen articles show ID``, or the snapshot's
corpus) and URL let a reviewer read the whole story, not only the excerpt, to judge
``answer_correct`` and ``day_news``."""
EXCERPT_CHARS = 700
BINARY = {"0": 0, "1": 1, "0.0": 0, "1.0": 1}  # a spreadsheet may save a 1 as "1.0"


def write_sheet(snapshot: Any, out_dir: str | Path, *, sample: int = 80, seed: int = 0,
                overwrite: bool = False) -> tuple[Path, Path]:
    """Write ``review-<hash12>-s<seed>.csv`` and ``.jsonl`` for a seeded sample of questions.

    A sheet already there is kept (a reviewer fills the sheet in place: writing it again would
    lose the verdicts) unless it is the very sheet this call writes, or ``overwrite``.

    Returns:
        The CSV and JSONL paths.

    Raises:
        OkgenError: no questions; a different sheet of that name exists (without ``overwrite``).
    """
    m = snapshot.manifest
    qs = sorted(snapshot.questions, key=lambda q: q.id)
    if not qs:
        raise OkgenError(f"snapshot {snapshot.name} has no questions to review")
    picked = sorted(random.Random(seed).sample(range(len(qs)), min(sample, len(qs))))
    arts = snapshot.articles_by_id
    rows = []
    for q in (qs[i] for i in picked):
        a = arts.get(q.article_id)
        excerpt = q.evidence or (a.text[:EXCERPT_CHARS] if a is not None else "")
        row = {"snapshot": m.content_hash, "question_id": q.id, "source": q.source, "date": str(q.date),
               "article_id": q.article_id, "url": a.url if a is not None else "", "question": q.question}
        row.update({LETTERS[i]: (q.choices[i] if i < len(q.choices) else "") for i in range(4)})
        row.update({"marked_answer": f"{LETTERS[q.answer_index]}: {q.answer}",
                    "source_excerpt": (f"{a.title} -- " if a is not None else "") + excerpt[:EXCERPT_CHARS]})
        row.update({c: "" for c in CRITERIA})
        row.update(reviewer="", notes="")
        rows.append(row)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    stem = f"review-{m.content_hash[:12]}-s{seed}"
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=COLUMNS)
    w.writeheader()
    w.writerows(rows)
    csv_path, jsonl_path = out / f"{stem}.csv", out / f"{stem}.jsonl"
    texts = {csv_path: buf.getvalue(), jsonl_path: "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)}
    if not overwrite:
        for path, text in texts.items():
            if path.exists() and path.read_bytes() != text.encode("utf-8"):
                raise OkgenError(f"{path} exists and differs from this sheet (filled in, or another --sample); "
                                 "nothing was written: use another --out or --overwrite")
    for path, text in texts.items():
        atomic_write_text(path, text)
    return csv_path, jsonl_path


def read_sheet(path: str | Path) -> list[dict[str, Any]]:
    """Rows of a filled sheet (CSV, or JSONL by its ``.jsonl`` extension).

    Raises:
        OkgenError: unreadable file, missing columns, a criterion not 0/1, no reviewer.
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as e:
        raise OkgenError(f"{p}: not UTF-8 text ({e.reason} at byte {e.start}): save the sheet as CSV UTF-8") from None
    except OSError as e:
        raise OkgenError(f"{p}: cannot read the review sheet ({e})") from None
    if p.suffix.lower() in (".jsonl", ".ndjson"):
        rows = []
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                raise OkgenError(f"{p}:{n}: not JSON ({e.msg})") from None
            if not isinstance(row, dict):
                raise OkgenError(f"{p}:{n}: a row must be a JSON object")
            rows.append(row)
        header = set().union(*(r.keys() for r in rows)) if rows else set()
    else:
        # The header's names hold no separator: the one it uses is the sheet's (a spreadsheet in
        # a European locale saves with ";", some with tabs).
        first = text.split("\n", 1)[0]
        sep = max((",", ";", "\t"), key=first.count)
        raw = [r for r in csv.reader(io.StringIO(text), delimiter=sep) if r]
        for n, r in enumerate(raw[1:], 2):
            if len(r) != len(raw[0]):  # a row cut short or run on: its values would land in other columns
                raise OkgenError(f"{p}: row {n} has {len(r)} field(s), the header {len(raw[0])}: "
                                 "a row cut short, or a separator or quote out of place")
        reader = csv.DictReader(io.StringIO(text), delimiter=sep)
        header = set(reader.fieldnames or ())
        rows = list(reader)
    missing = [c for c in ("snapshot", "question_id", *CRITERIA, "reviewer") if c not in header]
    if missing:
        raise OkgenError(f"{p}: missing column(s) {', '.join(missing)} (write a sheet with `okgen review SIG`)")
    if not rows:
        raise OkgenError(f"{p}: no rows")
    out = []
    for n, row in enumerate(rows, 2 if p.suffix.lower() not in (".jsonl", ".ndjson") else 1):
        rec: dict[str, Any] = {"snapshot": str(row["snapshot"]).strip(), "question_id": str(row["question_id"]).strip(),
                               "reviewer": str(row.get("reviewer") or "").strip(),
                               "notes": " ".join(str(row.get("notes") or "").split())}
        if not rec["reviewer"] and not any(str(row.get(c) or "").strip() for c in CRITERIA):
            continue  # a question this reviewer did not rate
        if not rec["reviewer"]:
            raise OkgenError(f"{p}: row {n} ({rec['question_id']}) is rated but has no reviewer")
        for c in ("snapshot", "question_id"):
            if not rec[c]:
                raise OkgenError(f"{p}: row {n} is rated by {rec['reviewer']} but its {c} cell is blank "
                                 "(copy it back from the sheet okgen wrote)")
        for c in CRITERIA:
            v = str(row.get(c, "")).strip()
            if not v:
                raise OkgenError(f"{p}: row {n} ({rec['question_id']}) is rated by {rec['reviewer']} but {c} is "
                                 "blank: rate it 0 or 1, or clear the reviewer cell to skip the row")
            if v not in BINARY:
                raise OkgenError(f"{p}: row {n} ({rec['question_id']}): {c} must be 0 or 1, got {v!r}")
            rec[c] = BINARY[v]
        if rec["publishable"] and (no := [c for c in CRITERIA if c != "publishable" and not rec[c]]):
            # "Publishable" means every other criterion holds: a publishable question with a wrong
            # key is a slip of one of the two, and counted usable it would raise the rate.
            raise OkgenError(f"{p}: row {n} ({rec['question_id']}) is publishable but {', '.join(no)} is 0: "
                             "publishable means every other criterion is 1; correct one of them")
        out.append(rec)
    if not out:
        raise OkgenError(f"{p}: no row is rated (fill the criteria columns with 0 or 1 and the reviewer column)")
    return out


def _fold(name: str) -> str:
    """A reviewer's name as names compare: "Ana " is "ana"."""
    return " ".join(name.split()).casefold()


def import_sheets(paths: Sequence[str | Path], ws: Workspace, replace: bool = False) -> tuple[Any, Any]:
    """Check filled sheets and record their verdicts in the snapshot's ``quality.json``.

    All sheets must review the same snapshot; a later import replaces the recorded review, but
    one that would drop another reviewer's verdicts is refused unless ``replace`` (the record
    keeps counts, not verdicts: they could not be rebuilt). The snapshot's local archive, when
    it has one, is written again, so it carries the review too.

    Returns:
        (snapshot, the recorded ReviewSummary).

    Raises:
        OkgenError: bad input (nothing is written).
        NotFoundError: the sheets' snapshot is not in the workspace.
    """
    from okgen.snapshot.quality import compute_quality, load_quality, with_review, write_quality
    from okgen.snapshot.store import resolve

    rows = [r for p in paths for r in read_sheet(p)]
    names: dict[str, str] = {}  # "Alice" and "alice" are one reviewer: named as first written
    for r in rows:
        r["reviewer"] = names.setdefault(_fold(r["reviewer"]), r["reviewer"])
    new_reviewers = {_fold(r["reviewer"]) for r in rows}
    snaps = {r["snapshot"] for r in rows}
    if len(snaps) != 1:
        raise OkgenError(f"the sheets review {len(snaps)} snapshots ({', '.join(sorted(s[:12] for s in snaps))}); import one at a time")
    snap = resolve(next(iter(snaps)), ws)
    ids = {q.id for q in snap.questions}
    unknown = sorted({r["question_id"] for r in rows} - ids)
    if unknown:
        raise OkgenError(f"{len(unknown)} question id(s) are not in snapshot {snap.name} (first: {unknown[0]})")
    seen: dict[tuple[str, str], int] = {}
    for r in rows:
        key = (r["reviewer"], r["question_id"])
        if key in seen:
            raise OkgenError(f"reviewer {r['reviewer']!r} rated question {r['question_id']} twice")
        seen[key] = r["publishable"]
    m = snap.manifest
    quality = load_quality(snap.path, m.content_hash) or compute_quality(
        snap.questions, snap.corpus, m.funnel, m.content_hash, m.seed)
    old = quality.review
    sheets = [sha256_file(p) for p in paths]
    others = sorted(r for r in (old.reviewers if old is not None else ()) if _fold(r) not in new_reviewers)
    if others and not replace:
        kept = [v for v in old.verdicts if _fold(v.reviewer) not in new_reviewers]
        if {_fold(v.reviewer) for v in kept} != {_fold(r) for r in others}:  # recorded before verdicts were kept
            raise OkgenError(f"{snap.name} holds the review of {', '.join(old.reviewers)} ({old.ratings} ratings) "
                             f"without its verdicts, and these sheets have none of {', '.join(others)}: import every "
                             "reviewer's sheet together (okgen review import a.csv b.csv), or give --replace to drop them")
        # Another reviewer's sheet, imported later, joins the recorded verdicts; a reviewer's
        # own sheet, imported again, replaces theirs.
        rows = [{"snapshot": snap.name, "question_id": v.question_id, "notes": v.notes, **v.ratings,
                 "reviewer": names.setdefault(_fold(v.reviewer), v.reviewer)} for v in kept] + rows
        sheets = list(dict.fromkeys([*old.sheets, *sheets]))
        log.info("%s: kept the recorded verdicts of %s", snap.name, ", ".join(others))
    summary = summarize(rows, sheets)
    from okgen.snapshot.signing import unsign_quality

    # The signature's part first: stopped in between, the evidence is unsigned and unchanged,
    # never changed under a signature that no longer matches it.
    if unsign_quality(snap.path):
        log.info("%s: the release's signature no longer covers quality.json (these verdicts are yours, not the "
                 "publisher's); okgen publish --sign-key signs it again", snap.name)
    write_quality(snap.path, with_review(quality, summary))
    from okgen.snapshot.store import catalogue, register

    entry = catalogue(ws).get_by_name(snap.name)
    recorded = catalogue(ws).resolve_path(entry.archive) if entry is not None and entry.archive else None
    archive = recorded if recorded is not None and recorded.is_file() else snap.path.parent / f"{snap.name}.tar.gz"
    if archive.is_file():  # the archive is the snapshot as published and restored: it carries the review too
        from okgen.snapshot.archive import make_archive

        make_archive(snap.path, archive)
        register(snap, ws, archive=archive)
        log.info("rewrote %s with the review", archive)
    return snap, summary


def summarize(rows: Sequence[dict[str, Any]], sheets: Sequence[str] = ()) -> Any:
    """The review summary of checked rows: counts, usable rate with its Wilson 95 % interval,
    and the reviewers' agreement on ``publishable``."""
    try:
        from scipy.stats import binomtest
    except ImportError:
        raise ConfigError('recording reviews needs scipy (Wilson interval): pip install "okgen[review]"') from None

    from okgen.snapshot.quality import CriterionCount, ReviewSummary, Verdict

    n = len(rows)
    # Per question, not per rating: two reviewers' ratings of one question are not independent
    # draws, and counting them apart would narrow the interval and weigh that question double.
    # A question is usable when every reviewer who rated it says publishable.
    verdicts: dict[str, bool] = {}
    for r in rows:
        verdicts[r["question_id"]] = verdicts.get(r["question_id"], True) and bool(r["publishable"])
    items, usable = len(verdicts), sum(verdicts.values())
    ci = binomtest(usable, items).proportion_ci(confidence_level=0.95, method="wilson")
    reviewers = sorted({r["reviewer"] for r in rows})
    return ReviewSummary(
        reviewers=tuple(reviewers), items=items, ratings=n,
        criteria={c: CriterionCount(yes=sum(r[c] for r in rows), rated=n) for c in CRITERIA},
        usable=usable, usable_rate=round(usable / items, 4), usable_ci95=(round(ci.low, 4), round(ci.high, 4)),
        agreement=agreement(rows) if len(reviewers) > 1 else None, sheets=tuple(sheets),
        verdicts=tuple(Verdict(question_id=r["question_id"], reviewer=r["reviewer"], ratings={c: int(r[c]) for c in CRITERIA},
                               notes=r.get("notes", "")) for r in rows))


def agreement(rows: Sequence[dict[str, Any]]) -> dict[str, float]:
    """Agreement on ``publishable`` per reviewer pair, over the questions both rated: ``raw``
    (share of equal ratings, all pairs pooled) and ``kappa <a>/<b>`` (Cohen's kappa, scikit-learn,
    when installed and both reviewers used both ratings)."""
    by: dict[str, dict[str, int]] = {}
    for r in rows:
        by.setdefault(r["reviewer"], {})[r["question_id"]] = r["publishable"]
    try:
        from sklearn.metrics import cohen_kappa_score
    except ImportError:  # optional: raw agreement only
        cohen_kappa_score = None
    out: dict[str, float] = {}
    same = total = 0
    for a, b in itertools.combinations(sorted(by), 2):
        common = sorted(set(by[a]) & set(by[b]))
        if not common:
            continue
        xa, xb = [by[a][q] for q in common], [by[b][q] for q in common]
        same += sum(x == y for x, y in zip(xa, xb))
        total += len(common)
        if cohen_kappa_score is not None and len(set(xa)) > 1 and len(set(xb)) > 1:
            out[f"kappa {a}/{b}"] = round(float(cohen_kappa_score(xa, xb)), 4)
    if total:
        out["raw"] = round(same / total, 4)
    return out
