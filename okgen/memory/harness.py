"""Stream harness: feed a memory day by day, ask each question once, nothing from the future.

A **stream** is a list of :class:`StreamDay` (date, that day's articles, that day's questions),
oldest first. One setting runs into one folder::

    RUN/run.json            what the run is (setting, memory identity, k, ask policy, days, model)
    RUN/predictions.jsonl   one Prediction per question, appended and fsynced after each day
    RUN/memory_state.json   the memory's state after the last completed day, and per-day costs
    RUN/results.json        accuracy, retention, stale/future rates, gold in context, cost per day

Settings: ``none``; the dated contexts ``ctx:closest`` / ``ctx:latest`` / ``ctx:cumulative`` over
every article of the stream (the eval-time view, :mod:`okgen.memory.dated`); and
``mem:SPEC`` for a memory agent (:mod:`okgen.memory.base`).

**The guard.** For a memory, day *d*'s questions are asked right after ``observe(d, ...)``, and
(``ask="end"``) again only after the last day. Every article handed to ``observe`` must be dated
on or before that day, and every passage ``retrieve`` returns must be dated on or before
``as_of`` and, when it names an article of the stream, one already observed: otherwise
:class:`LeakError` stops the run. A memory that reads ahead (from a store, from a reference
it kept) is caught the first time it shows what it saw.

The day loop (:func:`feed_days`: guard, ``observe``, ask, fsync, save state) is shared with the
stream path (:mod:`okgen.memory.on_streams`), which asks every stream question every day.

**Resuming.** Predictions are written before the state that follows them: a run killed
after day *d*'s predictions but before its state restores the state of day *d-1*, observes day
*d* again and skips the questions already scored, so every question is scored once.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from okgen import __version__
from okgen.errors import ConfigError, OkgenError
from okgen.eval import contexts
from okgen.eval.rundir import PREDICTIONS, RESULTS, open_run_dir, read_predictions, write_run_file
from okgen.eval.runner import SPEED_OPTIONS
from okgen.eval.scoring import Mode, score
from okgen.eval.templates import Passage, get_template
from okgen.files import atomic_write_text, pretty_json, record_line
from okgen.memory.base import Memory, load_memory
from okgen.memory.dated import DATED_SETTINGS, Pool
from okgen.models.base import Backend
from okgen.schema import Article, Prediction, Question

log = logging.getLogger(__name__)
STATE = "memory_state.json"
ASK = ("same-day", "end")


class LeakError(OkgenError):
    """Something dated after the question's ``as_of`` reached the memory or the context."""


@dataclass
class StreamDay:
    """One day of a stream: its date, its articles and its questions."""

    date: dt.date
    articles: list[Article]
    questions: list[Question]


@dataclass
class StreamOptions:
    """Options of a stream run."""

    k: int = 5
    ask: str = "same-day"
    limit: int | None = None
    seed: int = 0
    scoring: str = "loglik"
    guard: bool = True
    overwrite: bool = False


@dataclass
class _Feed:
    """What the guard knows: every article id of the stream with its date, and what was observed."""

    dates: dict[str, dt.date]
    seen: set[str] = field(default_factory=set)

    def check_batch(self, day: dt.date, articles: Sequence[Article]) -> None:
        late = [a for a in articles if a.date > day]
        if late:
            raise LeakError(f"article {late[0].id} dated {late[0].date} was about to be observed on {day}")

    def check_passages(self, who: str, as_of: dt.date, passages: Sequence[Passage]) -> None:
        for p in passages:
            try:
                when = dt.date.fromisoformat(p.date[:10]) if p.date else None
            except ValueError:
                raise OkgenError(f"{who} returned {p.article_id or 'a passage'} with date {p.date!r}: a "
                                 "passage's date is ISO (YYYY-MM-DD), or empty") from None
            if when is not None and when > as_of:
                raise LeakError(f"{who} returned {p.article_id or 'a passage'} dated {p.date} for a question asked "
                                f"on {as_of}: it saw the future")
            if p.article_id in self.dates and p.article_id not in self.seen:
                raise LeakError(f"{who} returned article {p.article_id} (dated {self.dates[p.article_id]}) "
                                f"before it was observed (question asked on {as_of}): it read ahead")


def parse_setting(setting: str) -> tuple[str, str | None]:
    """``none`` / ``ctx:...`` / ``mem:SPEC`` into (kind, memory spec)."""
    if setting == "none":
        return "none", None
    if setting in DATED_SETTINGS:
        return "dated", None
    if setting.startswith("mem:") and len(setting) > 4:
        return "memory", setting[4:]
    raise ConfigError(f"unknown memory eval setting {setting!r}; known: none, {', '.join(DATED_SETTINGS)}, mem:NAME")


