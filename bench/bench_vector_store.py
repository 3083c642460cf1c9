"""Which encoding store: SQLite blobs (okgen's) vs a memory-mapped array with an index file.

Both are written the way a kill mid-encoding must leave them whole: one commit per batch of
64 vectors (SQLite: one transaction; memmap: append the batch's bytes, then append its keys to
an index log, so a key never points at bytes not yet written). Then a 10-day window's vectors
(``--window`` random keys) are looked up and stacked into one array, and a day's worth
(``--gc``) is dropped (SQLite: DELETE + VACUUM; memmap: rewrite the kept rows). Timings are
best of ``--repeat``, and are compared with the time the encoder needs for the same window
(``--rate`` passages/s, MiniLM on 2 CPU cores measured by bench_dpr/bench_index_incremental).

    python bench/bench_vector_store.py [--vectors 30000] [--window 10000] [--dim 384] [--repeat 3]
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import os
import tempfile
import time
from pathlib import Path

import numpy as np

BATCH = 64
DAY = dt.date(2025, 4, 14)


def sha(i: int) -> str:
    return hashlib.sha256(f"passage {i}".encode()).hexdigest()


class MemmapStore:
    """Append-only float32 rows + an append-only ``sha row`` index log (what okgen would have to maintain)."""

    def __init__(self, folder: Path, dim: int):
        self.folder, self.dim = folder, dim
        self.data, self.log = folder / "vecs.f32", folder / "index.log"
        folder.mkdir(parents=True, exist_ok=True)
        self.rows = self.data.stat().st_size // (4 * dim) if self.data.exists() else 0

    def put_many(self, shas, vecs) -> None:
        with open(self.data, "ab") as f:
            f.write(np.ascontiguousarray(vecs, dtype=np.float32).tobytes())
        with open(self.log, "a", encoding="ascii") as f:
            f.write("".join(f"{s} {self.rows + i}\n" for i, s in enumerate(shas)))
        self.rows += len(shas)

    def index(self) -> dict[str, int]:
        out = {}
        with open(self.log, encoding="ascii") as f:
            for line in f:
                parts = line.split()
                if len(parts) == 2:  # a torn last line is ignored
                    out[parts[0]] = int(parts[1])
        return out

    def get_many(self, shas) -> np.ndarray:
        idx = self.index()
        mm = np.memmap(self.data, dtype=np.float32, mode="r").reshape(-1, self.dim)
        return np.ascontiguousarray(mm[[idx[s] for s in shas]])

    def drop(self, keep: set[str]) -> None:
        idx = self.index()
        mm = np.memmap(self.data, dtype=np.float32, mode="r").reshape(-1, self.dim)
        kept = [s for s in idx if s in keep]
        rows = np.ascontiguousarray(mm[[idx[s] for s in kept]])
        del mm
        tmp = MemmapStore(self.folder / "new", self.dim)
        tmp.put_many(kept, rows)
        os.replace(tmp.data, self.data)
        os.replace(tmp.log, self.log)
        self.rows = len(kept)


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vectors", type=int, default=30000, help="vectors stored (10 days of passages)")
    ap.add_argument("--window", type=int, default=10000, help="vectors looked up for one window")
    ap.add_argument("--gc", type=int, default=3000, help="vectors dropped by gc (one day)")
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--rate", type=float, default=11.0, help="encoder passages/s, for the comparison")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    from okgen.retrieval.vectors import VectorStore

    rng = np.random.default_rng(0)
    vecs = rng.standard_normal((args.vectors, args.dim), dtype=np.float32)
    keys = [sha(i) for i in range(args.vectors)]
    window = [keys[i] for i in rng.choice(args.vectors, args.window, replace=False)]
    keep = set(keys[args.gc:])
    print(f"bench_vector_store: {args.vectors} x {args.dim} float32 vectors, commits of {BATCH}, "
          f"window lookup of {args.window}, gc of {args.gc}")
    rows = []
    with tempfile.TemporaryDirectory(prefix="okgen-bench-vs-") as tmp:
        tmp = Path(tmp)
        for name in ("sqlite", "memmap"):
            w_times, r_times, g_times = [], [], []
            for rep in range(args.repeat):
                folder = tmp / f"{name}{rep}"
                folder.mkdir()
                if name == "sqlite":
                    store = VectorStore(folder / "v.sqlite")
                    store.register("k", {"bench": 1}, args.dim)
                    put = lambda s, v, store=store: store.put_many("k", s, v, DAY)  # noqa: E731
                    def get(store=store):
                        found = store.get_many("k", window)
                        return np.concatenate([found[s] for s in window])
                    drop = lambda store=store: store.collect(dt.date(2025, 4, 14))  # noqa: E731
                else:
                    store = MemmapStore(folder, args.dim)
                    put, get, drop = store.put_many, (lambda store=store: store.get_many(window)), \
                        (lambda store=store: store.drop(keep))
                t0 = time.perf_counter()
                for s in range(0, args.vectors, BATCH):
                    put(keys[s:s + BATCH], vecs[s:s + BATCH])
                w_times.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                got = get()
                r_times.append(time.perf_counter() - t0)
                assert got.shape == (args.window, args.dim)
                if name == "sqlite":  # mark one day old, as gc sees it
                    store.db.executemany("UPDATE vectors SET used_on = '2025-04-01' WHERE encoder = 'k' AND text_sha256 = ?",
                                         [(k,) for k in keys[:args.gc]])
                t0 = time.perf_counter()
                drop()
                g_times.append(time.perf_counter() - t0)
                size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
                if name == "sqlite":
                    store.close()
            rows.append((name, min(w_times), min(r_times), min(g_times), size))
    enc = args.window / args.rate
    for name, w, r, g, size in rows:
        print(f"{name:>7}: write {w:6.2f} s ({args.vectors / w:8.0f} vectors/s), window lookup {r * 1000:7.1f} ms "
              f"({r / enc * 100:.3f} % of encoding the window at {args.rate:g}/s = {enc:.0f} s), gc {g * 1000:7.1f} ms, "
              f"{size / 1e6:.1f} MB on disk")


if __name__ == "__main__":
    main()
