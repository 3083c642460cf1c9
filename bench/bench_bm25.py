"""bm25: okgen (bm25s, numpy backend) against rank_bm25, same tokenisation, side by side.

Targets (issue 5): index + 1,000 queries over 5,000 articles at least 10x faster than
rank_bm25; at 500 articles x 500 queries not slower (>= 1.0x).

Both sides tokenise with okgen's Tokenizer (stopwords + Snowball stemming) and return the
top 10 per query; okgen's time includes writing the index to disk. Articles are synthetic
(okgen.testing.corpus), about 400 words each; queries are the questions of their facts.

    python bench/bench_bm25.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import tempfile
import time
from pathlib import Path

import numpy as np

END = dt.date(2026, 11, 21)


def okgen_run(units, queries, k: int) -> tuple[float, list[int]]:
    from okgen.retrieval.bm25 import BM25Retriever

    t0 = time.perf_counter()
    retr = BM25Retriever(BM25Retriever.resolve_params({}))
    with tempfile.TemporaryDirectory() as tmp:
        retr.build(units, Path(tmp))
        ranked = retr.search(queries, k, [len(units)] * len(queries))
    return time.perf_counter() - t0, [r[0][0] if r else -1 for r in ranked]


def rank_bm25_run(units, queries, k: int) -> tuple[float, list[int]]:
    from rank_bm25 import BM25Okapi

    from okgen.retrieval.bm25 import Tokenizer

    t0 = time.perf_counter()
    tok = Tokenizer("english", "en")
    model = BM25Okapi(tok([u.text for u in units]), k1=1.5, b=0.75)
    top1 = []
    for q in queries:
        scores = model.get_scores(tok.tokenize_one(q))
        best = np.argpartition(-scores, k - 1)[:k]
        best = best[np.argsort(-scores[best])]
        top1.append(int(best[0]))
    return time.perf_counter() - t0, top1


def bench(n_articles: int, n_queries: int, repeat: int, target: float) -> bool:
    from okgen.retrieval.windows import make_units
    from okgen.testing.corpus import make_articles

    articles, facts = make_articles(n_articles, END, days=10, seed=1, facts_per_article=12)
    units = make_units(articles)
    rng = np.random.default_rng(0)
    queries = [facts[i].question for i in rng.choice(len(facts), size=n_queries, replace=False)]
    words = sum(len(u.text.split()) for u in units) / len(units)
    ours, theirs = [], []
    for _ in range(repeat):  # interleaved, best of N: both sides see the same machine state
        t, top_ours = okgen_run(units, queries, 10)
        ours.append(t)
        t, top_theirs = rank_bm25_run(units, queries, 10)
        theirs.append(t)
    agree = np.mean([a == b for a, b in zip(top_ours, top_theirs)])
    ratio = min(theirs) / min(ours)
    ok = ratio >= target
    print(f"{n_articles:>6} articles (~{words:.0f} words) x {n_queries:>5} queries | okgen {min(ours):7.3f} s | "
          f"rank_bm25 {min(theirs):7.3f} s | speed-up {ratio:6.1f}x (target >= {target:g}x: {'PASS' if ok else 'FAIL'}) | "
          f"top-1 agreement {agree:.1%} (rank_bm25 uses Okapi idf)")
    return ok


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3, help="runs per side (best is kept)")
    args = ap.parse_args()
    print(f"bench_bm25: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}")
    ok = bench(5000, 1000, args.repeat, 10.0)
    ok &= bench(500, 500, args.repeat, 1.0)
    print("all targets met" if ok else "some targets missed")


if __name__ == "__main__":
    main()
