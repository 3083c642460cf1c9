"""The quality gates on small hand-written news sentences: each gate tripped, and passed."""

from __future__ import annotations

import datetime as dt

import pytest

from okgen.generate.checks import near_duplicates
from okgen.generate.dayset import balance_outlets, outlet_caps
from okgen.generate.gates import GATES, GateWorker, apply_gates, apply_gates_many
from okgen.generate.overlap import MAX_SHARED_RUN, longest_shared_run
from okgen.generate.records import Candidate
from okgen.hashing import sha256_text
from okgen.schema import Article

spacy = pytest.importorskip("spacy")

DAY = dt.date(2026, 11, 21)
TEXT = (
    "Norvik Shipping said on Tuesday that it would cut 1,200 jobs across its European ports after a sharp fall "
    "in container traffic. Chief executive Marta Lindqvist told reporters in Rotterdam that the cuts were "
    "painful but necessary. The company expects the restructuring to save 140 million euros a year. "
    "Unions in the Netherlands called a strike for next week. Photo by Jan de Vries/Getty Images. "
    "Sign up for our newsletter to get the latest shipping news in your inbox."
)
ARTICLE = Article(id="a1", url="https://example.org/a1", canonical_url="https://example.org/a1", source="example",
                  title="Norvik Shipping to cut 1,200 jobs", published_at=dt.datetime(2026, 11, 21, 9, tzinfo=dt.timezone.utc),
                  fetched_at=dt.datetime(2026, 11, 21, 10, tzinfo=dt.timezone.utc), language="en", text=TEXT,
                  text_sha256=sha256_text(TEXT), extractor="test", date=DAY)

GOOD = dict(
    question="How many jobs did Norvik Shipping announce it would cut at its European ports in November 2026?",
    choices=["1,200", "800", "2,500", "450"], answer="1,200", answer_type="CARDINAL",
    evidence="Norvik Shipping said on Tuesday that it would cut 1,200 jobs across its European ports",
)

# A person asked for, with three other people as options.
PERSON = dict(choices=["Marta Lindqvist", "Jonas Berg", "Erik Dahl", "Sofia Holm"], answer="Marta Lindqvist",
              answer_type="PERSON")


@pytest.fixture(scope="module")
def nlp():
    from okgen.generate.nlp import load_pipeline

    try:
        return load_pipeline()
    except Exception as e:  # noqa: BLE001 - no pipeline installed: these tests need one
        pytest.skip(f"no spaCy pipeline: {e}")


def gate(nlp, **kw) -> Candidate:
    c = Candidate(article_id="a1", index=0, **{**GOOD, **kw})
    apply_gates(ARTICLE, [c], nlp=nlp)
    return c


def failed(c: Candidate) -> dict[str, str]:
    return {v.name: v.reason or "" for v in c.verdicts if not v.passed}


def test_a_good_question_passes_every_gate(nlp):
    c = gate(nlp)
    assert [v.name for v in c.verdicts] == list(GATES)
    assert failed(c) == {} and c.kept


def test_boilerplate(nlp):
    c = gate(nlp, evidence="Photo by Jan de Vries/Getty Images.")
    assert "boilerplate" in failed(c) and c.rejected_by == "boilerplate"
    c = gate(nlp, question="Which newsletter brings the latest shipping news to your inbox, as reported in November 2026?",
             evidence="Sign up for our newsletter to get the latest shipping news in your inbox.")
    assert "page furniture" in failed(c)["boilerplate"]


def test_fluency_in_the_stem_and_every_option(nlp):
    c = gate(nlp, question="How many jobs did Norvik Shippinghas cut at its ports in RotterdamThe week of November 2026?")
    assert "run-together" in failed(c)["fluency"]
    c = gate(nlp, choices=["1,200", "800", "WORLD WORLD A", "450"])
    assert "WORLD WORLD A" in failed(c)["fluency"]
    c = gate(nlp, choices=["1,200", "800", "(2,500", "450"])
    assert "unbalanced" in failed(c)["fluency"]
    # Two capitalised words shout; a hyphen joins two into one acronym (a party's "PDCI-RDA").
    c = gate(nlp, question="Which NORVIK PORTS manager led the PDCI-RDA delegation to Oslo in November 2026?")
    assert failed(c)["fluency"] == "all-caps shouting"
    c = gate(nlp, question="Who led the Norvik PDCI-RDA party's delegation to Oslo in November 2026?",
             **PERSON,
             evidence="Marta Lindqvist led the PDCI-RDA delegation to Oslo.")
    assert "fluency" not in failed(c)
    c = gate(nlp, question="Jobs at Norvik Shipping ports in November 2026")
    assert "not a question" in failed(c)["fluency"]
    # CamelCase brands and ordinary words are not run-together.
    c = gate(nlp, question="How many jobs did Norvik Shipping, a YouTube and LinkedIn advertiser, cut in November 2026?")
    assert "fluency" not in failed(c)


def test_giveaway(nlp):
    c = gate(nlp, question="Who leads Norvik Shipping as its chief executive, Marta or another manager, in November 2026?",
             **PERSON,
             evidence="Chief executive Marta Lindqvist told reporters")
    assert "Marta" in failed(c)["giveaway"]
    c = gate(nlp, question="Which NSL vessel operator announced 1,200 job cuts at its European ports in November 2026?",
             choices=["Norvik Shipping Lines", "Baltic Freight", "Atlas Ports", "Hansa Cargo"],
             answer="Norvik Shipping Lines", answer_type="ORG", evidence=GOOD["evidence"])
    assert "initials" in failed(c)["giveaway"]
    c = gate(nlp, choices=["1,200", "many", "several", "some"])
    assert "only option of its form" in failed(c)["giveaway"]
    # An acronym among names is no outlier of form (held-out set 6: "X" among other platforms).
    c = gate(nlp, question="Which platform did Norvik Shipping choose for its press statements in November 2026?",
             choices=["NSX", "Harbour Wire", "Portline", "Dockside"], answer="NSX", answer_type="ORG",
             evidence="Norvik Shipping said it would post its press statements only on NSX from now on.")
    assert "giveaway" not in failed(c)
    # The answer's country named another way in the stem (news-dev: "talks with Egyptian
    # mediators in Cairo", answer Egypt; "Israeli" with the answer Israel).
    c = gate(nlp, question="Which country hosted talks between Egyptian mediators and Hamas in November 2026?",
             choices=["Egypt", "Qatar", "Jordan", "Turkey"], answer="Egypt", answer_type="GPE",
             evidence="Unions in the Netherlands called a strike for next week.")
    assert "'Egyptian' names the answer's country" in failed(c)["giveaway"]
    c = gate(nlp, question="Which country did Egyptian mediators accuse of stalling the talks in November 2026?",
             choices=["Israel", "Qatar", "Jordan", "Turkey"], answer="Israel", answer_type="GPE",
             evidence="Unions in the Netherlands called a strike for next week.")
    assert "giveaway" not in failed(c)
    # A seat of power names its holder: "in the Oval Office" with the president as the answer.
    c = gate(nlp, question="With whom did Chilean President Gabriel Boric meet in the Oval Office in November 2026?",
             choices=["Joe Lindqvist", "Marco Rubio", "Donald Trump", "JD Vance"], answer="Donald Trump",
             answer_type="PERSON", evidence="Chilean President Gabriel Boric and President Donald Trump talked for an hour in the Oval Office.")
    assert "'Oval Office' names the answer's office" in failed(c)["giveaway"]
    c = gate(nlp, question="With whom did Chilean President Gabriel Boric meet in the Oval Office in November 2026?",
             choices=["Susie Wiles", "Marco Rubio", "Scott Bessent", "JD Vance"], answer="Marco Rubio",
             answer_type="PERSON", evidence="Chilean President Gabriel Boric and Secretary of State Marco Rubio talked for an hour in the Oval Office.")
    assert "giveaway" not in failed(c)



