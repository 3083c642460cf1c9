"""Dated contexts: the closest, the latest or all the articles about a question's entity.

When news about an entity accumulates, older articles say things that are no longer true
("Question Answering under Temporal Conflict", Özer and Yıldız). Three settings give the model
dated articles about the question's entity from a **pool** (a snapshot's corpus, or every day
of a stream known at eval time):

* ``ctx:closest``: the article of the question's date, its own article (today's oracle);
* ``ctx:latest``: the newest article about the entity in the pool; it is **future context**
  when it is dated after the question (counted in ``future_context``);
* ``ctx:cumulative``: every article about the entity dated on or before the question's date,
  oldest first (the question's own article last among those of its day). When they do not
  fit the model's window, the truncation policy
  :data:`CUMULATIVE_POLICY` applies and is recorded: whole articles are dropped **oldest
  first** (the newest, most relevant, stay), then the oldest one left is cut from its end.

**Entity.** The question's entity is its longest run of capitalised words (connectors such as
``of``/``and`` inside a run allowed; question words, month and weekday names are not names), found in an
article's title or text as written (policy ``propn-v1``). A caller that knows the subject (a
stream's fact) passes ``entity_of``. The question's own article is always about its entity.

**Stale and future answers.** A wrong choice is *stale* for a question when it is written in
an article about the entity dated before the question (a value that was true earlier), and
*future* when it is written only in articles dated after it. The stale-answer rate is the
share of questions with a stale choice on which the model picked one; the future-answer rate
likewise.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from okgen.schema import Article, Prediction, Question

DATED_SETTINGS = ("ctx:closest", "ctx:latest", "ctx:cumulative")
ENTITY_POLICY = "propn-v1"
CUMULATIVE_POLICY = "drop-oldest"

_TOKEN = re.compile(r"[A-Za-z0-9][\w&'.-]*")
_CONNECT = {"of", "and", "the", "de", "for", "&"}
_NOT_NAMES = {"who", "what", "which", "when", "where", "why", "how", "whom", "whose", "according", "in", "on",
              "at", "the", "a", "an", "as", "by", "for", "from", "to", "after", "before", "during", "since",
              "this", "that", "these", "those", "is", "was", "are", "were", "did", "does", "do", "has", "have",
              "will", "would", "can", "could", "should", "if", "with", "about", "into", "over", "under", "per",
              # dates are not entities ("as reported on April 10, 2025")
              "january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
              "november", "december", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"}


def entity_of_question(text: str) -> str | None:
    """The question's longest run of capitalised words (``propn-v1``), or None when it has none."""
    runs: list[list[str]] = []
    cur: list[str] = []
    for tok in _TOKEN.findall(text):
        if tok[0].isupper() and tok.lower() not in _NOT_NAMES or cur and tok.lower() in _CONNECT:
            cur.append(tok)
        else:
            if cur:
                runs.append(cur)
            cur = []
    if cur:
        runs.append(cur)
    names = []
    for r in runs:
        while r and r[-1].lower() in _CONNECT:
            r = r[:-1]
        if r:
            names.append(" ".join(r).rstrip(".'"))
    return max(names, key=len) if names else None


def _words(text: str) -> set[str]:
    return {t.lower().rstrip(".'") for t in _TOKEN.findall(text)}


