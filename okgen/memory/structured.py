"""Structured memory (KO, "knowledge organisation"): (subject, relation, object, time, source) entries.

Each observed day's articles go through the facts extractor of the evolving-facts work
(:mod:`okgen.facts`, offline rules over the spaCy parse); every fact becomes an :class:`Entry`
indexed by subject key and relation. ``retrieve(query, as_of, k)`` finds the subjects the query
names (every word of the subject in the query; else the subjects sharing most words with it),
keeps their entries dated on or before ``as_of`` and returns the newest ``k`` of them, oldest
first, one passage each (the entry as a line, with its evidence sentence): the model answers
from the entries only. Facts the extractor flags as reporting an earlier value (``past``) are
kept only when they carry their own date (``valid_from``).

Two modes, both recorded in a run's identity:

* ``ko-blind`` (default, the fair one): the memory is built without seeing any question.
* ``ko-qaware``: as the original method, it is built knowing the questions
  (:meth:`KOQAware.prepare` is given them before the first day): it keeps only entries about
  the questions' entities, and adds, for every sentence of an observed article that names a
  question's entity and one of its choices, an entry ``(entity, mentions, choice, date)``.

Options: ``extractor``: ``rules`` (okgen.facts' offline extractor, the default) or ``llm``
(okgen.facts' LLM extractor, ``llm-v1``, on the chat model given as ``model=SPEC`` or by
``--memory-model SPEC``: ``--memory ko-blind,extractor=llm --memory-model hf/PATH``). Tests and
callers may pass ``extract=callable(articles) -> list of facts`` (objects with the Fact fields).
"""

from __future__ import annotations

import datetime as dt
import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from okgen.errors import ConfigError
from okgen.eval.templates import Passage
from okgen.memory.base import Memory
from okgen.memory.dated import entity_of_question
from okgen.schema import Article, Question

_WORD = re.compile(r"\w+")
_SENT = re.compile(r"(?<=[.!?])\s+")


@dataclass(frozen=True)
class Entry:
    """One memory entry."""

    subject: str
    relation: str
    object: str
    time: str
    source: str
    article_id: str
    evidence: str = ""

    @property
    def key(self) -> str:
        """Normalised subject."""
        return " ".join(_WORD.findall(self.subject.lower()))


def _rules_extractor() -> Callable[[Sequence[Article]], list[Any]]:
    try:
        from okgen.facts import RuleExtractor
    except ImportError:
        raise ConfigError("the structured memory needs okgen.facts (the evolving-facts extractor), "
                          "which this checkout lacks") from None
    ex = RuleExtractor()
    return ex.extract


def _llm_extractor(spec: str) -> Callable[[Sequence[Article]], list[Any]]:
    """okgen.facts' LLM extractor (``llm-v1``) on the chat model ``spec``: each fact it keeps
    is checked against its article, as ``okgen facts extract --extractor SPEC`` does."""
    from okgen.facts.llm import LLMExtractor
    from okgen.llm import chat_model

    client, decoding = chat_model(spec)
    return LLMExtractor(client, decoding).extract