def test_a_leader_titled_with_the_answers_country_gives_it_away_for_every_generator(nlp):
    # An LLM's question as the offline generator once wrote one: the source titles the person
    # with the answer's country, so the name alone answers "which country".
    ev = "Envoy Joe Lindqvist sat down with Russian President Ivan Petrov for four hours in Kazan."
    c = gate(nlp, question="In which country did the envoy Joe Lindqvist meet Ivan Petrov in November 2026?",
             choices=["Russia", "Turkey", "Hungary", "Serbia"], answer="Russia", answer_type="GPE", evidence=ev)
    assert failed(c)["giveaway"] == "the stem's 'Ivan Petrov' is titled with the answer's country"
    # So does it for the country's capital among other capitals ...
    c = gate(nlp, question="In which city did the envoy Joe Lindqvist meet Ivan Petrov in November 2026?",
             choices=["Moscow", "Ankara", "Budapest", "Belgrade"], answer="Moscow", answer_type="GPE", evidence=ev)
    assert failed(c)["giveaway"] == "the stem's 'Ivan Petrov' is titled with the answer's country"
    # ... not among options all of that country.
    from okgen.generate.precision import leader_giveaway

    assert leader_giveaway("Where did Lindqvist meet Ivan Petrov?", "Moscow", ev, ["Russia", "Moscow", "Russian"]) is None
    # A person the source titles with another country is no clue.
    c = gate(nlp, question="In which country did the envoy Joe Lindqvist meet Emre Kaya in November 2026?",
             choices=["Russia", "Turkey", "Hungary", "Serbia"], answer="Russia", answer_type="GPE",
             evidence="Envoy Joe Lindqvist sat down with Turkish President Emre Kaya for four hours in Kazan.")
    assert "giveaway" not in failed(c)


def test_type_agreement(nlp):
    c = gate(nlp, question="Which company said in November 2026 that its restructuring was painful but necessary?",
             choices=["Marta Lindqvist", "Jonas Berg", "Erik Dahl", "Sofia Holm"], answer="Marta Lindqvist",
             answer_type=None, evidence="Chief executive Marta Lindqvist told reporters in Rotterdam")
    assert "organisation but the answer is PERSON" in failed(c)["type_agreement"]
    c = gate(nlp, question="When did unions in the Netherlands call a strike against Norvik Shipping's job cuts?",
             choices=["1,200", "800", "2,500", "450"])
    assert "date" in failed(c)["type_agreement"]
    c = gate(nlp, question="Who told reporters in Rotterdam in November 2026 that Norvik Shipping's cuts were necessary?",
             choices=["Marta Lindqvist", "Jonas Berg", "Erik Dahl", "Sofia Holm"], answer="Marta Lindqvist",
             answer_type=None, evidence="Chief executive Marta Lindqvist told reporters in Rotterdam")
    assert "type_agreement" not in failed(c)


def test_type_agreement_reads_the_writers_own_options(nlp):
    # The tagger calls the answer nothing useful ("Jingye"-like names), but the writer's own
    # options are companies: "Which person ..." is the wrong question word.
    c = gate(nlp, question="Which person bought Veldoria Steel in 2020 and said in November 2026 it had invested £1 billion?",
             choices=["Qianye", "Marlow Holdings", "Hengda Group", "Greybull Capital"], answer="Qianye",
             answer_type=None, evidence="Qianye took over Veldoria Steel five years ago and reports spending £1 billion on the works")
    assert failed(c)["type_agreement"].startswith("the question asks for a person but its options are organisations")
    # People as the options of "Which company ...": the same.
    c = gate(nlp, question="Which company did Norvik Shipping appoint as its chief executive in November 2026?",
             choices=["Qianye", "Jonas Berg", "Erik Dahl", "Marta Lindqvist"], answer="Qianye", answer_type=None,
             evidence="Norvik Shipping named its new chief executive on Monday")  # no label for the answer
    assert "its options are people" in failed(c)["type_agreement"]
    # "Who" asks for a person or a body: companies as options are fine; so is a person's question
    # with one stray company among people.
    c = gate(nlp, question="Who bought Veldoria Steel in 2020 and said in November 2026 it had invested £1 billion?",
             choices=["Qianye", "Marlow Holdings", "Hengda Group", "Greybull Capital"], answer="Qianye",
             answer_type=None, evidence="Qianye took over Veldoria Steel five years ago and reports spending £1 billion on the works")
    assert "type_agreement" not in failed(c)
    c = gate(nlp, question="Which person did Norvik Shipping appoint as its chief executive in November 2026?",
             choices=["Marta Lindqvist", "Jonas Berg", "Erik Dahl", "Marlow Holdings"], answer="Marta Lindqvist",
             answer_type=None, evidence="Chief executive Marta Lindqvist told reporters in Rotterdam")
    assert "type_agreement" not in failed(c)


def test_self_contained(nlp):
    c = gate(nlp, question="How many jobs did he say would go at the ports in November 2026?")
    assert "refers to no one named" in failed(c)["self_contained"]
    c = gate(nlp, question="How many points did the upcoming Falcon graphics card by Norvik score in November 2026?")
    assert failed(c)["self_contained"] == "'the upcoming' names a thing only as not yet out"
    c = gate(nlp, question="It said how many jobs would go at European ports in November 2026?")
    assert "opens with the pronoun" in failed(c)["self_contained"]
    c = gate(nlp, question="How many jobs did the company say it would cut at its ports in November 2026?")
    assert "'the company' with no org named" in failed(c)["self_contained"]
    c = gate(nlp, question="How many jobs did Norvik Shipping say its chief would cut at the ports in November 2026?")
    assert "self_contained" not in failed(c)
    # What "the company" refers to is named before it or right after it, not later as another body.
    c = gate(nlp, question="How much had the parent company turned down from the Norwegian government in November 2026?")
    assert "'the parent company' with no org named" in failed(c)["self_contained"]
    c = gate(nlp, question="How many jobs did the shipping company Norvik Shipping cut at the ports in November 2026?")
    assert "self_contained" not in failed(c)
    c = gate(nlp, question="How many jobs did the shipping company, Norvik Shipping, cut at the ports in November 2026?")
    assert "self_contained" not in failed(c)
    c = gate(nlp, question="After Norvik Shipping's merger, how many jobs did the company cut in Oslo in November 2026?")
    assert "self_contained" not in failed(c)


def test_stem_overlap_counts_ordinary_tokens_only(nlp):
    copied = "Who told reporters in Rotterdam that the cuts were painful but necessary at Norvik Shipping in November 2026?"
    c = gate(nlp, question=copied)
    assert "stem_overlap" in failed(c)
    assert longest_shared_run(copied, TEXT, nlp=nlp) > MAX_SHARED_RUN
    # Names inside a shared run do not count: only ordinary words do.
    assert longest_shared_run("Chief executive Marta Lindqvist told reporters in Rotterdam?", TEXT,
                              names=["Marta Lindqvist", "Rotterdam"]) == 5
    assert longest_shared_run("Chief executive Marta Lindqvist told reporters in Rotterdam?", TEXT, names=[]) == 8
    assert longest_shared_run("Nothing here matches at all", TEXT, names=[]) <= 1


def test_malformed_and_already_rejected_candidates_are_not_gated(nlp):
    c = Candidate(article_id="a1", index=0, **GOOD)
    c.add("schema", False, reason="missing choices")
    apply_gates(ARTICLE, [c], nlp=nlp)
    assert [v.name for v in c.verdicts] == ["schema"]


VARIANTS = [
    {},
    dict(evidence="Photo by Jan de Vries/Getty Images."),
    dict(question="How many jobs did he say would go at the ports in November 2026?"),
    dict(question="Which company said in November 2026 that its restructuring was painful but necessary?",
         choices=["Marta Lindqvist", "Jonas Berg", "Erik Dahl", "Sofia Holm"], answer="Marta Lindqvist", answer_type=None,
         evidence="Chief executive Marta Lindqvist told reporters in Rotterdam"),
    dict(choices=["1,200", "many", "several", "some"]),
]


