"""``extractive-v2``: the offline question generator on a real NLP pipeline (spaCy).

Deterministic, no network, no LLM. For each day it

1. writes apart the words extraction glued together (``itscomplaint`` -> ``its complaint``,
   :func:`okgen.generate.sentences.unglue`), then parses every article of the day with the
   spaCy pipeline (sentences, named entities, the dependency parse) and the earlier pool days'
   articles with NER only (distractors, novelty);
2. keeps sentences that read as news statements (:mod:`okgen.generate.sentences`: no
   boilerplate, no run-together words, no shouting, no menus);
3. takes typed entities as answers (people by their full name as the article gives it,
   organisations, countries and cities, events, sums of money, percentages, dates, counts)
   and builds real questions from the parse (:mod:`okgen.generate.stems`) that name the other
   actors and the date, cut down to the clause's core so they do not copy the sentence;
4. ranks them (question form, answer kind, position in the article, new entities first),
   keeps at most one question per sentence and answer, and draws three distractors of the
   same entity type and granularity from the day's other stories (people, organisations,
   places as the articles wrote them) or perturbs numbers and dates in the answer's format
   (:mod:`okgen.generate.distractors`).

What an editor would not publish is refused before a question is written
(:mod:`okgen.generate.precision`: vague stems, unexplained names, background facts, the outlet
itself, one answer of a list), and distractors are ranked by how the news uses each name (the
words around its mentions), so a coach gets coaches. Every (sentence, answer) pair that became
no question is counted by reason in the funnel (``extractive_reasons``).

The generator id names the rules and the NLP model that made a snapshot
(``extractive-v2.1a2b3c4d+en_core_web_sm-3.8.0``): after the version, the first 8 hex digits of the
SHA-256 of the rule modules' source (:data:`RULE_MODULES`), so any change to what the rules make
gives another id (a series of snapshots made by two rule sets says so), then the pipeline's name
and version. Its questions then go through the same checks and
quality gates as an LLM's.
"""

from __future__ import annotations

import datetime as dt
import functools
import random
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from okgen.generate import distractors as dis
from okgen.generate import lexicon as lx
from okgen.generate import precision as pr
from okgen.generate.agents import AgentSpec
from okgen.generate.nlp import NER_ONLY, load_pipeline, option_label, pipeline_id
from okgen.generate.overlap import MAX_SHARED_RUN, NAME_LABELS, ArticleTokens, longest_shared_run
from okgen.generate.records import Candidate
from okgen.generate.sentences import (
    camel_names,
    in_gazetteer,
    run_together,
    strip_datelines,
    teaser_tail,
    unglue,
    usable_sentence,
    well_formed_name,
    zipf,
)
from okgen.generate.stems import Stem, answer_kind, make_stem
from okgen.generate.text import contains, format_date, normalize
from okgen.hashing import sha256_text
from okgen.schema import AgentInfo, Article, Decoding

NAME = "extractive"
VERSION = "extractive-v2"
# The modules whose source decides what the generator makes: their hash is part of its id.
RULE_MODULES = ("extractive", "distractors", "lexicon", "nlp", "overlap", "precision", "sentences", "spans",
                "stems", "text")


@functools.cache
def rules_hash(root: Path = Path(__file__).parent) -> str:
    """The first 8 hex digits of the SHA-256 of the rule modules' source in ``root`` (any line ends)."""
    sources = ("\n".join((root / f"{m}.py").read_text("utf-8").splitlines()) for m in RULE_MODULES)
    return sha256_text("\0".join(f"{m}\0{src}" for m, src in zip(RULE_MODULES, sources)))[:8]


# Entity labels whose mentions feed the distractor pool, by the pool kind they fill.
POOL_LABELS = {"PERSON": "person", "ORG": "org", "GPE": "place", "LOC": "region", "EVENT": "event"}
# How much each question form is preferred (object and place questions paraphrase the most).
FORM_WEIGHT = {"object": 0.5, "place": 0.5, "count": 0.5, "amount": 0.5, "date": 0.3, "agent": 0.3,
               "subject": 0.2}


@dataclass
class _Item:
    stem: Stem
    sentence_index: int
    sentence: str
    score: float
    words: Counter[str] = field(default_factory=Counter)
    """The evidence sentence's context words, the answer's left out (its topic, for distractors)."""
    role: Counter[str] = field(default_factory=Counter)
    """The answer's role in the evidence sentence (:func:`_role_features`), for distractors."""
    topic: frozenset[str] = frozenset()
    """The nouns of the stem that the day's headlines are about ("tariff", in 3 or more of them):
    a figure's topic, one figure a day per topic (:data:`FIGURE_KINDS`)."""


@dataclass
class ExtractivePool:
    """What the generator knows about the day: same-kind names for distractors, the answers
    already seen on earlier days (novelty), and each of the day's articles' ranked questions."""

    names: dis.Pool = field(default_factory=dis.Pool)
    seen_before: set[str] = field(default_factory=set)
    items: dict[str, list[_Item]] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    by_source: dict[str, set[str]] = field(default_factory=dict)
    reasons: Counter[str] = field(default_factory=Counter)
    """Why each (sentence, answer) pair the parse offered became no question, and how many did."""
    near: dict[str, list[str]] = field(default_factory=dict)
    """Each article's nearest stories of the day (BM25 over the texts), closest first."""
    articles: dict[str, Article] = field(default_factory=dict)
    """The day's articles by id."""
    figures: dict[tuple[str, str], tuple[str, int, str]] = field(default_factory=dict)
    """For each figure kind and headline noun, the day's best-ranked figure item: (article id,
    sentence index, answer). An item is asked only where it is the best of every topic it has."""
    questions: dict[tuple[int, int], dict[str, tuple[list[Candidate], Counter[str]]]] = field(default_factory=dict)
    """For ``n`` questions per article and a seed, each article's questions and drop reasons,
    drawn for the whole day at once (:meth:`ExtractiveGenerator.day_questions`)."""


