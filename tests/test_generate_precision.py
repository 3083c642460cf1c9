"""The offline generator's precision rules (okgen.generate.precision) and its topical
distractors, each on small hand-written sentences that trip the rule and ones that pass."""

from __future__ import annotations

import datetime as dt
import random
from collections import Counter

import pytest

from okgen.generate import precision as pr
from okgen.generate.distractors import Pool, pick
from okgen.generate.text import normalize

DAY = dt.date(2025, 4, 14)
SUFFIX = ", as reported on April 14, 2025?"


@pytest.fixture(scope="module")
def nlp():
    from okgen.generate.nlp import load_pipeline

    return load_pipeline()


def test_vague_stems_are_refused():
    assert pr.vague("Which country did Russia accuse" + SUFFIX)
    assert pr.vague("With whom did Gavin Newsom meet" + SUFFIX)
    assert pr.vague("How many points does McLaren have" + SUFFIX)
    assert not pr.vague("By what percentage did the Dow Jones industrial average gain" + SUFFIX)
    assert not pr.vague("How much does a new Senate proposal aim to cut from Medicaid over the next decade" + SUFFIX)
    # What one qualifies for is the question's subject ("For how much can its start-ups qualify?").
    assert pr.vague("For how much can the venture fund's robotics and biotech start-ups qualify" + SUFFIX)
    assert not pr.vague("For how much can the venture fund's robotics and biotech start-ups apply" + SUFFIX)
    assert not pr.vague("How much can the fund's robotics start-ups qualify for in server credits" + SUFFIX)
    # A thing named only as not yet out (news-dev 2025-04-10: "the upcoming Blackwell GPU", a card
    # its article named elsewhere; a reviewer could not tell which).
    assert pr.vague("How many points did the upcoming Falcon graphics card score in the benchmark" + SUFFIX)
    assert not pr.vague("How many points did the Falcon X2 graphics card score in the benchmark" + SUFFIX)
    # A court order against nobody named (news-dev 2025-04-12, paraphrased: two reviewers asked
    # what the order was against).
    assert pr.vague("Who granted Lakeland's plea for a temporary restraining order" + SUFFIX)
    assert not pr.vague("Who granted Lakeland's request for a restraining order against the Orbis funding freeze" + SUFFIX)
    assert not pr.vague("Which judge issued an injunction blocking the Rivertown dam project" + SUFFIX)
    assert pr.vague("Which judge issued a temporary restraining order on April 9, 2025?")
    for q in ("Which judge issued a temporary restraining order on April 9, 2025, that halted the deportations?",
              "Which judge issued a restraining order to stop the deportations" + SUFFIX,
              "Which judge granted an injunction on the Orbis merger" + SUFFIX,
              "Which judge issued the Rivertown Dam Act injunction" + SUFFIX):  # named before it
        assert not pr.vague(q), q
    # Where someone spoke, without what about (news-dev 2025-04-14, paraphrased: "Which
    # representative spoke at a press briefing on April 9, 2025?", what she called the law cut).
    for q in ("Which Lakeland lawmaker spoke at a press briefing on April 9, 2025?",
              "Which Lakeland city council member spoke at a rally in Rivertown" + SUFFIX,
              "Who appeared on a Lakeport radio show on April 9, 2025?",
              "Who spoke at the Orbis Bank news conference" + SUFFIX):
        assert len(pr.content_words(q)) >= pr.MIN_CONTENT_WORDS and pr.vague(q), q
    for q in ("Who spoke at a press briefing about the Rivertown dam on April 9, 2025?",
              "Who spoke to reporters about tariffs on April 9, 2025?",
              "Which minister spoke at the summit in Lisbon on the Orbis pipeline on April 9, 2025?",
              "Which Lakeland senator spoke at a hearing in opposition to the tariffs on April 9, 2025?",
              # "talks" the noun, and a speaker who is not the asked-for one
              "Which country hosted peace talks at a summit in Rivertown on April 9, 2025?",
              "Who led trade talks during a meeting in Lakeport on April 9, 2025?"):
        assert not pr.vague(q), q


def test_unexplained_one_word_names_are_refused(nlp):
    sent = next(nlp("Okonkwo will portray the wizard Severus Snape in the new television series.").sents)
    answer = next(e for e in sent.ents if "Snape" in e.text)
    question = "Who will Okonkwo portray in the new television series" + SUFFIX
    assert pr.unexplained_name(sent, question, answer, {}) == "Okonkwo"
    # A name the day's news uses widely stands alone ("Trump", "Hamas").
    assert pr.unexplained_name(sent, question, answer, {"Okonkwo": 3}) is None
    # A full name is explained by a role beside it, or by a day full of it; bare, it is not
    # ("When did Ben Mbarek begin a hunger strike?", news-dev 2025-04-10).
    full = next(nlp("Adaeze Okonkwo will portray the wizard Severus Snape in the new television series.").sents)
    answer = next(e for e in full.ents if "Snape" in e.text)
    bare = "Who will Adaeze Okonkwo portray in the new television series" + SUFFIX
    assert pr.unexplained_name(full, bare, answer, {}) == "Adaeze Okonkwo"
    assert pr.unexplained_name(full, bare, answer, {"Okonkwo": 3}) is None
    titled = next(nlp("British actor Adaeze Okonkwo will portray the wizard Severus Snape in the new series.").sents)
    answer = next(e for e in titled.ents if "Snape" in e.text)
    assert pr.unexplained_name(titled, "Who will British actor Adaeze Okonkwo portray in the new series" + SUFFIX,
                               answer, {}) is None
    place = next(nlp("Algeria recalled its ambassador from Paris after the dispute over deportations.").sents)
    answer = next(e for e in place.ents if e.text == "Algeria")
    assert pr.unexplained_name(place, "Which country recalled its ambassador from Paris" + SUFFIX, answer, {}) is None


