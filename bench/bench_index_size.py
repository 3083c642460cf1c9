"""Index size on disk and peak memory for 1-, 5- and 10-day windows (400 articles a day).

For each retriever spec and window, one fresh process builds the index (its peak RSS is the
build's) and another loads it and answers 100 queries (the search peak). Sizes are the
index folders' bytes. The corpus is synthetic: 400 articles a day, about 450 words each.

ColBERT cannot download a checkpoint here: it uses a random BERT (``--colbert-size``, small
= 4 layers x 256 by default) with ColBERTv2's dim 128 and 2-bit residuals. Its index size
depends on the token count, dim and nbits, not on the encoder's size; its memory and time do.

    python bench/bench_index_size.py [--retrievers bm25,bm25-passages,dpr,colbert] [--windows 1,5,10]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
END = dt.date(2026, 11, 21)
PER_DAY = 400
SIZES = {"tiny": (64, 2, 2), "small": (256, 4, 4), "base": (768, 12, 12)}


def peak_mb() -> float:
    """This process's peak resident memory (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child(args: argparse.Namespace) -> None:
    from okgen.retrieval.index import disk_bytes, open_index
    from okgen.settings import Workspace
    from okgen.snapshot.store import Snapshot

    snap = Snapshot(args.snapshot)
    ws = Workspace(Path(args.workspace))
    base = peak_mb()
    t0 = time.perf_counter()
    if args.child == "build":
        idx = open_index(snap, args.name, args.window, ws, spec=args.spec)
        out = {"seconds": time.perf_counter() - t0, "articles": idx.num_docs, "units": idx.num_units,
               "bytes": disk_bytes(idx.folder)}
    else:
        idx = open_index(snap, args.name, args.window, ws, spec=args.spec, build=False, verify=False)
        queries = [q.question for q in snap.questions[:100]]
        idx.search(queries, 10)
        out = {"seconds": time.perf_counter() - t0}
    out.update(peak_mb=peak_mb(), base_mb=base)
    print(json.dumps(out))


def run_child(kind: str, snapshot: Path, ws: Path, name: str, spec: str, window: int) -> dict:
    cmd = [sys.executable, __file__, "--child", kind, "--snapshot", str(snapshot), "--workspace", str(ws),
           "--name", name, "--spec", spec, "--window", str(window)]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        raise SystemExit(f"{kind} {name} w{window} failed:\n{res.stderr[-3000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--retrievers", default="bm25,bm25-passages,dpr,colbert")
    ap.add_argument("--windows", default="1,5,10")
    ap.add_argument("--colbert-size", choices=sorted(SIZES), default="small")
    ap.add_argument("--keep", help="work in this folder and keep it (default: a temporary folder)")
    ap.add_argument("--child", choices=["build", "search"], help=argparse.SUPPRESS)
    ap.add_argument("--snapshot", help=argparse.SUPPRESS)
    ap.add_argument("--workspace", help=argparse.SUPPRESS)
    ap.add_argument("--name", help=argparse.SUPPRESS)
    ap.add_argument("--spec", help=argparse.SUPPRESS)
    ap.add_argument("--window", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args)
        return

    from okgen.retrieval.specs import load_spec
    from okgen.settings import Workspace
    from okgen.testing.corpus import make_questions
    from okgen.testing.retrieval import daily_corpus, snapshot_from

    root = Path(args.keep or tempfile.mkdtemp(prefix="okgen-bench-size-"))
    ws = Workspace(root / "ws")
    windows = [int(w) for w in args.windows.split(",")]
    articles, facts = daily_corpus(PER_DAY, max(windows), END, seed=6)
    snap = snapshot_from(ws, articles, make_questions(articles, facts, END, seed=6), date=END,
                         windows=sorted(set(windows) | {max(windows)}))
    words = sum(len(a.text.split()) for a in articles) / len(articles)
    print(f"bench_index_size: {platform.machine()}, {os.cpu_count()} CPUs; {PER_DAY} articles/day, "
          f"~{words:.0f} words each; corpus {len(articles)} articles over {max(windows)} days")
    specs = {}
    for name in args.retrievers.split(","):
        if name == "colbert":
            from okgen.testing.tiny_models import make_tiny_colbert

            hidden, layers, heads = SIZES[args.colbert_size]
            ckpt = root / f"colbert-{args.colbert_size}"
            if not (ckpt / "config.json").is_file():
                make_tiny_colbert(ckpt, [a.text for a in articles[:2000]], dim=128, hidden=hidden, layers=layers,
                                  heads=heads, vocab_size=8000, doc_maxlen=300, lexical=False)
            text = (Path(load_spec("colbert").path).read_text()
                    .replace('checkpoint = "colbert-ir/colbertv2.0"', f'checkpoint = "{ckpt}"'))
            spec_path = root / "colbert.toml"
            spec_path.write_text(text)
            specs[name] = str(spec_path)
        else:
            specs[name] = str(load_spec(name, ws).path)
    head = (f"{'retriever':<14} {'window':>6} {'articles':>8} {'units':>6} {'build s':>8} {'disk MB':>8} "
            f"{'build peak MB':>13} {'search peak MB':>14} {'(imports MB)':>12}")
    print(head)
    for name, spec in specs.items():
        for w in windows:
            b = run_child("build", snap.path, ws.home, name, spec, w)
            s = run_child("search", snap.path, ws.home, name, spec, w)
            print(f"{name:<14} {w:>6} {b['articles']:>8} {b['units']:>6} {b['seconds']:>8.1f} {b['bytes'] / 1e6:>8.2f} "
                  f"{b['peak_mb']:>13.0f} {s['peak_mb']:>14.0f} {b['base_mb']:>12.0f}", flush=True)
    print(f"(work folder: {root})")


if __name__ == "__main__":
    main()
