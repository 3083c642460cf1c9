"""run_generate with LLM agents against a real local OpenAI-compatible server.

Scripted per-article failures: invalid JSON, too many and too few questions, an answer not
among the choices, a malformed item, a refusal, output cut by the length limit, 429 with
Retry-After, 500, a slow reply beyond the timeout. Checks that retries happen, every bad item
is dropped with the right verdict, and the funnel's counts add up.
"""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter

import pytest

from okgen.errors import ConfigError
from okgen.generate.funnel import render_funnel
from okgen.generate.pipeline import run_generate
from okgen.testing.fixture_questions import fixture_questions
from okgen.testing.llm_agents import AgentResponder, question_text
from okgen.testing.news import fixture_articles
from okgen.testing.openai_server import OpenAIServer, Reply

DAY = dt.date(2026, 11, 21)
EVE = dt.date(2026, 11, 20)
TITLES = {a.title.split()[0]: a.title for a in fixture_articles()}


def assert_funnel_adds_up(f: dict) -> None:
    a = f["articles"]
    assert a["total"] == a["generated"] + sum(a["failed"].values()) + a["pending"]
    assert f["candidates"] == f["checks"]["passed"] + sum(f["checks"]["rejected"].values())
    v = f["validator"]
    assert f["checks"]["passed"] == v["passed"] + sum(v["rejected"].values()) + v["errors"]
    p = f["probes"]
    assert v["passed"] == p["passed"] + p["dropped"]
    d, b = f["dedup"], f["balance"]
    assert p["passed"] == d["kept"] + d["near_duplicate"] + d["near_duplicate_recent"]
    assert d["kept"] == b["kept"] + b["outlet_balance"] + b["answer_balance"]
    assert b["outlet_balance"] == sum(b["by_outlet"].values())
    assert f["kept"] == b["kept"] == sum(f["answer_positions"].values())
    counts = list(f["answer_positions"].values())
    assert not counts or max(counts) - min(counts + [0] * (4 - len(counts))) <= 1


def items(responder: AgentResponder, req: dict) -> list[dict]:
    return json.loads(responder.default_questions(req))["questions"]


@pytest.fixture
def articles():
    return fixture_articles()


def scripted(articles) -> AgentResponder:
    r = AgentResponder(articles, seed=5, questions=fixture_questions())  # four per article, as an LLM writes

    def more(req):  # seven questions for five asked
        base = items(r, req)
        extra = [dict(base[i % len(base)], question=base[i % len(base)]["question"].replace("Which", "What", 1))
                 for i in range(7 - len(base))]
        return json.dumps({"questions": base + extra})

    def wrong_items(req):
        base = items(r, req)
        base[0]["answer"] = "Nobody Mentioned Inc"
        del base[1]["choices"]
        return json.dumps({"questions": base})

    def cut(req):
        text = json.dumps({"questions": items(r, req)[:2]})
        end = text.index('"question"', text.index('"question"') + 1) + 20  # inside the second question
        return Reply(content=text[:end], finish_reason="length")

    r.overrides = {
        TITLES["Kestrel"]: Reply(content="Sorry, here are some thoughts instead of JSON."),
        TITLES["Lisbon"]: more,
        TITLES["Brightline"]: wrong_items,
        TITLES["Floods"]: Reply(content=None, refusal="I can't help with this request."),
        TITLES["Meridian"]: cut,
    }
    return r


