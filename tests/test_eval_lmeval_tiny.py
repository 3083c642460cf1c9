"""okgen and lm-evaluation-harness on tiny models built here: same answers whatever the tokenizer
does with BOS, and with a chat template (lm-eval's --apply_chat_template)."""

from __future__ import annotations

import json

import pytest

from okgen.eval.export import export_snapshot, task_name
from okgen.eval.rundir import read_predictions
from okgen.eval.runner import EvalOptions, plan_runs, run_eval
from okgen.testing.eval_data import make_test_snapshot, tiny_model_for

pytest.importorskip("lm_eval")
pytest.importorskip("transformers")
pytestmark = pytest.mark.slow



@pytest.fixture(scope="module")
def env(tmp_path_factory):
    from okgen.settings import Workspace

    ws = Workspace.from_env(tmp_path_factory.mktemp("ws"))
    snap = make_test_snapshot(ws, n_articles=8, days=1, per_article=2)
    out = tmp_path_factory.mktemp("export")
    export_snapshot(snap, "lm-eval", out)
    return ws, snap, out


@pytest.fixture(scope="module", params=["bos", "no-bos", "chat"])
def model(request, tmp_path_factory, env):
    _, snap, _ = env
    kind = request.param
    path = tiny_model_for(snap, tmp_path_factory.mktemp(kind), add_bos=kind == "bos", chat_template=kind == "chat")
    return kind, path


@pytest.mark.parametrize("scoring", ["loglik", "loglik-full"])
def test_okgen_and_lm_eval_agree_on_tiny_models(env, model, scoring, tmp_path):
    from okgen.testing.lmeval import agreement, run_lm_eval

    ws, snap, export = env
    kind, path = model
    out = run_eval(snap.name, f"hf/{path},dtype=float32", plan_runs(["none"]), EvalOptions(scoring=scoring),
                   workspace=ws, out=tmp_path / "run")[0]
    ours = {p.question_id: p.pred_index for p in read_predictions(out.path / "predictions.jsonl").values()}
    task = task_name(snap) + ("_full" if scoring == "loglik-full" else "")
    lm = run_lm_eval(export, task, path, chat=kind == "chat")
    assert len(lm.predictions) == len(snap.questions) >= 12
    assert agreement(ours, lm.predictions) == 1.0
    # Not only the same argmax: the same log-likelihoods (a random tiny model's are close together).
    preds = read_predictions(out.path / "predictions.jsonl")
    for qid, lls in lm.scores.items():
        assert list(preds[qid].scores) == pytest.approx(lls, abs=2e-3)
    assert out.record.accuracy == pytest.approx(lm.accuracy)
    run = json.loads((out.path / "run.json").read_text())
    conv = run["backend"]["conventions"]
    # What the run did with BOS and the chat template is recorded in run.json.
    assert conv["chat_template"] is (kind == "chat")
    assert conv["bos_added_to_plain_prompts"] is (kind == "bos")
    assert conv["add_bos"] == "tokenizer default"
    assert conv["target_delimiter"] == ("" if kind == "chat" else " ")
    assert out.record.signature.count("+chat2") == (kind == "chat")


def test_okgen_and_lm_eval_agree_with_retrieved_passages(env, model, tmp_path):
    """The retrieval setting: lm-eval scores okgen's retrieval export (the passages okgen eval
    retrieved) and answers as okgen does."""
    from okgen.testing.lmeval import agreement, run_lm_eval

    ws, snap, _ = env
    kind, path = model
    export = tmp_path / "export"
    export_snapshot(snap, "lm-eval", export, "retrieval", retriever="bm25", window=1, k=2, workspace=ws)
    out = run_eval(snap.name, f"hf/{path},dtype=float32", plan_runs(["retrieval"], ["bm25"], [1], [2]),
                   EvalOptions(), workspace=ws, out=tmp_path / "run")[0]
    preds = read_predictions(out.path / "predictions.jsonl")
    assert all(len(p.retrieved) == 2 for p in preds.values())
    lm = run_lm_eval(export, task_name(snap, "retrieval", "bm25", 1, 2), path, chat=kind == "chat")
    assert len(lm.predictions) == len(snap.questions)
    assert agreement({q: p.pred_index for q, p in preds.items()}, lm.predictions) == 1.0
    for qid, lls in lm.scores.items():
        assert list(preds[qid].scores) == pytest.approx(lls, abs=2e-3)
