"""WARC capture: okgen's writer vs warcio's ``WARCWriter``, side by side in one run.

Both write the same response records (gzip member per record, SHA-1 payload and block digests)
to a file; okgen's writer is fed the way the fetcher feeds it (``submit_response`` from the event
loop's side, written by its one background thread), warcio's is called the way a drop-in
replacement would be (in one background thread too). Prints records/s for each and the ratio
(warcio time / okgen time): okgen keeps its own writer only while the ratio is above 1.2.

    python bench/bench_warc_writer.py [--records 2000] [--kb 60] [--rounds 3]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import datetime as dt
import io
import os
import tempfile
import time
from pathlib import Path


def bodies(n: int, kb: int) -> list[bytes]:
    import random

    rng = random.Random(7)
    words = [f"word{i}" for i in range(5000)]
    out = []
    for _ in range(n):
        text = " ".join(rng.choice(words) for _ in range(kb * 1024 // 8))
        out.append(f"<html><body><article><p>{text}</p></article></body></html>".encode()[: kb * 1024])
    return out


def okgen_writer(path: Path, pages: list[bytes]) -> float:
    from okgen.ingest.warc import WarcWriter

    when = dt.datetime.now(dt.timezone.utc)
    t0 = time.perf_counter()
    with WarcWriter(path) as w:
        futs = [w.submit_response(f"https://news.example/{i}", 200, "OK",
                                  [("Content-Type", "text/html; charset=utf-8")], body, fetched_at=when, kind="article")
                for i, body in enumerate(pages)]
        for f in futs:
            f.result()
    return time.perf_counter() - t0


def warcio_writer(path: Path, pages: list[bytes]) -> float:
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    t0 = time.perf_counter()
    with open(path, "wb") as f:
        writer = WARCWriter(f, gzip=True, warc_version="WARC/1.1")
        pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)

        def write(i: int, body: bytes) -> None:
            headers = StatusAndHeaders("200 OK", [("Content-Type", "text/html; charset=utf-8"),
                                                  ("Content-Length", str(len(body)))], protocol="HTTP/1.1")
            rec = writer.create_warc_record(f"https://news.example/{i}", "response", payload=io.BytesIO(body),
                                            http_headers=headers)
            writer.write_record(rec)
            f.flush()

        futs = [pool.submit(write, i, body) for i, body in enumerate(pages)]
        for fut in futs:
            fut.result()
        pool.shutdown()
        os.fsync(f.fileno())
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, default=2000)
    ap.add_argument("--kb", type=int, default=60)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    pages = bodies(a.records, a.kb)
    best = {"okgen": float("inf"), "warcio": float("inf")}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(a.rounds):
            order = [("okgen", okgen_writer), ("warcio", warcio_writer)]
            for name, fn in (order if r % 2 == 0 else order[::-1]):
                p = Path(tmp) / f"{name}-{r}.warc.gz"
                best[name] = min(best[name], fn(p, pages))
                p.unlink()
    mb = a.records * a.kb / 1024
    for name, s in best.items():
        print(f"{name:7} best of {a.rounds}: {s:.2f} s  ({a.records / s:.0f} records/s, {mb / s:.0f} MB/s)")
    ratio = best["warcio"] / best["okgen"]
    print(f"ratio warcio / okgen: {ratio:.2f} (okgen keeps its own writer only above 1.2)")
    print(f"load average: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