def verdicts(cands: list[Candidate]) -> list[list[tuple[str, bool, str | None]]]:
    return [[(v.name, v.passed, v.reason) for v in c.verdicts] for c in cands]


def test_batched_gates_of_several_articles_match_one_article_at_a_time(nlp):
    """One batched parse (repeated texts parsed once, contexts by the entity recogniser alone)
    gives every candidate the verdicts it gets alone, and the same answer entities as the
    tagger-and-entities parse."""
    from okgen.generate.gates import _DISABLE, _context, _ner_only

    alone = [Candidate(article_id="a1", index=i, **{**GOOD, **kw}) for i, kw in enumerate(VARIANTS)]
    for c in alone:
        apply_gates(ARTICLE, [c], nlp=nlp)
    batch = [Candidate(article_id="a1", index=i, **{**GOOD, **kw}) for i, kw in enumerate(VARIANTS)]
    other = ARTICLE.model_copy(update={"id": "a2"})
    twice = [Candidate(article_id="a2", index=i, **{**GOOD, **kw}) for i, kw in enumerate(VARIANTS)]
    apply_gates_many([(ARTICLE, batch[:2]), (other, twice), (ARTICLE, batch[2:])], nlp=nlp)
    assert verdicts(batch) == verdicts(alone) == verdicts(twice)
    assert {v.name for c in alone for v in c.verdicts if not v.passed} >= {"boilerplate", "self_contained", "giveaway",
                                                                           "type_agreement"}
    texts = [_context(c) for c in alone] + [TEXT]
    full = [[(e.text, e.label_) for e in d.ents] for d in nlp.pipe(texts, disable=list(_DISABLE))]
    ner = [[(e.text, e.label_) for e in d.ents] for d in nlp.pipe(texts, disable=list(_ner_only(nlp)))]
    assert full == ner and any(full)


def test_the_shortcuts_give_the_full_computations_verdicts(nlp):
    """Contexts parsed only for stems asking for a type, the article indexed for its stems' tokens
    only, an option's fluency judged once: the verdicts are those of every context parsed, the
    whole article indexed and every option judged."""
    from okgen.generate import gates as g
    from okgen.generate.fluency import fluency_problems
    from okgen.generate.overlap import ArticleTokens

    untyped = dict(question="What did Norvik Shipping say in November 2026 about its European ports?",
                   choices=["cut 1,200 jobs", "hire 800 staff", "close two ports", "buy a rival"], answer="cut 1,200 jobs")
    kws = [*VARIANTS, untyped, {**untyped, "answer": ""}]
    fast = [Candidate(article_id="a1", index=i, **{**GOOD, **kw}) for i, kw in enumerate(kws)]
    apply_gates_many([(ARTICLE, fast)], nlp=nlp)
    slow = [Candidate(article_id="a1", index=i, **{**GOOD, **kw}) for i, kw in enumerate(kws)]
    full = ArticleTokens(f"{ARTICLE.title}\n{ARTICLE.text}")
    for c in slow:
        stem, context = nlp(c.question), nlp(g._context(c))
        g.gate_candidate(c, stem, g.answer_label(c, context), full, nlp,
                         {x: fluency_problems(x, nlp, option=True) for x in c.choices})
    assert verdicts(fast) == verdicts(slow)
    assert not g.asks_type(untyped["question"]) and g.asks_type(GOOD["question"])


def test_the_gate_worker_gates_articles_off_the_event_loop(nlp, monkeypatch):
    """Articles queued while a batch is parsed make the next batch; each caller gets its own
    article's verdicts; the event loop keeps running meanwhile."""
    import asyncio
    import threading

    worker = GateWorker(nlp)
    seen: list[str] = []
    real = apply_gates_many

    def spy(jobs, nlp=None):
        seen.append(threading.current_thread().name)
        return real(jobs, nlp=nlp)

    cands = [[Candidate(article_id=f"a{j}", index=i, **{**GOOD, **kw}) for i, kw in enumerate(VARIANTS)]
             for j in range(4)]
    ticks = 0

    async def ticker(done: asyncio.Event) -> None:
        nonlocal ticks
        while not done.is_set():
            ticks += 1
            await asyncio.sleep(0)

    async def main() -> None:
        done = asyncio.Event()
        t = asyncio.create_task(ticker(done))
        await asyncio.gather(*(worker.apply(ARTICLE.model_copy(update={"id": f"a{j}"}), cands[j]) for j in range(4)))
        done.set()
        await t

    monkeypatch.setattr("okgen.generate.gates.apply_gates_many", spy)
    asyncio.run(main())
    assert seen and all(name != threading.main_thread().name for name in seen)
    assert len(seen) == 1  # the four articles queued in one loop turn: one batch
    assert ticks > 1
    assert all(verdicts(c) == verdicts(cands[0]) for c in cands[1:])
    assert all(c.verdicts for c in cands[0])


def test_near_duplicates_of_recent_days():
    items = [("Which shipping firm said it would cut 1,200 port jobs in November 2026?", "Norvik Shipping"),
             ("How many port jobs did Norvik Shipping say it would cut in November 2026?", "1,200")]
    prior = [("Which firm said in November 2026 it would cut 1,200 jobs at its ports?", "Norvik Shipping")]
    assert near_duplicates(items, prior=prior) == {0: -1}
    assert near_duplicates(items) == {}


def test_outlet_balance_caps_each_outlet_and_spreads_its_questions():
    cands = [Candidate(article_id=f"big{i % 10}", index=i) for i in range(60)]
    cands += [Candidate(article_id=f"o{j}-{i}", index=i) for j in range(12) for i in range(3)]
    sources = ["big"] * 60 + [f"outlet{j}" for j in range(12) for _ in range(3)]
    keep = balance_outlets(cands, sources, 0.2, seed=1)
    cap = outlet_caps(sources, 0.2)["big"]
    assert cap == 20  # ceil(0.2 x 96); 13 outlets: twice an even share is 15
    assert sum(k for k, s in zip(keep, sources) if s == "big") == cap
    assert all(k for k, s in zip(keep, sources) if s != "big")
    kept_articles = {c.article_id for c, k, s in zip(cands, keep, sources) if k and s == "big"}
    assert len(kept_articles) == 10  # round-robin over the outlet's articles
    assert keep == balance_outlets(cands, sources, 0.2, seed=1)  # seeded
    assert all(balance_outlets(cands, sources, 1.0, seed=1))  # 1 turns the cap off


def test_answer_balance_caps_repeated_answers_one_outlet_at_a_time():
    from okgen.generate.dayset import balance_answers

    # news-dev, five days: "China" answered 6 of 36 questions, 5 of them on 2025-04-10.
    answers = ["China", "china", "China", "the United States", "China", "Russia", "China"]
    sources = ["bbc", "bbc", "rt", "bbc", "guardian", "rt", "foxnews"]
    keep = balance_answers(answers, sources, 2, seed=1)
    china = [k for a, k in zip(answers, keep) if a.lower() == "china"]
    assert sum(china) == 2 and keep[3] and keep[5]  # other answers untouched
    assert len({s for a, s, k in zip(answers, sources, keep) if k and a.lower() == "china"}) == 2  # two outlets
    assert keep == balance_answers(answers, sources, 2, seed=1)  # seeded
    assert all(balance_answers(answers, sources, 0, seed=1))  # 0 turns the cap off


