"""okgen.llm's OpenAI-compatible backend against real servers on 127.0.0.1 (scripted replies)."""

from __future__ import annotations

import asyncio
import email.utils
import json
import time

import pytest
from pydantic import BaseModel

from okgen.errors import ConfigError
from okgen.llm import Budget, ChatRequest, PriceTable, chat_model, run_sync
from okgen.llm.openai_chat import _LEARNT, OpenAIChat, retry_after
from okgen.models.cache import ResponseCache
from okgen.testing.openai_server import OpenAIServer, Reply
from okgen.testing.rawhttp import RawServer


class Answer(BaseModel):
    answer: str
    n: int


def req(text: str = "hi", **kw) -> ChatRequest:
    return ChatRequest(messages=({"role": "user", "content": text},), **kw)


class FakeClock:
    """Records the waits between retries instead of sleeping."""

    def __init__(self):
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


@pytest.fixture
def server():
    _LEARNT.clear()
    with OpenAIServer() as srv:
        yield srv


def client(srv: OpenAIServer | str, **kw) -> OpenAIChat:
    kw.setdefault("sleep", FakeClock())
    kw.setdefault("prices", PriceTable({"fake": {"input": 1.0, "output": 2.0}}))
    return OpenAIChat("fake", base_url=srv if isinstance(srv, str) else srv.base_url, **kw)


def test_structured_output_through_the_sdk_parse_path(server):
    server.script('{"answer": "Lisbon", "n": 3}')
    out, res = run_sync(client(server).complete([{"role": "user", "content": "hi"}], schema=Answer))
    assert out == Answer(answer="Lisbon", n=3) and res.mode == "structured" and res.retries == 0
    sent = server.requests[0]
    assert sent["response_format"]["type"] == "json_schema"
    assert sent["response_format"]["json_schema"]["name"] == "Answer"
    assert sent["messages"] == [{"role": "user", "content": "hi"}]  # the server enforces the schema
    text, res = run_sync(client(server).complete([{"role": "user", "content": "x"}]))
    assert text is None and res.error_kind == "http_500"  # no scripted reply left: the server's error


def test_wrapped_and_broken_json_is_repaired(server):
    server.script('Sure! ```json\n{"answer": "x", "n": 1,}\n``` Hope it helps.', '<think>{x}</think>{"answer": "y", "n": 2')
    c = client(server)
    assert c.chat(req(schema=Answer)).parsed.n == 1
    assert c.chat(req("b", schema=Answer)).parsed == Answer(answer="y", n=2)


@pytest.mark.parametrize("reply, kind", [
    (Reply(content="I cannot answer in JSON today."), "invalid_json"),
    (Reply(content='{"answer": "x"}'), "schema"),
    (Reply(content=None, refusal="I will not help with that."), "refusal"),
    (Reply(content='{"answer": "x", "n"', finish_reason="length"), "length"),
    (Reply(content="", finish_reason="content_filter"), "content_filter"),
])
def test_bad_outputs_are_per_item_errors(server, reply, kind):
    server.script(reply, '{"answer": "ok", "n": 2}')
    c = client(server, concurrency=1)
    results = c.chat_many([req("a", schema=Answer), req("b", schema=Answer)])
    assert results[0].error_kind == kind and not results[0].transient
    assert results[1].ok  # one bad item never sinks the batch
    assert c.stats.by_error == {kind: 1}


