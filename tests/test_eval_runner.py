"""``okgen eval`` end to end: tiny hf model, all settings and scoring modes, resume, integrity."""

from __future__ import annotations

import json
import os
import shutil

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
torch = pytest.importorskip("torch")

from okgen.errors import ConfigError, IntegrityError  # noqa: E402
from okgen.eval.runner import EvalOptions, RunSpec, plan_runs, read_predictions, run_eval  # noqa: E402
from okgen.eval.templates import get_template  # noqa: E402
from okgen.schema import EvalRecord, Prediction  # noqa: E402
from okgen.settings import Workspace  # noqa: E402
from okgen.signature import EvalSignature  # noqa: E402
from okgen.testing.eval_data import make_test_snapshot, tiny_model_for  # noqa: E402


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    ws = Workspace(tmp_path_factory.mktemp("ws"))
    snap = make_test_snapshot(ws)
    # A short context so oracle prompts get truncated.
    model = tiny_model_for(snap, ws.home / "tiny", max_positions=160)
    return ws, snap, f"hf/{model}"


def _preds(path):
    return {p.question_id: p for p in read_predictions(path / "predictions.jsonl").values()}


@pytest.mark.parametrize("scoring", ["loglik", "loglik-full", "loglik-norm", "generate"])
def test_settings_and_scoring_modes_end_to_end(env, scoring, monkeypatch):
    ws, snap, model = env
    import okgen.models.registry as reg

    loads = []
    real = reg.load_backend
    monkeypatch.setattr(reg, "load_backend", lambda *a, **k: loads.append(1) or real(*a, **k))
    opts = EvalOptions(scoring=scoring, max_tokens=8 if scoring == "generate" else None)
    outs = run_eval(snap.signature.short, model, plan_runs(["none", "oracle"]), opts, workspace=ws)
    assert len(loads) == 1  # both settings ran on one loaded model
    n = len(snap.questions)
    for o, setting in zip(outs, ["none", "oracle"]):
        rec = EvalRecord.model_validate_json((o.path / "results.json").read_text())
        assert rec == o.record and rec.n == n == len(_preds(o.path))
        sig = EvalSignature.parse(rec.signature)
        assert (sig.setting, sig.scoring, sig.answer_format, sig.template) == (setting, scoring, "mc", "mc-v1")
        assert sig.snapshot_signature() == snap.signature and sig.judge == "none" and sig.k is None
        assert 0 <= rec.ci95[0] <= rec.accuracy <= rec.ci95[1] <= 1
        assert sum(b.n for b in rec.by_source.values()) == n == sum(b.n for b in rec.by_position.values())
        assert set(rec.by_position) <= {"A", "B", "C", "D"}
        assert rec.usage["prompt_tokens"] > 0 and rec.timings["scoring"] > 0
        preds = _preds(o.path)
        assert all(p.setting == setting for p in preds.values())
        if scoring == "generate":
            assert rec.unparsed == sum(not p.parsed for p in preds.values())
            assert all(p.output is not None for p in preds.values())
        else:
            assert rec.unparsed == 0 and all(len(p.scores) == 4 for p in preds.values())
        if setting == "oracle":
            # the 160-token model cannot hold the articles: every oracle prompt was cut, and counted
            assert rec.truncated == n and all(p.truncated for p in preds.values())
        else:
            assert rec.truncated == 0


def test_loglik_matches_log_probabilities_computed_by_hand(env, tmp_path):
    ws, snap, model = env
    out = run_eval(snap.path.as_posix(), model, [RunSpec("none")], EvalOptions(limit=2), workspace=ws, out=tmp_path / "r")[0]
    assert out.record.n == 2
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = model.split("/", 1)[1]
    tok, lm = AutoTokenizer.from_pretrained(path), AutoModelForCausalLM.from_pretrained(path)
    preds = _preds(out.path)
    for q in snap.questions[:2]:
        text = get_template(None, "mc").render(q).plain()
        assert text.endswith("D. " + q.choices[3] + "\nAnswer:")
        ids = tok(text, add_special_tokens=False).input_ids
        with torch.no_grad():
            lp = lm(torch.tensor([ids])).logits[0, -1].log_softmax(-1)
        want = [float(lp[tok(" " + x, add_special_tokens=False).input_ids[0]]) for x in "ABCD"]
        p = preds[q.id]
        assert p.scores == pytest.approx(want, abs=1e-4)
        assert p.pred_index == max(range(4), key=lambda i: want[i])
        assert p.correct == (p.pred_index == q.answer_index)