def test_an_llm_run_gates_its_candidates_before_the_validator(workspace, nlp):
    """Gates apply to every generator: an LLM generator whose questions copy article sentences
    (the scripted server writes cloze stems for one article, as extractive-v1 did; extractive-v2
    no longer copies) has them dropped by ``stem_overlap`` before the validator is asked, and the
    funnel names every drop."""
    import json

    from okgen.generate.pipeline import run_generate
    from okgen.testing.fixture_questions import fixture_questions
    from okgen.testing.llm_agents import AgentResponder
    from okgen.testing.news import fixture_articles
    from okgen.testing.openai_server import OpenAIServer

    articles = fixture_articles()
    r = AgentResponder(articles, seed=5, questions=fixture_questions())
    title = "Kestrel Airways cancels 240 flights as pilots strike"

    def cloze(req):  # the evidence sentence with its answer blanked, dated
        items = json.loads(r.default_questions(req))["questions"]
        for it in items[:2]:
            it["question"] = (f"As of November 21, 2026: {it['evidence'].replace(it['answer'], '___', 1).rstrip('.')}. "
                              "What fills the blank?")
        return json.dumps({"questions": items})

    r.overrides = {title: cloze}
    with OpenAIServer(responder=r) as srv:
        spec = f"openai/fake,base_url={srv.base_url}"
        res = run_generate(DAY, workspace, articles, generator=spec, validator=spec, seed=3, concurrency=4,
                           config={"generate": {"quality_gates": True}})
        calls = srv.calls["chat"]
    f = res.funnel
    gated = [c for c in res.candidates if any(v.name == "stem_overlap" for v in c.verdicts)]
    assert gated and f["check_failures"].get("stem_overlap", 0) >= 1
    assert f["candidates"] == f["checks"]["passed"] + sum(f["checks"]["rejected"].values())
    assert set(f["checks"]["rejected"]) <= {*GATES, "schema", "question_count", "four_distinct_choices",
                                            "answer_in_choices", "answer_in_article", "evidence_in_article",
                                            "no_article_reference", "explicit_date", "length_bounds", "short_answer",
                                            "giveaway_length", "giveaway_type"}
    generator_calls = f["articles"]["generated"] + sum(f["articles"]["failed"].values())
    # One validator call per candidate that passed the checks and the gates, none for the others.
    assert calls == generator_calls + f["checks"]["passed"]
    for q in res.questions:
        assert {v.name for v in q.verdicts} >= set(GATES)


def test_headline_pieces_and_bios_are_caught(nlp):
    from okgen.generate.fluency import fluency_problems

    assert fluency_problems("Playing Elizabeth Bennet", nlp, option=True)
    assert fluency_problems("Crew Finally", nlp, option=True)
    assert fluency_problems("Markets Rally Today", nlp, option=True)
    assert not fluency_problems("USA Today", nlp, option=True)  # a newspaper, not "... today"
    assert not fluency_problems("Psychology Today", nlp, option=True)
    assert fluency_problems("Markets Today", nlp, option=True) and fluency_problems("Gaza Today", nlp, option=True)
    assert fluency_problems("markets today", nlp, option=True)
    assert not fluency_problems("Reading Borough Council", nlp, option=True)
    assert not fluency_problems("Rising Star Corps", nlp, option=True)  # a unit's name ends with its body
    assert fluency_problems("Watching Star Wars", nlp, option=True)
    assert not fluency_problems("Marta Lindqvist", nlp, option=True)
    assert not fluency_problems("Ming-Chi Kuo", nlp, option=True)  # a four-letter "-ing" word heads nothing
    c = gate(nlp, question="Who is a politics writer at the Norvik Gazette in Oslo, as reported in November 2026?",
             **PERSON,
             evidence="Marta Lindqvist is a politics writer at the Norvik Gazette.")
    assert "boilerplate" in failed(c)


def test_more_unresolved_references_and_glued_dates(nlp):
    from okgen.generate.fluency import fluency_problems

    assert fluency_problems("Octoberthat", nlp, option=True) and fluency_problems("Januaryand", nlp, option=True)
    assert not fluency_problems("October", nlp, option=True)
    c = gate(nlp, question="Which port has Norvik Shipping so far failed to replace after that?")
    assert "points at nothing" in failed(c)["self_contained"]
    c = gate(nlp, question="How many jobs were cut at the ports in November 2026?")
    assert "names no person" in failed(c)["self_contained"]
    c = gate(nlp, question="Who is Deputy Editor at the Norvik Gazette, as reported in November 2026?",
             **PERSON,
             evidence="Marta Lindqvist is Deputy Editor at the Norvik Gazette.")
    assert "boilerplate" in failed(c)


def test_review_misses_are_caught(nlp):
    c = gate(nlp, question="Which agency said, according to the Norvik ____ (NMA), that the port was safe in November 2026?",
             choices=["Maritime Authority", "Port Council", "Harbour Board", "Coast Office"], answer="Maritime Authority",
             answer_type="ORG", evidence="the Norvik Maritime Authority (NMA) said the port was safe")
    assert "spells the answer's initials" in failed(c)["giveaway"]
    c = gate(nlp, question='Which amount completes this statement from Norvik Shipping in November 2026: "It\'s now ____, a 30% rise"?',
             choices=["$499", "$399", "$699", "$299"], answer="$499", answer_type="MONEY", evidence="It's now $499, a 30% rise.")
    assert "opens with the pronoun" in failed(c)["self_contained"]
    c = gate(nlp, question="In which year did the British actor join Norvik Shipping's board, as reported in November 2026?",
             choices=["2021", "2019", "2018", "2017"], answer="2021", answer_type="DATE", evidence="in 2021")
    assert "the British actor" in failed(c)["self_contained"]
    c = gate(nlp, question="Who has reached out to Norvik Shipping for comment, as reported in November 2026?",
             **PERSON,
             evidence="Marta Lindqvist has reached out to Norvik Shipping for comment.")
    assert "boilerplate" in failed(c)


def test_a_gate_worker_without_its_pipeline_fails_every_waiting_article(monkeypatch):
    """spaCy's pipeline missing: each article waiting on the worker gets the one-line
    ConfigError (the run stops on it, as when the gates ran on the loop), none hangs."""
    import asyncio

    from okgen.errors import ConfigError
    from okgen.generate import nlp as nlp_module

    def missing(name=None):
        raise ConfigError("spaCy pipeline 'en_core_web_sm' is not installed")

    monkeypatch.setattr(nlp_module, "load_pipeline", missing)

    async def main() -> list:
        worker = GateWorker()
        worker.warm()
        jobs = [worker.apply(ARTICLE, [Candidate(article_id="a1", index=i, **GOOD)]) for i in range(3)]
        first = await asyncio.gather(*jobs, return_exceptions=True)
        again = await asyncio.gather(worker.apply(ARTICLE, [Candidate(article_id="a1", index=9, **GOOD)]),
                                     return_exceptions=True)
        return first + again

    out = asyncio.run(asyncio.wait_for(main(), 60))
    assert len(out) == 4 and all(isinstance(e, ConfigError) and "not installed" in str(e) for e in out)


def test_the_gate_worker_imports_spacy_in_the_loops_thread_before_loading(monkeypatch):
    """spaCy imports httpx, which the loop's model clients use: imported in the worker thread
    while calls go out, a call could see httpx half-initialised. The loop's thread imports it."""
    import asyncio
    import threading

    from okgen.generate import gates

    seen: list[tuple[str, bool]] = []
    monkeypatch.setattr(gates, "_import_spacy", lambda: seen.append(("import", threading.current_thread() is threading.main_thread())))

    def load():
        seen.append(("load", threading.current_thread() is threading.main_thread()))
        raise RuntimeError("stop here")

    monkeypatch.setattr(gates, "_load", load)

    async def main() -> list:
        worker = GateWorker()
        return await asyncio.gather(worker.apply(ARTICLE, [Candidate(article_id="a1", index=0, **GOOD)]),
                                    return_exceptions=True)

    out = asyncio.run(asyncio.wait_for(main(), 60))
    assert isinstance(out[0], RuntimeError)
    assert seen == [("import", True), ("load", False)]


