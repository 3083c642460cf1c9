"""Quality evidence of a snapshot: ``quality.json`` beside its manifest.

Computed when the snapshot is built (:func:`compute_quality`), from the generation funnel and
the snapshot's own questions and corpus: the rate of every quality gate, the stem-article
overlap, the distractors' type agreement, the answer-type mix, per-outlet counts and a seeded
reading sample. Human review verdicts (``okgen review import``) are added later.

``quality.json`` is **not** part of the content hash nor listed among the manifest's files
(reviews are added after a snapshot is published, and evidence about the data is not the
data); it names the content hash it describes, and :func:`load_quality` refuses one that
belongs to another snapshot.
"""

from __future__ import annotations

import json
import logging
import random
import re
import statistics
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from okgen.errors import ConfigError, OkgenError
from okgen.files import atomic_write_text
from okgen.schema import Article, Question

log = logging.getLogger(__name__)

QUALITY = "quality.json"
SCHEMA_VERSION = 1
SAMPLE_SIZE = 20


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class GateRate(_Frozen):
    """How often one gate failed among the day's candidates."""

    failed: int
    """Candidates that failed it (a candidate failing several gates counts under each)."""
    rejected: int
    """Candidates it dropped (their first failure)."""
    rate: float
    """``failed`` / all candidates of the day."""


class SampleItem(_Frozen):
    """One question of the reading sample."""

    id: str
    """Question id."""
    source: str
    """Outlet."""
    question: str
    """The stem."""
    choices: tuple[str, ...]
    """Options in the snapshot's order."""
    answer: str
    """The marked answer."""


class CriterionCount(_Frozen):
    """One review criterion over the reviewed items."""

    yes: int
    """Ratings of 1."""
    rated: int
    """Ratings given (0 or 1)."""


NOTES_SHOWN = 5  # reviewers' notes shown with the evidence (all are kept)


class Verdict(_Frozen):
    """One reviewer's rating of one question, as the sheet gave it."""

    question_id: str
    reviewer: str
    ratings: dict[str, int]
    """Each criterion of the review guide: 0 or 1."""
    notes: str = ""
    """The sheet's ``notes`` cell (what the reviewer saw fail)."""


class ReviewSummary(_Frozen):
    """Human review verdicts recorded by ``okgen review import``."""

    reviewers: tuple[str, ...]
    """Reviewer names, sorted."""
    items: int
    """Distinct questions reviewed."""
    ratings: int
    """Rows imported (one per reviewer and question)."""
    criteria: dict[str, CriterionCount]
    """Counts of every criterion over all ratings."""
    usable: int
    """Questions every reviewer who rated them marked ``publishable`` = 1 (a question two
    reviewers rated counts once: the sample is of questions, not of ratings)."""
    usable_rate: float
    """``usable`` / ``items``."""
    usable_ci95: tuple[float, float]
    """Wilson 95 % interval of the usable rate over the questions (``scipy.stats.binomtest(...).proportion_ci``)."""
    agreement: dict[str, float] | None = None
    """With several reviewers: Cohen's kappa of ``publishable`` per reviewer pair (scikit-learn)
    on the questions both rated, and ``raw`` pairwise percentage agreement; None with one."""
    sheets: tuple[str, ...] = ()
    """SHA-256 of every imported sheet file."""
    verdicts: tuple[Verdict, ...] = ()
    """Every rating with its notes (empty in a review recorded before okgen kept them): a later
    import of another reviewer's sheet adds to them."""