def test_two_runs_give_identical_predictions(env, tmp_path):
    ws, snap, model = env
    runs = plan_runs(["none", "oracle"])
    a = run_eval(snap.name, model, runs, EvalOptions(scoring="loglik"), workspace=ws, out=tmp_path / "a")
    b = run_eval(snap.name, model + ",batch_size=3", runs, EvalOptions(scoring="loglik", chunk_size=5), workspace=ws,
                 out=tmp_path / "b")
    for x, y in zip(a, b):
        px, py = _preds(x.path), _preds(y.path)
        assert {k: v.pred_index for k, v in px.items()} == {k: v.pred_index for k, v in py.items()}
        for k in px:
            assert px[k].scores == pytest.approx(py[k].scores, abs=1e-4)
        assert x.record.accuracy == y.record.accuracy and x.record.ci95 == y.record.ci95


def test_open_format_first_line_against_the_short_answer(env, tmp_path):
    ws, snap, _ = env
    # The open format reserves 100 answer tokens: the 160-token model of `env` cannot hold a
    # question plus that, and every prediction would be an error.
    model = f"hf/{tiny_model_for(snap, tmp_path / 'wide', max_positions=384)}"
    out = run_eval(snap.name, model, [RunSpec("none")], EvalOptions(scoring="generate", fmt="open", limit=3),
                   workspace=ws, out=tmp_path / "open")[0]
    sig = EvalSignature.parse(out.record.signature)
    assert (sig.answer_format, sig.scoring, sig.template, sig.eval_max_tokens) == ("open", "generate", "open-v1", 100)
    assert len(_preds(out.path)) == 3
    from okgen.eval.parsing import first_line, open_match

    assert out.record.errors == 0
    for q in snap.questions[:3]:
        p = _preds(out.path)[q.id]
        assert p.error is None and p.output is not None and 0 < p.completion_tokens <= 100
        assert p.parsed == bool(first_line(p.output)) and p.correct == open_match(p.output, q.short_answer)
    # the answer check itself: first line, normalised, against the short answer
    assert open_match(f"The {snap.questions[0].short_answer.upper()}!\nmore", snap.questions[0].short_answer)


def test_a_changed_snapshot_is_refused(env, tmp_path):
    ws, snap, model = env
    bad = tmp_path / snap.name
    shutil.copytree(snap.path, bad)
    q = bad / "questions.jsonl"
    q.write_bytes(q.read_bytes().replace(b"How many", b"How few", 1))
    with pytest.raises(IntegrityError, match="refusing to evaluate"):
        run_eval(str(bad), "random/uniform", [RunSpec("none")], workspace=ws, out=tmp_path / "x")
    assert not (tmp_path / "x").exists()


def test_resume_keeps_done_work_and_drops_a_torn_line(env, tmp_path):
    ws, snap, _ = env
    out = tmp_path / "run"
    full = run_eval(snap.name, "random/uniform,seed=1", [RunSpec("none")], workspace=ws, out=out)[0]
    lines = (out / "predictions.jsonl").read_text().splitlines()
    # simulate a run killed after 5 predictions, in the middle of writing the 6th line
    (out / "predictions.jsonl").write_text("\n".join(lines[:5]) + "\n" + lines[5][:17])
    (out / "results.json").unlink()
    again = run_eval(snap.name, "random/uniform,seed=1", [RunSpec("none")], workspace=ws, out=out)[0]
    assert again.resumed == 5 and again.scored_now == len(snap.questions) - 5
    assert again.record.accuracy == full.record.accuracy and again.record.signature == full.record.signature
    assert len((out / "predictions.jsonl").read_text().splitlines()) == len(snap.questions)
    # nothing left to do: the results are rebuilt without loading a model
    third = run_eval(snap.name, "random/uniform,seed=1", [RunSpec("none")], workspace=ws, out=out)[0]
    assert third.scored_now == 0 and third.record.correct == full.record.correct
    # ... and keep what the scoring run measured, rather than an empty clock over it.
    assert third.record.timings == again.record.timings and "questions_per_second" in third.record.timings
    assert third.record.created_at == again.record.created_at and third.record.extra["scored_now"] == again.scored_now


def test_a_run_folder_of_another_run_is_refused(env, tmp_path):
    ws, snap, _ = env
    out = tmp_path / "run"
    run_eval(snap.name, "random/uniform", [RunSpec("none")], workspace=ws, out=out)
    with pytest.raises(ConfigError, match="holds another run"):
        run_eval(snap.name, "random/uniform", [RunSpec("oracle")], workspace=ws, out=out)
    again = run_eval(snap.name, "random/uniform", [RunSpec("oracle")], EvalOptions(overwrite=True), workspace=ws, out=out)
    assert json.loads((out / "run.json").read_text())["config"]["setting"] == "oracle"
    assert again[0].record.extra["run"]["setting"] == "oracle"


