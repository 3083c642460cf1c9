"""``okgen stream build NAME --series S``: facts -> tracks -> streamed questions.

For every day of the series (which must have no missing day) the facts of that day's articles
in the member snapshot's corpus are extracted (or read from ``data/facts/<date>.json`` when that
file was made by the same extractor from the same articles), followed across the days as
tracks (:mod:`okgen.streams.tracks`), and every track that changes often enough becomes a
question (:mod:`okgen.streams.questions`). The stream keeps, as the text a model may read, the
articles of each day that state a fact.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections import Counter, defaultdict

from okgen.errors import ConfigError, IntegrityError, OkgenError
from okgen.facts.extract import Extractor, extract_day, facts_path, make_extractor, read_facts
from okgen.facts.records import Fact
from okgen.schema import Article
from okgen.settings import Workspace
from okgen.streams.questions import make_question, name_pool
from okgen.streams.records import StreamDocument, StreamInterval, StreamManifest
from okgen.streams.store import check_name, write_stream
from okgen.streams.tracks import build_tracks, transitions

log = logging.getLogger(__name__)


def day_facts(ws: Workspace, date: dt.date, articles: list[Article], extractor: Extractor) -> list[Fact]:
    """The facts of one day's articles: the cached ``data/facts/<date>.json`` when it was made
    by this extractor from exactly these articles, else a fresh extraction (written there)."""
    ids = {a.id for a in articles}
    if facts_path(ws, date).is_file():
        try:
            ff = read_facts(ws, date)
            if ff.extractor == extractor.id and ff.articles == len(articles) and {f.article_id for f in ff.facts} <= ids:
                return list(ff.facts)
        except OkgenError as e:
            log.warning("re-extracting %s: %s", date, e)
    return list(extract_day(ws, date, extractor=extractor, articles=articles).facts)


def build_stream(ws: Workspace, name: str, series_ref: str, *, min_changes: int = 2, min_outlets: int = 2,
                 seed: int = 0, overwrite: bool = False, pipeline: str | None = None, extractor: str | None = None,
                 validator: str | None = None, max_cost: float | None = None, use_cache: bool = True) -> StreamManifest:
    """Build stream ``name`` from the series ``series_ref``.

    ``extractor`` names the fact extractor (``rules``/None, or a model spec for ``llm-v1``);
    ``validator`` a model spec whose transition validator judges single-outlet changes
    (:mod:`okgen.streams.validator`; None: only outlets corroborate). ``max_cost`` bounds the
    USD spent by each of them; ``use_cache`` reads and writes the LLM response cache.

    Raises:
        ConfigError: a bad name, a series with a missing day, a day without article texts, no
            track that changes ``min_changes`` times, or an existing stream (without ``overwrite``).
        IntegrityError: the series or a member snapshot fails verification.
        OkgenError: an LLM extractor or the validator failed transiently (nothing written; rerun).
    """
    from okgen.series.store import member_snapshots, resolve_series, verify_series

    check_name(name)
    if min_changes < 1 or min_outlets < 1:
        raise ConfigError("--min-changes and --min-outlets must be at least 1")
    sm, sfolder = resolve_series(series_ref, ws)
    if sm.missing_days:
        days = ", ".join(map(str, sm.missing_days[:5]))
        raise ConfigError(f"series {sm.name} lacks {len(sm.missing_days)} day(s): {days}; a stream asks its questions "
                          "every day, so its series needs a snapshot for every day (rebuild it without --allow-gaps)")
    rep = verify_series(sfolder, ws)
    if not rep.ok:
        raise IntegrityError(f"series {sm.name}: {rep.problems[0]}")
    dates = [x.date for x in sm.members]
    if len(dates) < 2:
        raise ConfigError(f"series {sm.name} has {len(dates)} day(s); a stream needs at least 2")
    ex = make_extractor(extractor, ws, pipeline=pipeline, max_cost=max_cost, use_cache=use_cache)
    judge = None
    try:
        facts: list[list[Fact]] = []
        by_id: dict[str, Article] = {}
        for snap, d in zip(member_snapshots(sm, ws), dates):
            arts = [a for a in snap.corpus if a.date == d and not a.text_omitted]
            if not arts:
                raise ConfigError(f"snapshot {snap.name} ({d}) has no article texts of its day (hydrate it first)")
            by_id.update({a.id: a for a in arts})
            facts.append(day_facts(ws, d, arts, ex))
        if validator:
            from okgen.streams.validator import TransitionValidator

            judge = TransitionValidator.from_spec(validator, ws, max_cost=max_cost, use_cache=use_cache)
        tracks = build_tracks(facts, dates, min_outlets=min_outlets, min_changes=min_changes, validator=judge)
    finally:
        ex.close()
        if judge is not None:
            judge.close()
    evidence: dict[str, dict[str, dict[int, list[str]]]] = defaultdict(lambda: defaultdict(dict))
    for i, day in enumerate(facts):
        for f in day:
            if not f.past:
                ev = evidence[f"{f.relation}/{f.subject_key}"][f.object_key].setdefault(i, [])
                if f.evidence not in ev and len(ev) < 3:
                    ev.append(f.evidence)
    every = [f for day in facts for f in day]
    pool = name_pool(every)
    by_relation = {rel: name_pool(f for f in every if f.relation == rel) for rel in {f.relation for f in every}}
    questions, final = [], []
    for t in tracks:
        if t.excluded is None:
            try:
                questions.append(make_question(t, pool=pool, relation_pool=by_relation.get(t.relation), seed=seed, year=dates[-1].year, evidence=evidence[t.id]))
            except ConfigError as e:
                t = t.model_copy(update={"excluded": str(e).split(": ", 1)[-1]})
        final.append(t)
    if not questions:
        raise ConfigError(f"no track of series {sm.name} changes {min_changes} time(s) or more ({len(tracks)} track(s) "
                          f"from {sum(map(len, facts))} fact(s)); nothing written (try --min-changes 1)")
    cited = {f.article_id for day in facts for f in day}
    documents = [StreamDocument(id=a.id, interval=dates.index(a.date), outlet=a.source, title=a.title, text=a.text)
                 for a in sorted(by_id.values(), key=lambda a: (a.date, a.id)) if a.id in cited]
    reasons = Counter(_reason(t.excluded) for t in final if t.excluded)
    streamed = [t for t in final if t.excluded is None]
    moving = sum(1 for t in streamed if any(d.status == "changes" for d in t.days))
    if not moving:
        # `not known yet` -> a first value is each question's only change: what such a stream
        # measures is when a fact was first reported in the news read, not a model following it.
        log.warning("none of the %d streamed question(s) changes value after its first report: the stream asks "
                    "when each fact was first reported, not how a model follows a change (a longer series, "
                    "or --min-changes 2, gives changes of value)", len(questions))
    counts = {"facts": sum(map(len, facts)), "tracks": len(final), "transitions": sum(transitions(t) for t in final),
              "questions": len(questions), "questions_changing_value": moving, "documents": len(documents),
              **{f"excluded_{k}": v for k, v in sorted(reasons.items())},
              **({"transitions_by_validator": sum(1 for t in final for d in t.days if d.rule == "validator"),
                  **judge.counts()} if judge is not None else {})}
    intervals = tuple(StreamInterval(index=i, date=d, label=str(d)) for i, d in enumerate(dates))
    return write_stream(ws, name, tracks=final, questions=questions, documents=documents, overwrite=overwrite,
                        origin="series", series=sm.signature, series_hash=sm.content_hash, intervals=intervals,
                        extractor=ex.id, min_changes=min_changes, min_outlets=min_outlets, seed=seed,
                        counts=counts, validator=judge.id if judge is not None else None)


def _reason(text: str) -> str:
    if text.startswith("same-day conflict"):
        return "conflict"
    if "fewer than" in text and "change" in text:
        return "too_few_changes"
    return "no_distractors"