class QualityEvidence(_Frozen):
    """``quality.json``: the evidence of a snapshot's question quality."""

    schema_version: int = SCHEMA_VERSION
    """Version of this record's layout."""
    content_hash: str
    """Content hash of the snapshot it describes."""
    questions: int
    """Questions in the snapshot."""
    candidates: int
    """Candidates generated for the day (0 when the funnel was not recorded)."""
    gates: dict[str, GateRate]
    """Every check and quality gate that failed at least once, by name (funnel order)."""
    day_level: dict[str, int]
    """Dropped across the day: ``near_duplicate``, ``near_duplicate_recent``, ``outlet_balance``,
    ``answer_balance``."""
    nlp: str | None
    """spaCy pipeline of the overlap and type measures (None: spaCy missing, measures not taken)."""
    stem_overlap: dict[str, Any] | None
    """Longest run of consecutive non-name tokens each stem shares with its article:
    ``histogram`` (run length -> questions), ``median``, ``max``, ``over_limit`` (runs > ``limit``)
    and ``over_limit_rate``; None without article texts or spaCy."""
    distractor_type_agreement: dict[str, Any] | None
    """Each distractor's spaCy entity label (:func:`~okgen.generate.nlp.option_labels`) against the answer's, over
    questions whose answer has a label: ``distractors``, ``agreeing``, ``rate``."""
    options_answering_another: dict[str, Any] | None = None
    """Name distractors (no digit) that are another question's answer in the snapshot (compared as
    :func:`~okgen.generate.distractors.bare` writes names), which hint at both questions:
    ``distractors``, ``answering_another``, ``rate`` and up to five ``examples`` (None in
    evidence written before it was measured)."""
    answer_types: dict[str, int]
    """Questions by the answer's spaCy entity label (``none`` when it has none)."""
    outlets: dict[str, int]
    """Questions per outlet."""
    sample_seed: int
    """Seed of the reading sample."""
    sample: tuple[SampleItem, ...]
    """A seeded sample of questions to read."""
    review: ReviewSummary | None = None
    """Human review verdicts, once imported."""


def compute_quality(questions: Sequence[Question], corpus: Sequence[Article], funnel: dict[str, Any] | None,
                    content_hash: str, seed: int, *, nlp: Any = None, sample_size: int = SAMPLE_SIZE) -> QualityEvidence:
    """Compute a snapshot's quality evidence.

    Args:
        questions: the snapshot's questions.
        corpus: its corpus (texts used for the overlap when present).
        funnel: the generation funnel (gate rates), or None.
        content_hash: the snapshot's content hash.
        seed: the snapshot seed (the reading sample's).
        nlp: a spaCy pipeline; None loads the default one, and without spaCy the overlap and
            type measures are left out (logged).
        sample_size: questions in the reading sample.
    """
    f = funnel or {}
    cands = int(f.get("candidates", 0) or 0)
    fails = f.get("check_failures", {}) or {}
    rejected = (f.get("checks", {}) or {}).get("rejected", {}) or {}
    from okgen.generate.gates import GATES

    # Every shared gate is listed, a gate nothing failed with 0 (an empty table would not say
    # whether the gates ran), then the other checks that failed some candidate.
    # A funnel that does not say (one made before it did) lists only what failed.
    counts = {**({g: 0 for g in GATES} if f.get("quality_gates") else {}), **fails}
    # In name order: the order quality.json is read back in, so a data card rendered from either
    # (a build, a hydrated copy) is the same bytes.
    gates = {k: GateRate(failed=int(v), rejected=int(rejected.get(k, 0)), rate=round(v / cands, 4) if cands else 0.0)
             for k, v in sorted(counts.items())}
    d, b = f.get("dedup", {}) or {}, f.get("balance", {}) or {}
    day = {"near_duplicate": int(d.get("near_duplicate", 0)), "near_duplicate_recent": int(d.get("near_duplicate_recent", 0)),
           "outlet_balance": int(b.get("outlet_balance", 0)), "answer_balance": int(b.get("answer_balance", 0))}
    if nlp is None:
        try:
            from okgen.generate.nlp import load_pipeline

            nlp = load_pipeline()
        except ConfigError as e:
            log.warning("quality evidence without spaCy measures: %s", e)
    overlap = agreement = None
    answer_types: Counter[str] = Counter()
    pipeline = None
    if nlp is not None:
        from okgen.generate.nlp import pipeline_id

        pipeline = pipeline_id(nlp)
        overlap, agreement, answer_types = _nlp_measures(questions, corpus, nlp)
    rng = random.Random(seed)
    picked = sorted(rng.sample(range(len(questions)), min(sample_size, len(questions))))
    sample = tuple(SampleItem(id=q.id, source=q.source, question=q.question, choices=tuple(q.choices), answer=q.answer)
                   for q in (questions[i] for i in picked))
    return QualityEvidence(content_hash=content_hash, questions=len(questions), candidates=cands, gates=gates,
                           day_level=day, nlp=pipeline, stem_overlap=overlap, distractor_type_agreement=agreement,
                           options_answering_another=_cross_answers(questions),
                           answer_types=dict(sorted(answer_types.items())),
                           outlets=dict(sorted(Counter(q.source for q in questions).items())),
                           sample_seed=seed, sample=sample)


