"""OpenAIClient against raw HTTP on 127.0.0.1: compressed and chunked bodies, broken
responses, proxies from the environment."""

from __future__ import annotations

import gzip
import json
import socket

import pytest

from okgen.models.openai_api import ChatRequest, OpenAIClient
from okgen.testing.rawhttp import RawServer


def completion(text: str) -> bytes:
    return json.dumps({"id": "c1", "object": "chat.completion", "created": 0, "model": "m",
                       "choices": [{"index": 0, "finish_reason": "stop",
                                    "message": {"role": "assistant", "content": text}}],
                       "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}}).encode()


def chunked(data: bytes, size: int = 7) -> bytes:
    parts = [b"%x\r\n%s\r\n" % (len(data[i:i + size]), data[i:i + size]) for i in range(0, len(data), size)]
    return b"".join(parts) + b"0\r\n\r\n"


def ok(body: bytes, *headers: str) -> bytes:
    head = "".join(f"{h}\r\n" for h in headers)
    return f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n{head}".encode() + b"\r\n" + body


def req() -> ChatRequest:
    return ChatRequest(messages=({"role": "user", "content": "hi"},))


def llm(port: int, **kw) -> OpenAIClient:
    return OpenAIClient("m", base_url=f"http://127.0.0.1:{port}/v1", structured="text", backoff_base=0.01, **kw)


def test_gzip_and_chunked_bodies_are_decoded():
    gz = gzip.compress(completion("zipped"))
    with RawServer(ok(gz, "Content-Encoding: gzip", f"Content-Length: {len(gz)}"),
                   ok(chunked(completion("in chunks")), "Transfer-Encoding: chunked"),
                   ok(chunked(gz), "Content-Encoding: gzip", "Transfer-Encoding: chunked")) as srv:
        c = llm(srv.port)
        res = [c.chat(req()) for _ in range(3)]  # one after another: the replies are in order
    assert [r.text for r in res] == ["zipped", "in chunks", "zipped"]
    assert all(r.ok and r.completion_tokens == 2 for r in res)
    assert srv.lines == ["POST /v1/chat/completions HTTP/1.1"] * 3


def test_broken_responses_are_connection_errors_and_retried():
    """No answer, then a garbled status line: each is a transient connection error, retried."""
    short = completion("third time")
    with RawServer(None, b"HTTP/1.1 ???\r\n\r\n", ok(short, f"Content-Length: {len(short) + 100}")) as srv:
        # The last reply promises more bytes than it sends and the server keeps the connection
        # open: that one times out.
        res = llm(srv.port, max_retries=2, timeout=0.5).chat(req())
    assert res.error_kind == "timeout" and res.retries == 2 and len(srv.lines) == 3
    with RawServer(None, b"HTTP/1.1 ???\r\n\r\n", None) as srv:
        res = llm(srv.port, max_retries=2).chat(req())
    assert res.error_kind == "connection" and res.transient and res.retries == 2
    body = completion("fine")
    with RawServer(None, ok(body, f"Content-Length: {len(body)}")) as srv:
        res = llm(srv.port, max_retries=1).chat(req())
    assert res.ok and res.text == "fine" and res.retries == 1


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def no_proxy_env(monkeypatch):
    for k in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "no_proxy", "NO_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(k, raising=False)
    return monkeypatch


def test_proxy_from_the_environment_is_honoured(no_proxy_env):
    """HTTP_PROXY routes the calls through the proxy, which gets the absolute URL; NO_PROXY
    exempts the host again."""
    body = completion("via proxy")
    target = _closed_port()  # nothing listens there: only the proxy can answer
    with RawServer(ok(body, f"Content-Length: {len(body)}")) as proxy:
        no_proxy_env.setenv("http_proxy", f"http://127.0.0.1:{proxy.port}")
        res = llm(target).chat(req())
        assert res.ok and res.text == "via proxy"
        assert proxy.lines == [f"POST http://127.0.0.1:{target}/v1/chat/completions HTTP/1.1"]
        no_proxy_env.setenv("no_proxy", "127.0.0.1")
        res = llm(target, max_retries=0).chat(req())
        assert res.error_kind == "connection" and len(proxy.lines) == 1
