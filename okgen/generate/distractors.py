"""Distractors for the extractive generator: same-kind names from the day's other articles and
plausibly perturbed numbers and dates, formatted like the answer.

Everything is seeded: the caller passes a :class:`random.Random` derived from the snapshot seed
and the article, so the same input always gives the same choices.
"""

from __future__ import annotations

import datetime as dt
import math
import random
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from okgen.generate import lexicon as lx
from okgen.generate.spans import NAME_KINDS
from okgen.generate.text import contains, normalize, parse_date

# Kinds whose distractors are names taken from other articles ("region": a LOC, not a GPE).
POOL_KINDS = (*NAME_KINDS, "event", "region")
# Multipliers for numbers: the first group gives the "close" distractor.
CLOSE_FACTORS = (0.8, 1.25, 0.9, 1.1)
# No halves, doubles or other simple ratios: options that are 2x, 1.5x or 0.5x the answer
# point at it (a reviewer worked 140,147 out of 280,294 and 245,257).
FAR_FACTORS = (0.6, 0.7, 1.4, 1.6, 1.8, 2.3, 0.45, 2.7, 0.35, 3.4)
DATE_CLOSE = (7, -7, 3, -3, 14, -14, 1, -1, 2, -2)
DATE_FAR = (30, -30, 61, -61, 92, -92, 21, -21)
# Options within six days first (close, then far): a premiere at a twelve-day festival gets
# options inside the festival, not two weeks after it; the wider sets only where those leave too few.
DATE_WEEK = ((1, -1, 2, -2, 3, -3), (5, -5, 4, -4, 6, -6))
DATE_NEAR = (5, -5, 10, -10, 21, -21, 4, -4, 12, -12, 9, -9)  # then within three weeks
YEAR_SHIFTS = (1, -1, 2, -2, 3, -3, 5, -5, 4, -4, 6, -6, 7, -7)


@dataclass
class Pool:
    """Same-kind names seen in the day's articles: kind -> {normalised: (text, article ids)}."""

    names: dict[str, dict[str, tuple[str, set[str]]]] = field(default_factory=lambda: {k: {} for k in POOL_KINDS})
    contexts: dict[str, dict[str, float]] = field(default_factory=dict)
    """Each name's context vector: tf-idf weights of the words around its mentions, unit length."""
    idf: dict[str, float] = field(default_factory=dict)
    """The inverse document frequency of each context word (a name's context is a document)."""
    roles: dict[str, dict[str, float]] = field(default_factory=dict)
    """Each name's roles in the day's sentences (``s:launch``, ``t:president``; see
    ``extractive._role_features``; the qualifier pairs left out), as unit tf-idf vectors."""
    role_idf: dict[str, float] = field(default_factory=dict)
    titled: dict[str, Counter[str]] = field(default_factory=dict)
    """How often the day writes each name with each title word ("judge": 3), as counted, and each
    qualifier with the role noun after it ("state+senator": 1)."""
    former_heads: set[str] = field(default_factory=set)
    """Names written "former President" (and the like) and never with the title alone."""
    past: dict[str, float] = field(default_factory=dict)
    """The share of each name's mentions written as no longer in office ("former President")."""
    topics: dict[str, Counter[str]] = field(default_factory=dict)
    """For each name, in how many of its sentences each content word occurs ("tariff": 8)."""
    spread: dict[str, Counter[str]] = field(default_factory=dict)
    """For each name, in how many articles its sentences use each content word (empty: not known)."""
    mentions: dict[str, int] = field(default_factory=dict)
    articles: int = 0
    """How many articles the day has (0: not known)."""

    def set_roles(self, bags: dict[str, Counter[str]], topics: dict[str, Counter[str]] | None = None) -> None:
        """Record each name's role features (normalised name -> feature counts, with the count of
        its mentions under ``#mentions``) and, with ``topics``, the words of its sentences."""
        self.topics = dict(topics or {})
        self.role_idf = _idf(bags, skip="#mentions")
        for key, bag in bags.items():
            self.roles[key] = self.role_vector(bag)
            self.titled[key] = Counter({f[2:]: c for f, c in bag.items() if f.startswith("t:") and c > 0})
            mentions = self.mentions[key] = bag.get("#mentions", 0)
            if mentions:
                self.past[key] = min(1.0, bag.get("t:former", 0) / mentions)
            if bag.get(FORMER_HEAD, 0) and bag.get(FORMER_HEAD, 0) >= bag.get(HEAD, 0):
                self.former_heads.add(key)

    def role_vector(self, bag: Counter[str]) -> dict[str, float]:
        """Role features as a unit tf-idf vector (``t:former`` left out: it is checked apart; so
        are a qualifier's pairs with its role noun, ``t:state+senator``: :attr:`titled` only)."""
        return _unit_tfidf({w: c for w, c in bag.items() if w not in ("t:former", FORMER_HEAD, HEAD) and "+" not in w},
                           self.role_idf)

    def national(self, name: str, words: set[str]) -> bool:
        """Whether most of the sentences naming ``name`` use one of the nationality ``words``
        ("Russian", in the one sentence that names Dmitry Medvedev: no option for a trip to Russia,
        though no title gives his country)."""
        key = normalize(name)
        bag, mentions = self.topics.get(key), self.mentions.get(key, 0)
        return bool(bag and mentions) and any(bag.get(w, 0) >= 0.5 * mentions for w in words)

    def was_head(self, name: str) -> bool:
        """Whether the news writes ``name`` "former President" (prime minister, premier,
        chancellor) and never "President" alone."""
        return normalize(name) in self.former_heads

    def share(self, name: str, word: str) -> float:
        """The share of ``name``'s sentences that use ``word`` (smoothed: a name seen once is
        no evidence)."""
        key = normalize(name)
        bag = self.topics.get(key)
        return bag.get(word, 0) / (self.mentions.get(key, 0) + 2) if bag else 0.0

    def focus_weights(self, answer: str, words: Counter[str]) -> dict[str, float]:
        """The words of an answer's role that say what it does in the news: each word's idf,
        times how often the news names the answer with it when it knows the answer ("tariff"
        for China, not "company")."""
        known = normalize(answer) in self.topics
        weights = {w: self.idf.get(w, 0.0) * (self.share(answer, w) if known else 1.0) for w in words}
        return {w: v for w, v in weights.items() if v > 0}

    def focus(self, name: str, weights: dict[str, float]) -> float:
        """How often the news names ``name`` with the weighted words (:meth:`focus_weights`): the
        weighted mean share of its sentences using each; Vietnam is named with "tariff" in half
        of its sentences, Ukraine in none."""
        total = sum(weights.values())
        if not total:
            return 0.0
        return sum(v * self.share(name, w) for w, v in weights.items()) / total

    def day_long(self, name: str, words: set[str]) -> bool:
        """Whether the news names ``name`` with one of ``words`` in at least :data:`DAY_LONG`
        articles: a story a reader of the day's news knows (China and "tariff"), not one
        article's (Mexico and "water"). True when the pool does not know the spread."""
        if not self.spread:
            return True
        bag = self.spread.get(normalize(name), Counter())
        return any(bag.get(w, 0) >= DAY_LONG for w in words)

    def role_similarity(self, name: str, vec: dict[str, float]) -> float:
        """Cosine of a name's role vector and ``vec`` (0 when either is unknown)."""
        return _cosine(self.roles.get(normalize(name)), vec)

    def set_contexts(self, bags: dict[str, Counter[str]]) -> None:
        """Record each name's context words (normalised name -> word counts) as tf-idf vectors."""
        self.idf = _idf(bags)
        for key, bag in bags.items():
            self.contexts[key] = self.vector(bag)

    def vector(self, bag: Counter[str]) -> dict[str, float]:
        """A bag of context words as a unit tf-idf vector (words the names never use left out)."""
        return _unit_tfidf(bag, self.idf)

    def similarity_to(self, name: str, vec: dict[str, float]) -> float:
        """Cosine of a name's context vector and ``vec`` (0 when the name is unknown)."""
        return _cosine(self.contexts.get(normalize(name)), vec)

    def similarity(self, a: str, b: str) -> float:
        """Cosine of two names' context vectors (0 when either is unknown)."""
        va, vb = self.contexts.get(normalize(a)), self.contexts.get(normalize(b))
        if not va or not vb:
            return 0.0
        if len(vb) < len(va):
            va, vb = vb, va
        return sum(v * vb.get(w, 0.0) for w, v in va.items())

    def add(self, kind: str, text: str, article_id: str) -> None:
        """Record a name of ``kind`` seen in ``article_id``."""
        if kind not in self.names:
            return
        key = normalize(text)
        entry = self.names[kind].get(key)
        if entry is None:
            self.names[kind][key] = (text, {article_id})
        else:
            entry[1].add(article_id)

    def candidates(self, kind: str, exclude_article: str) -> list[str]:
        """Names of ``kind`` from articles other than ``exclude_article``, sorted."""
        return sorted(t for t, ids in self.names.get(kind, {}).values() if ids - {exclude_article})


