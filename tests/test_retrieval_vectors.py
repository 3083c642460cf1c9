"""The encoding store: reuse across windows and processes, encoder identity, kills, gc."""

from __future__ import annotations

import datetime as dt
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from okgen.hashing import sha256_text
from okgen.retrieval.index import open_index
from okgen.retrieval.vectors import VectorStore, encode_with_store, encoder_key, store_path
from okgen.settings import Workspace
from okgen.testing.retrieval import article, snapshot_from

os.environ.setdefault("HF_HUB_OFFLINE", "1")
D = dt.date(2026, 11, 21)
ROOT = Path(__file__).resolve().parents[1]


def _articles(n: int, days: int = 3):
    words = ["harbour", "council", "ferry", "drought", "coffee", "museum", "volcano", "ash", "runner", "record", "bank", "rate", "bees"]
    return [article(f"Story {i} about {words[i % len(words)]}",
                    " ".join(words[(i + j) % len(words)] for j in range(40 + i)), D - dt.timedelta(days=i % days))
            for i in range(n)]


def _fake_encoder(calls: list[int]):
    def encode(texts):
        calls.append(len(texts))
        return np.array([[len(t), t.count("a"), 1.0] for t in texts], dtype=np.float32)
    return encode


def test_store_reuses_only_the_same_encoder_identity(tmp_path):
    texts = ["alpha", "beta", "gamma", "alpha"]
    calls: list[int] = []
    ident = {"model": "m", "max_seq_length": 256, "normalize": True}
    with VectorStore(tmp_path / "v.sqlite") as store:
        vecs, counts = encode_with_store(store, ident, texts, _fake_encoder(calls), batch_size=2, used_on=D)
        assert (counts.encoded, counts.reused) == (3, 0) and sum(calls) == 3
        assert vecs.shape == (4, 3) and np.array_equal(vecs[0], vecs[3])
        again, counts = encode_with_store(store, ident, texts[:3] + ["delta"], _fake_encoder(calls), batch_size=2, used_on=D)
        assert (counts.encoded, counts.reused) == (1, 3) and sum(calls) == 4
        assert np.array_equal(again[:3], vecs[:3])
        # Any other setting is another encoder: nothing is reused.
        for other in ({**ident, "max_seq_length": 128}, {**ident, "normalize": False}, {**ident, "model": "m2"}):
            assert encoder_key(other) != encoder_key(ident)
            _, counts = encode_with_store(store, other, texts, _fake_encoder(calls), batch_size=8, used_on=D)
            assert (counts.encoded, counts.reused) == (3, 0)


def test_another_dense_setting_or_model_never_reuses_vectors(tmp_path):
    ws = Workspace(tmp_path)
    snap = snapshot_from(ws, _articles(6), date=D)
    base = open_index(snap, "dpr", 1, ws)
    (ws.home / "retrievers").mkdir()
    spec = (ROOT / "okgen" / "data" / "retrievers" / "dpr.toml").read_text()
    (ws.home / "retrievers" / "dpr-short.toml").write_text(spec.replace("max_seq_length = 256", "max_seq_length = 64"))
    (ws.home / "retrievers" / "dpr-prefix.toml").write_text(spec.replace('doc_prefix = ""', 'doc_prefix = "passage: "'))
    # batch size and device are speed settings: same spec hash, and the vectors are reused
    (ws.home / "retrievers" / "dpr-batch.toml").write_text(spec.replace("batch_size = 64", "batch_size = 3"))
    assert base.encode_counts.encoded == base.num_units
    for name in ("dpr-short", "dpr-prefix"):
        idx = open_index(snap, name, 1, ws)
        assert (idx.encode_counts.encoded, idx.encode_counts.reused) == (idx.num_units, 0), name
    idx = open_index(snap, "dpr-batch", 1, ws, rebuild=True)
    assert (idx.encode_counts.encoded, idx.encode_counts.reused) == (0, idx.num_units)
    with VectorStore.for_workspace(ws) as store:
        keys = [r[0] for r in store.db.execute("SELECT key FROM encoders")]
    assert len(keys) == 3


