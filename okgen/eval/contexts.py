"""Contexts for the three settings, and the truncation rule that fits them to the model.

* ``none``: no context.
* ``oracle``: the question's source article (title and text).
* ``retrieval``: the top-k passages a retriever returns from the snapshot's corpus over a news
  window, in rank order (:func:`retrieve`); never an article dated after the question.
* ``ctx:closest`` / ``ctx:latest`` / ``ctx:cumulative``: dated articles about the question's
  entity (:mod:`okgen.memory.dated`; cumulative contexts drop their oldest articles first, :func:`fit_oldest_first`).

**Truncation.** Backends with a tokenizer (``hf``, ``vllm``) cut by default as
lm-evaluation-harness does: the prompt goes to the backend whole and the backend keeps the
**last** tokens that fit (``truncation=left``; the beginning of the prompt, instruction and
headline first, is lost); :func:`fit` then renders and nothing more. With ``truncation=context``,
and for backends that cut nothing themselves (``openai``), okgen's own rule applies:

**okgen's truncation rule** (``truncation=context``). The instruction, the question, the choices and the ``Answer:`` prefix are
never cut. When the prompt plus the answer's reserve (the longest choice continuation, 2 tokens
for a letter, ``max_tokens`` for generation) exceeds the model's context length, the context
block is cut **from its end**, by tokens: the last passage is shortened first; a passage left
with fewer than :data:`MIN_PASSAGE_TOKENS` tokens is dropped, then the one before it is cut,
and so on. For the oracle article this keeps its beginning (headline and lead, where news
writing puts the facts). Each prediction records ``truncated``; ``results.json`` counts them.
Backends without a tokenizer (API models) estimate 4 characters per token and truncate only
when ``max_context`` is given.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from okgen.eval.templates import Passage, Template
from okgen.models.base import Backend, Prompt
from okgen.schema import Article, Question

MIN_PASSAGE_TOKENS = 16
SETTINGS = ("none", "oracle", "retrieval", "ctx:closest", "ctx:latest", "ctx:cumulative")


@dataclass
class Fitted:
    """A prompt ready to score."""

    prompt: Prompt
    truncated: bool = False
    retrieved: tuple[str, ...] = ()
    gold_rank: int | None = None
    too_long: bool = False


def article_passage(a: Article, rank: int | None = None) -> Passage:
    """An article as a passage."""
    return Passage(article_id=a.id, title=a.title, text=a.text, source=a.source_name or a.source,
                   date=a.date.isoformat(), rank=rank)


def retrieve(index: Any, questions: Sequence[Question], k: int, articles: dict[str, Article]) -> list[tuple[list[Passage], int | None]]:
    """Top-k passages per question from a window index, in rank order, with the gold article's rank.

    Args:
        index: an ``okgen.retrieval.index.WindowIndex``.
        questions: the questions (their text is the query, their date the temporal filter).
        k: passages per question.
        articles: corpus articles by id (source and date for the passage header).
    """
    hits = index.search_units([q.question for q in questions], k, query_dates=[q.date for q in questions])
    out = []
    for q, hs in zip(questions, hits):
        passages = []
        gold = None
        for h in hs[:k]:
            a = articles.get(h.article_id)
            passages.append(Passage(article_id=h.article_id, title=a.title if a else "", text=h.text,
                                    source=(a.source_name or a.source) if a else "",
                                    date=a.date.isoformat() if a else "", rank=h.rank))
            if gold is None and h.article_id == q.article_id:
                gold = int(h.rank)
        out.append((passages, gold))
    return out


def fit(template: Template, question: Question, passages: Sequence[Passage], setting: str, backend: Backend,
        reserve: int, group: str | None = None) -> Fitted:
    """Render the prompt and, unless the backend truncates on its own, apply okgen's truncation rule
    (see the module docstring)."""
    passages = list(passages)
    prompt = template.render(question, passages, setting, group)
    ids = tuple(p.article_id for p in passages)
    if getattr(backend, "truncation", "context") == "left":
        return Fitted(prompt, retrieved=ids)  # the backend cuts the token sequence itself
    limit = backend.max_length
    if limit is None:
        return Fitted(prompt, retrieved=ids)
    n = backend.prompt_tokens(prompt)
    truncated = False
    for _ in range(8):  # tokenization is not additive: re-measure after each cut
        over = n + reserve - limit
        if over <= 0 or not passages:
            break
        passages = _cut_tail(passages, over + 2, backend)
        truncated = True
        prompt = template.render(question, passages, setting, group)
        n = backend.prompt_tokens(prompt)
    return Fitted(prompt, truncated=truncated, retrieved=tuple(p.article_id for p in passages),
                  too_long=n + reserve > limit)


def _cut_tail(passages: list[Passage], tokens: int, backend: Backend) -> list[Passage]:
    """Remove about ``tokens`` tokens from the end of the passages' texts."""
    out = list(passages)
    while tokens > 0 and out:
        last = out[-1]
        have = backend.text_tokens(last.text)
        keep = have - tokens
        if keep < MIN_PASSAGE_TOKENS:
            out.pop()
            tokens -= have + backend.text_tokens(last.title) + 4  # its header goes too
            continue
        out[-1] = replace(last, text=backend.truncate_text(last.text, keep))
        tokens = 0
    return out


def fit_oldest_first(template: Template, question: Question, passages: Sequence[Passage], setting: str,
                     backend: Backend, reserve: int) -> Fitted:
    """Fit oldest-first passages by dropping whole passages from the front (the oldest) until
    the rest fits, then apply the truncation rule (policy ``drop-oldest``)."""
    passages = list(passages)
    limit = backend.max_length
    dropped = False
    if limit is not None and len(passages) > 1:
        base = backend.prompt_tokens(template.render(question, [], setting))
        sizes = [backend.text_tokens(p.title) + backend.text_tokens(p.text) + 8 for p in passages]
        while len(passages) > 1 and base + sum(sizes) + reserve > limit:
            passages.pop(0)
            sizes.pop(0)
            dropped = True
    fi = fit(template, question, passages, setting, backend, reserve)
    fi.truncated = fi.truncated or dropped
    return fi
