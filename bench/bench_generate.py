"""Benchmark question generation; prints measured figures and ratios against the targets.

1. The whole generate stage (generator + validator, ``run_generate``) against a local
   OpenAI-compatible server in its own process with a modelled latency per call (time to the
   first token plus decoding time per completion token, seeded jitter, the same for every
   client; see generate_server.py), compared with the bare ``openai`` SDK making the same calls to the same
   server in the same run: each article's generator request, then its validator requests
   (those okgen made), through ``chat.completions.parse`` with the same schemas, under the same
   concurrency limit. Targets: okgen's wall time <= 1.05x the bare SDK's at concurrency 32 and
   at 128, and okgen's client CPU per call <= 1.1x the bare SDK's. For information, the same
   stage with the quality gates off, and okgen's LLM layer alone (``ChatModel.achat`` with its
   response cache) making the same calls.
2. A cached rerun of the same day vs the first run (target >= 50x): both a rerun answered from
   the store (the normal rerun) and a ``fresh`` rerun whose every LLM call is a cache hit.
3. The extractive generator's articles per second per core (target >= 20), single process.

The concurrency-128 run gets 4x the articles, so that both runs are equally deep.

Usage: ``python bench/bench_generate.py [--articles 200] [--latency 0.2] [--per-token 0.02] [--jitter 0.3]
[--quick] [--server asyncio|threads] [--extractive-articles 0]`` (``--latency 0 --per-token 0
--jitter 0``: every call answered at once, the client's CPU against zero).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
# This checkout's okgen, not whichever one the environment installed (an editable install of
# another worktree would otherwise be measured).
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from generate_server import DAY, articles  # noqa: E402

from okgen.generate.pipeline import run_generate  # noqa: E402
from okgen.settings import Workspace  # noqa: E402


def start_server(n: int, seed: int, latency: float, kind: str = "asyncio", per_token: float = 0.0,
                 jitter: float = 0.0) -> tuple[subprocess.Popen, str]:
    here = Path(__file__).resolve().parent
    proc = subprocess.Popen([sys.executable, str(here / "generate_server.py"), str(n), str(seed), str(latency), kind,
                             str(per_token), str(jitter)], stdout=subprocess.PIPE, text=True)
    url = proc.stdout.readline().strip()
    if not url.startswith("http"):
        proc.kill()
        raise SystemExit("the bench server did not start")
    return proc, url


def llm_run(url: str, arts, concurrency: int, ws: Workspace, gates: bool = True, **kw) -> tuple[float, dict, Any]:
    from okgen.generate import gates as quality_gates

    spec = f"openai/bench-model,base_url={url}"
    was, quality_gates.DEFAULT_ON = quality_gates.DEFAULT_ON, gates
    try:
        t0 = time.perf_counter()
        res = run_generate(DAY, ws, arts, generator=spec, validator=spec, concurrency=concurrency, progress=False, **kw)
        wall = time.perf_counter() - t0
    finally:
        quality_gates.DEFAULT_ON = was
    assert res.complete, res.funnel["articles"]
    return wall, res.funnel, res


def warm_gates(article) -> None:
    """Gate one made-up question about ``article`` (loads what the gates use once per process)."""
    from okgen.generate.gates import apply_gates
    from okgen.generate.records import Candidate

    c = Candidate(article_id=article.id, index=0, question=f"What did {article.title} report?",
                  choices=["one", "two", "three", "four"], answer="one", evidence=article.text[:200])
    apply_gates(article, [c])
    assert any(v.name == "stem_overlap" for v in c.verdicts)


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


def same_calls(url: str, arts, candidates, ws: Workspace, seed: int) -> list[tuple[Any, list[Any]]]:
    """The requests okgen's run made: per article its generator request and its validator requests."""
    from okgen.generate.agents import load_agent, resolve_agents_dir
    from okgen.generate.llm_generator import LLMGenerator, decoding_from
    from okgen.generate.validator import LLMValidator
    from okgen.llm import chat_model

    root = resolve_agents_dir(ws)
    model, _ = chat_model(f"openai/bench-model,base_url={url}")
    gspec, vspec = load_agent("generator", root), load_agent("validator", root)
    gen = LLMGenerator(gspec, model, decoding_from(gspec, {}, seed))
    val = LLMValidator(vspec, model, decoding_from(vspec, {}, seed))
    by_article: dict[str, list] = {}
    for c in candidates:
        if any(v.stage == "validator" for v in c.verdicts):
            by_article.setdefault(c.article_id, []).append(c)
    return [(gen.request(a, 5), [val.request(a, c, seed) for c in by_article.get(a.id, [])]) for a in arts]


