"""The LLM fact extractor (``llm-v1``) against the local OpenAI-compatible test server: facts the
article supports are kept, every other one is dropped with its reason, a malformed answer fails
its article, a transient failure writes nothing and a rerun is served by the response cache."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from okgen.errors import OkgenError
from okgen.facts import extract_day, read_facts
from okgen.facts.llm import LLMExtractor, answer_items, number_keys
from okgen.ingest.store import ArticleStore
from okgen.llm import ChatResult
from okgen.settings import Workspace
from okgen.testing.evolving import DAYS, LEAD, TARIFF, TOLL, story_articles
from okgen.testing.openai_server import OpenAIServer, Reply

DAY = DAYS[3]  # alpha: tariff 25%, McIlroy leads; beta: the same; gamma: toll 112, gold 3,000
TARIFF_25 = TARIFF.format(v="25%", wd="Thursday")
LEAD_MCILROY = LEAD.format(v="Rory McIlroy")
TOLL_112 = TOLL.format(v=112, wd="Thursday")


def fact(subject, relation, obj, evidence, valid_from=None, past=False):
    return {"subject": subject, "relation": relation, "object": obj, "valid_from": valid_from, "past": past,
            "evidence": evidence}


ALPHA = [
    fact("Brazil", "tariff_rate", "25%", TARIFF_25, "2026-03-05"),                        # kept
    fact("Masters", "leads", "Rory McIlroy", LEAD_MCILROY),                               # kept
    fact("Brazil", "tariff_rate", "30%", TARIFF_25),                                      # value not in the sentence
    fact("Brazil", "tariff_rate", "50%", "The United States raised tariffs on Brazilian goods to 50% on Monday."),
    fact("Apple", "ceo_of", "Tim Cook", "Apple chief executive Tim Cook said the company would open a new store"),
    fact("Masters", "leads", "Rory McIlroy", "McIlroy leads"),                            # evidence too short
    fact("Masters", "leads", "Rory McIlroy", LEAD_MCILROY),                               # the same fact again
    fact("Valparaiso", "death_toll", "many", TARIFF_25),                                  # a count without a number
    {"subject": "Brazil", "relation": "tariff_rate"},                                     # no value, no evidence
]
GAMMA_TEXT = "```json\n" + json.dumps({"facts": [fact("Valparaiso", "death_toll", "112", TOLL_112, "2026-03-05")]})[:-2] + ",]}\n```"


def title_of(req: dict) -> str:
    user = req["messages"][-1]["content"]
    return user.split("Title: ", 1)[1].split("\n", 1)[0]


def responder(fail: set[str] = frozenset()):
    def answer(req, endpoint):
        t = title_of(req)
        if t.split()[0] in fail:
            return Reply(status=500, error="overloaded")
        if t.startswith("Alpha"):
            return json.dumps({"facts": ALPHA})
        if t.startswith("Beta"):
            return "Sorry, I cannot find any facts in this article."
        return GAMMA_TEXT
    return answer


def spec(srv, extra=""):
    return f"openai/fake-facts,base_url={srv.base_url},max_retries=0{extra}"


def test_facts_checked_against_the_article_and_every_drop_counted(tmp_path):
    ws = Workspace(tmp_path)
    with OpenAIServer(responder=responder()) as srv:
        ex = LLMExtractor.from_spec(spec(srv), ws)
        try:
            ff = extract_day(ws, DAY, extractor=ex, articles=story_articles())
        finally:
            ex.close()
    assert ex.id.startswith("llm-v1+openai/fake-facts+") and ff.extractor == ex.id
    got = sorted((f.outlet, f.relation, f.subject_key, f.object_key) for f in ff.facts)
    assert got == [("alpha", "leads", "masters", "rory mcilroy"), ("alpha", "tariff_rate", "brazil", "25%"),
                   ("gamma", "death_toll", "valparaiso", "112")]
    for f in ff.facts:
        assert f.id.startswith("llm-v1+openai/fake-facts:") and f.extractor == ex.id and f.reported == DAY
        art = next(a for a in story_articles() if a.id == f.article_id)
        assert f.evidence in art.text and f.object in f.evidence
    tariff = next(f for f in ff.facts if f.relation == "tariff_rate")
    assert tariff.valid_from == DAY and tariff.object_kind == "percent" and not tariff.past
    fn = ff.funnel
    assert fn["articles"] == {"total": 3, "read": 2, "failed": {"invalid_json": 1}}
    assert fn["proposed"] == len(ALPHA) + 1 and fn["kept"] == 3
    assert fn["dropped"] == {"value_not_in_evidence": 1, "evidence_not_in_article": 1, "relation": 1,
                             "evidence_too_short": 1, "duplicate": 1, "value_not_a_number": 1, "schema": 1}
    assert fn["proposed"] == fn["kept"] + sum(fn["dropped"].values())
    reasons = [d["reason"] for d in fn["drops"]]
    assert reasons.count("article:invalid_json") == 1 and len(reasons) == 1 + sum(fn["dropped"].values())
    assert fn["usage"]["calls"] == 3
    assert read_facts(ws, DAY) == ff


def test_transient_failure_writes_nothing_and_the_rerun_uses_the_cache(tmp_path):
    ws = Workspace(tmp_path)
    arts = story_articles()
    with OpenAIServer(responder=responder(fail={"Gamma"})) as srv:
        ex = LLMExtractor.from_spec(spec(srv), ws)
        with pytest.raises(OkgenError, match=r"1 of 3 article\(s\) got no answer \(http_500.*nothing written"):
            extract_day(ws, DAY, extractor=ex, articles=arts)
        ex.close()
        assert not (tmp_path / "data" / "facts" / f"{DAY}.json").exists()
        srv.responder = responder()
        calls = srv.calls["chat"]
        ex = LLMExtractor.from_spec(spec(srv), ws)
        ff = extract_day(ws, DAY, extractor=ex, articles=arts)
        ex.close()
        assert srv.calls["chat"] == calls + 1  # only the failed article is asked again
        assert ff.funnel["usage"]["cached"] == 2 and len(ff.facts) == 3


def test_budget_stops_cleanly(tmp_path):
    ws = Workspace(tmp_path)
    (tmp_path / "okgen.toml").write_text('[prices."fake-facts"]\ninput = 1000.0\noutput = 1000.0\n')
    with OpenAIServer(responder=responder()) as srv:
        ex = LLMExtractor.from_spec(spec(srv), ws, max_cost=0.0001, use_cache=False)
        with pytest.raises(OkgenError, match="budget"):
            extract_day(ws, DAY, extractor=ex, articles=story_articles())
        assert srv.calls["chat"] < 3  # the budget stopped the calls after the first
    assert not (tmp_path / "data" / "facts").exists()


def test_answers_read_leniently():
    cut = ChatResult(text='{"facts": [' + json.dumps(fact("a", "leads", "b", "c d e f")) + ', {"subject": "x", "rel',
                     error="output cut by the length limit", error_kind="length")
    items, err = answer_items(cut)
    assert err is None and len(items) == 1 and items[0]["subject"] == "a"
    assert answer_items(ChatResult(text="no json", error="invalid JSON", error_kind="invalid_json")) == ([], "invalid_json")
    assert answer_items(ChatResult(error="refused: no", error_kind="refusal")) == ([], "refusal")
    assert number_keys("rose to 125 percent from 84%, or $3.2 billion") == {"125%", "84%", "3200000000"}


def test_one_sentence_with_two_values_is_ambiguous(tmp_path):
    from okgen.testing.evolving import make_article

    ws = Workspace(tmp_path)
    sent = "The death toll in Gaza rose to 50,933 on Monday, and officials later put it at 50,980."
    art = make_article(DAY, "alpha", "Gaza toll", sent + " Aid groups warned of shortages across the territory.")
    with OpenAIServer(responder=lambda req, ep: json.dumps({"facts": [
            fact("Gaza", "death_toll", "50,933", sent), fact("Gaza", "death_toll", "50,980", sent)]})) as srv:
        ex = LLMExtractor.from_spec(spec(srv), ws, use_cache=False)
        facts = ex.extract([art])
    assert facts == [] and ex.funnel["dropped"] == {"ambiguous": 2}


def test_cli_extract_with_a_model_and_a_bad_spec(tmp_path):
    from okgen.cli.main import cli

    with ArticleStore.for_workspace(Workspace(tmp_path)) as store:
        for a in story_articles():
            store.upsert(a)
    with OpenAIServer(responder=responder()) as srv:
        r = CliRunner().invoke(cli, ["--home", str(tmp_path), "--json", "facts", "extract", "--date", str(DAY),
                                     "--extractor", spec(srv)])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["facts"] == 3 and out["funnel"]["articles"]["failed"] == {"invalid_json": 1}
    assert out["extractor"].startswith("llm-v1+openai/fake-facts+")
    r = CliRunner().invoke(cli, ["--home", str(tmp_path), "facts", "extract", "--date", str(DAY), "--extractor", "gpt4"])
    assert r.exit_code != 0 and "unknown model spec 'gpt4'" in str(r.exception)


def test_the_structured_memory_reads_the_llm_extractors_facts():
    """``ko-blind,extractor=llm`` builds its entries with llm-v1 on the given chat model: the
    facts the articles support, dated by their own valid-from, and nothing the checks dropped."""
    from okgen.errors import ConfigError
    from okgen.memory.base import load_memory
    from okgen.memory.harness import memory_for

    with pytest.raises(ConfigError, match="needs a chat model"):
        load_memory("ko-blind,extractor=llm")
    with OpenAIServer(responder=responder()) as srv:
        m = memory_for("mem:ko-blind,extractor=llm", memory_model=spec(srv))
        m.reset(0)
        m.observe(DAY, [a for a in story_articles() if a.date == DAY])
        assert srv.calls["chat"] == 3
    assert m.identity() == {"memory": "ko-blind", "extractor": "llm", "model": spec(srv)}
    got = m.retrieve("What is the tariff rate on goods from Brazil?", DAY, 5)
    assert len(got) == 1 and "25%" in got[0].text and "30%" not in got[0].text and "50%" not in got[0].text
    assert m.retrieve("What is the tariff rate on goods from Brazil?", DAYS[2], 5) == []  # dated after DAYS[2]


def test_llm_extraction_shows_its_progress_off_a_terminal(tmp_path, caplog, monkeypatch):
    # A model on a CPU takes minutes an article: a run printed nothing for 3 minutes.
    import logging

    from okgen import progress

    monkeypatch.delenv("OKGEN_QUIET", raising=False)
    monkeypatch.setenv("OKGEN_PROGRESS_SECONDS", "0")  # a line per article instead of every 10 s
    monkeypatch.setattr(progress.log, "level", logging.INFO)
    caplog.set_level(logging.INFO, logger=progress.LOGGER)
    ws = Workspace(tmp_path)
    with OpenAIServer(responder=responder()) as srv:
        ex = LLMExtractor.from_spec(spec(srv), ws)
        try:
            extract_day(ws, DAY, extractor=ex, articles=story_articles())
        finally:
            ex.close()
    got = [r.getMessage() for r in caplog.records if r.name == progress.LOGGER]
    assert any(m.startswith(f"facts {DAY}: 3/3 (100%)") for m in got), got