def test_a_limited_run_into_a_full_runs_folder_is_refused(env, tmp_path):
    # Nothing is left to score, so nothing used to stop it: results.json was rebuilt from the first
    # 3 predictions under the full run's signature (limit:none), a part passing for the whole.
    ws, snap, _ = env
    out = tmp_path / "run"
    full = run_eval(snap.name, "random/seed0", [RunSpec("none")], workspace=ws, out=out)[0]
    before = (out / "results.json").read_bytes()
    for limit in (3, len(snap.questions) - 1):
        with pytest.raises(ConfigError, match=f"holds a run of all questions, not the first {limit} questions"):
            run_eval(snap.name, "random/seed0", [RunSpec("none")], EvalOptions(limit=limit), workspace=ws, out=out)
    assert (out / "results.json").read_bytes() == before and full.record.n == len(snap.questions)
    # The reverse, and one limit for another, are refused too, naming what differs.
    part = tmp_path / "part"
    run_eval(snap.name, "random/seed0", [RunSpec("none")], EvalOptions(limit=3), workspace=ws, out=part)
    with pytest.raises(ConfigError, match="holds a run of the first 3 questions .*, not all questions"):
        run_eval(snap.name, "random/seed0", [RunSpec("none")], workspace=ws, out=part)
    with pytest.raises(ConfigError, match="not the first 2 questions"):
        run_eval(snap.name, "random/seed0", [RunSpec("none")], EvalOptions(limit=2), workspace=ws, out=part)
    # The same limit resumes as before.
    again = run_eval(snap.name, "random/seed0", [RunSpec("none")], EvalOptions(limit=3), workspace=ws, out=part)[0]
    assert again.scored_now == 0 and again.record.n == 3
    # A folder of an older okgen whose signature this one cannot parse (no limit field): resumed
    # as before, not refused as "a run of all questions".
    run_json = json.loads((part / "run.json").read_text())
    run_json["signature"] = run_json["signature"].replace("|limit:3", "")
    (part / "run.json").write_text(json.dumps(run_json))
    assert run_eval(snap.name, "random/seed0", [RunSpec("none")], EvalOptions(limit=3), workspace=ws,
                    out=part)[0].scored_now == 0
    # A stored limit covering the whole snapshot (an older okgen kept it) is no limit.
    whole = tmp_path / "whole"
    run_eval(snap.name, "random/seed0", [RunSpec("none")], workspace=ws, out=whole)
    run_json = json.loads((whole / "run.json").read_text())
    run_json["signature"] = run_json["signature"].replace("|limit:none", f"|limit:{len(snap.questions) + 20}")
    (whole / "run.json").write_text(json.dumps(run_json))
    assert run_eval(snap.name, "random/seed0", [RunSpec("none")], workspace=ws, out=whole)[0].scored_now == 0


def test_a_retrieval_run_of_no_passage_is_a_one_line_error(env, tmp_path):
    ws, snap, _ = env
    with pytest.raises(ConfigError, match="k \\(passages given\\) and the window must be >= 1"):
        run_eval(snap.name, "random/seed0", [RunSpec("retrieval", "bm25", 1, 0)], workspace=ws, out=tmp_path / "r")


def test_a_signature_refusal_names_the_fields_that_differ(env, tmp_path):
    from okgen.signature import signature_diff

    ws, snap, _ = env
    sig = run_eval(snap.name, "random/seed0", [RunSpec("none")], workspace=ws, out=tmp_path / "r")[0].record.signature
    other = EvalSignature.parse(sig).model_copy(update={"eval_seed": 7, "template": "mc-v9"}).format()
    assert signature_diff(sig, other) == "tmpl: mc-v1 (now mc-v9), eseed: 0 (now 7)"
    assert signature_diff("not a signature", other) == f"not a signature (now {other})"


def test_default_run_folders_live_under_the_workspace(env):
    ws, snap, _ = env
    outs = run_eval(snap.name, "random/uniform", plan_runs(["none", "oracle"]), EvalOptions(limit=4), workspace=ws)
    assert [o.path.relative_to(ws.runs_dir).parts for o in outs] == [
        (snap.name, "random_uniform", "none-loglik-mc"), (snap.name, "random_uniform", "oracle-loglik-mc")]
    assert all(o.record.n == 4 for o in outs)