def _idf(bags: dict[str, Counter[str]], skip: str = "") -> dict[str, float]:
    """Inverse document frequency of each feature over the bags (one bag a document); features
    every bag has, and ``skip``, left out."""
    df: Counter[str] = Counter()
    for bag in bags.values():
        df.update(k for k in bag if k != skip)
    n = max(len(bags), 1)
    return {w: math.log(n / c) for w, c in df.items() if c < n}


def _unit_tfidf(bag: dict[str, float] | Counter[str], idf: dict[str, float]) -> dict[str, float]:
    """A bag of counts as a unit-length tf-idf vector (features without an idf left out)."""
    vec = {w: (1 + math.log(c)) * idf[w] for w, c in bag.items() if c > 0 and w in idf}
    norm = math.sqrt(sum(v * v for v in vec.values())) or 1.0
    return {w: v / norm for w, v in vec.items()}


def _cosine(a: dict[str, float] | None, b: dict[str, float]) -> float:
    """Dot product of two unit vectors held as dicts (0 when either is empty)."""
    if not a or not b:
        return 0.0
    if len(a) < len(b):
        a, b = b, a
    return sum(v * a.get(w, 0.0) for w, v in b.items())


def pick(answer: str, kind: str, *, pool: Pool, article_id: str, article_norm: str, question: str,
         rng: random.Random, year: int, n: int = 3, prefer: set[str] | None = None,
         near: Sequence[str] = (), same_type: Callable[[str], bool] | None = None,
         day: dt.date | None = None, evidence: Counter[str] | None = None,
         role: Counter[str] | None = None, why: list[str] | None = None, titles: Sequence[str] = (),
         avoid: Mapping[str, str] | None = None) -> list[str] | None:
    """Choose ``n`` distractors for ``answer``; None when not enough good ones exist.

    A distractor never appears in the article or the question (it could be a second right
    answer), never equals or contains the answer, and at least one is close to it. Names from
    the articles ``near`` the source (its nearest stories of the day, closest first: the same
    topic, so a politician gets politicians and a club clubs) are taken first when enough
    exist; only names from the ``prefer`` articles (the same outlet: the same beat) when at least
    ``n + 2`` of them are of the answer's organisation class or place scale. With
    ``same_type``, only options it accepts (the answer's entity label when parsed alone).
    With the news ``day``, a date answer on or before it gets no option after it (an event
    reported that day cannot have happened later), and a later one none on or before it.
    No name of ``avoid`` (name -> kind: the answers and options of the day's other questions) of
    the answer's kind is offered, nor one that contains it, is contained in it word for word or
    names the same body (an acronym, "the Oval Office" for "the White House"): an option that
    answers another question of the quiz hints at both, and two questions offering the same names
    give each other away. Names of another kind do not count ("Washington" the place is no reason
    to leave out "The Washington Post").

    With ``titles`` (the title words as lemmas, the role noun last: a "Which state senator ..."
    question's "state", "senator"; the judge of "Judge Ada Lind ruled ..."), a person is offered
    only when the day's news writes it with each qualifier among the title words before the role
    noun ("state Sen.") and with the role noun (or one of its class: :func:`~okgen.generate.lexicon.same_title`)
    at least as often as with any other role noun, and never as an office of the role where the
    question's answer is not (:func:`~okgen.generate.lexicon.written_as_office`: a "District
    Attorney" or an "Attorney General" is no option for
    a Justice Department attorney): the question or the answer's own title says what the answer
    is, and a reader rules out anyone else; ``prefer`` does not narrow such a draw. The rule needs
    a day's pool (context vectors); the streams' pool ranks by nearness alone.

    A name is offered only when it is **plausible** (a pool with context vectors, as the day's
    generator builds): used in the news like the answer (context similarity at least
    :data:`MIN_SIMILARITY`) and from the question's topical neighbourhood: named in one of the
    ``near`` stories, or used in words like those of the ``evidence`` sentence (its context
    words' similarity at least :data:`MIN_EVIDENCE_SIMILARITY`). When fewer than ``n`` are, it
    returns None and appends ``"distractors_implausible"`` to ``why`` (else ``"no_distractors"``
    when the pool itself lacks same-kind names).
    """
    q_norm = normalize(question)
    a_norm = bare(answer)
    group = {"region": "place"}.get(kind, kind)
    same_kind = [o for o, k in (avoid or {}).items() if {"region": "place"}.get(k, k) == group]
    avoid_bare = {bare(o): o for o in same_kind}
    avoid_acronyms = [o for o in same_kind if _letters_upper(o)]
    avoid_us = [re.sub(r"\bu s\b", "us", o) for o in avoid_bare]  # "the U.S. Treasury" as aliases() writes it

    def avoided(c: str, cn: str) -> bool:
        if cn in avoid_bare or any(f" {cn} " in f" {o} " or f" {o} " in f" {cn} " for o in avoid_bare):
            return True
        others = same_kind if _letters_upper(c) else avoid_acronyms
        cu = re.sub(r"\bu s\b", "us", cn)
        return any(aliases(c, o) for o in others) or any(lx.same_body(cu, o) for o in avoid_us)

    def ok(c: str) -> bool:
        cn = bare(c)
        # Neither contains the other ("Department of Commerce" is "The U.S. Department of
        # Commerce"), word for word.
        return (cn != a_norm and f" {cn} " not in f" {a_norm} " and f" {a_norm} " not in f" {cn} "
                and not aliases(c, answer) and not (kind == "person" and respelled(cn, a_norm)) and not contains(article_norm, c) and not contains(q_norm, c)
                and not any(contains(q_norm, other) or bare(other) == a_norm for other in place_aliases(c))
                and not (same_kind and avoided(c, cn)))

    if kind in POOL_KINDS:
        by_bare: dict[str, str] = {}
        for c in pool.candidates(kind, article_id):
            if ok(c):
                by_bare.setdefault(bare(c), c)
        cands = list(by_bare.values())
        if kind == "org":
            # Organisations of one class and shape only: a ministry among public bodies, an
            # acronym among acronyms. A company against three US government bodies (British Steel
            # among Congress, the Fed and the White House) gives itself away by its kind.
            cands = [c for c in cands if org_class(c) == org_class(answer) and _acronym(c) == _acronym(answer)]
        if kind == "place":
            # Places of one scale only: a city among cities, not among countries or continents.
            scale = place_scale(answer)
            cands = [c for c in cands if place_scale(c) == scale]
            if len(cands) < n and not pool.contexts:  # the streams' pool: no day to draw from
                cands += [c for c in _gazetteer_like(answer) if ok(c) and c not in cands]
        if prefer and not titles:
            # The outlet's beat, among names of the answer's class and scale (a title says the
            # class: the beat would narrow it to no one). Only the beat: drawn from the day's
            # other names where the beat has none plausible, the options of news-dev were absurd
            # (an industrialist and a footballer against the Senate's minority leader).
            beat = [c for c in cands if pool.names[kind].get(normalize(c), ("", set()))[1] & prefer]
            if len(beat) >= n + 2:
                cands = beat
        if len(cands) < n:
            if why is not None:
                why.append("no_distractors")
            return None
        if not pool.contexts:  # the streams' pool: no usage to rank by, so no alphabetical order either
            rng.shuffle(cands)
        ranked = _topical(answer, cands, pool, kind, near, n, same_type, evidence, role, question, titles)
        if len(ranked) < n:
            if why is not None:
                why.append("distractors_implausible" if pool.contexts else "no_distractors")
            return None
        got = _names(answer, kind, ranked, rng, n)
        if got is None and why is not None:
            why.append("no_distractors")
        return got
    if kind == "percent":
        # Round options first for a round answer; a finer step where the article's own figures
        # (never options) or the bounds leave too few, or a stream asks for more.
        for step in _percent_steps(answer):
            got = _number_options(answer, kind, _percents(answer, step), ok, same_type, rng, n, year, day)
            if got is not None:
                return got
        return None
    if kind == "date":
        # Options within about a week first: "May 17th" against "May 19th" for a festival in May,
        # not "August 19th" nor "May 31st" (reviewers ruled out the dates outside the festival);
        # weeks and months apart only where those leave too few.
        for shifts in (DATE_WEEK, (DATE_CLOSE, DATE_NEAR), (DATE_CLOSE, DATE_FAR)):
            got = _number_options(answer, kind, _dates(answer, year, shifts), ok, same_type, rng, n, year, day)
            if got is not None:
                return got
        return None
    gen = {"money": _numbers, "count": _numbers, "quantity": _numbers, "year": _years}.get(kind)
    if gen is None:
        return None
    return _number_options(answer, kind, gen(answer, year), ok, same_type, rng, n, year, day)


