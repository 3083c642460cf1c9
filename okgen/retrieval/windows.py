"""News windows, passage chunking and the temporal filter.

For a snapshot dated D, the w-day window holds the corpus articles dated in (D - w days, D].
An article becomes one unit (title and body) or, with chunking, several passages of about
``passage_words`` words (each carrying the title), whose best score is the article's score.
Units are sorted by (date, article id, passage number), so the units a query dated ``d`` may
see, those dated on or before ``d``, are always a prefix: the temporal filter is one number
per query (:func:`limits_for`).
"""

from __future__ import annotations

import bisect
import datetime as dt
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from okgen.errors import ConfigError, NotFoundError, OkgenError
from okgen.hashing import sha256_text
from okgen.retrieval.base import Doc
from okgen.schema import Article, Question

UNITS_VERSION = "okgen-units-v1"


class EmptyWindowError(NotFoundError):
    """A news window holds no article, so there is nothing to index or search."""


def window_articles(snapshot, days: int) -> list[Article]:
    """The articles of a snapshot's ``days``-day window, (D - days, D].

    Raises:
        ConfigError: ``days`` < 1, or longer than the snapshot's corpus covers.
        EmptyWindowError: the window holds no article.
        OkgenError: the snapshot was released without article texts.
    """
    if not isinstance(days, int) or isinstance(days, bool) or days < 1:
        raise ConfigError(f"a window is a whole number of days >= 1, got {days!r}")
    m = snapshot.manifest
    longest = max(m.windows)
    if days > longest:
        raise ConfigError(
            f"snapshot {snapshot.name} holds the articles of the {longest}-day window only; "
            f"a {days}-day window needs a snapshot built with windows up to {days}"
        )
    if not m.text_included:
        raise OkgenError(f"snapshot {snapshot.name} was released without article texts; "
                         "run `okgen hydrate` to fetch them before indexing")
    articles = snapshot.window(days)
    if not articles:
        raise EmptyWindowError(f"the {days}-day window of snapshot {snapshot.name} (ending {m.date}) holds no article")
    return articles


def plural(n: int, word: str, words: str | None = None) -> str:
    """``1 question``, ``9 questions`` (``words``: an irregular plural)."""
    return f"{n} {word}" if n == 1 else f"{n} {words or word + 's'}"


@dataclass(frozen=True)
class WindowCoverage:
    """The days of news a window actually holds.

    A w-day window is (D - w, D], but a store that starts later leaves it fewer days of news: a
    "10-day" column computed on 2 days would mislead. (A quiet day without articles inside a
    window the store covers does not make it short.)
    """

    window: int
    """Window length in days."""
    date: dt.date
    """The window's last day (the snapshot date)."""
    articles: int
    """Articles in the window."""
    news_days: int
    """Days with at least one article."""
    first: dt.date | None
    """Earliest article date (None: no article)."""
    last: dt.date | None
    """Latest article date (None: no article)."""

    @property
    def short(self) -> bool:
        """The stored news starts after the window's first day (an empty window is an error elsewhere)."""
        return self.first is not None and self.first > self.date - dt.timedelta(days=self.window - 1)

    def span(self) -> str:
        """``first..last`` (one date when they are equal)."""
        return str(self.first) if self.first == self.last else f"{self.first}..{self.last}"

    def warning(self) -> str:
        """One line telling a reader the window is shorter than its name."""
        return (f"the {self.window}-day window of {self.date} covers {plural(self.news_days, 'day')} of stored news "
                f"({self.span()})")

    def to_dict(self) -> dict[str, object]:
        """JSON-ready: window, first, last, news_days, articles."""
        return {"window": self.window, "first": self.first and self.first.isoformat(),
                "last": self.last and self.last.isoformat(), "news_days": self.news_days, "articles": self.articles}


def window_coverage(snapshot, windows: Iterable[int]) -> dict[int, WindowCoverage]:
    """The coverage of each window the snapshot can give (longer ones are left out: asking
    for them is an error elsewhere), from one pass over the corpus dates."""
    m = snapshot.manifest
    wanted = sorted({w for w in windows if isinstance(w, int) and 1 <= w <= max(m.windows)})
    dates = Counter(a.date for a in snapshot.iter_corpus() if a.date <= m.date)
    out = {}
    for w in wanted:
        start = m.date - dt.timedelta(days=w)
        inside = sorted(d for d in dates if d > start)
        out[w] = WindowCoverage(window=w, date=m.date, articles=sum(dates[d] for d in inside), news_days=len(inside),
                                first=inside[0] if inside else None, last=inside[-1] if inside else None)
    return out


def chunk_words(text: str, size: int, overlap: int = 0) -> list[str]:
    """Cut ``text`` into passages of about ``size`` words, ``overlap`` words shared.

    A tail shorter than a quarter of ``size`` is merged into the passage before it, so no
    passage is a stub. Whitespace is normalised; an empty text gives no passage.
    """
    words = text.split()
    if not words:
        return []
    if size <= 0 or len(words) <= size:
        return [" ".join(words)]
    stride = max(1, size - overlap)
    spans: list[tuple[int, int]] = []
    start = 0
    while start < len(words):
        end = min(start + size, len(words))
        spans.append((start, end))
        if end == len(words):
            break
        start += stride
    if len(spans) > 1 and spans[-1][1] - spans[-1][0] < max(1, size // 4):
        last = spans.pop()
        spans[-1] = (spans[-1][0], last[1])
    return [" ".join(words[a:b]) for a, b in spans]


def make_units(articles: Iterable[Article], passage_words: int = 0, passage_overlap: int = 0) -> list[Doc]:
    """Turn articles into index units, sorted by (date, article id, passage number).

    Whole articles give one unit ``id == article id`` with ``title\\nbody``; with chunking,
    passage ``n`` of an article is ``<article id>#<n>`` with ``title\\npassage``. An article
    with no text keeps one unit holding its title, so it can still be found.
    """
    units: list[Doc] = []
    for a in sorted(articles, key=lambda a: (a.date, a.id)):
        title = " ".join(a.title.split())
        if passage_words <= 0:
            body = a.text.strip()
            units.append(Doc(a.id, a.id, f"{title}\n{body}".strip(), a.date))
            continue
        passages = chunk_words(a.text, passage_words, passage_overlap) or [""]
        for n, passage in enumerate(passages):
            units.append(Doc(f"{a.id}#{n}", a.id, f"{title}\n{passage}".strip(), a.date))
    return units


def corpus_hash(units: Sequence[Doc]) -> str:
    """SHA-256 naming exactly what an index holds: every unit's id, article, date and text."""
    lines = [UNITS_VERSION] + [f"{u.id}\t{u.article_id}\t{u.date.isoformat()}\t{sha256_text(u.text)}" for u in units]
    return sha256_text("\n".join(lines) + "\n")


def limits_for(unit_dates: Sequence[int], query_dates: Sequence[dt.date]) -> list[int]:
    """Per query, how many leading units are dated on or before its date.

    Args:
        unit_dates: the units' dates as ordinals, ascending.
        query_dates: one date per query.
    """
    return [bisect.bisect_right(unit_dates, d.toordinal()) for d in query_dates]


def question_query(question: Question, with_choices: bool = False) -> str:
    """The query for a question: its text, optionally followed by its choices."""
    if not with_choices:
        return question.question
    return question.question + " " + " ".join(question.choices)


def language_counts(articles: Iterable[Article]) -> dict[str, int]:
    """Articles per language code (``unknown`` when not recorded)."""
    return dict(sorted(Counter(a.language or "unknown" for a in articles).items()))
