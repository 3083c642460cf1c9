"""Tracks: the values of one (subject, relation) day by day, and what each day did to them.

Per interval, a track's facts are sorted out as follows:

* facts flagged ``past``, or dated (``valid_from``) before the current value took effect and
  naming another value, are **retrospective**: a past value reported late, ignored;
* two different values on one interval are a **conflict**: the track is ambiguous and
  excluded (``excluded`` says on which day and which values);
* the current value again: the value **stays**;
* a new value reported by at least ``min_outlets`` outlets that day **changes** the value
  (``new`` for the first value; ``rule="outlets"``); by fewer it is **uncorroborated** and
  ignored, unless a transition validator (:mod:`okgen.streams.validator`) is given and judges
  it a real change of the current value (``rule="validator"``; its judgement is the day's
  ``note`` either way);
* no report: the value stays as it was (``none``).

A track is streamed when it is not excluded and its gold sequence (``not known yet`` before the
first value) changes at least ``min_changes`` times.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from okgen.facts.records import Fact
from okgen.facts.rules import same_name
from okgen.streams.records import Track, TrackDay
from okgen.streams.validator import Report


def _label(fact: Fact) -> str:
    """How a value is shown: the number with its unit for numbers, the name for names."""
    import re

    if fact.object_kind in ("person", "org"):
        return fact.object
    m = re.search(r"[$€£]?\s?\d[\d,.]*(?:\s?(?:%|percent|million|billion|trillion))?", fact.object)
    text = m.group(0).strip() if m else fact.object
    return text.replace(" percent", "%")


def build_tracks(facts: Sequence[Sequence[Fact]], dates: Sequence[dt.date | None] | None = None, *,
                 min_outlets: int = 2, min_changes: int = 2, validator: Any = None) -> list[Track]:
    """Follow every (subject, relation) of ``facts`` (one list per interval) across the intervals.

    Args:
        facts: the facts of each interval, in interval order.
        dates: the news date of each interval (for ``valid_from`` and messages), if known.
        min_outlets: outlets that must report a new value on one interval for it to count.
        min_changes: least gold changes for a track to be streamed (else ``excluded`` says why).
        validator: a :class:`~okgen.streams.validator.TransitionValidator` that judges new values
            reported by fewer than ``min_outlets`` outlets (None: they are ignored).

    Raises:
        OkgenError: the validator failed transiently (nothing is decided; rerun).
    """
    n = len(facts)
    dates = list(dates) if dates is not None else [None] * n
    by_track: dict[tuple[str, str], list[list[Fact]]] = defaultdict(lambda: [[] for _ in range(n)])
    for i, day in enumerate(facts):
        for f in day:
            by_track[(f.relation, f.subject_key)][i].append(f)
    jobs = [_track(rel, skey, days, dates, min_outlets, min_changes, validator)
            for (rel, skey), days in sorted(by_track.items())]
    if validator is None:
        return [_sync(j) for j in jobs]
    from okgen.llm import run_sync

    async def judge_all() -> list[Track]:
        try:
            return list(await asyncio.gather(*jobs))
        finally:
            await validator.client.aclose()

    return run_sync(judge_all())


def _sync(coro: Any) -> Any:
    """The value of a coroutine that never waits (a track without a validator)."""
    try:
        coro.send(None)
    except StopIteration as stop:
        return stop.value
    coro.close()
    raise RuntimeError("a track waited without a validator")


async def _track(rel: str, skey: str, days: list[list[Fact]], dates: list[dt.date | None], min_outlets: int,
                 min_changes: int, validator: Any = None) -> Track:
    first = next(f for day in days for f in day)
    labels: dict[str, str] = {}
    current: str | None = None
    since: dt.date | None = None
    entries: list[TrackDay] = []
    excluded = None
    said: dict[str, Any] = {}  # value key -> the latest report of it (for the validator)
    for i, day in enumerate(days):
        live: dict[str, set[str]] = defaultdict(set)
        first_report: dict[str, Fact] = {}
        retro = 0
        for f in day:
            late = (f.valid_from is not None and since is not None and f.valid_from < since
                    and not (f.object_key == current or current is not None and f.object_kind in ("person", "org")
                             and same_name(f.object_key, current)))
            if f.past or late:
                retro += 1
                continue
            okey = f.object_key
            if f.object_kind in ("person", "org"):  # one person under two spellings is one value
                okey = next((k for k in labels if same_name(k, okey)), okey)
            live[okey].add(f.outlet)
            first_report.setdefault(okey, f)
            labels.setdefault(okey, _label(f))
        reported = {k: sorted(v) for k, v in sorted(live.items())}
        rule = note = None
        if len(live) > 1:
            status = "conflict"
            if excluded is None:
                where = dates[i] or f"interval {i}"
                seen = "; ".join(f"{labels[k]} ({', '.join(v)})" for k, v in reported.items())
                excluded = f"same-day conflict on {where}: {seen}"
        elif len(live) == 1:
            (value, outlets), = live.items()
            accepted = len(outlets) >= min_outlets
            f = first_report[value]
            rep = Report(labels[value], f.reported, f.outlet, f.evidence)
            if value == current:
                status = "stays"
            else:
                rule = "outlets" if accepted else None
                if not accepted and validator is not None and excluded is None:
                    j = await validator.ajudge(first.subject, rel, said.get(current) if current else None, rep)
                    accepted, note, rule = j.accepted, j.note, "validator" if j.accepted else None
                if accepted:
                    status = "new" if current is None else "changes"
                    current, since = value, dates[i]
                else:
                    status = "uncorroborated"
            if value == current:
                said[value] = rep  # the latest report of the value in force
        else:
            status = "retrospective" if retro else "none"
        entries.append(TrackDay(interval=i, status=status, reported=reported, value=current, rule=rule, note=note))
    gold = [d.value for d in entries]
    changes = sum(1 for a, b in zip(gold, gold[1:]) if a != b)
    if excluded is None and changes < min_changes:
        excluded = f"{changes} change(s), fewer than {min_changes}"
    used = {v for v in gold if v is not None}
    return Track(id=f"{rel}/{skey}", subject=first.subject, relation=rel, object_kind=first.object_kind,
                 days=tuple(entries), labels={k: v for k, v in labels.items() if k in used or excluded},
                 changes=changes, excluded=excluded)


def transitions(track: Track) -> int:
    """Accepted changes of value (``new`` and ``changes`` days)."""
    return sum(1 for d in track.days if d.status in ("new", "changes"))
