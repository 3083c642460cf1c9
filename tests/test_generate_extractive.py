"""The offline extractive generator on hand-written fixture articles and the synthetic corpus."""

from __future__ import annotations

import datetime as dt
import random

import pytest

from okgen.generate.agents import load_agent, packaged_agents_dir
from okgen.generate.checks import check_candidate
from okgen.generate.distractors import _dates, _numbers, _percents, place_scale
from okgen.generate.extractive import ExtractiveGenerator
from okgen.generate.spans import find_spans, kind_of_choice
from okgen.generate.text import (
    has_explicit_date,
    normalize,
    resolve_relative_dates,
    split_sentences,
)
from okgen.testing.corpus import make_articles
from okgen.testing.news import fixture_articles

DAY = dt.date(2026, 11, 21)


@pytest.fixture(scope="module")
def articles():
    return fixture_articles()


def generate(articles, seed=13, n=5, date=DAY):
    g = ExtractiveGenerator(load_agent("extractive", packaged_agents_dir()), seed)
    pool = g.build_pool(articles, date)
    return {a.id: g.generate(a, n, pool) for a in articles if a.date == date}


def span_kind(text: str, article_text: str) -> str | None:
    """The kind find_spans gives ``text`` in the article's sentences (None if never a span)."""
    for s, e in split_sentences(article_text):
        for sp in find_spans(article_text[s:e]):
            if sp.text == text:
                return sp.kind
    return None


def test_fixture_questions_meet_the_contract(articles):
    out = generate(articles)
    by_id = {a.id: a for a in articles}
    total = 0
    for aid, cands in out.items():
        a = by_id[aid]
        assert len(cands) >= 2, f"too few questions for {a.title}"
        for c in cands:
            total += 1
            assert c.answer in a.text  # verbatim
            assert c.evidence in a.text and c.answer in c.evidence
            assert len(c.choices) == 4 and len({normalize(x) for x in c.choices}) == 4
            assert all(x.strip() for x in c.choices) and c.choices.count(c.answer) == 1
            assert has_explicit_date(c.question) and "November 21, 2026" in c.question
            assert "____" in c.question or c.question.startswith(("Who ", "Which organisation ", "Which place "))
            for d in c.distractors():
                assert normalize(d) not in normalize(a.text)  # never a second right answer
                assert kind_of_choice(d) == kind_of_choice(c.answer)  # same form
            assert c.answer_type is not None
            check_candidate(c, normalize(f"{a.title}\n{a.text}"))
            assert c.kept, (c.question, c.rejected_by, [v for v in c.verdicts if not v.passed])
    assert total >= 20


def test_name_distractors_are_the_same_kind(articles):
    out = generate(articles)
    pool_text = "\n".join(a.text for a in articles)
    checked = 0
    for cands in out.values():
        for c in cands:
            if c.answer_type in ("person", "org", "place"):
                for d in c.distractors():
                    kind = span_kind(d, pool_text)
                    from okgen.generate.lexicon import PLACES

                    assert kind == c.answer_type or (c.answer_type == "place" and d in PLACES), (c.answer, d, kind)
                    if c.answer_type == "place":  # a city among cities, not among countries or continents
                        assert place_scale(d) == place_scale(c.answer), (c.answer, d)
                    checked += 1
    assert checked >= 20


def test_place_distractors_keep_the_scale():
    from okgen.generate.distractors import Pool, pick

    pool = Pool()
    for i, name in enumerate(["Poland", "Europe", "Boston", "Cebu", "Canada", "Asia", "Leeds", "Kenya", "Africa", "Lyon"]):
        pool.add("place", name, f"other{i}")
    for answer, scale in (("Manchester", "local"), ("Norway", "country"), ("South America", "continent")):
        got = pick(answer, "place", pool=pool, article_id="a", article_norm="", question="q", rng=random.Random(1),
                   year=2026)
        assert got and all(place_scale(d) == scale for d in got), (answer, got)


def test_same_input_same_questions(articles):
    a = generate(articles, seed=13)
    b = generate(list(reversed(articles)), seed=13)
    assert {k: [c.model_dump() for c in v] for k, v in a.items()} == {k: [c.model_dump() for c in v] for k, v in b.items()}
    c = generate(articles, seed=14)
    assert [x.question for v in a.values() for x in v] == [x.question for v in c.values() for x in v]
    assert [x.choices for v in a.values() for x in v] != [x.choices for v in c.values() for x in v]


def test_questions_cover_different_facts(articles):
    for cands in generate(articles).values():
        assert len({c.evidence for c in cands}) == len(cands)
        assert len({normalize(c.answer) for c in cands}) == len(cands)


def test_synthetic_corpus_passes_checks():
    arts, _ = make_articles(40, DAY, days=3, seed=3)
    out = generate(arts, date=DAY)
    by_id = {a.id: a for a in arts}
    n = 0
    for aid, cands in out.items():
        for c in cands:
            check_candidate(c, normalize(f"{by_id[aid].title}\n{by_id[aid].text}"))
            assert c.kept, (c.question, c.rejected_by)
            n += 1
    assert n >= 2 * len(out)


