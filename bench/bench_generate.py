"""Benchmark question generation; prints measured figures and ratios against the targets.

1. Generation + validation against a local OpenAI-compatible server with a fixed latency
   (0.2 s, in its own process; see generate_server.py): wall time vs the ideal
   ``calls x latency / concurrency`` at concurrency 32 (target <= 1.10x) and 128 (target
   <= 1.3x), with bare openai-client calls to the same server for comparison.
2. A cached rerun of the same day vs the first run (target >= 50x): both a rerun answered from
   the store (the normal rerun) and a ``fresh`` rerun whose every LLM call is a cache hit.
3. The extractive generator's articles per second per core (target >= 20), single process.

The concurrency-128 run gets 4x the articles, so that both runs are equally deep (about 29
rounds of calls); a concurrency-128 run on the 200 articles is printed for information.

Usage: ``python bench/bench_generate.py [--articles 200] [--latency 0.2] [--quick] [--server asyncio|threads]``
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from generate_server import DAY, articles  # noqa: E402

from okgen.generate.pipeline import run_generate  # noqa: E402
from okgen.settings import Workspace  # noqa: E402


def start_server(n: int, seed: int, latency: float, kind: str = "asyncio") -> tuple[subprocess.Popen, str]:
    here = Path(__file__).resolve().parent
    proc = subprocess.Popen([sys.executable, str(here / "generate_server.py"), str(n), str(seed), str(latency), kind],
                            stdout=subprocess.PIPE, text=True)
    url = proc.stdout.readline().strip()
    if not url.startswith("http"):
        proc.kill()
        raise SystemExit("the bench server did not start")
    return proc, url


def llm_run(url: str, arts, concurrency: int, ws: Workspace, **kw) -> tuple[float, dict]:
    spec = f"openai/bench-model,base_url={url}"
    t0 = time.perf_counter()
    res = run_generate(DAY, ws, arts, generator=spec, validator=spec, concurrency=concurrency, progress=False, **kw)
    wall = time.perf_counter() - t0
    assert res.complete, res.funnel["articles"]
    return wall, res.funnel


def _load() -> str:
    try:
        return " ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:  # pragma: no cover
        return "n/a"


def _cpu_of(pid: int) -> float:
    """CPU seconds used so far by another process (Linux), for the server's share."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return float("nan")


def bare_openai(url: str, calls: int, concurrency: int, lean: bool) -> float:
    """Wall time of ``calls`` plain ``AsyncOpenAI`` requests (no okgen), same server and limit:
    the floor of the client + server stack on this machine. ``lean``: on okgen's HTTP/1.1
    transport (what okgen uses); else on the client's stock httpx2 transport."""
    import openai

    from okgen.models.http1 import LeanTransport

    async def main() -> float:
        sem = asyncio.Semaphore(concurrency)
        kw = {"http_client": openai.DefaultAsyncHttpxClient(transport=LeanTransport())} if lean else {}
        client = openai.AsyncOpenAI(base_url=url, api_key="bench", max_retries=0, **kw)
        body = {"model": "bench-model", "messages": [{"role": "user", "content": "word " * 900}]}

        async def one() -> None:
            async with sem:
                await client.post("/chat/completions", body=body, cast_to=object)

        t0 = time.perf_counter()
        await asyncio.gather(*(one() for _ in range(calls)))
        wall = time.perf_counter() - t0
        await client.close()
        return wall

    return asyncio.run(main())


