"""OAKS JSON import/export round trip, refusals of malformed files, and okgen eval --stream."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from okgen.errors import SchemaError
from okgen.models.random_backend import DRAW
from okgen.settings import Workspace
from okgen.streams.oaks import export_oaks, import_oaks
from okgen.streams.store import open_stream, streams_dir, verify_stream

# A small document in OAKS's documented structure (OAKS-N style: options and option_sources).
DOC = {
    "meta": {"bid": "T01", "num_chunks": 4, "num_qas": 2, "title": "A test story", "author": "okgen"},
    "data": {
        "chunks": {"0": "Ann lives in Oslo.", "1": "Ann moved to Rome.", "2": "Ann stayed in Rome.",
                   "3": "Ann moved to Lima. Bo arrived."},
        "qas": {
            "Where does Ann live?": {
                "question_id": "T01_q0",
                "chunk_to_answer": {"0": "Oslo", "1": "Rome", "2": "Rome", "3": "Lima"},
                "options": ["Lima", "Oslo", "Rome", "Paris", "Unknown"],
                "option_sources": {"Rome": {"1": ["Ann moved to Rome."]}, "Lima": {"3": ["Ann moved to Lima."]}},
            },
            "Has Bo arrived?": {
                "question_id": "T01_q1",
                "chunk_to_answer": {"0": "no", "1": "no", "2": "no", "3": "yes"},
                "options": ["yes", "no"],
                "option_sources": {},
            },
        },
    },
}


def write(tmp_path, docs, name="oaks.json"):
    p = tmp_path / name
    p.write_text(json.dumps(docs), encoding="utf-8")
    return p


def test_round_trip(tmp_path):
    ws = Workspace(tmp_path / "ws")
    (m,) = import_oaks(ws, write(tmp_path, [DOC]), "t01")
    assert m.origin == "oaks" and len(m.intervals) == 4 and m.counts["questions"] == 2
    s = open_stream(streams_dir(ws) / "t01")
    assert verify_stream(s.path, ws) == []
    q = s.questions[0]
    assert [q.choices[a] for a in q.answers] == ["Oslo", "Rome", "Rome", "Lima"] and q.changes == 2
    assert export_oaks(s) == DOC
    r = CliRunner().invoke(__import__("okgen.cli.main", fromlist=["cli"]).cli,
                           ["--home", str(ws.home), "stream", "export", "t01", "--format", "oaks"])
    assert r.exit_code == 0 and json.loads(r.stdout) == [DOC]
    # An okgen export imported again is exported under its own signature, naming its source.
    tagged = {**DOC, "meta": {**DOC["meta"], "bid": "T02", "okgen_signature": "stream:april-facts|origin:series"}}
    (m2,) = import_oaks(ws, write(tmp_path, [tagged]), "t02")
    meta = export_oaks(open_stream(streams_dir(ws) / "t02"))["meta"]
    assert meta["okgen_signature"] == m2.signature != tagged["meta"]["okgen_signature"]
    assert meta["okgen_source_signature"] == "stream:april-facts|origin:series"


def test_several_documents_and_oaks_b_answers(tmp_path):
    ws = Workspace(tmp_path / "ws")
    b = {"meta": {"bid": "B7", "num_chunks": 3, "num_qas": 1},
         "data": {"chunks": {"0": "x", "1": "y", "2": "z"}, "facts": {"0": ["x"]},
                  "qas": {"Where is the apple?": {"question_id": "B7_q0", "question_type": "simple_facts",
                                                  "chunk_to_answer": {"0": ["kitchen"], "1": ["garden", "the garden"],
                                                                      "2": ["garden"]}}}}}
    ms = import_oaks(ws, write(tmp_path, [DOC, b]), "pair")
    assert [m.name for m in ms] == ["pair-T01", "pair-B7"]
    q = open_stream(streams_dir(ws) / "pair-B7").questions[0]
    assert q.choices == ("kitchen", "garden") and q.answers == (0, 1, 1) and q.track == "oaks/simple_facts"


def test_malformed_files_are_refused_and_nothing_written(tmp_path):
    ws = Workspace(tmp_path / "ws")
    bad = copy.deepcopy(DOC)
    del bad["data"]["qas"]["Where does Ann live?"]["chunk_to_answer"]["2"]
    with pytest.raises(SchemaError, match=r"^oaks.json\[1\] \(T01\): question T01_q0 has no answer for chunk 2$"):
        import_oaks(ws, write(tmp_path, [DOC, bad]), "x")
    assert not streams_dir(ws).exists() or not list(streams_dir(ws).iterdir())
    wrong = copy.deepcopy(DOC)
    wrong["data"]["qas"]["Has Bo arrived?"]["chunk_to_answer"]["3"] = "maybe"
    with pytest.raises(SchemaError, match="answer 'maybe' is not one of its options"):
        import_oaks(ws, write(tmp_path, [wrong]), "x")
    gap = copy.deepcopy(DOC)
    del gap["data"]["chunks"]["1"]
    with pytest.raises(SchemaError, match="chunk keys must be 0..2"):
        import_oaks(ws, write(tmp_path, [gap]), "x")
    (tmp_path / "broken.json").write_text('[{"id": 1,\n  "data": "cut', encoding="utf-8")
    with pytest.raises(SchemaError, match=r"broken.json:2:11: not JSON \(Unterminated string starting at\)"):
        import_oaks(ws, tmp_path / "broken.json", "x")
    from okgen.cli.main import main

    with pytest.raises(SystemExit) as e:
        main(["--home", str(ws.home), "stream", "import", "--format", "oaks", str(write(tmp_path, [bad])), "--name", "x"])
    assert e.value.code == 1
    assert not streams_dir(ws).exists() or not list(streams_dir(ws).iterdir())


def test_contexts_never_show_a_later_interval(tmp_path):
    from okgen.streams.evaluate import Setting, contexts

    ws = Workspace(tmp_path / "ws")
    import_oaks(ws, write(tmp_path, [DOC]), "t01")
    s = open_stream(streams_dir(ws) / "t01")
    q = "Where does Ann live?"
    assert contexts(s, Setting.parse("none"), 3, q, 6000) == []
    assert [c.split("\n")[1] for c in contexts(s, Setting.parse("full"), 1, q, 6000)] == ["Ann lives in Oslo.", "Ann moved to Rome."]
    assert [c.split("\n")[1] for c in contexts(s, Setting.parse("window:1"), 2, q, 6000)] == ["Ann stayed in Rome."]
    got = contexts(s, Setting.parse("retrieval:5"), 2, q, 6000)
    assert got and all("Lima" not in c for c in got)  # chunk 3 is never retrieved at t=2
    for t in range(4):
        for st in ("full", "window:2", "retrieval:3"):
            labels = [int(c.split("]")[0].split()[-1]) for c in contexts(s, Setting.parse(st), t, q, 6000)]
            assert all(x <= t for x in labels)
    with pytest.raises(Exception, match="bad stream setting 'window:0'"):
        Setting.parse("window:0")


def test_eval_stream_cli_json_report_and_plot(tmp_path):
    from okgen.cli.main import cli

    ws = Workspace(tmp_path / "ws")
    import_oaks(ws, write(tmp_path, [DOC]), "t01")
    r = CliRunner().invoke(cli, ["--home", str(ws.home), "--json", "eval", "--stream", "t01", "-m", "random/seed0",
                                 "--setting", "none,full,window:1,retrieval:2"])
    assert r.exit_code == 0, r.output
    res = json.loads(r.stdout)
    assert [x["setting"] for x in res] == ["none", "full", "window:1", "retrieval:2"]
    for x in res:
        assert x["acc"] + x["al"] + x["ds"] + x["pm"] == pytest.approx(1)
        assert x["n"] == 2 and len(x["acc_by_interval"]) == 4 and x["phase_boundaries"] == [1, 3]
        assert sum(x["transitions"].values()) == 2 * 3
    run = tmp_path / "ws" / "data" / "runs" / "streams" / "t01" / "random_seed0"
    assert (run / "accuracy.png").stat().st_size > 5000 and "Transition classes" in (run / "report.md").read_text()
    rows = [json.loads(line) for line in (run / "none" / "predictions.jsonl").read_text().splitlines()]
    assert len(rows) == 8 and {r["interval"] for r in rows} == {0, 1, 2, 3}
    r = CliRunner().invoke(cli, ["--home", str(ws.home), "eval", "--stream", "t01", "-m", "random/seed0", "--setting", "past:2"])
    assert r.exit_code == 2 and "Invalid value for --setting: bad stream setting 'past:2'" in r.stderr, r.output
    assert all(x["context_cut"] == {"pairs": 0, "of": 8, "documents": 0} for x in res)  # a tiny stream fits
    # A later command with another setting: the report covers every setting run so far, its own first.
    r = CliRunner().invoke(cli, ["--home", str(ws.home), "eval", "--stream", "t01", "-m", "random/seed0",
                                 "--setting", "ctx:latest"])
    assert r.exit_code == 0, r.output
    report = (run / "report.md").read_text()
    assert all(f"| {st} " in report for st in ("ctx:latest", "none", "full", "window:1", "retrieval:2")), report
    assert "with 4 setting(s) of earlier runs" in r.stderr
    # A run of another --limit is not put beside them: its accuracy is over other questions.
    r = CliRunner().invoke(cli, ["--home", str(ws.home), "eval", "--stream", "t01", "-m", "random/seed0",
                                 "--setting", "window:2", "--limit", "1"])
    assert r.exit_code == 0, r.output
    report = (run / "report.md").read_text()
    assert "| window:2 " in report and "| none " not in report and "| ctx:latest " not in report
    assert "not in it: " in r.stderr and "ctx:latest" in r.stderr.split("not in it: ")[1]


def test_eval_stream_reports_progress_off_a_terminal(tmp_path, caplog, monkeypatch):
    import logging

    from okgen import progress
    from okgen.streams.evaluate import run_stream_eval

    monkeypatch.delenv("OKGEN_QUIET", raising=False)
    monkeypatch.setenv("OKGEN_PROGRESS_SECONDS", "0")  # a line per question instead of every 10 s
    monkeypatch.setattr(progress.log, "level", logging.INFO)
    caplog.set_level(logging.INFO, logger=progress.LOGGER)
    ws = Workspace(tmp_path / "ws")
    import_oaks(ws, write(tmp_path, [DOC]), "t01")
    run_stream_eval(ws, "t01", "random/seed0", "window:1")
    got = [r.getMessage() for r in caplog.records if r.name == progress.LOGGER]
    assert any(m.startswith("t01 window:1: 8/8 (100%)") for m in got), got


def test_eval_stream_says_when_the_context_budget_cut_documents(tmp_path):
    """``full`` reads every earlier document only while they fit the character budget; where
    they do not, the oldest are left out, and the run counts and the CLI says so (on real news
    days ``full`` then reads like a recency window)."""
    from okgen.cli.main import cli
    from okgen.streams.evaluate import run_stream_eval

    ws = Workspace(tmp_path / "ws")
    import_oaks(ws, write(tmp_path, [DOC]), "t01")
    from okgen.errors import LockedError
    from okgen.eval.rundir import folder_lock

    with folder_lock(ws, tmp_path / "locked"), pytest.raises(LockedError, match="another okgen eval --stream is writing"):
        run_stream_eval(ws, "t01", "random/seed0", "full", out=tmp_path / "locked")  # as a second process would
    res = run_stream_eval(ws, "t01", "random/seed0", "full", budget_chars=60)
    assert res["context_cut"]["pairs"] > 0 and res["context_cut"]["documents"] >= res["context_cut"]["pairs"]
    rows = [json.loads(line) for line in (Path(res["path"]) / "predictions.jsonl").read_text().splitlines()]
    assert sum(r["left_out"] for r in rows) == res["context_cut"]["documents"]
    assert all(r["left_out"] == 0 for r in rows if r["interval"] == 0)  # one document: nothing to leave out
    r = CliRunner().invoke(cli, ["--home", str(ws.home), "eval", "--stream", "t01", "-m", "random/seed0",
                                 "--setting", "full", "--out", str(tmp_path / "o")])
    assert r.exit_code == 0 and "warning: full" not in r.stderr, r.output  # the default budget holds this stream
    r = CliRunner().invoke(cli, ["--home", str(ws.home), "eval", "--stream", "t01", "-m", "random/seed0",
                                 "--setting", "full", "--out", str(tmp_path / "o2"), "--context-chars", "60"])
    assert r.exit_code == 0, r.output
    assert f"warning: full: {res['context_cut']['pairs']} of 8 (question, interval) pairs read only the newest" in r.stderr
    assert json.loads((tmp_path / "o2" / "full" / "run.json").read_text())["config"]["budget_chars"] == 60
    r = CliRunner().invoke(cli, ["--home", str(ws.home), "eval", "--signature", "x", "-m", "random/seed0",
                                 "--context-chars", "60"])
    assert r.exit_code == 2 and "--context-chars is for --stream runs" in r.stderr


def test_a_stream_run_of_another_random_draw_is_not_put_beside_this_one(tmp_path):
    from okgen.cli.main import cli

    ws = Workspace(tmp_path / "ws")
    import_oaks(ws, write(tmp_path, [DOC]), "t01")
    base = ["--home", str(ws.home), "eval", "--stream", "t01", "-m", "random/seed0", "--setting"]
    r = CliRunner().invoke(cli, [*base, "none,full"])
    assert r.exit_code == 0, r.output
    run = ws.data_dir / "runs" / "streams" / "t01"
    full = next(run.rglob("full/results.json"))
    res = json.loads(full.read_text())
    assert res["answers_by"] == {"draw": DRAW}
    res["answers_by"] = None  # as an okgen before the draw by question wrote it
    full.write_text(json.dumps(res))
    r = CliRunner().invoke(cli, [*base, "window:1"])
    assert r.exit_code == 0, r.output
    report = (full.parent.parent / "report.md").read_text()
    assert "| none " in report and "| full " not in report and "not in it: full" in r.stderr
