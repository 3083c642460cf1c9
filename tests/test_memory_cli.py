"""`okgen memory eval` and `okgen memory ls` on a series of the synthetic entity's ten days."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from okgen.cli.main import cli
from okgen.settings import Workspace
from okgen.testing.memory import entity_series


@pytest.mark.slow  # ten snapshots, five settings, two calls (~20 s)
def test_memory_eval_over_a_series_writes_runs_and_a_comparison(tmp_path):
    ws = Workspace(tmp_path)
    entity_series(ws)
    out = tmp_path / "runs"
    args = ["--home", str(tmp_path), "memory", "eval", "--series", "entity", "-m", "random/seed0",
            "--setting", "none,ctx:closest,ctx:latest", "--memory", "bm25", "--memory", "recent,window=2",
            "--k", "2", "--out", str(out), "--json"]
    r = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert r.exit_code == 0, r.output
    res = json.loads(r.stdout)
    by = {row["setting"]: row for row in res["rows"]}
    assert set(by) == {"none", "ctx:closest", "ctx:latest", "mem:bm25", "mem:recent,window=2"}
    assert all(row["n"] == 4 for row in by.values())
    assert by["ctx:latest"]["future_context"] == 0.75 and by["ctx:closest"]["gold_in_context"] == 1.0
    assert by["none"]["gain_over_none"] == 0.0
    assert (out / "comparison.md").read_text().count("| mem:") == 2
    run = json.loads((out / "mem-recent_window=2" / "results.json").read_text())
    assert run["config"]["memory"] == {"memory": "recent", "window": 2} and len(run["cost_per_day"]) == 10
    # A second call resumes: nothing is scored again, the same numbers come back.
    r2 = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert json.loads(r2.stdout)["rows"] == res["rows"]
    preds = (out / "mem-bm25" / "predictions.jsonl").read_text().splitlines()
    assert len(preds) == 4


def test_memory_ls_and_a_bad_memory(tmp_path):
    r = CliRunner().invoke(cli, ["memory", "ls", "--json"])
    names = {x["name"] for x in json.loads(r.stdout)}
    assert {"none", "full", "recent", "bm25", "rag-recent", "summary", "ko-blind", "ko-qaware"} <= names
    r = CliRunner().invoke(cli, ["--home", str(tmp_path), "memory", "eval", "--series", "x", "-m", "random/seed0",
                                 "--memory", "nope"])
    assert r.exit_code == 1 and "unknown memory 'nope'" in str(r.exception)


def test_a_setting_folder_another_process_writes_is_refused_before_the_model_loads(tmp_path):
    from okgen.errors import LockedError
    from okgen.eval.rundir import folder_lock
    from okgen.memory.evaluate import run_memory_eval

    ws = Workspace(tmp_path)
    entity_series(ws)
    out = tmp_path / "runs"
    with folder_lock(ws, out / "mem-bm25"):  # as a second process would hold it
        # The model spec cannot load: the lock is what refuses, before any loading.
        with pytest.raises(LockedError, match=r"another okgen memory eval is writing .*mem-bm25"):
            run_memory_eval("entity", "hf/no/such-model", ["none", "mem:bm25"], workspace=ws, out=out)
    assert not (out / "none").exists()
