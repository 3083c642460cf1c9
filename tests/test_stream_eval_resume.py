"""A stream eval killed mid-run (SIGKILL: no cleanup) resumes and scores each (question,
interval) once, with the results of an uninterrupted run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from okgen.errors import ConfigError
from okgen.settings import Workspace
from okgen.streams.evaluate import read_rows, run_stream_eval
from okgen.streams.oaks import import_oaks

ROOT = Path(__file__).resolve().parents[1]


def oaks_doc(questions: int = 5, chunks: int = 4) -> list[dict]:
    cities = ["Oslo", "Rome", "Lima", "Pune", "Kiev", "Baku"]
    qas = {}
    for q in range(questions):
        answers = {str(c): cities[(q + c // 2) % len(cities)] for c in range(chunks)}
        qas[f"Where does person {q} live?"] = {"question_id": f"T_q{q}", "chunk_to_answer": answers,
                                                "options": cities, "option_sources": {}}
    chunks_text = {str(c): f"Chunk {c}: " + " ".join(f"Person {q} lives in {cities[(q + c // 2) % 6]}."
                                                      for q in range(questions)) for c in range(chunks)}
    return [{"meta": {"bid": "T", "num_chunks": chunks, "num_qas": questions, "title": "t", "author": "okgen"},
             "data": {"chunks": chunks_text, "qas": qas}}]


KILLED = """
import os, signal, sys
from pathlib import Path
from okgen.models.base import parse_model_spec
from okgen.models.random_backend import RandomBackend
from okgen.settings import Workspace
from okgen.streams.evaluate import run_stream_eval

class Dies(RandomBackend):
    calls = 0
    def letter_logprobs(self, prompts, labels):
        Dies.calls += 1
        if Dies.calls == int(sys.argv[2]):
            os.kill(os.getpid(), signal.SIGKILL)  # no cleanup, no finally: as when the machine dies
        return super().letter_logprobs(prompts, labels)

ws = Workspace(Path(sys.argv[1]))
run_stream_eval(ws, "t", "random/seed0", "full", backend=Dies(parse_model_spec("random/seed0")))
"""


def test_sigkilled_stream_eval_resumes_and_scores_each_pair_once(tmp_path):
    ws = Workspace(tmp_path / "ws")
    src = tmp_path / "oaks.json"
    src.write_text(json.dumps(oaks_doc()), encoding="utf-8")
    import_oaks(ws, src, "t")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    p = subprocess.run([sys.executable, "-c", KILLED, str(ws.home), "4"], env=env, capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == -signal.SIGKILL, p.stderr
    run = ws.data_dir / "runs" / "streams" / "t" / "random_seed0" / "full"
    preds = run / "predictions.jsonl"
    assert len(preds.read_text().splitlines()) == 3 * 4 and not (run / "results.json").exists()
    with open(preds, "ab") as f:
        f.write(b'{"question_id": "T_q3", "interv')  # a torn line, as if killed mid-write
    p = subprocess.run([sys.executable, "-c", KILLED, str(ws.home), "0"], env=env, capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stderr
    lines = [json.loads(x) for x in preds.read_text().splitlines()]
    pairs = [(r["question_id"], r["interval"]) for r in lines]
    assert sorted(pairs) == sorted({(f"T_q{q}", t) for q in range(5) for t in range(4)})  # each pair once
    res = json.loads((run / "results.json").read_text())
    assert res["resumed"] == 12 and res["scored_now"] == 8 and res["n"] == 5
    fresh = run_stream_eval(ws, "t", "random/seed0", "full", out=tmp_path / "fresh")
    for k in ("acc", "al", "ds", "pm", "acc_by_interval", "transitions"):
        assert res[k] == fresh[k], k
    assert read_rows(preds) == read_rows(tmp_path / "fresh" / "predictions.jsonl")


def test_finished_run_is_read_back_and_another_run_refused(tmp_path):
    ws = Workspace(tmp_path / "ws")
    src = tmp_path / "oaks.json"
    src.write_text(json.dumps(oaks_doc(2, 3)), encoding="utf-8")
    import_oaks(ws, src, "t")
    first = run_stream_eval(ws, "t", "random/seed0", "none", out=tmp_path / "r")
    again = run_stream_eval(ws, "t", "random/seed0", "none", out=tmp_path / "r")
    assert again["scored_now"] == 0 and again["resumed"] == 6 and again["acc"] == first["acc"]
    with pytest.raises(ConfigError, match="holds another run .*setting"):
        run_stream_eval(ws, "t", "random/seed0", "window:1", out=tmp_path / "r")
    over = run_stream_eval(ws, "t", "random/seed0", "window:1", out=tmp_path / "r", overwrite=True)
    assert over["scored_now"] == 6 and over["resumed"] == 0
    with pytest.raises(ConfigError, match="bad stream setting"):
        run_stream_eval(ws, "t", "random/seed0", "past:1", out=tmp_path / "new")
    assert not (tmp_path / "new").exists()