class KOBlind(Memory):
    """Structured memory built without the questions."""

    name = "ko-blind"
    question_aware = False
    chronological = True
    option_names = ("extractor", "model")  # extract= is for callers that build the memory themselves

    def __init__(self, extractor: str = "rules", extract: Callable[[Sequence[Article]], list[Any]] | None = None,
                 model: str | None = None, **options: Any):
        if extractor not in ("rules", "llm") and extract is None:
            raise ConfigError(f"unknown fact extractor {extractor!r} for the structured memory; known: rules, llm")
        if extractor == "llm" and extract is None:
            if not model:
                raise ConfigError("the structured memory's llm extractor needs a chat model: "
                                  "ko-blind,extractor=llm,model=SPEC or --memory-model SPEC")
            options["model"] = str(model)
        super().__init__(extractor=extractor if extract is None else getattr(extract, "__name__", "custom"), **options)
        self._extract = extract
        self.entries: list[Entry] = []
        self._index: dict[str, list[int]] = defaultdict(list)

    def reset(self, seed: int) -> None:
        self.entries, self._index = [], defaultdict(list)

    def _add(self, e: Entry) -> None:
        self._index[e.key].append(len(self.entries))
        self.entries.append(e)

    def facts(self, articles: Sequence[Article]) -> list[Entry]:
        if self._extract is None:
            self._extract = _llm_extractor(self.options["model"]) if self.options["extractor"] == "llm" \
                else _rules_extractor()
        out = []
        for f in self._extract(articles):
            if getattr(f, "past", False) and f.valid_from is None:
                continue  # "had initially been set at 10%": an earlier value with no date of its own
            when = f.valid_from or f.reported
            out.append(Entry(f.subject, f.relation, f.object, when.isoformat(), f.outlet, f.article_id, f.evidence))
        return out

    def observe(self, day: dt.date, articles: Sequence[Article]) -> None:
        for e in self.facts(articles):
            self._add(e)

    def subjects(self, query: str) -> list[str]:
        """Subject keys the query names (all their words in it), else those sharing the most words."""
        q = set(_WORD.findall(query.lower()))
        full = [s for s in self._index if s and set(s.split()) <= q]
        if full:
            return full
        best, out = 0, []
        for s in self._index:
            n = len(set(s.split()) & q)
            if n > best:
                best, out = n, [s]
            elif n == best and n:
                out.append(s)
        return out

    def retrieve(self, query: str, as_of: dt.date, k: int) -> list[Passage]:
        day = as_of.isoformat()
        found = [self.entries[i] for s in self.subjects(query) for i in self._index[s] if self.entries[i].time <= day]
        found = sorted(set(found), key=lambda e: (e.time, e.subject, e.relation, e.object))[-k:]
        return [Passage(article_id=e.article_id, title=f"{e.subject} | {e.relation}",
                        text=f"({e.subject}; {e.relation}; {e.object}; since {e.time}; {e.source}) {e.evidence}".strip(),
                        source=e.source, date=e.time) for e in found]

    def state(self) -> dict[str, Any]:
        return {"entries": [asdict(e) for e in self.entries]}

    def restore(self, state: dict[str, Any]) -> None:
        self.reset(0)
        for e in state.get("entries", []):
            self._add(Entry(**e))

    def stats(self) -> dict[str, Any]:
        return {"items": len(self.entries), "chars": sum(len(e.evidence) + len(e.object) for e in self.entries),
                "tokens": 0, "subjects": len(self._index)}


class KOQAware(KOBlind):
    """Structured memory built knowing the questions (the original method's setting)."""

    name = "ko-qaware"
    question_aware = True

    def __init__(self, **options: Any):
        super().__init__(**options)
        self.targets: list[tuple[str, tuple[str, ...]]] = []

    def prepare(self, questions: Sequence[Question]) -> None:
        """Learn the questions' entities and choices before the first day."""
        self.targets = sorted({(n, tuple(q.choices)) for q in questions if (n := entity_of_question(q.question))})

    def observe(self, day: dt.date, articles: Sequence[Article]) -> None:
        names = {" ".join(_WORD.findall(n.lower())) for n, _ in self.targets}
        for e in self.facts(articles):
            if any(n and (n in e.key or e.key in n) for n in names):
                self._add(e)
        for a in articles:
            for sent in _SENT.split(a.text):
                for name, choices in self.targets:
                    if name not in sent:
                        continue
                    for c in choices:
                        if c and c in sent:
                            self._add(Entry(name, "mentions", c, a.date.isoformat(), a.source_name or a.source,
                                            a.id, sent.strip()))

    def state(self) -> dict[str, Any]:
        return {**super().state(), "targets": [[n, list(c)] for n, c in self.targets]}

    def restore(self, state: dict[str, Any]) -> None:
        super().restore(state)
        self.targets = [(n, tuple(c)) for n, c in state.get("targets", [])]