class ExtractiveGenerator:
    """The offline generator.

    Args:
        spec: the ``extractive`` agent spec (``agents/generator/extractive.toml``).
        seed: the snapshot seed (distractor sampling).
        pipeline: spaCy pipeline name (default: the spec's ``[nlp] pipeline``, else ``en_core_web_sm``).
    """

    def __init__(self, spec: AgentSpec, seed: int, pipeline: str | None = None):
        self.spec = spec
        self.seed = seed
        nlp_cfg = spec.section("nlp")
        self.pipeline_name = pipeline or nlp_cfg.get("pipeline") or None
        self.max_chars = int(nlp_cfg.get("max_chars", 6000))
        self.pool_chars = int(nlp_cfg.get("pool_chars", 3000))
        s = spec.section("sentences")
        self.max_index = int(s.get("max_index", 40))
        a = spec.section("answers")
        self.weights = {k: float(v) for k, v in a.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
        self.max_per_kind = int(a.get("max_per_kind", 2))
        self.novelty_bonus = float(a.get("novelty_bonus", 0.3))
        self.position_penalty = float(a.get("position_penalty", 0.02))
        self.nlp = load_pipeline(self.pipeline_name)
        self._labels: dict[str, str] = {}

    @property
    def info(self) -> AgentInfo:
        """Identity for the signature: ``extractive-v2.<rules hash>+<pipeline>-<version>`` and the spec hash."""
        return AgentInfo(model=f"{VERSION}.{rules_hash()}+{pipeline_id(self.nlp)}", spec_hash=self.spec.spec_hash,
                         decoding=Decoding(seed=self.seed))

    # -- pool ------------------------------------------------------------------------------
    def build_pool(self, articles: Sequence[Article], date: dt.date, progress: bool = False) -> ExtractivePool:
        """Parse the day's articles (full pipeline) and earlier days' ones (NER only, novelty);
        ``progress``: show it (:func:`okgen.progress.bar`)."""
        pool = ExtractivePool()
        today = sorted((a for a in articles if a.date == date), key=lambda x: x.id)
        earlier = sorted((a for a in articles if a.date != date), key=lambda x: x.id)
        from okgen.progress import bar

        # Most of an offline day's time goes here: its progress is shown (a bar, or log lines).
        with bar(total=len(today) + len(earlier), desc=f"parse {date} and earlier days", unit="article",
                 disable=not progress) as pb:
            docs = {}
            for a, doc in zip(today, self.nlp.pipe((_body(a)[:self.max_chars] for a in today), batch_size=32)):
                docs[a.id] = doc
                pb.update(1)
            disabled = [p for p in self.nlp.pipe_names if p not in ("tok2vec", "ner")]
            for doc in self.nlp.pipe((_body(a)[:self.pool_chars] for a in earlier), batch_size=64, disable=disabled):
                pool.seen_before.update(normalize(ent.text) for ent in doc.ents)
                pb.update(1)
        labels: dict[str, Counter[str]] = defaultdict(Counter)
        surnames: set[str] = set()
        mentions: list[tuple[str, str, str]] = []  # (label, text, article id) in usable sentences
        contexts: dict[str, Counter[str]] = defaultdict(Counter)  # name -> words around its mentions
        roles: dict[str, Counter[str]] = defaultdict(Counter)  # name -> its roles in the sentences
        suffixes: dict[str, Counter[str]] = defaultdict(Counter)  # name -> the "Jr." written after it
        topics: dict[str, Counter[str]] = defaultdict(Counter)  # name -> sentences naming it with each word
        spread: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))  # name -> word -> articles
        people: dict[str, str] = {}  # every person's name as tagged ("Robert F. Kennedy Jr." at times)
        for a_id, doc in docs.items():
            for ent in doc.ents:
                labels[normalize(ent.text)][ent.label_] += 1
                person = ent.text.removesuffix("'s").removesuffix("\u2019s")
                if ent.label_ == "PERSON" and len(person.split()) >= 2 and well_formed_name(person, "PERSON"):
                    # Not "Kadrey v. Meta" (a court case tagged as a person): Meta stays a company.
                    surnames.add(normalize(person.split()[-1]))
            for sent in doc.sents:
                if usable_sentence(sent):
                    mentions.extend((e.label_, e.text, a_id) for e in sent.ents if e.label_ in POOL_LABELS)
                words = {t.lemma_.lower() for t in sent if t.is_alpha and not t.is_stop
                         and t.pos_ in ("NOUN", "VERB", "ADJ", "PROPN")}
                for e in sent.ents:
                    if e.label_ in POOL_LABELS:
                        key = normalize(e.text)
                        contexts[key].update(_context_words(sent, e))
                        roles[key].update(_role_features(sent, e))
                        roles[key]["#mentions"] += 1
                        topics[key].update(words)
                        for w in words:
                            spread[key][w].add(a_id)
                        if e.label_ == "PERSON":
                            suffixes[key][_name_suffix(doc, e)] += 1
                            people[key] = e.text
        # The day's consensus label of each name: a name tagged PERSON here and ORG there is
        # trusted as neither; a person's surname is never an organisation or a place.
        majority = {k: c.most_common(1)[0][0] for k, c in labels.items()
                    if c.most_common(1)[0][1] >= 0.75 * sum(c.values())}
        for k in surnames:
            if majority.get(k) != "PERSON":
                majority[k] = "PERSON?"
        cased = Counter(t.text for doc in docs.values() for t in doc if t.is_alpha)
        named_in: dict[tuple[str, str], set[str]] = defaultdict(set)
        for label, text, a_id in mentions:
            named_in[(label, normalize(text))].add(a_id)
        full_people = {normalize(e.text).strip() for doc in docs.values() for e in doc.ents
                       if e.label_ == "PERSON" and len(e.text.split()) >= 2}
        full_orgs = {k.strip() for k, v in majority.items() if v == "ORG" and len(k.split()) >= 2}
        for label, text, a_id in mentions:
            key = normalize(text)
            if majority.get(key) != label or not well_formed_name(text, label) \
                    or label == "PERSON" and glued_surname(text, full_people) \
                    or _swallows(key, full_orgs if label == "PERSON" else full_people if label == "ORG" else set()):
                continue
            one_word = len(text.split()) == 1
            if len(named_in[(label, key)]) < 2 and not (label == "PERSON" and not one_word):
                continue  # a one-word name only one article uses: too often a tagging error
            if label == "ORG" and one_word and (in_gazetteer(text) or (
                    not text.isupper() and zipf(text.lower()) >= 4.5 and len(named_in[(label, key)]) < 3)
                    or common_word(text, cased)):
                continue  # "Cameroon", "Media": a place or a common word the tagger took for a name
            if label == "ORG" and (not pr.trusted_org_answer(text, len(named_in[(label, key)])) or pr.media_name(text)):
                continue  # "WDP", "H20": what the tagger takes for organisations; outlets are not news
            if label == "PERSON":
                # "Robert F. Kennedy Jr.": the tagger often leaves the suffix out; the option is
                # the name as the news writes it, never the form that drops it.
                # Only when most mentions carry it: "Donald Trump" is not "Donald Trump Jr." for a
                # day that names the son a few times.
                written = Counter({s: c for s, c in suffixes[key].items() if s})
                for s in NAME_SUFFIXES:
                    if (full := normalize(f"{text} {s}")) in people:
                        written[people[full].split()[-1]] += sum(suffixes[full].values())
                if written and sum(written.values()) > suffixes[key][""]:
                    suffix = written.most_common(1)[0][0]
                    text = f"{text} {suffix}"
                    contexts.setdefault(normalize(text), contexts[key])
                    roles.setdefault(normalize(text), roles[key])
                    topics.setdefault(normalize(text), topics[key])
                    spread.setdefault(normalize(text), spread[key])
            pool.names.add(POOL_LABELS[label], text, a_id)
        pool.names.set_contexts(contexts)
        pool.names.articles = len(today)
        pool.names.set_roles(roles, topics)
        pool.names.spread = {k: Counter({w: len(ids) for w, ids in bag.items()}) for k, bag in spread.items()}
        self.majority = majority
        day = _DayNames(docs, today, articles)
        pool.near = _nearest(today)
        for a in today:
            pool.articles[a.id] = a
            pool.by_source.setdefault(a.source, set()).add(a.id)
            pool.items[a.id] = self._items(a, docs[a.id], majority, pool, day)
            if not pool.items[a.id]:
                pool.skipped[a.id] = _skip_reason(a, docs[a.id])
        return pool

    def _items(self, article: Article, doc: Any, majority: dict[str, str], pool: ExtractivePool,
               day: _DayNames) -> list[_Item]:
        ctx = _ArticleContext(article, doc, majority, day)
        items = []
        own = own_outlet_title(article)
        sents = list(doc.sents)
        teasers = teaser_tail(sents)
        for i, sent in enumerate(sents):
            if i >= self.max_index:
                break
            if i >= teasers:
                pool.reasons["sentence_related_links"] += 1  # the closing teasers of related stories
                continue
            if own:  # "Less than a month to get your table for TechCrunch Sessions": the outlet's own promotion
                pool.reasons["about_the_outlet"] += 1
                continue
            if not usable_sentence(sent):
                pool.reasons["sentence_unusable"] += 1
                continue
            if day.titles.other_in(sent.text, article):
                pool.reasons["sentence_related_links"] += 1  # "... Rovers boss taken to hospital ...": links
                continue
            if pr.background_sentence(sent.text, article.date) or pr.dated_by_period(sent):
                pool.reasons["sentence_background"] += 1
                continue
            if off_topic(sent, ctx.topic, ctx.title_keys):
                pool.reasons["sentence_off_topic"] += 1
                continue
            if aside(sent, ctx.title_keys, day.headlines):
                pool.reasons["sentence_aside"] += 1
                continue
            for ent in sent.ents:
                ent = whole_sum(ent)
                kind = answer_kind(ent)
                if kind is None:
                    continue
                weight = self.weight(kind, ent.text)
                if weight <= 0:
                    pool.reasons["answer_kind_off"] += 1  # "country = 0" in the spec's [answers]
                    continue
                reason, stem = _judge(ctx, sent, ent, kind)
                if stem is None:
                    pool.reasons[reason] += 1
                    continue
                pool.reasons["stem_made"] += 1
                score = (weight + FORM_WEIGHT.get(stem.form, 0.0)
                         - self.position_penalty * i
                         + (self.novelty_bonus if normalize(stem.answer) not in pool.seen_before else 0.0))
                stem_words = {w.lower() for w in re.findall(r"[A-Za-z]+", stem.question)}
                topic = frozenset(t.lemma_.lower() for t in sent if t.pos_ == "NOUN"
                                  and (t.lower_ in stem_words or t.lemma_.lower() in stem_words)
                                  and t.lemma_.lower() not in dis.GENERIC_NOUNS | TOPIC_GENERIC
                                  and day.headlines[t.lemma_.lower()] >= NEWS_HEADLINES)
                items.append(_Item(stem, i, sent.text.strip(), score, Counter(_context_words(sent, ent)),
                                   Counter(_role_features(sent, ent)), topic))
        items.sort(key=lambda it: (-it.score, it.sentence_index, it.stem.question))
        return items

    def weight(self, kind: str, answer: str) -> float:
        """How much an answer is preferred (``[answers]``; 0 or less: not asked): by its kind, a
        country by ``country`` (else as ``place``)."""
        key = weight_key(kind, answer)
        if key == "country" and key not in self.weights:
            key = "place"
        return self.weights.get(key, 0.5)

    def option_label(self, text: str) -> str:
        """The entity label spaCy gives the option ``text`` parsed alone (cached): a distractor must
        get the answer's. Stricter than the label the snapshot's quality evidence measures with
        (:func:`~okgen.generate.nlp.option_labels`, a name in a sentence), on purpose: with that
        label two more company questions of news-dev 2025-04-11 found options, and an
        independent review kept neither (a vacuum cleaner's maker against OnePlus, WhatsApp and
        Garmin)."""
        label = self._labels.get(text)
        if label is None:
            label = self._labels[text] = option_label(self.nlp(text, disable=[p for p in NER_ONLY
                                                                              if p in self.nlp.pipe_names]))
        return label

    # -- generation ------------------------------------------------------------------------
    def generate(self, article: Article, n: int, pool: ExtractivePool) -> list[Candidate]:
        """Up to ``n`` candidates about ``article`` (fewer when it offers fewer good facts)."""
        if article.id not in pool.items:
            pool = self.build_pool([article], article.date)
        cands, reasons = self.day_questions(pool, n)[article.id]
        pool.reasons.update(reasons)
        return [c.model_copy(deep=True) for c in cands]

    def day_questions(self, pool: ExtractivePool, n: int) -> dict[str, tuple[list[Candidate], Counter[str]]]:
        """Each of the day's articles' questions and the funnel reasons of its drops, drawn in
        article-id order so that no option is the answer of another question of the day, and no
        name an option of two (two questions offering the same three names give each other away:
        each one's answer is the name the other does not offer). The day's answers are found as a
        fixed point: drawn without that rule, then again with the answers found kept out of the
        options, until no new answer comes (an article whose question then lacks options may ask
        its next one); a name some pass drew as an answer stays out even if no final question
        asks it. Names only (numbers and dates are drawn around each answer). One figure a day per
        topic (:func:`_best_figures`): where the chosen one gives no question, the next-ranked is
        chosen in the next pass. Computed once per pool, ``n`` and seed."""
        got = pool.questions.get((n, self.seed))
        if got is None:
            answers: dict[str, str] = {}  # names any pass drew as an answer (a superset of the day's) -> kind
            passed_over: set[tuple[str, int, str]] = set()  # figures chosen for a topic that gave no question
            while True:
                pool.figures = _best_figures(pool, passed_over)
                asked: set[tuple[str, int, str]] = set()
                offered: dict[str, str] = {}  # names already an option of a question of this pass -> kind
                got = {}
                for a_id in sorted(pool.items):
                    reasons: Counter[str] = Counter()
                    cands = self._questions(pool.articles[a_id], n, pool, {**answers, **offered}, reasons, asked)
                    offered.update((x, c.answer_type) for c in cands if c.answer_type in dis.POOL_KINDS
                                   for x in c.choices if x != c.answer)
                    got[a_id] = (cands, reasons)
                new = {c.answer: c.answer_type for cands, _ in got.values() for c in cands
                       if c.answer_type in dis.POOL_KINDS and c.answer not in answers}
                unasked = set(pool.figures.values()) - asked - passed_over
                if not new and not unasked:
                    break
                answers.update(new)
                passed_over |= unasked  # its topic goes to the next-ranked figure
            pool.questions[(n, self.seed)] = got
        return got

    def _questions(self, article: Article, n: int, pool: ExtractivePool, avoid: dict[str, str],
                   reasons: Counter[str], asked: set[tuple[str, int, str]] | None = None) -> list[Candidate]:
        rng = random.Random(int(sha256_text(f"{self.seed}:{article.id}")[:16], 16))
        article_norm = normalize(f"{article.title}\n{article.text}")
        date_s = format_date(article.date)
        out: list[Candidate] = []
        used_sentences: set[int] = set()
        used_answers: set[str] = set()
        per_kind: Counter[str] = Counter()
        for item in pool.items[article.id]:
            if len(out) >= n:
                break
            st = item.stem
            key = normalize(st.answer)
            if item.sentence_index in used_sentences or key in used_answers or per_kind[st.kind] >= self.max_per_kind:
                continue
            kind = st.kind
            if kind == "place" and _leader_of(st.answer, st.question, pool.names) is not None:
                reasons["answer_country_in_stem"] += 1  # "for talks with Vladimir Putin": Russia
                continue
            if kind in FIGURE_KINDS and any(pool.figures.get((kind, noun)) != (article.id, item.sentence_index, st.answer)
                                            for noun in item.topic):
                reasons["figure_same_topic"] += 1  # a second tariff rate of the day: one reads as the other's
                continue
            want = self.option_label(st.answer)
            draw: dict[str, Any] = dict(
                pool=pool.names, article_id=article.id, article_norm=article_norm, question=st.question, rng=rng,
                year=article.date.year, prefer=pool.by_source.get(article.source), near=pool.near.get(article.id, ()),
                same_type=None if want == "none" else (lambda c, w=want: self.option_label(c) == w),
                day=article.date, evidence=item.words, role=item.role, avoid=avoid)
            ds = dis.pick(st.answer, kind, titles=(titles := _titles(st, item.role)), why=(why := []), **draw)
            if ds is None and not titles and (usual := _day_title(st, pool.names)):
                # No options by the words around the names: a senator the sentence does not title
                # ("Who did JD Vance needle ...?") still gets other senators, as the day writes them.
                ds = dis.pick(st.answer, kind, titles=usual, why=[], **draw)
            if ds is None:
                reasons[why[0] if why else "no_distractors"] += 1
                continue
            used_sentences.add(item.sentence_index)
            used_answers.add(key)
            per_kind[kind] += 1
            if kind in dis.POOL_KINDS:
                avoid.update((x, kind) for x in ds)  # the article's next question offers other names
            if asked is not None and kind in FIGURE_KINDS:
                asked.add((article.id, item.sentence_index, st.answer))
            out.append(Candidate(
                article_id=article.id, index=len(out), question=st.question, choices=[st.answer, *ds],
                answer=st.answer, short_answer=st.answer, answer_type=kind,
                evidence=_as_written(item.sentence, article.text),
                rationale=f"{article.source_name or article.source} reported on {date_s}: {item.sentence}",
            ))
        return out