def test_background_sentences_are_history():
    assert pr.background_sentence("Born in Lima on March 28, 1936, the novelist drew on his own life.", DAY)
    assert pr.background_sentence("In March, the president invoked a wartime law to deport 300 migrants.", DAY)
    assert pr.background_sentence("The firm was founded in 1998 and now employs 4,000 people.", DAY)
    assert pr.background_sentence("In 2023, the company introduced its ninth watch.", DAY)
    assert pr.background_sentence("After the war ended, the governor tried to buy the island for $5 million.", DAY)
    assert pr.background_sentence("For generations, 40 fishing families called the village home.", DAY)
    assert pr.background_sentence("Last week, the envoy met the aide in Lisbon.", DAY)
    assert pr.background_sentence("House prices in Spain have risen 30% in the last five years.", DAY)
    assert pr.background_sentence("The agency sent $2 billion to the region under the previous administration.", DAY)
    assert pr.background_sentence("The teacher has lived in Ohio for almost 12 years.", DAY)  # a biography
    assert pr.background_sentence("The mill had run for forty years before the fire.", DAY)
    # "recently": an earlier visit told in passing (reviewers: not the day's news).
    assert pr.background_sentence("The secretary recently visited the prison in El Salvador.", DAY)
    # ... but not the news of a report that came out recently.
    assert not pr.background_sentence("Downloads of the app rose 31% in the spring, an analytics firm recently reported.", DAY)
    assert not pr.background_sentence("The club signed the striker for two years on Monday.", DAY)  # a term
    assert not pr.background_sentence("The former mayor has been sentenced to prison for 12 years.", DAY)
    assert not pr.background_sentence("The sprinter has been banned for two years by the federation.", DAY)
    assert not pr.background_sentence("The new program will run for five years and cost $3 billion.", DAY)
    assert not pr.background_sentence("The company said it would cut 300 jobs by the end of June.", DAY)
    assert not pr.background_sentence("On April 4 a district judge ordered the government to act.", DAY)


def test_a_past_event_dated_by_this_month_alone_is_background(nlp):
    # A past event dated by its month or year alone happened earlier (a reviewer: a baseline tariff
    # of the 2nd, told on the 11th); a plan for this month, or the day's event, is news.
    def dated(text):
        return pr.dated_by_period(next(nlp(text).sents))

    assert dated("Orbis imposed 10% tariffs on all Lakeport exports this month, with other markets facing steeper rates.")
    assert dated("The firm dismissed 300 staff this year.")
    for text in ("The firm will cut 300 jobs this month.", "The firm plans to open 30 stores this year.",
                 "The United Nations will hold talks this year.", "The vote, expected later this month, will decide the plan.",
                 "Talks were expected to conclude this month.", "The firm will have completed the plant this year.",
                 "The council confirmed on Wednesday that elections will be held this year.",
                 "The bank lowered rates on Wednesday for the second time this year.",
                 "The company postponed this month's launch of its phone.",
                 "Shares tumbled 5% on Wednesday, extending losses this year.",
                 "A Lakeport-based firm will open 30 stores this year.", "An estimated 300 jobs will be added this year."):
        assert not dated(text), text


def test_date_answers_stay_near_the_news_day():
    assert pr.date_in_window("May 9", DAY) and pr.date_in_window("April 4", DAY)
    assert not pr.date_in_window("February 1", DAY)
    assert not pr.date_in_window("March 28, 1936", DAY)
    assert not pr.date_in_window("August 22", DAY)  # months ahead without a year: last year's
    assert pr.date_in_window("August 22, 2025", DAY)
    assert not pr.date_in_window("sometime soon", DAY)


def test_news_outlets_are_not_answers():
    assert pr.media_name("BBC") and pr.media_name("ProPublica") and pr.media_name("Fox News Live")
    assert pr.media_name("The Verge", outlets={"The Verge"}) and pr.media_name("Fox & Friends'")
    assert not pr.media_name("Meta") and not pr.media_name("Kremlin") and not pr.media_name("NASA")


def test_an_answer_in_a_list_has_rivals(nlp):
    both = next(nlp("Egypt and Qatar expressed grave concern over the escalation in Gaza.").sents)
    assert pr.several_answers(next(e for e in both.ents if e.text == "Egypt"))
    one = next(nlp("Egypt expressed grave concern over the escalation in Gaza.").sents)
    assert not pr.several_answers(next(e for e in one.ents if e.text == "Egypt"))