def test_bad_outputs_are_dropped_with_the_right_verdict(workspace, articles, monkeypatch):
    # This test pins each check's and dedup's verdicts on scripted outputs; with the quality gates
    # on, some scripted items (Lisbon's reworded copy) fall to a gate first (tests/test_generate_gates.py).
    monkeypatch.setattr("okgen.generate.gates.DEFAULT_ON", False)
    r = scripted(articles)

    def validator(req, criteria):
        q = question_text(req)
        out = {c: {"reason": "fine", "passed": True} for c in criteria}
        if "Shares in" in q:
            out["one_correct_choice"] = {"reason": "two choices fit", "passed": False}
        return out

    r.validator = validator
    def halvorsen(q: str) -> bool:  # a question about the Halvorsen Energy article
        return any(w in q for w in ("Halvorsen", "battery", "Gdansk"))

    r.probe_answer = lambda req: r.letter(req, correct=halvorsen(question_text(req)))
    knows_all = lambda req: r.letter(req, correct=True)  # noqa: E731
    with OpenAIServer(responder=r) as srv, OpenAIServer(responder=lambda req, e: knows_all(req)) as srv2:
        spec = f"openai/fake,base_url={srv.base_url}"
        res = run_generate(DAY, workspace, articles, generator=spec, validator=spec,
                           probes=[spec, f"openai/oracle,base_url={srv2.base_url}"], seed=3, concurrency=4)
    f = res.funnel
    assert_funnel_adds_up(f)
    assert f["articles"]["failed"] == {"invalid_json": 1, "refusal": 1}
    assert f["articles"]["truncated"] == 1 and f["articles"]["pending"] == 0 and res.complete
    by_title = {a.id: a.title for a in articles}
    cands = {}
    for c in res.candidates:
        cands.setdefault(by_title[c.article_id].split()[0], []).append(c)
    assert "Kestrel" not in cands and "Floods" not in cands
    # The complete part of the cut answer, and the question being written when it was cut, counted
    # as a failed candidate (it vanished from the funnel before).
    mer = sorted(cands["Meridian"], key=lambda c: c.index)
    assert len(mer) == 2 and mer[0].rejected_by != "schema" and mer[1].rejected_by == "schema"
    assert "cut off by the completion token limit" in str(mer[1].verdicts[-1].reason)
    b = sorted(cands["Brightline"], key=lambda c: c.index)
    assert b[0].rejected_by == "answer_in_choices" and b[1].rejected_by == "schema"
    lis = sorted(cands["Lisbon"], key=lambda c: c.index)
    assert len(lis) == 7 and [c.rejected_by for c in lis[5:]] == ["question_count", "question_count"]
    assert f["checks"]["rejected"]["question_count"] == 2 and f["checks"]["rejected"]["schema"] == 2
    shares = [c for c in res.candidates if "Shares in" in c.question]
    assert shares and all(c.rejected_by == "one_correct_choice" and c.rejected_stage == "validator" for c in shares)
    assert f["validator"]["rejected"] == {"one_correct_choice": len(shares)}
    known = [c for c in res.candidates if "probe_known" in c.flags]
    assert known and all(halvorsen(c.question) and c.rejected_by == "probe_known" for c in known)
    assert f["probes"]["dropped"] == len(known) == f["probes"]["flagged"]
    assert f["dedup"]["near_duplicate"] >= 1  # Lisbon's reworded copy
    assert f["kept"] == len(res.questions) > 5
    for q in res.questions:
        assert q.choices[q.answer_index] == q.answer and len(set(q.choices)) == 4
        stages = {v.stage for v in q.verdicts}
        assert stages == {"check", "validator", "probe"}
        assert all(v.passed for v in q.verdicts if not v.name.startswith("probe:"))  # one probe knowing is fine
        assert [v.passed for v in q.verdicts if v.name == "probe:openai/oracle"] == [False]
        assert q.generator == "openai/fake" and q.validator == "openai/fake"
    assert f["usage"]["calls"] == srv.calls["chat"] + srv2.calls["chat"]
    assert f["usage"]["by_agent"]["generator"]["calls"] == 6
    assert res.generator.model == "openai/fake" and res.probes[1].model == "openai/oracle"
    assert len(res.prompt_hash) == 64
    assert f["usage"]["this_run_errors"] == {"invalid_json": 1, "length": 1, "refusal": 1, "schema": 1}
    # Asked again, the finished date is answered from the store: the first run's own counts
    # (its failed calls, retries, cached calls) are not this run's.
    again = run_generate(DAY, workspace, articles, generator=spec, validator=spec,
                         probes=[spec, f"openai/oracle,base_url={srv2.base_url}"], seed=3, concurrency=4)
    u = again.funnel["usage"]
    assert (u["this_run_calls"], u["this_run_retries"], u["this_run_cached_calls"], u["this_run_errors"]) == (0, 0, 0, {})
    line = next(x for x in render_funnel(again.funnel).splitlines() if x.strip().startswith("this run"))
    assert line.split() == ["this", "run", "0", "calls", "(0", "cached,", "0", "retries),", "$0.0000"]