def schedule(days: Sequence[StreamDay], ask: str, limit: int | None) -> dict[dt.date, list[Question]]:
    """When each question is asked: on its own date (``same-day``) or after the last day (``end``)."""
    if ask not in ASK:
        raise ConfigError(f"ask must be one of {', '.join(ASK)}, got {ask!r}")
    out: dict[dt.date, list[Question]] = {d.date: [] for d in days}
    for d in days:
        qs = d.questions[:limit] if limit else d.questions
        for q in qs:
            if q.date > d.date:
                raise LeakError(f"question {q.id} dated {q.date} is in the day {d.date}")
            out[d.date if ask == "same-day" else days[-1].date].append(q)
    return out


def run_stream(days: Sequence[StreamDay], setting: str, backend: Backend, out: str | Path,
               opts: StreamOptions | None = None, *, memory: Memory | None = None,
               memory_model: str | None = None) -> dict[str, Any]:
    """Run one setting over a stream and return (and write) its results.

    Args:
        days: the stream, oldest first.
        setting: ``none``, ``ctx:closest``/``ctx:latest``/``ctx:cumulative`` or ``mem:SPEC``.
        backend: the model under test (loaded once by the caller).
        out: the run folder.
        opts: options.
        memory: an already built memory for ``mem:`` settings (else ``load_memory(SPEC)``).
        memory_model: chat model spec for memories that need one (``summary``, LLM extractors).

    Raises:
        LeakError: the guard caught a future article (see the module docstring).
        ConfigError: a bad setting, or the folder holds another run.
    """
    from okgen.memory.report import results

    opts = opts or StreamOptions()
    days = sorted(days, key=lambda d: d.date)
    kind, _ = parse_setting(setting)
    path = Path(out)
    mem = memory_for(setting, memory, memory_model)
    plan = schedule(days, opts.ask, opts.limit)
    cfg = {"kind": "okgen-stream-run", "setting": setting, "memory": mem.identity() if mem else None,
           "k": opts.k, "ask": opts.ask, "limit": opts.limit, "seed": opts.seed, "scoring": opts.scoring,
           "guard": opts.guard, "model": backend.spec.name,
           "model_options": {k: v for k, v in sorted(backend.spec.options.items()) if k not in SPEED_OPTIONS}, "template": "mc-v1" + backend.template_suffix,
           "days": [[str(d.date), len(d.articles), len(d.questions)] for d in days]}
    st = open_run(path, cfg, opts, backend)
    done = read_predictions(path / PREDICTIONS)
    template, mode = get_template(None, "mc"), Mode(opts.scoring, "mc")
    pool = Pool.of(a for d in days for a in d.articles)
    start_memory(mem, st, opts.seed, [q for qs in plan.values() for q in qs])
    base = {"setting": setting, "retriever": None, "window": None, "k": opts.k}

    def ask(i: int, date: dt.date, retrieve: Callable[[str], list[Passage]]) -> tuple[list[str], dict[str, Any]]:
        pending = [q for q in plan[date] if q.id not in done or done[q.id].error is not None]
        t0 = time.perf_counter()
        fitted = []
        for q in pending:
            if kind == "dated":
                passages = [contexts.article_passage(a) for a in pool.context(setting, q)]
            else:
                passages = retrieve(q.question)
            reserve = mode.reserve(backend, q)
            if getattr(mem, "chronological", False) or setting == "ctx:cumulative":
                fitted.append(contexts.fit_oldest_first(template, q, passages, setting, backend, reserve))
            else:
                fitted.append(contexts.fit(template, q, passages, setting, backend, reserve))
        retrieve_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        preds = score(backend, mode, pending, fitted, base) if pending else []
        cost = {"retrieve_s": round(retrieve_s, 6), "score_s": round(time.perf_counter() - t0, 6),
                "questions": len(preds), "prompt_tokens": sum(p.prompt_tokens for p in preds)}
        for p in preds:
            done[p.question_id] = p
        return [record_line(p) for p in preds], cost

    costs = feed_days(path, [(d.date, d.articles) for d in days], mem, opts, st, ask,
                      {a.id: a.date for d in days for a in d.articles})
    asked = {q.id: (q, as_of) for as_of, qs in plan.items() for q in qs}
    res = results(setting, asked, read_predictions(path / PREDICTIONS), pool, costs, cfg)
    res["okgen"] = __version__
    atomic_write_text(path / RESULTS, pretty_json(res))
    if mem is not None:
        mem.close()
    return res


