"""The vllm backend on a GPU: scores agree with the hf backend on a tiny model built in the test.

Marked ``gpu``: skipped where vllm or a CUDA GPU is missing (conftest skips ``gpu`` tests
without CUDA; the imports below skip without vllm).
"""

from __future__ import annotations

import os

import pytest

pytestmark = pytest.mark.gpu
os.environ.setdefault("HF_HUB_OFFLINE", "1")
torch = pytest.importorskip("torch")
pytest.importorskip("vllm")

from okgen.eval.runner import EvalOptions, plan_runs, read_predictions, run_eval  # noqa: E402
from okgen.eval.templates import get_template  # noqa: E402
from okgen.models.registry import load_backend  # noqa: E402
from okgen.settings import Workspace  # noqa: E402
from okgen.testing.eval_data import make_test_snapshot, tiny_model_for  # noqa: E402


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    ws = Workspace(tmp_path_factory.mktemp("ws"))
    snap = make_test_snapshot(ws)
    # head_dim 64: a size every vLLM attention backend supports
    model = tiny_model_for(snap, ws.home / "tiny", hidden=256, heads=4, layers=2, max_positions=1024)
    vllm = load_backend(f"vllm/{model},dtype=float32,gpu_memory_utilization=0.3,enforce_eager=yes", ws)
    yield ws, snap, model, vllm
    vllm.close()


def test_engine_options_and_prefix_caching(env):
    _, _, _, vllm = env
    info = vllm.info()
    assert info["engine_args"]["enable_prefix_caching"] is True and info["engine_args"]["dtype"] == "float32"
    assert vllm.max_length == 1024


def test_letter_and_continuation_scores_match_hf(env):
    ws, snap, model, vllm = env
    hf = load_backend(f"hf/{model},device=cuda,dtype=float32", ws)
    t = get_template(None, "mc")
    prompts = [t.render(q) for q in snap.questions[:6]]
    labels = [list("ABCD")] * 6
    a, b = vllm.letter_logprobs(prompts, labels), hf.letter_logprobs(prompts, labels)
    for x, y in zip(a, b):
        assert x.single_pass and x.scores == pytest.approx(y.scores, abs=2e-3)
    conts = [[" " + c for c in q.choices] for q in snap.questions[:6]]
    for x, y in zip(vllm.loglik(prompts, conts), hf.loglik(prompts, conts)):
        assert x.scores == pytest.approx(y.scores, abs=5e-3)
    ga = vllm.generate(prompts, max_tokens=4)
    assert all(g.completion_tokens >= 1 for g in ga)
    hf.close()


def test_eval_runs_on_vllm_and_agrees_with_hf(env, tmp_path):
    ws, snap, model, vllm = env
    runs = plan_runs(["none", "oracle"])
    got = run_eval(snap.name, vllm.spec, runs, EvalOptions(), workspace=ws, out=tmp_path / "v", backend=vllm)
    ref = run_eval(snap.name, f"hf/{model},device=cuda,dtype=float32", runs, EvalOptions(), workspace=ws, out=tmp_path / "h")
    for x, y in zip(got, ref):
        px, py = read_predictions(x.path / "predictions.jsonl"), read_predictions(y.path / "predictions.jsonl")
        agree = sum(px[k].pred_index == py[k].pred_index for k in px) / len(px)
        assert agree >= 0.9  # float32 on both; near-ties may flip
        assert x.record.signature == y.record.signature


@pytest.mark.skipif(not torch.cuda.is_available() or torch.cuda.device_count() < 2, reason="needs 2 GPUs")
def test_data_parallel_ranks(env):
    ws, snap, model, _ = env
    dp = load_backend(f"vllm/{model},dtype=float32,gpu_memory_utilization=0.3,enforce_eager=yes,data_parallel_size=2", ws)
    try:
        t = get_template(None, "mc")
        prompts = [t.render(q) for q in snap.questions[:5]]
        assert len(dp.letter_logprobs(prompts, [list("ABCD")] * 5)) == 5
    finally:
        dp.close()