def test_transient_failures_are_retried_unless_maybe_processed(workspace, articles):
    r = AgentResponder(articles)
    state = Counter()

    def flaky(kind, reply):
        def f(req):
            state[kind] += 1
            return reply if state[kind] == 1 else r.default_questions(req)
        return f

    r.overrides = {
        TITLES["Orion"]: flaky("429", Reply(status=429, headers={"Retry-After": "0.2"}, error="rate limited")),
        TITLES["Verdant"]: flaky("500", Reply(status=500, error="internal error")),
        TITLES["Germany"]: flaky("slow", Reply(content="{}", delay=4.0)),
    }
    with OpenAIServer(responder=r) as srv:
        spec = f"openai/fake,base_url={srv.base_url},timeout=1.5,max_retries=3"  # headroom on a loaded machine
        res = run_generate(EVE, workspace, articles, generator=spec, validator=spec, concurrency=8)
        f = res.funnel
        assert_funnel_adds_up(f)
        # A timed-out request may have been processed (and billed): not sent again, left for a rerun.
        assert not res.complete and f["articles"]["pending_by_reason"] == {"timeout": 1}
        assert f["articles"]["generated"] == 3 and not f["articles"]["failed"]
        assert f["usage"]["by_agent"]["generator"]["retries"] == 2 and state == {"429": 2, "500": 2, "slow": 1}
        orion = [q.time for q in srv.web.requests if TITLES["Orion"].encode() in q.body]  # generator calls first
        assert orion[1] - orion[0] >= 0.19  # the Retry-After was waited
        again = run_generate(EVE, workspace, articles, generator=spec, validator=spec, concurrency=8)
    assert again.complete and again.funnel["articles"]["resumed"] == 3 and state["slow"] == 2
    assert again.funnel["kept"] == len(again.questions) > 0


def test_transient_errors_leave_articles_pending_then_resume(workspace, articles):
    r = AgentResponder(articles, questions=fixture_questions())
    broken = {"on": True}
    r.overrides = {TITLES["Toronto"]: lambda req: Reply(status=503, error="down") if broken["on"] else r.default_questions(req)}
    with OpenAIServer(responder=r) as srv:
        spec = f"openai/fake,base_url={srv.base_url},max_retries=1"
        first = run_generate(EVE, workspace, articles, generator=spec)
        assert not first.complete and first.funnel["articles"]["pending_by_reason"] == {"http_503": 1}
        assert_funnel_adds_up(first.funnel)
        calls = r.calls["generator"]
        broken["on"] = False
        second = run_generate(EVE, workspace, articles, generator=spec)
        assert second.complete and second.funnel["articles"]["resumed"] == 3
        assert r.calls["generator"] == calls + 1  # only the pending article was asked again
        assert {q.id for q in first.questions} < {q.id for q in second.questions}


def test_an_article_a_server_always_fails_is_given_up_after_three_runs(workspace, articles):
    r = AgentResponder(articles, questions=fixture_questions())
    r.overrides = {TITLES["Toronto"]: Reply(status=500, error="shard 7 is overloaded")}
    with OpenAIServer(responder=r) as srv:
        spec = f"openai/fake,base_url={srv.base_url},max_retries=0"
        runs = [run_generate(EVE, workspace, articles, generator=spec) for _ in range(3)]
        for res in runs[:2]:
            assert not res.complete and res.funnel["articles"]["pending_by_reason"] == {"http_500": 1}
        last = runs[2].funnel["articles"]
        assert runs[2].complete and last["failed"] == {"http_500": 1} and last["pending"] == 0
        assert "given up after 3 runs" in last["errors"]["http_500"] and "shard 7" in last["errors"]["http_500"]
        assert_funnel_adds_up(runs[2].funnel)
        assert {q.id for q in runs[2].questions} == {q.id for q in runs[0].questions} != set()
        calls = r.calls["generator"]
        again = run_generate(EVE, workspace, articles, generator=spec)
        assert again.complete and r.calls["generator"] == calls  # the failed article is not asked again
        # With give_up_after = 0 (a new run: --fresh) the article is never given up.
        never = [run_generate(EVE, workspace, articles, generator=spec, fresh=i == 0,
                              config={"generate": {"give_up_after": 0}}) for i in range(4)]
        assert not never[-1].complete and never[-1].funnel["articles"]["pending_by_reason"] == {"http_500": 1}
        with pytest.raises(ConfigError, match="give_up_after"):
            run_generate(EVE, workspace, articles, generator=spec, config={"generate": {"give_up_after": "x"}})


