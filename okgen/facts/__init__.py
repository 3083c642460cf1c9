"""Dated facts from each day's articles, over a closed set of functional relations.

A **fact** (:class:`okgen.facts.records.Fact`) is one sentence's statement that a subject has a
value for a relation on a day: ``(subject, relation, object, valid_from, reported, outlet,
article_id, evidence, extractor)``, plus normalised keys (``subject_key``, ``object_key``), the
value's kind and a ``past`` flag for sentences that report an earlier value. Its ``id`` starts
with the extractor's name (``rules-v1:3f2a…``).

The relations (:data:`okgen.facts.records.RELATIONS`) all have one current value per subject:

=================  =====================================  ==========
relation           subject                                object
=================  =====================================  ==========
holds_office       ``Prime Minister of Canada``           person
leads              ``Masters``, ``standings``, a poll     person/org
death_toll         event or place                         count
injured_count      event or place                         count
tariff_rate        the country whose goods are taxed      percent
interest_rate      a central bank                         percent
approval_rating    a person                               percent
price              commodity, currency, index             money/number
number_of          ``number of X``                        count
=================  =====================================  ==========

Public API::

    from okgen.facts import Fact, FactsFile, RELATIONS, RuleExtractor
    from okgen.facts import extract_day, extract_facts, read_facts, facts_path

    ff = extract_day(ws, date(2025, 4, 11))      # parse the day's articles, write data/facts/2025-04-11.json
    ff.facts                                     # tuple[Fact, ...]; ff.extractor, ff.articles
    ff = read_facts(ws, date(2025, 4, 11))       # read it back (NotFoundError when not extracted)
    facts = extract_facts(articles)              # any Article list, nothing written
    ex = RuleExtractor(pipeline=None)            # reuse one loaded spaCy pipeline: extract_day(..., extractor=ex)

The offline extractor (``rules-v1+<spaCy pipeline>-<version>``) is :mod:`okgen.facts.rules`:
deterministic rules over the spaCy parse of :func:`okgen.generate.nlp.load_pipeline`. CLI:
``okgen facts extract --date D`` and ``okgen facts show --date D``.
"""

from okgen.facts.extract import (
           RuleExtractor,
           extract_day,
           extract_facts,
           facts_path,
           read_facts,
           relation_counts,
)
from okgen.facts.records import QUESTION_FORMS, RELATIONS, Fact, FactsFile

__all__ = ["QUESTION_FORMS", "RELATIONS", "Fact", "FactsFile", "RuleExtractor", "extract_day", "extract_facts",
           "facts_path", "read_facts", "relation_counts"]
