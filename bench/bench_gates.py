"""Cost of the quality gates on one real news day, against the programmatic checks alone.

The candidates are the offline generator's for one news-dev day (``../shared/data/news-dev``;
the bench skips when it is absent). One process, CPU time (``time.process_time``), side by
side: the checks alone (what a run did before the gates), then the gates
(``okgen.generate.gates.apply_gates``: one spaCy parse per stem and one per answer context).
Prints ms of CPU per candidate and the ratio, and the funnel of the gates.

    python bench/bench_gates.py [--day 2025-04-10] [--articles 150]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import time
from collections import Counter
from pathlib import Path

NEWS = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "news-dev"


def load(day: str, limit: int):
    from okgen.hashing import sha256_text
    from okgen.schema import Article

    path = NEWS / f"news_{day}.json"
    if not path.is_file():
        raise SystemExit(f"skipped: {path} is absent")
    date = dt.date.fromisoformat(day)
    out = []
    for i, r in enumerate(json.loads(path.read_text(encoding="utf-8"))[:limit]):
        text = r.get("article_text") or ""
        if not text.strip():
            continue
        out.append(Article(id=f"{i:08x}", url=r.get("link") or f"https://example.org/{i}",
                           canonical_url=r.get("link") or f"https://example.org/{i}", source=r.get("news_site", "?"),
                           title=r.get("title") or "", date=date,
                           published_at=dt.datetime.combine(date, dt.time(12), dt.timezone.utc),
                           fetched_at=dt.datetime.combine(date, dt.time(13), dt.timezone.utc), language="en",
                           text=text, text_sha256=sha256_text(text), extractor="news-dev"))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--day", default="2025-04-10")
    ap.add_argument("--articles", type=int, default=150)
    args = ap.parse_args()
    from okgen.generate.agents import load_agent, packaged_agents_dir
    from okgen.generate.checks import check_candidate
    from okgen.generate.extractive import ExtractiveGenerator
    from okgen.generate.gates import apply_gates
    from okgen.generate.nlp import load_pipeline
    from okgen.generate.text import normalize

    arts = load(args.day, args.articles)
    g = ExtractiveGenerator(load_agent("extractive", packaged_agents_dir()), 1234)
    pool = g.build_pool(arts, dt.date.fromisoformat(args.day))
    cands = {a.id: g.generate(a, 5, pool) for a in arts}
    n = sum(len(v) for v in cands.values())
    nlp = load_pipeline()
    list(nlp.pipe(["Warm-up: who said what on Tuesday?"]))
    t0 = time.process_time()
    for a in arts:
        norm = normalize(f"{a.title}\n{a.text}")
        for c in cands[a.id]:
            check_candidate(c, norm)
    checks = time.process_time() - t0
    t0 = time.process_time()
    for a in arts:
        apply_gates(a, cands[a.id], nlp=nlp)
    gates = time.process_time() - t0
    first = Counter(c.rejected_by for v in cands.values() for c in v)
    print(f"{len(arts)} articles of {args.day}, {n} candidates; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"  checks alone  {checks * 1000 / n:8.2f} ms CPU per candidate")
    print(f"  quality gates {gates * 1000 / n:8.2f} ms CPU per candidate ({gates / max(checks, 1e-9):.0f}x the checks)")
    print(f"  kept {first[None]} of {n}; first failures: " + ", ".join(f"{k} {v}" for k, v in first.most_common() if k))


if __name__ == "__main__":
    main()