def replay(url: str, jobs, concurrency: int, layer: Path | None = None) -> tuple[float, float, int]:
    """Make the calls of ``jobs``: per article its generator request, then (once answered) its
    validator requests, at most ``concurrency`` in flight, through the bare ``openai`` SDK
    (``chat.completions.parse`` with the same messages and schemas) or, with ``layer`` (a cache
    file), through okgen's LLM layer alone (``ChatModel.achat``, with its response cache).
    Requests are built before the clock starts. Returns (wall, client CPU, calls)."""
    import openai

    from okgen.llm import chat_model
    from okgen.models.cache import ResponseCache

    def kw(r) -> dict:
        return {"model": "bench-model", "messages": list(r.messages), "response_format": r.schema,
                "temperature": r.temperature, "top_p": r.top_p, "seed": r.seed,
                **({"max_tokens": r.max_tokens} if r.max_tokens else {})}

    async def main() -> float:
        if layer is not None:
            cache = ResponseCache(layer)
            model, _ = chat_model(f"openai/bench-model,base_url={url}", concurrency=concurrency, cache=cache)

            async def call(r) -> None:
                assert (await model.achat(r)).ok
        else:
            sem = asyncio.Semaphore(concurrency)
            client = openai.AsyncOpenAI(base_url=url, api_key="bench", timeout=120.0)  # okgen's default timeout

            async def call(r) -> None:
                async with sem:
                    await client.chat.completions.parse(**kw(r))

        async def article(g, vs) -> None:
            await call(g)
            await asyncio.gather(*(call(v) for v in vs))

        t0 = time.perf_counter()
        await asyncio.gather(*(article(g, vs) for g, vs in jobs))
        wall = time.perf_counter() - t0
        if layer is not None:
            await model.aclose()
            cache.close()
        else:
            await client.close()
        return wall

    c0 = time.process_time()
    wall = asyncio.run(main())
    return wall, time.process_time() - c0, sum(1 + len(vs) for _, vs in jobs)