def test_half_hyphenated_words_are_refused():
    assert pr.broken_hyphen("Who has raised tariffs to a -before seen 145 percent on China" + SUFFIX)
    assert not pr.broken_hyphen("Which city led off the three-round draft in New York" + SUFFIX)
    assert pr.broken_hyphen("By what percentage did the index fall until \u2019s close" + SUFFIX)
    assert not pr.broken_hyphen("By what percentage did the index fall until Friday\u2019s close" + SUFFIX)


def test_names_that_are_places_or_things_are_not_people():
    from okgen.generate.sentences import well_formed_name

    assert well_formed_name("Ada Lovelace", "PERSON")
    assert not well_formed_name("Manchester Arena", "PERSON") and not well_formed_name("Celebrity Big Brother", "PERSON")


def _pool() -> Pool:
    pool = Pool()
    people = {"Ana Ruiz": "coach club season league striker", "Ben Otto": "coach club match league goal",
              "Cleo Dunn": "coach team season match league", "Dev Patel": "minister tariff government trade",
              "Eli Moss": "minister government election vote", "Fay Lin": "singer album tour concert",
              "Gus Hale": "manager club season league match", "Ivy Moon": "coach club season match"}
    bags = {}
    for i, (name, words) in enumerate(people.items()):
        pool.add("person", name, f"a{i}")
        bags[normalize(name)] = Counter(words.split())
    pool.set_contexts(bags)
    return pool


def test_distractors_are_names_used_like_the_answer():
    pool = _pool()
    assert pool.similarity("Gus Hale", "Ana Ruiz") > pool.similarity("Gus Hale", "Fay Lin")
    got = pick("Gus Hale", "person", pool=pool, article_id="a6", article_norm="", question="Who coaches the club?",
               rng=random.Random(0), year=2025, n=3, evidence=COACHING)
    assert got is not None and set(got) <= {"Ana Ruiz", "Ben Otto", "Cleo Dunn", "Ivy Moon"}
    # The three coaches outrank the minister and the singer (n + 3 kept: the closest few).
    ranked = sorted(["Ana Ruiz", "Ben Otto", "Cleo Dunn", "Dev Patel", "Eli Moss", "Fay Lin", "Ivy Moon"],
                    key=lambda c: -pool.similarity("Gus Hale", c))
    assert set(ranked[:4]) == {"Ana Ruiz", "Ben Otto", "Cleo Dunn", "Ivy Moon"}


COACHING = Counter(["coach", "club", "season", "league"])  # the evidence sentence's context words


def test_distractors_must_come_from_the_questions_neighbourhood():
    pool = _pool()
    # Names used like the answer, but neither named in the stories near the source nor used in
    # words like the evidence's: no plausible option, the question is dropped with its reason.
    why: list[str] = []
    assert pick("Gus Hale", "person", pool=pool, article_id="a6", article_norm="", question="Who coaches the club?",
                rng=random.Random(0), year=2025, n=3, evidence=Counter(["tariff", "government"]), why=why) is None
    assert why == ["distractors_implausible"]
    # Named in the near stories (a0: Ana Ruiz, a2: Cleo Dunn, a7: Ivy Moon): those three.
    got = pick("Gus Hale", "person", pool=pool, article_id="a6", article_norm="", question="Who coaches the club?",
               rng=random.Random(0), year=2025, n=3, near=["a0", "a2", "a7"])
    assert got is not None and set(got) == {"Ana Ruiz", "Cleo Dunn", "Ivy Moon"}
    # A near story's name used unlike the answer (a3: the minister Dev Patel) is still no option.
    why = []
    assert pick("Gus Hale", "person", pool=pool, article_id="a6", article_norm="", question="Who coaches the club?",
                rng=random.Random(0), year=2025, n=3, near=["a0", "a2", "a3"], why=why) is None
    assert why == ["distractors_implausible"]


def test_no_place_distractors_from_the_gazetteer_on_a_real_day():
    # Countries drawn at random from the gazetteer ("which country struck Syria": Chad, Peru,
    # Laos) are no longer offered when the day's pool lacks plausible ones.
    pool = Pool()
    for i, name in enumerate(["Israel", "Iran"]):
        pool.add("place", name, f"a{i}")
    pool.set_contexts({"israel": Counter(["strike", "syria", "army"]), "iran": Counter(["strike", "syria", "army"]),
                       "x": Counter(["other"])})
    why: list[str] = []
    assert pick("Turkey", "place", pool=pool, article_id="a9", article_norm="", question="Which country struck Syria?",
                rng=random.Random(0), year=2025, n=3, why=why, evidence=Counter(["strike", "syria"])) is None
    assert why == ["no_distractors"]


