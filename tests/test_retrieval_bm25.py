"""The bm25 retriever and the index store: reference agreement, reuse, refusal, temporal filter."""

from __future__ import annotations

import datetime as dt
import json
import math
import shutil
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from okgen.errors import ConfigError, IntegrityError, NotFoundError
from okgen.retrieval.bm25 import Tokenizer
from okgen.retrieval.index import MANIFEST, WindowIndex, list_indexes, open_index
from okgen.retrieval.windows import EmptyWindowError
from okgen.settings import Workspace
from okgen.testing.retrieval import article, snapshot_from, synthetic_snapshot

D = dt.date(2026, 11, 21)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """A 300-article, 10-day synthetic snapshot and all its facts (1,200 fact questions)."""
    ws = Workspace(tmp_path_factory.mktemp("bm25ws"))
    snap, articles, facts = synthetic_snapshot(ws, 300, D, days=10, seed=3)
    return ws, snap, articles, facts


class ReferenceBM25:
    """Textbook BM25 (Lucene idf, no (k1 + 1) factor, as bm25s's "lucene" method), document by document."""

    def __init__(self, docs: list[list[str]], k1: float = 1.5, b: float = 0.75):
        self.k1, self.b = k1, b
        self.n = len(docs)
        self.avgdl = sum(len(d) for d in docs) / self.n
        self.df = Counter(t for d in docs for t in set(d))
        self.docs = [(Counter(d), len(d)) for d in docs]

    def scores(self, query: list[str]) -> list[float]:
        out = []
        for tf, dl in self.docs:
            s = 0.0
            for t in query:
                if tf[t]:
                    idf = math.log(1 + (self.n - self.df[t] + 0.5) / (self.df[t] + 0.5))
                    s += idf * tf[t] / (tf[t] + self.k1 * (1 - self.b + self.b * dl / self.avgdl))
            out.append(s)
        return out


def test_top1_agrees_with_reference_bm25(corpus):
    ws, snap, articles, facts = corpus
    idx = open_index(snap, "bm25", 10, ws)
    tok = Tokenizer("english", "en")
    units = idx._units
    ref_bm25 = ReferenceBM25(tok([u.text for u in units]))
    queries = [f.question for f in facts]
    hits = idx.search(queries, 1)
    agree = 0
    for q, h in zip(queries, hits):
        ref = ref_bm25.scores(tok.tokenize_one(q))
        best = max(ref)
        got = next(i for i, u in enumerate(units) if u.article_id == h[0].doc_id)
        agree += ref[got] >= best - 1e-4 * max(1.0, best)  # same article, or tied with it
    assert len(queries) == 1200
    assert agree / len(queries) >= 0.95, agree / len(queries)


def test_finds_gold_articles_and_passages_fold_to_articles(corpus):
    ws, snap, articles, facts = corpus
    qs = snap.questions
    for name in ("bm25", "bm25-passages"):
        idx = open_index(snap, name, 1, ws)
        hits = idx.search([q.question for q in qs], 5)
        found = sum(any(h.doc_id == q.article_id for h in hs) for hs, q in zip(hits, qs))
        assert found / len(qs) >= 0.9, (name, found / len(qs))
        for hs in hits:
            assert [h.rank for h in hs] == list(range(1, len(hs) + 1))
            assert len({h.doc_id for h in hs}) == len(hs)  # passages folded: one hit per article
            assert all(a.score >= b.score for a, b in zip(hs, hs[1:]))


def test_passage_index_chunks_long_articles(tmp_path):
    ws = Workspace(tmp_path)
    long_text = " ".join(["filler"] * 400 + ["zebra", "quantum", "marmalade"] + ["filler"] * 100)
    arts = [article("Long one", long_text, D), article("Other", "plain words about weather " * 30, D)]
    snap = snapshot_from(ws, arts, date=D)
    idx = open_index(snap, "bm25-passages", 1, ws)
    assert idx.num_docs == 2 and idx.num_units > 3
    units = idx.search_units(["zebra quantum marmalade"], 2)[0]
    assert units[0].unit_id.startswith(arts[0].id + "#") and "zebra quantum marmalade" in units[0].text
    assert units[0].text.startswith("Long one\n")
    assert idx.search(["zebra quantum marmalade"], 5)[0][0].doc_id == arts[0].id