def _number_options(answer: str, kind: str, groups: tuple[list[str], list[str]], ok: Callable[[str], bool],
                    same_type: Callable[[str], bool] | None, rng: random.Random, n: int, year: int,
                    day: dt.date | None) -> list[str] | None:
    """``n`` options of a number or date from its close and far candidates, those that may not be
    offered left out (:func:`_around`)."""
    close, far = groups
    if kind == "date" and day is not None:
        when = parse_date(answer, year)
        if when is not None:
            # A date reported as past gets no option after the news day; one ahead (an election
            # "on 1 May") none on or before it.
            past = when[0] <= day
            close, far = ([c for c in group if (w := parse_date(c, year)) is not None and (w[0] <= day) == past]
                          for group in (close, far))
    close = [c for c in close if ok(c) and (same_type is None or same_type(c))]
    far = [c for c in far if ok(c) and c not in close and (same_type is None or same_type(c))]
    return _around(answer, kind, close, far, rng, n, year)


def _value(text: str, kind: str, year: int) -> float | None:
    """The number an option stands for (a date as its day number), for ordering options."""
    if kind == "date":
        when = parse_date(text, year)
        return None if when is None else float(when[0].toordinal())
    m = _NUMBER.search(text)
    return None if m is None else float(m.group(0).replace(",", ""))