def test_no_distractors_when_the_day_has_no_names_used_alike():
    pool = Pool()
    bags = {}
    for i, (name, words) in enumerate({"Ana Ruiz": "coach club", "Ben Otto": "singer album",
                                       "Cleo Dunn": "farmer harvest", "Hal Berg": "pilot runway"}.items()):
        pool.add("person", name, f"a{i}")
        bags[normalize(name)] = Counter(words.split())
    pool.set_contexts(bags)
    assert pick("Hal Berg", "person", pool=pool, article_id="a3", article_norm="", question="Who landed?",
                rng=random.Random(0), year=2025, n=3) is None


def test_words_glued_by_extraction_are_written_apart():
    from okgen.generate.sentences import unglue

    assert unglue("In itscomplaint, the regulator accuses the firm") == "In its complaint, the regulator accuses the firm"
    assert unglue("partnerships withseveral universities") == "partnerships with several universities"
    assert unglue("the show's fans went onThe next day") == "the show's fans went on The next day"
    # A name glued to a word is split only where the name stands alone elsewhere in the text.
    assert unglue("Okafor spoke. Later Okaforinvoked the act") == "Okafor spoke. Later Okafor invoked the act"
    assert unglue("Huckberry sells jackets") == "Huckberry sells jackets"
    assert unglue("Okafor won. Ada OkaforandBen Eze") == "Okafor won. Ada Okafor and Ben Eze"
    rare = "Olansen Iriafen Earhardt Hegseth Aldcroft Dinklage Kovacic Essiedu iPhone YouTube McDonald OpenAI"
    assert unglue(rare) == rare


def test_a_title_or_a_word_glued_to_a_name_is_written_apart_or_marked():
    # news-dev 2025-04-14 offered "PresidentJD Vance" as an answer and "Howard Lutnicksayingthat",
    # "Zara Tindalland" among a day's names.
    from okgen.generate.sentences import run_together, unglue, well_formed_name

    assert unglue("Vice PresidentJD Vance dropped the cup.") == "Vice President JD Vance dropped the cup."
    assert unglue("Rivertown CEOMara Holt said") == "Rivertown CEO Mara Holt said"
    # A word glued to a name's end is split off where the name stands alone elsewhere ...
    assert unglue("Karelova spoke. Ines Karelovafrom Lakeport") == "Karelova spoke. Ines Karelova from Lakeport"
    # ... else only marked glued: no answer, no option.
    assert unglue("with Tomas Brantovsayingthat the deal") == "with Tomas Brantovsayingthat the deal"
    for name in ("Tomas Brantovsayingthat", "Ada Ortiz-Cortezfor", "Tomas Brantov'sagenda", "PresidentJD Vance"):
        assert not well_formed_name(name, "PERSON"), name
    # Real names that end like a glued word stay whole and usable.
    assert unglue("Karim Boussaid and Nikos Stathas met Ola Aasland") == "Karim Boussaid and Nikos Stathas met Ola Aasland"
    for word in ("Haaland", "Rowland", "Kingston", "Presidential", "Queensland", "CEOs", "Ocasio-Cortez", "Boussaid",
                 "Stathas", "Golshad", "Aasland", "SenGupta", "RepRap"):
        assert not run_together(word), word


def test_distractors_get_the_answers_entity_label_when_parsed_alone():
    pool = _pool()
    # Only options the type check accepts are offered (the generator checks each option's spaCy
    # label parsed alone against the answer's, as the snapshot's quality evidence measures it).
    got = pick("Gus Hale", "person", pool=pool, article_id="a6", article_norm="", question="Who coaches the club?",
               rng=random.Random(0), year=2025, n=3, same_type=lambda c: c != "Ben Otto", evidence=COACHING)
    assert got is not None and "Ben Otto" not in got
    assert pick("Gus Hale", "person", pool=pool, article_id="a6", article_norm="", question="Who coaches the club?",
                rng=random.Random(0), year=2025, n=3, same_type=lambda c: False, evidence=COACHING) is None
    nums = pick("$45 million", "money", pool=pool, article_id="a6", article_norm="", question="How much?",
                rng=random.Random(0), year=2025, n=3, same_type=lambda c: "36" not in c)
    assert nums is not None and all("36" not in c for c in nums)


def test_option_label_is_the_label_of_the_whole_option(nlp):
    from okgen.generate.nlp import option_label

    assert option_label(nlp("Donald Trump")) == "PERSON"
    assert option_label(nlp("$45 million")) == "MONEY"
    assert option_label(nlp("the quick brown fox jumped")) == "none"
    doc = nlp("It was about Donald Trump.")
    assert option_label(doc, 13, 25) == "PERSON"  # the option's characters only


def test_options_are_labelled_as_names_in_a_sentence_and_numbers_alone(nlp):
    """Parsed bare, "Google" gets no label and "St Petersburg" is taken for a person, so a city
    question could only get distractors the tagger also misreads; in "It was about NAME." both get
    the label the news gives them. Numbers, amounts and dates are labelled alone."""
    from okgen.generate.nlp import NER_ONLY, OPTION_FRAME, option_label, option_labels

    texts = ["St Petersburg", "Moscow", "Google", "Samsung", "Donald Trump", "$45 million", "125%", "April 9, 2025",
             "the quick brown fox jumped", "dozens"]
    assert option_labels(nlp, texts, NER_ONLY) == ["GPE", "GPE", "ORG", "ORG", "PERSON", "MONEY", "PERCENT", "DATE",
                                                   "none", "CARDINAL"]
    # A name is labelled where it stands in the frame, not by the frame's own words.
    framed = nlp(OPTION_FRAME.format("Samsung"))
    assert option_label(framed, OPTION_FRAME.index("{}"), OPTION_FRAME.index("{}") + len("Samsung")) == "ORG"