def test_llama_cpp_style_refusal_degrades_to_json_object_and_is_remembered(server):
    server.refuse_json_schema = True
    server.responder = lambda p, e: '{"answer": "y", "n": 5}'
    c = client(server, concurrency=1)
    res = c.chat_many([req(f"q{i}", schema=Answer) for i in range(4)])
    assert all(r.ok and r.mode == "json" for r in res) and c.mode == "json"
    kinds = [(r.get("response_format") or {}).get("type") for r in server.requests]
    assert kinds == ["json_schema", "json_object", "json_object", "json_object", "json_object"]
    fmt = server.requests[1]["response_format"]
    assert fmt["schema"]["required"] == ["answer", "n"]  # the schema rides along (llama.cpp enforces it)
    assert "JSON schema" in server.requests[1]["messages"][-1]["content"]  # and is in the prompt
    # Remembered per endpoint: a new client of the same server starts in JSON mode.
    assert client(server).chat(req("z", schema=Answer)).mode == "json"
    assert len(server.requests) == 6
    # A server refusing json_object too ends in plain text, parsed tolerantly.
    server.responder = lambda p, e: (Reply(status=400, error="response_format is not supported")
                                     if p.get("response_format") else 'Here: {"answer": "t", "n": 1}')
    res = client(server).chat(req("w", schema=Answer))
    assert res.ok and res.mode == "text" and res.parsed.answer == "t"


def test_answers_after_a_fallback_are_cached_for_the_rerun(tmp_path, server):
    server.refuse_json_schema = True
    server.responder = lambda p, e: json.dumps({"answer": p["messages"][0]["content"][:1], "n": 1})
    cache = ResponseCache(tmp_path / "llm.sqlite")
    first = client(server, cache=cache)
    assert [first.chat(req(t, schema=Answer)).mode for t in "ab"] == ["json", "json"]
    calls = server.calls["chat"]
    _LEARNT.clear()  # a new process
    rerun = client(server, cache=cache)
    res = [rerun.chat(req(t, schema=Answer)) for t in "ab"]
    assert all(r.cached for r in res) and [r.parsed.answer for r in res] == ["a", "b"]
    assert server.calls["chat"] == calls
    cache.close()


def test_429_and_5xx_are_retried_honouring_retry_after(server, caplog):
    when = email.utils.formatdate(time.time() + 30, usegmt=True)
    server.script(Reply(status=429, headers={"Retry-After": "7"}), Reply(status=503, headers={"retry-after-ms": "300"}),
                  Reply(status=429, headers={"Retry-After": when}), Reply(status=502), "fine")
    clock = FakeClock()
    with caplog.at_level("WARNING", logger="okgen.llm"):
        res = client(server, sleep=clock).chat(req())
    assert res.ok and res.text == "fine" and server.calls["chat"] == 5
    assert clock.waits[:2] == [7.0, 0.3] and 25 < clock.waits[2] <= 30  # the server's waits, not a backoff
    assert 0 <= clock.waits[3] <= 60  # no Retry-After: jittered exponential backoff
    # The long wait (Retry-After 30 s) is said; the short ones are not.
    said = [r.getMessage() for r in caplog.records if "waiting" in r.getMessage()]
    assert len(said) == (1 + (clock.waits[3] >= 10)) and "before retry 3 of" in said[0], said
    assert retry_after({"retry-after": "soon"}) is None and retry_after({}) is None


def test_retries_exhausted(server):
    server.script(*[Reply(status=500, error="boom")] * 3)
    res = client(server, max_retries=2).chat(req())
    assert res.error_kind == "http_500" and res.retries == 2 and res.transient and "boom" in res.error
    assert server.calls["chat"] == 3


def test_4xx_is_not_retried(server):
    server.script(Reply(status=400, error="This model's maximum context length is 2048 tokens"))
    res = client(server).chat(req())
    assert res.error_kind == "too_long" and not res.transient
    # Not retried now; a plain 400 may be a setup mistake (a parameter the model refuses), as a
    # wrong key or model name is: the article waits for a rerun once it is fixed. (What is known
    # to be about the article, too long or blocked by a content filter, is final.)
    for status, msg, transient in ((400, "max_tokens must be at most 1024", True),
                                   (401, "Incorrect API key provided", True),
                                   (404, "The model `gpt-4.1-mnii` does not exist", True)):
        server.script(Reply(status=status, error=msg))
        res = client(server).chat(req())
        assert res.error_kind == f"http_{status}" and res.transient is transient and msg in res.error
    assert server.calls["chat"] == 4


