"""Helper for bench_generate.py: serve the fake generator/validator LLM in its own process.

Run as ``python bench/generate_server.py N_ARTICLES SEED LATENCY [asyncio|threads]``; prints the
base URL on its first line and serves until killed. A separate process keeps the server's CPU
time off the client's interpreter, as with a real remote server.

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
import sys
import time

from lean_server import protocol_factory

from okgen.testing.corpus import make_articles
from okgen.testing.llm_agents import AgentResponder
from okgen.testing.openai_server import OpenAIServer
from okgen.testing.web import Request

DAY = dt.date(2026, 11, 21)


def articles(n: int, seed: int):
    """The bench's articles (the same in the server and the client)."""
    return make_articles(n, DAY, days=1, seed=seed)[0]


def serve_asyncio(srv: OpenAIServer, latency: float) -> None:
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
    responder = AgentResponder(articles(n, seed)).warm()
    if kind == "asyncio":
        serve_asyncio(OpenAIServer(responder=responder), latency)
        return
    srv = OpenAIServer(responder=responder, latency=latency).start()
    print(srv.base_url, flush=True)
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main()