# Questions as a careful LLM writes them, which the gates once dropped (false alarms found by
# bench/bench_gates_llm_style.py on news-dev; here on invented sentences), and the flawed
# ones they once kept.
def test_a_clause_opening_with_when_asks_no_date(nlp):
    c = gate(nlp, question="When the Norvik Aurora ferry went on sale on November 20, 2026, what was its price?",
             choices=["$499", "$399", "$549", "$299"], answer="$499", answer_type="MONEY",
             evidence="The Norvik Aurora ferry went on sale for $499 a seat.")
    assert "type_agreement" not in failed(c)
    c = gate(nlp, question="When did Norvik Shipping's Aurora ferry go on sale in November 2026?",
             choices=["$499", "$399", "$549", "$299"], answer="$499", answer_type="MONEY",
             evidence="The Norvik Aurora ferry went on sale for $499 a seat.")
    assert "asks for a date" in failed(c)["type_agreement"]


def test_the_stems_date_and_a_names_short_number_give_nothing_away(nlp):
    # "12" of "November 12, 2026" is no clue to a 6-12 record.
    c = gate(nlp, question="What was Lars Berg's win-loss record in his 18 starts for Norvik FC as of November 12, 2026?",
             choices=["6-12", "9-9", "11-7", "4-14"], answer="6-12", answer_type="CARDINAL",
             evidence="Berg went 6-12 in his 18 starts for Norvik FC.")
    assert failed(c) == {}  # nor is a 9-9 tie a repeated word
    # The "2" of a sequel's name, beside another sequel in the stem, is none either ...
    c = gate(nlp, question="Which episode did Norvik add to its Harbour + Harbour 2 remaster in November 2026?",
             choices=["Tidewater 2", "Saltmarsh 3", "Breakwater 4", "Lighthouse 5"], answer="Tidewater 2",
             answer_type="WORK_OF_ART", evidence="Norvik added Tidewater 2 to the remaster.")
    assert "giveaway" not in failed(c)
    # ... while a figure the stem repeats still is.
    c = gate(nlp, question="How many of its 1,200 port jobs did Norvik Shipping say in November 2026 it would cut?",
             choices=["1,200", "800", "2,500", "450"])
    assert failed(c)["giveaway"] == "the stem contains '1' from the answer"
    # A unit is no name: "1.5-inch" repeated in the stem gives the size away.
    c = gate(nlp, question="As of November 12, 2026, what size is the 1.5-inch screen of the Norvik Watch 2?",
             choices=["1.5-inch", "1.4-inch", "1.3-inch", "1.6-inch"], answer="1.5-inch", answer_type="QUANTITY",
             evidence="The Norvik Watch 2 has a 1.5-inch screen.")
    assert failed(c)["giveaway"] == "the stem contains '5' from the answer"


def test_options_of_one_form_opening_with_a_preposition_are_no_fragments(nlp):
    c = gate(nlp, question="When did Norvik Shipping say on November 20, 2026 that its new Rotterdam terminal would open?",
             choices=["in the fall", "in the spring", "in the summer", "in the winter"], answer="in the fall",
             answer_type="DATE", evidence="Norvik Shipping said the new terminal would open in the fall.")
    assert "fluency" not in failed(c)
    # A lone option so cut is still a fragment, as is a lower-case word ending it.
    c = gate(nlp, choices=["1,200", "of the 800", "2,500", "450"])
    assert "starts with a function word" in failed(c)["fluency"]
    c = gate(nlp, choices=["1,200", "800 of", "2,500", "450"])
    assert "ends with a function word" in failed(c)["fluency"]
    # "live" opens a headline only when written as one ("Live: ..."), not "live translation mode".
    c = gate(nlp, question="Which second option did Norvik say its Harbour app would offer from November 20, 2026?",
             choices=["live translation mode", "offline map packs", "voice ticket booking", "cabin upgrade alerts"],
             answer="live translation mode", answer_type=None, evidence="The app will offer live translation mode.")
    assert "fluency" not in failed(c)


def test_a_pronoun_as_the_questions_subject_needs_a_name_before_it(nlp):
    c = gate(nlp, question="By how many points did he lead Norvik FC's Lars Berg in the league as of November 21, 2026?",
             choices=["one point", "three points", "13 points", "eight points"], answer="one point",
             answer_type="CARDINAL", evidence="He leads Lars Berg by one point.")
    assert failed(c)["self_contained"] == "'he' refers to no one named before it"
    c = gate(nlp, question="After Marta Lindqvist took over Norvik Shipping, how many jobs did she cut in November 2026?")
    assert "self_contained" not in failed(c)
    c = gate(nlp, question="Who said on November 21, 2026 that Norvik Shipping would cut jobs if it lost the contract?",
             **PERSON,
             evidence="Chief executive Marta Lindqvist told reporters in Rotterdam")
    assert "self_contained" not in failed(c)
    # "it" alike, unless it is the dummy subject of "take", "cost", "be" ...
    c = gate(nlp, question="In which year will it open, according to plans Norvik Parks shared on November 21, 2026?",
             choices=["2028", "2027", "2029", "2030"], answer="2028", answer_type="DATE",
             evidence="Norvik Parks said the new pier will open in 2028.")
    assert failed(c)["self_contained"] == "'it' refers to no one named before it"
    c = gate(nlp, question="How many years will it take Norvik Parks to build the pier announced on November 21, 2026?",
             choices=["two years", "three years", "five years", "four years"], answer="two years",
             answer_type="DATE", evidence="Norvik Parks said it will take two years to build the pier.")
    assert "self_contained" not in failed(c)
    c = gate(nlp, question="In which year did Norvik Parks say on November 21, 2026 that it would open its new pier?",
             choices=["2028", "2027", "2029", "2030"], answer="2028", answer_type="DATE",
             evidence="Norvik Parks said the new pier will open in 2028.")
    assert "self_contained" not in failed(c)


def test_a_request_for_comment_is_furniture_only_when_asked_about(nlp):
    ev = "Norvik Shipping, which runs the Rotterdam terminal, ignored our request for comment on Friday."
    c = gate(nlp, question="Which company runs the Rotterdam container terminal whose cranes failed in November 2026?",
             choices=["Norvik Shipping", "Baltic Freight", "Atlas Ports", "Hansa Cargo"], answer="Norvik Shipping",
             answer_type="ORG", evidence=ev)
    assert "boilerplate" not in failed(c)
    c = gate(nlp, question="Which company ignored a request for comment on the crane failure in November 2026?",
             choices=["Norvik Shipping", "Baltic Freight", "Atlas Ports", "Hansa Cargo"], answer="Norvik Shipping",
             answer_type="ORG", evidence=ev)
    assert "page furniture" in failed(c)["boilerplate"]
    # A newsletter's own blurb is furniture.
    c = gate(nlp, question="Who writes the weekly shipping newsletter that Norvik promoted in November 2026?",
             **PERSON,
             evidence="A weekly newsletter by Marta Lindqvist telling you all you need to know.")
    assert "page furniture" in failed(c)["boilerplate"]


def test_question_words_that_name_no_type(nlp):
    # "For how many years": a duration is a DATE entity.
    c = gate(nlp, question="For how many years had Norvik Shipping run the Rotterdam terminal as of November 21, 2026?",
             choices=["six years", "four years", "nine years", "two years"], answer="six years", answer_type="DATE",
             evidence="Norvik Shipping has run the terminal for six years.")
    assert "type_agreement" not in failed(c)
    # A type noun inside a name is not the question's: "which Harbour Authority adviser" asks for a person.
    c = gate(nlp, question="Which Harbour Agency adviser told reporters in Rotterdam on November 21, 2026 that cuts would come?",
             choices=["Marta Lindqvist", "Jonas Berg", "Erik Dahl", "Sofia Holm"], answer="Marta Lindqvist",
             answer_type=None, evidence="Chief executive Marta Lindqvist told reporters in Rotterdam")
    assert "type_agreement" not in failed(c)
    c = gate(nlp, question="Which agency told reporters in Rotterdam on November 21, 2026 that cuts would come?",
             choices=["Marta Lindqvist", "Jonas Berg", "Erik Dahl", "Sofia Holm"], answer="Marta Lindqvist",
             answer_type=None, evidence="Chief executive Marta Lindqvist told reporters in Rotterdam")
    assert "organisation but the answer is PERSON" in failed(c)["type_agreement"]


