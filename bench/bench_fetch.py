"""Fetch benchmark: 2,000 pages from a local server with 0.3 s latency at concurrency 64.

Target (issue 3): wall time <= 1.10 x the ideal, pages x latency / concurrency. okgen's fetcher
runs as in a real ingest (robots.txt check, address policy, per-host slots, streaming size
limit, WARC capture of every response, fetch log in SQLite); the server runs in another process.
For scale, the same run also measures two floors on the same server: a minimal asyncio HTTP
client (what the machine allows) and plain aiohttp (what the HTTP library allows).

    python bench/bench_fetch.py [--pages 2000] [--latency 0.3] [--concurrency 64] [--repeat 3]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

from ingest_pages import ServerProcess, synthetic_pages

TARGET = 1.10


async def okgen_fetch(urls: list[str], concurrency: int, tmp: Path | None, robots: bool = True) -> float:
    from okgen.ingest.config import make_config
    from okgen.ingest.fetch import Fetcher
    from okgen.ingest.store import ArticleStore
    from okgen.ingest.warc import WarcWriter

    cfg = make_config(allow_networks=("loopback",), concurrency=concurrency, per_host_concurrency=concurrency,
                      per_host_delay=0.0, max_retries=0, respect_robots=robots)
    warc = WarcWriter(tmp / "bench.warc.gz") if tmp else None
    store = ArticleStore(tmp / "bench.sqlite") if tmp else None
    try:
        async with Fetcher(cfg, warc=warc, on_log=store.log_fetch if store else None) as f:
            t0 = time.perf_counter()
            results = await asyncio.gather(*(f.fetch(u, "article") for u in urls))
            wall = time.perf_counter() - t0
    finally:
        if warc:
            warc.close()
        if store:
            store.close()
    assert all(r.ok for r in results), "some pages failed"
    return wall


async def aiohttp_floor(urls: list[str], concurrency: int) -> float:
    """Plain aiohttp, one GET per page, one session: what the HTTP library okgen uses allows."""
    import aiohttp

    sem = asyncio.Semaphore(concurrency)
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency)) as session:
        async def one(u: str) -> int:
            async with sem, session.get(u) as resp:
                await resp.read()
                return resp.status
        t0 = time.perf_counter()
        codes = await asyncio.gather(*(one(u) for u in urls))
        wall = time.perf_counter() - t0
    assert all(c == 200 for c in codes)
    return wall


async def asyncio_floor(urls: list[str], concurrency: int) -> float:
    """A minimal keep-alive HTTP/1.1 client on asyncio streams: the machine's floor."""
    p = urlsplit(urls[0])
    queue = list(reversed(urls))

    async def worker() -> None:
        reader, writer = await asyncio.open_connection(p.hostname, p.port)
        while queue:
            u = urlsplit(queue.pop())
            writer.write(f"GET {u.path}?{u.query} HTTP/1.1\r\nHost: {p.netloc}\r\n\r\n".encode())
            head = await reader.readuntil(b"\r\n\r\n")
            length = next(int(x.split(b":")[1]) for x in head.split(b"\r\n") if x.lower().startswith(b"content-length"))
            await reader.readexactly(length)
        writer.close()
    t0 = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pages", type=int, default=2000)
    ap.add_argument("--latency", type=float, default=0.3)
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--repeat", type=int, default=3, help="runs per variant, interleaved; the best is reported")
    a = ap.parse_args()
    pages = synthetic_pages(200)
    ideal = a.pages * a.latency / a.concurrency
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
          f"load {os.getloadavg()[0]:.1f}")
    print(f"{a.pages} pages of ~{sum(map(len, pages)) // len(pages) // 1024} KB, latency {a.latency} s, "
          f"concurrency {a.concurrency}: ideal {ideal:.2f} s (pages x latency / concurrency)")
    variants = {
        "floor: minimal asyncio client": lambda urls, tmp: asyncio_floor(urls, a.concurrency),
        "floor: plain aiohttp": lambda urls, tmp: aiohttp_floor(urls, a.concurrency),
        "okgen, no robots.txt, no capture": lambda urls, tmp: okgen_fetch(urls, a.concurrency, None, robots=False),
        "okgen (robots, WARC, fetch log)": lambda urls, tmp: okgen_fetch(urls, a.concurrency, tmp),
    }
    best = {k: float("inf") for k in variants}
    with ServerProcess(pages, a.latency) as srv:
        for r in range(a.repeat):
            for name, run in variants.items():  # interleaved, so load spikes hit every variant
                urls = [f"{srv.base}/p/{i % len(pages)}?r={r}&n={i}" for i in range(a.pages)]
                with tempfile.TemporaryDirectory() as tmp:
                    best[name] = min(best[name], asyncio.run(run(urls, Path(tmp))))
    for name, wall in best.items():
        print(f"  {name:34s} {wall:7.2f} s   ratio to ideal {wall / ideal:5.3f}")
    ratio = best["okgen (robots, WARC, fetch log)"] / ideal
    print(f"  okgen over plain aiohttp: {best['okgen (robots, WARC, fetch log)'] / best['floor: plain aiohttp']:.3f} "
          f"(the robots.txt round trip alone is {a.latency / ideal:.3f} of the ideal)")
    print(f"RESULT fetch wall / ideal = {ratio:.3f} (target <= {TARGET:.2f}): {'PASS' if ratio <= TARGET else 'MISS'}")


if __name__ == "__main__":
    main()