def _best_figures(pool: ExtractivePool, passed_over: set[tuple[str, int, str]]) -> dict[tuple[str, str], tuple[str, int, str]]:
    """For each figure kind and headline noun, the day's best-ranked figure item (score, then
    article id, sentence index, answer) as (article id, sentence index, answer), leaving out those
    ``passed_over`` (chosen before, and no question came of them: the article asked better ones,
    or the options failed): one figure a day per topic, the next-ranked where the best gives none."""
    best: dict[tuple[str, str], tuple[float, str, int, str]] = {}
    for a_id in sorted(pool.items):
        for item in pool.items[a_id]:
            if item.stem.kind in FIGURE_KINDS and (a_id, item.sentence_index, item.stem.answer) not in passed_over:
                rank = (-item.score, a_id, item.sentence_index, item.stem.answer)
                for noun in item.topic:
                    key = (item.stem.kind, noun)
                    best[key] = min(best.get(key, rank), rank)
    return {key: rank[1:] for key, rank in best.items()}


def _leader_of(answer: str, question: str, names: dis.Pool) -> str | None:
    """A person the stem names whose title the day's news gives with the answer's country
    ("talks with Vladimir Putin", the Russian president, for Russia), or None."""
    country = pr.country_of(answer)
    if country is None:
        return None
    q_norm = normalize(question)
    for key, (text, _) in names.names.get("person", {}).items():
        if contains(q_norm, text) and dis.title_country(names.roles.get(key, {})) == country:
            return text
    return None


