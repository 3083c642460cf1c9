"""Helper for bench_generate.py: serve the fake generator/validator LLM in its own process.

Run as ``python bench/generate_server.py N_ARTICLES SEED LATENCY``; prints the base URL on its
first line and serves until killed. A separate process keeps the server's CPU time off the
client's interpreter, as with a real remote server.
"""

from __future__ import annotations

import datetime as dt
import sys
import time

from okgen.testing.corpus import make_articles
from okgen.testing.llm_agents import AgentResponder
from okgen.testing.openai_server import OpenAIServer

DAY = dt.date(2026, 11, 21)


def articles(n: int, seed: int):
    """The bench's articles (the same in the server and the client)."""
    return make_articles(n, DAY, days=1, seed=seed)[0]


def main() -> None:
    n, seed, latency = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
    srv = OpenAIServer(responder=AgentResponder(articles(n, seed)).warm(), latency=latency).start()
    print(srv.base_url, flush=True)
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main()