def _around(answer: str, kind: str, close: list[str], far: list[str], rng: random.Random, n: int,
            year: int) -> list[str] | None:
    """``n`` options from ``close`` (one) and ``far``; for a four-option question placed so that
    the answer's rank among the four says nothing: as often the smallest, the largest or in
    between (drawn with ``rng``), with at least one close option and no three of the four evenly
    spaced (14, 24, 34 gave 24 away). None when the candidates cannot do that, or leave the
    answer only one place."""
    a = _value(answer, kind, year)
    vals = {c: _value(c, kind, year) for c in close + far}
    if a is None or any(v is None for v in vals.values()) or n != 3:
        # Nothing to order by, or a list of many options (a stream's, where every value of a
        # track is an answer in turn): the plain draw, one close option first.
        out: list[str] = []
        for group in (close, far):
            group = [c for c in group if c not in out]
            rng.shuffle(group)
            out += group[:1 if not out else n - len(out)]
        return out if len(out) == n else None
    below = [c for c in close + far if vals[c] < a]
    above = [c for c in close + far if vals[c] > a]
    ranks = [k for k in range(n + 1) if len(below) >= k and len(above) >= n - k]
    if len(ranks) < 2:
        return None  # only one place for the answer ("0.5%" always the smallest): it would tell
    rng.shuffle(ranks)
    for k in ranks:
        for _ in range(16):  # a few draws for one that keeps a close option and no even spacing
            got = rng.sample(below, k) + rng.sample(above, n - k)
            if any(c in close for c in got) and not _progression([a, *(vals[c] for c in got)]):
                return got
    return None


def _progression(values: list[float]) -> bool:
    """Whether three of ``values`` are evenly spaced (one the midpoint of two others): the answer
    would then be found by its spacing, or by leaving out a midpoint that is never it."""
    vs = sorted(values)
    return any(abs(vs[i] + vs[k] - 2 * vs[j]) < 1e-9
               for i in range(len(vs)) for j in range(i + 1, len(vs)) for k in range(j + 1, len(vs)))


DAY_LONG = 2  # a name written with a word in this many articles: the day's news knows it so
TOPICAL_KEEP = 3  # candidates kept beyond the n needed, so the draw still varies
MIN_SIMILARITY = 0.1  # a distractor's least context similarity to the answer
MIN_EVIDENCE_SIMILARITY = 0.05  # ... and to the evidence sentence, when no near story names it
MIN_NEAR_SIMILARITY = 0.04  # an organisation of the answer's class or a person of its field near the story: this much


FOCUS_WEIGHT = 1.0  # the weight in the rank of a name's use with the words of the answer's role
FOCUS_SHARE = 0.25  # a name written with them at least this share as often as the answer is "in the role"
MIN_FOCUS = 0.03  # ... and at least this often
FOCUS_ENOUGH = 0.06  # ... while this often always is (an answer the news names with its role day-long)
STRONG_ROLE = 0.05  # an answer written with its role's words this often needs options in that role
PROMINENT_SHARE = 0.05  # a person named in at least this share of the day's articles is prominent ...
MAX_PROMINENCE = 6  # ... and gets options named in at least a sixth as many articles
MAX_PAST = 0.5  # a name written "former ..." in at least this share of its mentions is out of office
# Role features, counted apart from the role vector: written "former President" (prime minister,
# premier, chancellor) and never with the title alone, a name is out of office. A sitting official
# is written "former Fox News host" at times, never "former President"; Barack Obama, "former
# President" in one of his five mentions of 2025-04-11 and never "President", was offered for the
# Agriculture Secretary's pressure on Mexico; a video caption calling the sitting president "former
# President Donald Trump" does not make him one, as the day writes "President Donald Trump" too.
FORMER_HEAD = "h:former"
HEAD = "h:head"  # written with a head's title ("President X"), former or not: both are counted apart


# Nouns that say what kind of actor a name is, not what it did: no role for focus ("Which
# country announced a restriction of films?": "film" and "restriction" say it, "country" not).
GENERIC_NOUNS = frozenset({"country", "nation", "state", "city", "government", "people", "official", "leader",
                           "president", "minister", "capital", "region", "world", "year", "week", "day", "time",
                           "month", "part", "side", "way", "number"})


_VISIT = re.compile(r"\b(?:visit\w*|trip|tour\w*|travel\w*|talks|summit|met|meet\w*|arriv\w*)\b", re.IGNORECASE)