def test_index_is_saved_reused_and_reloaded(corpus):
    ws, snap, *_ = corpus
    first = open_index(snap, "bm25", 5, ws)
    manifest = json.loads((first.folder / MANIFEST).read_text())
    assert manifest["kind"] == "okgen-index" and manifest["window"] == 5 and manifest["spec_hash"] == first.spec_hash
    assert manifest["content_hash"] == snap.manifest.content_hash and manifest["num_articles"] == first.num_docs
    assert manifest["versions"]["bm25s"] and manifest["corpus_hash"] and manifest["files"]
    assert first.folder.parent.name == snap.manifest.content_hash[:12]
    again = open_index(snap, "bm25", 5, ws)
    assert again.folder == first.folder and again.manifest.built_at == first.manifest.built_at  # reused, not rebuilt
    q = [snap.questions[0].question]
    assert again.search(q, 5) == first.search(q, 5)
    loaded = WindowIndex.load(first.folder)  # without the snapshot: article hits still work
    assert loaded.search(q, 5) == first.search(q, 5)
    with pytest.raises(Exception, match="opened without its snapshot"):
        loaded.search_units(q, 1)
    rebuilt = open_index(snap, "bm25", 5, ws, rebuild=True)
    assert rebuilt.manifest.built_at >= first.manifest.built_at and rebuilt.search(q, 5) == first.search(q, 5)
    assert any(m is not None and m.window == 5 for _, m, _ in list_indexes(ws))


def test_indexes_are_listed_with_windows_in_numeric_order(tmp_path):
    ws = Workspace(tmp_path)
    for name in ("bm25-w10-abc", "bm25-w5-abc", "bm25-w1-abc", "dense-w10-abc"):
        (ws.index_dir / "0123456789ab" / name).mkdir(parents=True)
    names = [p.name for p, manifest, error in list_indexes(ws)]
    assert names == ["bm25-w1-abc", "bm25-w5-abc", "bm25-w10-abc", "dense-w10-abc"]


def test_no_build_and_refusals(tmp_path, corpus):
    _, snap_a, *_ = corpus
    ws = Workspace(tmp_path)
    with pytest.raises(NotFoundError, match="okgen index build"):
        open_index(snap_a, "bm25", 1, ws, build=False)
    idx_a = open_index(snap_a, "bm25", 1, ws)
    snap_b, *_ = synthetic_snapshot(Workspace(tmp_path / "b"), 50, D, days=10, seed=99)
    idx_b_folder = ws.index_dir / snap_b.manifest.content_hash[:12] / idx_a.folder.name
    shutil.copytree(idx_a.folder, idx_b_folder)  # a folder built for another corpus, in B's place
    with pytest.raises(IntegrityError, match="built for another corpus"):
        open_index(snap_b, "bm25", 1, ws)
    assert open_index(snap_b, "bm25", 1, ws, rebuild=True).num_docs == len(snap_b.window(1))
    # A changed file is caught too.
    data = next(p for p in idx_a.folder.rglob("*.npy"))
    data.write_bytes(data.read_bytes()[:-4] + b"\0\0\0\1")
    with pytest.raises(IntegrityError, match="changed since the build"):
        open_index(snap_a, "bm25", 1, ws)
    with pytest.raises(ConfigError, match="is a bm25 spec, not 'dpr'"):
        open_index(snap_a, "dpr", 1, ws, spec="bm25")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_temporal_filter_never_returns_a_later_article(corpus, data):
    ws, snap, articles, facts = corpus
    by_id = {a.id: a for a in articles}
    name = data.draw(st.sampled_from(["bm25", "bm25-passages"]))
    idx = open_index(snap, name, 10, ws)
    picked = data.draw(st.lists(st.sampled_from(facts), min_size=1, max_size=8))
    offsets = data.draw(st.lists(st.integers(-2, 12), min_size=len(picked), max_size=len(picked)))
    dates = [D - dt.timedelta(days=o) for o in offsets]
    k = data.draw(st.integers(1, 40))
    for hits, qd in zip(idx.search([f.question for f in picked], k, query_dates=dates), dates):
        assert all(by_id[h.doc_id].date <= qd for h in hits)
    for hits, qd in zip(idx.search_units([f.question for f in picked], k, query_dates=dates), dates):
        assert all(by_id[h.article_id].date <= qd for h in hits)


