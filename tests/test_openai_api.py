"""OpenAIClient against a real OpenAI-compatible server on 127.0.0.1 with scripted replies."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from pydantic import BaseModel

from okgen.errors import ConfigError
from okgen.models.cache import ResponseCache
from okgen.models.openai_api import (
    ChatRequest,
    OpenAIClient,
    client_from_spec,
    parse_endpoint_spec,
    run_sync,
)
from okgen.models.pricing import Budget, PriceTable
from okgen.testing.openai_server import OpenAIServer, Reply


class Answer(BaseModel):
    answer: str
    n: int


def req(text: str = "hi", **kw) -> ChatRequest:
    return ChatRequest(messages=({"role": "user", "content": text},), **kw)


@pytest.fixture
def server():
    with OpenAIServer() as srv:
        yield srv


def client(srv: OpenAIServer, **kw) -> OpenAIClient:
    kw.setdefault("backoff_base", 0.01)
    kw.setdefault("prices", PriceTable({"fake": {"input": 1.0, "output": 2.0}}))
    return OpenAIClient("fake", base_url=srv.base_url, **kw)


def test_valid_structured_output(server):
    server.script('{"answer": "Lisbon", "n": 3}')
    res = client(server).chat(req(schema=Answer))
    assert res.ok and res.parsed == Answer(answer="Lisbon", n=3)
    assert res.mode == "structured" and res.retries == 0
    sent = server.requests[0]
    assert sent["response_format"]["type"] == "json_schema"
    assert sent["response_format"]["json_schema"]["name"] == "Answer"
    assert sent["messages"] == [{"role": "user", "content": "hi"}]


def test_wrapped_json_is_extracted(server):
    server.script('Sure! ```json\n{"answer": "x", "n": 1,}\n``` Hope it helps.')
    res = client(server).chat(req(schema=Answer))
    assert res.ok and res.parsed.n == 1


@pytest.mark.parametrize("reply, kind", [
    (Reply(content="I cannot answer in JSON today."), "invalid_json"),
    (Reply(content='{"answer": "x"}'), "schema"),
    (Reply(content=None, refusal="I will not help with that."), "refusal"),
    (Reply(content='{"answer": "x", "n"', finish_reason="length"), "length"),
    (Reply(content="", finish_reason="content_filter"), "content_filter"),
])
def test_bad_outputs_are_per_item_errors(server, reply, kind):
    server.script(reply, '{"answer": "ok", "n": 2}')
    c = client(server)
    results = c.chat_many([req("a", schema=Answer), req("b", schema=Answer)])
    bad = [r for r in results if not r.ok]  # the scripted replies go to whichever request comes first
    assert len(bad) == 1 and bad[0].error_kind == kind and not bad[0].transient
    assert sum(r.ok for r in results) == 1  # one bad item never sinks the batch
    assert c.stats.by_error == {kind: 1}


def test_429_retry_after_is_honoured(server):
    server.script(Reply(status=429, headers={"Retry-After": "1"}, error="slow down"), '{"answer": "x", "n": 1}')
    res = client(server, backoff_base=0.01).chat(req(schema=Answer))
    assert res.ok and res.retries == 1
    t = [r.time for r in server.web.requests]
    assert len(t) == 2 and t[1] - t[0] >= 0.95  # waited the server's second, not the 10 ms backoff


def test_retry_after_ms_and_date(server):
    import email.utils

    when = email.utils.formatdate(time.time() + 2.2, usegmt=True)  # whole seconds: waits 0.8-1.9 s
    server.script(Reply(status=503, headers={"retry-after-ms": "300"}), Reply(status=429, headers={"Retry-After": when}), "ok")
    res = client(server).chat(req())
    assert res.ok and res.retries == 2
    t = [r.time for r in server.web.requests]
    assert t[1] - t[0] >= 0.28
    assert t[2] - t[1] >= 0.5  # an HTTP date in the future


def test_500_then_success(server):
    server.script(Reply(status=500, error="boom"), Reply(status=502), "fine")
    res = client(server).chat(req())
    assert res.ok and res.text == "fine" and res.retries == 2


def test_retries_exhausted(server):
    server.script(*[Reply(status=500)] * 3)
    res = client(server, max_retries=2).chat(req())
    assert res.error_kind == "http_500" and res.retries == 2 and res.transient
    assert server.calls["chat"] == 3


def test_fatal_4xx_is_not_retried(server):
    # A prompt longer than the model takes: an answer about this request (final, stored).
    server.script(Reply(status=400, error="This model's maximum context length is 2048 tokens"))
    res = client(server).chat(req())
    assert res.error_kind == "too_long" and server.calls["chat"] == 1 and not res.transient
    assert "maximum context length" in res.error
    # Any other 4xx is not retried now, but says nothing about the request: left for a rerun.
    for status, msg in ((400, "max_tokens must be at most 1024"), (401, "Incorrect API key provided"),
                        (404, "The model `gpt-4.1-mnii` does not exist")):
        server.script(Reply(status=status, error=msg))
        res = client(server).chat(req())
        assert res.error_kind == f"http_{status}" and res.transient and msg in res.error
    assert server.calls["chat"] == 4


@pytest.mark.parametrize("body", [
    {"error": {"message": "upstream overloaded"}},
    {"choices": []},
    {"choices": ["text"]},
    {"choices": [{"message": "text", "finish_reason": "stop"}]},
    {"choices": [{"message": {"role": "assistant", "content": None}, "finish_reason": "stop"}]},
    {"choices": [{"message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}], "usage": "lots"},
])
def test_a_broken_200_reply_is_retried_and_never_cached(server, tmp_path, body):
    cache = ResponseCache(tmp_path / "c.sqlite")
    server.script(Reply(raw=json.dumps(body)), Reply(raw=json.dumps(body)), "fine")
    res = client(server, max_retries=1, cache=cache).chat(req())
    assert res.error_kind == "bad_response" and res.retries == 1 and res.transient
    assert cache.get(client(server, cache=cache).cache_key(req())) is None  # a rerun asks again
    res = client(server, cache=cache).chat(req())
    assert res.ok and res.text == "fine" and server.calls["chat"] == 3
    cache.close()


def test_odd_usage_values_count_as_zero(server):
    server.script(Reply(raw=json.dumps({
        "choices": [{"message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": "many", "completion_tokens": -3, "prompt_tokens_details": None}})))
    res = client(server).chat(req())
    assert res.ok and res.prompt_tokens == 0 and res.completion_tokens == 0


def test_slow_reply_times_out_and_is_retried(server):
    server.script(Reply(content="late", delay=2.0), "on time")
    t0 = time.perf_counter()
    res = client(server, timeout=0.5).chat(req())
    assert res.ok and res.text == "on time" and res.retries == 1
    assert time.perf_counter() - t0 < 1.8  # did not wait for the slow answer


def test_timeout_after_retries(server):
    server.script(*[Reply(content="late", delay=1.5)] * 2)
    res = client(server, timeout=0.3, max_retries=1).chat(req())
    assert res.error_kind == "timeout" and res.transient


def test_connection_error_is_transient():
    c = OpenAIClient("fake", base_url="http://127.0.0.1:9/v1", max_retries=1, backoff_base=0.01)
    res = c.chat(req())
    assert res.error_kind == "connection" and res.transient and res.retries == 1


def test_structured_falls_back_to_json_mode(server):
    def responder(payload, endpoint):
        fmt = payload.get("response_format") or {}
        if fmt.get("type") == "json_schema":
            return Reply(status=400, error="response_format json_schema is not supported by this server")
        assert fmt == {"type": "json_object"}
        return '{"answer": "y", "n": 5}'

    server.responder = responder
    c = client(server)
    res = c.chat_many([req("a", schema=Answer), req("b", schema=Answer)])
    assert all(r.ok and r.mode == "json" for r in res)
    assert sum(1 for r in server.requests if (r.get("response_format") or {}).get("type") == "json_schema") <= 2
    # Calls queued behind the first one (concurrency 1) go out in JSON mode at once.
    server.requests.clear()
    c = client(server, concurrency=1)
    res = c.chat_many([req(f"q{i}", schema=Answer) for i in range(8)])
    assert all(r.ok and r.mode == "json" for r in res)
    assert sum(1 for r in server.requests if (r.get("response_format") or {}).get("type") == "json_schema") == 1
    assert len(server.requests) == 9


def test_answers_after_a_mode_fallback_are_cached_for_the_rerun(tmp_path, server):
    def responder(payload, endpoint):
        if (payload.get("response_format") or {}).get("type") == "json_schema":
            return Reply(status=400, error="response_format json_schema is not supported by this server")
        return json.dumps({"answer": payload["messages"][0]["content"], "n": 1})

    server.responder = responder
    cache = ResponseCache(tmp_path / "llm.sqlite")
    first = client(server, cache=cache)
    assert first.chat(req("a", schema=Answer)).mode == "json"  # falls back on this call
    assert first.chat(req("b", schema=Answer)).mode == "json"  # sent in JSON mode straight away
    calls = server.calls["chat"]
    rerun = client(server, cache=cache)  # a new run starts in the mode asked for again
    res = [rerun.chat(req(t, schema=Answer)) for t in ("a", "b")]
    assert all(r.cached for r in res) and [r.parsed.answer for r in res] == ["a", "b"]
    assert server.calls["chat"] == calls  # the rerun costs nothing
    assert rerun.cache_key(req("b", schema=Answer)) == first.cache_key(req("b", schema=Answer))


def test_cache_hit_on_rerun_and_no_cache(tmp_path, server):
    server.responder = lambda p, e: '{"answer": "cached", "n": 7}'
    cache = ResponseCache(tmp_path / "llm.sqlite")
    c = client(server, cache=cache)
    first = c.chat(req(schema=Answer))
    assert not first.cached and first.cost > 0
    again = client(server, cache=cache).chat(req(schema=Answer))
    assert again.cached and again.parsed == first.parsed and again.cost == 0
    assert server.calls["chat"] == 1
    fresh = client(server, cache=cache).chat(req(schema=Answer), use_cache=False)
    assert not fresh.cached and server.calls["chat"] == 2 and len(cache) == 1
    other = client(server, cache=cache).chat(req("different", schema=Answer))
    assert not other.cached and len(cache) == 2


def test_seeded_sampling_is_cached_unseeded_is_not(tmp_path, server):
    server.responder = lambda p, e: "sampled"
    cache = ResponseCache(tmp_path / "llm.sqlite")
    c = client(server, cache=cache)
    c.chat(req(temperature=0.8, seed=5))
    assert c.chat(req(temperature=0.8, seed=5)).cached
    assert not c.chat(req(temperature=0.8, seed=6)).cached
    c.chat(req(temperature=0.8))
    assert not c.chat(req(temperature=0.8)).cached
    assert server.calls["chat"] == 4


def test_cache_survives_a_new_process_view(tmp_path, server):
    server.responder = lambda p, e: "persisted"
    c = client(server, cache=ResponseCache(tmp_path / "llm.sqlite"))
    c.chat(req())
    c.cache.close()
    again = client(server, cache=ResponseCache(tmp_path / "llm.sqlite")).chat(req())
    assert again.cached and again.text == "persisted" and server.calls["chat"] == 1


def test_budget_stops_new_calls(server):
    server.responder = lambda p, e: Reply(content="x", usage={"prompt_tokens": 1000, "completion_tokens": 0, "total_tokens": 1000})
    c = client(server, concurrency=1, max_cost=0.0035)  # $0.001 per call
    res = c.chat_many([req(f"q{i}") for i in range(8)])
    ok = [r for r in res if r.ok]
    assert len(ok) == 4 and all(r.error_kind == "budget" for r in res if not r.ok)
    assert server.calls["chat"] == 4
    assert c.spent == pytest.approx(0.004) and c.budget.exhausted


def test_shared_budget_across_clients(server):
    server.responder = lambda p, e: Reply(content="x", usage={"prompt_tokens": 1000, "completion_tokens": 0, "total_tokens": 1000})
    b = Budget(0.002)
    a, c = client(server, budget=b, concurrency=1), client(server, budget=b, concurrency=1)
    assert a.chat(req("1")).ok and c.chat(req("2")).ok
    assert a.chat(req("3")).error_kind == "budget" and c.chat(req("4")).error_kind == "budget"
    assert b.spent == pytest.approx(0.002)


def test_cost_from_price_table(server):
    server.script(Reply(content="x", usage={"prompt_tokens": 2_000_000, "completion_tokens": 500_000, "total_tokens": 0}))
    res = client(server).chat(req())
    assert res.cost == pytest.approx(2 * 1.0 + 0.5 * 2.0)
    assert res.prompt_tokens == 2_000_000 and res.completion_tokens == 500_000


def test_concurrency_limit_and_order(server):
    server.web.latency = 0.1
    server.responder = lambda p, e: p["messages"][0]["content"].upper()
    c = client(server, concurrency=4)
    res = c.chat_many([req(f"m{i}") for i in range(16)])
    assert [r.text for r in res] == [f"M{i}" for i in range(16)]
    assert server.max_active <= 4


def test_achat_shares_connections_and_a_run_limit(server):
    server.web.latency = 0.1
    server.responder = lambda p, e: "ok"
    a, b = client(server, concurrency=8), client(server, concurrency=8)

    async def main():
        limiter = asyncio.Semaphore(3)
        rs = await asyncio.gather(*(x.achat(req(f"{i}"), limiter=limiter) for i in range(6) for x in (a, b)))
        await a.aclose()
        await b.aclose()
        return rs

    res = run_sync(main())
    assert all(r.ok for r in res) and server.max_active <= 3


def test_unexpected_error_is_per_item(server, monkeypatch):
    server.responder = lambda p, e: "fine"
    c = client(server)

    def broken(self, r, mode, cached):
        raise RuntimeError("bug")

    monkeypatch.setattr(OpenAIClient, "_finish", broken)
    res = c.chat_many([req("a"), req("b")])
    assert all(r.error_kind == "internal" for r in res)


def test_bad_body_is_retried(server):
    server.script(Reply(raw=b"<html>gateway</html>"), "ok")
    res = client(server).chat(req())
    assert res.ok and res.retries == 1


def test_run_sync_inside_a_running_loop(server):
    server.responder = lambda p, e: "ok"

    async def inner():
        return client(server).chat(req())  # sync API called from async code

    assert asyncio.run(inner()).ok


def test_endpoint_specs():
    assert parse_endpoint_spec("openai/gpt-4.1,base_url=http://x/v1") == ("gpt-4.1", {"base_url": "http://x/v1"})
    with pytest.raises(ConfigError):
        parse_endpoint_spec("openai/m,broken")
    c, rest = client_from_spec("openai/m,base_url=http://127.0.0.1:1/v1,timeout=3,max_retries=2,temperature=0.3")
    assert (c.model, c.timeout, c.max_retries, rest) == ("m", 3.0, 2, {"temperature": "0.3"})
    with pytest.raises(ConfigError):
        client_from_spec("hf/foo")
    with pytest.raises(ConfigError):
        client_from_spec("openai/m,base_url=http://x,timeout=soon")


def test_missing_key_for_remote_api(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        OpenAIClient("gpt-4.1")


def test_cache_key_covers_parameters():
    c = OpenAIClient("m", base_url="http://127.0.0.1:1/v1")
    base = c.cache_key(req())
    assert base == c.cache_key(req(tag="other"))  # the tag is not sent
    for other in (req("x"), req(temperature=0.5), req(max_tokens=5), req(seed=1), req(schema=Answer),
                  req(stop=("\n",))):
        assert c.cache_key(other) != base
    assert json.dumps(c._cache_request(req(schema=Answer), "structured"))
    # Another server may serve other weights under the same name; the URL's spelling does not matter.
    assert OpenAIClient("m", base_url="http://127.0.0.1:2/v1").cache_key(req()) != base
    assert OpenAIClient("m", base_url="HTTP://127.0.0.1:1/v1/").cache_key(req()) == base


def test_tls_context_verifies_and_loads_the_ca_bundle_off_the_critical_path():
    import ssl

    from okgen.tls import tls_context

    quick = tls_context(wait=False)  # what a plain-http client gets at once
    ctx = tls_context()  # what an https client gets: the same context, bundle loaded
    assert ctx is quick
    assert ctx.verify_mode == ssl.CERT_REQUIRED and ctx.check_hostname
    assert ctx.cert_store_stats()["x509_ca"] > 10


def test_quiet_gc_freezes_and_restores():
    import gc

    from okgen.models.openai_http import BUSY_GC_THRESHOLD, quiet_gc

    before = gc.get_threshold()
    assert gc.get_freeze_count() == 0
    with quiet_gc():
        assert gc.get_freeze_count() > 0 and gc.get_threshold()[0] == max(before[0], BUSY_GC_THRESHOLD)
        garbage = []
        garbage.append(garbage)  # a cycle made during the burst is still collected
        del garbage
        assert gc.collect() >= 1
    assert gc.get_freeze_count() == 0 and gc.get_threshold() == before
    # A process that froze objects itself keeps its own settings.
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with quiet_gc():
            assert gc.get_freeze_count() == frozen and gc.get_threshold() == before
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()