def test_a_stem_word_that_nearly_spells_the_answer_is_a_giveaway():
    assert pr.echoes_answer("Which game was dreamed up by software engineer Josh Wardle" + SUFFIX, "Wordle")
    assert not pr.echoes_answer("Which organisation fired the commander of the base" + SUFFIX, "Pentagon")


def _stem_for(nlp, sentence, answer_text, date_s="April 14, 2025"):
    from okgen.generate.stems import answer_kind, make_stem

    sent = next(nlp(sentence).sents)
    ent = next(e for e in sent.ents if e.text == answer_text)
    return sent, ent, make_stem(sent, ent, answer_kind(ent), date_s)


def test_a_bare_definite_description_needs_the_article(nlp):
    sent, ent, stem = _stem_for(nlp, "Arizona Democrats have also openly accused Mexico of blatantly breaching "
                                     "the treaty, hurting ranchers who rely on the river flows.", "Mexico")
    assert "the treaty" in stem.question
    assert pr.undefined_description(sent, stem.question, ent) == "the treaty"
    # Said which one (an adjective, a compound, a phrase after it), or one of a kind: it stands.
    for text in ("Arizona Democrats have openly accused Mexico of breaching the 1944 water treaty on Monday.",
                 "Arizona Democrats have openly accused Mexico of breaching the treaty on river flows.",
                 "Arizona Democrats have openly accused Mexico of hurting the economy of the border states."):
        sent, ent, stem = _stem_for(nlp, text, "Mexico")
        assert stem is not None and pr.undefined_description(sent, stem.question, ent) is None, stem.question
    sent, ent, stem = _stem_for(nlp, "The Supreme Court also ordered the Labour government to take measures to "
                                     "ease his return.", "The Supreme Court")
    assert pr.undefined_description(sent, stem.question, ent) == "measures"


def test_a_guess_is_not_news():
    assert pr.speculative("Which organisation may eat some cost of Trump's tariffs" + SUFFIX)
    assert not pr.speculative("Which organisation raised its prices in India" + SUFFIX)
    assert pr.speculative("How much can a typical nest of Lakeland wasps eat in a season" + SUFFIX)
    # A month and a name are no modal verbs.
    assert not pr.speculative("Which company will open its Lakeport plant on May 12, 2025?")
    assert not pr.speculative("Which club signed the midfielder Emre Can" + SUFFIX)


def test_a_capital_aimed_at_stands_for_its_government(nlp):
    sent, ent, _ = _stem_for(nlp, "For its part, Greece has accused Ankara of trying to turn Cyprus into a "
                                  "Turkish province.", "Ankara")
    assert pr.place_as_actor(ent)
    sent, ent, _ = _stem_for(nlp, "Last week, Rubio met with Chinese trade envoy Li Chenggang in Washington.",
                             "Washington")
    assert not pr.place_as_actor(ent)  # where the meeting was: a place


def test_earlier_facts_are_background():
    assert pr.background_sentence("Samsung has previously admitted struggling to meet Nvidia's standards.", DAY)
    assert pr.background_sentence("He was deported to El Salvador last month.", DAY)
    assert not pr.background_sentence("Brazil retaliated on Tuesday with a 40 percent levy on US ethanol.", DAY)


def test_stems_keep_coordinated_names_and_drop_cut_asides(nlp):
    _, _, stem = _stem_for(nlp, "Talks between Witkoff and Putin took place in Moscow.", "Moscow")
    assert "between Witkoff and Putin" in stem.question
    _, _, stem = _stem_for(nlp, "NATO has so far stood by Rutte, with Macron making clear on Friday that he has no "
                                "wish to see him go.", "NATO")
    assert stem is not None and "making clear" not in stem.question  # the aside lost its clause: cut whole


def test_an_acronym_and_its_name_are_not_two_options():
    from okgen.generate.distractors import aliases

    assert aliases("DOGE", "the Department of Government Efficiency")
    assert aliases("Federal Bureau of Investigation", "FBI")
    assert not aliases("UK", "Ukraine") and not aliases("Apple", "Microsoft")
    # One body under two names (news-dev 2025-04-12 offered "the Oval Office" against "The White House").
    assert aliases("the Oval Office", "The White House") and aliases("The U.S. Department of Justice", "DOJ")
    assert aliases("Treasury", "the US Treasury") and not aliases("Treasury", "Congress")
    from okgen.generate.distractors import _names

    cands = ["the Department of Government Efficiency", "DOGE", "Pentagon", "Treasury"]
    draws = [_names("FBI", "org", cands, random.Random(seed), 3) for seed in range(20)]
    assert all(d is not None and not {"DOGE", "the Department of Government Efficiency"} <= set(d) for d in draws)
    assert _names("FBI", "org", cands[:3], random.Random(0), 3) is None  # no third name: no question
    # Nor is an answer's own acronym a distractor.
    pool = Pool()
    for i, name in enumerate(["FBI", "Pentagon", "Treasury", "Senate"]):
        pool.add("org", name, f"a{i}")
    got = pick("Federal Bureau of Investigation", "org", pool=pool, article_id="src", article_norm="", question="q",
               rng=random.Random(1), year=2025)
    assert got is not None and "FBI" not in got


