"""Memory agents and dated contexts on a stream: every question at every interval, OAKS metrics.

``run_stream_memory(stream, setting, backend, out)`` feeds a memory the stream's documents day
by day (:func:`okgen.memory.harness.feed_days`: the same guard, state and resume as over a
series) and, right after ``observe(day t)``, asks **every** stream question with
``retrieve(question, as_of=day t, k)``. The dated contexts (``ctx:closest``, ``ctx:latest``,
``ctx:cumulative``) come from :mod:`okgen.streams.dated`, exactly as in ``okgen eval --stream``;
prompts are :mod:`okgen.streams.evaluate`'s (``stream-mc-v1``, the same passage layout and
6,000-character budget), so a dated setting gives the same prompts in both verbs.

Days are the stream's intervals; its documents become :class:`okgen.schema.Article`\\ s dated
on their interval's day (an imported OAKS stream has no dates: interval i is the day
``2000-01-01 + i`` and is shown as its label, ``chunk i``).

``predictions.jsonl`` holds one row per (question, interval) — question, interval, gold, pred,
correct, the ids the context held, whether one was dated after the interval, whether the gold
evidence reached it, whether passages were dropped to fit (``truncated``), prompt tokens — and a resumed run skips the pairs already scored, so each
is scored once. ``results.json`` has OAKS's Acc/AL/DS/PM, the eight transition classes and the
subsets by changes (:func:`okgen.streams.metrics.score`), accuracy with a bootstrap CI over
questions, accuracy by the age of the needed fact, the stale/future-answer rates overall and per
interval, gold evidence in context, and the cost per day (:func:`okgen.memory.report.mean_costs`).
"""

from __future__ import annotations

import datetime as dt
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from okgen import __version__
from okgen.errors import ConfigError
from okgen.eval.rundir import PREDICTIONS, RESULTS
from okgen.eval.runner import SPEED_OPTIONS
from okgen.eval.stats import bootstrap_ci
from okgen.eval.templates import LETTERS, Passage
from okgen.files import atomic_write_text, pretty_json
from okgen.hashing import sha256_text
from okgen.memory.base import Memory
from okgen.memory.harness import (
    StreamOptions,
    feed_days,
    memory_for,
    open_run,
    parse_setting,
    start_memory,
)
from okgen.memory.report import mean_costs
from okgen.models.base import Backend
from okgen.schema import Article
from okgen.streams import evaluate as se
from okgen.streams.dated import StreamView, by_age, rates
from okgen.streams.metrics import score
from okgen.streams.store import Stream

UNDATED_EPOCH = dt.date(2000, 1, 1)


def interval_dates(stream: Stream) -> list[dt.date]:
    """The day of each interval (an undated, imported interval i: ``2000-01-01 + i``)."""
    return [iv.date or UNDATED_EPOCH + dt.timedelta(days=iv.index) for iv in stream.manifest.intervals]


def stream_articles(stream: Stream) -> list[list[Article]]:
    """The stream's documents as articles, one list per interval (in document order)."""
    dates = interval_dates(stream)
    out: list[list[Article]] = [[] for _ in dates]
    for d in sorted(stream.documents, key=lambda d: (d.interval, d.id)):
        day = dates[d.interval]
        when = dt.datetime(day.year, day.month, day.day, 12, tzinfo=dt.timezone.utc)
        url = f"urn:okgen:stream:{stream.manifest.name}:{d.id}"
        out[d.interval].append(Article(
            id=d.id, url=url, canonical_url=url, source=d.outlet or "stream", source_name=d.outlet,
            title=d.title or "", published_at=when, date=day, date_source="import", fetched_at=when, text=d.text,
            text_sha256=sha256_text(d.text), extractor=f"okgen-stream=={__version__}"))
    return out


