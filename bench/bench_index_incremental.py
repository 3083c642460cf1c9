"""Dense indexes that grow by the day: each passage encoded once, across windows and days.

Imports the five news-dev days (``../shared/data/news-dev``) into a fresh workspace with the
importer ``okgen ingest --import`` uses, builds snapshots for day 4 and day 5, then times, in
one run and one process:

* **cold**: the dpr 1/5/10-day windows of day 4 (the store is empty: days 1-4 are new);
* **direct**: the same sentence-transformers model called once on the distinct passages of
  those three windows (what the cold build cannot beat), timed before cold and after warm,
  the mean of the two kept (the machine may be shared);
* **warm**: the dpr 1/5/10-day windows of day 5 (only day 5's passages are new).

``--retriever colbert`` runs the same days with a random 4-layer ColBERT encoder (its direct
baseline: colbert-ai's ``docFromText`` once over the distinct passages; k-means, compression
and IVF come on top, so only warm/cold is a target there).

Targets (dpr): warm <= 0.5 x cold; cold <= 1.1 x direct (wall clock; the process's CPU time is
printed beside it, steadier on a shared machine). Prints the passages encoded and reused per
window, the times and both ratios. ``--per-day N`` keeps the first N records of each day file
(encoding all five days takes most of an hour on a 2-core CPU). On a loaded machine,
``--baseline-once --baseline-fraction 0.25`` runs the builds first, prints warm / cold as soon
as they are done, then times the direct baseline once on a seeded quarter of the distinct
passages and scales it (an extrapolation, printed as such).

    python bench/bench_index_incremental.py [--news ../shared/data/news-dev] [--per-day N]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import random
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("OKGEN_NO_PROGRESS", "1")
DAYS = [dt.date(2025, 4, 10) + dt.timedelta(days=i) for i in range(5)]
MAPPING = {"text": "article_text", "url": "link", "source": "news_site"}
WINDOWS = (1, 5, 10)


def import_days(ws, news: Path, tmp: Path, per_day: int) -> None:
    """``okgen ingest --import`` of each day (the dump has no dates: each file is imported with its day)."""
    from okgen.ingest.pipeline import run_ingest

    for day in DAYS:
        dump = news / f"news_{day}.json"
        if per_day:
            records = json.loads(dump.read_text(encoding="utf-8"))[:per_day]
            dump = tmp / dump.name
            dump.write_text(json.dumps(records), encoding="utf-8")
        # as `okgen ingest --import FILE --date DAY --map ...`: the records take the day given
        summary = run_ingest(day, ws, import_file=dump, import_mapping=MAPPING)
        print(f"imported {day}: {summary.stored} articles stored")


def load() -> str:
    """The 1/5/15-minute load averages (what else ran on the machine)."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def timed(fn) -> tuple[float, float, object]:
    """(wall seconds, CPU seconds of this process, result)."""
    w0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - w0, time.process_time() - c0, out


def build(snap, ws, label: str, spec) -> tuple[float, float, int, int]:
    from okgen.retrieval.index import open_index

    wall = cpu = 0.0
    enc = reu = 0
    for w in WINDOWS:
        w_s, c_s, idx = timed(lambda w=w: open_index(snap, spec.kind, w, ws, spec=spec.path))
        c = idx.encode_counts
        wall, cpu, enc, reu = wall + w_s, cpu + c_s, enc + c.encoded, reu + c.reused
        print(f"  {label} {w:>2}-day window: {idx.num_docs:>5} articles, {idx.num_units:>5} passages, "
              f"encoded {c.encoded:>5}, reused {c.reused:>5}, {w_s:7.2f} s wall, {c_s:7.2f} s CPU")
    print(f"  {label} total: encoded {enc}, reused {reu}, {wall:.2f} s wall, {cpu:.2f} s CPU; load {load()}")
    return wall, cpu, enc, reu


