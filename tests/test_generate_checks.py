"""Programmatic checks (one named verdict each), near duplicates, balanced answer positions."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from okgen.generate.checks import CHECKS, check_candidate, near_duplicates
from okgen.generate.positions import balanced_positions, display_order, place
from okgen.generate.records import Candidate
from okgen.generate.text import normalize

ARTICLE = ("Halvorsen Energy will build a $2.3 billion battery factory near Gdansk, the company said on "
           "Thursday. Chief executive Ingrid Solberg said the plant would employ 1,800 people.")
NORM = normalize(ARTICLE)


def good(**kw) -> Candidate:
    base = dict(
        article_id="a1", index=0,
        question="How many people did Halvorsen Energy say on November 19, 2026 its Gdansk battery plant would employ?",
        choices=["1,800", "1,200", "2,400", "900"], answer="1,800", short_answer="1,800",
        rationale="Stated by the chief executive.",
        evidence="Chief executive Ingrid Solberg said the plant would employ 1,800 people.")
    base.update(kw)
    return Candidate(**base)


def test_a_good_candidate_passes_every_check():
    c = good()
    check_candidate(c, NORM)
    assert c.kept
    assert [v.name for v in c.verdicts] == [n for n in CHECKS if n not in ("schema", "question_count")]
    assert all(v.passed and v.stage == "check" for v in c.verdicts)


@pytest.mark.parametrize("change, verdict", [
    (dict(choices=["1,800", "1,200", "2,400"]), "four_distinct_choices"),
    (dict(choices=["1,800", "1,200", "1200", "900"]), "four_distinct_choices"),
    (dict(choices=["1,800", "1,200", " ", "900"]), "four_distinct_choices"),
    (dict(answer="1,900", short_answer="1,900"), "answer_in_choices"),
    (dict(choices=["1,850", "1,200", "2,400", "900"], answer="1,850", short_answer="1,850"), "answer_in_article"),
    (dict(evidence="The plant would employ many people, the company said."), "evidence_in_article"),
    (dict(question="According to the article, how many people will the Gdansk plant employ as of November 19, 2026?"),
     "no_article_reference"),
    (dict(question="How many people did Halvorsen Energy say its Gdansk battery plant would employ?"), "explicit_date"),
    (dict(question="How many in 2026?"), "explicit_date"),
    (dict(question="How many people did Halvorsen Energy say on November 19 its Gdansk plant would employ?"),
     "explicit_date"),  # which year?
    (dict(question="How many people will the Halvorsen plant that won 3 March contracts employ?"), "explicit_date"),
    (dict(question="According to the report, how many people will the Gdansk plant employ as of November 19, 2026?"),
     "no_article_reference"),
    (dict(question="How many people did this report say on November 19, 2026 the Gdansk plant would employ?"),
     "no_article_reference"),
    (dict(question="Who is quoted in the piece of November 19, 2026 on the Gdansk battery plant?"),
     "no_article_reference"),
    (dict(question="Employ? On May 3."), "length_bounds"),
    (dict(rationale="Stated. " * 400), "length_bounds"),
    # Four clauses of 17 words: a reading test of the quote, not an answer (held-out set 5).
    (dict(choices=[f"it would hire {n} people from the town and the region over the next five years or so" for n in
                   ("1,800", "900", "2,400", "1,200")],
          answer="it would hire 1,800 people from the town and the region over the next five years or so"),
     "length_bounds"),
    (dict(short_answer="the plant would employ exactly one thousand eight hundred people in total, a lot"),
     "short_answer"),
])
def test_each_check_rejects_with_its_verdict(change, verdict):
    c = good(**change)
    check_candidate(c, NORM)
    assert not c.kept
    failed = [v.name for v in c.verdicts if not v.passed]
    assert verdict in failed
    assert c.rejected_by == failed[0] and c.rejected_stage == "check"


@pytest.mark.parametrize("question", [
    "How many people will the Gdansk plant employ, according to the report by Amnesty International of May 2026?",
    "How many people will the Gdansk plant employ as of 19 November 2026?",
    "How many people will the Gdansk plant employ as of November 2026?",
    "How many people will the Gdansk plant employ as of 2026-11-19?",
])
def test_dated_questions_naming_outside_reports_pass(question):
    c = good(question=question)
    check_candidate(c, NORM)
    assert c.kept, c.rejected_by


def test_giveaways():
    long_answer = "Chief executive Ingrid Solberg"
    c = good(question="Who said on November 19, 2026 that the Gdansk battery plant would employ 1,800 people?",
             choices=[long_answer, "Anna", "Piotr", "Marek"], answer=long_answer, short_answer="Ingrid Solberg")
    check_candidate(c, NORM)
    assert c.rejected_by == "giveaway_length"
    c = good(choices=["1,800", "Gdansk", "Oslo", "Warsaw"])
    check_candidate(c, NORM)
    assert c.rejected_by == "giveaway_type"


def test_evidence_with_ellipsis_and_normalised_matching():
    c = good(evidence="Chief executive Ingrid Solberg said … 1,800 people", answer="1800",
             choices=["1800", "1850", "1900", "1950"], short_answer="1800")
    check_candidate(c, NORM)
    assert c.kept  # "1800" matches "1,800"; fragments around the ellipsis are each found


LAKEPORT = ("Lakeport's council said on Monday that seven ferries will serve the harbour from June, up from three, "
            "and that fares will rise by 25 percent, or 125% of last year's level for day passes.")


@pytest.mark.parametrize("choices", [
    ["Three", "Nine", "Seven", "7"],                      # a number word and its digits: two right options
    ["twenty-five", "25", "thirty", "forty"],
    ["125%", "125 percent", "100%", "150%"],
    ["125 per cent", "125%", "100%", "150%"],
    ["one hundred ferries", "100 ferries", "ten ferries", "twelve ferries"],
    ["2 million", "two million", "3 million", "4 million"],
])
def test_number_words_and_digits_are_one_choice(choices):
    c = good(question="How many ferries did Lakeport's council say on May 4, 2026 will serve the harbour from June?",
             choices=choices, answer=choices[2] if choices[0] == "Three" else choices[0], short_answer="seven",
             evidence="seven ferries will serve the harbour from June")
    check_candidate(c, normalize(LAKEPORT))
    assert c.rejected_by == "four_distinct_choices"


def test_distinct_numbers_in_words_and_digits_stay_distinct():
    c = good(question="How many ferries did Lakeport's council say on May 4, 2026 will serve the harbour from June?",
             choices=["Seven", "3", "Nine", "twenty-five"], answer="Seven", short_answer="seven",
             evidence="seven ferries will serve the harbour from June")
    check_candidate(c, normalize(LAKEPORT))
    assert c.kept, c.rejected_by


@pytest.mark.parametrize("answer", ["nine", " NINE ", "9"])
def test_an_answer_written_otherwise_than_its_choice_is_that_choice(answer):
    article = "Orbis Rail said on Tuesday it will open nine new stations in Norvik next year."
    c = good(question="How many new stations did Orbis Rail say on May 5, 2026 it will open in Norvik?",
             choices=["Four", "Nine", "Twelve", "Six"], answer=answer, short_answer="nine",
             evidence="it will open nine new stations in Norvik")
    check_candidate(c, normalize(article))
    assert c.kept, c.rejected_by
    assert c.answer == "Nine" and c.distractors() == ["Four", "Twelve", "Six"]  # the choice as written


def test_choice_keys_read_numbers_as_written():
    from okgen.generate.checks import choice_key

    assert choice_key("Seven") == choice_key("7") and choice_key("twenty-five") == choice_key("25")
    assert choice_key("125%") == choice_key("125 percent") == choice_key("125 per cent")
    assert choice_key("one hundred and five") == choice_key("105")
    assert choice_key("$2.3 billion") == choice_key("$2,300,000,000")
    # Two numbers in a row stay two; a name with a number word is that name, only its number unified.
    assert choice_key("twenty twenty") == " 20 20 " and choice_key("five and six") == " 5 and 6 "
    assert choice_key("One Nation") == choice_key("1 Nation") != choice_key("Nation")


def test_the_validator_judges_the_review_rubrics_criteria():
    # A user walkthrough found background questions and wrong-kind options passing the validator:
    # it judges REVIEW.md's day_news, distractors_ok and no_giveaway too, and each one drops.
    from okgen.generate.agents import load_agent, packaged_agents_dir
    from okgen.generate.validator import LLMValidator
    from okgen.llm import ChatResult
    from okgen.schema import Decoding

    spec = load_agent("validator", packaged_agents_dir())
    val = LLMValidator(spec, None, Decoding())  # type: ignore[arg-type]  # no call is made
    names = [n for n, _ in val.criteria]
    assert {"day_news", "distractors_ok", "no_giveaway"} <= set(names) and len(set(names)) == len(names)
    assert set(val.schema.model_fields) == set(names)
    prompt = spec.render("system", **val._fixed)
    assert all(f"- {n}: " in prompt and f'"{n}"' in prompt for n in ("day_news", "distractors_ok", "no_giveaway"))
    for failing in ("day_news", "distractors_ok", "no_giveaway"):
        c = good()
        parsed = val.schema(**{n: {"reason": "background" if n == failing else "fine", "passed": n != failing}
                               for n in names})
        val.apply(c, ChatResult(text="{}", parsed=parsed))
        assert c.rejected_by == failing and c.rejected_stage == "validator"


def test_schema_failures_skip_content_checks():
    c = Candidate(article_id="a", index=0)
    c.add("schema", False, reason="choices: field required")
    check_candidate(c, NORM)
    assert c.rejected_by == "schema" and len(c.verdicts) == 1


def test_near_duplicates():
    items = [
        ("How many people will Halvorsen Energy's Gdansk plant employ, as of November 21, 2026?", "1,800"),
        ("As of November 21, 2026, how many people will the Gdansk plant of Halvorsen Energy employ?", "1,800"),
        ("How much will Halvorsen Energy invest in its Gdansk plant, as of November 21, 2026?", "$2.3 billion"),
        ("How many people will Halvorsen Energy's Gdansk plant employ, as of November 21, 2026?", "2,000"),
        ("Who leads Halvorsen Energy as of November 21, 2026?", "1,800"),
    ]
    assert near_duplicates(items) == {1: 0, 3: 0}


def test_positions_are_exactly_balanced():
    for n in (0, 1, 3, 4, 5, 97, 400, 1001):
        pos = balanced_positions(n, seed=3)
        counts = Counter(pos)
        assert len(pos) == n and set(counts) <= {0, 1, 2, 3}
        assert all(n // 4 <= counts.get(p, 0) <= -(-n // 4) for p in range(4))
    assert balanced_positions(50, 3) == balanced_positions(50, 3) != balanced_positions(50, 4)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(0, 500), seed=st.integers(0, 2**31))
def test_positions_balanced_property(n, seed):
    counts = Counter(balanced_positions(n, seed))
    assert sum(counts.values()) == n
    assert max(counts.values(), default=0) - min([counts.get(p, 0) for p in range(4)]) <= 1


def test_place_puts_the_answer_where_asked():
    for pos in range(4):
        choices, idx = place("right", ["w1", "w2", "w3"], pos, seed=1, key="q")
        assert idx == pos and choices[idx] == "right" and sorted(choices) == ["right", "w1", "w2", "w3"]
    assert place("r", ["a", "b", "c"], 0, 1, "q")[0] == place("r", ["a", "b", "c"], 0, 1, "q")[0]
    orders = {tuple(display_order(4, s, "k")) for s in range(20)}
    assert len(orders) > 5


def test_priority_limiter_serves_generator_calls_first():
    import asyncio

    from okgen.generate.runner import PriorityLimiter

    async def main():
        lim = PriorityLimiter(1)
        order = []

        release = asyncio.Event()  # no clock: the holder keeps the slot until the others queue

        async def job(name, prio, hold=None):
            async with lim.at(prio):
                order.append(name)
                if hold is not None:
                    await hold.wait()

        first = asyncio.create_task(job("holder", 1, release))
        for _ in range(3):
            await asyncio.sleep(0)  # let the holder take the slot
        waiters = [asyncio.create_task(job(f"v{i}", 1)) for i in range(3)] + [asyncio.create_task(job("g", 0))]
        cancelled = asyncio.create_task(job("gone", 0))
        for _ in range(3):
            await asyncio.sleep(0)  # every waiter queued
        cancelled.cancel()
        await asyncio.sleep(0)
        release.set()
        await asyncio.gather(first, *waiters, return_exceptions=True)
        return order, lim.free

    order, free = asyncio.run(main())
    assert order == ["holder", "g", "v0", "v1", "v2"] and free == 1


def test_earlier_days_are_compared_by_their_evidence_too():
    # Two days' outlets reporting one fact in other words (news-dev, April 10 and 11, 2025): the
    # questions share too few words, their evidence states the same figure and most of the fact
    # (paraphrased).
    prior = [("Which country retaliated with a 40 percent levy on US ethanol, as reported on April 10, 2025?",
              "Brazil")]
    prior_ev = ["Brazil retaliated Tuesday with a 40 percent levy on US ethanol, raising its duty from 18 percent."]
    item = ("Which country is imposing a 40% duty on American ethanol imports, as reported on April 11, 2025?", "Brazil")
    ev = "Brazil announced that it is imposing a 40% duty on US ethanol, in response to the 50% tariff Trump set."
    assert near_duplicates([item], prior=prior) == {}  # by the question text alone: missed
    assert near_duplicates([item], prior=prior, evidence=[ev], prior_evidence=prior_ev) == {0: -1}
    # Another fact with the same answer and figure-free evidence is kept.
    other = ("Which country restricted imports of American beef, as reported on April 11, 2025?", "Brazil")
    other_ev = "Brazil announced an immediate curb on imports of American beef as the country hit back."
    assert near_duplicates([other], prior=prior, evidence=[other_ev], prior_evidence=prior_ev) == {}


def test_a_numeric_answer_is_the_shared_figure_of_one_fact():
    # Two days' outlets giving one tariff level in other words (news-dev, April 11 and 12, 2025,
    # paraphrased): the answer is the figure both state; "percent" is its unit, no fact word.
    prior = [("To what percentage has Ottawa raised total levies on US steel, as reported on April 11, 2025?", "45%")]
    prior_ev = ["In a tit-for-tat move, Ottawa has raised total levies on US steel to 45%, while Washington "
                "answered on Friday."]
    item = ("To what percentage has the total levy on American steel been lifted, as reported on April 12, 2025?", "45%")
    ev = "The total levy on American steel has been lifted to 45%."
    assert near_duplicates([item], prior=prior, evidence=[ev], prior_evidence=prior_ev) == {0: -1}
    # The same figure for another fact stays: shares of a carmaker fell 45% in a year.
    other = ("By what percentage did shares in Kestrel Motors fall over the year, as reported on April 12, 2025?", "45%")
    other_ev = "Shares in Kestrel Motors fell 45% over the year as sales of its electric cars slowed."
    assert near_duplicates([other], prior=prior, evidence=[other_ev], prior_evidence=prior_ev) == {}


def test_a_percentage_written_two_ways_is_one_answer():
    # news-dev 2025-04-11 and 04-12 (paraphrased): one tariff level as "125 percent" and "125%".
    prior = [("How high a tariff on Canadian timber did Washington retaliate with, as reported on April 11, 2025?",
              "35 percent")]
    prior_ev = ["Washington retaliated Thursday with a 35 percent tariff on Canadian timber."]
    item = ("How high a tariff on Canadian timber did Washington impose, as reported on April 12, 2025?", "35%")
    ev = "In response, Washington imposed a 35% tariff on Canadian timber, while criticising Ottawa's rules."
    assert near_duplicates([item], prior=prior, evidence=[ev], prior_evidence=prior_ev) == {0: -1}
    british = ("How high a tariff on Canadian timber did Washington impose, as reported on April 12, 2025?", "35 per cent")
    assert near_duplicates([british], prior=prior, evidence=[ev], prior_evidence=prior_ev) == {0: -1}


def test_one_figure_for_measures_aimed_at_two_countries_is_two_facts():
    # news-dev 2025-04-10 and 04-11 (paraphrased, other countries): a tariff level one side set
    # and the same level the other side answered with are two facts, not one asked twice.
    prior = [("To what percentage did Ottawa lift duties on Mexican steel on April 9, 2025, in answer to new fees?",
              "60%")]
    prior_ev = ["On Wednesday Ottawa lifted its duties on Mexican steel to 60%, answering the fees Mexico City set."]
    item = ("How high a duty on Canadian steel did Mexico hit back with, as reported on April 11, 2025?", "60 percent")
    ev = "Mexico hit back on Friday with a 60 percent duty on Canadian steel, in answer to the duties Ottawa set."
    assert near_duplicates([item], prior=prior, evidence=[ev], prior_evidence=prior_ev) == {}
    # The same measure asked again in other words is still one fact.
    again = ("How high a duty on Mexican steel did Canada set, as reported on April 11, 2025?", "60 percent")
    again_ev = "Canada set a 60 percent duty on Mexican steel, answering the fees Mexico City had set on Wednesday."
    assert near_duplicates([again], prior=prior, evidence=[again_ev], prior_evidence=prior_ev) == {0: -1}


def test_an_answer_glued_to_a_word_by_extraction_is_found_in_the_evidence():
    # news-dev's text glues words at links ("adapted fromPersuader", "about$1", "$350Ultrahuman";
    # here invented): the answer, written properly, is found as the evidence writes it.
    text = ("Season 3 was adapted fromTidewater, the 7th novel. The city pays about$1 in every $7 spent. "
            "I like the $350Harbour Ring. LongtimeNorvikdataminerLars Bergwith a new video.")
    norm = normalize(f"Title\n{text}")
    for answer, evidence in [("Tidewater", "Season 3 was adapted fromTidewater, the 7th novel."),
                             ("$1 in every $7", "The city pays about$1 in every $7 spent."),
                             ("$350", "I like the $350Harbour Ring."),
                             ("Lars Berg", "LongtimeNorvikdataminerLars Bergwith a new video.")]:
        c = Candidate(article_id="a", index=0, question="Which novel was season 3 adapted from, as of April 12, 2025?",
                      choices=[answer, "Saltmarsh", "Breakwater", "Lighthouse"], answer=answer, short_answer=answer,
                      evidence=evidence)
        check_candidate(c, norm)
        got = {v.name: v.passed for v in c.verdicts}
        assert got["answer_in_article"] and got["short_answer"], (answer, c.verdicts)
    # Not a part of a word ("Tide" inside "Tidewater", "Lars Ber" inside "Bergwith"), nor an
    # answer the evidence lacks.
    for answer in ("Tide", "Saltmarsh"):
        c = Candidate(article_id="a", index=0, question="Which novel was season 3 adapted from, as of April 12, 2025?",
                      choices=[answer, "Dune", "Breakwater", "Lighthouse"], answer=answer, short_answer=answer,
                      evidence="Season 3 was adapted fromTidewater, the 7th novel.")
        check_candidate(c, norm)
        assert {v.name: v.passed for v in c.verdicts}["answer_in_article"] is False, answer
    from okgen.generate.text import glued_in

    assert not glued_in("LongtimeNorvikdataminerLars Bergwith a new video.", "Lars Ber")
    assert not glued_in("Jonas said so.", "Jon") and not glued_in("Jonwith said so.", "jon")


def test_a_range_of_days_with_its_year_is_an_explicit_date():
    from okgen.generate.text import has_explicit_date

    assert has_explicit_date("Over the weekend of May 3\u20134, 2026, who won the regatta?")
    assert has_explicit_date("Between May 3-4, 2026, who won the regatta?")
    assert not has_explicit_date("Over the weekend of May 3\u20134, who won the regatta?")