def test_a_content_filter_refusal_is_final(server):
    # What Azure OpenAI answers when its content filter blocks the prompt.
    body = {"error": {"message": "The response was filtered due to the prompt triggering Azure OpenAI's content "
                                 "management policy.", "type": None, "param": "prompt", "code": "content_filter",
                      "status": 400, "innererror": {"code": "ResponsibleAIPolicyViolation"}}}
    server.script(Reply(status=400, raw=json.dumps(body)), "never asked")
    res = client(server).chat(req())
    assert res.error_kind == "content_filter" and not res.transient and "content management policy" in res.error
    assert server.calls["chat"] == 1 and res.retries == 0


def test_408_and_409_are_retried(server):
    server.script(Reply(status=408, error="request timeout"), Reply(status=409, error="conflict"), "fine")
    clock = FakeClock()
    res = client(server, sleep=clock).chat(req())
    assert res.ok and res.retries == 2 and len(clock.waits) == 2 and server.calls["chat"] == 3


def test_a_dropped_connection_is_never_sent_twice():
    # The server reads the request, then closes the connection without answering: it may have
    # generated (and billed) the answer. The request must not be sent again.
    with RawServer(None, None, None) as raw:
        res = client(f"http://127.0.0.1:{raw.port}/v1", max_retries=5).chat(req())
        assert res.error_kind == "connection" and res.transient and "not sent again" in res.error
        assert len(raw.requests) == 1 and raw.lines[0].startswith("POST /v1/chat/completions")


def test_a_read_timeout_is_not_sent_again(server):
    server.script(Reply(content="late", delay=1.0), "second")
    res = client(server, timeout=0.2, max_retries=3).chat(req())
    assert res.error_kind == "timeout" and res.transient and server.calls["chat"] == 1


def test_an_endpoint_that_never_answered_fails_fast(caplog):
    # Nothing listens there: a couple of quick retries (no warning lines), then one error naming
    # the base URL and the fix; the model's later calls fail at once instead of each retrying.
    clock = FakeClock()
    c = client("http://127.0.0.1:9/v1", sleep=clock)  # max_retries 6
    with caplog.at_level("WARNING", logger="okgen.llm"):
        res = c.chat(req())
        assert res.error_kind == "unreachable" and res.transient and res.retries == 2 and len(clock.waits) == 2
        assert "http://127.0.0.1:9/v1" in res.error and "base_url" in res.error
        again = c.chat(req("other"))
    assert again.error_kind == "unreachable" and again.retries == 0 and len(clock.waits) == 2
    assert all(w < 10 for w in clock.waits) and not [r for r in caplog.records if "waiting" in r.getMessage()]


def test_an_unreachable_endpoint_is_tried_again_a_while_later(monkeypatch):
    # `vllm serve` binds its port only once the weights are loaded: the fast-fail holds a while,
    # then a call tries the endpoint again.
    import okgen.llm.openai_chat as oc

    now = [1000.0]
    monkeypatch.setattr(oc.time, "monotonic", lambda: now[0])
    clock = FakeClock()
    c = client("http://127.0.0.1:9/v1", sleep=clock)
    assert c.chat(req()).error_kind == "unreachable" and len(clock.waits) == 2
    now[0] += oc.UNREACHABLE_HOLD / 2
    assert c.chat(req("soon")).error_kind == "unreachable" and len(clock.waits) == 2  # within the hold: at once
    now[0] += oc.UNREACHABLE_HOLD
    res = c.chat(req("later"))
    assert res.error_kind == "unreachable" and res.retries == 2 and len(clock.waits) == 4  # tried again


