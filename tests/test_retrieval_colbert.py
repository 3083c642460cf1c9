"""The colbert retriever with a tiny checkpoint built here (random BERT, locally trained WordPiece).

The first run compiles colbert-ai's C++ extensions (about 2 minutes) into
``$TORCH_EXTENSIONS_DIR`` (default ``~/.cache/okgen/torch_extensions``); later runs reuse them.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from okgen import progress
from okgen.errors import MissingExtraError
from okgen.hashing import sha256_text
from okgen.retrieval.base import ModelLoadError
from okgen.retrieval.index import WindowIndex, open_index
from okgen.settings import Workspace
from okgen.testing.retrieval import article, snapshot_from, synthetic_snapshot

os.environ.setdefault("HF_HUB_OFFLINE", "1")
D = dt.date(2026, 11, 21)
REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from okgen.testing.tiny_models import make_tiny_colbert

    root = tmp_path_factory.mktemp("colbert")
    # Run from a git checkout whose HEAD is detached, as CI systems check out: colbert-ai records
    # the working directory's branch when it saves a config, which raised TypeError there.
    repo = root / "checkout"
    repo.mkdir()
    for cmd in (["init", "-q"], ["-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-q",
                                 "--allow-empty", "-m", "x"], ["checkout", "-q", "--detach"]):
        subprocess.run(["git", *cmd], cwd=repo, check=True)
    here = os.getcwd()
    os.chdir(repo)  # for the whole module: the checkpoint, and every index build of the tests
    ws = Workspace(repo / "ws")
    snap, articles, facts = synthetic_snapshot(ws, 60, D, days=10, seed=5)
    ckpt = make_tiny_colbert(root / "ckpt", [a.title + " " + a.text for a in articles], dim=32, hidden=64)
    spec = root / "tiny-colbert.toml"
    spec.write_text(f'retriever = "colbert"\n[units]\npassage_words = 60\n[params]\ncheckpoint = "{ckpt}"\n'
                    'nbits = 2\ndoc_maxlen = 120\nquery_maxlen = 32\nindex_bsize = 16\n')
    yield ws, snap, articles, spec
    os.chdir(here)


@pytest.mark.slow
def test_colbert_builds_saves_reloads_and_searches_on_cpu(tiny):
    ws, snap, articles, spec = tiny
    idx = open_index(snap, "colbert", 10, ws, spec=spec)
    assert idx.name == "tiny-colbert" and idx.kind == "colbert" and idx.num_docs == 60 and idx.num_units > 60
    files = {p.name for p in (idx.folder / "plaid").iterdir()}
    assert {"metadata.json", "centroids.pt", "ivf.pid.pt", "0.codes.pt", "0.residuals.pt"} <= files
    assert "sample.0.pt" not in files and not (idx.folder / ".run").exists()
    assert idx.manifest.versions["colbert-ai"] and idx.manifest.info["partitions"] >= 1
    # Queries copied from passages find their own passage (even a random encoder matches identical tokens).
    units = idx._units[::7][:12]
    queries = [" ".join(u.text.split("\n", 1)[1].split()[:25]) for u in units]
    got = idx.search_units(queries, 3)
    assert sum(h[0].unit_id == u.id for h, u in zip(got, units) if h) >= 0.75 * len(units)
    art_hits = idx.search(queries, 5)
    assert all(len(h) == 5 and len({x.doc_id for x in h}) == 5 for h in art_hits)
    # Reload from disk (a fresh Searcher) and get the same rankings.
    again = WindowIndex.load(idx.folder, snapshot=snap)
    assert [[x.unit_id for x in h] for h in again.search_units(queries, 3)] == [[x.unit_id for x in h] for h in got]
    assert open_index(snap, "colbert", 10, ws, spec=spec).manifest.built_at == idx.manifest.built_at


@pytest.mark.slow
def test_colbert_reloads_in_a_fresh_process_with_clean_stdout(tiny):
    ws, snap, articles, spec = tiny
    idx = open_index(snap, "colbert", 10, ws, spec=spec)
    code = (
        "import json, sys\n"
        "from okgen.retrieval.index import WindowIndex\n"
        "from okgen.snapshot.store import Snapshot\n"
        f"idx = WindowIndex.load({str(idx.folder)!r}, snapshot=Snapshot({str(snap.path)!r}))\n"
        "print(json.dumps([h.doc_id for h in idx.search(sys.argv[1:], 3)[0]]))\n"
    )
    q = " ".join(idx._units[5].text.split()[:20])
    out = subprocess.run([sys.executable, "-c", code, q], capture_output=True, text=True, cwd=REPO, timeout=600,
                         env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == str([h.doc_id for h in idx.search([q], 3)[0]]).replace("'", '"')  # only our JSON


@pytest.mark.slow
def test_colbert_temporal_filter_and_small_windows(tiny):
    ws, snap, articles, spec = tiny
    idx = open_index(snap, "colbert", 10, ws, spec=spec)
    by_id = {a.id: a for a in articles}
    qs = [q.question for q in snap.questions[:6]]
    for offset in (0, 3, 8):
        qd = D - dt.timedelta(days=offset)
        for hits in idx.search(qs, 10, query_dates=[qd] * len(qs)):
            assert hits and all(by_id[h.doc_id].date <= qd for h in hits)
    assert idx.search(qs[:1], 5, query_dates=[D - dt.timedelta(days=20)]) == [[]]
    # A one-article window (few embeddings, fewer documents than k) still builds and answers.
    one = snapshot_from(Workspace(ws.home / "one"), [article("Short", "A short note about ferries in Bergen.", D)], date=D)
    tiny_idx = open_index(one, "colbert", 1, ws, spec=spec)
    hits = tiny_idx.search(["ferries Bergen", "?!"], 10)
    assert [h.doc_id for h in hits[0]] == [one.corpus[0].id] and hits[1] == []


def test_default_checkpoint_offline_is_one_line(tiny, monkeypatch):
    ws, snap, *_ = tiny
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    import huggingface_hub.constants as c

    monkeypatch.setattr(c, "HF_HUB_OFFLINE", True)
    monkeypatch.setenv("HF_HOME", str(ws.home / "empty-hf-home"))  # nothing cached there
    monkeypatch.setattr(c, "HF_HUB_CACHE", str(ws.home / "empty-hf-home" / "hub"))
    with pytest.raises(ModelLoadError) as e:
        open_index(snap, "colbert", 1, ws)
    msg = str(e.value)
    assert msg.startswith("cannot load ColBERT checkpoint 'colbert-ir/colbertv2.0'") and "\n" not in msg
    assert "params.checkpoint" in msg


def test_missing_colbert_names_the_colbert_extra(tiny, monkeypatch):
    ws, snap, _, spec = tiny
    monkeypatch.setitem(sys.modules, "colbert", None)
    with pytest.raises(MissingExtraError) as e:
        open_index(snap, "colbert", 1, Workspace(ws.home / "other"), spec=spec)
    assert str(e.value) == 'colbert is needed for the colbert retriever but is not installed: pip install "okgen[colbert]"'


def test_small_block_codec_assigns_the_same_centroids():
    import torch
    from colbert.indexing.codecs.residual import ResidualCodec

    from okgen.retrieval.colbert_retriever import _classes

    small_cls = _classes()[1]
    torch.manual_seed(0)
    centroids = torch.nn.functional.normalize(torch.randn(4096, 32), dim=-1)
    embs = torch.randn(20000, 32)  # colbert-ai: one 2^29-float block; okgen: three 2^25-float blocks
    codecs = [cls.__new__(cls) for cls in (ResidualCodec, small_cls)]
    for c in codecs:
        c.centroids, c.use_gpu = centroids, False
    assert torch.equal(codecs[0].compress_into_codes(embs, "cpu"), codecs[1].compress_into_codes(embs, "cpu"))


@pytest.mark.slow
def test_colbert_token_embeddings_come_from_the_store_and_give_the_same_index(tiny, tmp_path, monkeypatch):
    import torch

    from okgen.retrieval import colbert_retriever

    _, snap, _, spec = tiny
    ws = Workspace(tmp_path / "fresh")
    tickers = []

    @contextlib.contextmanager
    def recorded(*a, **kw):
        with progress.ticker(*a, **kw) as t:
            tickers.append(t)
            yield t

    monkeypatch.setattr(colbert_retriever, "ticker", recorded)
    one = open_index(snap, "colbert", 1, ws, spec=spec)
    # colbert-ai's own passes (no steps to count) run under a ticker that names each phase
    assert tickers[0].desc == f"colbert: index {one.num_units} passages"
    assert [p.split(",")[0] for p in tickers[0].phases] == ["plan", "k-means", "residual codes", "IVF"]
    assert (one.encode_counts.encoded, one.encode_counts.reused) == (one.num_units, 0)
    five = open_index(snap, "colbert", 5, ws, spec=spec)
    assert (five.encode_counts.encoded, five.encode_counts.reused) == (five.num_units - one.num_units, one.num_units)
    cold = {p.name: torch.load(p) for p in (five.folder / "plaid").glob("*.pt")}
    again = open_index(snap, "colbert", 5, ws, spec=spec, rebuild=True)
    assert (again.encode_counts.encoded, again.encode_counts.reused) == (0, five.num_units)
    warm = {p.name: torch.load(p) for p in (again.folder / "plaid").glob("*.pt")}
    assert cold.keys() == warm.keys() and {"centroids.pt", "0.codes.pt", "0.residuals.pt"} <= set(cold)
    for name, t in cold.items():  # built from stored embeddings: the same index, file by file
        assert torch.equal(t[0] if isinstance(t, tuple) else t, warm[name][0] if isinstance(t, tuple) else warm[name]), name
    # Query matrices go through the store too: encoded once, then reused by another index object.
    q = [" ".join(snap.questions[i].question.split()) for i in (0, 1)]
    first = five.search(q, 3)
    assert (five.query_counts.encoded, five.query_counts.reused) == (2, 0)
    assert again.search(q, 3) == first
    assert (again.query_counts.encoded, again.query_counts.reused) == (0, 2)
    from okgen.retrieval.vectors import VectorStore, encoder_key

    with torch.inference_mode():
        direct = again.retriever.searcher.encode(q).float()
    with VectorStore.for_workspace(ws) as store:
        key = encoder_key(again.retriever.query_identity())
        stored = store.get_many(key, [sha256_text(t) for t in q])
        identities = [json.loads(i) for (i,) in store.db.execute("SELECT identity FROM encoders")]
    assert sorted(i.get("role", "passage") for i in identities) == ["passage", "query"]
    assert all(torch.equal(torch.from_numpy(stored[sha256_text(t)].copy()), direct[i]) for i, t in enumerate(q))


QUIET = """
import logging, os, sys
from okgen.retrieval.colbert_retriever import _quiet
logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(message)s")
with _quiet():
    print("python noise")
    os.write(1, b"c noise on 1\\n")
    os.write(2, b"c noise on 2\\n")
    logging.getLogger("okgen.progress").info("colbert: index 9 passages (k-means): elapsed 00:10")
logging.getLogger("okgen").info("after")
"""


def test_colbert_quiet_swallows_library_output_but_not_okgen_log_lines():
    got = subprocess.run([sys.executable, "-c", QUIET], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": str(REPO)}, check=True)
    assert got.stdout == ""
    assert got.stderr.splitlines() == ["colbert: index 9 passages (k-means): elapsed 00:10", "after"]