@dataclass
class _ArticleContext:
    """What judging one article's answers needs: its names, its copy index, the day's names."""

    article: Article
    doc: Any
    majority: dict[str, str]
    day: _DayNames
    full_names: dict[str, str] = field(init=False)
    index: ArticleTokens = field(init=False)
    names: list[str] = field(init=False)
    date_s: str = field(init=False)
    topic: Counter[str] = field(init=False)
    """In how many of the article's sentences each topic word (noun or name lemma) occurs."""
    title_keys: set[str] = field(init=False)

    def __post_init__(self) -> None:
        self.full_names = _full_names(self.doc)
        self.index = ArticleTokens(f"{self.article.title}\n{self.article.text}")
        self.names = [e.text for e in self.doc.ents if e.label_ in NAME_LABELS]
        self.date_s = format_date(self.article.date)
        self.topic = Counter(k for sent in self.doc.sents for k in set(topic_keys(sent)))
        self.title_keys = title_keys(self.article.title or "")


def _judge(ctx: _ArticleContext, sent: Any, ent: Any, kind: str) -> tuple[str, Stem | None]:
    """The question about ``ent`` (an answer of ``kind``), or the reason there is none; each
    reason is counted in the funnel (``extractive_reasons``)."""
    a, day = ctx.article, ctx.day
    if kind in ("place", "region"):
        if not in_gazetteer(ent.text) and not (ent.text in lx.world_places()
                                               and ctx.majority.get(normalize(ent.text)) in ("GPE", "LOC")):
            # Places okgen is sure of: countries, cities, regions it knows, and GeoNames' cities and
            # US states where the day's articles agree it is a place ("Henderson" may be a surname).
            return "place_unknown", None
        if ent.root.dep_ in ("nsubj", "nsubjpass") and dis.place_scale(ent.text) != "country" \
                or dis.place_scale(ent.text) != "country" and pr.place_as_actor(ent) \
                or ent.text in ("US", "U.S.", "USA", "United States", "America"):
            return "place_metonymy", None  # "Which city advised ...": a capital standing for its government
    elif ent.label_ in POOL_LABELS and ctx.majority.get(normalize(ent.text)) != ent.label_:
        return "type_disputed", None  # a name the day's articles do not agree on the type of
    if ent.label_ in POOL_LABELS and not well_formed_name(ent.text, ent.label_) and not (
            ent.label_ == "PERSON" and len(ent) == 1 and ent.text in ctx.full_names):
        return "name_malformed", None  # a surname the article gives in full ("Waltz") is asked by the full name
    if kind in ("count", "money", "percent", "quantity") and pr.approximate_answer(ent):
        return "answer_approximate", None  # "well over $5 trillion": "$6 trillion" is right too
    if pr.several_answers(ent):
        return "answer_in_list", None  # one of a list: the others would be right too
    if pr.reported_claim(ent) is not None:
        return "claim_unattributed", None  # "she claimed Trump did not back ...": a claim, not a fact
    stem = make_stem(sent, ent, kind, ctx.date_s)
    if stem is None:
        return "no_question_form", None
    if kind in ("person", "org", "place") and stem.form == "subject" and pr.shared_stance(ent) is not None:
        return "stance_shared", None  # "Who called for an investigation into ...?": others did too
    if kind == "org" and stem.form == "subject" and pr.product_maker(ent):
        return "product_maker", None  # "Which organisation unveiled the Bespoke Jet AI Lite?": the brand says
    if kind == "person":
        full = ctx.full_names.get(ent.text)
        if full is None:
            return "person_not_in_full", None  # "Smith" alone: which Smith?
        stem = replace(stem, answer=full)
    if kind == "org" and (not pr.trusted_org_answer(ent.text, day.orgs.get(normalize(ent.text), 0))
                          or pr.media_name(ent.text, day.outlets)):
        return "org_untrusted", None  # a name the tagger may have invented, or the news outlet itself
    if kind == "date" and not pr.date_in_window(ent.text, a.date):
        return "date_background", None
    if kind == "date" and pr.indefinite_event(ent):
        return "stem_vague", None  # "On what date did Israel strike a car ...": which car?
    question = _people_in_full(stem.question, sent, ent, ctx.full_names)
    if question is None:
        return "person_not_in_full", None
    if _background_year(question, a.date.year):
        return "sentence_background", None
    if pr.vague(question):
        return "stem_vague", None
    if pr.speculative(question):
        return "stem_speculative", None  # "may", "might", "could": a guess, not the day's news
    if pr.undefined_description(sent, question, ent) is not None:
        return "stem_undefined", None  # "accused Mexico of ignoring the treaty": which treaty?
    if pr.unexplained_name(sent, question, ent, day.names) is not None:
        return "name_unexplained", None  # "Who will Essiedu portray?": a name the reader cannot place
    if any(pr.media_name(e.text, day.outlets) for e in sent.ents if e.text in question):
        return "about_the_outlet", None
    brands = camel_names(ctx.doc.text)  # "LiveKit", written so more than once: a name
    if any(run_together(w) and w.strip(".,;:?!\"'()") not in brands for w in question.split()) \
            or pr.broken_hyphen(question):
        return "stem_broken_word", None
    stem = replace(stem, question=question)
    if normalize(stem.answer) in normalize(stem.question) or pr.echoes_answer(question, stem.answer):
        return "answer_in_stem", None
    if pr.country_giveaway(question, stem.answer) is not None:
        return "answer_country_in_stem", None  # "Egyptian mediators" ... answer Egypt
    if pr.seat_giveaway(question, stem.answer, sent.text) is not None:
        return "answer_office_in_stem", None  # "met ... in the Oval Office" ... answer Donald Trump
    if longest_shared_run(stem.question, ctx.index, names=ctx.names) > MAX_SHARED_RUN:
        return "stem_copies", None  # the stem_overlap gate would drop it
    return "kept", stem