def test_names_with_particles_and_titles_asked_for_keep_their_form(nlp):
    # "al-Mawasi" is as capitalised a name as the others.
    c = gate(nlp, question="To which coastal area did Norvik Shipping move its ferries on November 21, 2026?",
             choices=["al-Qasra", "Rafiq Bay", "Port Selim", "Deir Halab"], answer="al-Qasra", answer_type="GPE",
             evidence="Norvik Shipping moved its ferries to al-Qasra.")
    assert "giveaway" not in failed(c)
    # Titles asked for may read like headlines ("Killing Floor", "Making AI Work Harder ...").
    c = gate(nlp, question="What was the title of the Norvik Shipping blog post announcing the cuts on November 21, 2026?",
             choices=["Sailing Into Calmer Waters", "Charting a New Course", "Steering Through the Storm",
                      "Keeping Europe Moving"], answer="Sailing Into Calmer Waters", answer_type="WORK_OF_ART",
             evidence="Norvik Shipping announced the cuts in a post titled Sailing Into Calmer Waters.")
    assert "fluency" not in failed(c)
    c = gate(nlp, choices=["1,200", "Sailing Into Calmer", "2,500", "450"])  # a name expected: a headline piece
    assert "headline piece" in failed(c)["fluency"]


def test_a_figure_glued_to_a_word_is_run_together(nlp):
    c = gate(nlp, choices=["1,200", "800", "25%tariff", "450"])
    assert "run-together word '5%tariff'" in failed(c)["fluency"]


def test_a_stance_others_share_has_more_than_one_right_answer(nlp):
    # news-dev 2025-04-13 (paraphrased): reviewers found a second senator who had called for the
    # same hearing; the offline generator's stance_shared, now a gate for every generator.
    from okgen.generate.gates import shared_stance

    ev = "Unions in the Netherlands called a strike for next week."
    for q in ("Which union leader called for a strike at Norvik Shipping's Dutch ports on November 21, 2026?",
              "On November 21, 2026, who urged Norvik Shipping to reverse its job cuts?",
              "Which country's government strongly condemned Norvik Shipping's job cuts on November 21, 2026?",
              "Which minister hit back at Norvik Shipping over its 1,200 job cuts on November 21, 2026?"):
        c = gate(nlp, question=q, evidence=ev, **PERSON)
        assert "one_answer" in failed(c) and not c.kept, (q, failed(c))
    shared = ("On November 21, 2026 which union called for a strike at Norvik Shipping?",
              "Which union, on November 21, 2026, called for a strike at Norvik Shipping?",
              "What organisation condemned Norvik Shipping's job cuts on November 21, 2026?",
              "Who among the ministers called for talks with Norvik Shipping on November 21, 2026?",
              "Which Dutch minister broke ranks and called for talks with Norvik Shipping on November 21, 2026?",
              "Which union is calling for a strike at Norvik Shipping, as of November 21, 2026?",
              "Which minister was quick to condemn Norvik Shipping's cuts on November 21, 2026?",
              "Which investor publicly backed the plan to split Norvik Shipping on November 21, 2026?",
              # gates version 10: the offline generator's stance_shared knew it, the gate did not
              "Which minister took aim at Norvik Shipping's job cuts on November 21, 2026?",
              "Who has taken aim at Norvik Shipping's board, as reported on November 21, 2026?",
              # gates version 11: a type phrase with a dot or of more than three words
              "Which U.S. senator called on Norvik Shipping to testify on November 21, 2026?",
              "Which Republican senator from Lakeport called on Norvik Shipping to testify on November 21, 2026?",
              "Which St. Lakeport city councillor urged Norvik Shipping to stay on November 21, 2026?",
              # gates version 12: a quantity word that names the asked-for one, not a count of takers
              "Which majority party opposed the harbour levy on November 21, 2026?",
              "Which union welcomed back-to-work legislation at Norvik Shipping on November 21, 2026?")
    one = ("Whom did Marta Lindqvist praise for the Rotterdam talks on November 21, 2026?",
           "Who did Norvik Shipping's board praise on November 21, 2026, for its cost cuts?",
           "At which port did Marta Lindqvist urge unions on November 21, 2026, to accept the cuts?",
           "Who announced on November 21, 2026 that Norvik Shipping would cut 1,200 jobs?",
           # the asked-for one is the stance's target, or the verb is no stance
           "Which chief executive faced calls for her resignation on November 21, 2026?",
           "Who was called on to resign by Dutch unions on November 21, 2026?",
           "Which storm slammed into Rotterdam's port on November 21, 2026?",
           "Which club blasted five goals past Ajax on November 21, 2026?",
           "Which zoo welcomed a baby elephant on November 21, 2026?",
           "Who demanded $5 million from Norvik Shipping in a ransomware attack on November 21, 2026?",
           "Which truck backed into a crane at Rotterdam on November 21, 2026?",
           "Which union backed down from its strike at Norvik Shipping on November 21, 2026?",
           "Which fund backed the startup's $20 million seed round on November 21, 2026?",
           "Which investor backed a $5 billion bid for Norvik Shipping on November 21, 2026?",
           # gates version 11 (12: "share/number/... of" only): a count or share of those who took
           # it asks for a number, not a taker
           "What percentage of likely Lakeport voters opposed the harbour levy in the November 21, 2026 poll?",
           "What share of Norvik Shipping's shareholders opposed the merger on November 21, 2026?",
           "What number of Lakeport City Council members opposed the budget on November 21, 2026?",
           "Which English Premier League club welcomed back its captain from injury on November 21, 2026?")
    for q in shared + one:
        doc = nlp(q, disable=["parser", "lemmatizer", "attribute_ruler"])
        assert (shared_stance(q, doc) is not None) is (q in shared), q
    for q in one[:4]:
        assert "one_answer" not in failed(gate(nlp, question=q, evidence=ev, **PERSON)), q


def test_the_type_noun_is_the_head_of_the_question_phrase(nlp):
    """A type noun that only modifies the noun after it is not what the question asks for: "Which
    executive order number" asks for a number (held-out LLM-style set 4 had it dropped as a
    person); "which party leader" asks for a person; a possessor is still asked for ("Which
    party's candidate" wants a party)."""
    c = gate(nlp, question="Which executive order number did Norvik Shipping cite in November 2026 for its port cuts?",
             choices=["14024", "13660", "14071", "14066"], answer="14024", answer_type=None,
             evidence="Norvik Shipping said on Tuesday that it would cut 1,200 jobs across its European ports")
    assert "type_agreement" not in failed(c)
    c = gate(nlp, question="Which executive did Norvik Shipping cite in November 2026 for its port cuts?",
             choices=["14024", "13660", "14071", "14066"], answer="14024", answer_type=None,
             evidence="Norvik Shipping said on Tuesday that it would cut 1,200 jobs across its European ports")
    assert "asks for a person" in failed(c)["type_agreement"]
    c = gate(nlp, question="Which union leader told reporters in Rotterdam in November 2026 that the cuts were necessary?",
             **PERSON, evidence="Chief executive Marta Lindqvist told reporters in Rotterdam")
    assert "type_agreement" not in failed(c)
    # A verb the tagger reads as a noun, or a time word, after the type noun changes nothing.
    from okgen.generate.gates import _DISABLE, _question_word

    for stem, what in [("Which country borders Veldoria to the west, as of November 2026?", "a country"),
                       ("Which company yesterday announced 1,200 job cuts at Norvik's ports?", "an organisation"),
                       ("Which party leaders met in Norvik in November 2026?", "a person")]:
        doc = nlp(stem, disable=[p for p in _DISABLE if p in nlp.pipe_names])
        assert (_question_word(stem, doc) or (None, None))[1] == what, stem
    c = gate(nlp, question="Which company's chief told reporters in Rotterdam in November 2026 that the cuts were necessary?",
             **PERSON, evidence="Chief executive Marta Lindqvist told reporters in Rotterdam")
    assert "organisation but the answer is PERSON" in failed(c)["type_agreement"]