def colbert_spec(ws, tmp: Path, texts: list[str]):
    """A ColBERT spec over a random 4-layer x 256 encoder (dim 128), and colbert-ai's model for the baseline."""
    from colbert.infra import ColBERTConfig
    from colbert.modeling.checkpoint import Checkpoint

    from okgen.retrieval.colbert_retriever import _colbert
    from okgen.retrieval.specs import load_spec
    from okgen.testing.tiny_models import make_tiny_colbert

    _colbert()
    ckpt = make_tiny_colbert(tmp / "ckpt", texts, dim=128, hidden=256, layers=4, heads=4, vocab_size=8000,
                             doc_maxlen=300, lexical=False)
    path = tmp / "colbert-small.toml"
    path.write_text(f'retriever = "colbert"\n[units]\npassage_words = 180\n[params]\ncheckpoint = "{ckpt}"\n')
    spec = load_spec(path, ws)
    model = Checkpoint(str(ckpt), colbert_config=ColBERTConfig.load_from_checkpoint(str(ckpt)))
    return spec, model


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--news", type=Path, default=Path(__file__).resolve().parents[1].parent / "shared" / "data" / "news-dev")
    ap.add_argument("--per-day", type=int, default=0, help="records per day file (0: all)")
    ap.add_argument("--retriever", choices=("dpr", "colbert"), default="dpr",
                    help="colbert: a random 4-layer x 256 ColBERT encoder built here (no checkpoint can be downloaded)")
    ap.add_argument("--baseline-fraction", type=float, default=1.0,
                    help="the direct baseline encodes this seeded random fraction of the distinct passages, "
                         "its times scaled up (for a loaded machine; 1: all of them)")
    ap.add_argument("--baseline-once", action="store_true",
                    help="one direct run after the builds instead of two bracketing them")
    args = ap.parse_args()

    import torch

    from okgen.ingest.store import ArticleStore
    from okgen.retrieval.dense import DenseRetriever
    from okgen.retrieval.specs import load_spec
    from okgen.retrieval.windows import make_units, window_articles
    from okgen.settings import Workspace
    from okgen.testing.retrieval import snapshot_from

    print(f"bench_index_incremental: {platform.machine()}, {os.cpu_count()} CPUs, torch {torch.__version__} "
          f"({torch.get_num_threads()} threads), load average {load()}")
    with tempfile.TemporaryDirectory(prefix="okgen-bench-incr-") as tmp:
        tmp = Path(tmp)
        ws = Workspace(tmp / "ws")
        ws.home.mkdir()
        import_days(ws, args.news, tmp, args.per_day)
        with ArticleStore.for_workspace(ws) as store:
            arts = store.articles_between(DAYS[0] - dt.timedelta(days=1), DAYS[-1])
        snap4 = snapshot_from(ws, [a for a in arts if a.date <= DAYS[3]], date=DAYS[3], windows=WINDOWS)
        snap5 = snapshot_from(ws, arts, date=DAYS[4], windows=WINDOWS)

        if args.retriever == "dpr":
            spec = load_spec("dpr", ws)
            retr = DenseRetriever(spec.params)
            model = retr._st()  # loaded once, outside every timing
            retr.encode(["warm-up passage"] * 8, queries=False)
        else:
            spec, model = colbert_spec(ws, tmp, [a.title + " " + a.text for a in arts])
        distinct = list(dict.fromkeys(u.text for w in WINDOWS
                                      for u in make_units(window_articles(snap4, w), spec.passage_words)))
        bs = spec.params["batch_size" if args.retriever == "dpr" else "index_bsize"]

        rng = random.Random(7)
        sample = distinct if args.baseline_fraction >= 1 else rng.sample(distinct, max(1, round(len(distinct) * args.baseline_fraction)))
        scale = len(distinct) / len(sample)  # 1 unless the baseline encodes a sample (then extrapolated)

        def direct():
            if args.retriever == "colbert":
                with torch.inference_mode():
                    model.docFromText(sample, bsize=bs, keep_dims="flatten", showprogress=False)
            else:
                model.encode(sample, batch_size=bs, show_progress_bar=False, convert_to_numpy=True, normalize_embeddings=True)

        what = (f"{len(distinct)} distinct passages of day 4's windows encoded once" if scale == 1 else
                f"a seeded sample of {len(sample)} of the {len(distinct)} distinct passages of day 4's windows, times x {scale:.2f}")
        runs = []
        if not args.baseline_once:
            runs.append(timed(direct))
            print(f"direct: {what}, {runs[-1][0] * scale:.2f} s wall, {runs[-1][1] * scale:.2f} s CPU; load {load()}")
        print("cold (day 4, empty store):")
        cold, cold_cpu, cold_enc, _ = build(snap4, ws, "cold", spec)
        print("warm (day 5, days 1-4 stored):")
        warm, warm_cpu, warm_enc, warm_reu = build(snap5, ws, "warm", spec)
        new5 = len({u.text for u in make_units(window_articles(snap5, 1), spec.passage_words)} - set(distinct))
        assert cold_enc == len(distinct), (cold_enc, len(distinct))
        assert warm_enc == new5, (warm_enc, new5)
        r1, r1c = warm / cold, warm_cpu / cold_cpu
        print(f"warm / cold   = {warm:.2f} / {cold:.2f} s wall = {r1:.3f}x (target <= 0.5x: {'PASS' if r1 <= 0.5 else 'FAIL'}); "
              f"CPU {warm_cpu:.2f} / {cold_cpu:.2f} s = {r1c:.3f}x", flush=True)
        print(f"counts: cold encoded {cold_enc}; warm encoded {warm_enc} (day 5's new passages: {new5}), reused {warm_reu}")
        runs.append(timed(direct))
        print(f"direct {'again' if len(runs) > 1 else '(after the builds)'}: {what}, {runs[-1][0] * scale:.2f} s wall, "
              f"{runs[-1][1] * scale:.2f} s CPU; load {load()}")
        # The machine may be shared: the baseline is the mean of the runs (two bracket the builds by default).
        base = scale * sum(r[0] for r in runs) / len(runs)
        base_cpu = scale * sum(r[1] for r in runs) / len(runs)
        r2, r2c = cold / base, cold_cpu / base_cpu
        print(f"cold / direct = {cold:.2f} / {base:.2f} s wall = {r2:.3f}x (target <= 1.1x: {'PASS' if r2 <= 1.1 else 'FAIL'}); "
              f"CPU {cold_cpu:.2f} / {base_cpu:.2f} s = {r2c:.3f}x")
        print(f"load average at the end: {load()} (1, 5, 15 min; a shared machine slows wall times)")

if __name__ == "__main__":
    main()
