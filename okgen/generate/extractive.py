"""``extractive-v1``: the offline question generator, the default when no LLM is configured.

Deterministic, no network, no downloaded model. For each article it

1. splits the text into sentences and keeps informative, self-contained ones (no leading
   pronoun or "However", balanced quotes, sensible length);
2. finds typed answer spans (:mod:`okgen.generate.spans`): people, organisations, places, sums
   of money, percentages, dates, counts, quantities, years;
3. scores (sentence, span) pairs: kind weight, informative sentence, early in the article, an
   answer not seen in earlier days' articles (new entities), an answer that is the subject;
4. turns the sentence into a stand-alone dated question: "Which organisation agreed to buy ...,
   as reported on November 21, 2026?" when the answer is the subject, otherwise a completion
   question quoting the statement with a blank; relative days ("on Tuesday") become dates;
5. draws three same-kind distractors (:mod:`okgen.generate.distractors`) from the day's other
   articles, or perturbs numbers and dates, all formatted like the answer.

Its questions then go through the same programmatic checks as an LLM's.
"""

from __future__ import annotations

import datetime as dt
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from okgen.generate import distractors as dis
from okgen.generate.agents import AgentSpec
from okgen.generate.lexicon import BACKREF_START
from okgen.generate.records import Candidate
from okgen.generate.spans import NAME_KINDS, Span, find_spans
from okgen.generate.text import (
    contains,
    format_date,
    normalize,
    resolve_relative_dates,
    split_sentences,
)
from okgen.hashing import sha256_text
from okgen.schema import AgentInfo, Article, Decoding

NAME = "extractive"
MODEL = "extractive-v1"
WH = {"person": "Who", "org": "Which organisation", "place": "Which place"}
NOUN = {"person": "person", "org": "organisation", "place": "place", "money": "amount", "percent": "percentage",
        "date": "date", "count": "number", "quantity": "quantity", "year": "year"}
BLANK = "____"
# A dateline before the statement: "LONDON (Reuters) - ", "NAIROBI, Kenya — ".
_DATELINE = re.compile(r"^[A-Z][A-Z .'-]{2,}(?:,\s*[A-Z][A-Za-z .]+)?\s*(?:\([^)]{1,40}\))?\s*[-\u2013\u2014]\s+")


@dataclass
class _Sentence:
    index: int
    text: str
    spans: list[Span]


@dataclass
class ExtractivePool:
    """What the generator knows about the day's articles: names by kind (distractors), the
    answers already seen on earlier days (novelty) and each article's sentences and spans."""

    names: dis.Pool = field(default_factory=dis.Pool)
    seen_before: set[str] = field(default_factory=set)
    sentences: dict[str, list[_Sentence]] = field(default_factory=dict)