def _topical(answer: str, cands: list[str], pool: Pool, kind: str, near: Sequence[str], n: int,
             same_type: Callable[[str], bool] | None = None, evidence: Counter[str] | None = None,
             role: Counter[str] | None = None, question: str = "", titles: Sequence[str] = ()) -> list[str]:
    """The plausible candidates most like the answer in the news: by the similarity of the words
    around their mentions (a coach's context is a coach's), with a bonus for names from the
    stories nearest the source and for names used in words like the evidence's; the best
    ``n + TOPICAL_KEEP`` of them. With context vectors, only names used like the answer and
    from the question's neighbourhood (a near story, or the evidence's words) count; fewer
    than ``n`` give an empty list."""
    if len(cands) < n:
        return cands
    rank = {a: r for r, a in enumerate(near)}
    names = pool.names[kind]
    ev = pool.vector(evidence) if evidence and pool.contexts else {}
    focus = pool.focus_weights(answer, role_words(role)) if role and pool.topics else {}
    # A name counts as written in the answer's role when the news names it with the role's
    # words at least a quarter as often as the answer (or 6 % of its sentences; 3 % at least).
    answer_focus = pool.focus(answer, focus) if focus else 0.0
    min_focus = max(MIN_FOCUS, min(FOCUS_SHARE * answer_focus, FOCUS_ENOUGH)) if focus else 1.0
    # A role is the answer's own when the news names it with the role's nouns ("drone",
    # "tariff") day-long; a verb alone ("travel", "question") says too little.
    nouns = {f[2:] for f in role or () if f[:2] in ("s~", "o~") and f[2:] not in GENERIC_NOUNS}
    noun_focus = {w: v for w, v in focus.items() if w in nouns}
    subject_nouns = {f[2:] for f in role or () if f.startswith("s~")}
    # "Day-long" is judged on the role's nouns and the places it names (Russia with "Ukraine" in
    # many articles is a story every reader knows), not on the nouns of any actor.
    strong = bool(focus) and pool.focus(answer, {w: v for w, v in focus.items() if w in subject_nouns}) >= STRONG_ROLE
    # A place is offered only where the news names it with what the question is about (a
    # country named with "tariff" for a tariff): a reader knows which countries were bombed or
    # visited, and rules out any other; a question about nothing but a verb ("visited") has none.
    # Only a story the day's news tells in several articles is known so: one article's story
    # (Mexico's water deliveries to Texas) leaves any country the news uses alike plausible.
    place_focus = noun_focus if kind in ("place", "region") and pool.topics \
        and (not nouns or pool.day_long(answer, nouns)) else None
    # A member of the EU against a country that sets its own tariffs: the EU sets its members'.
    no_eu = kind == "place" and bool(nouns & lx.TRADE_WORDS) and answer not in lx.EU_MEMBERS
    min_place = max(MIN_FOCUS, min(FOCUS_SHARE * pool.focus(answer, noun_focus), FOCUS_ENOUGH)) if noun_focus else 1.0
    in_office = pool.past.get(normalize(answer), 0.0) < MAX_PAST and not pool.was_head(answer)
    field_ = title_field(pool.roles.get(normalize(answer), {}), role) if kind == "person" else None
    home = title_country(pool.roles.get(normalize(answer), {}), role) if kind == "person" else None
    # The countries the question names: "visits Beijing for talks with Chinese counterparts" is
    # asked of no Chinese minister, when the answer is none.
    abroad = lx.countries_named(question) - {home} if kind == "person" else set()
    abroad_words = {w for c in abroad for w in lx.demonyms(c)}
    if abroad_words and pool.national(answer, abroad_words):
        abroad_words = set()  # the answer is written so too: the words say nothing of anyone's country
    # Abroad, a head of state or government titled with the country gets heads of state or
    # government, or officials of that country ("Who will visit Vietnam?": the Chinese president
    # against other presidents and prime ministers, not another country's junior minister); at
    # home, the officials of the day are fair options (a president's dismissal of a commandant
    # against his secretaries).
    leader = bool(abroad) and home is not None and head_of_state(pool.roles.get(normalize(answer), {}))
    # A state visit, a trip, talks abroad: another country's leader is a fair option there ("Who
    # will visit Vietnam?"), not for a measure only the answer's government takes ("Who imposed
    # tariffs on Vietnam?").
    visit = leader and _VISIT.search(question) is not None
    # A role one article tells (a quarterback's new deal, a vacuum cleaner's launch) is no story
    # every reader knows: a person of the answer's field, or any name used like the answer, is a
    # fair option, written with the role or not.
    one_story = strong and not pool.day_long(answer, subject_nouns - GENERIC_NOUNS)
    same_field = one_story and kind == "person" and field_ is not None
    if one_story and (kind != "person" or same_field):
        strong = False
    cache: dict[str, tuple[float, bool, float, float]] = {}

    def features(c: str) -> tuple[float, bool, float, float]:
        got = cache.get(c)
        if got is None:
            entry = names.get(normalize(c))
            got = cache[c] = (pool.similarity(answer, c), bool(entry and any(a in rank for a in entry[1])),
                              pool.similarity_to(c, ev), pool.focus(c, focus) if focus else 0.0)
        return got

    def score(c: str) -> float:
        sim, is_near, ev_sim, focus_sim = features(c)
        return sim + (0.05 if is_near else 0.0) + ev_sim + FOCUS_WEIGHT * focus_sim

    # A person the day's news names everywhere ("Donald Trump", in a sixth of the articles) is
    # the guess of any reader among names it barely mentions: the options must be names the
    # news gives some weight too.
    answer_entry = names.get(normalize(answer)) if kind == "person" and pool.articles else None
    prominent = answer_entry is not None and len(answer_entry[1]) >= PROMINENT_SHARE * pool.articles
    least_articles = len(answer_entry[1]) / MAX_PROMINENCE if prominent and answer_entry else 0.0

    # The answer's titles where the question asks of it: "DOJ attorney X" is no attorney general
    # there, though the day writes him "Deputy Assistant Attorney General" elsewhere.
    answer_titles = {f[2:] for f in role or () if f.startswith("t:")} | set(titles)
    role_nouns = lx.same_title(titles[-1]) if titles else frozenset()

    def plausible(c: str) -> bool:
        sim, is_near, ev_sim, focus_sim = features(c)
        if least_articles and len(names[normalize(c)][1]) < least_articles:
            return False
        if in_office and (pool.past.get(normalize(c), 0.0) >= MAX_PAST or pool.was_head(c)):
            return False  # "former President Joe Biden" against a sitting one
        c_field = title_field(pool.roles.get(normalize(c), {})) if field_ is not None else None
        if field_ is not None and c_field not in ((field_,) if same_field else (None, field_)):
            return False  # a chief executive against a president, a striker against a minister
        c_home = title_country(pool.roles.get(normalize(c), {})) if kind == "person" else None
        c_leader = leader and head_of_state(pool.roles.get(normalize(c), {}))
        if leader and c_home != home and not c_leader:
            return False
        if home is not None and c_home not in (None, home) and not (c_leader and visit):
            return False  # "Israeli Prime Minister X" against "US President Y"; on a visit, leaders meet leaders
        if c_home in abroad or abroad_words and pool.national(c, abroad_words):
            return False  # China's commerce minister for a visit to Beijing; a Russian for a trip to Russia
        if titles and kind == "person":
            # "Which state senator ...": other state senators, named like the answer somewhat
            # (a title says the class; the near stories need not name them). Not one whose title
            # makes it another office ("Attorney General" for a Justice Department attorney).
            written = pool.titled.get(normalize(c), Counter())
            held = sum(written[w] for w in role_nouns)
            # Nor one the news titles more often with another role ("state Rep." than "attorney";
            # "lawmaker" is a senator's too); each qualifier written with the role ("state
            # senator"), not apart ("a former state senator" now in the House is no state
            # representative); nor one written as an office of the role ("District Attorney" for
            # a Justice Department attorney, "Chief Judge"), unless the answer is written so too.
            return sim >= MIN_NEAR_SIMILARITY and held > 0 and held >= lx.other_roles(written, titles[-1]) \
                and all(any(written[f"{w}+{r}"] > 0 for r in role_nouns) for w in titles[:-1]) \
                and not lx.written_as_office(written, titles[-1], exempt=answer_titles)
        if sim >= MIN_NEAR_SIMILARITY and (
                kind == "org" and is_near and org_class(c) == org_class(answer) and _acronym(c) == _acronym(answer)
                or kind == "person" and field_ is not None and c_field == field_
                and (is_near or ev_sim >= MIN_EVIDENCE_SIMILARITY)):
            # Of the answer's class, somewhat alike, and near the story: a company of the nearest
            # stories (Garmin for Samsung), a person titled in the answer's field (cabinet
            # members for a cabinet member's visit). Not a place: US cities that a near story
            # names are no options for a strike in Gaza.
            return True
        return sim >= MIN_SIMILARITY and (is_near or ev_sim >= MIN_EVIDENCE_SIMILARITY or focus_sim >= min_focus)

    ranked = sorted(cands, key=(lambda c: (-score(c), c)) if pool.contexts else (lambda c: -score(c)))
    if pool.contexts:
        # Only plausible names; when fewer than n are, any pick would be absurd. (A pool built
        # without contexts, as the streams' is, ranks by nearness alone.)
        ranked = [c for c in ranked if plausible(c)]
        if len(ranked) < n:
            return []
        if place_focus is not None or no_eu:
            ranked = [c for c in ranked if (place_focus is None or place_focus and pool.focus(c, place_focus) >= min_place)
                      and not (no_eu and c in lx.EU_MEMBERS)]
            if len(ranked) < n:
                return []
        focused = [c for c in ranked if features(c)[3] >= min_focus]
        if len(focused) < n and strong and not titles:
            # The answer's role is what the news says of it day-long (Russia and "drone"), and
            # no other name is written so: whatever is offered, a reader rules it out.
            return []
        if len(focused) >= n:
            # Enough names written with the answer's role words (a country named with "tariff"
            # for a tariff, with "drone" for a drone strike): only those.
            ranked = focused
    if same_type is not None:  # checked down the ranking only as far as needed (a parse each)
        typed = []
        for c in ranked:
            if same_type(c):
                typed.append(c)
                if len(typed) >= n + TOPICAL_KEEP:
                    break
        ranked = typed
        if len(ranked) < n:
            return ranked
    return ranked[:n + TOPICAL_KEEP]