def weight_key(kind: str, answer: str) -> str:
    """The ``[answers]`` weight an answer is preferred by: its kind, ``country`` for a place (or a
    region: the tagger writes "Ivory Coast" LOC) that is a country."""
    return "country" if kind in ("place", "region") and dis.place_scale(answer) == "country" else kind


def own_outlet_title(article: Article) -> bool:
    """Whether an article's headline is the outlet's own promotion or programme: its events,
    newsletters and features ("... for TechCrunch Sessions: AI", "TechCrunch Mobility: ...",
    "Vanity Fair Oscar Party 2025", "the new Guardian Weekly podcast"), not news. The outlet
    named as a source, a witness or a pollster ("..., BBC told", "tells BBC News", "BBC visits
    Sumy", "Guardian Essential poll shows", "NPR CEO ... testifies") is news: the name must be
    followed by a title and a colon or a year, or have words that sell next to it."""
    names = {n.strip() for n in (article.source, article.source_name or "") if n and len(n.strip()) >= 2}
    title = article.title or ""
    for n in names:
        # "BBC", "GQ", "RT": a short name only as written in capitals; a longer one in any case.
        pat = re.compile(rf"\b{re.escape(n.upper())}\b") if len(n) <= 3 else re.compile(rf"\b{re.escape(n)}\b", re.I)
        for m in pat.finditer(title):
            before, after = title[:m.start()], title[m.end():]
            after = after[_EDITION.match(after).end():]  # "BBC News", "Guardian Australia": still the outlet
            if _TOLD.search(before) or _AS_SOURCE.match(after):
                continue
            if _OWN_TITLE.match(after):
                return True
            near = " ".join(before.split()[-6:] + [n] + after.split()[:6])
            if _PROMOTION.search(near):
                return True
    return False


_EDITION = re.compile(r"(?:\s+(?:News|Digital|Australia|US|UK|Arabic|Africa|World|Sport|Essential|Business|Verify))*")
_TOLD = re.compile(r"\b(?:told|tells?|telling|speaks?|spoke|spoken|speaking|talks?|talked|said)\s+(?:to\s+)?(?:the\s+)?$",
                   re.IGNORECASE)
_AS_SOURCE = re.compile(r"(?:['\u2019]s)?\s+(?:poll|polls|survey|learns|learned|understands|confirms|confirmed|analysis|"
                        r"investigation|reveals|revealed|finds|found|visits|visited|told|has seen|sees|saw|reporting|"
                        r"reporter|journalist|correspondent|CEO|chief|editor|presenter|host)\b", re.IGNORECASE)
# The outlet's own title before a colon or a year: "TechCrunch Sessions: AI", "Ars Technica Live:".
_OWN_TITLE = re.compile(r"(?:['\u2019]s)?(?:\s+(?:[A-Z][\w'\u2019-]*|of|the|and|for)){0,5}\s*(?::|\s(?:19|20)\d\d\b)")
# A headline selling something of the outlet's own.
_PROMOTION = re.compile(r"\b(?:tickets?|exhibit(?:or)?s?|stand at|register|registration|early[- ]bird|sign up|"
                        r"subscribe|subscription|discount|promo code|podcast|newsletter|webinar|livestream|quiz|"
                        r"crossword|puzzle|giveaway|awards|event|(?:days?|weeks?|months?) (?:left|to go)|last chance)\b",
                        re.IGNORECASE)


CURRENCY_SIGNS = frozenset("$£€¥₹")
MONEY_SUFFIXES = frozenset({"m", "bn", "b", "k", "tn", "trn", "mn"})


# Words an article puts before a number to comment on its size: not part of the number.
SIZE_WORDS = frozenset({"just", "only", "mere"})
# ... and words after "a" that say what kind of sum it is ("a record €21bn", "an additional $2 billion").
SUM_WORDS = frozenset({"record", "additional", "further", "extra", "fresh", "new"})


def whole_sum(ent: Any) -> Any:
    """A sum of money with the sign and unit the tagger left out of it ("$143.5bn", not "143.5bn";
    "€40m", not "40"), written together as the article wrote them; a number without the word that
    comments on its size ("just $3.9 billion": "$3.9 billion"); other entities as they are."""
    from spacy.tokens import Span

    doc, start, end = ent.doc, ent.start, ent.end
    while end - start > 1 and doc[start].lower_ in SIZE_WORDS and ent.label_ in ("MONEY", "PERCENT", "CARDINAL",
                                                                                 "QUANTITY"):
        start += 1  # the article's comment is no part of the answer, nor of each option
    if ent.label_ != "MONEY":
        return ent if start == ent.start else Span(doc, start, end, label=ent.label_)
    k = start
    while k < end - 1 and (doc[k].lower_ in ("a", "an") or k > start and doc[k].lower_ in SUM_WORDS):
        k += 1
    if k > start and (doc[k].text in CURRENCY_SIGNS or doc[k].text[:1].isdigit()):
        start = k  # "a record €21bn", "an additional $2 billion": the sum is "€21bn", "$2 billion"
    if start > 0 and doc[start - 1].text in CURRENCY_SIGNS and not doc[start - 1].whitespace_:
        start -= 1
    if end < len(doc) and doc[end].lower_ in MONEY_SUFFIXES and not doc[end - 1].whitespace_:
        end += 1
    if (start, end) == (ent.start, ent.end):
        return ent
    return Span(doc, start, end, label=ent.label_)


def topic_keys(sent: Any) -> list[str]:
    """The words that say what a sentence is about: its nouns' and names' lemmas."""
    return [t.lemma_.lower() for t in sent if t.pos_ in ("NOUN", "PROPN") and t.is_alpha and len(t) > 2
            and not t.is_stop]


def title_keys(title: str) -> set[str]:
    """A title's words, lower case, each also without a plural "s" ("Floods" is "flood", as the
    sentences' lemmas are)."""
    words = {w.lower() for w in re.findall(r"[A-Za-z]{3,}", title)}
    return words | {w[:-1] for w in words if w.endswith("s") and len(w) > 3}


