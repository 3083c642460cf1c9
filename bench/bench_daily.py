"""The daily job's orchestration overhead, measured side by side in one run.

The CPU stages of ``okgen daily`` (ingest replayed from a WARC capture, extractive generation,
snapshot build, bm25 indexes of the 1/5/10-day windows) are timed twice in fresh workspaces:
once as ``run_daily`` and once by calling each stage's library function alone, one after the
other. Target: daily <= 1.2 x the sum of the stages alone. Rounds alternate the two orders and
the best of each is compared (the machine is shared and noisy).

    python bench/bench_daily.py [--articles 300] [--rounds 3]
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import shutil
import tempfile
import time
from pathlib import Path

DAY = dt.date(2026, 11, 21)
TARGET = 1.2

CONFIG = """
[ingest]
allow_networks = ["loopback"]
per_host_delay = 0.0
per_host_concurrency = 32
concurrency = 32
min_words = 60
"""


def capture(n: int, root: Path) -> tuple[Path, Path]:
    """Ingest ``n`` synthetic articles live from a local news site once; return (WARC, feeds)."""
    from okgen.ingest.pipeline import run_ingest
    from okgen.ingest.warc import warc_path
    from okgen.settings import Workspace
    from okgen.testing.news_site import NewsSite
    from okgen.testing.retrieval import daily_corpus
    from okgen.testing.web import WebServer

    articles = daily_corpus(n, 1, DAY, seed=3)[0]
    ws = Workspace(root / "capture")
    ws.home.mkdir(parents=True)
    (ws.home / "okgen.toml").write_text(CONFIG)
    with WebServer() as web:
        site = NewsSite(articles).install(web)
        feeds = root / "feeds.toml"
        feeds.write_text(site.feed_list_toml())
        summary = run_ingest(DAY, ws, feeds=feeds)
    print(f"captured {summary.stored} articles of {len(articles)} served")
    return warc_path(ws.warc_dir, DAY), feeds


def fresh(root: Path, name: str):
    from okgen.settings import Workspace

    ws = Workspace(root / name)
    if ws.home.exists():
        shutil.rmtree(ws.home)
    ws.home.mkdir(parents=True)
    (ws.home / "okgen.toml").write_text(CONFIG)
    return ws


def stages_alone(ws, warc: Path) -> dict[str, float]:
    """Each stage's own library call, in order; seconds per stage."""
    from okgen.generate.pipeline import run_generate
    from okgen.ingest.pipeline import run_ingest
    from okgen.ingest.store import ArticleStore
    from okgen.retrieval.index import open_index
    from okgen.snapshot.build import build_snapshot

    t = {}
    t0 = time.perf_counter()
    summary = run_ingest(DAY, ws, replay=warc)
    t["ingest"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    res = run_generate(DAY, ws, progress=False)
    t["generate"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    with ArticleStore(ws.db_path) as st:
        corpus = st.articles_between(DAY - dt.timedelta(days=10), DAY)
    snap = build_snapshot(res.questions, corpus, date=DAY, generator=res.generator, validator=res.validator,
                          prompt_hash=res.prompt_hash, feeds_hash=summary.feeds_hash or "0" * 12, seed=res.seed,
                          funnel=res.funnel, workspace=ws)
    t["snapshot"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    for w in (1, 5, 10):
        open_index(snap, "bm25", w, ws)
    t["index"] = time.perf_counter() - t0
    return t


def daily(ws, warc: Path) -> tuple[float, dict[str, float]]:
    from okgen.daily.pipeline import DailyOptions, run_daily

    opts = DailyOptions(replay=str(warc), retrievers=("bm25",))
    t0 = time.perf_counter()
    res = run_daily(DAY, ws, opts)
    wall = time.perf_counter() - t0
    return wall, {k: v["counts"].get("seconds", 0.0) for k, v in res.stages.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--articles", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    os.environ.setdefault("OKGEN_NO_PROGRESS", "1")
    root = Path(tempfile.mkdtemp(prefix="okgen-bench-daily-"))
    try:
        warc, _ = capture(args.articles, root)
        alone, orchestrated = [], []
        for r in range(args.rounds):
            order = ("alone", "daily") if r % 2 == 0 else ("daily", "alone")
            for which in order:
                ws = fresh(root, f"{which}-{r}")
                if which == "alone":
                    t = stages_alone(ws, warc)
                    alone.append(sum(t.values()))
                    print(f"round {r} stages alone: {sum(t.values()):.2f}s  " + "  ".join(f"{k} {v:.2f}" for k, v in t.items()))
                else:
                    wall, per = daily(ws, warc)
                    orchestrated.append(wall)
                    print(f"round {r} okgen daily:  {wall:.2f}s  " + "  ".join(f"{k} {v:.2f}" for k, v in per.items()))
        best_alone, best_daily = min(alone), min(orchestrated)
        ratio = best_daily / best_alone
        print(f"\nmachine: {os.cpu_count()} CPUs, load {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
        print(f"sum of stages alone (best of {args.rounds}): {best_alone:.2f}s")
        print(f"okgen daily (best of {args.rounds}):          {best_daily:.2f}s")
        print(f"ratio daily / stages alone: {ratio:.3f}  (target <= {TARGET}: {'met' if ratio <= TARGET else 'MISSED'})")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
