"""Offline generation of one real news day: seconds per 100 articles, peak memory, and the ratio
to spaCy parsing the same texts alone (the floor any spaCy-based generator pays).

Usage: python bench/bench_generate_offline.py [--day ../shared/data/news-dev/news_2025-04-11.json]

It imports the day into a temporary workspace (``okgen ingest --import``), runs the offline
generator on it through the library, and prints the funnel's counts, the time per 100 articles,
the peak resident memory of this process, and the ratio to ``nlp.pipe`` over the same texts. It
prints the process's CPU time beside the wall time and the load average: on a shared machine the
wall time grows with the other processes' load, the CPU time much less.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    news = ROOT.parent / "shared" / "data" / "news-dev"
    ap.add_argument("--day", default=str(news / "news_2025-04-11.json"),
                    help="a news-dev day (2025-04-11) or a dump file (news_2025-04-11.json)")
    args = ap.parse_args()
    day_file = news / f"news_{args.day}.json" if len(args.day) == 10 and args.day[4] == "-" else Path(args.day)
    if not day_file.is_file():
        raise SystemExit(f"bench_generate_offline: {day_file}: no such day file")
    date = dt.date.fromisoformat(day_file.stem.split("_")[-1])
    with tempfile.TemporaryDirectory() as home:
        subprocess.run([sys.executable, "-m", "okgen", "-q", "--home", home, "ingest", "--import", str(day_file),
                        "--date", date.isoformat(), "--map", "text=article_text", "--map", "source=news_site",
                        "--map", "url=link"], check=True)
        from okgen.generate.agents import load_agent, packaged_agents_dir
        from okgen.generate.extractive import ExtractiveGenerator, _body
        from okgen.ingest.store import ArticleStore

        with ArticleStore(Path(home) / "data" / "okgen.sqlite") as st:
            arts = list(st.articles_for_date(date))
        gen = ExtractiveGenerator(load_agent("extractive", packaged_agents_dir()), 1234)
        t0, c0 = time.perf_counter(), time.process_time()
        pool = gen.build_pool(arts, date)
        cands = [c for a in arts for c in gen.generate(a, 5, pool)]
        t_gen, c_gen = time.perf_counter() - t0, time.process_time() - c0
        t0 = time.perf_counter()
        for _ in gen.nlp.pipe((_body(a)[:gen.max_chars] for a in arts), batch_size=32):
            pass
        t_parse = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    n = len(arts)
    print(f"day {date}: {n} articles, {len(cands)} candidates from {sum(1 for a in arts if pool.items.get(a.id))} articles")
    print(f"offline generation: {t_gen:.1f} s, {100 * t_gen / n:.1f} s per 100 articles (target < 20); "
          f"CPU {c_gen:.1f} s, {100 * c_gen / n:.1f} s per 100 articles (what a quiet machine's wall time approaches)")
    print(f"load average at the end: {os.getloadavg()[0]:.1f} (other processes share the cores)")
    print(f"spaCy parse alone:  {t_parse:.1f} s; generation / parse = {t_gen / t_parse:.2f}")
    print(f"peak memory: {peak:.0f} MiB")


if __name__ == "__main__":
    main()