def test_a_function_word_glued_to_a_number_is_disfluent(nlp):
    """"a5-minute charge" (extraction glued "a" to "5"): held-out set 4's fluency defect the gate
    missed; a name written so ("Audi A5") is not one."""
    from okgen.generate.fluency import fluency_problems

    assert fluency_problems("How much playback did a5-minute charge give Norvik headphones in November 2026?", nlp)
    assert fluency_problems("the2025 season", nlp, option=True)
    assert not fluency_problems("How many Audi A5 cars did Norvik Shipping carry in November 2026?", nlp)
    assert not fluency_problems("Which startup did venture firm a16z back in November 2026?", nlp)  # a name


def test_name_particles_keep_an_option_a_name():
    """"al Ahli Arab" among "Al-Quds" and "Kamal Adwan" is a name like them, not the only text
    (held-out set 4: a good question dropped by giveaway_type)."""
    from okgen.generate.spans import kind_of_choice

    assert {kind_of_choice(x) for x in ("al Ahli Arab", "Al-Quds", "Kamal Adwan", "Ludwig van Beethoven")} == {"name"}
    assert kind_of_choice("the quick brown fox") == "text"


def test_a_brand_after_a_capitalised_function_word_is_no_run_together_word(nlp):
    from okgen.generate.fluency import fluency_problems

    # Known brands are kept; a capitalised function word glued to any other word is extraction's.
    for brand in ("FromSoftware", "InDesign", "YouTube"):
        assert not fluency_problems(brand, nlp, option=True), brand
    for glued in ("TheUS", "OfThe", "InApril", "FromWashington", "WashingtonThe", "sinceElon", "InGaza",
                  "WithPutin", "TheWhite", "TheSenate", "InSummer", "ByStaff"):
        assert any("run-together" in p for p in fluency_problems(glued, nlp, option=True)), glued
    # A naming participle before a body's word is a name; other gerund-led phrases are headlines.
    assert not fluency_problems("Flying Tigers Group", nlp, option=True)
    for piece in ("Watching Fox News", "Leaving the Party", "Taking Office", "Joining Forces", "Rising Prices"):
        assert fluency_problems(piece, nlp, option=True), piece


def test_a_country_the_tagger_calls_a_person_is_no_answer_to_who(nlp):
    ev = "Malawi, hit by steep duties, imported only a few goods from Norvik last year."
    assert [e.label_ for e in nlp(ev).ents if e.text == "Malawi"] == ["PERSON"]  # the tagger's mistake
    kw = dict(choices=["Malawi", "Madagascar", "Cambodia", "Mozambique"], answer="Malawi", answer_type=None, evidence=ev)
    c = gate(nlp, question="Who imported only a few goods from Norvik Shipping in 2026 despite steep duties?", **kw)
    assert "the answer is GPE" in failed(c)["type_agreement"]
    c = gate(nlp, question="Which country imported only a few goods from Norvik Shipping in 2026 despite steep duties?",
             **kw)
    assert "type_agreement" not in failed(c)
    # A person named like a country stays a person when the options are people.
    ev = "Rep. Jim Jordan, the committee's chairman, subpoenaed three Norvik Shipping executives on Monday."
    c = gate(nlp, question="Who subpoenaed three Norvik Shipping executives in November 2026?", evidence=ev,
             choices=["Jordan", "Jonas Berg", "Erik Dahl", "Sofia Holm"], answer="Jordan", answer_type=None)
    assert "type_agreement" not in failed(c)


def test_a_caption_followed_by_its_photo_credit_is_boilerplate(nlp):
    from okgen.generate.gates import furniture_around

    caption = "Harbour pilot Jonas Berg speaks beside Marta Lindqvist at the quay in Rotterdam on November 20, 2026."
    text = f"The strike went on. {caption}(Piet Vos/AFP via Getty Images) The unions met again on Friday."
    assert furniture_around(text, caption) == "a photo caption (then '(Piet Vos/AFP via Getty Images)')"
    assert furniture_around(f"The strike went on. {caption} The unions met again.", caption) is None
    assert furniture_around(text, "not in the article at all, anywhere") is None
    # An attribution or an aside in brackets is no credit.
    for after in ("(Reuters)", "(EPA)", "(Credit Suisse had collapsed)", "(and/or more)"):
        assert furniture_around(f"{caption} {after} More.", caption) is None, after
    assert furniture_around(f"{caption} (AP Photo/Jane Doe)", caption) == "a photo caption (then '(AP Photo/Jane Doe)')"
    art = ARTICLE.model_copy(update={"text": text, "text_sha256": sha256_text(text)})
    c = Candidate(article_id=art.id, index=0, **{**GOOD, **PERSON, "evidence": caption, "answer": "Jonas Berg",
                  "question": "Which harbour pilot spoke beside Marta Lindqvist at the Rotterdam quay on November 20, 2026?"})
    apply_gates(art, [c], nlp=nlp)
    assert failed(c)["boilerplate"].startswith("a photo caption")


def test_a_sentence_of_the_authors_bio_at_the_end_is_boilerplate(nlp):
    from okgen.generate.gates import furniture_around

    news = ("Norvik Shipping cut 400 jobs in Rotterdam on Monday, the company said. The unions called a strike "
            "for Friday. " * 6)
    bio = "Jane Doe is a reporter for the Harbour Gazette. Jane is a Leiden native and studied at Delft University."
    text = f"{news}{bio}"
    evidence = "Jane is a Leiden native and studied at Delft University."
    assert furniture_around(text, evidence) == "the author's bio ('Jane Doe is a reporter for')"
    # The news before the bio is news; a reporter the news is about, far from the article's end, too.
    assert furniture_around(text, "The unions called a strike for Friday.") is None
    story = ("Pieter Smit is a reporter for the Harbour Gazette. He was detained in Rotterdam on Monday. " + news * 4)
    assert furniture_around(story, "He was detained in Rotterdam on Monday.") is None
    art = ARTICLE.model_copy(update={"text": text, "text_sha256": sha256_text(text)})
    c = Candidate(article_id=art.id, index=0, **{**GOOD, "evidence": evidence, "answer": "Delft University",
                  "choices": ["Delft University", "Leiden University", "Utrecht University", "Erasmus University"],
                  "short_answer": "Delft University",
                  "question": "At which university did Harbour Gazette reporter Jane Doe study, as of November 20, 2026?"})
    apply_gates(art, [c], nlp=nlp)
    assert failed(c)["boilerplate"].startswith("the author's bio")


def test_a_city_is_no_answer_to_which_country(nlp):
    from okgen.generate.gates import city_for_country

    # spaCy labels both GPE: only the gazetteer tells a city from a country.
    assert "is a city" in city_for_country("In which country did Norvik Shipping cut jobs in 2026?", "Rotterdam")
    assert city_for_country("In which country did Norvik Shipping cut jobs in 2026?", "Singapore") is None
    assert city_for_country("In which city did Norvik Shipping cut jobs in 2026?", "Rotterdam") is None
    kw = dict(choices=["Rotterdam", "Antwerp", "Hamburg", "Le Havre"], answer="Rotterdam", answer_type=None,
              evidence="Norvik Shipping said on Tuesday that it would cut 1,200 jobs at its port in Rotterdam")
    c = gate(nlp, question="In which country did Norvik Shipping say in November 2026 it would cut 1,200 jobs?", **kw)
    assert "type_agreement" in failed(c)
    c = gate(nlp, question="In which city did Norvik Shipping say in November 2026 it would cut 1,200 jobs?", **kw)
    assert "type_agreement" not in failed(c)
    # A microstate is a country and a city at once.
    assert city_for_country("Which country won the Grand Prix in 2026?", "Monaco") is None