def row(name: str, measured: str, target: str, ok: bool) -> None:
    print(f"  {name:<44} {measured:>22}   target {target:<10} {'PASS' if ok else 'MISS'}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--articles", type=int, default=200, help="articles for the LLM runs")
    ap.add_argument("--latency", type=float, default=0.2,
                    help="seconds to a call's first token (the median fixed part of its latency)")
    ap.add_argument("--per-token", type=float, default=0.02,
                    help="decoding seconds per completion token (0.02: 50 tokens/s per request, a small "
                         "model on one GPU serving 32-128 requests at once)")
    ap.add_argument("--jitter", type=float, default=0.3,
                    help="sigma of the seeded log-normal factor on each call's latency")
    ap.add_argument("--extractive-articles", type=int, default=600)
    ap.add_argument("--quick", action="store_true", help="smaller workloads")
    ap.add_argument("--server", choices=("asyncio", "threads"), default="asyncio",
                    help="the fake LLM server: lean asyncio (default) or the tests' threaded one "
                         "(slower under bursts; see generate_server.py)")
    args = ap.parse_args()
    if args.quick:
        args.articles, args.extractive_articles = 80, 200
    logging.basicConfig(level=logging.WARNING)
    logging.getLogger("okgen.llm.prices").setLevel(logging.ERROR)  # the fake model has no price
    os.environ.setdefault("OKGEN_NO_PROGRESS", "1")
    seed = 5
    # Each run is equally deep (calls / concurrency): the concurrency-128 run gets 4x the
    # articles of the concurrency-32 one. At 128 a 200-article day is only 7 rounds of calls, so
    # fixed costs (start-up, the first burst of generator replies, assembly) dominate its ratio;
    # that run is printed too, for information.
    deep = args.articles * 128 // 32
    every = articles(deep, seed)
    arts = every[:args.articles]
    print(f"okgen generate benchmark: {args.articles} articles ({deep} at concurrency 128), server latency "
          f"({args.latency:g} s + {args.per_token:g} s per completion token) x exp({args.jitter:g} z), "
          f"{os.cpu_count()} CPU cores, Python {sys.version.split()[0]}, load average {_load()}, {args.server} server")
    proc, url = start_server(deep, seed, args.latency, args.server, args.per_token, args.jitter)
    tmp = Path(tempfile.mkdtemp(prefix="okgen-bench-"))
    try:
        import openai

        # Imports happen once here, not inside the first timed run: openai's HTTP transport
        # (httpcore2 and h11) is imported when the first client is made.
        asyncio.run(openai.AsyncOpenAI(base_url=url, api_key="bench").close())

        # One untimed round of every client first (imports, schema and template caches, the first
        # client), so that no run pays the process's start-up costs for another.
        wws = Workspace(tmp / "warm-up")
        _, _, wres = llm_run(url, arts[:4], 4, wws)
        # The warm-up's few questions may all fail the checks before the gates: load the spaCy
        # pipeline and its word list (a process's one-time start, ~2 s CPU) here, not in a timed run.
        warm_gates(arts[0])
        wjobs = same_calls(url, arts[:4], wres.candidates, wws, seed)
        replay(url, wjobs, 4)
        replay(url, wjobs, 4, layer=tmp / "warm-up.sqlite")

        print("\n1. the generate stage vs the bare openai SDK making the same calls (same server, same run)")
        first = {}
        for conc, day in ((32, arts), (128, every)):
            ws, ws_off = Workspace(tmp / f"c{conc}-{len(day)}"), Workspace(tmp / f"c{conc}-{len(day)}-off")
            c0, s0 = time.process_time(), _cpu_of(proc.pid)
            wall, f, res = llm_run(url, day, conc, ws)
            cpu, scpu = time.process_time() - c0, _cpu_of(proc.pid) - s0
            calls = f["usage"]["calls"]
            first.setdefault(conc, (wall, ws, f))
            jobs = same_calls(url, day, res.candidates, ws, seed)
            bwall, bcpu, bcalls = replay(url, jobs, conc)
            assert bcalls == calls, (bcalls, calls)
            c0 = time.process_time()
            owall, f_off, _ = llm_run(url, day, conc, ws_off, gates=False)
            ocpu = time.process_time() - c0
            ocalls = f_off["usage"]["calls"]  # the gates drop questions before the validator: maybe more calls
            lwall, lcpu, _ = replay(url, jobs, conc, layer=tmp / f"layer-{conc}.sqlite")
            u = f["usage"]
            mean = (args.latency + args.per_token * u["completion_tokens"] / calls) * math.exp(args.jitter ** 2 / 2)
            ideal = calls * mean / conc
            print(f"  concurrency {conc}, {len(day)} articles: {calls} calls ({f['usage']['by_agent']['generator']['calls']} generator, "
                  f"{f['usage']['by_agent']['validator']['calls']} validator), {f['kept']} questions kept; mean modelled latency {mean:.3f} s, ideal {ideal:.2f} s; "
                  f"server {1000 * scpu / calls:.2f} ms CPU per call; load average {_load()}")
            for name, w, c, n in (("okgen generate stage", wall, cpu, calls),
                                  (f"  the same, gates off ({ocalls} calls)", owall, ocpu, ocalls),
                                  ("okgen LLM layer alone, same calls", lwall, lcpu, calls),
                                  ("bare SDK, same calls", bwall, bcpu, calls)):
                print(f"    {name:<36} {w:7.2f} s wall {1000 * c / n:7.2f} ms client CPU per call")
            row(f"wall okgen / bare SDK at concurrency {conc}", f"{wall / bwall:.3f}x", "<= 1.05x", wall / bwall <= 1.05)
            row(f"CPU per call okgen / bare SDK at {conc}", f"{cpu / bcpu:.3f}x", "<= 1.10x", cpu / bcpu <= 1.10)
            print(f"  {'  gates off: wall, CPU per call':<44} {f'{owall / bwall:.3f}x, {ocpu / bcpu:.3f}x':>22}   (for information)")
            print(f"  {'  LLM layer alone: wall, CPU per call':<44} {f'{lwall / bwall:.3f}x, {lcpu / bcpu:.3f}x':>22}   (for information)")

        print("\n2. cached rerun of the same day (first run at concurrency 32)")
        wall0, ws, f0 = first[32]
        t0 = time.perf_counter()
        run_generate(DAY, ws, arts, generator=f"openai/bench-model,base_url={url}",
                     validator=f"openai/bench-model,base_url={url}", concurrency=32, progress=False)
        resume = time.perf_counter() - t0
        wall_c, fc, _ = llm_run(url, arts, 32, ws, fresh=True)
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

    if args.extractive_articles <= 0:
        return
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