# Title words by the field of the person they describe ("Defense Secretary Pete Hegseth",
# "Meta CEO Mark Zuckerberg", "striker Harry Kane"): a person's options share the field. A
# chairman is in none: a committee's chairs are lawmakers, a board's business people.
TITLE_FIELDS = {
    "politics": ("president", "minister", "secretary", "senator", "governor", "chancellor", "mayor",
                 "lawmaker", "congressman", "congresswoman", "representative", "spokesperson",
                 "spokesman", "spokeswoman", "ambassador", "envoy", "premier", "prime", "diplomat",
                 "politician", "speaker", "mp", "democrat", "republican", "king", "queen", "prince",
                 "opposition", "cabinet", "vice", "adviser", "advisor"),
    "bench": ("judge", "justice", "magistrate"),  # who questions, not who is questioned
    "law": ("prosecutor", "lawyer", "attorney", "defendant", "counsel", "solicitor", "barrister"),
    "business": ("ceo", "founder", "executive", "billionaire", "investor",
                 "entrepreneur", "cofounder", "economist", "analyst", "tycoon", "boss"),
    "sport": ("coach", "striker", "player", "captain", "midfielder", "goalkeeper", "defender",
              "quarterback", "pitcher", "golfer", "boxer", "winger", "forward", "teammate", "rookie",
              "footballer", "cricketer", "batter", "jockey", "trainer", "referee"),
    "arts": ("actor", "actress", "singer", "rapper", "musician", "comedian", "author", "novelist",
             "filmmaker", "songwriter", "artist", "band", "star"),
    "media": ("journalist", "reporter", "correspondent", "writer", "columnist", "editor", "anchor", "host",
              "moderator", "commentator", "pundit", "broadcaster", "presenter", "photographer", "podcaster"),
}
_FIELD_OF = {w: f for f, words in TITLE_FIELDS.items() for w in words}


def title_field(vec: dict[str, float] | Counter[str], extra: Counter[str] | None = None) -> str | None:
    """The field a person's title words put them in (politics, bench, law, business, sport, arts, media), or
    None when they say none or no clear one (two fields within a factor of two)."""
    return _clear_title(_FIELD_OF, vec, extra)


LEADER_TITLES = frozenset({"president", "premier", "prime", "king", "queen", "emperor", "pm"})
SECOND_TITLES = frozenset({"vice", "deputy", "minister"})  # "Vice President", "Deputy Prime Minister"; "Prime Minister" counts "prime"


def head_of_state(vec: dict[str, float] | Counter[str]) -> bool:
    """Whether a person's title words make them a head of state or government ("President Xi",
    "Prime Minister Keir Starmer"; not "Vice President JD Vance" nor "Deputy Prime Minister"):
    the leader titles weigh most, over twice the deputies' ("minister" beside "prime" aside)."""
    lead = sum(float(v) for f, v in vec.items() if f.startswith("t:") and f[2:] in LEADER_TITLES)
    second = sum(float(v) for f, v in vec.items() if f.startswith("t:") and (
        f[2:] in SECOND_TITLES or _FIELD_OF.get(f[2:]) not in (None, "politics")))  # a company's president
    second -= min(second, float(vec.get("t:prime", 0.0)))  # the "minister" of each "prime minister"
    return lead > 0 and lead > 2 * second


_COUNTRY_OF_WORD = {w.lower(): c for w, c in lx.COUNTRY_OF.items() if " " not in w}


def title_country(vec: dict[str, float] | Counter[str], extra: Counter[str] | None = None) -> str | None:
    """The country a person's title words name ("British Deputy Prime Minister", "US
    President", "Salvadoran President"), or None when they name none or no clear one."""
    return _clear_title(_COUNTRY_OF_WORD, vec, extra)


def _clear_title(classes: dict[str, str], vec: dict[str, float] | Counter[str],
                 extra: Counter[str] | None) -> str | None:
    """The class (of ``classes``: title word -> class) the title words ``t:...`` weigh most, when it
    weighs over twice the next one; else None."""
    weight: Counter[str] = Counter()
    for bag in (vec, extra or {}):
        for f, v in bag.items():
            if f.startswith("t:") and f[2:] in classes:
                weight[classes[f[2:]]] += float(v)
    top = weight.most_common(2)
    if not top or (len(top) == 2 and top[1][1] * 2 > top[0][1]):
        return None
    return top[0][0]


def role_words(role: Counter[str]) -> Counter[str]:
    """The words of an answer's role ("s:launch", "s~drone", "o~tariff": launch, drone, tariff), its title words left
    out: what a plausible alternative is also written with ("Israel ... drones")."""
    out: Counter[str] = Counter()
    for f, c in role.items():
        if f[:2] in ("s:", "s~", "o:", "o~"):
            out[f[2:]] += c
    return out


