"""Helper for bench_generate.py: serve the fake generator/validator LLM in its own process.

Run as ``python bench/generate_server.py N_ARTICLES SEED LATENCY [asyncio|threads [PER_TOKEN JITTER]]``;
prints the base URL on its first line and serves until killed. A separate process keeps the
server's CPU time off the client's interpreter, as with a real remote server.

Latency model (asyncio server): a call is answered ``(LATENCY + PER_TOKEN x completion tokens)
x exp(JITTER x z)`` seconds after it arrived, as a model server's time to the first token plus
its decoding time, varied by load; ``z`` is a standard normal draw seeded by ``SEED`` and the
request's messages, so the same call gets the same latency whoever makes it (okgen or the bare
SDK) and in every run. ``PER_TOKEN`` and ``JITTER`` 0 give every call ``LATENCY``.

Two servers give the same answers (``OpenAIServer``'s, from ``AgentResponder``):

- ``asyncio`` (default): ``lean_server``'s HTTP/1.1 keep-alive server on one event loop. Each
  answer is sent ``LATENCY`` seconds after its request arrived (the answer is computed within
  that time), so every call sees the same fixed latency, as from a remote server with spare
  capacity.
- ``threads``: ``okgen.testing.web``'s threaded server, as the tests use. It sleeps
  ``LATENCY`` in one thread per request and computes the answer in that thread; when 32 or
  more threads wake at once they queue for the server's GIL, which adds latency that a real
  server would not.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
import json
import math
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's okgen

from lean_server import protocol_factory  # noqa: E402

from okgen.testing.corpus import make_articles  # noqa: E402
from okgen.testing.llm_agents import AgentResponder  # noqa: E402
from okgen.testing.openai_server import OpenAIServer  # noqa: E402
from okgen.testing.web import Request  # noqa: E402

DAY = dt.date(2026, 11, 21)


def articles(n: int, seed: int):
    """The bench's articles (the same in the server and the client)."""
    return make_articles(n, DAY, days=1, seed=seed)[0]


def latency_model(seed: int, latency: float, per_token: float = 0.0, jitter: float = 0.0):
    """``f(request body, reply body) -> seconds`` of the module docstring's latency model."""
    if not per_token and not jitter:
        return latency

    def delay(body: bytes, reply: bytes) -> float:
        try:
            messages = json.loads(body).get("messages")
            tokens = int((json.loads(reply).get("usage") or {}).get("completion_tokens") or 0)
        except (ValueError, AttributeError):
            messages, tokens = None, 0
        key = hashlib.sha256(json.dumps([seed, messages], sort_keys=True).encode()).digest()
        z = random.Random(key).gauss(0.0, 1.0)
        return (latency + per_token * tokens) * math.exp(jitter * z)

    return delay


def serve_asyncio(srv: OpenAIServer, latency) -> None:
    """Serve ``srv``'s answers from a lean asyncio server; print the base URL; run forever."""

    def answer(method: str, target: str, headers: dict[str, str], body: bytes) -> tuple[int, dict[str, str], bytes]:
        path = target.split("?", 1)[0]
        req = Request(method, target, headers, body, time.time())
        if path.endswith("/chat/completions"):
            route = srv._answer(req, "chat")
        elif path.endswith("/completions"):
            route = srv._answer(req, "completions")
        else:
            route = srv._models()
        data = route.body.encode("utf-8") if isinstance(route.body, str) else route.body
        return route.status, {"Content-Type": route.content_type or "application/json", **route.headers}, data

    factory = protocol_factory(answer, latency)

    async def main() -> None:
        server = await asyncio.get_running_loop().create_server(factory, "127.0.0.1", 0, backlog=1024)
        print(f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1", flush=True)
        async with server:
            await server.serve_forever()

    asyncio.run(main())


def main() -> None:
    n, seed, latency = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
    kind = sys.argv[4] if len(sys.argv) > 4 else "asyncio"
    per_token, jitter = (float(x) for x in (sys.argv[5:7] if len(sys.argv) > 6 else ("0", "0")))
    responder = AgentResponder(articles(n, seed)).warm()
    if kind == "asyncio":
        serve_asyncio(OpenAIServer(responder=responder), latency_model(seed, latency, per_token, jitter))
        return
    srv = OpenAIServer(responder=responder, latency=latency).start()
    print(srv.base_url, flush=True)
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main()