class ExtractiveGenerator:
    """The offline generator.

    Args:
        spec: the ``extractive`` agent spec (``agents/generator/extractive.toml``).
        seed: the snapshot seed (distractor sampling).
    """

    def __init__(self, spec: AgentSpec, seed: int):
        self.spec = spec
        self.seed = seed
        s = spec.section("sentences")
        a = spec.section("answers")
        self.min_chars = int(s.get("min_chars", 40))
        self.max_chars = int(s.get("max_chars", 320))
        self.max_index = int(s.get("max_index", 60))
        self.weights = {k: float(a.get(k, 0.0)) for k in NOUN}
        self.max_per_kind = int(a.get("max_per_kind", 2))
        self.novelty_bonus = float(a.get("novelty_bonus", 0.5))
        self.subject_bonus = float(a.get("subject_bonus", 0.3))
        self.position_penalty = float(a.get("position_penalty", 0.02))

    @property
    def info(self) -> AgentInfo:
        """Identity for the signature: ``extractive-v1`` and the spec hash."""
        return AgentInfo(model=MODEL, spec_hash=self.spec.spec_hash, decoding=Decoding(seed=self.seed))

    # -- pool ------------------------------------------------------------------------------
    def build_pool(self, articles: Sequence[Article], date: dt.date) -> ExtractivePool:
        """Index the day's articles (and earlier days' ones, for novelty)."""
        pool = ExtractivePool()
        for a in sorted(articles, key=lambda x: x.id):
            sents = self._sentences(a)
            pool.sentences[a.id] = sents
            for s in sents:
                for sp in s.spans:
                    pool.names.add(sp.kind, sp.text, a.id)
                    if a.date < date:
                        pool.seen_before.add(normalize(sp.text))
        return pool

    def _sentences(self, article: Article) -> list[_Sentence]:
        out = []
        for i, (s, e) in enumerate(split_sentences(article.text)):
            if i >= self.max_index:
                break
            text = article.text[s:e]
            m = _DATELINE.match(text)
            if m:  # "LONDON (Reuters) - Shares ...": the statement starts after the dateline
                text = text[m.end():]
            if not self._usable(text):
                continue
            spans = find_spans(text)
            if not _standalone(text, spans):
                continue
            out.append(_Sentence(i, text, spans))
        return out

    def _usable(self, text: str) -> bool:
        if not (self.min_chars <= len(text) <= self.max_chars) or "?" in text:
            return False
        if not (text[0].isalnum() or text[0] in "\"'\u201c\u2018"):
            return False  # bullets, list markers
        if ":" in " ".join(text.split()[:3]):
            return False  # "Key points: ...", "Q&A: ...": labels, not statements
        first = text.split(None, 1)[0].strip("\"'\u201c(").rstrip(",")
        if first in BACKREF_START:
            return False
        if text.count('"') % 2 or text.count("\u201c") != text.count("\u201d"):
            return False
        head = text.split()[:3]
        return not all(w.isupper() for w in head)  # datelines, shouting

    # -- generation ------------------------------------------------------------------------
    def generate(self, article: Article, n: int, pool: ExtractivePool) -> list[Candidate]:
        """Up to ``n`` candidates about ``article`` (fewer when it offers fewer good facts)."""
        sents = pool.sentences.get(article.id)
        if sents is None:
            sents = self._sentences(article)
        rng = random.Random(int(sha256_text(f"{self.seed}:{article.id}")[:16], 16))
        article_norm = normalize(f"{article.title}\n{article.text}")
        date_s = format_date(article.date)
        options = []
        for s in sents:
            for sp in s.spans:
                w = self.weights.get(sp.kind, 0.0)
                if w <= 0 or s.text.count(sp.text) != 1:
                    continue
                subject = self._subject_form(s.text, sp) is not None
                score = (w + 0.15 * min(len(s.spans), 4) - self.position_penalty * s.index
                         + (self.novelty_bonus if normalize(sp.text) not in pool.seen_before else 0.0)
                         + (self.subject_bonus if subject else 0.0))
                options.append((-score, s.index, sp.start, s, sp))
        options.sort(key=lambda o: o[:3])
        out: list[Candidate] = []
        used_sentences: set[int] = set()
        used_answers: set[str] = set()
        per_kind: dict[str, int] = {}
        for _, _, _, s, sp in options:
            if len(out) >= n:
                break
            key = normalize(sp.text)
            if s.index in used_sentences or key in used_answers or per_kind.get(sp.kind, 0) >= self.max_per_kind:
                continue
            question = self._question(s.text, sp, article.date, date_s)
            if question is None:
                continue
            ds = dis.pick(sp.text, sp.kind, pool=pool.names, article_id=article.id, article_norm=article_norm,
                          question=question, rng=rng, year=article.date.year)
            if ds is None:
                continue
            used_sentences.add(s.index)
            used_answers.add(key)
            per_kind[sp.kind] = per_kind.get(sp.kind, 0) + 1
            out.append(Candidate(
                article_id=article.id, index=len(out), question=question, choices=[sp.text, *ds],
                answer=sp.text, short_answer=sp.text, answer_type=sp.kind, evidence=s.text,
                rationale=f"{article.source_name or article.source} reported on {date_s} that {_lower_first(s.text)}",
            ))
        return out

    @staticmethod
    def _subject_form(sentence: str, sp: Span) -> str | None:
        """The rest of the sentence when the answer is its subject ("X agreed to ..."), else None."""
        if sp.kind not in NAME_KINDS:
            return None
        if sentence[:sp.start].strip() not in ("", "The", "the"):
            return None
        rest = sentence[sp.end:]
        m = re.match(r" ([a-z][a-z'-]*)\b", rest)
        if m is None or m.group(1) in ("and", "or", "of", "s"):
            return None
        return rest.strip().rstrip(".!")

    def _question(self, sentence: str, sp: Span, date: dt.date, date_s: str) -> str | None:
        # Resolved over the whole sentence (the tense around a weekday decides its direction),
        # with the answer held out by a mark that no text contains.
        before, _, after = resolve_relative_dates(f"{sentence[:sp.start]}\x00{sentence[sp.end:]}", date).partition("\x00")
        rest = self._subject_form(sentence, sp)
        if rest is not None:
            q = f"{WH[sp.kind]} {after.strip().rstrip('.!')}, as reported on {date_s}?"
            frame = q
        else:
            statement = (before + BLANK + after).strip().rstrip(".!").replace('"', "'").replace("\u201c", "'").replace("\u201d", "'")
            q = f'Which {NOUN[sp.kind]} completes this statement from the news of {date_s}: "{statement}"?'
            frame = q.replace(BLANK, " ")
        # The answer must not be readable elsewhere in the question (a date equal to the news date).
        if contains(normalize(frame), sp.text):
            return None
        return q


_GENERIC_START = re.compile(r"^[\"'\u201c\u2018]?(?:The|This|That|These|Those)\s+(?:[a-z][\w-]*)\b")
_PRONOUN = re.compile(r"\b(?:he|she|they|him|her|them)\b", re.IGNORECASE)


def _standalone(text: str, spans: list[Span]) -> bool:
    """Whether a sentence reads on its own: it does not open on a common noun that points back
    ("The company faces ...", "The largest, built by ...") and every he/she/they follows a name
    of the sentence ("... she told reporters" with no one named before it points back)."""
    if _GENERIC_START.match(text):
        return False
    m = _PRONOUN.search(text)
    return m is None or any(sp.kind in ("person", "org") and sp.end <= m.start() for sp in spans)


def _lower_first(text: str) -> str:
    t = text.strip()
    if len(t) > 1 and t[0].isupper() and t[1].islower() and t.split(None, 1)[0] in ("The", "A", "An"):
        return t[0].lower() + t[1:]
    return t
