"""The fact record and the closed set of relations the extractors write.

Every relation is *functional*: at any time a subject has one current value (one office holder,
one death toll, one price), so the values reported on successive days form a track whose
changes can be asked about (:mod:`okgen.streams`).
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Literal

from pydantic import Field

from okgen.hashing import sha256_text
from okgen.schema import Record

FACTS_SCHEMA_VERSION = 1

ObjectKind = Literal["person", "org", "count", "money", "percent", "number"]

# relation -> (what the subject is, object kind, description). The closed set: an extractor
# may write no other relation, and a stream asks one question form per relation.
RELATIONS: dict[str, tuple[str, ObjectKind, str]] = {
    "holds_office": ("an office, as 'Prime Minister of Canada' or 'CEO of Apple'", "person",
                     "the person who holds the office"),
    "leads": ("what is led: a tournament, a race, a poll, a standings table", "person",
              "the person or team in the lead"),
    "death_toll": ("an event or the place it happened", "count", "the number of people killed"),
    "injured_count": ("an event or the place it happened", "count", "the number of people injured"),
    "tariff_rate": ("the country whose goods are taxed", "percent", "the tariff rate on its goods"),
    "interest_rate": ("a central bank", "percent", "its policy interest rate"),
    "approval_rating": ("a person", "percent", "their approval rating in polls"),
    "price": ("a commodity, currency, asset or stock index", "money",
              "its price or level (money, or a bare number for an index)"),
    "number_of": ("what is counted, as 'number of migrants deported'", "count", "the count"),
}
# How the question of a stream reads, per relation ({s}: the subject).
QUESTION_FORMS: dict[str, str] = {
    "holds_office": "Who is the {s}?",
    "leads": "Who leads {s}?",
    "death_toll": "What is the death toll of {s}?",
    "injured_count": "How many people were injured in {s}?",
    "tariff_rate": "What is the tariff rate on goods from {s}?",
    "interest_rate": "What is the interest rate set by {s}?",
    "approval_rating": "What is the approval rating of {s}?",
    "price": "What is the price or level of {s}?",
    "number_of": "What is the {s}?",
}


class Fact(Record):
    """One dated fact, as one article's sentence states it."""

    id: str
    """``<extractor>:<16 hex>``: the extractor's name (``rules-v1``, ``llm-v1+openai/gpt-4.1-mini``) and a hash of article, sentence, relation,
    subject and object (the same sentence gives the same id)."""
    subject: str
    """The subject as the article writes it, canonicalised (``Prime Minister of Canada``)."""
    subject_key: str
    """Normalised subject: tracks group facts by (subject_key, relation)."""
    relation: str
    """One of :data:`RELATIONS`."""
    object: str
    """The value as the article writes it (``Mark Carney``, ``125%``, ``$3,200``)."""
    object_key: str
    """Normalised value: two facts agree when their keys are equal (numbers without separators,
    names case-folded)."""
    object_kind: ObjectKind
    """What kind of value it is (chooses the distractors)."""
    valid_from: dt.date | None = None
    """The day the value took effect, when the sentence dates it (``on Friday``), else None."""
    reported: dt.date
    """News date of the article that reports it."""
    outlet: str
    """Outlet id of the article."""
    article_id: str
    """Id of the article."""
    evidence: str
    """The sentence that states it."""
    extractor: str
    """Extractor id (``rules-v1+en_core_web_sm-3.8.0``, or an LLM model spec)."""
    past: bool = False
    """The sentence reports an earlier value ('initially', 'had been', 'previously'): kept, but
    tracks treat it as retrospective."""

    @staticmethod
    def make_id(extractor: str, article_id: str, sentence: int, relation: str, subject_key: str, object_key: str,
                name: str | None = None) -> str:
        """The fact id for these parts (``name``: how the id names its extractor, by default the
        extractor id up to its first ``+``)."""
        name = name or extractor.split("+", 1)[0]
        return f"{name}:{sha256_text(f'{article_id}|{sentence}|{relation}|{subject_key}|{object_key}')[:16]}"


class FactsFile(Record):
    """``data/facts/<date>.json``: the facts of one news day."""

    schema_version: int = FACTS_SCHEMA_VERSION
    """Facts file schema version."""
    kind: str = "okgen-facts"
    """File kind."""
    date: dt.date
    """News date."""
    extractor: str
    """Extractor id."""
    articles: int
    """Articles read."""
    facts: tuple[Fact, ...] = Field(default_factory=tuple)
    """The facts, in article order."""
    funnel: dict[str, Any] | None = None
    """What an LLM extractor proposed, kept and dropped, by reason (None for ``rules-v1``)."""