def test_temporal_filter_only_removes_later_articles(corpus):
    ws, snap, articles, facts = corpus
    idx = open_index(snap, "bm25", 10, ws)
    by_id = {a.id: a for a in articles}
    cut = D - dt.timedelta(days=6)
    old = [f for f in facts if by_id[f.article_id].date == cut][:40]
    queries = [f.question for f in old]
    free = idx.search(queries, idx.num_docs)
    filtered = idx.search(queries, idx.num_docs, query_dates=[cut] * len(old))
    for f, a, b in zip(old, free, filtered):
        # Same scores, later articles removed: the gold article can only move up.
        assert [h.doc_id for h in b] == [h.doc_id for h in a if by_id[h.doc_id].date <= cut]
        rank = {h.doc_id: h.rank for h in b}
        assert rank[f.article_id] <= next(h.rank for h in a if h.doc_id == f.article_id)


def test_bad_queries_and_small_windows(corpus):
    ws, snap, *_ = corpus
    idx = open_index(snap, "bm25", 1, ws)
    n = idx.num_docs
    good = snap.questions[0].question
    res = idx.search(["", "   ", "?!", "the of and to", "xylophonic zzzqqq", good], 3)
    assert res[:5] == [[], [], [], [], []]  # nothing indexable: no hits, no arbitrary ranking
    assert len(res[5]) == 3
    many = idx.search([good], n + 50)[0]
    assert 0 < len(many) <= n  # fewer documents than k: as many as match, no error
    assert idx.search([], 3) == []
    with pytest.raises(ConfigError, match="k must be"):
        idx.search([good], 0)
    with pytest.raises(ConfigError, match="list of strings"):
        idx.search(good, 3)
    with pytest.raises(ConfigError, match="query dates for"):
        idx.search([good], 3, query_dates=[D, D])
    assert idx.search([good], 3, query_dates=[D - dt.timedelta(days=30)]) == [[]]


def test_tiny_window_and_empty_window(tmp_path):
    ws = Workspace(tmp_path)
    arts = [article("Solar farm opens", "A solar farm opened near Accra on Monday.", D),
            article("Old news", "Nothing to see.", D - dt.timedelta(days=7))]
    snap = snapshot_from(ws, arts, date=D)
    idx = open_index(snap, "bm25", 1, ws)
    hits = idx.search(["solar farm Accra"], 10)[0]
    assert [h.doc_id for h in hits] == [arts[0].id]
    gap = snapshot_from(Workspace(tmp_path / "gap"), [arts[1]], date=D)
    with pytest.raises(EmptyWindowError, match="holds no article"):
        open_index(gap, "bm25", 1, ws)


def test_non_english_text_indexes_and_is_found(tmp_path):
    ws = Workspace(tmp_path)
    arts = [
        article("Bundestag beschließt Gesetz", "Der Bundestag hat am Donnerstag das Heizungsgesetz beschlossen.", D, language="de"),
        article("东京奥运会", "东京奥运会 的 开幕式 在 周五 举行", D, language="zh"),
        article("Москва", "В Москве открылась новая станция метро Солнцево.", D, language="ru"),
        article("مهرجان", "افتتح مهرجان الفيلم في القاهرة يوم الخميس", D, language="ar"),
        article("Emoji 🎉", "🎉🎉 party 🎉 in Lisbon tonight", D),
    ]
    snap = snapshot_from(ws, arts, date=D)
    idx = open_index(snap, "bm25", 1, ws)
    assert idx.manifest.languages == {"ar": 1, "de": 1, "en": 1, "ru": 1, "zh": 1}
    queries = ["Heizungsgesetz Bundestag", "开幕式", "станция метро", "مهرجان الفيلم", "party Lisbon"]
    for q, a, hits in zip(queries, arts, idx.search(queries, 1)):
        assert hits and hits[0].doc_id == a.id, q


def test_tokenizer_options():
    t = Tokenizer("english", "en")
    assert t.tokenize_one("The runners are running quickly!") == ["runner", "run", "quick"]
    assert Tokenizer("none", "none").tokenize_one("The cats") == ["the", "cats"]
    with pytest.raises(ConfigError, match="unknown stopword list"):
        Tokenizer("english", "elvish")