def test_gates_version_9_rules(nlp):
    # An object "him" with no one named before it is not the one asked for (held-out set 6).
    c = gate(nlp, question="Who helped him into the harbour pilot's jacket at the Rotterdam quay on November 20, 2026?",
             evidence="Marta Lindqvist helped Jonas Berg into the jacket at the quay on Friday.", **PERSON)
    assert "'him' refers to no one" in failed(c)["self_contained"]
    c = gate(nlp, question="Who helped Jonas Berg into his jacket at the Rotterdam quay on November 20, 2026?",
             evidence="Marta Lindqvist helped Jonas Berg into the jacket at the quay on Friday.", **PERSON)
    assert "self_contained" not in failed(c)
    # A capitalised role word belongs to a name: "the Surf City Pro" is no undefined city.
    c = gate(nlp, question="Who won the Surf City Harbour Pro in Rotterdam on November 20, 2026?",
             evidence="Marta Lindqvist won the Surf City Harbour Pro on Friday.", **PERSON)
    assert "self_contained" not in failed(c)
    c = gate(nlp, question="Who won the surfing contest in the city on November 20, 2026?",
             evidence="Marta Lindqvist won the Surf City Harbour Pro on Friday.", **PERSON)
    assert "'the city' with no place" in failed(c)["self_contained"]
    # ... but a capitalised role word alone is no name: "the President" still needs one.
    c = gate(nlp, question="Who did the President name to run the harbour authority on November 20, 2026?",
             evidence="The president named Marta Lindqvist to run the harbour authority.", **PERSON)
    assert "the President" in failed(c)["self_contained"]
    # A person named in full after the pronoun may be its referent; a possessive "her" is none.
    c = gate(nlp, question="Which club signed her on loan on November 20, 2026, according to Marta Lindqvist?",
             evidence="Rotterdam Harbour FC signed Marta Lindqvist on loan, her agent said.",
             choices=["Rotterdam Harbour FC", "Delft United", "Leiden City", "Utrecht Rovers"],
             answer="Rotterdam Harbour FC", answer_type="ORG")
    assert "self_contained" not in failed(c)
    c = gate(nlp, question="Which club signed Marta Lindqvist and her twin sister on November 20, 2026?",
             evidence="Rotterdam Harbour FC signed Marta Lindqvist and her twin sister.",
             choices=["Rotterdam Harbour FC", "Delft United", "Leiden City", "Utrecht Rovers"],
             answer="Rotterdam Harbour FC", answer_type="ORG")
    assert "self_contained" not in failed(c)
    # Mojibake in an option is disfluent; an accented name is not.
    c = gate(nlp, choices=["1,200", "800", "2,500", "45â€‹"], answer="1,200")
    assert "mojibake" in failed(c)["fluency"]
    c = gate(nlp, question="Who did Norvik Shipping name to run its Malmö port in November 2026?",
             evidence="Norvik Shipping named Zoë Ångström to run its Malmö port.",
             choices=["Zoë Ångström", "José Núñez", "Erik Dahl", "Sofia Holm"], answer="Zoë Ångström",
             answer_type="PERSON")
    assert "fluency" not in failed(c)
    # A lower-case gerund starts a plain answer (a charge); a capitalised one a headline piece.
    kw = dict(question="Besides treason, what charge did Norvik Shipping's chief deny in a Rotterdam court in November 2026?",
              evidence="The chief denied treason and inciting violence in a Rotterdam court.", answer_type=None)
    c = gate(nlp, choices=["inciting violence", "money laundering", "tax evasion", "bribery"],
             answer="inciting violence", **kw)
    assert "fluency" not in failed(c)
    c = gate(nlp, choices=["Inciting violence", "Money laundering", "Tax evasion", "Bribery"],
             answer="Inciting violence", **kw)  # sentence case, as LLMs write options
    assert "fluency" not in failed(c)
    c = gate(nlp, choices=["Inciting Violence Today", "money laundering", "tax evasion", "bribery"],
             answer="Inciting Violence Today", **kw)
    assert "headline piece" in failed(c)["fluency"]


LABEL = dict(choices=["Harbour Records", "Lakeport Sound", "Orbis Music", "Norvik Tapes"], answer="Harbour Records",
             answer_type="ORG", evidence="Harbour Records released the album on Friday.")


@pytest.mark.parametrize("question", [
    # Words of a title, quoted (straight or curly, single or double) or capitalised, point at nothing.
    "Which label released Marta Lindqvist's 'Imagine That: The Lost Pier Recordings (1954-1963)' on November 20, 2026?",
    "Which label released Marta Lindqvist's \u2018Imagine That: The Lost Pier Recordings\u2019 on November 20, 2026?",
    "Which label released Marta Lindqvist's \u201cImagine That: The Lost Pier Recordings\u201d on November 20, 2026?",
    'Which label released Marta Lindqvist\'s "Imagine That: The Lost Pier Recordings" on November 20, 2026?',
    "Which label released Imagine That, Marta Lindqvist's lost pier recordings, on November 20, 2026?",
    "Which label released \u2018Tell Him Now\u2019 on November 20, 2026?",
    "Which label released the album 'They Said' on November 20, 2026?",
    "Which label will release the players' album 'Whatever That Means' on November 20, 2026?",
    "\u2018This Is Lakeport\u2019 was released by which label on November 20, 2026?",
])
def test_words_of_a_title_are_no_references(nlp, question):
    c = gate(nlp, question=question, **LABEL)
    assert "self_contained" not in failed(c), failed(c)


@pytest.mark.parametrize("question", [
    "Who is the military leader seeking a seven-year term in Norvik's presidential election held on April 12, 2026?",
    "On April 12, 2026, who was the minister who resigned over the Lakeport ferry contract?",
])
def test_the_person_a_who_is_question_asks_for_is_no_reference(nlp, question):
    c = gate(nlp, question=question, **PERSON, evidence="Marta Lindqvist resigned over the Lakeport ferry contract.")
    assert "self_contained" not in failed(c), failed(c)


@pytest.mark.parametrize("question, reason", [
    ("What did the company announce on November 20, 2026 about its Rotterdam port?", "'the company' with no org"),
    ("Who did the military leader appoint to run Norvik's election on April 12, 2026?", "'the military leader' with no"),
    ("Who is the company's chief executive, as reported on April 12, 2026?", "'the company' with no org"),
    ("Which label did he say on November 20, 2026 would release the album?", "'he' refers to no one"),
    ("Which label released the album after that?", "'that' points at nothing"),
    ('Which label released this record from Marta Lindqvist in November 2026: "It\'s now out"?', "opens with the pronoun"),
])
def test_references_outside_titles_are_still_caught(nlp, question, reason):
    c = gate(nlp, question=question, **LABEL)
    assert reason in failed(c)["self_contained"]


def test_an_author_bio_line_needs_a_name_and_the_articles_end(nlp):
    from okgen.generate.gates import furniture_around

    news = "Norvik Shipping cut 400 jobs in Rotterdam on Monday, the company said. " * 12
    # A reporter the news is about, near the end of a story that goes on: news, not a bio.
    tail = ("Pieter Smit is a reporter for the Harbour Gazette. A Rotterdam court sentenced him to six years on "
            "Monday. " + "His employer said it would appeal the ruling and called the charges baseless. " * 12)
    assert furniture_around(news + tail, "A Rotterdam court sentenced him to six years on Monday.") is None
    # A judge "writing for the majority" is no bio either.
    text = news + "Justice Ada Morrow, writing for the majority, said the law stood. The court ruled 6-3 on Monday."
    assert furniture_around(text, "The court ruled 6-3 on Monday.") is None
