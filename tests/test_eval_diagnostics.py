"""Diagnostics that catch a broken run: a model that always answers "A" is flagged in one line, a
sane one is not; oracle not above none is flagged; a failed run leaves no empty folder behind."""

from __future__ import annotations

import collections
import json
import logging

import pytest

from okgen.errors import ConfigError
from okgen.eval.runner import EvalOptions, plan_runs, run_eval
from okgen.eval.stats import diagnostics
from okgen.schema import EvalRecord
from okgen.settings import Workspace
from okgen.testing.eval_data import make_test_snapshot, tiny_model_for


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    ws = Workspace(tmp_path_factory.mktemp("ws"))
    return ws, make_test_snapshot(ws)


@pytest.fixture(scope="module")
def always_a(env, tmp_path_factory):
    """A tiny GPT-2 whose final layer norm outputs a constant aimed at " A": it answers "A" whatever it reads."""
    torch = pytest.importorskip("torch")
    from transformers import AutoTokenizer, GPT2LMHeadModel

    path = tiny_model_for(env[1], tmp_path_factory.mktemp("always-a"), arch="gpt2")
    model = GPT2LMHeadModel.from_pretrained(path)
    tok = AutoTokenizer.from_pretrained(path)
    a = tok(" A", add_special_tokens=False).input_ids
    assert len(a) == 1
    with torch.no_grad():
        model.transformer.ln_f.weight.zero_()
        model.transformer.ln_f.bias.copy_(10 * model.lm_head.weight[a[0]])
    model.save_pretrained(path)
    return path


def test_a_model_that_always_answers_a_is_flagged(env, always_a, caplog, tmp_path):
    ws, snap = env
    gold = collections.Counter(q.answer_index for q in snap.questions)
    assert max(gold.values()) / len(snap.questions) <= 0.4  # the synthetic set is balanced
    with caplog.at_level(logging.WARNING, logger="okgen.eval.runner"):
        none, oracle = run_eval(snap.name, f"hf/{always_a},chat=no", plan_runs(["none", "oracle"]), EvalOptions(),
                                workspace=ws, out=tmp_path / "runs")
    for o in (none, oracle):
        d = o.record.extra["diagnostics"]
        assert d["predicted_letters"]["A"] == len(snap.questions) and d["dominant_letter"] == "A"
        assert d["position_bias"] == pytest.approx(1 - gold[0] / len(snap.questions), abs=1e-6)
        assert d["accuracy_by_gold_position"]["A"] == 1.0 and d["accuracy_by_gold_position"]["B"] == 0.0
        assert any('100% of the answers are "A"' in w for w in o.warnings)
    # Same answers with and without the article: the oracle is not above none.
    assert any("oracle accuracy" in w and "not above" in w for w in oracle.warnings)
    for o in (none, oracle):  # kept with the results, as docs/eval.md says, for a report to read back
        kept = EvalRecord.model_validate_json((o.path / "results.json").read_text()).extra["warnings"]
        assert kept == o.warnings and any("not above" in w for w in kept)
    lines = [r.getMessage() for r in caplog.records]
    assert sum('answers are "A"' in m for m in lines) == 2 and all("\n" not in m for m in lines)
    # An oracle run of another --limit beside the full none run: compared on the questions both
    # scored (it was skipped without a word).
    run_eval(snap.name, f"hf/{always_a},chat=no", plan_runs(["none"]), EvalOptions(), workspace=ws)
    lim = run_eval(snap.name, f"hf/{always_a},chat=no", plan_runs(["oracle"]), EvalOptions(limit=4),
                   workspace=ws)[0]
    assert any("not above" in w and "on the 4 questions both runs scored" in w for w in lim.warnings), lim.warnings


def test_a_sane_baseline_is_not_flagged(env, tmp_path):
    ws, snap = env
    out = run_eval(snap.name, "random/seed0", plan_runs(["none"]), EvalOptions(), workspace=ws, out=tmp_path / "r")[0]
    d = out.record.extra["diagnostics"]
    assert d["dominant_letter"] is None and out.warnings == [] and d["balanced"]
    assert sum(d["predicted_letters"].values()) == len(snap.questions)


def test_the_random_baseline_gets_no_oracle_warning(env, tmp_path, caplog):
    # Its answers ignore the context: an oracle at or below none says nothing of it (the same
    # draws in both settings: oracle equals none).
    ws, snap = env
    with caplog.at_level(logging.WARNING, logger="okgen.eval.runner"):
        none, oracle = run_eval(snap.name, "random/seed0", plan_runs(["none", "oracle"]), EvalOptions(), workspace=ws,
                                out=tmp_path / "r")
    assert oracle.record.accuracy <= none.record.accuracy  # the case the warning is about
    assert oracle.warnings == [] and not any("not above" in r.getMessage() for r in caplog.records)


