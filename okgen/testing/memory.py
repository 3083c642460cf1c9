"""A synthetic entity whose value changes over days, and a model stub that reads its first passage.

:func:`entity_stream` gives ten days of news in which "Harbor Lights Company" changes chief
executive three times (days 1, 4, 7 and 10 name a new one; other days mention the current one
or other companies), with one question on each change day; :func:`entity_stream_folder` writes the
same ten days as a stream (one question asked every day). :class:`FirstArticleBackend` answers
every question with the choice written first in the first passage of its context (the oldest
article in a cumulative context), so it answers from stale news whenever older news is there.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from typing import Any

from okgen.memory.base import Memory, article_passage
from okgen.models.base import Backend, Generated, Prompt, Scored, estimate_tokens, parse_model_spec
from okgen.schema import Article, Question
from okgen.testing.retrieval import article

START = dt.date(2026, 1, 1)
ENTITY = "Harbor Lights Company"
CEOS = ("Alice Moreau", "Bruno Salazar", "Chiara Lindqvist", "Dmitri Okafor")
CHANGE_DAYS = (1, 4, 7, 10)
CHOICE_ORDER = (1, 3, 0, 2)  # fixed shuffle: B, D, A, C
_OTHERS = ("Northwind Rail", "Copper Valley Mining", "Blue Finch Airlines")


def day(n: int) -> dt.date:
    """Day ``n`` (1-based) of the stream."""
    return START + dt.timedelta(days=n - 1)


def entity_stream() -> tuple[list[Article], list[Question]]:
    """The ten days' articles (oldest first) and the four questions (one per change day)."""
    arts: list[Article] = []
    questions: list[Question] = []
    current = 0
    for n in range(1, 11):
        d = day(n)
        if n in CHANGE_DAYS:
            current = CHANGE_DAYS.index(n)
            new, old = CEOS[current], CEOS[current - 1] if current else None
            text = (f"{ENTITY} said on {d:%A} that {new} will lead the company as chief executive"
                    + (f", succeeding {old}." if old else ".") + " The board approved the appointment unanimously.")
            a = article(f"{ENTITY} names {new} chief executive", text, d, key=f"ceo-{n}")
            arts.append(a)
            choices = tuple(CEOS[i] for i in CHOICE_ORDER)
            questions.append(Question(
                id=f"q-ceo-{n}", article_id=a.id, date=d, source="test",
                question=f"Who did {ENTITY} name as its chief executive?", choices=choices,
                answer_index=choices.index(new), answer=new, short_answer=new, evidence=text,
                generator="synthetic-entity-v1"))
        else:
            who = CEOS[current]
            arts.append(article(f"{ENTITY} opens a harbour terminal",
                                f"{who}, chief executive of {ENTITY}, opened a terminal on day {n}.", d,
                                key=f"mention-{n}"))
        other = _OTHERS[n % len(_OTHERS)]
        arts.append(article(f"{other} reports results", f"{other} reported quarterly results on day {n}.", d,
                            key=f"other-{n}"))
    return arts, questions


_CHOICE = re.compile(r"^([A-J])\. (.+)$", re.MULTILINE)


class FirstArticleBackend(Backend):
    """Answers with the choice written first in the context's first passage (``stub/first-article``)."""

    name = "stub"

    def __init__(self) -> None:
        super().__init__(parse_model_spec("stub/first-article"))

    @staticmethod
    def first_passage(text: str) -> str:
        """The first passage (or article) of a rendered prompt, or ``""`` without a context."""
        for head in ("Passages:\n", "Article:\n"):
            if text.startswith(head):
                body = text[len(head):]
                return re.split(r"\n\n\[\d+\] ", body, maxsplit=1)[0].split("\n\nThe following")[0]
        if text.startswith("News so far:\n"):  # a stream prompt: "[date, outlet] title\ntext" passages
            return text[len("News so far:\n"):].split("\n\nThe following")[0].split("\n\n[")[0]
        return ""

    def _scores(self, p: Prompt, n: int) -> tuple[float, ...]:
        text = p.plain()
        first = self.first_passage(text)
        choices = dict(_CHOICE.findall(text))
        found = {k: first.find(v) for k, v in choices.items() if v and first.find(v) >= 0}
        best = min(found, key=found.get) if found else None
        return tuple(0.0 if chr(65 + i) == best else -1.0 - i * 1e-3 for i in range(n))

    def letter_logprobs(self, prompts: Sequence[Prompt], labels: Sequence[Sequence[str]]) -> list[Scored]:
        """Highest score for the letter of the first choice found in the first passage."""
        return [Scored(scores=self._scores(p, len(labs)), lengths=tuple(len(x) for x in labs),
                       prompt_tokens=estimate_tokens(p.plain()), single_pass=True) for p, labs in zip(prompts, labels)]

    def loglik(self, prompts: Sequence[Prompt], continuations: Sequence[Sequence[str]]) -> list[Scored]:
        """As :meth:`letter_logprobs`."""
        return [Scored(scores=self._scores(p, len(c)), lengths=tuple(len(x) for x in c),
                       prompt_tokens=estimate_tokens(p.plain())) for p, c in zip(prompts, continuations)]

    def generate(self, prompts: Sequence[Prompt], *, max_tokens: int, temperature: float = 0.0,
                 seed: int = 0, stop: Sequence[str] = ()) -> list[Generated]:
        """The letter :meth:`letter_logprobs` would pick."""
        out = []
        for p in prompts:
            s = self._scores(p, 4)
            out.append(Generated(text=chr(65 + s.index(max(s))), prompt_tokens=estimate_tokens(p.plain()),
                                 completion_tokens=1, finish_reason="stop"))
        return out

    def info(self) -> dict[str, Any]:
        """Identity."""
        return {"backend": self.name, "model": "first-article"}


