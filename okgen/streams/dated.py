"""Dated contexts and their diagnostics on a stream: closest, latest, cumulative; stale and future answers.

A stream question is asked at every interval t. Its **entity** is the track's subject (policy
``track-subject-v1``): a document is about the question when its title or text names the
subject (case-insensitive) or holds one of the question's evidence sentences (any option, any
interval: the stream's ``sources``); an imported question without a track (OAKS) is about every
document. The dated settings give, at interval t:

* ``ctx:closest``: the documents about the entity of the newest interval <= t that has any
  (interval t itself whenever it has one): today's oracle;
* ``ctx:latest``: the newest document about the entity in the whole stream (what is known at
  eval time); it is **future context** when its interval is after t, and every row records it;
* ``ctx:cumulative``: every document about the entity of intervals <= t, oldest first,
  truncated with :data:`okgen.memory.dated.CUMULATIVE_POLICY` (``drop-oldest``).

**Stale and future answers** use the gold sequence itself: at interval t a wrong option is
*stale* when it was the gold answer at an earlier interval and *future* when it is the gold
answer only at a later one (``not known yet`` is neither). The **gold evidence** at t is every
document of an interval <= t holding an evidence sentence of the gold option; the **age of the
needed fact** is t minus the last such interval (retention). Rows with ``not known yet`` as
gold need no fact: no evidence, no age.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from okgen.memory.dated import CUMULATIVE_POLICY, DATED_SETTINGS
from okgen.streams.records import StreamDocument, StreamQuestion
from okgen.streams.store import Stream

ENTITY_POLICY = "track-subject-v1"
_WS = re.compile(r"\s+")


def norm(text: str) -> str:
    """Lower-cased text with runs of whitespace as one space (for matching sentences)."""
    return _WS.sub(" ", text).strip().lower()


class StreamView:
    """What the dated settings and the diagnostics need to know about a stream's questions."""

    def __init__(self, stream: Stream):
        self.stream = stream
        self.n = len(stream.manifest.intervals)
        self.docs = sorted(stream.documents, key=lambda d: (d.interval, d.id))
        self._text = {d.id: norm(f"{d.title or ''}\n{d.text}") for d in self.docs}
        self._subject = {t.id: t.subject for t in stream.tracks}
        self._about: dict[str, list[StreamDocument]] = {}
        self._evidence: dict[str, dict[int, dict[int, set[str]]]] = {}

    def subject(self, q: StreamQuestion) -> str | None:
        """The question's entity: its track's subject (None for an imported question)."""
        return self._subject.get(q.track)

    def _sentences(self, q: StreamQuestion) -> dict[int, dict[int, list[str]]]:
        """Option index -> interval -> normalised evidence sentences."""
        index = {c: i for i, c in enumerate(q.choices)}
        out: dict[int, dict[int, list[str]]] = defaultdict(dict)
        for option, per in q.sources.items():
            if option in index:
                for t, sents in per.items():
                    out[index[option]][int(t)] = [s for x in sents if (s := norm(x))]
        return out

    def about(self, q: StreamQuestion) -> list[StreamDocument]:
        """The documents about the question's entity, oldest first."""
        if q.id in self._about:
            return self._about[q.id]
        subj = self.subject(q)
        if subj is None:
            found = list(self.docs)
        else:
            sents = [s for per in self._sentences(q).values() for ss in per.values() for s in ss]
            name = norm(subj or "")
            found = [d for d in self.docs if (name and name in self._text[d.id]) or any(s in self._text[d.id] for s in sents)]
        self._about[q.id] = found
        return found

    def evidence(self, q: StreamQuestion) -> dict[int, dict[int, set[str]]]:
        """Option index -> interval -> ids of the documents holding one of its evidence sentences there."""
        if q.id not in self._evidence:
            by_iv: dict[int, list[StreamDocument]] = defaultdict(list)
            for d in self.docs:
                by_iv[d.interval].append(d)
            out: dict[int, dict[int, set[str]]] = defaultdict(dict)
            for opt, per in self._sentences(q).items():
                for t, sents in per.items():
                    out[opt][t] = {d.id for d in by_iv.get(t, []) if any(s in self._text[d.id] for s in sents)}
            self._evidence[q.id] = out
        return self._evidence[q.id]

    def context(self, setting: str, q: StreamQuestion, t: int) -> list[StreamDocument]:
        """The documents a dated setting gives at interval ``t`` (``ctx:latest`` may give a later one)."""
        arts = self.about(q)
        if setting == "ctx:closest":
            before = [d for d in arts if d.interval <= t]
            return [d for d in before if d.interval == before[-1].interval] if before else []
        if setting == "ctx:latest":
            return arts[-1:]
        if setting == "ctx:cumulative":
            return [d for d in arts if d.interval <= t]
        raise ValueError(f"not a dated setting: {setting} (known: {', '.join(DATED_SETTINGS)})")

    def gold_evidence(self, q: StreamQuestion, t: int) -> tuple[set[str], set[str]]:
        """Ids of the documents and the normalised sentences that state the gold option at
        intervals <= t (both empty when the gold is ``not known yet`` or nothing was recorded)."""
        g = q.answers[t]
        if g == q.not_known_index:
            return set(), set()
        ids = {i for iv, docs in self.evidence(q).get(g, {}).items() if iv <= t for i in docs}
        sents = {s for iv, ss in self._sentences(q).get(g, {}).items() if iv <= t for s in ss}
        return ids, sents

    def age(self, q: StreamQuestion, t: int) -> int | None:
        """Intervals since the gold option was last reported (None: ``not known yet`` or never reported)."""
        g = q.answers[t]
        if g == q.not_known_index:
            return None
        seen = [iv for iv in self._sentences(q).get(g, {}) if iv <= t]
        return t - max(seen) if seen else None

    def gold_in_context(self, q: StreamQuestion, t: int, ids: Iterable[str], texts: Iterable[str]) -> bool | None:
        """Whether the context (document or source ids, and the texts the model read) holds the
        gold evidence at ``t``; None when there is none to hold."""
        gids, sents = self.gold_evidence(q, t)
        if not gids and not sents:
            return None
        if gids & set(ids):
            return True
        body = [norm(x) for x in texts]
        return any(s in b for s in sents for b in body)