def test_rebuild_in_a_new_process_encodes_nothing_and_queries_are_stored(tmp_path):
    ws = Workspace(tmp_path)
    snap = snapshot_from(ws, _articles(8), date=D)
    first = open_index(snap, "dpr", 1, ws)
    first.search(["harbour ferry", "coffee drought"], 2)
    assert (first.query_counts.encoded, first.query_counts.reused) == (2, 0)
    code = textwrap.dedent(f"""
        from okgen.retrieval.index import open_index
        from okgen.settings import Workspace
        from okgen.snapshot.store import resolve
        ws = Workspace({str(tmp_path)!r})
        snap = resolve({snap.manifest.content_hash!r}, ws)
        idx = open_index(snap, "dpr", 1, ws, rebuild=True)
        idx.search(["harbour ferry", "volcano ash"], 2)
        c, q = idx.encode_counts, idx.query_counts
        print(c.encoded, c.reused, q.encoded, q.reused)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, check=True).stdout.split()
    assert out == ["0", str(first.num_units), "1", "1"]


KILLED = """
import sys, time
from pathlib import Path
import numpy as np
from okgen.retrieval.dense import DenseRetriever
from okgen.retrieval.vectors import VectorStore, encode_with_store
import datetime as dt
texts = [f"passage {i}: " + "word " * (i % 17) for i in range(int(sys.argv[2]))]
r = DenseRetriever(DenseRetriever.resolve_params({"batch_size": 4}))
batches = []
def encode(batch):
    batches.append(len(batch))
    if len(batches) == 4:  # mid-encoding: three batches committed, the fourth never will be
        Path(sys.argv[3]).write_text("ready")
        time.sleep(600)
    return r.encode(batch, queries=False)
with VectorStore(sys.argv[1]) as store:
    encode_with_store(store, r.identity(queries=False), texts, encode, batch_size=4, used_on=dt.date(2026, 11, 21))
"""


def test_a_kill_mid_encoding_leaves_whole_vectors_and_a_rerun_finishes(tmp_path):
    from okgen.retrieval.dense import DenseRetriever

    db, marker, n = tmp_path / "v.sqlite", tmp_path / "ready", 30
    proc = subprocess.Popen([sys.executable, "-c", KILLED, str(db), str(n), str(marker)],
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 240
        while not marker.exists():
            assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
            assert time.monotonic() < deadline, "the encoder never reached its fourth batch"
            time.sleep(0.1)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    texts = [f"passage {i}: " + "word " * (i % 17) for i in range(n)]
    r = DenseRetriever(DenseRetriever.resolve_params({"batch_size": 4}))
    with sqlite3.connect(db) as con:
        rows = con.execute("SELECT vec FROM vectors").fetchall()
    assert len(rows) == 12  # three committed batches of four, nothing of the fourth
    assert all(len(blob) == 384 * 4 for (blob,) in rows)
    with VectorStore(db) as store:
        vecs, counts = encode_with_store(store, r.identity(queries=False), texts, lambda b: r.encode(b, queries=False),
                                         batch_size=4, used_on=D)
        assert (counts.encoded, counts.reused) == (n - 12, 12)
        assert store.count() == n
    assert np.allclose(vecs, r.encode(texts, queries=False), atol=1e-5)


def test_gc_drops_vectors_no_kept_window_uses(tmp_path):
    from okgen.daily.gc import collect_garbage

    ws = Workspace(tmp_path)
    calls: list[int] = []
    ident = {"model": "m"}
    with VectorStore.for_workspace(ws) as store:
        encode_with_store(store, ident, ["old", "shared"], _fake_encoder(calls), batch_size=8, used_on=dt.date(2026, 10, 1))
        encode_with_store(store, ident, ["shared", "new"], _fake_encoder(calls), batch_size=8, used_on=dt.date(2026, 11, 20))
    dry = collect_garbage(ws, 30, today=D, dry_run=True)
    assert dry.vectors == 1 and dry.bytes_freed >= 12
    rep = collect_garbage(ws, 30, today=D)
    assert rep.vectors == 1
    with VectorStore(store_path(ws)) as store:
        got = store.get_many(encoder_key(ident), [sha256_text(t) for t in ("old", "shared", "new")])
    assert len(got) == 2


@pytest.mark.parametrize("bad", [b"", b"\x00" * 5])
def test_a_torn_row_is_never_served(tmp_path, bad):
    calls: list[int] = []
    ident = {"model": "m"}
    with VectorStore(tmp_path / "v.sqlite") as store:
        encode_with_store(store, ident, ["a", "b"], _fake_encoder(calls), batch_size=8, used_on=D)
        store.db.execute("UPDATE vectors SET vec = ? WHERE text_sha256 = ?", (bad, sha256_text("a")))
        _, counts = encode_with_store(store, ident, ["a", "b"], _fake_encoder(calls), batch_size=8, used_on=D)
    assert (counts.encoded, counts.reused) == (1, 1)


def test_a_day_reingested_with_changed_text_encodes_only_the_changed_passage(tmp_path):
    ws = Workspace(tmp_path)
    arts = _articles(9)
    before = snapshot_from(ws, arts, date=D)
    old = open_index(before, "dpr", 5, ws)
    changed = article(arts[0].title, "The harbour council voted to rebuild the ferry terminal after the ash storm.", arts[0].date)
    assert changed.id == arts[0].id and changed.text != arts[0].text
    after = snapshot_from(ws, [changed, *arts[1:]], date=D)
    idx = open_index(after, "dpr", 5, ws)
    assert idx.folder != old.folder  # another corpus: another index, the old one untouched
    assert (idx.encode_counts.encoded, idx.encode_counts.reused) == (1, idx.num_units - 1)
    pos = next(i for i, u in enumerate(idx._units) if u.article_id == changed.id)
    assert old._units[pos].article_id == changed.id
    vec = idx.retriever.index.reconstruct(pos)
    assert np.allclose(vec, idx.retriever.encode([idx._units[pos].text], queries=False)[0], atol=1e-5)
    assert not np.allclose(vec, old.retriever.index.reconstruct(pos), atol=1e-2)  # never yesterday's vector
    assert idx.search(["rebuild the ferry terminal"], 1)[0][0].doc_id == changed.id
    again = open_index(before, "dpr", 5, ws)  # the earlier snapshot's index still opens as it was
    assert again.folder == old.folder
    assert np.array_equal(again.retriever.index.reconstruct(pos), old.retriever.index.reconstruct(pos))


def test_a_sliding_window_encodes_the_new_day_only_and_gc_keeps_every_vector_a_kept_window_needs(tmp_path):
    from okgen.daily.gc import collect_garbage

    ws = Workspace(tmp_path)
    days = [D - dt.timedelta(days=3 - i) for i in range(4)]
    words = ["harbour", "council", "ferry", "drought", "coffee", "museum", "volcano", "runner", "bank", "bees"]
    arts = [article(f"Day {i} story {j}", " ".join(words[(i * 3 + j + k) % len(words)] for k in range(30 + j)), day)
            for i, day in enumerate(days) for j in range(3)]
    yesterday = snapshot_from(ws, [a for a in arts if a.date < D], date=days[2], windows=(1, 3))
    today = snapshot_from(ws, [a for a in arts if a.date > days[0]], date=D, windows=(1, 3))
    y3 = open_index(yesterday, "dpr", 3, ws)
    assert (y3.encode_counts.encoded, y3.num_units) == (9, 9)
    t3 = open_index(today, "dpr", 3, ws)  # slid by a day: day D-3 left, day D came in
    assert (t3.encode_counts.encoded, t3.encode_counts.reused) == (3, 6)
    # Reused and new vectors sit at their units' positions (the index is not shuffled by reuse).
    fresh = t3.retriever.encode([u.text for u in t3._units], queries=False)
    assert np.allclose(t3.retriever.index.reconstruct_n(0, t3.num_units), fresh, atol=1e-5)
    assert [u.date for u in t3._units] == sorted(u.date for u in t3._units) and t3._units[0].date == days[1]
    # gc keeping today's windows only: day D-3's vectors (used by yesterday's window alone) go, the rest stay.
    rep = collect_garbage(ws, 0, today=D)
    assert rep.vectors == 3
    again = open_index(today, "dpr", 3, ws, rebuild=True)
    assert (again.encode_counts.encoded, again.encode_counts.reused) == (0, 9)
    one = open_index(today, "dpr", 1, ws)
    assert (one.encode_counts.encoded, one.encode_counts.reused) == (0, 3)


def test_a_model_folder_with_other_weights_is_another_encoder(tmp_path):
    from okgen.retrieval.dense import DenseRetriever
    from okgen.retrieval.vectors import model_fingerprint

    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    (folder / "model.safetensors").write_bytes(b"\x00" * 64)
    params = DenseRetriever.resolve_params({"model": str(folder)})
    first = encoder_key(DenseRetriever(params).identity(queries=False))
    (folder / "model.safetensors").write_bytes(b"\x01" * 64)  # fine-tuned in place, same path
    model_fingerprint.cache_clear()
    assert encoder_key(DenseRetriever(params).identity(queries=False)) != first