def test_a_refused_connection_to_a_live_server_is_retried():
    clock = FakeClock()
    srv = OpenAIServer(responder=lambda p, e: "fine").start()
    c = client(srv, max_retries=4, sleep=clock)
    try:
        assert c.chat(req()).ok  # the server answered once: a refused connection is a hiccup
    finally:
        srv.stop()
    res = c.chat(req("again"))
    assert res.error_kind == "connection" and res.retries == 4 and len(clock.waits) == 4


@pytest.mark.parametrize("body", [
    {"error": {"message": "upstream overloaded"}},
    {"choices": []},
    {"choices": [{"message": {"role": "assistant", "content": None}, "finish_reason": "stop"}]},
    "<html>gateway</html>",
])
def test_a_broken_200_reply_is_transient_never_resent_nor_cached(server, tmp_path, body):
    cache = ResponseCache(tmp_path / "c.sqlite")
    server.script(Reply(raw=body if isinstance(body, str) else json.dumps(body)), "fine")
    c = client(server, cache=cache)
    res = c.chat(req())
    assert res.error_kind == "bad_response" and res.transient and server.calls["chat"] == 1
    assert cache.get(c.cache_key(req())) is None  # a rerun asks again
    assert client(server, cache=cache).chat(req()).text == "fine"
    cache.close()


def test_cache_hit_on_rerun_and_sampling(tmp_path, server):
    server.responder = lambda p, e: '{"answer": "cached", "n": 7}'
    cache = ResponseCache(tmp_path / "llm.sqlite")
    first = client(server, cache=cache).chat(req(schema=Answer))
    assert not first.cached and first.cost > 0
    again = client(server, cache=cache).chat(req(schema=Answer))
    assert again.cached and again.parsed == first.parsed and again.cost == 0
    assert not client(server, cache=cache).chat(req(schema=Answer), use_cache=False).cached
    c = client(server, cache=cache)
    c.chat(req(temperature=0.8, seed=5))
    assert c.chat(req(temperature=0.8, seed=5)).cached
    c.chat(req(temperature=0.8))
    assert not c.chat(req(temperature=0.8)).cached  # unseeded sampling is never cached
    assert server.calls["chat"] == 5
    cache.close()


def test_cache_key_covers_parameters_and_server():
    c = OpenAIChat("m", base_url="http://127.0.0.1:1/v1")
    base = c.cache_key(req())
    assert base == c.cache_key(req(tag="other"))
    for other in (req("x"), req(temperature=0.5), req(max_tokens=5), req(seed=1), req(schema=Answer), req(stop=("\n",))):
        assert c.cache_key(other) != base
    assert OpenAIChat("m", base_url="http://127.0.0.1:2/v1").cache_key(req()) != base
    assert OpenAIChat("m", base_url="http://127.0.0.1:1/v1/").cache_key(req()) == base


def test_budget_and_costs(server):
    server.responder = lambda p, e: Reply(content="x", usage={"prompt_tokens": 1000, "completion_tokens": 0})
    b = Budget(0.0035)  # $0.001 per call, $0.00104 reserved (16 prompt tokens and 512 completion tokens)
    c = client(server, concurrency=1, budget=b)
    res = c.chat_many([req(f"q{i}") for i in range(8)])
    assert sum(r.ok for r in res) == 3 and all(r.error_kind == "budget" for r in res if not r.ok)
    assert server.calls["chat"] == 3 and b.spent == pytest.approx(0.003) and not b.exhausted  # a 4th might pass it
    assert "$0.0030 of $0.0035 spent" in res[-1].error
    server.script(Reply(content="x", usage={"prompt_tokens": 10, "completion_tokens": 10, "cost": 0.25}))
    assert OpenAIChat("unpriced", base_url=server.base_url).chat(req()).cost == 0.25  # the server's own figure