def test_the_random_baseline_draws_the_same_answers_in_every_setting(env, tmp_path):
    # Seeded by the question and its options, not the context: a chance line that moved between
    # none and oracle would read as an effect of the article.
    ws, snap = env
    runs = run_eval(snap.name, "random/seed0", plan_runs(["none", "oracle"]), EvalOptions(), workspace=ws,
                    out=tmp_path / "r")
    picks = [{p["question_id"]: p["pred_index"] for p in map(json.loads, (r.path / "predictions.jsonl").open())}
             for r in runs]
    assert picks[0] == picks[1] and len(picks[0]) == len(snap.questions)
    assert len(set(picks[0].values())) > 1  # still a random draw, not one letter
    other = run_eval(snap.name, "random/seed1", plan_runs(["none"]), EvalOptions(), workspace=ws, out=tmp_path / "s")[0]
    assert {p["question_id"]: p["pred_index"] for p in map(json.loads, (other.path / "predictions.jsonl").open())} != picks[0]


def test_dominant_letter_needs_a_balanced_set(env):
    from okgen.schema import Prediction

    _, snap = env
    qs = snap.questions
    preds = {q.id: Prediction(question_id=q.id, setting="none", pred_index=0, correct=q.answer_index == 0, parsed=True)
             for q in qs}
    assert diagnostics(qs, preds)["dominant_letter"] == "A"
    skewed = [q.model_copy(update={"answer_index": 0}) for q in qs]  # every gold answer is A: not balanced
    d = diagnostics(skewed, preds)
    assert not d["balanced"] and d["dominant_letter"] is None and d["position_bias"] == 0


def test_random_baseline_seed_in_its_name(env, tmp_path):
    ws, snap = env
    a = run_eval(snap.name, "random/seed3", plan_runs(["none"]), EvalOptions(), workspace=ws, out=tmp_path / "a")[0]
    b = run_eval(snap.name, "random/uniform,seed=3", plan_runs(["none"]), EvalOptions(), workspace=ws, out=tmp_path / "b")[0]
    assert a.record.extra["backend"]["seed"] == 3 and a.record.model == "random/seed3"
    assert a.record.correct == b.record.correct
    with pytest.raises(ConfigError, match="seed 3"):
        run_eval(snap.name, "random/seed3,seed=4", plan_runs(["none"]), EvalOptions(), workspace=ws, out=tmp_path / "c")
    with pytest.raises(ConfigError, match="random/seedN"):  # a misspelt seed is no silent seed 0
        run_eval(snap.name, "random/seedX", plan_runs(["none"]), EvalOptions(), workspace=ws, out=tmp_path / "d")
    assert not (tmp_path / "d").exists()


def test_a_failed_run_leaves_no_empty_folder(env, tmp_path):
    ws, snap = env
    before = sorted(p for p in ws.runs_dir.rglob("*")) if ws.runs_dir.exists() else []
    with pytest.raises(ConfigError, match="cannot load hf model"):
        run_eval(snap.name, f"hf/{tmp_path / 'no-such-model'}", plan_runs(["none"]), EvalOptions(), workspace=ws)
    after = sorted(p for p in ws.runs_dir.rglob("*")) if ws.runs_dir.exists() else []
    assert after == before
    with pytest.raises(ConfigError):
        run_eval(snap.name, f"hf/{tmp_path / 'no-such-model'}", plan_runs(["none"]), EvalOptions(), workspace=ws,
                 out=tmp_path / "given")
    assert not (tmp_path / "given").exists()


def test_a_resume_refuses_answers_drawn_or_rendered_otherwise(env, tmp_path):
    # Same signature, but the stored answers came from another random draw (or chat template):
    # finishing the run would mix two models' answers in one number.
    ws, snap = env
    out = tmp_path / "r"
    (o,) = run_eval(snap.name, "random/seed0", plan_runs(["none"]), EvalOptions(), workspace=ws, out=out)
    run = json.loads((o.path / "run.json").read_text())
    run["backend"]["draw"] = 1  # an okgen from before the draw by question id
    (o.path / "run.json").write_text(json.dumps(run))
    lines = (o.path / "predictions.jsonl").read_text().splitlines()
    (o.path / "predictions.jsonl").write_text("\n".join(lines[:2]) + "\n")  # killed after two answers
    with pytest.raises(ConfigError, match=r"another random draw \(version 1, now 2\)"):
        run_eval(snap.name, "random/seed0", plan_runs(["none"]), EvalOptions(), workspace=ws, out=out)
    from okgen.models.base import answers_differ as _backend_differs

    conv = {"conventions": {"chat_template_hash": "aaaaaaaaaaaa"}}
    assert _backend_differs(conv, {"conventions": {"chat_template_hash": "bbbbbbbbbbbb"}}) == \
        "chat template (aaaaaaaaaaaa, now bbbbbbbbbbbb)"
    assert _backend_differs(conv, {"conventions": {"chat_template_hash": "aaaaaaaaaaaa"}}) is None
    # A full-continuation run of the random baseline from before its uniform draw is refused;
    # a letters run of the same okgen is not (its draw did not change).
    old = {"backend": "random", "draw": 2}
    now = {"backend": "random", "draw": 2, "draw_full": 2}
    assert _backend_differs(old, now) is None
    assert _backend_differs(old, now, continuations=True) == "random draw of full continuations (version 1, now 2)"
