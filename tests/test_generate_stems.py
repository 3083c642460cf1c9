"""Stem wording on real news sentences (news-dev, April 2025): phrases stay whole and in order."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("spacy")


@pytest.fixture(scope="module")
def nlp():
    from okgen.generate.nlp import load_pipeline

    return load_pipeline()


def _stem(nlp, sentence: str, answer: str, date_s: str = "April 12, 2025") -> str | None:
    from okgen.generate.stems import answer_kind, make_stem

    sent = next(nlp(sentence).sents)
    ent = next(e for e in sent.ents if e.text == answer)
    stem = make_stem(sent, ent, answer_kind(ent), date_s)
    return stem.question if stem else None


def test_a_relative_day_leaves_with_its_preposition_and_bound(nlp):
    q = _stem(nlp, "In Osaka, the Legoland water park was forced to suspend rides at least through Monday, while "
                   "nearby museums were shut.", "Osaka")
    assert q == "In which city was the Legoland water park forced to suspend rides, as reported on April 12, 2025?"
    assert "least" not in q and "through" not in q


def test_a_bound_stays_whole_where_it_is_kept(nlp):
    from okgen.generate.stems import _subtree_tokens

    doc = nlp("The park will stay shut at least through April 20.")
    least = next(t for t in doc if t.text == "least")
    assert [t.text for t in _subtree_tokens(least)] == ["at", "least"]


def test_the_outer_verbs_phrases_come_before_the_infinitive(nlp):
    q = _stem(nlp, "Duda called on the EU to supply Poland with more fighter jets.", "Poland")
    assert q == "Which country did Duda call on the EU to supply with more fighter jets, as reported on April 12, 2025?"
    q = _stem(nlp, "Apple agreed to buy Shazam for $400 million on Monday.", "Shazam")
    assert q == "Which organisation did Apple agree to buy for $400 million, as reported on April 12, 2025?"


def test_a_named_day_is_no_relative_day(nlp):
    from okgen.generate.stems import _clean

    assert _clean("Who spoke at the Mass on Palm Sunday", "April 12, 2025") == "Who spoke at the Mass on Palm Sunday"
    assert _clean("Who will decide by Tuesday", "April 12, 2025") == "Who will decide"


def test_an_aside_in_brackets_is_no_part_of_a_question(nlp):
    # news-dev 2025-04-10: extraction left the parenthesis unclosed; the stem once read
    # "Which organisation should lose the House the first Congressional election after ...".
    assert _stem(nlp, "The polling trend line suggests the GOP could lose the Senate anyway next year (the second "
                      "midterm vote after a White House race in which the governing party in the Senate keeps that "
                      "edge of it is the same party of the governor.", "GOP") is None
    # A closed aside beside the kept words is simply left out.
    assert _stem(nlp, "Apple (the iPhone maker) agreed to buy Shazam for $400 million.", "Shazam") == \
        "Which organisation did Apple agree to buy for $400 million, as reported on April 12, 2025?"


def test_a_fronted_place_that_restricts_the_fact_ends_the_question(nlp):
    # news-dev 2025-04-12: without "in Crimea" the count read as a Russia-wide total (paraphrased).
    q = _stem(nlp, "In Dagestan alone, 845 cases were opened on charges of discrediting the Russian army.", "845")
    assert q.endswith("the Russian army in Dagestan, as reported on April 12, 2025?")
    # A phrase that names nothing is no restriction.
    q = _stem(nlp, "In a statement, Apple agreed to buy Shazam for $400 million.", "Shazam")
    assert q == "Which organisation did Apple agree to buy for $400 million, as reported on April 12, 2025?"


def test_a_count_keeps_what_says_which_ones_are_counted(nlp):
    # news-dev 2025-04-13: "How many alleged members had been flown ..." lost "of ..." (paraphrased).
    q = _stem(nlp, "Interior Minister Anna Berg said 12 alleged members of Hells Angels and Bandidos had been "
                   "flown to Chile.", "12")
    assert q.startswith("How many alleged members of Hells Angels and Bandidos had been flown to Chile")
    # A count relative to an earlier one ("12 more"): "How many more ...", than what? (a reviewer)
    assert _stem(nlp, "Interior Minister Anna Berg said 12 more alleged members of Hells Angels and Bandidos had "
                      "been flown to Chile.", "12") is None


def test_a_name_in_apposition_says_which_one(nlp):
    # news-dev 2025-04-14: "For how much did Facebook try to buy another rival" named no rival (paraphrased).
    q = _stem(nlp, "Microsoft tried to buy yet another rival, Slack, for $8 billion.", "$8 billion")
    assert "another rival, Slack" in q
    # A title the tagger calls a proper noun keeps the name after it (news-dev 2025-04-10:
    # "Which senator sent a letter to Meta CEO ...?" had lost Mark Zuckerberg).
    text = "Sen. Ada Lind sent a letter to Meta CEO Susan Whitfield calling on the tech mogul to testify in the Senate."
    doc = nlp(text)
    assert next(t for t in doc if t.text == "Whitfield").dep_ == "appos"  # as the tagger read the real sentence
    q = _stem(nlp, text, "Ada Lind")
    assert q is not None and "to Meta CEO Susan Whitfield" in q, q


def test_bounds_of_a_number_stay_and_absolute_clauses_go(nlp):
    from okgen.generate.stems import _clause

    doc = nlp("Nike said it makes as much as 60% of its shoes in Vietnam, with the remaining 40% made in Indonesia.")
    makes = next(t for t in doc if t.text == "makes")
    words = [t.text for t in _clause(makes, set())]
    assert words[:4] == ["as", "much", "as", "60"]
    assert "remaining" not in words


def test_a_bare_noun_keeps_the_participle_that_says_whose_it_is(nlp):
    # news-dev 2025-04-10 (paraphrased): "in retaliation for countermeasures" was left without
    # "imposed by Beijing"; a blind editor asked whose countermeasures.
    q = _stem(nlp, "Lakeport raised tariffs on Rivertown goods to 60% on Wednesday, in response to measures "
                   "announced by Rivertown.", "60%")
    assert q is not None and q.endswith("in response to measures announced by Rivertown?"), q
    # A noun that says which already ("the measures") or a clause naming nobody is cut as before.
    q = _stem(nlp, "Lakeport raised tariffs on Rivertown goods to 60% on Wednesday, in response to the measures "
                   "announced by Rivertown.", "60%")
    assert q is not None and "announced" not in q, q
    q = _stem(nlp, "Lakeport raised tariffs on Rivertown goods to 60% on Wednesday, in response to measures "
                   "announced last week.", "60%")
    assert q is not None and "announced" not in q, q
    q = _stem(nlp, "Lakeport raised tariffs on Rivertown goods to 60% on Wednesday, in response to measures "
                   "announced by officials in Rivertown.", "60%")  # the agent's phrase names them
    assert q is not None and q.endswith("measures announced by officials in Rivertown?"), q


def test_standing_states_and_locators_are_no_news(nlp):
    # "are made in China": a present passive is a state; "in California" only locates a county.
    assert _stem(nlp, "As much as 80% of Apple's iPhones are made in China.", "China") is None
    assert _stem(nlp, "Anna Lopez and Tom Becker left Marin County in California looking for cheaper rent.",
                 "California") is None
    # Scheduled events in the present passive are news.
    assert _stem(nlp, "Trump is set to meet Netanyahu in Washington on Monday.", "Netanyahu") == \
        "Who is Trump set to meet in Washington, as reported on April 12, 2025?"


def test_a_comma_glued_by_extraction_gets_its_space():
    from okgen.generate.stems import _clean

    assert _clean("Which country will the Chinese president,Xi Jinping, visit", "April 13, 2025") == \
        "Which country will the Chinese president, Xi Jinping, visit"
    assert _clean("How many of the 1,279 cases were closed", "April 13, 2025") == "How many of the 1,279 cases were closed"


def test_tallies_and_earlier_events_are_no_news(nlp):
    # news-dev 2025-04-11/12/13: reviewers called each of these background, not the day's event
    # (paraphrased).
    for text, answer in (("Turkey has struck militant positions in Iraq dozens of times since the truce collapsed.",
                          "Turkey"),
                         ("Previous meetings between Witkoff and Vladimir Putin had taken place in Moscow.", "Moscow"),
                         ("Albanese has pursued a thaw with Beijing since taking office.", "Beijing"),
                         ("Jeff Bezos has made repeated trips to the White House.", "the White House")):
        assert _stem(nlp, text, answer) is None, text
    # One event of the day, or a title, is news.
    assert _stem(nlp, "Israel has struck a car in Gaza, killing two.", "Gaza") is not None
    assert _stem(nlp, "Former president Joe Biden met Pope Francis in Rome.", "Rome") is not None


def test_quoted_charges_and_earlier_times_are_no_question(nlp):
    # news-dev 2025-04-13: a quoted charge (X was "committing a ... crime ...", it said) was asked
    # as fact; 2025-04-12: "Then, N million people ..." was the 1970 Expo, not the day's (paraphrased).
    assert _stem(nlp, 'Russia was "committing a grave crime by shelling the Okhmatdyt clinic, which treats hundreds '
                      'of children", it said.', "Russia") is None
    assert _stem(nlp, "Then, 22 million visitors flocked to the Montreal fairground to see the geodesic dome.",
                 "22 million") is None
    assert _stem(nlp, 'Trump said the tariffs on China were "working very well" and signed the order in Washington.',
                 "Washington") is None


def test_an_aside_cut_between_two_commas_leaves_one(nlp):
    q = _stem(nlp, "President Emmanuel Macron has reportedly dismissed Foreign Intelligence Service Director "
                   "Paul Marchand, who also heads the French cyber unit, and DGSE Deputy Director Celine Roux.",
              "Emmanuel Macron")
    assert q is not None and ",," not in q


def test_a_common_word_opening_the_sentence_is_not_capitalised_inside_the_question(nlp):
    # news-dev 2025-04-11: "By what percentage have House prices in Australia jumped ..." (paraphrased).
    from okgen.generate.stems import answer_kind, make_stem

    doc = nlp("House prices in Canada overall have also climbed 27.4% in the past four years. "
              "Incomes have not kept pace with house prices.")
    sent = next(doc.sents)
    ent = next(e for e in sent.ents if e.text == "27.4%")
    q = make_stem(sent, ent, answer_kind(ent), "April 11, 2025").question
    assert q.startswith("By what percentage have house prices in Canada climbed")
    # A name the article capitalises elsewhere keeps its capital; so does one it writes nowhere else.
    doc = nlp("Apple shares fell by 5% on Thursday. Analysts said Apple would recover.")
    sent = next(doc.sents)
    ent = next(e for e in sent.ents if e.text == "5%")
    assert make_stem(sent, ent, answer_kind(ent), "April 11, 2025").question.startswith("By what percentage did Apple")
    assert _stem(nlp, "Apple shares fell by 5% on Thursday.", "5%").startswith("By what percentage did Apple shares")


def test_the_writers_judgement_is_no_part_of_a_count(nlp):
    q = _stem(nlp, "The new Falcon chip scored an impressive 98,210 points in the test on Tuesday.", "98,210")
    assert q == "How many points did the new Falcon chip score in the test on April 8, 2025?"


def test_an_abbreviation_keeps_its_last_full_stop(nlp):
    q = _stem(nlp, "Governor Kathy Hochul sent extra troopers to the U.S. this week.", "Kathy Hochul")
    assert q == "Who sent extra troopers to the U.S., as reported on April 12, 2025?"


def test_a_titled_person_is_asked_who_without_the_title(nlp):
    # Modelled on news-dev 2025-04-10 ("Homeland Security Secretary ... visited ..."): the title
    # before the name no longer blocks the subject question; a possessor still does.
    assert _stem(nlp, "Homeland Security Secretary Jane Dolan visited a prison in El Salvador.", "Jane Dolan") == \
        "Who visited a prison in El Salvador, as reported on April 12, 2025?"
    assert _stem(nlp, "Apple's chief executive unveiled new iPhones in California.", "Apple") is None
    # Vague predicates stay refused whatever the subject: seeming, being first at nothing said.
    assert _stem(nlp, "Game director Rich Lambert seemed relaxed about the Oslo patch in a Q&A.", "Rich Lambert") is None
    q = _stem(nlp, "Education Secretary Linda Moore commended Puerto Rico for being the first to certify that race "
                   "preferences are banned.", "Linda Moore")
    assert q is None or "the first" not in q


def test_an_announced_action_of_the_speaker_is_news(nlp):
    # Modelled on news-dev 2025-04-10: "said it would put ... on hold" announces what the EU does.
    assert _stem(nlp, "The African Union said it would put plans to levy counter duties on hold for 60 days.",
                 "The African Union") == ("Which organisation said it would put plans to levy counter duties on "
                                          "hold for 60 days, as reported on April 12, 2025?")
    assert _stem(nlp, "Federal Judge Helen Carter said she will decide Thursday on whether Ortega can be released.",
                 "Helen Carter") == "Who said she will decide on whether Ortega can be released, as reported on April 12, 2025?"
    # Opinions, conditions, someone else's action and non-events stay refused.
    for text, answer in (("Germany said it would be a disaster for the European Union.", "Germany"),
                         ("Tesla said it would cut prices in China if demand fell.", "Tesla"),
                         ("Amazon said Walmart would cut prices in Texas.", "Amazon"),
                         ("Microsoft said it would not comment on the Activision deal.", "Microsoft"),
                         ("Senator John Smith said he opposed the tariffs on Canada.", "John Smith")):
        assert _stem(nlp, text, answer) is None, text
    # After "announced", "confirmed" the clause may name its own subject; it must name it.
    assert _stem(nlp, "The White House confirmed that Donald Trump will travel to Rome for the funeral.",
                 "The White House") == ("Which organisation confirmed that Donald Trump will travel to Rome for the "
                                        "funeral, as reported on April 12, 2025?")
    assert _stem(nlp, "Google confirmed that the outage was caused by a bug in Dublin.", "Google") is None


def test_an_answer_in_a_phrase_of_the_object_is_asked_with_its_preposition(nlp):
    # Modelled on news-dev 2025-04-10 ("urged ... to impose a weapons ban on" a country).
    assert _stem(nlp, "Trump imposed new tariffs on China on Wednesday.", "China") == \
        "On which country did Trump impose new tariffs on April 9, 2025?"
    assert _stem(nlp, "Oxfam has urged both the French and German governments to place a full weapons ban on Sudan.",
                 "Sudan") == ("On which country has Oxfam urged the French and German governments to place a full "
                              "weapons ban, as reported on April 12, 2025?")
    # A capital for its government, "of", and an object that points nowhere without the phrase: none.
    for text, answer in (("Trump is fighting a trade war with Beijing.", "Beijing"),
                         ("Israel killed the leader of Hamas in Gaza.", "Hamas"),
                         ("Apple signed the deal with Samsung last week.", "Samsung")):
        assert _stem(nlp, text, answer) is None, text


def test_a_bare_date_is_asked_on_what_date(nlp):
    # Modelled on news-dev 2025-04-10 (a trial's first hearing "scheduled to begin" on a bare date).
    assert _stem(nlp, "The Senate will vote May 12 on the budget bill.", "May 12") == \
        "On what date will the Senate vote on the budget bill, as reported on April 12, 2025?"
    assert _stem(nlp, "Closing arguments in the Vance trial are scheduled to start June 3.", "June 3") == \
        "On what date are closing arguments in the Vance trial scheduled to start, as reported on April 12, 2025?"
    # Whose arguments? A subject that names nothing gives no question.
    assert _stem(nlp, "Closing arguments are scheduled to start June 3.", "June 3") is None


def test_a_time_of_another_sentence_is_no_news(nlp):
    # news-dev 2025-04-10: a state visit "the same year" was one of 2015, not of the day (paraphrased).
    assert _stem(nlp, "The Brazilian president, Lula da Silva, paid an official visit to Japan the same year.",
                 "Japan") is None


def test_a_place_in_the_subjects_phrase_is_asked_in_which(nlp):
    # Modelled on news-dev 2025-04-11 ("A prison firing squad in South Carolina executed ...").
    assert _stem(nlp, "Protesters in Belgrade blocked the main bridge over the Sava river.", "Belgrade") == \
        "In which city did protesters block the main bridge over the Sava river, as reported on April 12, 2025?"
    # "The police": which police, once the place is the question? A clause naming nothing: no question.
    assert _stem(nlp, "The police in London arrested Tommy Robinson.", "London") is None
    assert _stem(nlp, "Republicans in Texas passed a bill banning TikTok.", "Texas") is None
    # news-dev 2025-04-11: "In which country have house prices jumped ...?" without the 39.1% it was about.
    assert _stem(nlp, "House prices in Australia have jumped 39.1% in the last five years.", "Australia") is None
    # news-dev 2025-04-14: "In which country has The United States' ... campaign killed ...": "the" inside.
    assert _stem(nlp, "The United States' drone campaign in Somalia has killed 87 people.", "Somalia") == \
        "In which country has the United States' drone campaign killed 87 people, as reported on April 12, 2025?"


def test_what_a_comparison_or_a_first_needs_is_not_cut(nlp):
    # Modelled on news-dev 2025-04-12/13/14: "received a smaller $358,750 package" (than what?), "became the
    # first draft pick" (in whose history?), "made some major changes back in September" (not the day's),
    # "a request from Christian [and Jewish] organizations" (half the fact).
    for text, answer in (("Dell CEO Laura Bennett received a somewhat smaller $412,300 bonus.", "Laura Bennett"),
                         ("Serbian forward Mila Petrovic became the first player picked in the history of the Portland "
                          "Fire.", "Mila Petrovic"),
                         ("Microsoft made some major changes back in September to address the issues with Recall.",
                          "Microsoft")):
        assert _stem(nlp, text, answer) is None, text
    q = _stem(nlp, "Judge Ellen Marsh rejected a petition from three dozen Catholic and Muslim charities in Oregon.",
              "Ellen Marsh")
    assert q is not None and "Catholic and Muslim charities" in q


def test_an_as_phrase_the_verb_needs_is_never_cut(nlp):
    # Modelled on news-dev 2025-04-10: "credited X's leadership [as crucial ...]" lost what it credited.
    assert _stem(nlp, "Foreign Minister Ana Costa credited President Daniel Noboa's leadership as vital in "
                      "restoring the safety of his nation.", "Ana Costa") is None
    # "as part of the deal" is an aside of the clause, left out as before (news-dev 2025-04-12).
    assert _stem(nlp, "Troops of the US Army were deployed to Guatemala as part of the border pact.", "Guatemala") == \
        "To which country were troops of the US Army deployed, as reported on April 12, 2025?"


def test_a_share_word_stays_and_a_noun_hung_on_the_verb_is_no_clause(nlp):
    # news-dev 2025-04-14 (paraphrased): a cut "chiefly from" one programme lost its "chiefly", and
    # reviewers read the question as saying all of it came from there.
    assert _stem(nlp, "A new GOP plan aims to cut $500 billion, mostly from Medicaid, over the next decade.",
                 "$500 billion") == ("How much does a new GOP plan aim to cut mostly from Medicaid over the next "
                                     "decade, as reported on April 12, 2025?")
    # news-dev 2025-04-12 (paraphrased): after a bracket the parse hung "and two other lenders" on
    # the verb, and the question credited the whole sum to the first lender.
    assert _stem(nlp, "Chile has clinched $12bn in medium-term funding from the World Bank (WB) and two other "
                      "lenders as it announced it is lifting controls.", "12bn") is None


def test_a_standing_total_needs_its_date_and_a_sum_keeps_what_it_is_of(nlp):
    # news-dev 2025-04-10/11 (paraphrased): reviewers asked "of which year?" of a trade total and
    # "qualify for what?" of a sum whose "in cloud credits" the question lost.
    assert _stem(nlp, "US goods exports to Brazil totalled $81.2bn.", "81.2bn") is None
    assert _stem(nlp, "US goods exports to Brazil totalled $81.2bn in 2025.", "81.2bn") == (
        "How much did US goods exports to Brazil total in 2025, as reported on April 12, 2025?")
    assert _stem(nlp, "Northwind's portfolio companies can qualify for $90,000 in cloud credits, Google said.",
                 "90,000") is None


def test_a_close_with_its_direction_is_a_change(nlp):
    q = _stem(nlp, "The Nikkei 225 index closed up 3.2% on the week after a volatile Friday.", "3.2%")
    assert q == "By what percentage did the Nikkei 225 index close up on the week, as reported on April 12, 2025?"
    q = _stem(nlp, "The FTSE 100 ended down 2.1% on Wednesday after the tariff announcement.", "2.1%")
    assert q == "By what percentage did the FTSE 100 end down after the tariff announcement, as reported on April 12, 2025?"


def test_the_level_a_change_reached_is_asked_with_to(nlp):
    # As news-dev 2025-04-11 reported the tariff war (paraphrased).
    q = _stem(nlp, "Prime Minister Mark Carney has raised total levies on US steel to 25%, while Washington answered "
                   "on Friday.", "25%")
    assert q == "To what percentage has Prime Minister Mark Carney raised total levies on US steel, as reported on April 12, 2025?"
    assert _stem(nlp, "The Bank of England cut interest rates to 4.5% on Thursday.", "4.5%").startswith(
        "To what percentage did the Bank of England cut interest rates")
    q = _stem(nlp, "Congress slashed NASA's science budget to $4.1 billion from $6.2 billion.", "$4.1 billion")
    assert q == "To how much did Congress slash NASA's science budget from $6.2 billion, as reported on April 12, 2025?"
    # "to" after a verb of no change names no level: "sold the stake to 5% of investors".
    assert _stem(nlp, "The company offered the shares to 5% of its employees on Monday.", "5%") is None


def test_a_count_keeps_a_short_of_phrase_that_says_what_is_counted(nlp):
    q = _stem(nlp, "Sweden will deliver 20,000 rounds of mortar ammunition to Ukraine, the ministry said.", "20,000")
    assert q is not None and q.startswith("How many rounds of mortar ammunition will Sweden deliver to Ukraine")
    # A name in the phrase, or a long one, is more than what is counted: no question.
    assert _stem(nlp, "The Kremlin freed 12 members of Alexei Navalny's party on Thursday.", "12") is None


def test_a_relative_day_said_of_the_verb_becomes_its_date(nlp):
    """April 10, 2025 was a Thursday: a past verb's "Wednesday" is April 9, a future verb's
    "Monday" April 14; a day said of another verb ("said on Friday that ... will") or of a verb
    whose tense is unclear leaves, and the question is dated by the news day."""
    def stem(text, answer):
        return _stem(nlp, text, answer, "April 10, 2025")

    assert stem("Chinese President Xi Jinping raised duties on American soybeans to 84% on Wednesday, in response "
                "to measures taken by Washington.", "84%") == (
        "To what percentage did Chinese President Xi Jinping raise duties on American soybeans on April 9, 2025, "
        "in response to measures taken by Washington?")  # whose measures: kept since 2026-11-30
    assert stem("The European Parliament will vote on the tariff package on Monday.", "The European Parliament") == (
        "Which organisation will vote on the tariff package on April 14, 2025?")
    assert stem("Boeing shares fell 5% on Thursday.", "5%") == "By what percentage did Boeing shares fall on April 10, 2025?"
    assert stem("The Kremlin said on Friday that Russia will send 500 troops to Mali.", "500") == (
        "How many troops did the Kremlin say Russia will send to Mali, as reported on April 10, 2025?")
    assert stem("Microsoft is laying off 300 workers on Friday.", "300") == (
        "How many workers is Microsoft laying off, as reported on April 10, 2025?")
    # A bare weekday (no "on") said of the verb too: left out, the question could ask of either of
    # two retaliations (a reviewer could not tell which "How high a tariff did China retaliate
    # with?" meant).
    assert stem("Orbis retaliated Wednesday with a 25 percent tariff on Lakeport goods.", "25 percent") == (
        "How high a tariff on Lakeport goods did Orbis retaliate with on April 9, 2025?")
    assert stem("Orbis shares fell 5% Thursday.", "5%") == "By what percentage did Orbis shares fall on April 10, 2025?"
    # A day that is not one day alone is no relative day to resolve: with its date, the date ("cut
    # 300 jobs Friday, March 28" is no question of April 4); a range, two days, "every", "this",
    # "the following", a named day leave, and with them a conjunction they would strand.
    assert stem("Vantor Corp cut 300 jobs on Friday, March 28.", "300") in (
        "How many jobs did Vantor Corp cut on March 28?", "How many jobs did Vantor Corp cut, as reported on April 10, 2025?")
    assert stem("Vantor Corp will cut 300 jobs Friday, April 18.", "300") in (
        "How many jobs will Vantor Corp cut on April 18?", "How many jobs will Vantor Corp cut, as reported on April 10, 2025?")
    from okgen.generate.stems import _clean

    assert _clean("did Vantor Corp cut 300 jobs on Friday, March 28", "April 10, 2025", {"friday": "April 4, 2025"}) == \
        "did Vantor Corp cut 300 jobs on March 28"
    for text, want in (("did Vantor agree by Friday, April 18", "did Vantor agree by April 18"),
                       ("did Vantor hold talks between Friday, March 28 and Monday, March 31",
                        "did Vantor hold talks between March 28 and March 31"),
                       ("did Vantor cut jobs Friday, Oct. 3", "did Vantor cut jobs on Oct. 3"),
                       ("did Vantor shares rise to Friday's close", "did Vantor shares rise to Friday's close"),
                       ("did Vantor agree to a Friday deadline", "did Vantor agree to a deadline"),
                       ("did Vantor plan a gala for Friday, April 18", "did Vantor plan a gala for April 18"),
                       ("did Vantor shut its shops on Good Friday, April 18",
                        "did Vantor shut its shops on Good Friday, April 18"),
                       ("did Vantor meet Friday morning, April 18", "did Vantor meet on April 18"),
                       ("did Vantor hire 300 workers on Monday\u2013Wednesday for the festival",
                        "did Vantor hire 300 workers for the festival")):
        assert _clean(text, "April 10, 2025", {}) == want, text
    # Two days in one sentence: no one of them is the fact's (the 300 jobs were not cut on Thursday).
    for text, answer in (("Vantor shares rose 5% Wednesday and 3% Thursday.", "5%"),
                         ("Vantor Corp cut 300 jobs Wednesday and 200 jobs Thursday.", "300")):
        assert "as reported on April 10, 2025?" in stem(text, answer), text
    for text in ("Vantor Corp cut 300 jobs Sunday through Tuesday.", "Vantor Corp cut 300 jobs Sunday to Tuesday.",
                 "Vantor Corp cut 300 jobs every Wednesday.", "Vantor Corp cut 300 jobs the following Wednesday.",
                 "Vantor Corp cut 300 jobs Wednesday and Tuesday.", "Vantor Corp cut 300 jobs on Wednesday and Tuesday."):
        assert stem(text, "300") == "How many jobs did Vantor Corp cut, as reported on April 10, 2025?", text
    assert stem("Vantor sold 300 trucks Cyber Monday.", "300") == "How many trucks did Vantor sell, as reported on April 10, 2025?"
    assert stem("Vantor Corp cut 300 jobs last Wednesday.", "300") == "How many jobs did Vantor Corp cut on April 9, 2025?"


def test_a_count_in_the_present_perfect_without_a_date_is_a_running_total(nlp):
    # As news-dev 2025-04-11 told of China's listings (paraphrased): three reviewers rejected the
    # question, since the listings came in several rounds.
    assert _stem(nlp, "As well as new duties, Seoul has limited imports of American beef, and put 22 US firms "
                      "on export control lists.", "22") is None
    assert _stem(nlp, "Seoul has put 22 US firms on export control lists.", "22") is None
    assert _stem(nlp, "Seoul put 22 US firms on export control lists.", "22") == (
        "How many US firms did Seoul put on export control lists, as reported on April 12, 2025?")
    # A dated one says which round it is.
    assert _stem(nlp, "Seoul has put 22 US firms on export control lists on Friday.", "22") is not None


def test_a_verb_the_parse_gave_two_objects_gives_no_question(nlp):
    # The parse makes "quarterback" and the name two objects of "signed": the question would
    # keep the title without its name ("Who did the Rivertown Hawks sign quarterback to ...").
    sent = next(nlp("The Miami Dolphins signed quarterback Joe Flacco to a two-year deal on Tuesday.").sents)
    assert sum(t.dep_ == "dobj" for t in sent) == 2  # the misparse this test is about
    assert _stem(nlp, sent.text, "Joe Flacco") is None


def test_a_size_given_to_the_object_is_asked_how_high_or_how_large(nlp):
    # "imposed a 10% tariff on all UK imports" (news-dev 2025-04-10, paraphrased): the percentage
    # is the tariff's size, asked with the noun and its own phrase.
    assert _stem(nlp, "The EU will impose a 25% levy on US steel.", "25%") == (
        "How high a levy on US steel will the EU impose, as reported on April 12, 2025?")
    assert _stem(nlp, "Nvidia bought a 5% stake in the chip designer Arm on Monday.", "5%") == (
        "How large a stake in the chip designer Arm did Nvidia buy on April 7, 2025?")
    assert _stem(nlp, "Meta agreed a $725 million settlement with users over the data scandal.", "$725 million") == (
        "How large a settlement with users over the data scandal did Meta agree, as reported on April 12, 2025?")
    # The same size in a "with" phrase: "retaliated with a 25 percent tariff on US steel".
    assert _stem(nlp, "Canada retaliated on Tuesday with a 25 percent tariff on US steel.", "25 percent") == (
        "How high a tariff on US steel did Canada retaliate with on April 8, 2025?")
    assert _stem(nlp, "Brazil was hit with a 30% levy.", "30%") is None
    # A change says nothing without what changed; a tariff nothing without what it is on.
    assert _stem(nlp, "Nvidia announced a 5% increase.", "5%") is None
    assert _stem(nlp, "Canada imposed a 25% tariff.", "25%") is None
    # A size compared with another's, or told as background, is no question of its own.
    assert _stem(nlp, "Oracle boss Dana Reyes got a $2 million bonus from the board.", "$2 million") == (
        "How large a bonus did Oracle boss Dana Reyes get from the board, as reported on April 12, 2025?")
    assert _stem(nlp, "Oracle boss Dana Reyes got a slightly smaller $2 million bonus from the board.", "$2 million") is None
    assert _stem(nlp, "Samsung targeted a 20% increase in chip output in Vietnam.", "20%") == (
        "How large an increase in chip output in Vietnam did Samsung target, as reported on April 12, 2025?")
    assert _stem(nlp, "Samsung had targeted a 20% increase in chip output in Vietnam.", "20%") is None
    # The scale of a sum written apart from it ("£300m": "300" and "m") stays out of the noun's phrase.
    assert _stem(nlp, "Tata rejected a £300m offer of support.", "300") is None
    # A price is no size of the thing priced ("How large a watch").
    assert _stem(nlp, "Apple launched a $500 watch in Europe.", "500") is None


def test_the_size_question_asks_for_an_amount(nlp):
    from okgen.generate.gates import type_disagreement

    stem = "How high a levy on US steel will the EU impose in April 2025?"
    assert type_disagreement(stem, "PERCENT") is None and type_disagreement(stem, "MONEY") is None
    assert type_disagreement(stem, "PERSON") == "the question asks for an amount but the answer is PERSON"
    assert type_disagreement(stem, "CARDINAL") is not None


def test_a_measure_its_announcer_takes_is_not_asked_without_the_announcer(nlp):
    # "X said that tariffs will be raised to 84%": the stem made of the clause would drop X, the
    # one raising them ("To what percentage will duties on Marlish goods be raised?": by whom?).
    said = "The Tariff Board of Veldoria said on Friday that duties on Marlish goods will be raised to 84%."
    assert _stem(nlp, said, "84%") is None
    # The announcer named inside its phrase, a possessive: the same.
    assert _stem(nlp, "Veldoria's tariff board said on Friday that duties on Marlish goods will be raised to 84%.",
                 "84%") is None
    # Said in the active voice, the actor is in the stem.
    q = _stem(nlp, "The Tariff Board of Veldoria raised duties on Marlish goods to 84% on Friday.", "84%")
    assert q is not None and "Tariff Board of Veldoria" in q
    # A passive whose agent is not the one reporting it stays a question ("the ministry said 40
    # people were killed": the ministry killed no one).
    q = _stem(nlp, "Kerala's health ministry said on Tuesday that 40 people were killed in the flooding in Kerala.", "40")
    assert q == "How many people were killed in the flooding in Kerala, as reported on April 12, 2025?"


def test_a_purpose_infinitive_stays_in_the_stem(nlp):
    # What the event is for is part of it: without "to take control of Siemens" the stem would
    # be "Who is stepping in?". A purpose with its own subject or a long one is left out.
    q = _stem(nlp, "Angela Merkel is stepping in to take control of Siemens to stop its board selling the Munich plant.",
              "Angela Merkel")
    assert q == "Who is stepping in to take control of Siemens, as reported on April 12, 2025?"
    q = _stem(nlp, "Mauro Vieira flew to Tokyo on Monday to hand Prime Minister Shigeru Ishiba a letter that he said "
                   "would change everything about the relationship.", "Mauro Vieira")
    assert q == "Who flew to Tokyo on April 7, 2025, to hand Prime Minister Shigeru Ishiba a letter?"


def test_an_answer_inside_a_purpose_is_not_asked_through_it(nlp):
    # "How many downloads did X jump to reach": the infinitive is no object of the outer verb.
    assert _stem(nlp, "Angela Merkel is stepping in to take control of Siemens to stop its board selling the Munich "
                      "plant.", "Siemens") is None


def test_a_name_in_apposition_to_the_subject_is_asked_who(nlp):
    q = _stem(nlp, "Brazil's foreign minister, Mauro Vieira, has flown to Tokyo to meet with Prime Minister Shigeru "
                   "Ishiba, Reuters has reported.", "Mauro Vieira")
    assert q == "Who has flown to Tokyo to meet with Prime Minister Shigeru Ishiba, as reported on April 12, 2025?"


def test_a_noun_taken_for_a_particle_refuses_the_clause(nlp):
    # news-dev 2025-04-11 had this shape: the parse made "whistleblower" a particle of "grilled",
    # and the stem read "Who did ... grill whistleblower ...?", a title left without its name.
    assert _stem(nlp, "Senator Mark Dalby grilled whistleblower Dr. Lena Ortiz on Tuesday about a decision to leak "
                      "confidential medical records.",
                 "Lena Ortiz") is None


def test_as_well_as_stays_whole(nlp):
    q = _stem(nlp, "Marta Kell said Ivo Brandt took the files to the Ohio regulator as well as the press.",
              "Ivo Brandt")
    assert q is not None and "regulator as well as the press" in q, q


def test_an_infinitive_of_a_result_is_no_purpose(nlp):
    # "jumped 31% ... to reach 12 million": the result would give away a figure and copy the
    # sentence; it is left out like other adverbial clauses.
    q = _stem(nlp, "Lumora's sales jumped 31% from January to February to reach 12 million units in February.", "31%")
    assert q == "By what percentage did Lumora's sales jump from January to February, as reported on April 12, 2025?"


def test_a_measure_without_a_name_is_asked_only_when_the_clause_says_whose(nlp):
    # "Mortgage rates" names nothing, yet says what rose when the clause names whose figure it is;
    # without a name (whose profit? which country's rates?), with one word ("sentiment") or a
    # place named before ("in the region"), no question. An unnamed subject is never asked
    # about anything but the size of a change.
    assert _stem(nlp, "Mortgage rates rose 5% on Friday, according to Freddie Mac.", "5%") == \
        "By what percentage did mortgage rates rise on April 11, 2025, according to Freddie Mac?"
    assert _stem(nlp, "Mortgage rates rose 5% on Friday.", "5%") is None
    assert _stem(nlp, "Net profit fell 12% to $3.2 billion in the first quarter.", "12%") is None
    assert _stem(nlp, "Home prices in the region climbed 3% according to Zillow.", "3%") is None
    assert _stem(nlp, "The two companies' combined revenue rose 10% according to Reuters.", "10%") is None
    assert _stem(nlp, "Last year, sentiment tumbled 34 percent.", "34 percent") is None
    assert _stem(nlp, "Local officials arrested 12 protesters near the bridge.", "12") is None


def test_a_long_purpose_and_a_figures_purpose_are_left_out(nlp):
    q = _stem(nlp, "Mauro Vieira flew to Tokyo on Monday to hand Prime Minister Shigeru Ishiba a long and carefully "
                   "worded letter from the president.", "Mauro Vieira")
    assert q == "Who flew to Tokyo on April 7, 2025?"  # the purpose has more than 9 tokens
    # A figure's infinitive is most often its result ("to overtake BYD"): not kept with a count.
    q = _stem(nlp, "Tesla delivered 400,000 cars in the quarter to overtake BYD as the top seller.", "400,000")
    assert q is not None and "overtake" not in q, q


def test_a_true_particle_stays(nlp):
    q = _stem(nlp, "McDonald's brought back the McRib in Canada on Monday.", "Canada")
    assert q == "In which country did McDonald's bring back the McRib on April 7, 2025?"


def test_an_apposition_is_asked_who_only_after_a_named_description(nlp):
    # "Her lawyer, Jane Doe, ...": whose lawyer? The description is all that explains the name.
    assert _stem(nlp, "Her lawyer, Jane Doe, filed an appeal with the Supreme Court on Monday.", "Jane Doe") is None


def test_its_of_the_named_subject_stays_in_the_question(nlp):
    # news-dev 2025-04-11 (paraphrased): a carmaker's layoffs "because of weak demand for its vans"
    # gave no question; "its" is the subject's, named in the question itself.
    sentence = "Norvale Motors is laying off 300 workers at a plant because of weak demand for its Volta vans."
    assert _stem(nlp, sentence, "300") == ("How many workers is Norvale Motors laying off at a plant because of "
                                           "weak demand for its Volta vans, as reported on April 12, 2025?")
    assert _stem(nlp, "Toyota and Honda recalled 300,000 cars over their airbags on Monday.", "300,000") is not None
    # Not when the answer owns it: "Which organisation is hosting extensions in its Chrome Web
    # Store?" names the answer's product. The reason goes.
    assert _stem(nlp, sentence, "Norvale Motors") == \
        "Which organisation is laying off 300 workers at a plant, as reported on April 12, 2025?"
    assert _stem(nlp, "Norvale Motors is hosting 300 apps in its Volta store.", "Norvale Motors") is None
    # Not when another name before it could own it, the answer included, nor when the subject
    # is that of a reported clause ("its cities" are Ukraine's), nor "their" for one company.
    assert _stem(nlp, "Norvale Motors is cutting 300 jobs in Ohio to shore up its Volta brand.", "300") is None
    assert _stem(nlp, "The EU fined Google over its Android software.", "Google") is None
    assert _stem(nlp, "Ukraine said Russia launched 150 drones at its cities overnight.", "150") is None
    assert _stem(nlp, "Norvale Motors will cut 300 jobs at their plant.", "300") is None
    # "his" and "her" may point at someone of an earlier sentence: no question.
    assert _stem(nlp, "Norvale Motors fired 300 workers over his remarks.", "300") is None
    # Nor "its" with a person for the subject.
    assert _stem(nlp, "Jane Harlow sold 300 shares at its peak on Monday.", "300") is None


def test_the_first_part_of_a_hyphenated_word_stays(nlp):
    # "its all-electric vans" once read "its -electric vans": the adverb "all" was cut as detail.
    q = _stem(nlp, "Norvale Motors is recalling 300 all-electric vans in Ohio.", "300")
    assert q is not None and "300" not in q and " all-electric vans" in q, q


def test_a_reason_that_points_back_is_left_out(nlp):
    # news-dev 2025-04-11 (paraphrased): "because of weak demand for its vans" after another name
    # ("in Ohio") could be either's; the reason is no part of the fact asked, so it is left out.
    q = _stem(nlp, "Norvale Motors is laying off 300 workers in Ohio because of weak demand for its Volta vans.", "300")
    assert q == "How many workers is Norvale Motors laying off in Ohio, as reported on April 12, 2025?"
    # Not when the reason is the fact: under a negation, beside another reason, or with a
    # second count ("300 because of X and 200 because of Y" is no total of 300).
    assert _stem(nlp, "Norvale Motors did not cut 300 jobs in Ohio because of its losses but because of tariffs.",
                 "Norvale Motors") is None
    assert _stem(nlp, "Norvale Motors has never closed a plant in Ohio despite its losses.", "Ohio") is None
    assert _stem(nlp, "Norvale Motors is laying off 300 workers in Ohio because of its merger and 200 because of "
                      "weak demand for its vans.", "300") is None
    # A reason that names its own actors stays.
    q = _stem(nlp, "Norvale Motors is laying off 300 workers in Ohio because of tariffs on Canadian steel.", "300")
    assert q is not None and "because of tariffs on Canadian steel" in q, q


def test_a_change_to_a_bare_level_is_not_asked_by_how_much(nlp):
    # Both reviewers: "By what percentage has US consumer sentiment dropped to 50.8?" is garbled (a
    # level of what?). A level with its unit still reads: the change to a sum or a share is asked.
    assert _stem(nlp, "Consumer confidence in Lumora has dropped 11% to 50.8 this month, a survey by "
                      "the Harlan Institute found.", "11%") is None
    q = _stem(nlp, "Apple's revenue rose 5% to $3.2 billion in the quarter, the company said on Friday.", "5%")
    assert q is not None and q.startswith("By what percentage did Apple's revenue rise to $3.2 billion"), q


def test_a_clause_of_contrast_is_asked_like_a_main_clause(nlp):
    # "..., while the Nasdaq finished up 7.3%" (news-dev 2025-04-11, paraphrased): a "while"
    # clause states its own fact; an "if" clause states none.
    assert _stem(nlp, "Rivertown imposes a 30 percent tariff on steel, while Lakeport has raised tariffs on "
                      "Rivertown imports to 90 percent.", "90 percent") == (
        "To what percentage has Lakeport raised tariffs on Rivertown imports, as reported on April 12, 2025?")
    assert _stem(nlp, "Rivertown imposes a 30 percent tariff on steel, if Lakeport raises tariffs on "
                      "Rivertown imports to 90 percent.", "90 percent") is None
    # A closing move needs the period it closed over: "finish up" over which day or week?
    assert _stem(nlp, "The Orbis 100 index closed up 3.1% on the week, while the Meridian Composite "
                      "finished up 6.2%.", "6.2%") is None


def test_a_past_tense_the_tagger_took_for_a_participle_is_still_asked(nlp):
    sent = next(nlp("Trump imposed 10% tariffs on all Rivertown exports this month.").sents)
    verb = next(t for t in sent if t.lower_ == "imposed")
    if verb.tag_ != "VBN":
        pytest.skip("the pipeline tags this verb right: nothing to correct")
    assert _stem(nlp, sent.text, "10%") == (
        "What tariff rate did Trump impose on all Rivertown exports, as reported on April 12, 2025?")


def test_a_rate_given_to_plural_tariffs_or_by_of_is_asked_what_rate(nlp):
    assert _stem(nlp, "The European Union imposed steel tariffs of 25% on Tuesday.", "25%") == (
        "What steel tariff rate did the European Union impose on April 8, 2025?")
    assert _stem(nlp, "Lakeport will impose 40% tariffs on Rivertown cars.", "40%") == (
        "What tariff rate will Lakeport impose on Rivertown cars, as reported on April 12, 2025?")
    # A subject whose left-out clause names where the rate applies: from whom? (a reviewer)
    told = "Markets slid again on Monday as Mayor Hale widened her trade dispute, making clear that Lakeport goods{} " \
           "would now face a minimum 60% tariff rate."
    assert _stem(nlp, told.format(" exported to Rivertown"), "60%") is None
    assert _stem(nlp, told.format(""), "60%") == (
        "How high a minimum tariff rate would Lakeport goods face, as reported on April 12, 2025?")
    # A rate of nothing named ("40% tariffs" on what?), and one beside another rate ("84% ... and again to 125%"), are not asked.
    assert _stem(nlp, "Lakeport imposed 40% tariffs on Tuesday.", "40%") is None
    assert _stem(nlp, "Lakeport imposed tariffs of 40% on Rivertown goods, and raised them to 70% on Friday.",
                 "40%") is None


def test_a_sum_given_by_of_is_asked_how_large(nlp):
    assert _stem(nlp, "The Rivertown council proposed a transport budget of $2.8 billion on Tuesday.",
                 "$2.8 billion") == "How large a transport budget did the Rivertown council propose on April 8, 2025?"
    # A sentence that speaks of an unnamed organisation may give its size: whose budget? (a reviewer:
    # the agency was never named)
    assert _stem(nlp, "After the agency received $7.1 billion, the Rivertown council proposed a transport budget "
                      "of $2.8 billion on Tuesday.", "$2.8 billion") is None
    assert _stem(nlp, "The Rivertown weather agency is facing a $1.3 billion cut to its research budget.",
                 "$1.3 billion") is None  # whose budget? "its" points back
    assert _stem(nlp, "The Rivertown weather agency is facing a $1.3 billion cut to research and operations.",
                 "$1.3 billion") == (
        "How large a cut to research and operations is the Rivertown weather agency facing, as reported on "
        "April 12, 2025?")


def test_a_phrase_after_an_and_on_the_verb_is_left_out(nlp):
    # The parse hangs "also on goods ..." on the verb; the question stops before the "and".
    sent = next(nlp("Canada is facing a 25% tariff on steel exports - and also on goods made from steel.").sents)
    verb = next(t for t in sent if t.lower_ == "facing")
    assert any(c.dep_ == "cc" for c in verb.children)  # the misparse this test is about
    assert _stem(nlp, sent.text, "25%") == "How high a tariff on steel exports is Canada facing, as reported on April 12, 2025?"
    # An answer inside the second conjunct is not asked with the first one's phrase.
    assert _stem(nlp, "Germany pledged $500 million in aid to Ukraine and also to Moldova on Monday.", "Moldova") is None


def test_a_contrast_clause_beside_a_condition_or_a_forecast_is_not_asked(nlp):
    assert _stem(nlp, "Rivertown tariffs would rise to 50% if Lakeport retaliates, while Lakeport exports would "
                      "fall by 20%.", "20%") is None
    assert _stem(nlp, "Analysts expect Orbis to cut 5% of jobs, while Meridian would raise prices by 10%.", "10%") is None


def test_a_passive_glued_to_its_auxiliary_is_no_past_tense(nlp):
    # "Dorrwas spotted": extraction glued "was" to the name; "spotted" has no object.
    assert _stem(nlp, "Last month,Jane Dorrwas spotted in Lisbon with friends.", "Lisbon") is None


def test_a_relative_count_on_the_noun_or_the_object_is_not_asked(nlp):
    assert _stem(nlp, "The Rivertown navy flew 10 more alleged gang members to Eastland on Monday.", "10") is None
    assert _stem(nlp, "Another 300 workers were laid off by Kestrel Airways on Monday.", "300") is None


def test_a_rate_that_is_an_increment_or_levied_on_nothing_named_is_not_asked(nlp):
    assert _stem(nlp, "Lakeport imposed additional tariffs of 34% on Rivertown goods.", "34%") is None
    assert _stem(nlp, "Mayor Hale imposed 10% blanket tariffs on Tuesday.", "10%") is None
    assert _stem(nlp, "Lakeport imposed 20% tariffs on top of existing levies.", "20%") is None
    assert _stem(nlp, "Mayor Hale set a blanket tariff of 10% on much of the wider region.", "10%") is None
    assert _stem(nlp, "Lakeport imposed tariffs of 20% on Rivertown steel on Monday.", "20%") == (
        "What tariff rate did Lakeport impose on Rivertown steel on April 7, 2025?")


def _stem_in(nlp, text: str, answer: str) -> str | None:
    """The stem for ``answer`` in whichever sentence of ``text`` holds it."""
    from okgen.generate.extractive import whole_sum
    from okgen.generate.stems import answer_kind, make_stem

    ent = next(e for e in (whole_sum(e) for e in nlp(text).ents) if e.text == answer)
    stem = make_stem(ent.sent, ent, answer_kind(ent), "April 12, 2025")
    return stem.question if stem else None


def test_a_sum_in_what_it_is_of_is_asked_how_much_in(nlp):
    assert _stem_in(nlp, "Rivertown's allies have announced $21 billion in additional military support for Lakeport.",
                    "$21 billion") == ("How much in additional military support for Lakeport have Rivertown's allies "
                                 "announced, as reported on April 12, 2025?")
    assert _stem_in(nlp, "Orbis Labs took an additional $3 billion in funding from Meridian Capital.",
                    "$3 billion") == "How much in funding from Meridian Capital did Orbis Labs take, as reported on April 12, 2025?"
    # Not cash, a time, a market session (how or when, not what); not where the money goes; not a
    # sum the verb takes with "for".
    refused = {"The Lakeport appeal raised $5 million in hours.": "$5 million",
               "Orbis Labs lost $5 billion in after-hours trading.": "$5 billion",
               "Orbis Labs invested $3 billion in new factories.": "$3 billion",
               "Police seized $40,000 in cash from the Kestrel depot.": "$40,000",
               "Small Orbis clients can qualify for $90,000 in free server credits.": "$90,000"}
    assert {text: _stem_in(nlp, text, answer) for text, answer in refused.items()} == dict.fromkeys(refused)


def test_a_price_keeps_no_seller_the_parse_hung_on_it(nlp):
    assert _stem_in(nlp, "Norvale Motors has agreed to buy the Volta brand for $1.38bn from Capri Holdings.",
                    "$1.38bn") == "For how much has Norvale Motors agreed to buy the Volta brand, as reported on April 12, 2025?"


def test_a_sum_is_the_number_without_the_words_on_its_kind(nlp):
    from okgen.generate.extractive import whole_sum

    sums = [whole_sum(e).text for t in ("Orbis Labs took an additional $3 billion in funding.",
                                        "The allies pledged a record $21 billion to Lakeport.",
                                        "Orbis paid a $5 million fine.")
            for e in nlp(t).ents if e.label_ == "MONEY"]
    assert sums == ["$3 billion", "$21 billion", "$5 million"]
    # A sum in words keeps its words ("a million dollars" is no "million dollars").
    assert [whole_sum(e).text for e in nlp("They paid a million dollars.").ents] == ["a million dollars"]


def test_a_date_written_as_an_ordinal_is_asked_with_ordinal_options(nlp):
    import random

    from okgen.generate.distractors import Pool, pick
    from okgen.generate.text import format_like, parse_date

    assert _stem(nlp, "The film Rivertown Nights will premiere May 19th at the Lakeport Film Festival.", "May 19th") == (
        "On what date will the film Rivertown Nights premiere at the Lakeport Film Festival, as reported on April 12, 2025?")
    when, style = parse_date("May 19th", 2025)
    assert (when, style) == (__import__("datetime").date(2025, 5, 19), "md_ord")
    assert [format_like(when.replace(day=d), style) for d in (1, 2, 3, 11, 22)] == \
        ["May 1st", "May 2nd", "May 3rd", "May 11th", "May 22nd"]
    assert format_like(when, "dm_ord") == "19th May" and format_like(when, "md") == "May 19"
    # An ISO date keeps its form.
    iso = pick("2025-05-19", "date", pool=Pool(), article_id="a", article_norm="", question="On what date?",
               rng=random.Random(0), year=2025, n=3)
    assert iso is not None and all(re.fullmatch(r"\d{4}-\d\d-\d\d", g) for g in iso), iso
    got = pick("May 19th", "date", pool=Pool(), article_id="a", article_norm="", question="On what date?",
               rng=random.Random(0), year=2025, n=3)
    assert got is not None and all(re.fullmatch(r"[A-Z][a-z]+ \d{1,2}(?:st|nd|rd|th)", g) for g in got), got
    # Within six days of the answer where that gives enough (a festival of May 13-24: no "August
    # 19th", no "May 31st").
    for seed in range(20):
        got = pick("May 19th", "date", pool=Pool(), article_id="a", article_norm="", question="On what date?",
                   rng=random.Random(seed), year=2025, n=3)
        assert all(abs((parse_date(g, 2025)[0] - when).days) <= 6 for g in got), got
    # Wider only where the six days leave too few, and then within three weeks: here the article
    # names every one of the six days (a date the article names is no option: it may be the
    # answer to the same question).
    import datetime as dt

    from okgen.generate.text import normalize

    week = normalize(" ".join(format_like(when + dt.timedelta(days=k), style) for k in range(-6, 7) if k))
    got = pick("May 19th", "date", pool=Pool(), article_id="a", article_norm=week, question="On what date?",
               rng=random.Random(0), year=2025, n=3)
    assert got is not None and all(6 < abs((parse_date(g, 2025)[0] - when).days) <= 21 for g in got), got


def test_a_role_many_hold_says_whom_the_question_asks_about(nlp):
    # A reviewer could not tell whom "Who was indicted on five counts of wire fraud ...?" and "Who is
    # paying a visit to Beijing ...?" asked about (news-dev 2025-04-10 and 04-11).
    assert _stem(nlp, "Lakeland state Rep. Tom Brant, 41, was charged with two counts of bribery on Friday.",
                 "Tom Brant") == "Which Lakeland state representative was charged with two counts of bribery on April 11, 2025?"
    assert _stem(nlp, "Ada Lind, the Lakeland lawmaker, is paying a visit to Lisbon this week.", "Ada Lind") == \
        "Which Lakeland lawmaker is paying a visit to Lisbon, as reported on April 12, 2025?"
    # An office one person holds names the answer to anyone who knows it, a portfolio too; a
    # possessor, a superlative, a capitalised title word: asked "Who".
    # A description after the name that cannot be the role leaves no question: "Who is paying a
    # visit to Lisbon?" is anyone.
    assert _stem(nlp, "Ada Lind, the minister for ports and coastal trade, is paying a visit to Lisbon this week.",
                 "Ada Lind") is None
    for text in ("Rivertown foreign minister Ada Lind is paying a visit to Lisbon this week.",
                 "The Kremlin's envoy Ada Lind is paying a visit to Lisbon this week.",
                 "Pro-democracy lawmaker Ada Lind is paying a visit to Lisbon this week.",
                 "Fellow senator Ada Lind is paying a visit to Lisbon this week."):
        assert _stem(nlp, text, "Ada Lind") == "Who is paying a visit to Lisbon, as reported on April 12, 2025?", text
    assert _stem(nlp, "Homeland Security Secretary Jane Dolan visited a prison in El Salvador.", "Jane Dolan") == \
        "Who visited a prison in El Salvador, as reported on April 12, 2025?"
    assert _stem(nlp, "Prime Minister Ada Lind is stepping in to seize control of Orbis Steel.", "Ada Lind") == \
        "Who is stepping in to seize control of Orbis Steel, as reported on April 12, 2025?"


def test_a_role_may_lengthen_the_question_and_a_time_without_its_clause_is_none(nlp):
    # The role is no clause material: a question as long as a "Who" one plus its role still stands.
    q = _stem(nlp, "Lakeland state Rep. Tom Brant, 41, was charged with four counts of wire fraud and two counts "
                   "of falsifying city council expense records on Friday, according to Lakeland police.", "Tom Brant")
    # ... and keeps the side whose word it is ("according to Lakeland police": a charge, not a verdict).
    assert q == ("Which Lakeland state representative was charged with four counts of wire fraud and two counts of "
                 "falsifying city council expense records according to Lakeland police, as reported on April 12, 2025?")
    assert len(q.split(",")[0].split()) > 24  # over the plain limit by less than the role's three words
    # "at a time [when relations are strained]": which time? The phrase points at a clause left out.
    assert _stem(nlp, "Ada Lind held talks with Lakeport officials at a time when relations are strained.",
                 "Ada Lind") is None
    assert _stem(nlp, "Ada Lind held talks with Lakeport officials at a time when relations are strained, in Lisbon.",
                 "Ada Lind") is None
    # "at the moment" is now.
    assert _stem(nlp, "Ada Lind is leading the Lakeland race at the moment.", "Ada Lind") == \
        "Who is leading the Lakeland race at the moment, as reported on April 12, 2025?"


def test_a_meeting_without_what_it_was_about_is_no_question(nlp):
    # "With whom did Newsom meet on April 14, 2025?" (news-dev 2025-04-14, its purpose cut as too
    # long): a reviewer called it a calendar detail that says nothing of the news.
    assert _stem(nlp, "Ada Lind also met with Lakeport Premier Tom Brant Friday to talk about ways of widening "
                      "the town's trade ties with its northern neighbours.", "Tom Brant") is None
    assert _stem(nlp, "Ada Lind spoke with Tom Brant about the port strike on Friday.", "Tom Brant") == (
        "With whom did Ada Lind speak about the port strike on April 11, 2025?")
    # Asked of either side, held as talks, by phone, with a title: still who and when alone.
    for text, answer in (("Tom Brant met Ada Lind on Friday.", "Ada Lind"),
                         ("Tom Brant met with Ada Lind on Friday.", "Tom Brant"),
                         ("Tom Brant held talks with Ada Lind on Friday.", "Ada Lind"),
                         ("Tom Brant spoke with Ada Lind by phone on Wednesday.", "Ada Lind"),
                         ("Tom Brant met with President Ada Lind on Friday.", "Tom Brant"),
                         ("Tom Brant had talks with Ada Lind on Friday.", "Ada Lind"),
                         ("Tom Brant spoke with Ada Lind by telephone on Wednesday.", "Ada Lind")):
        assert _stem(nlp, text, answer) is None, text
    assert _stem(nlp, "Tom Brant met with Ada Lind in Lisbon on Friday.", "Tom Brant") == (
        "Who met with Ada Lind in Lisbon on April 11, 2025?")


def test_a_title_with_us_in_it_is_a_title_and_a_source_is_no_part_of_the_question(nlp):
    # "US" is the country, not the pronoun "us": the title goes, the person is asked "Who"; the
    # outlet that reported it goes too, after the clause or before it.
    for text in ("Former US Vice President Ada Lind is considering a run for Lakeland governor in 2026, according "
                 "to NBC News.", "According to the New York Times, former US Vice President Ada Lind is considering "
                 "a run for Lakeland governor in 2026."):
        assert _stem(nlp, text, "Ada Lind") == \
            "Who is considering a run for Lakeland governor in 2026, as reported on April 12, 2025?", text
    q = _stem(nlp, "US envoy Ada Lind has travelled to Lisbon to meet the foreign minister on Friday.", "Ada Lind")
    assert q is not None and q.startswith("Which US envoy has travelled to Lisbon"), q


def test_a_which_role_stem_records_its_role(nlp):
    from okgen.generate.stems import answer_kind, make_stem

    sent = next(nlp("Lakeland state Rep. Tom Brant was indicted on five counts of wire fraud on Friday.").sents)
    ent = next(e for e in sent.ents if e.text == "Tom Brant")
    stem = make_stem(sent, ent, answer_kind(ent), "April 12, 2025")
    assert stem is not None and stem.question.startswith("Which Lakeland state representative was indicted")
    assert stem.role == "Lakeland state representative"
    sent = next(nlp("Tom Brant opened the new bridge over the river on Friday.").sents)
    ent = next(e for e in sent.ents if e.text == "Tom Brant")
    stem = make_stem(sent, ent, answer_kind(ent), "April 12, 2025")
    assert stem is not None and stem.role == "", stem


def test_a_figure_keeps_a_sides_claim_but_not_the_outlet_that_reported_it(nlp):
    q = _stem(nlp, "Orbis Motors will cut 700 jobs at its plant near Lakeport, according to CNBC.", "700")
    assert q == "How many jobs will Orbis Motors cut at its plant near Lakeport, as reported on April 12, 2025?", q
    q = _stem(nlp, "Lakeport police arrested 40 protesters in Rivertown on Friday, according to the Lakeport "
                   "interior ministry.", "40")
    assert q is not None and q.endswith("according to the Lakeport interior ministry?"), q
    # An outlet's own poll or tally is where the figure comes from: it stays.
    q = _stem(nlp, "Lakeport police arrested 40 protesters in Rivertown on Friday, according to a Reuters tally.", "40")
    assert q is not None and q.endswith("according to a Reuters tally?"), q


def test_a_figure_a_named_speaker_reports_is_asked_as_what_the_speaker_said(nlp):
    """A figure in a clause someone reports ("Ada Lind said Orbis had shipped 4,000 turbines")
    is that person's claim: the question keeps the speaker ("did Ada Lind say ..."), also when
    the clause's subject is the speaker's own pronoun ("Orbis said it would cut 300 jobs"). A
    speaker without a name ("he said") and a date (which date is asked: the saying's or the
    event's?) keep the plain form or none."""
    def stem(text, answer):
        return _stem(nlp, text, answer, "April 10, 2025")

    assert stem("Defence Minister Ada Lind said Rivertown had shipped 4,000 turbines to Lakeport since January.",
                "4,000") == ("How many turbines did Defence Minister Ada Lind say Rivertown had shipped to Lakeport "
                             "since January, as reported on April 10, 2025?")
    assert stem("Russia shipped 4,000 tanks to Belarus in March, Tom Brant said.", "4,000") == (
        "How many tanks did Tom Brant say Russia shipped to Belarus in March, as reported on April 10, 2025?")
    assert stem("Toyota said it is laying off 300 workers at a plant in Ohio.", "300") == (
        "How many workers did Toyota say it is laying off at a plant in Ohio, as reported on April 10, 2025?")
    assert stem("He said Rivertown shipped 4,000 turbines to Lakeport in March.", "4,000") == (
        "How many turbines did Rivertown ship to Lakeport in March, as reported on April 10, 2025?")
    assert stem("Toyota did not say it is laying off 300 workers at a plant in Ohio.", "300") is None
    assert stem("Tom Brant said Russia had not shipped 4,000 tanks to Belarus in March.", "4,000") is None
    # "injured 247 others": others than whom? (the ones killed, in the sentence before)
    assert stem("Lakeport's Ministry of Health reported on Monday that Russian shelling had injured 247 people.",
                "247") == "How many people had Russian shelling injured, as reported on April 10, 2025?"
    assert stem("The Ministry of Health in Lakeport said Sunday that Russian drones had wounded 247 people.",
                "247") == ("How many people did the Ministry of Health in Lakeport say Russian drones had wounded, "
                           "as reported on April 10, 2025?")
    assert stem("The Ministry of Health in Lakeport said Sunday that Russian drones had wounded 247 others.",
                "247") is None
    assert stem("Tom Brant said Rivertown will open the bridge on May 3.", "May 3") != (
        "On what date did Tom Brant say Rivertown will open the bridge, as reported on April 10, 2025?")


def test_this_year_is_written_as_the_news_day_s_year(nlp):
    """ "this year" is relative to the news day: kept (it bounds the figure) and written out as
    the year, so the question stands alone; before, the phrase made the clause unusable ("this"
    read as a pronoun) or left silently."""
    def stem(text, answer):
        return _stem(nlp, text, answer, "April 10, 2025")

    assert stem("Orbis Motors has cut 300 jobs this year.", "300") == (
        "How many jobs has Orbis Motors cut in 2025, as reported on April 10, 2025?")
    assert stem("Russia fired 4,000 drones at Lakeport over the first ten weeks of this year.", "4,000") == (
        "How many drones did Russia fire at Lakeport over the first ten weeks of 2025, as reported on April 10, 2025?")
    assert stem("Orbis Motors has cut 300 jobs at this plant.", "300") is None  # which plant?