def off_topic(sent: Any, topic: Counter[str], title_keys: set[str]) -> bool:
    """Whether a sentence belongs to another story than its article's: page furniture such as
    a related feature's teaser inside a story ("the magician who inspired Houdini" in a pop
    star's story). Of its three or more nouns and names, none occurs in the title or in another
    sentence of the article."""
    keys = set(topic_keys(sent))
    if len(keys) < 3:
        return False
    return not any(topic[k] > 1 or k in title_keys for k in keys)


# Figures asked once a day per topic: six tariff rates in a day's quiz read as one question with
# several answers, and contradict each other as the rates change (two reviewers).
FIGURE_KINDS = frozenset({"percent", "money", "count", "quantity"})
# Nouns too general to be a topic ("How many people ...", "the price of ...").
TOPIC_GENERIC = frozenset({"price", "percent", "percentage", "share", "rate", "total", "cost", "amount", "level",
                           "figure", "record", "hour", "minute", "person", "job", "worker"})
NEWS_HEADLINES = 3  # a word in at least this many of the day's headlines is the day's news ...
NEWS_WORDS = 2  # ... and a sentence with this many such words reports it, whatever its story


def aside(sent: Any, title_keys: set[str], headlines: Counter[str] | None = None) -> bool:
    """Whether a sentence is an aside of its story: none of its nouns and names is in the
    headline (a local-election date in a story on police raids, a party's budget figure in a
    governor's story), nor does it report the day's news of other stories (two of its words in
    at least three of the day's headlines: China's tariffs inside a story on TikTok). The
    headline says what the day's news of the article is; reviewers judged questions on such
    asides background, not the day's news."""
    keys = set(topic_keys(sent))
    if not title_keys or keys & title_keys:
        return False
    return sum(headlines[k] >= NEWS_HEADLINES for k in keys) < NEWS_WORDS if headlines else True


def glued_surname(name: str, people: set[str]) -> bool:
    """Whether a name is a person the day names (``people``: lower-case full names) with a word
    glued on by extraction ("Volodymyr Zelenskyyhopes" beside "Volodymyr Zelenskyy"): no option,
    though each part looks fine. "Sheldon Whitehouse" is judged only on a day that names a
    "Sheldon White"."""
    words = name.lower().split()
    first, last = " ".join(words[:-1]), words[-1]
    return len(words) >= 2 and any(f"{first} {last[:k]}" in people and zipf(last[k:]) >= 2.5
                                   for k in range(3, len(last) - 3))


def common_word(name: str, cased: Counter[str]) -> bool:
    """Whether a one-word name is a common word the day's articles mostly write in lower case
    ("media", "house"): the tagger's capitalised mentions are not a name to offer as an option.
    ``cased`` counts the day's words as written."""
    low = cased.get(name.lower(), 0)
    return not name.isupper() and low >= 3 and low >= cased.get(name, 0) / 2


def _as_written(sentence: str, text: str) -> str:
    """``sentence`` of the unglued text as the article wrote it (glued words and all), so the
    evidence is a quote of the article."""
    if sentence in text:
        return sentence
    pattern = r"\s*".join(re.escape(w) for w in sentence.split())
    m = re.search(pattern, text)
    return m.group(0) if m else sentence


def _body(article: Article) -> str:
    """The article text to parse (the title again at its start and the datelines that open
    paragraphs left out)."""
    text = article.text
    title = (article.title or "").strip()
    if title and text.startswith(title):
        text = text[len(title):].lstrip(" .:\n")
    return unglue(strip_datelines(text))


def _full_names(doc: Any) -> dict[str, str]:
    """Each person mention -> the article's full form of that name ("Rose" -> "Justin Rose"),
    only where the full form is unique in the article."""
    full: dict[str, set[str]] = defaultdict(set)
    persons = [e for e in doc.ents if e.label_ == "PERSON"]
    for e in persons:
        words = e.text.split()
        if len(words) >= 2 and well_formed_name(e.text, "PERSON"):
            full[e.text].add(e.text)
            full[words[-1]].add(e.text)
    return {k: next(iter(v)) for k, v in full.items() if len(v) == 1}


def _people_in_full(question: str, sent: Any, answer: Any, full_names: dict[str, str]) -> str | None:
    """The question with every other person it names in full ("Rose" -> "Justin Rose"), or
    None when one is named by a single word the article never gives in full."""
    single = {e.text for e in sent.ents if e.label_ == "PERSON" and e.start != answer.start and len(e.text.split()) == 1}
    # Surnames the tagger missed ("Rose thanked ..."), known from the article's full names.
    single |= {t.text for t in sent if t.tag_ == "NNP" and not t.ent_type_ and full_names.get(t.text, t.text) != t.text}
    for name in sorted(single):
        # "the Biden administration" says which one as it is ("the Joe Biden administration" does not read).
        if not re.search(rf"\b{re.escape(name)}\b(?!['\u2019]?s?\s+{_OFFICE_TERMS})", question):
            continue
        full = full_names.get(name)
        if full is None:
            return None
        if full not in question:
            question = re.sub(rf"\b{re.escape(name)}\b", full, question, count=1)
    return question


_OFFICE_TERMS = r"(?:administration|government|presidency|era|campaign|cabinet)\b"


def _background_year(question: str, year: int) -> bool:
    """Whether the question is about another year than the news (background, not the day's news)."""
    return any(int(y) != year for y in re.findall(r"\b((?:19|20)\d\d)\b", question))


def _context_words(sent: Any, ent: Any) -> list[str]:
    """The content words of a sentence around a name (its role in the news: "tariff", "coach",
    "striker", "minister"), the name itself left out."""
    words = [t.lemma_.lower() for t in sent if (t.i < ent.start or t.i >= ent.end) and not t.is_stop
             and t.pos_ in ("NOUN", "VERB", "ADJ", "PROPN") and t.is_alpha and len(t) > 2]
    # The words right beside the name say most about its role ("actor Jon Hamm", "Hamm played"):
    # counted three times more.
    near = [t.lemma_.lower() for t in sent.doc[max(ent.start - 4, sent.start):min(ent.end + 4, sent.end)]
            if (t.i < ent.start or t.i >= ent.end) and not t.is_stop and t.is_alpha and len(t) > 2
            and t.pos_ in ("NOUN", "VERB", "ADJ", "PROPN")]
    return words + near * 2


# Words that end a person's name after the tagger's span ("Robert F. Kennedy Jr.").
NAME_SUFFIXES = frozenset({"Jr.", "Jr", "Sr.", "Sr", "II", "III", "IV"})
# Words before a name that say it no longer holds the role ("former President Joe Biden").
PAST_WORDS = frozenset({"former", "ex", "late", "then", "previous", "predecessor"})
# The titles of a head of state or government, written right before the name.
HEAD_TITLES = frozenset({"president", "premier", "chancellor"})