def read_rows(path: Path) -> dict[tuple[str, int], dict[str, Any]]:
    """Prediction rows by (question, interval); the last row of a pair wins; a torn last line
    (a run killed mid-write) is cut off the file."""
    if not path.is_file():
        return {}
    raw = path.read_bytes()
    out: dict[tuple[str, int], dict[str, Any]] = {}
    good = 0
    lines = raw.split(b"\n")
    for i, line in enumerate(lines):
        if line.strip():
            try:
                r = json.loads(line)
            except (json.JSONDecodeError, UnicodeDecodeError):
                if any(x.strip() for x in lines[i + 1:]):
                    raise ConfigError(f"{path}:{i + 1}: corrupted prediction line; rerun with --overwrite") from None
                with open(path, "r+b") as f:
                    f.truncate(good)
                break
            out[(r["question_id"], r["interval"])] = r
        good += len(line) + 1
    return out


def run_stream_memory(stream: Stream, setting: str, backend: Backend, out: str | Path,
                      opts: StreamOptions | None = None, *, memory: Memory | None = None,
                      memory_model: str | None = None, budget_chars: int = 6000) -> dict[str, Any]:
    """Run one setting (``none``, ``ctx:*`` or ``mem:SPEC``) over a stream; write and return its results.

    Raises:
        LeakError: the guard caught a future article.
        ConfigError: a bad setting, ``ask`` other than ``same-day``, or the folder holds another run.
    """
    opts = opts or StreamOptions()
    if opts.ask != "same-day":
        raise ConfigError("a stream asks every question at every interval: --ask end does not apply to --stream")
    kind, _ = parse_setting(setting)
    mem = memory_for(setting, memory, memory_model)
    path = Path(out)
    view = StreamView(stream)
    questions = stream.questions[:opts.limit] if opts.limit else list(stream.questions)
    ivs = stream.manifest.intervals
    days = stream_articles(stream)
    dates = interval_dates(stream)
    label_of = {d.isoformat(): iv.label for d, iv in zip(dates, ivs)}
    cfg = {"kind": "okgen-stream-memory-run", "stream": stream.manifest.signature, "setting": setting,
           "memory": mem.identity() if mem else None, "k": opts.k, "limit": opts.limit, "seed": opts.seed,
           "scoring": "loglik", "guard": opts.guard, "model": backend.spec.name,
           "model_options": {k: v for k, v in sorted(backend.spec.options.items()) if k not in SPEED_OPTIONS},
           "template": se.TEMPLATE, "template_hash": se.TEMPLATE_HASH, "budget_chars": budget_chars,
           "days": [[str(d), len(a)] for d, a in zip(dates, days)]}
    st = open_run(path, cfg, opts, backend)
    done = read_rows(path / PREDICTIONS)
    start_memory(mem, st, opts.seed, questions)
    keep = "newest" if kind == "dated" or getattr(mem, "chronological", False) else "first"
    dated_setting = se.Setting.parse(setting) if kind == "dated" else None

    def ask(i: int, date: dt.date, retrieve: Callable[[str], list[Passage]]) -> tuple[list[str], dict[str, Any]]:
        pending = [q for q in questions if (q.id, i) not in done or done[(q.id, i)].get("error") is not None]
        t0 = time.perf_counter()
        prompts, shown, cut = [], [], []
        for q in pending:
            if dated_setting is not None:
                items = [(d.id, d.interval, se.passage_text(ivs[d.interval].label, d.outlet, d.title, d.text))
                         for d in se.select(stream, dated_setting, i, q, view)]
            else:
                items = [(p.article_id, _interval(p, dates),
                          se.passage_text(label_of.get(p.date[:10], p.date[:10]), p.source, p.title, p.text))
                         for p in retrieve(q.question)]
            kept = [items[j] for j in se.fit_budget([x for _, _, x in items], budget_chars, keep)]
            kept = [(a, b, x[:budget_chars]) for a, b, x in kept]
            p, dropped = se.fit_prompt(backend, q.question, q.choices, ivs[i].label, [x for _, _, x in kept], keep)
            prompts.append(p)
            shown.append(kept[dropped:] if keep == "newest" else kept[:len(kept) - dropped])
            cut.append(len(shown[-1]) < len(items))
        retrieve_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        scored = backend.letter_logprobs(prompts, [list(LETTERS[:len(q.choices)]) for q in pending]) if pending else []
        lines, tokens = [], 0
        for q, s, got, trunc in zip(pending, scored, shown, cut):
            pred = se.pick(s)
            ids = [a for a, _, _ in got]
            row = {"question_id": q.id, "interval": i, "label": ivs[i].label, "gold": q.answers[i], "pred": pred,
                   "correct": pred == q.answers[i], "error": s.error, "context": ids,
                   "future_context": any(iv is not None and iv > i for _, iv, _ in got),
                   "gold_in_context": view.gold_in_context(q, i, ids, [x for _, _, x in got]),
                   "truncated": trunc, "prompt_tokens": s.prompt_tokens}
            tokens += s.prompt_tokens or 0
            done[(q.id, i)] = row
            lines.append(json.dumps(row, sort_keys=True))
        return lines, {"retrieve_s": round(retrieve_s, 6), "score_s": round(time.perf_counter() - t0, 6),
                       "questions": len(lines), "prompt_tokens": tokens}

    costs = feed_days(path, list(zip(dates, days)), mem, opts, st, ask, {a.id: a.date for ds in days for a in ds})
    res = stream_results(stream, view, questions, setting, read_rows(path / PREDICTIONS), costs, cfg)
    atomic_write_text(path / RESULTS, pretty_json(res))
    if mem is not None:
        mem.close()
    return res