def test_two_outlets_reporting_one_fact_are_near_duplicates():
    from okgen.generate.checks import near_duplicates

    items = [("To which country had Starmer's special envoy traveled" + SUFFIX, "Qatar"),
             ("To which country did Jonathan Powell travel for talks with Emir Tamim" + SUFFIX, "Qatar"),
             ("Which country retaliated with a 40 percent levy on US ethanol" + SUFFIX, "Brazil"),
             ("Which country has lodged a complaint with the World Trade Organization" + SUFFIX, "Brazil")]
    evidence = ["Earlier on Monday, Reuters said that Starmer's special envoy, Jonathan Powell, had traveled to Qatar "
                "to hold a meeting with Emir Tamim.",
                "Powell then traveled to Qatar on Monday for talks with Tamim.",
                "Brazil retaliated Tuesday with a 40 percent levy on US ethanol.",
                "Brazil has also lodged a complaint with the World Trade Organization against the latest US levy "
                "increase, arguing that Washington's measures have hurt world trade."]
    assert near_duplicates(items, evidence=evidence) == {1: 0}  # one fact twice; Brazil's two facts stay
    assert near_duplicates(items) == {}  # the stems alone share too few words to tell


def test_common_words_the_tagger_capitalised_are_not_options():
    from okgen.generate.extractive import common_word

    cased = Counter({"media": 40, "Media": 12, "house": 30, "House": 20, "Apple": 50, "apple": 1, "Senate": 10})
    assert common_word("Media", cased) and common_word("House", cased)
    assert not common_word("Apple", cased) and not common_word("Senate", cased) and not common_word("FBI", cased)


def test_a_surname_with_a_word_glued_on_is_no_option():
    # news-dev 2025-04-13 offered "Volodymyr Zelenskyyhopes" (extraction glued "hopes" on) on a
    # day that names "Volodymyr Zelenskyy" in full; a real surname that starts with another
    # person's ("Sheldon Whitehouse" beside "Dana White") is no glued word.
    from okgen.generate.extractive import glued_surname

    people = {"volodymyr zelenskyy", "rustem umerov", "pete hegseth", "dana white", "jack black"}
    assert glued_surname("Volodymyr Zelenskyyhopes", people) and glued_surname("Rustem Umerovsays", people)
    assert glued_surname("Pete Hegsethquipped", people)
    assert not glued_surname("Volodymyr Zelenskyy", people)
    assert not glued_surname("Sheldon Whitehouse", people) and not glued_surname("Marsha Blackburn", people)
    assert not glued_surname("Lena Ortizsays", people)  # no person the day knows: not judged


def test_asides_that_lose_their_clause_are_cut_whole(nlp):
    _, _, stem = _stem_for(nlp, "Three senior German ministers have visited India in an effort to keep good trade "
                                "ties despite the border tensions, with senior Indian officials paying visits to "
                                "Berlin as well.", "India")
    assert stem is not None
    assert "in an effort" not in stem.question and "paying visits" not in stem.question, stem.question
    assert "have three senior German ministers" in stem.question  # a number opening the subject is lower-cased


def test_words_glued_to_a_short_word_are_not_fluent(nlp):
    from okgen.generate.fluency import _lexicon, run_together

    lex = _lexicon(nlp)
    assert run_together("Turneras", lex) and run_together("outa", lex)  # "Kathleen Turneras", "carrying outa"
    assert not any(run_together(w, lex) for w in ("Thomas", "Douglas", "Anton", "Nicolas", "Samoa", "Texas",
                                                  "carrying", "into", "sofa", "data", "salon", "Erica", "Lina"))


def test_date_options_of_a_past_event_are_not_after_the_news_day_nor_a_plans_before_it():
    from okgen.generate.distractors import FAR_FACTORS
    from okgen.generate.text import parse_date

    day = dt.date(2025, 4, 10)
    for seed in range(10):
        got = pick("March 30", "date", pool=Pool(), article_id="a", article_norm="", question="q",
                   rng=random.Random(seed), year=2025, day=day)
        assert got and all(parse_date(d, 2025)[0] <= day for d in got), got
    for seed in range(10):  # a plan ("will vote on 1 May"): no option already past on the news day
        later = pick("1 May", "date", pool=Pool(), article_id="a", article_norm="", question="q",
                     rng=random.Random(seed), year=2025, day=day)
        assert later and all(parse_date(d, 2025)[0] > day for d in later), later
    # no option is a simple ratio of the answer (2x, 1.5x, 0.5x give it away)
    assert not {0.5, 1.5, 2.0, 2.5, 3.0} & set(FAR_FACTORS)