def bare(text: str) -> str:
    """Normalised, without a leading article: "The Supreme Court" and "Supreme Court" are one."""
    n = normalize(text).strip()
    return n[4:] if n.startswith("the ") else n


def _names(answer: str, kind: str, cands: Sequence[str], rng: random.Random, n: int) -> list[str] | None:
    if len(cands) < n:
        return None
    # Close: shares the organisation word ("... Bank"), or the same number of words.
    a_words = answer.split()

    def closeness(c: str) -> tuple[int, int]:
        w = c.split()
        shared = int(bool(set(w[-1:]) & set(a_words[-1:]) or set(w[:1]) & set(a_words[:1])))
        return (shared, int(len(w) == len(a_words)))

    ranked = sorted(cands, key=lambda c: (closeness(c), -abs(len(c) - len(answer))), reverse=True)
    best = max(closeness(c) for c in cands)
    close = [c for c in ranked if closeness(c) == best][:5]
    first = rng.choice(close)
    out = [first]
    for c in rng.sample([c for c in cands if c != first], len(cands) - 1):
        if len(out) == n:
            break
        # "DOGE" beside "the Department of Government Efficiency"; "Steve Witcoff" beside "Steve Witkoff"
        if not any(aliases(c, o) or kind == "person" and respelled(bare(c), bare(o)) for o in out):
            out.append(c)
    return out if len(out) == n else None


RESPELLED = 0.85  # two person names this alike letter for letter are one name spelt two ways


def respelled(a: str, b: str) -> bool:
    """Whether two normalised person names are one name spelt two ways ("steve witkoff", "steve
    witcoff"; "zelensky", "zelenskyy"): offered beside the answer, such a name is a second right
    answer; beside another option, one option twice. Relatives are not ("joe biden", "jill biden")."""
    import difflib

    return difflib.SequenceMatcher(None, a, b).ratio() >= RESPELLED


def _letters_upper(name: str) -> bool:
    """Whether a name's letters are all capitals (an acronym: "DOGE", "U.S.")."""
    letters = re.sub(r"[^A-Za-z]", "", name)
    return bool(letters) and letters.isupper()


def _initials(name: str) -> set[str]:
    words = [w for w in re.findall(r"[A-Za-z]+", name) if w.lower() != "the"]
    return {"".join(w[0] for w in words).upper(), "".join(w[0] for w in words if w[0].isupper()).upper()}


_PLACE_ALIASES = (("United States", "US", "U.S.", "USA", "America", "Washington"),
                  ("United Kingdom", "UK", "U.K.", "Britain", "Great Britain"),
                  ("European Union", "EU"), ("United Arab Emirates", "UAE"), ("Russia", "Moscow", "Kremlin"),
                  ("China", "Beijing"), ("Ukraine", "Kyiv", "Kiev"))


def place_aliases(name: str) -> tuple[str, ...]:
    """Other names of the same country (the US is "America", "the U.S.", "Washington"): an
    option the stem already names under another name ("... tariff on US goods": "the United
    States") is no option."""
    key = bare(name)
    for group in _PLACE_ALIASES:
        if any(bare(g) == key for g in group):
            return tuple(g for g in group if bare(g) != key)
    return ()


def aliases(a: str, b: str) -> bool:
    """Whether one name is the other's acronym ("DOGE", "the Department of Government
    Efficiency") or both name one body (:data:`lexicon.SAME_BODY`): two options naming one thing."""
    if lx.same_body(*(re.sub(r"\bu s\b", "us", bare(x)) for x in (a, b))):
        return True  # "the Oval Office" for "the White House"
    for x, y in ((a, b), (b, a)):
        letters = re.sub(r"[^A-Za-z]", "", y)
        if letters.isupper() and 2 <= len(letters) <= 6 and len(x.split()) >= 2 and letters in _initials(x):
            return True
    return False


GOV_WORDS = frozenset({"Department", "Ministry", "Senate", "House", "Congress", "Parliament", "Court", "Agency",
                       "Commission", "Council", "Committee", "Party", "Government", "Administration",
                       "Office", "Bureau", "Authority", "Police", "Army", "Navy", "Forces", "Guard",
                       "Assembly", "Cabinet", "Treasury", "Pentagon", "Kremlin", "Reserve", "Service",
                       "FBI", "CIA", "NSA", "DOJ", "DHS", "ICE", "EPA", "FDA", "CDC", "SEC", "FTC",
                       "FCC", "IRS", "IDF", "NATO", "UN", "EU", "WHO", "IMF", "Fed", "NASA", "NHS",
                       "USDA", "NOAA", "FAA", "FEMA", "DOGE", "USAID", "NIH", "HHS", "OMB", "CBP", "TSA",
                       "DEA", "ATF", "ECB", "OPEC", "Interpol", "Europol", "Downing", "Whitehall",
                       "Knesset", "Bundestag", "Duma", "Politburo", "Élysée", "Elysee"})
MEDIA_WORDS = frozenset({"News", "Times", "Post", "Journal", "Herald", "Tribune", "Guardian", "Telegraph",
                         "BBC", "CNN", "NBC", "CBS", "ABC", "NPR", "Reuters", "AP", "Bloomberg", "Press",
                         "Magazine", "TV", "Radio", "Digital"})
EDU_WORDS = frozenset({"University", "College", "Institute", "School", "Academy", "Laboratory", "Labs"})


# Words that make a name a company's whatever else it holds ("Office Depot", "Old Navy Inc",
# "Navy Federal Credit Union", "Penguin Random House" is a publisher: "Random"), and names of
# public bodies with no class word ("Bank of England", "European Central Bank", "United Nations").
COMPANY_WORDS = frozenset({"Inc", "Inc.", "Corp", "Corp.", "Corporation", "Ltd", "Ltd.", "LLC", "plc", "PLC",
                           "Holdings", "Depot", "Insurance", "Credit", "Estates", "Airlines", "Motors",
                           "Random", "Fraser"})
_COMPANY_NAME = re.compile(r"\b(?:Old Navy|Navy Federal|Salvation Army|Party City|Microsoft Office|FedEx Office)\b")
_PUBLIC_NAME = re.compile(r"\b(?:Central Bank|Bank of (?:England|Japan|Canada|Korea|Israel|France|Italy|Spain|Russia|"
                          r"China)|United Nations|Bundesbank|World Bank|[Aa]dministration)\b")