def test_a_budget_is_spent_at_concurrency_not_reserved_away(server):
    # Each call reserves $0.0082 (4096 completion tokens at $2 per million) and costs $0.002: eight
    # calls in flight reserve more than a $0.05 budget holds. Calls that do not fit wait for those
    # in flight, and the budget is spent up to the last call that fits, never past it.
    server.web.latency = 0.02
    server.responder = lambda p, e: Reply(content="x", usage={"prompt_tokens": 1000, "completion_tokens": 500})
    b = Budget(0.05)
    c = client(server, concurrency=8, budget=b)
    res = c.chat_many([req(f"q{i}", max_tokens=4096) for i in range(40)])
    assert server.max_active > 1 and b.in_flight == 0
    assert 0.05 - 0.0083 < b.spent <= 0.05 and sum(r.ok for r in res) == server.calls["chat"] == round(b.spent / 0.002)


def test_concurrency_limit_order_and_a_shared_run_limit(server):
    server.web.latency = 0.05
    server.responder = lambda p, e: p["messages"][0]["content"].upper()
    c = client(server, concurrency=4)
    assert [r.text for r in c.chat_many([req(f"m{i}") for i in range(12)])] == [f"M{i}" for i in range(12)]
    assert server.max_active <= 4
    server.web.max_active = 0
    a, b = client(server, concurrency=8), client(server, concurrency=8)

    async def main():
        limiter = asyncio.Semaphore(3)
        rs = await asyncio.gather(*(x.achat(req(f"{i}"), limiter=limiter) for i in range(6) for x in (a, b)))
        await a.aclose()
        await b.aclose()
        return rs

    assert all(r.ok for r in run_sync(main())) and server.max_active <= 3


def test_unexpected_error_is_per_item(server, monkeypatch):
    server.responder = lambda p, e: "fine"

    def broken(self, r, raw, cached):
        raise RuntimeError("bug")

    monkeypatch.setattr(OpenAIChat, "_finish", broken)
    assert all(r.error_kind == "internal" for r in client(server).chat_many([req("a"), req("b")]))


def test_specs_and_config_errors(monkeypatch):
    c, dec = chat_model("openai/m,base_url=http://127.0.0.1:1/v1,timeout=3,max_retries=2,temperature=0.3")
    assert (c.model, c.timeout, c.max_retries, dec, c.name) == ("m", 3.0, 2, {"temperature": "0.3"}, "openai/m")
    for bad, msg in (("openai/m,broken", "key=value"), ("openai/m,base_url=http://x,timeout=soon", "number"),
                     ("openai/m,base_url=ftp://x", "http"), ("openai/m,base_url=http://x,colour=red", "colour"),
                     ("llama/m", "unknown chat backend")):
        with pytest.raises(ConfigError, match=msg):
            chat_model(bad)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        chat_model("openai/gpt-4.1")


def test_prices_overrides_then_genai_prices(tmp_path):
    t = PriceTable({"m": {"input": 2.0, "output": 8.0, "cached_input": 0.5}})
    assert t.cost("m", 1_000_000, 1_000_000, cached_tokens=400_000) == pytest.approx(0.6 * 2 + 0.4 * 0.5 + 8.0)
    listed = t.cost("gpt-4.1-2025-04-14", 1_000_000, 0)  # from genai-prices: a dated snapshot of gpt-4.1
    assert listed > 0 and t.priced("gpt-4.1")
    assert t.cost("my-local-model", 10, 10) == 0.0 and not t.priced("my-local-model")
    assert t.cost("gpt-4.1", 10, 10, endpoint="http://127.0.0.1:8000/v1") == 0.0  # a local server is not OpenAI
    f = tmp_path / "prices.toml"
    f.write_text('[prices."gpt-4.1"]\ninput = 1.0\noutput = 4.0\n')
    assert PriceTable.default(files=[f]).cost("gpt-4.1", 1_000_000, 0) == pytest.approx(1.0)
    with pytest.raises(ConfigError):
        PriceTable({"bad": {"input": "cheap"}})
    with pytest.raises(ConfigError):
        PriceTable.default(files=[tmp_path / "missing.toml"])
    with pytest.raises(ConfigError):
        Budget(-1)