def _head_titles(sent: Any, ent: Any) -> list[str]:
    """``dis.HEAD`` for a name written right after a head's title ("President Donald Trump",
    "Prime Minister X"), and ``dis.FORMER_HEAD`` too when "former" or "ex" leads the title, up to
    three capitalised country words between ("former US President Barack Obama", "Former South
    Korean President"); not "then-President" nor "Former Premier League striker"."""
    j = ent.start - 1
    if j < sent.start:
        return []
    title = sent.doc[j].lower_
    if not (title in HEAD_TITLES or title == "minister" and j - 1 >= sent.start and sent.doc[j - 1].lower_ == "prime"):
        return []
    k = j - (2 if title == "minister" else 1)
    for _ in range(3):  # country words: "former US President", "Former South Korean President"
        if k >= sent.start and sent.doc[k].lower_ not in ("former", "ex") and sent.doc[k].pos_ in ("PROPN", "ADJ") \
                and sent.doc[k].text[:1].isupper():
            k -= 1
    if k >= sent.start and sent.doc[k].lower_ == "-":
        k -= 1  # "ex-President"
    former = k >= sent.start and sent.doc[k].lower_ in ("former", "ex")
    return [dis.HEAD, dis.FORMER_HEAD] if former else [dis.HEAD]


def _name_suffix(doc: Any, ent: Any) -> str:
    """The suffix written right after a person's name ("Jr."), else ""."""
    i = ent.end
    if i < len(doc) and doc[i].text == "," and i + 1 < len(doc) and doc[i + 1].text in NAME_SUFFIXES:
        i += 1
    return doc[i].text if i < len(doc) and doc[i].text in NAME_SUFFIXES else ""


def _role_features(sent: Any, ent: Any) -> list[str]:
    """What a name does in a sentence, as features: ``s:VERB`` (the subject of "launch"),
    ``s~WORD`` (the nouns and places that verb governs: "drone", "tariff", "gaza"; no times),
    ``o:VERB`` (its object) with ``o~WORD`` (the nouns and places that verb governs), and
    ``t:WORD`` for the title words written beside it ("President", "Defense Secretary",
    "coach"; ``t:former`` for one who no longer holds the role), with ``t:WORD+NOUN`` for a
    title word written before the role noun ("state Sen.": ``t:state+senator``)."""
    out: list[str] = []
    root = ent.root
    dep = root.dep_
    head = root.head
    if dep in ("nsubj", "nsubjpass", "csubj") or (dep == "pobj" and head.dep_ == "agent"):
        verb = head.head if dep == "pobj" else head
        if verb.lemma_ == "be":  # "Bauder is a media writer", "X is a state senator": a title
            for c in verb.children:
                if c.dep_ == "attr" and c.pos_ == "NOUN":
                    noun = c.lemma_.lower()
                    if noun in lx.ROLE_NOUNS:  # "a state senator", not "a Canadian citizen"
                        out.extend(_qualified(noun, [g.lemma_.lower() for g in c.children if g.dep_ == "compound"
                                                     and g.is_alpha and g.text.islower() and not g.ent_type_]))
                    else:
                        out.append(f"t:{noun}")
        if verb.pos_ in ("VERB", "AUX", "NOUN"):
            out.append(f"s:{verb.lemma_.lower()}")
            out.extend(f"s~{w}" for w in _governed(verb, ent))
    elif dep in ("dobj", "dative", "attr", "pobj"):
        verb = head.head if dep == "pobj" and head.dep_ == "prep" else head
        if verb.pos_ in ("VERB", "NOUN"):
            out.append(f"o:{verb.lemma_.lower()}")
            # What the verb is about, as for a subject ("raised tariffs on China": tariff).
            out.extend(f"o~{w}" for w in _governed(verb, ent))
            if verb.pos_ == "NOUN":  # "tariffs on China": the noun is what it is about
                out.append(f"o~{verb.lemma_.lower()}")
    # Title words: the untagged nouns, adjectives and nationality words just before the name
    # ("Defense Secretary", "former President"), and an apposition after it ("..., the coach").
    # A qualifier is also recorded with the role noun after it ("t:state+senator"), so "a former
    # state senator" who is now a representative is no "state representative".
    of_office, i = _of_title(sent, ent)
    out.extend(of_office)
    noun, lowest = None, max(sent.start, i - 3)  # up to four words before the name (or its "ROLE of" title)
    while i >= lowest:
        t = sent.doc[i]
        if t.text == "-":  # "ex-President"
            i -= 1
            continue
        if t.ent_type_ in ("PERSON", "ORG", "DATE", "CARDINAL") or (
                t.pos_ not in ("NOUN", "PROPN", "ADJ") and t.lower_ not in PAST_WORDS):
            if t.ent_type_ == "ORG" and t.is_title and t.lower_ in lx.ONE_HOLDER:
                out.append(f"t:{t.lower_}")  # "US Trade Representative", "Trade" tagged an organisation
                if noun is not None:
                    out.append(f"t:{t.lower_}+{noun}")
            break
        word = lx.ABBREVIATED.get(t.lower_) or (  # "Sen.", "Rep": written out
            ("former" if t.lower_ in PAST_WORDS else t.lemma_.lower()) if t.is_alpha else None)
        if word is not None:
            out.append(f"t:{word}")
            if word in lx.ROLE_NOUNS:
                noun = word
            elif noun is not None and word != "former":
                out.append(f"t:{word}+{noun}")
        i -= 1
    out.extend(_head_titles(sent, ent))
    for child in root.children:
        if child.dep_ == "appos" and child.pos_ == "NOUN":
            words = [g.lemma_.lower() for g in child.children if g.dep_ in ("compound", "amod") and g.is_alpha]
            out.extend(_qualified(child.lemma_.lower(), words) if child.lemma_.lower() in lx.ROLE_NOUNS
                       else [f"t:{w}" for w in [child.lemma_.lower(), *words]])
    return out


# Role nouns written before "of" and the office's name in a title ("Secretary of State Marco Rubio",
# "Director of Rivertown Intelligence Ada Lind").
OF_ROLES = frozenset({"secretary", "minister", "director", "administrator", "commissioner", "governor",
                      "chancellor", "chair", "chairman", "chairwoman", "chief"})


def _of_title(sent: Any, ent: Any) -> tuple[list[str], int]:
    """Title features of "ROLE of [the] OFFICE" right before a name ("Secretary of State Ada
    Lind": ``t:secretary``, ``t:state``, ``t:state+secretary``; "Secretary of the Treasury"), the
    office's capitalised words (up to three) as the role's qualifiers, and the index of the token
    before the role, where the title words before it ("former", "Deputy") are read on; ``([],
    ent.start - 1)`` when the name has no such title."""
    words, i = [], ent.start - 1
    while i >= sent.start and len(words) < 3 and sent.doc[i].is_alpha and sent.doc[i].text[:1].isupper() \
            and sent.doc[i].lower_ not in ("of", "the"):
        words.append(sent.doc[i].lower_)
        i -= 1
    if words and i - 1 >= sent.start and sent.doc[i].lower_ == "the" and sent.doc[i - 1].lower_ == "of":
        i -= 1  # "Secretary of the Treasury"
    if not words or i - 1 < sent.start or sent.doc[i].lower_ != "of" or not sent.doc[i - 1].text[:1].isupper() \
            or sent.doc[i - 1].lower_ not in OF_ROLES:
        return [], ent.start - 1
    return _qualified(sent.doc[i - 1].lower_, words[::-1]), i - 2


def _qualified(noun: str, qualifiers: list[str]) -> list[str]:
    """Title features of a role noun and its qualifiers: each alone, and each with the noun."""
    return [f"t:{noun}", *(f"t:{w}" for w in qualifiers), *(f"t:{w}+{noun}" for w in qualifiers if w not in PAST_WORDS)]