def memory_for(setting: str, memory: Memory | None = None, memory_model: str | None = None) -> Memory | None:
    """The memory a setting runs (``memory`` when given): ``none`` for ``none``, the spec's for
    ``mem:SPEC`` (``memory_model`` passed to ``summary`` and to ``extractor=llm``), None for the
    dated contexts."""
    kind, spec = parse_setting(setting)
    if kind == "memory":
        wants = spec.split(",")[0] == "summary" or "extractor=llm" in spec.split(",")[1:]
        extra = {"model": memory_model} if memory_model and wants and ",model=" not in spec else {}
        return memory or load_memory(spec, **extra)
    if kind == "none":
        return memory or load_memory("none")
    return None


def open_run(path: Path, cfg: dict[str, Any], opts: StreamOptions, backend: Backend) -> dict[str, Any]:
    """Create or check the run folder (its ``run.json`` must hold ``cfg``) and return the saved
    state (empty for a new run, or with ``--overwrite``)."""
    stored = open_run_dir(path, cfg, opts.overwrite)
    if opts.overwrite:
        (path / STATE).unlink(missing_ok=True)
    if not stored:
        write_run_file(path, cfg, "", backend.spec.text or backend.spec.name, backend.info())
    return _load_state(path)


def start_memory(mem: Memory | None, st: dict[str, Any], seed: int, questions: Sequence[Any]) -> None:
    """Restore the memory from the saved state (a server-side memory keeps what it stored, so it
    is not reset first), else reset it; a question-aware memory learns the questions."""
    if mem is None:
        return
    if st:
        mem.restore(st["state"])
    else:
        mem.reset(seed)
    if getattr(mem, "question_aware", False):
        mem.prepare(list(questions))


Ask = Callable[[int, dt.date, Callable[[str], list[Passage]]], tuple[list[str], dict[str, Any]]]


def feed_days(path: Path, days: Sequence[tuple[dt.date, Sequence[Article]]], mem: Memory | None,
              opts: StreamOptions, st: dict[str, Any], ask: Ask, dates: dict[str, dt.date]) -> list[dict[str, Any]]:
    """Feed the memory day by day from the saved state on and ask each day's questions.

    For day *i*: the guard checks the batch, ``observe`` takes it, then ``ask(i, date, retrieve)``
    scores what is pending and returns the prediction lines and its costs (``retrieve`` is the
    memory's, guarded, as of that day). The lines are appended and fsynced before the memory's
    state and the day's costs are saved, so a killed run repeats at most one day and scores
    nothing twice (``ask`` skips what is already scored). Returns the costs per day.

    Raises:
        LeakError: the guard caught a future article.
    """
    feed = _Feed(dates)
    start = st.get("next_day", 0)
    costs: list[dict[str, Any]] = st.get("costs", [])
    for _, arts in days[:start]:
        feed.seen.update(a.id for a in arts)
    from okgen.progress import bar

    with open(path / PREDICTIONS, "a", encoding="utf-8") as f, \
            bar(total=len(days), initial=start, desc=f"{path.parent.name}/{path.name}", unit="day") as pb:
        for i in range(start, len(days)):
            date, arts = days[i]
            row: dict[str, Any] = {"date": str(date), "articles": len(arts)}
            t0 = time.perf_counter()
            if mem is not None:
                if opts.guard:
                    feed.check_batch(date, arts)
                mem.observe(date, arts)
            feed.seen.update(a.id for a in arts)
            row["observe_s"] = round(time.perf_counter() - t0, 6)

            def retrieve(query: str, date: dt.date = date) -> list[Passage]:
                if mem is None:
                    return []
                passages = mem.retrieve(query, date, opts.k)
                if opts.guard:
                    feed.check_passages(f"memory {mem.name}", date, passages)
                return passages

            lines, cost = ask(i, date, retrieve)
            for line in lines:
                f.write(line + "\n")
            f.flush()
            os.fsync(f.fileno())
            row.update(cost, memory=mem.stats() if mem is not None else {})
            costs.append(row)
            state = mem.state() if mem is not None else {}
            atomic_write_text(path / STATE, json.dumps({"next_day": i + 1, "state": state, "costs": costs},
                                                       sort_keys=True))
            pb.update(1)
    return costs


def _load_state(path: Path) -> dict[str, Any]:
    try:
        return json.loads((path / STATE).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise ConfigError(f"{path / STATE}: corrupted; rerun with --overwrite") from None


def predictions_of(path: str | Path) -> dict[str, Prediction]:
    """A stream run's predictions by question id."""
    return read_predictions(Path(path) / PREDICTIONS)


__all__ = ["ASK", "LeakError", "StreamDay", "StreamOptions", "feed_days", "memory_for", "open_run", "parse_setting", "predictions_of",
           "run_stream", "schedule", "start_memory"]