def test_accused_without_of_is_vague_and_habits_are_background():
    assert pr.vague("Which country has Syria's Ministry of Foreign Affairs accused" + SUFFIX)
    assert not pr.vague("Which country has Syria's Ministry of Foreign Affairs accused of destabilising Lebanon"
                        + SUFFIX)
    assert pr.background_sentence("Germany used to import 55 bcm of pipeline gas from Norway.", DAY)
    assert pr.background_sentence("Brussels has long seen Beijing's handling of the Taiwan question as a test.", DAY)


def test_a_country_the_stem_names_another_way_is_no_option():
    from okgen.generate.distractors import place_aliases

    assert "US" in place_aliases("the United States") and "Britain" in place_aliases("UK")
    pool = Pool()
    for i, name in enumerate(["the United States", "Saudi Arabia", "UK", "Russia", "India", "Japan"]):
        pool.add("place", name, f"a{i}")
    q = "Which country retaliated with a 125 percent tariff on US goods" + SUFFIX
    for seed in range(10):
        got = pick("China", "place", pool=pool, article_id="src", article_norm="", question=normalize(q),
                   rng=random.Random(seed), year=2025)
        assert got and "the United States" not in got, got


def test_a_bound_is_not_the_figure_and_named_days_stay(nlp):
    def money_or_count(text):
        from okgen.generate.stems import answer_kind

        return next(e for e in nlp(text).ents if answer_kind(e) in ("count", "money", "percent", "quantity"))

    assert pr.approximate_answer(money_or_count("US stock market cratering wiped out well over $5 trillion."))
    assert pr.approximate_answer(money_or_count("The fire damaged up to 40 homes in the valley."))
    assert not pr.approximate_answer(money_or_count("Ottawa put 23 Chinese firms on export control lists."))
    assert not pr.approximate_answer(money_or_count("Consumer sentiment dropped 11% to 50.8 this month."))
    _, _, stem = _stem_for(nlp, "President Emmanuel Macron released a Palm Sunday message at the beginning of Holy "
                                "Week.", "Emmanuel Macron")
    assert "a Palm Sunday message" in stem.question  # a holiday's weekday is not a relative day


def test_a_reported_claim_is_not_asked_as_fact(nlp):
    # news-dev, April 2025: a nominee who "claimed Donald Trump did not support" a policy gave
    # "Who did not support ...?" (paraphrased).
    sent = next(nlp("At her briefing she claimed Donald Trump did not back the relocation of the islanders.").sents)
    assert pr.reported_claim(next(e for e in sent.ents if e.text == "Donald Trump")) == "claimed"
    said = next(nlp("Keir Starmer said Donald Trump had agreed to talks on tariffs.").sents)
    assert pr.reported_claim(next(e for e in said.ents if e.text == "Donald Trump")) == "said"
    assert pr.reported_claim(next(e for e in said.ents if e.text == "Keir Starmer")) is None  # the speaker
    # An official's report of an event, or a statement, is the news.
    plain = next(nlp("China's commerce ministry said Beijing would impose tariffs of 84% on US goods.").sents)
    assert all(pr.reported_claim(e) is None for e in plain.ents)
    fact = next(nlp("Donald Trump fired the head of the National Security Agency on Thursday.").sents)
    assert all(pr.reported_claim(e) is None for e in fact.ents)


def test_the_answers_country_named_another_way_gives_it_away():
    # news-dev: a Hamas delegation's talks "with Egyptian mediators in Cairo", answer Egypt or Cairo.
    q = "Which country's mediators held talks with a Hamas delegation, as reported on April 14, 2025?"
    assert pr.country_giveaway("Where did Hamas hold talks with Egyptian mediators" + SUFFIX, "Cairo") == "Egyptian"
    assert pr.country_giveaway("Which country did Israeli troops strike" + SUFFIX, "Syria") is None
    assert pr.country_giveaway("Which country sent Israeli hostages home" + SUFFIX, "Israel") == "Israeli"
    assert pr.country_giveaway("Which country met officials in Tehran" + SUFFIX, "Iran") == "Tehran"
    assert pr.country_giveaway(q, "Egypt") is None


def test_a_brand_written_in_camel_case_is_kept_whole():
    from okgen.generate.sentences import camel_names, unglue

    # news-dev (TechCrunch, April 10, 2025): "LiveKit" came out as "Live Kit".
    text = ("LiveKit raised $45 million in a round led by Altimeter. Companies experimented with LiveKit "
            "before it launched a cloud version. He flew to WashingtonThe talks began.")
    assert camel_names(text) == frozenset({"LiveKit"})
    out = unglue(text)
    assert out.count("LiveKit") == 2 and "Live Kit" not in out
    assert "Washington The" in out  # a glue seen once is still written apart