def test_only_failures_an_article_can_draw_by_itself_count_against_it():
    from okgen.generate.runner import own_failure

    assert all(own_failure(k) for k in ("http_500", "http_400", "http_413", "http_422", "bad_response", "internal"))
    assert not any(own_failure(k) for k in ("http_502", "http_503", "http_504", "timeout", "connection", "unreachable",
                                            "rate_limit", "budget", "http_401", "http_402", "http_403", "http_404",
                                            "http_408", "http_409", "http_429"))


def test_an_outage_over_reruns_gives_nothing_up(workspace, articles):
    """The other articles finished, then the server is down (503) for the reruns of the one left:
    an outage says nothing of that article, however many reruns see it."""
    r = AgentResponder(articles, questions=fixture_questions())
    r.overrides = {TITLES["Toronto"]: Reply(status=503, error="Service Unavailable")}
    with OpenAIServer(responder=r) as srv:
        spec = f"openai/fake,base_url={srv.base_url},max_retries=0"
        for _ in range(4):
            res = run_generate(EVE, workspace, articles, generator=spec)
    assert not res.complete and res.funnel["articles"]["pending_by_reason"] == {"http_503": 1}
    assert not res.funnel["articles"]["failed"]


def test_a_server_failing_every_article_gives_none_up(workspace, articles):
    r = AgentResponder(articles, questions=fixture_questions())
    r.overrides = {t: Reply(status=500, error="down") for t in TITLES.values()}
    with OpenAIServer(responder=r) as srv:
        spec = f"openai/fake,base_url={srv.base_url},max_retries=0"
        for _ in range(4):
            res = run_generate(EVE, workspace, articles, generator=spec)
        # No run finished another article: the failures say nothing about any one of them.
        assert not res.complete and not res.funnel["articles"]["failed"]
        assert res.funnel["articles"]["pending"] == res.funnel["articles"]["total"]


def test_rerun_and_cache(workspace, articles):
    r = AgentResponder(articles)
    with OpenAIServer(responder=r) as srv:
        spec = f"openai/fake,base_url={srv.base_url}"
        kw = dict(generator=spec, validator=spec, probes=[spec])
        first = run_generate(DAY, workspace, articles, **kw)
        n = srv.calls["chat"]
        again = run_generate(DAY, workspace, articles, **kw)
        assert srv.calls["chat"] == n and again.questions == first.questions  # answered from the store
        assert again.funnel["articles"]["resumed"] == 6
        cached = run_generate(DAY, workspace, articles, fresh=True, **kw)
        assert srv.calls["chat"] == n and cached.questions == first.questions  # every call from the cache
        assert cached.funnel["usage"]["cached_calls"] == cached.funnel["usage"]["calls"] == n
        nocache = run_generate(DAY, workspace, articles, fresh=True, use_cache=False, **kw)
        assert srv.calls["chat"] == 2 * n and nocache.questions == first.questions


def test_budget_stops_cleanly_and_resume_finishes(workspace, articles):
    r = AgentResponder(articles, questions=fixture_questions())  # four per article, as an LLM writes

    def priced(req, endpoint):
        out = r(req, endpoint)
        return Reply(content=out if isinstance(out, str) else out.content,
                     usage={"prompt_tokens": 10_000, "completion_tokens": 0, "total_tokens": 10_000})

    # $0.01 per validator call; the generator (the fixture questions, four per article) is free.
    cfg = {"prices": {"judge": {"input": 1.0, "output": 1.0}, "writer": {"input": 0.0, "output": 0.0}}}
    with OpenAIServer(responder=priced) as srv:
        spec = f"openai/judge,base_url={srv.base_url}"
        writer = f"openai/writer,base_url={srv.base_url}"
        # A budget of four and a half validator calls finishes the first article and stops
        # in the second.
        res = run_generate(DAY, workspace, articles, generator=writer, validator=spec, max_cost=0.045,
                           concurrency=1, config=cfg)
        f = res.funnel
        assert res.stopped == "budget" and not res.complete and f["stopped"] == "budget"
        assert f["articles"]["pending_by_reason"].get("budget", 0) >= 1
        assert 0.01 <= f["usage"]["this_run_cost_usd"] <= 0.065
        assert 1 <= f["articles"]["generated"] < 6
        assert_funnel_adds_up(f)
        calls = r.calls["validator"]
        done = run_generate(DAY, workspace, articles, generator=writer, validator=spec, max_cost=10.0, concurrency=4,
                            config=cfg)
        assert done.complete and done.stopped is None
        assert done.funnel["articles"]["resumed"] == f["articles"]["generated"]
        total_val = sum(1 for c in done.candidates if c.rejected_stage != "check")
        # Nothing asked twice: finished work and the cache kept (one generator call per article).
        assert r.calls["validator"] == total_val and r.calls["generator"] == 6
        assert calls < total_val
        # The date's cost is what both runs spent: the replies the stopped run paid for, served
        # from the cache on the rerun, count apart at their cost when made.
        u = done.funnel["usage"]
        assert u["cached_cost_usd"] > 0
        assert u["cost_usd"] + u["cached_cost_usd"] == pytest.approx(f["usage"]["this_run_cost_usd"] + u["this_run_cost_usd"])
        assert "of cached replies, at current prices" in render_funnel(done.funnel)


