"""Eval runs against a real local OpenAI-compatible server: a killed run resumes, failed items
are retried, the CLI reports errors in one line, and the open-answer judge decides misses."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from okgen.eval.runner import EvalOptions, RunSpec, read_predictions, run_eval
from okgen.settings import Workspace
from okgen.signature import EvalSignature
from okgen.testing.eval_data import make_test_snapshot
from okgen.testing.openai_server import OpenAIServer, Reply, chat_logprobs


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    ws = Workspace(tmp_path_factory.mktemp("ws"))
    return ws, make_test_snapshot(ws)


def _letter_for(req):
    """A deterministic 'model': the letter depends on the question text."""
    text = req["messages"][-1]["content"]
    return "ABCD"[sum(map(ord, text)) % 4]


def _mc_responder(req, endpoint):
    letter = _letter_for(req)
    lp = chat_logprobs([(letter, -0.1, {letter: -0.1, **{x: -2.0 - i for i, x in enumerate("ABCD") if x != letter}})])
    return Reply(content=letter, logprobs=lp)


def _okgen(args, ws, **kw):
    env = dict(os.environ, OKGEN_HOME=str(ws.home), OKGEN_NO_PROGRESS="1")
    return subprocess.Popen([sys.executable, "-m", "okgen", *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kw)


def test_a_killed_run_resumes_where_it_stopped(env, tmp_path):
    ws, snap = env
    n = len(snap.questions)
    out = tmp_path / "run"
    with OpenAIServer(responder=_mc_responder, latency=0.25) as srv:
        spec = f"openai/m1,base_url={srv.base_url},concurrency=1,cache=no"
        proc = _okgen(["eval", "-s", snap.signature.format(), "-m", spec, "--batch", "2", "--out", str(out)], ws)
        deadline = time.time() + 60
        preds = out / "predictions.jsonl"
        while time.time() < deadline and (not preds.exists() or len(preds.read_text().splitlines()) < 4):
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        done = len(read_predictions(preds))
        assert 4 <= done < n, "the run should have been killed part-way"
        assert not (out / "results.json").exists()
        calls_before = srv.calls["chat"]
        resumed = run_eval(snap.name, spec, [RunSpec("none")], workspace=ws, out=out)[0]
        assert resumed.resumed == done and resumed.scored_now == n - done
        assert srv.calls["chat"] - calls_before == n - done  # only the missing questions were asked
        fresh = run_eval(snap.name, spec, [RunSpec("none")], workspace=ws, out=tmp_path / "fresh")[0]
    a, b = read_predictions(preds), read_predictions(tmp_path / "fresh" / "predictions.jsonl")
    assert {k: v.pred_index for k, v in a.items()} == {k: v.pred_index for k, v in b.items()}
    assert resumed.record.accuracy == fresh.record.accuracy and resumed.record.n == n


def test_failed_items_are_recorded_then_retried(env, tmp_path):
    ws, snap = env
    with OpenAIServer(responder=_mc_responder) as srv:
        srv.script(Reply(status=400, error="context too long"))
        spec = f"openai/m1,base_url={srv.base_url},concurrency=1,cache=no"
        first = run_eval(snap.name, spec, [RunSpec("none")], EvalOptions(limit=4), workspace=ws, out=tmp_path / "r")[0]
        assert first.record.errors == 1 and first.record.n == 4
        assert "|judge:none|limit:4|version:" in first.record.signature  # a partial run says so
        bad = [p for p in read_predictions(tmp_path / "r" / "predictions.jsonl").values() if p.error]
        assert len(bad) == 1 and "400" in bad[0].error and not bad[0].correct
        second = run_eval(snap.name, spec, [RunSpec("none")], EvalOptions(limit=4), workspace=ws, out=tmp_path / "r")[0]
    assert second.scored_now == 1 and second.record.errors == 0


def test_generate_mode_parses_written_answers(env, tmp_path):
    ws, snap = env
    qs = snap.questions[:4]
    answers = iter(["The answer is B.", "(C)", f"I would say {qs[2].choices[0]}", "I am not sure."])
    with OpenAIServer(responder=lambda req, ep: Reply(content=next(answers))) as srv:
        spec = f"openai/m1,base_url={srv.base_url},concurrency=1,cache=no"
        out = run_eval(snap.name, spec, [RunSpec("none")], EvalOptions(scoring="generate", limit=4), workspace=ws,
                       out=tmp_path / "g")[0]
    preds = read_predictions(tmp_path / "g" / "predictions.jsonl")
    assert [preds[q.id].pred_index for q in qs] == [1, 2, 0, None]
    assert out.record.unparsed == 1 and out.record.correct == sum(preds[q.id].correct for q in qs)


def test_open_answers_judge_decides_only_the_misses(env, tmp_path):
    ws, snap = env
    qs = snap.questions[:3]
    model_answers = {qs[0].question: f"{qs[0].short_answer.upper()}.\nbecause...",  # exact after normalising
                     qs[1].question: "something close", qs[2].question: "something wrong"}
    judged = []

    def responder(req, ep):
        user = req["messages"][-1]["content"]
        if req["messages"][0]["role"] == "system":  # the judge
            judged.append(user)
            return Reply(content=json.dumps({"correct": "close" in user, "reason": "same entity" if "close" in user else "different"}))
        return Reply(content=next(v for k, v in model_answers.items() if k in user))

    with OpenAIServer(responder=responder) as srv:
        spec = f"openai/m1,base_url={srv.base_url},concurrency=1,cache=no"
        judge = f"openai/judge-1,base_url={srv.base_url}"
        out = run_eval(snap.name, spec, [RunSpec("none")],
                       EvalOptions(scoring="generate", fmt="open", judge=judge, limit=3), workspace=ws, out=tmp_path / "o")[0]
    preds = read_predictions(tmp_path / "o" / "predictions.jsonl")
    p0, p1, p2 = (preds[q.id] for q in qs)
    assert p0.correct and not p0.judged
    assert p1.correct and p1.judged and p1.judge_reason == "same entity"
    assert not p2.correct and p2.judged
    assert len(judged) == 2 and "Reference answer: " + qs[1].short_answer in judged[0] + judged[1]
    sig = EvalSignature.parse(out.record.signature)
    assert sig.judge.startswith("openai/judge-1@") and len(sig.judge.split("@")[1]) == 8
    assert out.record.correct == 2 and out.record.extra["judged"] == 2


def test_cli_eval_json_and_one_line_errors(env, tmp_path):
    ws, snap = env
    proc = _okgen(["eval", "-s", snap.signature.short, "-m", "random/uniform", "--setting", "none,oracle", "--json",
                   "--limit", "5", "--out", str(tmp_path / "cli")], ws)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    data = json.loads(out)
    assert [d["extra"]["run"]["setting"] for d in data] == ["none", "oracle"]
    assert all(d["n"] == 5 and (tmp_path / "cli").exists() for d in data)
    proc = _okgen(["eval", "-s", "ffffffffffff", "-m", "random/uniform"], ws)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 1 and err.strip().startswith("okgen: error:") and len(err.strip().splitlines()) == 1
    proc = _okgen(["eval", "-s", snap.name, "-m", "nosuch/model"], ws)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 1 and "known: hf, openai, random, vllm" in err


def test_an_eval_signature_reproduces_its_run(env, tmp_path):
    ws, snap = env
    first = run_eval(snap.name, "random/uniform", [RunSpec("retrieval", "bm25", 4, 2)], EvalOptions(scoring="generate"),
                     workspace=ws, out=tmp_path / "a")[0]
    proc = _okgen(["eval", "-s", first.record.signature, "-m", "random/uniform", "--json", "--out", str(tmp_path / "b")], ws)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    again = json.loads(out)[0]
    assert again["signature"] == first.record.signature and again["accuracy"] == first.record.accuracy
    assert "differs" not in err
    proc = _okgen(["eval", "-s", first.record.signature, "-m", "random/uniform", "--k", "3", "--out", str(tmp_path / "c")], ws)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0 and "note: the signature differs from the one given: k: 3 (given 2)" in err


def test_a_run_where_every_question_failed_has_no_score(env, tmp_path):
    from okgen.errors import OkgenError

    ws, snap = env
    out = tmp_path / "down"
    with OpenAIServer(responder=lambda req, ep: Reply(status=400, error="model not found")) as srv:
        spec = f"openai/m1,base_url={srv.base_url},concurrency=2,cache=no"
        with pytest.raises(OkgenError, match=r"all 4 questions failed, so there is no score; first error: HTTP 400"):
            run_eval(snap.name, spec, [RunSpec("none")], EvalOptions(limit=4), workspace=ws, out=out)
    assert not (out / "results.json").exists()  # a report cannot show it as 0%
    text = (out / "predictions.jsonl").read_text()
    assert len(text.splitlines()) == 4 and "Infinity" not in text  # strict JSON, even for failed items
    assert all(p.error for p in read_predictions(out / "predictions.jsonl").values())
    with OpenAIServer(responder=_mc_responder) as srv:
        spec = f"openai/m1,base_url={srv.base_url},concurrency=2,cache=no"
        again = run_eval(snap.name, spec, [RunSpec("none")], EvalOptions(limit=4), workspace=ws, out=out)[0]
    assert again.scored_now == 4 and again.record.errors == 0 and (out / "results.json").exists()
    # the CLI says it in one line, exit status 1
    proc = _okgen(["eval", "-s", snap.name, "-m", "openai/m1,base_url=http://127.0.0.1:9/v1,max_retries=0,cache=no",
                   "--limit", "2", "--out", str(tmp_path / "cli")], ws)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 1 and "okgen: error: cli: all 2 questions failed" in err


def test_a_failed_judge_call_is_an_error_that_a_rerun_retries(env, tmp_path):
    ws, snap = env
    qs = snap.questions[:3]
    answers = {qs[0].question: qs[0].short_answer, qs[1].question: "something close", qs[2].question: "nothing"}
    judge_up = {"ok": False}

    def responder(req, ep):
        user = req["messages"][-1]["content"]
        if req["messages"][0]["role"] == "system":
            if not judge_up["ok"]:
                return Reply(status=400, error="judge model not found")
            return Reply(content=json.dumps({"correct": "close" in user, "reason": "checked"}))
        return Reply(content=next(v for k, v in answers.items() if k in user))

    out = tmp_path / "j"
    with OpenAIServer(responder=responder) as srv:
        spec = f"openai/m1,base_url={srv.base_url},concurrency=1,cache=no"
        opts = EvalOptions(scoring="generate", fmt="open", judge=f"openai/judge-flaky,base_url={srv.base_url}", limit=3)
        first = run_eval(snap.name, spec, [RunSpec("none")], opts, workspace=ws, out=out)[0]
        preds = read_predictions(out / "predictions.jsonl")
        assert first.record.errors == 2 and first.record.correct == 1 and first.record.extra["judged"] == 0
        assert all(preds[q.id].error.startswith("judge failed: ") for q in qs[1:]) and preds[qs[0].id].error is None
        judge_up["ok"] = True
        second = run_eval(snap.name, spec, [RunSpec("none")], opts, workspace=ws, out=out)[0]
    assert second.scored_now == 2 and second.resumed == 1
    assert second.record.errors == 0 and second.record.correct == 2 and second.record.extra["judged"] == 2


def test_retrieval_options_without_the_retrieval_setting_are_refused(env, tmp_path):
    ws, snap = env
    proc = _okgen(["eval", "-s", snap.name, "-m", "random/uniform", "--setting", "none,oracle", "--k", "3",
                   "--retriever", "dpr", "--out", str(tmp_path / "x")], ws)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 2 and "--retriever, --k apply to --setting retrieval only" in err
    assert not (tmp_path / "x").exists()


def test_judge_prompt_fills_placeholders_in_one_pass(tmp_path):
    from okgen.eval.judge import Judge

    with OpenAIServer(responder=lambda req, ep: Reply(content=json.dumps({"correct": False, "reason": "no"}))) as srv:
        judge = Judge(f"openai/judge-x,base_url={srv.base_url}", Workspace(tmp_path))
        try:
            assert judge.decide([("Who wrote {answer}?", "Mei Zhou", "Rosa Novak")]) == [(False, "no")]
        finally:
            judge.close()
        user = srv.requests[0]["messages"][-1]["content"]
    assert "Question: Who wrote {answer}?" in user and "Candidate answer: Rosa Novak" in user


def test_a_limit_of_the_whole_snapshot_is_the_full_run(env, tmp_path):
    ws, snap = env
    n = len(snap.questions)
    full = run_eval(snap.name, "random/seed0", [RunSpec("none")], EvalOptions(), workspace=ws, out=tmp_path / "r")[0]
    over = run_eval(snap.name, "random/seed0", [RunSpec("none")], EvalOptions(limit=n + 50), workspace=ws,
                    out=tmp_path / "r")[0]  # the same folder: resumed, not refused as another run
    assert over.record.signature == full.record.signature and "|limit:none|" in over.record.signature
    assert over.record.n == n and over.scored_now == 0 and over.resumed == n
    part = run_eval(snap.name, "random/seed0", [RunSpec("none")], EvalOptions(limit=n - 1), workspace=ws,
                    out=tmp_path / "p")[0]
    assert f"|limit:{n - 1}|" in part.record.signature and part.record.n == n - 1