def row(name: str, measured: str, target: str, ok: bool) -> None:
    print(f"  {name:<44} {measured:>22}   target {target:<10} {'PASS' if ok else 'MISS'}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--articles", type=int, default=200, help="articles for the LLM runs")
    ap.add_argument("--latency", type=float, default=0.2, help="server latency in seconds")
    ap.add_argument("--extractive-articles", type=int, default=600)
    ap.add_argument("--quick", action="store_true", help="smaller workloads")
    ap.add_argument("--server", choices=("asyncio", "threads"), default="asyncio",
                    help="the fake LLM server: lean asyncio (default) or the tests' threaded one "
                         "(slower under bursts; see generate_server.py)")
    args = ap.parse_args()
    if args.quick:
        args.articles, args.extractive_articles = 80, 200
    logging.basicConfig(level=logging.WARNING)
    logging.getLogger("okgen.models.pricing").setLevel(logging.ERROR)  # the fake model has no price
    os.environ.setdefault("OKGEN_NO_PROGRESS", "1")
    seed = 5
    # Each run is equally deep (calls / concurrency): the concurrency-128 run gets 4x the
    # articles of the concurrency-32 one. At 128 a 200-article day is only 7 rounds of calls, so
    # fixed costs (start-up, the first burst of generator replies, assembly) dominate its ratio;
    # that run is printed too, for information.
    deep = args.articles * 128 // 32
    every = articles(deep, seed)
    arts = every[:args.articles]
    print(f"okgen generate benchmark: {args.articles} articles ({deep} at concurrency 128), server latency {args.latency:.2f} s, "
          f"{os.cpu_count()} CPU cores, Python {sys.version.split()[0]}, load average {_load()}, {args.server} server")
    proc, url = start_server(deep, seed, args.latency, args.server)
    tmp = Path(tempfile.mkdtemp(prefix="okgen-bench-"))
    try:
        import openai

        # Imports happen once here, not inside the first timed run: openai's HTTP transport
        # (httpcore2 and h11) is imported when the first client is made.
        asyncio.run(openai.AsyncOpenAI(base_url=url, api_key="bench").close())

        print("\n1. generation + validation vs ideal (calls x latency / concurrency)")
        first = {}
        for conc, target, day in ((32, 1.10, arts), (128, 1.30, every), (128, None, arts)):
            ws = Workspace(tmp / f"c{conc}-{len(day)}")
            c0, s0 = time.process_time(), _cpu_of(proc.pid)
            wall, f = llm_run(url, day, conc, ws)
            cpu, scpu = time.process_time() - c0, _cpu_of(proc.pid) - s0
            calls = f["usage"]["calls"]
            ideal = calls * args.latency / conc
            first.setdefault(conc, (wall, ws, f))
            print(f"  concurrency {conc}, {len(day)} articles: {calls} calls ({f['usage']['by_agent']['generator']['calls']} generator, "
                  f"{f['usage']['by_agent']['validator']['calls']} validator), {f['kept']} questions kept, "
                  f"wall {wall:.2f} s, ideal {ideal:.2f} s")
            print(f"    CPU per call: client {1000 * cpu / calls:.2f} ms, server {1000 * scpu / calls:.2f} ms; "
                  f"{calls / ideal:.0f} calls/s needed -> {(cpu + scpu) / ideal:.2f} cores busy at the ideal rate")
            if target is None:
                print(f"  {f'wall / ideal at concurrency {conc}, {len(day)} articles':<44} {f'{wall / ideal:.3f}x':>22}   (for information)")
            else:
                row(f"wall / ideal at concurrency {conc}", f"{wall / ideal:.3f}x", f"<= {target:.2f}x", wall / ideal <= target)
            for lean, name in ((True, "okgen's transport"), (False, "stock httpx2 transport")):
                bare = bare_openai(url, calls, conc, lean)
                print(f"    for comparison, {calls} bare openai-client calls (no okgen), {name}: "
                      f"{bare:.2f} s = {bare / ideal:.3f}x ideal")

        print("\n2. cached rerun of the same day (first run at concurrency 32)")
        wall0, ws, f0 = first[32]
        t0 = time.perf_counter()
        run_generate(DAY, ws, arts, generator=f"openai/bench-model,base_url={url}",
                     validator=f"openai/bench-model,base_url={url}", concurrency=32, progress=False)
        resume = time.perf_counter() - t0
        wall_c, fc = llm_run(url, arts, 32, ws, fresh=True)
        assert fc["usage"]["cached_calls"] == fc["usage"]["calls"], "the fresh rerun made real calls"
        print(f"  first run {wall0:.2f} s; rerun from the store {resume:.3f} s; "
              f"fresh rerun with every call cached {wall_c:.3f} s ({fc['usage']['calls']} cache hits)")
        row("first / rerun (store)", f"{wall0 / resume:.0f}x", ">= 50x", wall0 / resume >= 50)
        # Not the target's path: --fresh forgets the finished articles and redoes every step
        # (checks, storage) with the LLM answers from the cache.
        print(f"  {'first / fresh rerun (LLM cache only)':<44} {f'{wall0 / wall_c:.0f}x':>22}   (for information)")
        print(f"  load average now {_load()}")
    finally:
        proc.kill()

    print("\n3. extractive generator (offline), one process")
    ex = articles(args.extractive_articles, seed + 1)
    from okgen.generate.agents import load_agent, packaged_agents_dir
    from okgen.generate.checks import check_candidate
    from okgen.generate.extractive import ExtractiveGenerator
    from okgen.generate.text import normalize

    g = ExtractiveGenerator(load_agent("extractive", packaged_agents_dir()), seed)
    t0 = time.process_time()
    pool = g.build_pool(ex, DAY)
    n_q = 0
    for a in ex:
        for c in g.generate(a, 5, pool):
            check_candidate(c, normalize(f"{a.title}\n{a.text}"))
            n_q += c.kept
    cpu = time.process_time() - t0
    print(f"  generator + checks: {len(ex)} articles, {n_q} questions in {cpu:.2f} s CPU")
    row("articles / second / core (generator + checks)", f"{len(ex) / cpu:.0f}", ">= 20", len(ex) / cpu >= 20)
    t0, c0 = time.perf_counter(), time.process_time()
    res = run_generate(DAY, Workspace(tmp / "extractive"), ex, progress=False)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    print(f"  run_generate (store writes, assembly): {len(ex)} articles, {len(res.questions)} questions, "
          f"wall {wall:.2f} s, CPU {cpu:.2f} s")
    row("articles / second / core (whole pipeline)", f"{len(ex) / cpu:.0f}", ">= 20", len(ex) / cpu >= 20)


if __name__ == "__main__":
    main()