def _titles(stem: Stem, role: Counter[str]) -> tuple[str, ...]:
    """The title words a person answer's options must be written with (the role noun last): those
    of the role a "Which ROLE ..." question names when its noun is a class title, else the class
    title the sentence gives the answer ("Judge", "Sen.", "Rep.", "attorney":
    :data:`~okgen.generate.lexicon.CLASS_TITLES`; of two of one class the particular one), unless
    its title words also name an office one person holds ("Attorney General", "Chief Judge",
    "Trade Representative"); none for other answers and roles (an envoy, an official: the news
    rarely titles enough people so)."""
    if stem.kind != "person":
        return ()
    words = {f[2:] for f in role if f.startswith("t:")}
    if stem.titles:
        return stem.titles if stem.titles[-1] in lx.CLASS_TITLES else ()
    nouns = words & lx.CLASS_TITLES
    specific = sorted(w for w in nouns if w not in lx.TITLE_HYPERNYMS)  # "senator" over "lawmaker"
    noun = specific[0] if specific else min(nouns, default=None)
    if noun is None or any(noun not in lx.same_title(w) for w in nouns) \
            or words & lx.office_words(noun):
        return ()  # two roles, or one office ("Chief Judge", "Attorney General", "District Attorney")
    return (noun,)


def _day_title(stem: Stem, names: dis.Pool) -> tuple[str, ...]:
    """The class title the day's news writes a person answer with (``("senator",)`` for "Sen. Ted
    Cruz"), for a "Who" question whose sentence gave it none (:func:`_titles`: no class title,
    two, or an office); () otherwise. The particular title
    ("senator") where the news writes it at least twice, else the general one ("lawmaker"),
    written at least twice and more often than any other role or office ("former Sen." and
    "Secretary" six times: a secretary; "Judge" and "Sen." alike: no title); not for one the news
    writes mostly as former, nor as one office ("Attorney General", "Chief Judge"; a committee's
    "Chairman" elsewhere leaves a senator one)."""
    key = normalize(stem.answer)
    if stem.kind != "person" or stem.titles or names.past.get(key, 0.0) >= dis.MAX_PAST or names.was_head(stem.answer):
        return ()
    written = names.titled.get(key, Counter())
    classes = {w: c for w, c in written.items() if w in lx.CLASS_TITLES}
    specific = {w: c for w, c in classes.items() if w not in lx.TITLE_HYPERNYMS and c >= 2}
    if not (choice := specific or classes):
        return ()
    noun = max(sorted(choice), key=choice.__getitem__)
    held = sum(written[w] for w in lx.same_title(noun))
    if held < 2 or held <= lx.other_roles(written, noun, offices=True) or lx.written_as_office(written, noun):
        return ()
    return (noun,)


def _governed(verb: Any, ent: Any) -> list[str]:
    """The nouns and places within three steps of ``verb`` outside ``ent`` ("launched 55 drones
    at Ukraine": drone, ukraine; "struck a car in Gaza": car, gaza), times left out."""
    return [c.lemma_.lower() for c in verb.subtree
            if c.is_alpha and not ent.start <= c.i < ent.end and verb in (c.head, c.head.head, c.head.head.head)
            and ((c.pos_ == "NOUN" and not c.ent_type_) or c.ent_type_ in ("GPE", "LOC", "NORP"))]


class _DayNames:
    """How widely the day's articles use each name: one-word proper nouns and organisations by
    the number of articles naming them, and the day's outlets."""

    def __init__(self, docs: dict[str, Any], articles: Sequence[Article], pooled: Sequence[Article] | None = None):
        self.names: Counter[str] = Counter()
        self.orgs: Counter[str] = Counter()
        for doc in docs.values():
            self.names.update({t.text for t in doc if t.pos_ == "PROPN"})
            self.orgs.update({normalize(e.text) for e in doc.ents if e.label_ == "ORG"})
        self.outlets = {x for a in articles for x in (a.source, a.source_name or "") if x}
        self.headlines: Counter[str] = Counter(k for a in articles for k in title_keys(a.title or ""))
        """In how many of the day's headlines each word occurs ("tariff": 40)."""
        self.titles = _Titles(pooled if pooled is not None else articles)
        """The headlines of every article of the pool (the day's and earlier days'), for links."""


class _Titles:
    """The headlines (of five words or more) of the articles a pool was built from, to find one
    inside another article's sentence: a block of links to related stories that extraction kept
    (a match report's "... keeper audition offers dilemma Rovers beat City to boost title hopes
    Rovers boss taken to hospital ..."), which asks about other stories, in their headlines' words.
    On four news-dev days all 126 sentences found so were blocks of the outlet's own links."""

    MIN_WORDS = 5

    def __init__(self, articles: Sequence[Article]):
        self.by_start: dict[tuple[str, tuple[str, ...]], list[tuple[str, ...]]] = defaultdict(list)
        for a in articles:
            words = tuple(normalize(a.title or "").split())
            if len(words) >= self.MIN_WORDS:
                self.by_start[(a.source, words[:3])].append(words)

    def other_in(self, text: str, article: Article) -> bool:
        """Whether ``text`` holds the headline of another article of ``article``'s outlet (one
        with another headline: a story syndicated under the same headline repeats it in its
        lede). Links point to the outlet's own stories; another outlet's headline quoted in a
        sentence ("Pope Francis dies aged 88, the Vatican said") or a stock one ("What we know so
        far") is not a link."""
        own = tuple(normalize(article.title or "").split())
        words = normalize(text).split()
        for i in range(len(words) - self.MIN_WORDS + 1):
            for title in self.by_start.get((article.source, tuple(words[i:i + 3])), ()):
                if title != own and tuple(words[i:i + len(title)]) == title:
                    return True
        return False


NEAREST = 15


def _swallows(key: str, names: set[str]) -> bool:
    """Whether the normalised name ``key`` ends with one of ``names`` (of another kind, two words
    at least) after more words than an article: "Rivertown Intelligence Ada Lind" tagged as an
    organisation, "Top White House" as a person. Such a name is the tagger's run-on, no option
    ("The Virgil Abloh Foundation" ends with no person's name)."""
    words = key.split()
    return any(" ".join(words[i:]) in names for i in range(1, len(words) - 1) if words[:i] != ["the"])


def _nearest(articles: Sequence[Article]) -> dict[str, list[str]]:
    """Each article's :data:`NEAREST` most similar stories of the day (BM25 of its headline and
    opening against the others' texts), closest first."""
    if len(articles) < 3:
        return {}
    import bm25s

    texts = [f"{a.title}\n{_body(a)[:1500]}" for a in articles]
    tokens = bm25s.tokenize(texts, stopwords="en", show_progress=False)
    index = bm25s.BM25()
    index.index(tokens, show_progress=False)
    queries = bm25s.tokenize([f"{a.title}\n{_body(a)[:600]}" for a in articles], stopwords="en",
                             show_progress=False, return_ids=False)
    k = min(NEAREST + 1, len(articles))
    found, _ = index.retrieve(queries, k=k, show_progress=False, n_threads=1)
    return {a.id: [articles[j].id for j in row if j != i][:NEAREST] for i, (a, row) in enumerate(zip(articles, found))}


def _skip_reason(article: Article, doc: Any) -> str:
    """Why an article gave no question: empty, not English, or no usable statement."""
    if not article.text.strip():
        return "empty"
    if article.language and not article.language.lower().startswith("en"):
        return "not_english"
    return "no_usable_statement"