def _interval(p: Passage, dates: list[dt.date]) -> int | None:
    """The interval a passage is dated in (None when undated or outside the stream)."""
    try:
        return dates.index(dt.date.fromisoformat(p.date[:10]))
    except ValueError:
        return None


def stream_results(stream: Stream, view: StreamView, questions: list[Any], setting: str,
                   rows: dict[tuple[str, int], dict[str, Any]], costs: list[dict[str, Any]],
                   cfg: dict[str, Any]) -> dict[str, Any]:
    """What ``results.json`` holds (see the module docstring); the keys of
    :func:`okgen.memory.report.results` (so :func:`okgen.memory.report.compare` takes it) plus
    OAKS's ``acc``, ``al``, ``ds``, ``pm``, ``transitions``, ``rates``, ``by_changes``."""
    n_iv = len(stream.manifest.intervals)
    items, per_q = [], []
    for q in questions:
        preds = [rows.get((q.id, t), {}).get("pred") for t in range(n_iv)]
        items.append((list(q.answers), preds))
        per_q.append(sum(p == g for p, g in zip(preds, q.answers)) / n_iv)
    sc = score(items).to_dict()
    got = list(rows.values())
    lo, hi = bootstrap_ci(per_q, seed=int(cfg.get("seed", 0))) if per_q else (0.0, 0.0)
    return {"kind": "okgen-stream-memory-results", "stream": stream.manifest.name,
            "signature": stream.manifest.signature, "setting": setting, "config": cfg, **sc,
            "accuracy": round(sc["acc"], 6), "ci95": [lo, hi], "asked": len(questions) * n_iv, "scored": len(got),
            "correct": sum(bool(r.get("correct")) for r in got), "errors": sum(r.get("error") is not None for r in got),
            "truncated": sum(bool(r.get("truncated")) for r in got),
            "intervals": [iv.label for iv in stream.manifest.intervals],
            "phase_boundaries": sorted({t for q in questions for t in range(1, n_iv) if q.answers[t] != q.answers[t - 1]}),
            "by_age": by_age(view, got), "dated": rates(questions, got, n_iv),
            "cost_per_day": costs, "cost_mean": mean_costs(costs), "okgen": __version__}


__all__ = ["UNDATED_EPOCH", "interval_dates", "read_rows", "run_stream_memory", "stream_articles", "stream_results"]
