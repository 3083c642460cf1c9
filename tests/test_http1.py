"""okgen's lean HTTP/1.1 transport (okgen.models.http1) against raw servers on 127.0.0.1:
keep-alive reuse, a stale keep-alive connection, framing (Content-Length, chunked, read to
close, interim 100 replies), timeouts, refused connections, TLS, and one connection pool shared
by every LLM client of an event loop."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import socket
import ssl

import httpx2
import pytest

from okgen.errors import ConfigError
from okgen.models.http1 import LeanTransport, SharedTransport
from okgen.models.openai_api import ChatRequest, OpenAIClient, _transport
from okgen.testing.rawhttp import RawServer as Server


def reply(body: bytes = b"{}", *headers: str, status: str = "200 OK", length: bool = True) -> bytes:
    head = "".join(f"{h}\r\n" for h in headers)
    if length:
        head += f"Content-Length: {len(body)}\r\n"
    return f"HTTP/1.1 {status}\r\n{head}\r\n".encode() + body


def run(coro):
    return asyncio.run(coro)


async def send(transport: httpx2.AsyncBaseTransport, url: str, n: int = 1, body: bytes = b"{}",
               timeout: float = 5.0) -> list[httpx2.Response]:
    async with httpx2.AsyncClient(transport=transport, timeout=timeout) as client:
        return [await client.post(url, content=body) for _ in range(n)]


def test_keep_alive_reuses_one_connection_and_sends_the_body():
    big = b"x" * 200_000  # over the size sent with the head in one write
    with Server(reply(b"one"), reply(b"two"), reply(b"three")) as srv:
        out = run(_three(srv.port, big))
    assert [r.content for r in out] == [b"one", b"two", b"three"]
    assert len(srv.connections) == 1
    assert [line for line, _ in srv.requests] == ["POST /v1/x HTTP/1.1"] * 3
    assert srv.requests[2][1] == big


def _three(port: int, big: bytes):
    async def go():
        t = LeanTransport()
        async with httpx2.AsyncClient(transport=t) as client:
            url = f"http://127.0.0.1:{port}/v1/x"
            return [await client.post(url, content=b"{}"), await client.post(url, content=b"{}"),
                    await client.post(url, content=big)]
    return go()


def test_a_stale_keep_alive_connection_is_replaced_once():
    """The server closes the idle connection as the next request is sent on it: the request is
    sent again on a new connection. A new connection closed without an answer is an error."""
    with Server(reply(b"first"), None, reply(b"second")) as srv:
        out = run(_twice(srv.port))
    assert [r.content for r in out] == [b"first", b"second"]
    assert [len(c) for c in srv.connections] == [2, 1]  # the second request went out twice
    with Server(None) as srv, pytest.raises(httpx2.RemoteProtocolError, match="without sending a response"):
        run(send(LeanTransport(), f"http://127.0.0.1:{srv.port}/"))
    assert len(srv.connections) == 1  # a new connection is not retried


def _twice(port: int):
    async def go():
        async with httpx2.AsyncClient(transport=LeanTransport()) as client:
            url = f"http://127.0.0.1:{port}/"
            return [await client.post(url, content=b"{}"), await client.post(url, content=b"{}")]
    return go()


def test_connection_close_and_http_1_0_are_not_reused():
    with Server(reply(b"a", "Connection: close"), "close", reply(b"b"),
                b"HTTP/1.0 200 OK\r\n\r\nread to the end", "close", reply(b"c")) as srv:
        out = run(_many(srv.port, 3))
    assert [r.content for r in out] == [b"a", b"b", b"read to the end"]
    assert [len(c) for c in srv.connections] == [1, 2]


def _many(port: int, n: int):
    async def go():
        async with httpx2.AsyncClient(transport=LeanTransport()) as client:
            return [await client.post(f"http://127.0.0.1:{port}/", content=b"{}") for _ in range(n)]
    return go()


def test_framing_interim_replies_chunks_and_errors():
    chunked = b"5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: 1\r\n\r\n"
    with Server(b"HTTP/1.1 100 Continue\r\n\r\n" + reply(b"after continue"),
                reply(chunked, "Transfer-Encoding: chunked", length=False),
                reply(b"", status="204 No Content", length=False), reply(b"last")) as srv:
        out = run(_many(srv.port, 4))
    assert [r.status_code for r in out] == [200, 200, 204, 200]
    assert [r.content for r in out] == [b"after continue", b"hello world", b"", b"last"]
    assert len(srv.connections) == 1
    for bad, match in ((b"HTTP/1.1 2x0 OK\r\n\r\n", "malformed status line"),
                       (b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", "malformed header"),
                       (reply(b"zz\r\n", "Transfer-Encoding: chunked", length=False), "bad chunk size"),
                       (b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", "bad Content-Length"),
                       (b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", "complete message body")):
        with Server(bad, "close") as srv, pytest.raises(httpx2.RemoteProtocolError, match=match):
            run(send(LeanTransport(), f"http://127.0.0.1:{srv.port}/"))


def test_timeouts_refusals_and_closing():
    with Server(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhalf") as srv:
        with pytest.raises(httpx2.ReadTimeout):
            run(send(LeanTransport(), f"http://127.0.0.1:{srv.port}/", timeout=0.3))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens there
    with pytest.raises(httpx2.ConnectError):
        run(send(LeanTransport(), f"http://127.0.0.1:{port}/"))
    with pytest.raises(httpx2.UnsupportedProtocol):
        run(LeanTransport().handle_async_request(httpx2.Request("GET", "ftp://127.0.0.1/")))

    with Server(reply(b"kept")) as srv:
        async def go():
            t = LeanTransport()
            async with httpx2.AsyncClient(transport=t) as client:
                r = await client.get(f"http://127.0.0.1:{srv.port}/")
                assert r.content == b"kept" and not srv.closed.is_set()
            # Closing the client closes its idle keep-alive connection: the server sees the end.
            await asyncio.get_running_loop().run_in_executor(None, srv.closed.wait, 5)
            return srv.closed.is_set()
        assert run(go())


def _tls_pair(tmp_path) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    """A server context with a self-signed certificate for 127.0.0.1 and a client context
    trusting only that certificate."""
    x509 = pytest.importorskip("cryptography.x509")
    import ipaddress

    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "okgen test")])
    now = dt.datetime.now(dt.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(days=1))
            .not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    cert_pem = tmp_path / "cert.pem"
    key_pem = tmp_path / "key.pem"
    cert_pem.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_pem.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                          serialization.NoEncryption()))
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(cert_pem, key_pem)
    client = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    client.load_verify_locations(cert_pem)
    return server, client


def test_https_verifies_the_certificate(tmp_path):
    server_ctx, client_ctx = _tls_pair(tmp_path)
    with Server(reply(b"secret"), reply(b"again"), tls=server_ctx) as srv:
        out = run(_many_https(srv.port, client_ctx, 2))
    assert [r.content for r in out] == [b"secret", b"again"] and len(srv.connections) == 1
    with Server(reply(b"never"), tls=server_ctx) as srv, pytest.raises(httpx2.ConnectError):
        run(_many_https(srv.port, ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT), 1))  # trusts nothing


def _many_https(port: int, ctx: ssl.SSLContext, n: int):
    async def go():
        async with httpx2.AsyncClient(transport=LeanTransport(ctx)) as client:
            return [await client.post(f"https://127.0.0.1:{port}/", content=b"{}") for _ in range(n)]
    return go()


def completion(text: str) -> bytes:
    return json.dumps({"id": "c", "object": "chat.completion", "created": 0, "model": "m",
                       "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
                       "usage": {"prompt_tokens": 3, "completion_tokens": 2}}).encode()


def test_the_llm_clients_of_one_event_loop_share_connections():
    """A generator and a validator client on one server use one keep-alive connection; it is
    closed when the last client of the loop closes."""
    with Server(*(reply(completion(f"answer {i}"), "Content-Type: application/json") for i in range(5))) as srv:
        url = f"http://127.0.0.1:{srv.port}/v1"
        gen, val = (OpenAIClient(m, base_url=url, structured="text") for m in ("gen", "val"))

        async def go():
            out = []
            for c in (gen, val, gen, val):
                out.append(await c.achat(ChatRequest(messages=({"role": "user", "content": "hi"},))))
            await gen.aclose()
            assert not srv.closed.is_set()  # the validator still holds the loop's connections
            out.append(await val.achat(ChatRequest(messages=({"role": "user", "content": "more"},))))
            await val.aclose()
            return out

        out = run(go())
        assert srv.closed.wait(5)
    assert [r.text for r in out] == [f"answer {i}" for i in range(5)]
    assert len(srv.connections) == 1
    assert [json.loads(b)["model"] for _, b in srv.requests] == ["gen", "val", "gen", "val", "val"]


def test_transport_choice_from_the_environment(monkeypatch):
    import openai

    factory = openai.DefaultAsyncHttpxClient
    monkeypatch.delenv("OKGEN_LLM_TRANSPORT", raising=False)
    assert isinstance(_transport(factory, None)["transport"], SharedTransport)
    monkeypatch.setenv("OKGEN_LLM_TRANSPORT", "httpx")
    assert _transport(factory, None) == {}
    monkeypatch.setenv("OKGEN_LLM_TRANSPORT", "curl")
    with pytest.raises(ConfigError, match="lean or httpx"):
        _transport(factory, None)
    with pytest.raises(ConfigError, match="lean or httpx"):  # at once, not as a failed call
        OpenAIClient("m", base_url="http://127.0.0.1:9/v1")
    # With the stock transport the client still works end to end.
    monkeypatch.setenv("OKGEN_LLM_TRANSPORT", "httpx")
    with Server(reply(completion("stock"), "Content-Type: application/json")) as srv:
        res = OpenAIClient("m", base_url=f"http://127.0.0.1:{srv.port}/v1", structured="text").chat(
            ChatRequest(messages=({"role": "user", "content": "hi"},)))
    assert res.ok and res.text == "stock"
