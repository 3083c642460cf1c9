"""Gates on the whole day's questions: near duplicates of the last days' snapshots, outlet balance.

Both act when a date's questions are assembled (:func:`okgen.generate.pipeline.run_generate`),
after the near duplicates within the day (``near_duplicate``), each a named ``check`` verdict:

* ``near_duplicate_recent``: the question nearly repeats one of a snapshot of the
  :data:`RECENT_DAYS` days before (same test as :func:`~okgen.generate.checks.near_duplicates`);
* ``outlet_balance``: its outlet already has its cap of the day's questions: ``max_outlet_share``
  of them (``[generate] max_outlet_share``, default :data:`DEFAULT_MAX_OUTLET_SHARE`; 1 turns
  the cap off), or twice an even share when the day has few outlets, and never fewer than
  :data:`MIN_PER_OUTLET`. The questions an outlet keeps are drawn with the seed, spread over
  its articles;
* ``answer_balance``: the day already has :data:`DEFAULT_MAX_ANSWER_REPEATS` questions with the
  same answer (``[generate] max_answer_repeats``; 0 turns the cap off): a set where "China"
  answers one question in six can be played by its answers alone. The questions an answer keeps
  are drawn with the seed, one outlet at a time.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import logging
import math
import random
from collections import defaultdict
from collections.abc import Sequence

from okgen.generate.records import Candidate
from okgen.settings import Workspace

log = logging.getLogger(__name__)

RECENT = "near_duplicate_recent"
BALANCE = "outlet_balance"
ANSWERS = "answer_balance"
DEFAULT_MAX_ANSWER_REPEATS = 2
RECENT_DAYS = 7
DEFAULT_MAX_OUTLET_SHARE = 0.2
MIN_PER_OUTLET = 5
"""Every outlet may keep at least this many questions, whatever the cap."""


def recent_questions(ws: Workspace, date: dt.date, days: int = RECENT_DAYS) -> list[tuple[str, str, str, str]]:
    """(question, answer, "<date> <question id>", evidence) of the newest snapshot of each of the ``days``
    days before ``date`` in the workspace; empty when there is none."""
    from okgen.snapshot.store import list_snapshots

    newest: dict[dt.date, object] = {}
    for _, snap in list_snapshots(ws):
        if snap is None:
            continue
        try:
            m = snap.manifest
        except Exception as e:  # a broken folder must not stop generation; it is reported by verify
            log.warning("skipping snapshot %s: %s", snap.path, e)
            continue
        if date - dt.timedelta(days=days) <= m.date < date:
            best = newest.get(m.date)
            if best is None or m.created_at > best.manifest.created_at:  # type: ignore[attr-defined]
                newest[m.date] = snap
    out = []
    for d in sorted(newest):
        out += [(q.question, q.answer, f"{d} {q.id}", q.evidence or "") for q in newest[d].questions]  # type: ignore[attr-defined]
    return out


def prior_fingerprint(prior: Sequence[tuple[str, ...]]) -> str:
    """A hash of the recent questions (a stored assembly made against others is redone)."""
    h = hashlib.sha256()
    for item in prior:
        h.update(item[2].encode() + b"\n")
    return h.hexdigest()[:16]


def outlet_caps(sources: Sequence[str], max_share: float) -> dict[str, int]:
    """The most questions each outlet keeps: ``ceil(max_share x total)``, or twice an even
    share (``ceil(2 x total / outlets)``) when that is more, at least :data:`MIN_PER_OUTLET`."""
    n = len(sources)
    cap = max(MIN_PER_OUTLET, math.ceil(max_share * n), math.ceil(2 * n / max(1, len(set(sources)))))
    return {s: cap for s in set(sources)}


def balance_outlets(cands: Sequence[Candidate], sources: Sequence[str], max_share: float, seed: int) -> list[bool]:
    """Which candidates an outlet keeps under its cap (True) and which are dropped (False).

    Within an outlet, questions are taken round-robin over its articles, each article's in a
    seeded order, so the cap spreads an outlet's questions over its stories.
    """
    keep = [True] * len(cands)
    if max_share >= 1 or not cands:
        return keep
    caps = outlet_caps(sources, max_share)
    by_outlet: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    for i, (c, s) in enumerate(zip(cands, sources)):
        by_outlet[s][c.article_id].append(i)
    for s, arts in by_outlet.items():
        total = sum(len(v) for v in arts.values())
        if total <= caps[s]:
            continue
        for i in _round_robin(arts, random.Random(f"{seed}:{s}"))[caps[s]:]:
            keep[i] = False
    return keep


def balance_answers(answers: Sequence[str], sources: Sequence[str], max_repeats: int, seed: int) -> list[bool]:
    """Which questions keep their answer under the cap of ``max_repeats`` a day (True); 0 or
    less keeps all. An answer's questions are taken one outlet at a time, in a seeded order."""
    from okgen.generate.text import normalize

    keep = [True] * len(answers)
    if max_repeats <= 0:
        return keep
    groups: dict[str, list[int]] = defaultdict(list)
    for i, a in enumerate(answers):
        groups[normalize(a)].append(i)
    for key, idx in groups.items():
        if len(idx) <= max_repeats:
            continue
        by_outlet: dict[str, list[int]] = defaultdict(list)
        for i in idx:
            by_outlet[sources[i]].append(i)
        for i in _round_robin(by_outlet, random.Random(f"{seed}:answer:{key}"))[max_repeats:]:
            keep[i] = False
    return keep


def _round_robin(groups: dict[str, list[int]], rng: random.Random) -> list[int]:
    """The groups' items one group at a time: each group and the groups' order shuffled by ``rng``
    (groups taken in key order first, so the order depends on the seed only)."""
    queues = []
    for key in sorted(groups):
        q = list(groups[key])
        rng.shuffle(q)
        queues.append(q)
    rng.shuffle(queues)
    order = []
    while any(queues):
        for q in queues:
            if q:
                order.append(q.pop(0))
    return order