# Programmes the tagger takes for organisations: options only for each other.
_PROGRAMME = re.compile(r"\b(?:Medicare|Medicaid|Social Security|Obamacare|SNAP)\b")


def org_class(name: str) -> str:
    """Coarse class of an organisation name: ``public`` body, ``media``, ``education``,
    ``programme`` (Medicare) or ``other`` (companies, teams, groups), so distractors are of the
    answer's kind."""
    words = set(name.replace("'s", "").split())
    if _PROGRAMME.search(name) and not words & {"Administration", "Centers", "Services", "Department", "Agency",
                                                 "Office", "Trust", "Fund"}:
        return "programme"
    if words & COMPANY_WORDS or _COMPANY_NAME.search(name):
        return "other"
    if words & GOV_WORDS or _PUBLIC_NAME.search(name):
        return "public"
    if words & MEDIA_WORDS:
        return "media"
    if words & EDU_WORDS:
        return "education"
    return "other"


def _acronym(name: str) -> bool:
    return name.isupper() and len(name) <= 6


def place_scale(name: str) -> str:
    """``continent``, ``country``, ``region``, ``city`` or ``local`` (a place the gazetteer lacks:
    mostly towns)."""
    n = name.strip()
    if n in lx.CONTINENTS:
        return "continent"
    if n in lx.COUNTRIES or n in lx.PLACE_ACRONYMS or n.removeprefix("the ") in lx.COUNTRIES:
        return "country"
    if n in lx.REGIONS:
        return "region"
    if n in lx.CITIES:
        return "city"
    return lx.world_places().get(n, "local")


def _gazetteer_like(answer: str) -> list[str]:
    for group in (lx.CONTINENTS, lx.COUNTRIES, lx.CITIES, lx.REGIONS):
        if answer in group:
            return sorted(g for g in group if not g.startswith("the "))
    return sorted(lx.CITIES)


_NUMBER = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?")


def _reformat(template: str, value: float, sample: str) -> str:
    """Put ``value`` in place of the number ``sample`` of ``template``, in the same style."""
    decimals = len(sample.split(".")[1]) if "." in sample else 0
    int_digits = len(sample.replace(",", "").split(".")[0])
    # Thousands separators as in the answer; English style when the answer was too short to tell.
    commas = "," in sample or (int_digits < 4 and value >= 1000)
    text = f"{value:,.{decimals}f}" if commas else f"{value:.{decimals}f}"
    return template.replace(sample, text, 1)


def _round_like(value: float, sample: str) -> float:
    digits = sample.replace(",", "").split(".")[0].lstrip("0")
    if "." in sample or not digits:
        return value
    sig = max(1, len(digits.rstrip("0")))
    mag = 10 ** max(0, int(math.floor(math.log10(max(value, 1)))) - sig + 1)
    return max(mag, round(value / mag) * mag)


def _numbers(answer: str, year: int) -> tuple[list[str], list[str]]:
    m = _NUMBER.search(answer)
    if not m:
        return [], []
    sample = m.group(0)
    value = float(sample.replace(",", ""))
    if value <= 0:
        return [], []

    plural = bool(re.search(r"\d\s+\w+s\b", answer))

    def make(values: Iterable[float]) -> list[str]:
        out = []
        for v in values:
            if "." not in sample:
                v = float(int(round(v)))
            if v >= 1000 and re.search(r"\d\s*(?:thousand|million|billion|m|bn)\b", answer, re.IGNORECASE):
                continue  # "$1,200 billion" is written "$1.2 trillion": no option looks like that
            if v > 0 and v != value and not (plural and v == 1):
                out.append(_reformat(answer, v, sample))
        return list(dict.fromkeys(out))

    if value < 10 and "." not in sample:  # small counts: neighbours, not multiples
        return make(value + d for d in (1, -1)), make(value + d for d in (2, -2, 3, 4, 5))
    return (make(_round_like(value * f, sample) for f in CLOSE_FACTORS),
            make(_round_like(value * f, sample) for f in FAR_FACTORS))


def _percent_steps(answer: str) -> list[float]:
    """The steps a percentage's options are drawn at, roundest first: a multiple of 5 from 10% up
    gets multiples of 5 (of 10 from 20% up) before the plain step ("10%" against "14%", "16%" and
    "26%" was the only round figure: a reviewer picked it)."""
    m = _NUMBER.search(answer)
    if not m:
        return []
    sample = m.group(0)
    value = float(sample)
    step = 1.0 if value < 10 else 2.0 if value < 30 else 5.0
    if "." in sample:
        return [step / 2]
    if value >= 20 and value % 10 == 0:
        return [10.0, 5.0, step] if step < 5 else [10.0, step]
    if value >= 10 and value % 5 == 0 and step < 5:
        return [5.0, step]
    return [step]


def _percents(answer: str, step: float) -> tuple[list[str], list[str]]:
    m = _NUMBER.search(answer)
    if not m:
        return [], []
    sample = m.group(0)
    value = float(sample)

    def make(mults: Iterable[float]) -> list[str]:
        out = []
        for k in mults:
            v = round(value + k * step, len(sample.split(".")[1]) if "." in sample else 0)
            if 0 < v < (100 if value < 100 else 10 * value) and v != value:
                out.append(_reformat(answer, v, sample))
        return list(dict.fromkeys(out))

    return make((1, -1, 2, -2)), make((4, -4, 6, -6, 8, -8, 3, -3, 5, -5))


def _years(answer: str, year: int) -> tuple[list[str], list[str]]:
    y = int(answer)
    return [str(y + d) for d in YEAR_SHIFTS[:2]], [str(y + d) for d in YEAR_SHIFTS[2:]]


def _dates(answer: str, year: int, shifts: tuple[tuple[int, ...], tuple[int, ...]] = (DATE_CLOSE, DATE_FAR)
           ) -> tuple[list[str], list[str]]:
    from okgen.generate.text import ORDINAL, format_like

    parsed = parse_date(answer, year)
    if parsed is None:
        return [], []
    d, style = parsed

    def make(shifts: Iterable[int]) -> list[str]:
        out = []
        for s in shifts:
            nd = d + dt.timedelta(days=s)
            if style.removesuffix(ORDINAL) in ("md", "dm") and nd.year != d.year:
                continue
            out.append(format_like(nd, style))
        return list(dict.fromkeys(out))

    return make(shifts[0]), make(shifts[1])