def test_a_sentence_from_another_story_is_off_topic(nlp):
    from okgen.generate.extractive import off_topic, title_keys, topic_keys

    # news-dev (BBC, April 11, 2025): a tariff story carried a line about another story's
    # protester; the story's own market sentence shares its words with the rest (paraphrased).
    title = "Why Beijing will not blink on tariffs"
    doc = nlp("China raised its tariffs on US goods to 125% on Friday. Beijing said the tariffs on US goods "
              "would remain. Rafael Ortiz was detained in March over his part in rallies at Boston University. "
              "Chinese exporters fear the tariffs will close the US market to their goods.")
    topic = Counter(k for s in doc.sents for k in set(topic_keys(s)))
    flags = [off_topic(s, topic, title_keys(title)) for s in doc.sents]
    assert flags == [False, False, True, False]
    # A sentence whose only link to the story is the title's word, in the plural there.
    lone = next(nlp("Heavy flood waters reached the central district on Saturday morning.").sents)
    assert not off_topic(lone, Counter(set(topic_keys(lone))), title_keys("Floods force thousands from homes"))
    assert off_topic(lone, Counter(set(topic_keys(lone))), title_keys("Tariffs hit exporters"))


def test_no_number_option_written_in_a_larger_unit():
    from okgen.generate.distractors import _numbers

    # news-dev 2025-04-14: "$880 billion" got a "$1,200 billion" option, which no one writes.
    close, far = _numbers("$880 billion", 2025)
    assert close and far and not any(o.replace("$", "").split()[0].replace(",", "").isdigit()
                                     and int(o.replace("$", "").split()[0].replace(",", "")) >= 1000 for o in close + far)
    assert "1,500 people" in _numbers("1,200 people", 2025)[0]  # counts of things keep their thousands


def test_a_date_of_an_event_the_clause_does_not_pin_down_is_vague(nlp):
    # news-dev 2025-04-10 (paraphrased): "On what date did Israel strike a car in northern Gaza?"
    def date_of(text):
        return next(e for e in nlp(text).ents if e.label_ == "DATE")

    assert pr.indefinite_event(date_of("On March 30, the army struck a truck in southern Lebanon and killed two men."))
    assert pr.indefinite_event(date_of("A bridge was destroyed on April 3 in Odesa."))
    assert not pr.indefinite_event(date_of("Voters in parts of Wales will elect councillors and mayors on 6 May."))
    assert not pr.indefinite_event(date_of("On April 2, the army struck a convoy of the Wagner Group near Kharkiv."))


def test_a_stance_others_share_has_more_than_one_right_answer(nlp):
    # news-dev 2025-04-13 (paraphrased): "Who called for a hearing ...?" with a second senator
    # among the options who had called for one too; every reviewer rejected it.
    def stance(text: str, answer: str) -> str | None:
        sent = next(nlp(text).sents)
        return pr.shared_stance(next(e for e in sent.ents if e.text == answer))

    assert stance("Senator Dana Whitfield called for a hearing into the tariff trades on Sunday.", "Dana Whitfield") == "called"
    assert stance("Senator Dana Whitfield urged regulators to look into the tariff trades.", "Dana Whitfield") == "urged"
    assert stance("Lars Holm, the Danish foreign minister, hit back at the tone of the visit.", "Lars Holm") == "hit"
    assert stance("Representative Dana Whitfield took aim at the vice president during remarks in Lakeport.",
                  "Dana Whitfield") == "took"
    assert stance("Dana Whitfield took the oath of office on Sunday.", "Dana Whitfield") is None
    # Events have one doer; a stance's object is no stance taker.
    assert stance("Senator Dana Whitfield resigned from the banking committee on Sunday.", "Dana Whitfield") is None
    assert stance("Critics called on Dana Whitfield to resign from the banking committee.", "Dana Whitfield") is None


def test_recently_is_background_only_before_an_earlier_event():
    for text in ("The secretary recently visited the prison in El Salvador.",
                 "The minister recently met the envoy in Doha."):
        assert pr.background_sentence(text, DAY), text
    for text in ("As recently as Thursday, he held talks with the envoy.",
                 "The recently appointed minister resigned on Friday.",
                 "Recently, the ministry said it would act on the report.",
                 "He said recently that prices would rise.",
                 "The recently-announced plan was dropped on Monday."):
        assert not pr.background_sentence(text, DAY), text


def test_the_maker_of_a_named_product_it_launched_is_no_answer(nlp):
    from okgen.generate.precision import product_maker

    def judged(text, answer):
        return product_maker(next(e for e in nlp(text).ents if e.text == answer))

    assert judged("Samsung unveiled the Nimbus Vac Lite on Friday.", "Samsung")
    assert judged("Nintendo will release the Switch 2 in June.", "Nintendo")
    assert not judged("The Justice Department launched an investigation into Harvard.", "The Justice Department")
    assert not judged("Orbis released its quarterly earnings on Monday.", "Orbis")
    # A person freed, a report named by its month: no product.
    assert not judged("Hamas released Edan Alexander from captivity on Monday.", "Hamas")
    assert not judged("The Labor Department released the March jobs report on Friday.", "The Labor Department")
