"""A streamed track as a question: all its values, ``not known yet`` and same-type distractors.

Distractors come from :mod:`okgen.generate.distractors`: numbers, percentages and amounts
perturbed in the answer's format; names of the same kind (people, organisations) that the
stream's other facts mention. No distractor equals a value the track ever had, so exactly one
option is valid at each interval.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping

from okgen.errors import ConfigError
from okgen.facts.records import QUESTION_FORMS, Fact
from okgen.facts.rules import key as name_key
from okgen.facts.rules import number_key, same_name
from okgen.generate import distractors as dis
from okgen.hashing import sha256_text
from okgen.streams.records import NOT_KNOWN, StreamQuestion, Track

MIN_OPTIONS = 6
# Fact object kinds -> the distractor kinds of okgen.generate.distractors
KINDS = {"count": "count", "number": "count", "money": "money", "percent": "percent", "person": "person", "org": "org"}


def name_pool(facts: Iterable[Fact]) -> dis.Pool:
    """Names of people and organisations that the facts give as values (the distractor pool)."""
    pool = dis.Pool()
    for f in facts:
        if f.object_kind in ("person", "org"):
            pool.add(f.object_kind, f.object, f.article_id)
    return pool


def _value_key(kind: str, text: str) -> str | None:
    return name_key(text) if kind in ("person", "org") else number_key(text)


def make_question(track: Track, *, pool: dis.Pool, seed: int, year: int,
                  evidence: Mapping[str, Mapping[int, list[str]]] | None = None,
                  relation_pool: dis.Pool | None = None) -> StreamQuestion:
    """The question of a streamed track. Distractors come first from ``relation_pool`` (the
    values of the track's relation in other tracks: other prime ministers for a prime minister),
    then from ``pool`` (every name the facts give); ties are drawn with the track's seed.

    Raises:
        ConfigError: the track has a same-day conflict or too few changes (it is not streamed),
            or fewer than six distinct options can be made.
    """
    if track.excluded:
        raise ConfigError(f"track {track.id} cannot be streamed: {track.excluded}")
    rng = random.Random(int(sha256_text(f"{seed}|{track.id}")[:16], 16))
    order = list(dict.fromkeys(v for v in track.gold if v is not None))
    values = [track.labels[v] for v in order]
    question = QUESTION_FORMS[track.relation].format(s=track.subject)
    kind = KINDS[track.object_kind]
    need = max(2, MIN_OPTIONS - len(values) - 1)
    taken = {_value_key(track.object_kind, v) for v in values} | {name_key(NOT_KNOWN)}
    picked: list[str] = []
    pools = [p for p in (relation_pool, pool) if p is not None] if kind in dis.POOL_KINDS else [pool]
    for source, attempt in ((p, a) for p in pools for a in range(4)):
        if len(picked) >= need:
            break
        cands = dis.pick(values[-1], kind, pool=source, article_id="", article_norm=" ", question=question, rng=rng,
                         year=year, n=need - len(picked) + len(values) + 2 * attempt) or []
        for c in cands:
            k = _value_key(track.object_kind, c)
            names = track.object_kind in ("person", "org")
            if k and k not in taken and c not in picked and not (names and any(same_name(k, t) for t in taken)):
                picked.append(c)
                taken.add(k)
    if len(picked) < need:
        raise ConfigError(f"track {track.id}: only {len(picked)} distractor(s) of kind {kind}, {need} needed")
    choices = values + [NOT_KNOWN] + picked[:need]
    rng.shuffle(choices)
    index = {c: i for i, c in enumerate(choices)}
    answers = tuple(index[track.labels[v]] if v is not None else index[NOT_KNOWN] for v in track.gold)
    sources: dict[str, dict[str, list[str]]] = {}
    for v in order:
        per = (evidence or {}).get(v, {})
        if per:
            sources[track.labels[v]] = {str(i): list(s) for i, s in sorted(per.items())}
    return StreamQuestion(id=sha256_text(f"okgen-stream-question|{track.id}")[:16], track=track.id, question=question,
                          choices=tuple(choices), answers=answers, not_known_index=index[NOT_KNOWN],
                          changes=track.changes, sources=sources)