@dataclass
class Pool:
    """Dated articles known at eval time, with a word index to find an entity's articles quickly."""

    articles: dict[str, Article]
    entity_of: Callable[[Question], str | None] = field(default=lambda q: entity_of_question(q.question))
    _postings: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set), repr=False)
    _cache: dict[str, list[Article]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        for a in self.articles.values():
            for w in _words(a.title + "\n" + a.text):
                self._postings[w].add(a.id)

    @classmethod
    def of(cls, articles: Iterable[Article], entity_of: Callable[[Question], str | None] | None = None) -> Pool:
        """A pool of ``articles`` (later duplicates of an id are ignored)."""
        by_id: dict[str, Article] = {}
        for a in articles:
            by_id.setdefault(a.id, a)
        return cls(by_id, entity_of) if entity_of else cls(by_id)

    def about(self, q: Question) -> list[Article]:
        """The articles about ``q``'s entity, oldest first (the question's own article always)."""
        name = self.entity_of(q)
        key = f"{name}\x00{q.article_id}"
        if key in self._cache:
            return self._cache[key]
        found: dict[str, Article] = {}
        if q.article_id in self.articles:
            found[q.article_id] = self.articles[q.article_id]
        if name:
            words = _words(name)
            ids = set.intersection(*(self._postings.get(w, set()) for w in words)) if words else set()
            for i in ids:
                a = self.articles[i]
                if name in a.title or name in a.text:
                    found[i] = a
        out = sorted(found.values(), key=lambda a: (a.date, a.published_at, a.id))
        self._cache[key] = out
        return out

    def closest(self, q: Question) -> list[Article]:
        """The question's own article, else the entity's article nearest its date (not after it)."""
        if q.article_id in self.articles:
            return [self.articles[q.article_id]]
        before = [a for a in self.about(q) if a.date <= q.date]
        return before[-1:]

    def latest(self, q: Question) -> list[Article]:
        """The newest article about the entity in the pool (may be dated after the question)."""
        return self.about(q)[-1:]

    def cumulative(self, q: Question) -> list[Article]:
        """Every article about the entity dated on or before the question's date, oldest first;
        the question's own article last among those of its day (the closest, kept longest)."""
        arts = [a for a in self.about(q) if a.date <= q.date]
        return sorted(arts, key=lambda a: (a.date, a.id == q.article_id))

    def context(self, setting: str, q: Question) -> list[Article]:
        """The articles a dated setting gives for ``q``."""
        if setting == "ctx:closest":
            return self.closest(q)
        if setting == "ctx:latest":
            return self.latest(q)
        if setting == "ctx:cumulative":
            return self.cumulative(q)
        raise ValueError(f"not a dated setting: {setting}")

    def rates(self, questions: Sequence[Question], preds: dict[str, Prediction]) -> dict[str, object]:
        """:func:`answer_rates` over this pool."""
        return answer_rates(questions, preds, self)

    def answer_kinds(self, q: Question) -> tuple[set[int], set[int]]:
        """Indices of the stale and of the future choices of ``q`` (gold excluded)."""
        arts = self.about(q)
        before = [(a.title + "\n" + a.text).lower() for a in arts if a.date < q.date]
        upto = [(a.title + "\n" + a.text).lower() for a in arts if a.date <= q.date]
        after = [(a.title + "\n" + a.text).lower() for a in arts if a.date > q.date]
        stale, future = set(), set()
        for i, c in enumerate(q.choices):
            if i == q.answer_index or not c.strip():
                continue
            pat = re.compile(r"(?<!\w)" + re.escape(c.lower().strip()) + r"(?!\w)")
            if any(pat.search(t) for t in before):
                stale.add(i)
            elif any(pat.search(t) for t in after) and not any(pat.search(t) for t in upto):
                future.add(i)
        return stale, future


def answer_rates(questions: Sequence[Question], preds: dict[str, Prediction], pool: Pool) -> dict[str, object]:
    """Stale- and future-answer rates, and the share of contexts with future articles.

    Returns:
        ``stale_answer_rate`` (questions with a stale choice on which the model picked one, over
        those with a stale choice; None when none has), ``with_stale_choice``, the same for
        ``future``, ``gold_in_context`` (the question's own article was in the context) and
        ``future_context`` (share of scored questions whose context held an
        article dated after the question).
    """
    n_stale = hit_stale = n_fut = hit_fut = fut_ctx = scored = gold = 0
    for q in questions:
        p = preds.get(q.id)
        if p is None:
            continue
        scored += 1
        stale, future = pool.answer_kinds(q)
        if stale:
            n_stale += 1
            hit_stale += p.pred_index in stale
        if future:
            n_fut += 1
            hit_fut += p.pred_index in future
        gold += q.article_id in p.retrieved
        fut_ctx += any((a := pool.articles.get(i)) is not None and a.date > q.date for i in p.retrieved)
    return {"stale_answer_rate": round(hit_stale / n_stale, 6) if n_stale else None, "with_stale_choice": n_stale,
            "future_answer_rate": round(hit_fut / n_fut, 6) if n_fut else None, "with_future_choice": n_fut,
            "future_context": round(fut_ctx / scored, 6) if scored else None,
            "gold_in_context": round(gold / scored, 6) if scored else None,
            "entity_policy": ENTITY_POLICY, "cumulative_policy": CUMULATIVE_POLICY}


__all__ = ["CUMULATIVE_POLICY", "DATED_SETTINGS", "ENTITY_POLICY", "Pool", "answer_rates", "entity_of_question"]
