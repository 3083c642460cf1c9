"""How much of a question's stem is copied from its article: the longest shared run of tokens.

A stem that copies a sentence of its article lets a lexical retriever find the source at rank 1
and tests reading rather than knowledge. :func:`longest_shared_run` measures the longest run of
consecutive stem tokens that also occurs, in the same order, in the article, counting only
ordinary tokens: **name tokens** (tokens inside a named entity -- a person, organisation,
place, group, event, product, work or law, not a date or number -- or tagged as a proper noun by
spaCy) may sit inside a run without adding to its length, since a self-contained question must
repeat the names of its actors. Tokens are words (letters and digits, inner apostrophes kept),
compared case-folded; punctuation is ignored.

The quality gate ``stem_overlap`` (:mod:`okgen.generate.gates`) rejects a stem whose run is
longer than :data:`MAX_SHARED_RUN`; the snapshot's quality evidence reports the distribution.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from typing import Any

MAX_SHARED_RUN = 8
"""A stem may share at most this many consecutive ordinary tokens with its article."""

NAME_LABELS = frozenset(["PERSON", "NORP", "FAC", "ORG", "GPE", "LOC", "PRODUCT", "EVENT", "WORK_OF_ART", "LAW",
                         "LANGUAGE"])
"""Entity labels whose tokens are names (dates, numbers and amounts are ordinary tokens)."""
_TOKEN = re.compile(r"\w+(?:['\u2019]\w+)*")


def _fold(text: str) -> str:
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text).replace("\u2019", "'")
    return text.casefold()


def tokens(text: str) -> list[str]:
    """The case-folded word tokens of ``text`` (what runs are made of)."""
    return _TOKEN.findall(_fold(text))


class ArticleTokens:
    """An article's tokens indexed by value, for many :func:`longest_shared_run` calls.

    Args:
        text: the article's title and text.
        only: index just these tokens (the stems' own: the runs found are the same).
    """

    __slots__ = ("positions",)

    def __init__(self, text: str, only: set[str] | None = None):
        self.positions: dict[str, list[int]] = {}
        for i, t in enumerate(tokens(text)):
            if only is None or t in only:
                self.positions.setdefault(t, []).append(i)


def is_name_token(token: Any) -> bool:
    """A proper noun outside a date, time or number entity ("Tuesday", "November" are not names)."""
    # The tagger's fine tag, so the attribute ruler (which maps it to ``pos_``) may be disabled.
    return token.tag_ in ("NNP", "NNPS") and (not token.ent_type_ or token.ent_type_ in NAME_LABELS)


def name_mask(stem: str, *, doc: Any = None, names: Iterable[str] | None = None) -> list[tuple[str, bool]]:
    """The stem's tokens, each with whether it is a name token.

    Args:
        stem: the question stem.
        doc: a spaCy ``Doc`` of exactly ``stem``: tokens inside an entity or tagged ``PROPN``
            are names.
        names: name strings (``["Keir Starmer", "Reuters"]``): their tokens are names. Used
            with or instead of ``doc``.
    """
    spans: list[tuple[int, int]] = []
    if doc is not None:
        spans += [(e.start_char, e.end_char) for e in doc.ents if e.label_ in NAME_LABELS]
        spans += [(t.idx, t.idx + len(t.text)) for t in doc if is_name_token(t)]
    name_toks = {t for n in (names or ()) for t in tokens(n)}
    out = []
    folded = _fold(stem) if len(_fold(stem)) == len(stem) else None
    for m in _TOKEN.finditer(stem):
        tok = folded[m.start():m.end()] if folded is not None else _fold(m.group(0))
        is_name = tok in name_toks or any(s < m.end() and m.start() < e for s, e in spans)
        out.append((tok, is_name))
    return out


def longest_shared_run(stem: str, article_text: str | ArticleTokens, *, doc: Any = None,
                       names: Iterable[str] | None = None, nlp: Any = None) -> int:
    """Length of the longest run of consecutive stem tokens found in the same order in the
    article, counting ordinary tokens only (name tokens inside the run count 0).

    Args:
        stem: the question stem.
        article_text: the article's title and text, or its :class:`ArticleTokens`.
        doc: a spaCy ``Doc`` of the stem (entities and proper nouns are names).
        names: name strings whose tokens are names, with or instead of ``doc``.
        nlp: a spaCy pipeline to parse the stem when neither ``doc`` nor ``names`` is given
            (default: :func:`okgen.generate.nlp.load_pipeline`).

    Returns:
        The run's length in ordinary tokens (0 when nothing is shared).
    """
    if doc is None and names is None:
        if nlp is None:
            from okgen.generate.nlp import load_pipeline

            nlp = load_pipeline()
        doc = nlp(stem)
    index = article_text if isinstance(article_text, ArticleTokens) else ArticleTokens(article_text)
    best = 0
    prev: dict[int, int] = {}
    for tok, is_name in name_mask(stem, doc=doc, names=names):
        w = 0 if is_name else 1
        cur: dict[int, int] = {}
        for p in index.positions.get(tok, ()):
            # A run continues where the previous stem token matched the previous article token.
            cur[p] = prev.get(p - 1, 0) + w
        prev = cur
        if cur:
            best = max(best, max(cur.values()))
    return best