def _cross_answers(questions: Sequence[Question]) -> dict[str, Any]:
    """The distractors that answer another question of the snapshot ("Drew Ensign" offered for
    the representative indicted, and the answer to who the judge questioned)."""
    from okgen.generate.distractors import bare

    answers: dict[str, set[str]] = {}
    for q in questions:
        answers.setdefault(bare(q.answer), set()).add(q.id)
    total, hits = 0, []
    for q in questions:
        for c in q.choices:
            if c == q.answer or re.search(r"\d", c):
                continue  # names only: a number or a date is drawn around its own answer
            total += 1
            if answers.get(bare(c), set()) - {q.id}:
                hits.append(f"{c} (in {q.id})")
    return {"distractors": total, "answering_another": len(hits),
            "rate": round(len(hits) / total, 4) if total else None, "examples": hits[:5]}


def _nlp_measures(questions: Sequence[Question], corpus: Sequence[Article], nlp: Any):
    from okgen.generate.nlp import option_labels
    from okgen.generate.overlap import MAX_SHARED_RUN, longest_shared_run

    disable = [p for p in ("parser", "lemmatizer", "attribute_ruler") if p in nlp.pipe_names]
    texts = {a.id: f"{a.title}\n{a.text}" for a in corpus if a.text}
    have_text = all(q.article_id in texts for q in questions) and bool(questions)
    options = list(dict.fromkeys(c for q in questions for c in q.choices))  # each distinct option parsed once
    stems = list(nlp.pipe([q.question for q in questions], disable=disable, batch_size=128))
    label_of = dict(zip(options, option_labels(nlp, options, disable)))
    overlap = None
    if have_text:
        runs = [longest_shared_run(q.question, texts[q.article_id], doc=d) for q, d in zip(questions, stems)]
        over = sum(r > MAX_SHARED_RUN for r in runs)
        overlap = {"limit": MAX_SHARED_RUN, "histogram": {str(k): v for k, v in sorted(Counter(runs).items())},
                   "median": statistics.median(runs), "max": max(runs), "over_limit": over,
                   "over_limit_rate": round(over / len(runs), 4)}
    answer_types: Counter[str] = Counter()
    total = agree = 0
    for q in questions:
        labels = [label_of[c] for c in q.choices]
        a = labels[q.answer_index]
        answer_types[a] += 1
        if a == "none":
            continue
        others = [x for j, x in enumerate(labels) if j != q.answer_index]
        total += len(others)
        agree += sum(x == a for x in others)
    agreement = {"distractors": total, "agreeing": agree, "rate": round(agree / total, 4) if total else None}
    return overlap, agreement, answer_types


def write_quality(folder: Path, q: QualityEvidence) -> Path:
    """Write ``quality.json`` into a snapshot folder (atomically)."""
    path = Path(folder) / QUALITY
    atomic_write_text(path, json.dumps(q.model_dump(mode="json"), indent=2, sort_keys=True, ensure_ascii=False) + "\n")
    return path


def load_quality(folder: Path, content_hash: str) -> QualityEvidence | None:
    """Read a snapshot's ``quality.json`` (None when it has none).

    Raises:
        OkgenError: the file is malformed or describes another snapshot.
    """
    path = Path(folder) / QUALITY
    if not path.is_file():
        return None
    try:
        q = QualityEvidence.model_validate_json(path.read_bytes())
    except ValidationError as e:
        raise OkgenError(f"{path}: not a valid quality record ({e.errors()[0]['msg']})") from None
    if q.content_hash != content_hash:
        raise OkgenError(f"{path} describes snapshot {q.content_hash[:12]}, not this one ({content_hash[:12]})")
    return q