def test_option_conflicts_are_config_errors(env):
    ws, snap, _ = env
    with pytest.raises(ConfigError, match="--scoring generate"):
        run_eval(snap.name, "random/uniform", [RunSpec("none")], EvalOptions(fmt="open", scoring="loglik"), workspace=ws)
    with pytest.raises(ConfigError, match="unknown setting"):
        plan_runs(["oracel"])
    with pytest.raises(ConfigError, match="unknown template"):
        run_eval(snap.name, "random/uniform", [RunSpec("none")], EvalOptions(template="mc-v9"), workspace=ws)


def test_prediction_lines_are_records(env, tmp_path):
    ws, snap, _ = env
    out = run_eval(snap.name, "random/uniform", [RunSpec("oracle")], workspace=ws, out=tmp_path / "r")[0]
    for line in (out.path / "predictions.jsonl").read_text().splitlines():
        p = Prediction.model_validate_json(line)
        assert p.setting == "oracle" and p.retrieved == (next(q.article_id for q in snap.questions if q.id == p.question_id),)


def test_the_random_baseline_is_uniform_in_every_scoring():
    """Full continuations scored `-random * length` made the sum favour the shortest option
    (72 % for a 3-character option among three of 14); the draw now picks each option as often
    under the sum and under the sum over the length. An open prompt lists no options: refused."""
    from collections import Counter

    from okgen.models.base import Prompt, parse_model_spec
    from okgen.models.random_backend import RandomBackend

    b = RandomBackend(parse_model_spec("random/seed0"))
    conts = [" Rivertown", " Lakeport Harbour Authority", " Orbis", " Norvik City Council"]
    prompts = [Prompt(messages=({"role": "user", "content": "Q"},), key=f"q{i}") for i in range(4000)]
    scored = b.loglik(prompts, [conts] * len(prompts))

    def best(values):
        return max(range(len(values)), key=values.__getitem__)

    full = [best(s.scores) for s in scored]
    norm = [best([x / len(c.strip()) for x, c in zip(s.scores, conts)]) for s in scored]
    for picks in (full, norm):
        counts = Counter(picks)
        assert all(850 <= counts[i] <= 1150 for i in range(4)), counts
    assert full == norm
    with pytest.raises(ConfigError, match="open-answer prompt lists none"):
        b.generate(prompts[:1], max_tokens=8)


def test_each_run_records_the_backend_use_of_its_own(env, tmp_path):
    """One call scores several runs with one backend: each results.json counted everything the
    backend had done since it loaded (forward passes 2 -> 4 -> 6 for three runs of 2 questions)."""
    from okgen.models.base import parse_model_spec
    from okgen.models.random_backend import RandomBackend

    class Counting(RandomBackend):
        def __init__(self, spec):
            super().__init__(spec)
            self.calls = 0

        def letter_logprobs(self, prompts, labels):
            self.calls += len(prompts)
            return super().letter_logprobs(prompts, labels)

        def usage(self):
            return {"prompts": self.calls, "mode": "counting"}

    ws, snap, _ = env
    b = Counting(parse_model_spec("random/seed0"))
    outs = run_eval(snap.name, "random/seed0", plan_runs(["none", "oracle"]), EvalOptions(limit=3), workspace=ws,
                    out=tmp_path / "runs", backend=b)
    assert [o.record.extra["backend_usage"] for o in outs] == [{"prompts": 3, "mode": "counting"}] * 2


def test_eval_cli_lines_name_their_run_and_refuse_contradicting_options(env, tmp_path):
    from click.testing import CliRunner

    from okgen.cli.main import cli

    ws, snap, _ = env
    base = ["--home", str(ws.home), "eval", "-s", snap.name, "-m", "random/seed0"]
    r = CliRunner().invoke(cli, [*base, "--setting", "retrieval", "--k", "1,2", "--limit", "4", "--out", str(tmp_path / "r")])
    assert r.exit_code == 0, r.output
    # no unlabelled "stale-answer rate -" line per retrieval run when no context offered a stale answer
    for line in r.output.splitlines():
        if "stale-answer rate" in line:
            assert line.startswith("retrieval bm25 ") and " k=" in line.split(":")[0], line
    r = CliRunner().invoke(cli, [*base, "--format", "open", "--scoring", "loglik"])
    assert r.exit_code == 2 and "scored by generation" in r.output
    r = CliRunner().invoke(cli, [*base, "--format", "open", "--out", str(tmp_path / "open")])
    assert "open answer has none to draw" in str(r.exception) and not (tmp_path / "open").exists()
