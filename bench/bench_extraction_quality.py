"""Extraction quality on real pages: okgen's extraction step vs trafilatura called directly.

Reads the evaluation set of ../shared/data/extraction-eval (990 real pages with gold snippets
and metadata, from trafilatura's evaluation; see its README). For each page, the article text is
scored by the snippets it must contain (``with``) and must not contain (``without``): precision,
recall and F1 over snippets, as trafilatura's own evaluation does. Title, date and author are
compared with the gold values (exact match after trimming, dates as ISO dates).

Target (issue 3): okgen's F1 within 0.01 of trafilatura's with the same options.

    python bench/bench_extraction_quality.py [EVAL_DIR] [--limit N]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT = "../shared/data/extraction-eval"
TARGET = 0.01


def _norm(text: str | None) -> str:
    return " ".join((text or "").split())


class Score:
    """Snippet counts and metadata matches of one extractor."""

    def __init__(self) -> None:
        self.tp = self.fn = self.fp = self.tn = 0
        self.meta = {k: [0, 0] for k in ("title", "date", "author")}
        self.seconds = 0.0

    def add(self, row: dict, text: str | None, meta: dict) -> None:
        t = _norm(text)
        for s in row.get("with", []):
            if _norm(s) in t:
                self.tp += 1
            else:
                self.fn += 1
        for s in row.get("without", []):
            if _norm(s) in t:
                self.fp += 1
            else:
                self.tn += 1
        for k in self.meta:
            gold = _norm(str(row.get(k) or ""))
            if not gold:
                continue
            got = _norm(str(meta.get(k) or ""))
            if k == "date":
                gold, got = gold[:10], got[:10]
            self.meta[k][1] += 1
            self.meta[k][0] += int(gold == got)

    @property
    def precision(self) -> float:
        return self.tp / max(1, self.tp + self.fp)

    @property
    def recall(self) -> float:
        return self.tp / max(1, self.tp + self.fn)

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    @property
    def accuracy(self) -> float:
        return (self.tp + self.tn) / max(1, self.tp + self.tn + self.fp + self.fn)

    def line(self, name: str, n: int) -> str:
        meta = "  ".join(f"{k} {m[0] / max(1, m[1]):.3f} ({m[0]}/{m[1]})" for k, m in self.meta.items())
        return (f"  {name:34s} P {self.precision:.4f}  R {self.recall:.4f}  F1 {self.f1:.4f}  acc {self.accuracy:.4f}"
                f"  {1000 * self.seconds / max(1, n):6.1f} ms/page\n  {'':34s} {meta}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("eval_dir", nargs="?", default=DEFAULT, help=f"evaluation folder (default {DEFAULT}, from the repository root)")
    ap.add_argument("--limit", type=int, default=None, help="only the first N pages")
    a = ap.parse_args()
    root = Path(a.eval_dir)
    if not root.is_absolute() and not root.exists():
        root = REPO / root
    gold = root / "gold.jsonl"
    if not gold.is_file():
        print(f"no evaluation set at {root} (gold.jsonl missing); nothing to measure. "
              "Pass the folder of the extraction evaluation pages as the first argument.")
        return 0

    import trafilatura

    from okgen.ingest.extract import ExtractOptions, extract_page, extractor_name

    rows = [json.loads(x) for x in gold.read_text(encoding="utf-8").splitlines() if x.strip()][: a.limit]
    opts = ExtractOptions()
    kw = opts.trafilatura_kwargs()
    scores = {"okgen": Score(), "trafilatura (same options)": Score(), "trafilatura (defaults, extract)": Score()}
    same_text = 0

    def run_okgen(row: dict, body: bytes) -> tuple[str | None, dict]:
        page = extract_page(body, row.get("url"), None, opts)
        return page["text"], page

    def run_direct(row: dict, body: bytes) -> tuple[str | None, dict]:
        doc = trafilatura.bare_extraction(body, url=row.get("url"), **kw)
        return (None, {}) if doc is None else (doc.text, {"title": doc.title, "date": doc.date, "author": doc.author})

    def run_defaults(row: dict, body: bytes) -> tuple[str | None, dict]:
        return trafilatura.extract(body, url=row.get("url")), {}

    runners = [("okgen", run_okgen), ("trafilatura (same options)", run_direct),
               ("trafilatura (defaults, extract)", run_defaults)]
    for i, row in enumerate(rows):
        body = gzip.decompress((root / row["html"]).read_bytes())
        texts = {}
        # Rotate the order page by page: a page's second extraction is faster (warm caches).
        for name, run in runners[i % 3:] + runners[:i % 3]:
            t0 = time.perf_counter()
            text, meta = run(row, body)
            scores[name].seconds += time.perf_counter() - t0
            scores[name].add(row, text, meta)
            texts[name] = text
        same_text += int(_norm(texts["okgen"]) == _norm(texts["trafilatura (same options)"]))
    n = len(rows)
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, load "
          f"{os.getloadavg()[0]:.1f}; {extractor_name()}")
    print(f"{n} pages from {root}; options: {kw}")
    for name, s in scores.items():
        print(s.line(name, n))
    print(f"  identical text for {same_text}/{n} pages")
    diff = abs(scores["okgen"].f1 - scores["trafilatura (same options)"].f1)
    print(f"RESULT |F1 okgen - F1 trafilatura| = {diff:.4f} (target <= {TARGET}): {'PASS' if diff <= TARGET else 'MISS'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