def test_a_budget_goes_into_finishing_started_articles(workspace, monkeypatch):
    import okgen.generate.extractive as extractive
    from okgen.testing.corpus import make_articles

    arts = make_articles(40, DAY, days=1, seed=3)[0]
    # The fake LLM writes its questions with the offline generator; the synthetic articles stitch
    # unrelated template sentences together, which its off-topic rule would refuse. This test is
    # about the order budgeted calls go in, so the fake writer takes them as they are.
    monkeypatch.setattr(extractive, "off_topic", lambda *a, **k: False)
    r = AgentResponder(arts)

    def priced(req, endpoint):
        out = r(req, endpoint)
        return Reply(content=out if isinstance(out, str) else out.content,
                     usage={"prompt_tokens": 10_000, "completion_tokens": 0, "total_tokens": 10_000})

    cfg = {"prices": {"judge": {"input": 1.0, "output": 1.0}}}  # $0.01 per call
    with OpenAIServer(responder=priced, latency=0.02) as srv:
        spec = f"openai/judge,base_url={srv.base_url}"
        res = run_generate(DAY, workspace, arts, generator=spec, validator=spec, max_cost=0.2, concurrency=8,
                           config=cfg)
    f = res.funnel
    assert res.stopped == "budget" and f["articles"]["generated"] >= 1
    # Validator calls of started articles went before new generator calls, so most of the money
    # bought finished articles; in generator-first order (the default without a budget) the
    # 40 generator calls alone would have spent more than the budget.
    assert f["usage"]["cost_usd"] >= 0.5 * f["usage"]["this_run_cost_usd"] > 0  # measured 0.7 (0.19 generator-first)
    assert f["usage"]["by_agent"]["generator"]["calls"] < 20
    assert f["usage"]["this_run_calls"] == srv.calls["chat"]  # calls the budget refused were never sent
    assert_funnel_adds_up(f)


def test_flag_only_probes_keep_known_questions(workspace, articles):
    r = AgentResponder(articles)
    r.probe_answer = lambda req: r.letter(req, correct=True)
    # The probe must know the answers: let the fake model write them first (as the generator).
    with OpenAIServer(responder=r) as srv:
        spec = f"openai/fake,base_url={srv.base_url}"
        res = run_generate(DAY, workspace, articles, generator=spec, probes=[spec], drop_known=False)
    assert res.questions and all("probe_known" in q.flags for q in res.questions)
    p = res.funnel["probes"]
    assert p["dropped"] == 0 and p["correct_by_model"] == {"probe:openai/fake": p["flagged"]}
    assert res.funnel["probes"]["flagged"] == res.funnel["probes"]["passed"] > 0
    assert_funnel_adds_up(res.funnel)


def test_one_model_probed_twice_keeps_two_verdicts_and_none_turns_probes_off(workspace, articles):
    r = AgentResponder(articles)
    r.probe_answer = lambda req: r.letter(req, correct=True)
    with OpenAIServer(responder=r) as srv:
        spec = f"openai/fake,base_url={srv.base_url}"
        some = [a for a in articles if a.date == DAY][:3]
        res = run_generate(DAY, workspace, some, generator=spec, probes=[spec, spec + ",temperature=0.7,seed=1"],
                           drop_known=False)
        n = len(res.questions)
        assert n and res.funnel["probes"]["correct_by_model"] == {"probe:openai/fake#1": n, "probe:openai/fake#2": n}
        assert [p.model for p in res.probes] == ["openai/fake", "openai/fake"]
        off = run_generate(DAY, workspace, some, generator=spec, probes=["none"], fresh=True)
    assert off.probes == () and "probes" not in off.render_funnel().split("kept")[0].lower()