STREAM_CHOICES = ("not known yet", CEOS[1], CEOS[3], CEOS[0], CEOS[2], "Elena Park")
"""Options of the synthetic stream question: ``not known yet`` first (what a reader that finds no
name picks), then the four chief executives in a fixed shuffle and one distractor."""


def entity_stream_folder(ws: Any, name: str = "harbor", *, mentions: bool = True, others: bool = True) -> Any:
    """The ten days as a stream folder ``streams/NAME`` (one question, "Who leads Harbor Lights
    Company?", asked every day; gold Alice x3, Bruno x3, Chiara x3, Dmitri: three changes).

    ``mentions=False`` drops the daily articles that mention the current chief executive (the
    value is then reported on change days only: the needed fact ages 0, 1, 2 days);
    ``others=False`` drops the articles about other companies. Returns the opened stream.
    """
    from okgen.streams.records import (
        StreamDocument,
        StreamInterval,
        StreamQuestion,
        Track,
        TrackDay,
    )
    from okgen.streams.store import open_stream, streams_dir, write_stream

    arts, _ = entity_stream()
    keep = [a for a in arts if (mentions or "opens a harbour terminal" not in a.title)
            and (others or ENTITY in a.title)]
    dates = [day(n) for n in range(1, 11)]
    gold = [CEOS[max(i for i, c in enumerate(CHANGE_DAYS) if c <= n)] for n in range(1, 11)]
    sources: dict[str, dict[str, list[str]]] = {}
    for a in keep:
        if ENTITY in a.title:
            who = next(c for c in CEOS if a.text.startswith(c) or f"that {c} will lead" in a.text)
            sources.setdefault(who, {})[str(dates.index(a.date))] = [a.text.split(". ")[0].rstrip(".") + "."]
    days, prev = [], None
    for i, g in enumerate(gold):
        status = "new" if prev is None else "changes" if g != prev else "stays"
        reported = {g.lower(): ["test"]} if str(i) in sources.get(g, {}) else {}
        days.append(TrackDay(interval=i, status=status if reported or status == "stays" else "none",
                             reported=reported, value=g.lower()))
        prev = g
    track = Track(id=f"leads/{ENTITY.lower()}", subject=ENTITY, relation="leads", object_kind="person",
                  days=tuple(days), labels={c.lower(): c for c in CEOS}, changes=3)
    index = {c: i for i, c in enumerate(STREAM_CHOICES)}
    q = StreamQuestion(id="q-harbor-ceo", track=track.id, question=f"Who leads {ENTITY}?", choices=STREAM_CHOICES,
                       answers=tuple(index[g] for g in gold), not_known_index=0, changes=3, sources=sources)
    docs = [StreamDocument(id=a.id, interval=dates.index(a.date), outlet=a.source, title=a.title, text=a.text)
            for a in sorted(keep, key=lambda a: (a.date, a.id))]
    write_stream(ws, name, tracks=[track], questions=[q], documents=docs, origin="series", series=None,
                 series_hash=None, intervals=tuple(StreamInterval(index=i, date=d, label=str(d)) for i, d in enumerate(dates)),
                 extractor="synthetic", min_changes=1, min_outlets=1, seed=0,
                 counts={"questions": 1, "documents": len(docs), "tracks": 1})
    return open_stream(streams_dir(ws) / name)


def entity_series(ws: Any, name: str = "entity") -> Any:
    """The ten days as ten snapshots (10-day windows) pinned as series ``name``."""
    from okgen.series.store import build_series
    from okgen.testing.retrieval import snapshot_from

    arts, qs = entity_stream()
    for n in range(1, 11):
        d = day(n)
        snapshot_from(ws, [a for a in arts if a.date <= d], [q for q in qs if q.date == d], date=d, windows=(10,))
    return build_series(ws, name, day(1), day(10))


class PeekingMemory(Memory):
    """A memory that keeps a reference to every article of the stream and answers from the
    newest (it reads ahead): the harness's future-leak guard must catch it."""

    name = "peeking"

    def __init__(self, everything: Sequence[Article]):
        super().__init__()
        self.everything = everything

    def reset(self, seed: int) -> None:
        pass

    def observe(self, day: dt.date, articles: Sequence[Article]) -> None:
        pass

    def retrieve(self, query: str, as_of: dt.date, k: int) -> list[Any]:
        return [article_passage(max(self.everything, key=lambda a: a.date))]

    def state(self) -> dict[str, Any]:
        return {}

    def restore(self, state: dict[str, Any]) -> None:
        pass
