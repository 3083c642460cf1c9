"""The retrieval setting end to end: the real bm25 retriever over news windows, a tiny hf model."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
pytest.importorskip("torch")

from okgen.eval.runner import EvalOptions, plan_runs, read_predictions, run_eval  # noqa: E402
from okgen.retrieval.index import open_index  # noqa: E402
from okgen.settings import Workspace  # noqa: E402
from okgen.signature import EvalSignature  # noqa: E402
from okgen.testing.eval_data import make_test_snapshot, tiny_model_for  # noqa: E402


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    ws = Workspace(tmp_path_factory.mktemp("ws"))
    snap = make_test_snapshot(ws)
    model = tiny_model_for(snap, ws.home / "tiny", max_positions=384)
    return ws, snap, f"hf/{model}"


@pytest.mark.parametrize("scoring", ["loglik", "generate"])
def test_all_three_settings_in_one_call(env, scoring, monkeypatch):
    ws, snap, model = env
    import okgen.models.registry as reg

    loads = []
    real = reg.load_backend
    monkeypatch.setattr(reg, "load_backend", lambda *a, **k: loads.append(1) or real(*a, **k))
    runs = plan_runs(["none", "oracle", "retrieval"], ["bm25"], [1, 4], [1, 3])
    opts = EvalOptions(scoring=scoring, max_tokens=6 if scoring == "generate" else None)
    outs = run_eval(snap.signature.format(), model, runs, opts, workspace=ws)
    assert len(loads) == 1 and len(outs) == 6
    idx = open_index(snap, "bm25", 4, ws)
    n = len(snap.questions)
    for o in outs:
        sig = EvalSignature.parse(o.record.signature)
        run = o.record.extra["run"]
        assert o.record.n == n and sig.setting == run["setting"] and sig.scoring == scoring
        if sig.setting != "retrieval":
            assert (sig.retriever, sig.retriever_hash, sig.ret_window, sig.k) == ("none", "none", None, None)
            continue
        assert (sig.retriever, sig.retriever_hash) == ("bm25", idx.spec_hash)
        assert (sig.ret_window, sig.k) == (run["window"], run["k"])
        preds = read_predictions(o.path / "predictions.jsonl")
        assert 0 < o.record.extra["gold_retrieved"] <= 1
        if (sig.ret_window, sig.k) == (4, 3):
            hits = idx.search_units([q.question for q in snap.questions], 3, query_dates=[q.date for q in snap.questions])
            for q, hs in zip(snap.questions, hits):
                p = preds[q.id]
                # passages in rank order (fewer when the truncation rule dropped the last ones)
                assert list(p.retrieved) == [h.article_id for h in hs][: len(p.retrieved)] and p.retrieved
                gold = next((h.rank for h in hs if h.article_id == q.article_id), None)
                assert p.gold_rank == gold and p.k == 3 and p.window == 4 and p.retriever == "bm25"
            assert o.record.truncated > 0  # three articles do not fit a 384-token model


def test_k1_prompt_holds_the_top_passage(env, tmp_path):
    ws, snap, model = env
    out = run_eval(snap.name, "random/uniform", plan_runs(["retrieval"], ["bm25"], [4], [1]), EvalOptions(limit=3),
                   workspace=ws, out=tmp_path / "r")[0]
    preds = read_predictions(out.path / "predictions.jsonl")
    assert all(len(p.retrieved) == 1 for p in preds.values())
    assert out.record.extra["gold_in_context"] == pytest.approx(
        sum(p.gold_rank == 1 for p in preds.values()) / 3)