def test_an_unreachable_model_stops_the_run(workspace):
    from okgen.testing.corpus import make_articles

    articles, _ = make_articles(14, DAY, days=1, seed=4)
    with OpenAIServer(responder=lambda req, e: Reply(status=401, error="invalid API key")) as srv:
        res = run_generate(DAY, workspace, articles, generator=f"openai/fake,base_url={srv.base_url}", concurrency=1)
    f = res.funnel
    assert res.stopped == "errors" and not res.complete and not res.questions
    assert f["articles"]["pending"] == 14 and f["articles"]["pending_by_reason"]["http_401"] >= 10
    assert srv.calls["chat"] < 14  # it stopped asking
    assert_funnel_adds_up(f)


def test_probe_letters_are_read_from_free_text():
    from okgen.generate.probe import read_letter

    cases = {"B": 1, "B) Lisbon": 1, "(C)": 2, "D - Paris": 3, "Answer: A": 0, "The answer is D.": 3,
             "I think B is right": 1, "A good guess is C": 2, "A.": 0, "no idea": None, "E": None}
    assert {t: read_letter(t, 4) for t in cases} == cases


def test_the_funnel_lists_rejections_in_pipeline_order_also_when_read_back():
    """A funnel stored with sorted JSON keys (a finished date read back from the store) renders its
    rejections in the order of the checks, as the run that made it printed them."""
    from okgen.generate.funnel import ORDER

    f = {"date": "2026-11-21", "articles": {"total": 1, "generated": 1, "resumed": 1, "failed": {}, "pending": 0,
                                            "pending_by_reason": {}, "short": 0, "truncated": 0},
         "candidates": 4, "checks": {"passed": 1, "rejected": {"stem_overlap": 1, "giveaway": 1, "schema": 1}},
         "validator": {"ran": False}, "probes": {"models": []}, "dedup": {"near_duplicate": 0},
         "balance": {}, "kept": 1, "answer_positions": {"A": 1}, "usage": {"calls": 0}}
    line = next(ln for ln in render_funnel(f).splitlines() if "after checks" in ln)
    shown = [w for w in line.split("rejected ", 1)[1].replace(",", "").split() if not w.isdigit()]
    assert shown == sorted(shown, key=ORDER.index) and shown[0] == "schema"


def test_settings_that_change_the_questions_change_the_signatures_prompt_hash(workspace, articles):
    """An outlet cap or an answer cap other than the default keeps other questions: the
    signature names it (its `prompt` hash), as it names the questions asked per article."""
    r = AgentResponder(articles, questions=fixture_questions())
    with OpenAIServer(responder=r) as srv:
        spec = f"openai/fake,base_url={srv.base_url}"
        base = run_generate(EVE, workspace, articles, generator=spec).prompt_hash
        again = run_generate(EVE, workspace, articles, generator=spec, config={"generate": {}}).prompt_hash
        capped = run_generate(EVE, workspace, articles, generator=spec,
                              config={"generate": {"max_outlet_share": 0.5}}).prompt_hash
        repeats = run_generate(EVE, workspace, articles, generator=spec,
                               config={"generate": {"max_answer_repeats": 0}}).prompt_hash
    assert base == again and len({base, capped, repeats}) == 3


@pytest.mark.parametrize("n, check", [(3, "schema"), (2, "schema"), (1, "question_count")])
def test_the_question_cut_by_the_token_limit_is_a_failed_candidate(n, check):
    from okgen.generate.llm_generator import parse_outcome
    from okgen.llm.base import ChatResult

    whole = {"question": "Which city hosted the summit?", "choices": ["Lisbon", "Porto", "Braga", "Faro"],
             "answer": "Lisbon", "short_answer": "Lisbon", "rationale": "The article says so.", "evidence": "in Lisbon"}
    text = json.dumps({"questions": [whole, {**whole, "question": "Who chaired it?"}]})
    text = text[: text.rindex("The article")]  # cut inside the second question's rationale
    out = parse_outcome(ChatResult(text=text, error="cut at the token limit", error_kind="length"), "a1", n)
    assert out.truncated and [c.index for c in out.candidates] == [0, 1]
    assert out.candidates[0].rejected_by is None and out.candidates[1].question == "Who chaired it?"
    assert out.candidates[1].rejected_by == check