def render_quality(q: QualityEvidence) -> list[str]:
    """Readable lines for ``okgen snapshot show``, the data card and reports."""
    lines = [f"questions {q.questions} from {q.candidates} candidates" + (f" (nlp {q.nlp})" if q.nlp else "")]
    if q.gates:
        lines.append("gate failures: " + ", ".join(f"{k} {g.failed} ({g.rate:.1%})" for k, g in sorted(q.gates.items())))
    if any(q.day_level.values()):
        lines.append("dropped across the day: " + ", ".join(f"{k} {v}" for k, v in sorted(q.day_level.items()) if v))
    if q.stem_overlap:
        o = q.stem_overlap
        lines.append(f"stem-article overlap: median run {o['median']}, max {o['max']}, "
                     f"{o['over_limit']} stems over {o['limit']} ({o['over_limit_rate']:.1%})")
    if q.distractor_type_agreement and q.distractor_type_agreement.get("rate") is not None:
        t = q.distractor_type_agreement
        lines.append(f"distractor type agreement: {t['agreeing']}/{t['distractors']} ({t['rate']:.1%})")
    x = q.options_answering_another
    if x and x.get("rate") is not None:
        lines.append(f"options answering another question: {x['answering_another']}/{x['distractors']} ({x['rate']:.1%})")
    if q.answer_types:
        lines.append("answer types: " + ", ".join(f"{k} {v}" for k, v in sorted(q.answer_types.items(), key=lambda kv: -kv[1])))
    lines.append("outlets: " + ", ".join(f"{k} {v}" for k, v in sorted(q.outlets.items(), key=lambda kv: -kv[1])))
    r = q.review
    if r is not None:
        lo, hi = r.usable_ci95
        # A record written before the rate was taken over questions counted ratings (usable > items
        # can only be that): it is shown as what it counted.
        # (the stored rate is rounded to 4 decimals: 6/9 is 0.6667)
        per = "questions" if r.items and abs(r.usable_rate - r.usable / r.items) < 1e-4 else "ratings"
        lines.append(f"review: {r.usable}/{r.items if per == 'questions' else r.ratings} {per} usable "
                     f"({r.usable_rate:.1%}, 95% CI {lo:.1%}-{hi:.1%}); {r.ratings} rating{'s' * (r.ratings != 1)} by "
                     f"{', '.join(r.reviewers)}")
        if r.agreement:
            lines.append("reviewer agreement: " + ", ".join(f"{k} {v:.2f}" for k, v in sorted(r.agreement.items())))
        # What the reviewers wrote of the questions they would not publish, first: what still fails.
        noted = sorted((v for v in r.verdicts if v.notes), key=lambda v: (v.ratings.get("publishable", 0), v.question_id))
        for v in noted[:NOTES_SHOWN]:
            mark = "" if v.ratings.get("publishable") else "not publishable: "
            lines.append(f"review note ({v.reviewer}, {v.question_id}): {mark}{v.notes}")
        if len(noted) > NOTES_SHOWN:
            lines.append(f"review notes: {len(noted) - NOTES_SHOWN} more in quality.json")
    return lines


def render_quality_markdown(evidence: dict[str, QualityEvidence]) -> str:
    """A ``## Question quality`` section for reports (empty when there is no evidence)."""
    if not evidence:
        return ""
    out = ["", "## Question quality", ""]
    for ref, q in evidence.items():
        out.append(f"- `{ref}`: " + "; ".join(render_quality(q)[:1] + [x for x in render_quality(q) if x.startswith("review")]))
    return "\n".join(out) + "\n"


def with_review(q: QualityEvidence, review: ReviewSummary) -> QualityEvidence:
    """The evidence with its review summary replaced."""
    return q.model_copy(update={"review": review})


__all__ = ["QUALITY", "CriterionCount", "Field", "GateRate", "QualityEvidence", "ReviewSummary", "SampleItem", "Verdict",
           "compute_quality", "load_quality", "render_quality", "render_quality_markdown",
           "with_review", "write_quality"]