def test_spans_are_typed():
    spans = {(s.text, s.kind) for s in find_spans(
        "Chief executive Ingrid Solberg said Halvorsen Energy would invest $2.3 billion in Gdansk by March 2, 2027, "
        "raising output 6.4 percent and hiring 1,800 workers for 16 gigawatt hours of storage.")}
    assert {("Ingrid Solberg", "person"), ("Halvorsen Energy", "org"), ("$2.3 billion", "money"),
            ("Gdansk", "place"), ("March 2, 2027", "date"), ("6.4 percent", "percent"), ("1,800", "count"),
            ("16 gigawatt hours", "quantity")} <= spans
    assert {s.kind for s in find_spans("The Philippine Red Cross said it had sent help.")} == {"org"}
    assert not find_spans("Analysts said the move reflected a broader shift.")


def test_sentence_splitting_keeps_abbreviations():
    text = 'Dr. Okafor met the U.S. envoy on Monday. "We agreed," she said.\nShares rose 3 percent.'
    assert [text[s:e] for s, e in split_sentences(text)] == [
        "Dr. Okafor met the U.S. envoy on Monday.", '"We agreed," she said.', "Shares rose 3 percent."]


def test_relative_days_become_dates():
    s = resolve_relative_dates("It was signed on Tuesday and shares fell yesterday.", DAY)  # DAY is a Saturday
    assert s == "It was signed on Tuesday, November 17, 2026 and shares fell on November 20, 2026."
    assert resolve_relative_dates("It opens next Monday.", DAY) == "It opens next Monday, November 23, 2026."
    assert resolve_relative_dates("on Friday, November 20", DAY) == "on Friday, November 20"
    # The tense around a bare weekday decides its direction (the nearest marker before it).
    assert resolve_relative_dates("The vote will take place on Tuesday.", DAY) == (
        "The vote will take place on Tuesday, November 24, 2026.")
    assert resolve_relative_dates("The mayor said service would be back by Monday.", DAY) == (
        "The mayor said service would be back by Monday, November 23, 2026.")
    assert resolve_relative_dates("He said on Monday that talks would resume on Thursday.", DAY) == (
        "He said on Monday, November 16, 2026 that talks would resume on Thursday, November 26, 2026.")
    assert resolve_relative_dates("On Wednesday, the council is scheduled to vote.", DAY).startswith(
        "On Wednesday, November 25, 2026")
    assert resolve_relative_dates("The bank closed last Saturday.", DAY) == "The bank closed last Saturday, November 14, 2026."
    assert resolve_relative_dates("Officials met on Saturday.", DAY) == "Officials met on Saturday, November 21, 2026."


def test_number_and_date_distractors_keep_the_format():
    close, far = _numbers("$45 million", 2026)
    assert all(x.startswith("$") and x.endswith(" million") for x in close + far) and "$45 million" not in close + far
    close, far = _numbers("48,000", 2026)
    assert all("," in x for x in close + far)
    close, far = _percents("6.4 percent", 2026)
    assert all(x.endswith(" percent") and "." in x for x in close + far)
    close, far = _dates("March 2, 2027", 2026)
    assert all(x.endswith(", 2027") or x.endswith(", 2026") for x in close + far)
    assert "March 9, 2027" in close


def test_generator_identity():
    g = ExtractiveGenerator(load_agent("extractive", packaged_agents_dir()), 7)
    info = g.info
    assert info.model == "extractive-v1" and len(info.spec_hash) == 64 and info.decoding.seed == 7
    assert info.decoding.max_tokens == 0


def test_awkward_text_never_breaks_the_generator(articles):
    import hashlib

    from okgen.schema import Article

    text = ("LONDON (Reuters) - Shares in Lumen Telecom jumped 12% on Wednesday.\n"
            "• Key points: the deal is worth US$3.5bn\n"
            "“We are thrilled,” said Chief Executive Rosa Ibarra. “It’s a new chapter.”\n"
            "He added that the company would hire 2,500 engineers in Toronto by 2028 — a 40 per cent rise.\n"
            "The regulator, Ofcom, has until 14 March 2027 to approve the merger with Granite Cloud.\n"
            + "Analysts said the move reflected a broader shift. " * 40 + "\n"
            "Q&A: What happens next? Nobody knows.\n" + "x" * 5000)
    a = Article(id="awkward0000000001", url="https://x.example/a", canonical_url="https://x.example/a", source="test",
                title="Lumen Telecom shares jump", published_at=dt.datetime(2026, 11, 18, 8, tzinfo=dt.timezone.utc),
                date=dt.date(2026, 11, 18), fetched_at=dt.datetime(2026, 11, 18, 9, tzinfo=dt.timezone.utc),
                text=text, text_sha256=hashlib.sha256(text.encode()).hexdigest(), extractor="test")
    g = ExtractiveGenerator(load_agent("extractive", packaged_agents_dir()), 1)
    pool = g.build_pool([*articles, a], a.date)
    cands = g.generate(a, 5, pool)
    assert cands
    for c in cands:
        check_candidate(c, normalize(f"{a.title}\n{a.text}"))
        assert c.kept, (c.question, c.rejected_by)
        assert "November 18, 2026" in c.question and c.answer in a.text
    assert not any(c.evidence.startswith(("He ", "LONDON")) for c in cands)