def answer_kinds(q: StreamQuestion, t: int) -> tuple[set[int], set[int]]:
    """Indices of the stale and of the future options of ``q`` at interval ``t``."""
    gold = q.answers[t]
    skip = {gold, q.not_known_index}
    before = set(q.answers[:t])
    stale = before - skip
    future = set(q.answers[t + 1:]) - before - skip
    return stale, future


def rates(questions: Sequence[StreamQuestion], rows: Iterable[dict[str, Any]], n: int) -> dict[str, Any]:
    """Stale- and future-answer rates, gold evidence and future context, overall and per interval.

    ``rows`` are prediction rows (``question_id``, ``interval``, ``pred``, and optionally
    ``gold_in_context`` and ``future_context``).
    """
    qs = {q.id: q for q in questions}
    acc: dict[str, list[list[int]]] = {k: [[0, 0] for _ in range(n)] for k in ("stale", "future", "gold", "fctx")}
    for r in rows:
        q = qs.get(r["question_id"])
        if q is None:
            continue
        t = r["interval"]
        stale, future = answer_kinds(q, t)
        for key, kinds in (("stale", stale), ("future", future)):
            if kinds:
                acc[key][t][0] += 1
                acc[key][t][1] += r.get("pred") in kinds
        if r.get("gold_in_context") is not None:
            acc["gold"][t][0] += 1
            acc["gold"][t][1] += bool(r["gold_in_context"])
        acc["fctx"][t][0] += 1
        acc["fctx"][t][1] += bool(r.get("future_context"))

    def rate(pairs: list[list[int]]) -> float | None:
        den = sum(p[0] for p in pairs)
        return round(sum(p[1] for p in pairs) / den, 6) if den else None

    return {"stale_answer_rate": rate(acc["stale"]), "with_stale_choice": sum(p[0] for p in acc["stale"]),
            "future_answer_rate": rate(acc["future"]), "with_future_choice": sum(p[0] for p in acc["future"]),
            "gold_in_context": rate(acc["gold"]), "with_gold_evidence": sum(p[0] for p in acc["gold"]),
            "future_context": rate(acc["fctx"]),
            "by_interval": {"stale_answer_rate": [rate([p]) for p in acc["stale"]],
                            "future_answer_rate": [rate([p]) for p in acc["future"]],
                            "gold_in_context": [rate([p]) for p in acc["gold"]],
                            "future_context": [rate([p]) for p in acc["fctx"]]},
            "entity_policy": ENTITY_POLICY, "cumulative_policy": CUMULATIVE_POLICY}


def by_age(view: StreamView, rows: Iterable[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Accuracy by the age of the needed fact (intervals since the gold was last reported; ``n/a``
    when the gold is ``not known yet`` or was never reported)."""
    qs = {q.id: q for q in view.stream.questions}
    groups: dict[str, list[bool]] = defaultdict(list)
    for r in rows:
        q = qs.get(r["question_id"])
        if q is not None:
            a = view.age(q, r["interval"])
            groups["n/a" if a is None else str(a)].append(bool(r.get("correct")))
    order = sorted(groups, key=lambda k: (k == "n/a", int(k) if k != "n/a" else 0))
    return {k: {"n": len(groups[k]), "accuracy": round(sum(groups[k]) / len(groups[k]), 6)} for k in order}


__all__ = ["ENTITY_POLICY", "StreamView", "answer_kinds", "by_age", "norm", "rates"]
