"""Prompts longer than the model: okgen cuts them as lm-evaluation-harness does (from the left).

Tiny models built here with a 64-token context hold none of the oracle prompts and few of the
no-context ones, so nearly every sequence is cut. okgen (default ``truncation=left``) and
lm-eval's ``HFLM`` must give the same answers and the same log-likelihoods, on a Llama whose
tokenizer adds BOS (the cut drops it, as lm-eval's does) and on a GPT-2 with learned absolute
positions (a sequence one token too long would index past its position table).
"""

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

WINDOW = 64


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    from okgen.settings import Workspace

    ws = Workspace.from_env(tmp_path_factory.mktemp("ws"))
    snap = make_test_snapshot(ws, n_articles=6, days=1, per_article=2)
    out = tmp_path_factory.mktemp("export")
    for setting in ("none", "oracle"):
        export_snapshot(snap, "lm-eval", out, setting)
    return ws, snap, out


@pytest.fixture(scope="module")
def models(tmp_path_factory, env):
    _, snap, _ = env
    built = {}

    def get(kind, positions=WINDOW):
        if (kind, positions) not in built:
            built[kind, positions] = tiny_model_for(snap, tmp_path_factory.mktemp(kind), arch=kind.split("-")[0],
                                                    add_bos=kind == "llama-bos", max_positions=positions)
        return built[kind, positions]

    return get


# Each model, setting and scoring mode once (lm-eval takes a while per run on 2 busy cores).
CASES = [("llama-bos", "none", "loglik"), ("llama-bos", "oracle", "loglik-full"),
         ("gpt2", "oracle", "loglik"), ("gpt2", "none", "loglik-full")]


@pytest.mark.parametrize(("kind", "setting", "scoring"), CASES, ids=["-".join(c) for c in CASES])
def test_long_prompts_are_cut_like_lm_eval(env, models, kind, setting, scoring, tmp_path):
    from okgen.testing.lmeval import agreement, run_lm_eval

    ws, snap, export = env
    path = models(kind)
    out = run_eval(snap.name, f"hf/{path},dtype=float32,batch_size=4", plan_runs([setting]),
                   EvalOptions(scoring=scoring), workspace=ws, out=tmp_path / "run")[0]
    preds = read_predictions(out.path / "predictions.jsonl")
    n = len(snap.questions)
    # Both tools read the window from the config (max_position_embeddings / n_positions = 64).
    assert out.record.extra["backend"]["max_length"] == WINDOW
    assert out.record.extra["backend"]["conventions"]["truncation"] == "left"
    if setting == "oracle":
        assert out.record.truncated == n  # no article fits in 64 tokens
    else:
        assert out.record.truncated >= n // 2
    assert all(p.prompt_tokens <= WINDOW for p in preds.values())
    task = task_name(snap, setting) + ("_full" if scoring == "loglik-full" else "")
    lm = run_lm_eval(export, task, path, batch_size=4)
    assert len(lm.predictions) == n >= 12
    assert agreement({q: p.pred_index for q, p in preds.items()}, lm.predictions) == 1.0
    for qid, lls in lm.scores.items():
        assert list(preds[qid].scores) == pytest.approx(lls, abs=2e-3)
    assert out.record.accuracy == pytest.approx(lm.accuracy, abs=1e-5)


def test_context_truncation_keeps_the_question_and_is_recorded(env, models, tmp_path):
    """``truncation=context``: okgen's own rule (the article's end goes, the question stays)."""
    ws, snap, _ = env
    path = models("gpt2", 160)  # 64 tokens do not hold the question and choices alone: they are never cut
    out = run_eval(snap.name, f"hf/{path},dtype=float32,truncation=context", plan_runs(["oracle"]),
                   EvalOptions(scoring="loglik-full"), workspace=ws, out=tmp_path / "run")[0]
    run = json.loads((out.path / "run.json").read_text())
    assert run["backend"]["conventions"]["truncation"] == "context"
    assert run["config"]["model_options"] == {"dtype": "float32", "truncation": "context"}
    preds = read_predictions(out.path / "predictions.jsonl").values()
    # The article cannot fit: it was cut, the question and choices were not, and each prompt fits.
    assert out.record.truncated == len(snap.questions) and out.record.errors == 0
    assert all(p.truncated and p.prompt_tokens <= 160 for p in preds)


@pytest.mark.parametrize("kind", ["llama-bos", "gpt2"])
def test_generation_keeps_the_prompts_last_tokens(env, models, kind):
    """lm-eval's generate_until keeps the last ``max_length - max_gen_toks`` context tokens."""
    from okgen.eval.templates import get_template
    from okgen.models.registry import load_backend

    _, snap, _ = env
    path = models(kind)
    b = load_backend(f"hf/{path},dtype=float32")
    q = snap.questions[0]
    prompt = get_template(None, "mc").render(q, [], "none")
    full = b.encode(b.render(prompt))
    assert len(full) > WINDOW - 8
    g = b.generate([prompt], max_tokens=8)[0]
    assert g.error is None and g.truncated and g.prompt_tokens == WINDOW - 8
    bad = b.generate([prompt], max_tokens=WINDOW)[0]
    assert bad.error and "no room" in bad.error
