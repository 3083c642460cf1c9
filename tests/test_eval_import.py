"""``okgen snapshot import``: external multiple-choice JSONL to verified snapshots, then scored."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys

import pytest

from okgen.errors import ConfigError, SchemaError
from okgen.eval.importer import import_mc_jsonl
from okgen.eval.runner import EvalOptions, plan_runs, run_eval
from okgen.settings import Workspace
from okgen.snapshot.verify import verify_folder

ITEMS = [
    {"question": "Which city hosted the 2026 summit?", "choices": ["Lisbon", "Osaka", "Accra"], "answer": 1,
     "date": "2026-03-14", "source_url": "https://news.example.org/a1", "text": "The summit was held in Osaka on Friday.",
     "title": "Summit in Osaka", "source": "example"},
    {"question": "How many delegates attended?", "choices": ["120", "450", "900", "1,200"], "answer": "C",
     "date": "2026-03-14T09:30:00Z", "source_url": "https://news.example.org/a1",
     "text": "The summit was held in Osaka on Friday.", "extra_field": "ignored"},
    {"question": "Who chaired the summit?", "choices": ["Mei Zhou", "Rosa Novak"], "answer": "rosa novak",
     "date": "2026-03-14", "text": "Rosa Novak chaired the summit, with 900 delegates."},
    {"question": "What fell on Thursday?", "choices": ["Shares", "Bonds"], "answer": 0, "date": "2026-03-13",
     "url": "https://news.example.org/a2", "text": "Shares fell on Thursday as markets digested the news."},
    {"question": "No answer here", "choices": ["x", "y"], "answer": "z", "date": "2026-03-14"},
    {"question": "Only one choice", "choices": ["x"], "answer": 0, "date": "2026-03-14"},
]


def _write(path, items, broken=True):
    lines = [json.dumps(x) for x in items]
    if broken:
        lines.insert(2, "{not json")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_import_builds_verified_snapshots_per_date(tmp_path):
    ws = Workspace(tmp_path / "ws")
    f = _write(tmp_path / "newsqa.jsonl", ITEMS)
    with pytest.raises(ConfigError, match="spans 2 dates"):
        import_mc_jsonl(f, ws)
    res = import_mc_jsonl(f, ws, all_dates=True)
    assert res.items == 4 and [n for n, _ in res.skipped] == [3, 6, 7]
    assert "broken JSON" in res.skipped[0][1] and "neither an index" in res.skipped[1][1]
    by_date = {s.manifest.date: s for s in res.snapshots}
    assert set(by_date) == {dt.date(2026, 3, 13), dt.date(2026, 3, 14)}
    snap = by_date[dt.date(2026, 3, 14)]
    assert verify_folder(snap.path).ok
    qs = {q.question: q for q in snap.questions}
    assert len(qs) == 3
    assert qs["Which city hosted the 2026 summit?"].answer == "Osaka"
    assert qs["How many delegates attended?"].answer_index == 2
    assert qs["How many delegates attended?"].choices == ("120", "450", "900", "1,200")  # order kept
    assert qs["Who chaired the summit?"].answer == "Rosa Novak"
    # the two questions of one URL share its article; the earlier day's article is in the corpus too
    assert qs["Which city hosted the 2026 summit?"].article_id == qs["How many delegates attended?"].article_id
    assert len(snap.corpus) == 3 and snap.manifest.extra["import"]["skipped_lines"] == 3
    assert snap.signature.generator == "import/newsqa"
    again = import_mc_jsonl(f, ws, date=dt.date(2026, 3, 14))
    assert again.existing == [snap.name] and again.snapshots[0].path == snap.path  # same signature


def test_imported_sets_are_scored_with_the_same_machinery(tmp_path):
    ws = Workspace(tmp_path / "ws")
    snap = import_mc_jsonl(_write(tmp_path / "set.jsonl", ITEMS), ws, date=dt.date(2026, 3, 14)).snapshots[0]
    outs = run_eval(snap.signature.format(), "random/uniform", plan_runs(["none", "oracle", "retrieval"], ["bm25"], [5], [2]),
                    EvalOptions(), workspace=ws)
    assert [o.record.n for o in outs] == [3, 3, 3]
    assert outs[2].record.extra["gold_retrieved"] > 0


def test_strict_mode_and_the_cli(tmp_path):
    ws = Workspace(tmp_path / "ws")
    f = _write(tmp_path / "set.jsonl", ITEMS)
    with pytest.raises(SchemaError, match="set.jsonl:3: broken JSON"):
        import_mc_jsonl(f, ws, strict=True, all_dates=True)
    env = dict(os.environ, OKGEN_HOME=str(ws.home))
    res = subprocess.run([sys.executable, "-m", "okgen", "snapshot", "import", str(f), "--date", "2026-03-13", "--json"],
                         env=env, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    assert data["snapshots"][0]["questions"] == 1 and len(data["skipped"]) == 3
    res = subprocess.run([sys.executable, "-m", "okgen", "snapshot", "import", str(f), "--date", "2026-03-13"],
                         env=env, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    # each skipped line is told once (the importer's warnings), then counted
    assert res.stderr.count("set.jsonl:3 skipped") == 1 and "line 3" not in res.stderr, res.stderr
    assert "3 line(s) skipped (above)" in res.stderr, res.stderr
    res = subprocess.run([sys.executable, "-m", "okgen", "snapshot", "import", str(f), "--date", "2026-01-01"],
                         env=env, capture_output=True, text=True, timeout=120)
    assert res.returncode == 1 and "no question dated 2026-01-01" in res.stderr


def test_boolean_answers_and_empty_windows_are_refused(tmp_path):
    ws = Workspace(tmp_path / "ws")
    items = [{"question": "Q1?", "choices": ["x", "y"], "answer": True, "date": "2026-03-14"},
             {"question": "Q2?", "choices": ["x", "y"], "answer": 1, "date": "2026-03-14"}]
    f = _write(tmp_path / "b.jsonl", items, broken=False)
    res = import_mc_jsonl(f, ws)
    assert res.items == 1 and res.skipped[0][0] == 1 and "not true/false" in res.skipped[0][1]
    with pytest.raises(ConfigError, match="positive day counts"):
        import_mc_jsonl(f, ws, windows=())
    env = dict(os.environ, OKGEN_HOME=str(ws.home))
    out = subprocess.run([sys.executable, "-m", "okgen", "snapshot", "import", str(f), "--windows", ""],
                         env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 1 and "okgen: error: --windows needs at least one day count" in out.stderr


def test_questions_without_article_text_are_flagged_in_oracle_and_retrieval_runs(tmp_path, caplog):
    ws = Workspace(tmp_path / "ws")
    items = [{"question": "Which city hosted the summit on 14 March 2026?", "choices": ["Lisbon", "Osaka"],
              "answer": 1, "date": "2026-03-14", "url": "https://news.example.org/a1",
              "text": "The summit was held in Osaka on Friday."},
             {"question": "Who chaired the summit on 14 March 2026?", "choices": ["Mei Zhou", "Rosa Novak"],
              "answer": 1, "date": "2026-03-14", "url": "https://news.example.org/a2", "title": "Summit chair"}]
    snap = import_mc_jsonl(_write(tmp_path / "t.jsonl", items, broken=False), ws).snapshots[0]
    assert snap.manifest.extra["import"]["articles_without_text"] == 1
    with caplog.at_level("WARNING", logger="okgen.eval.runner"):
        none, oracle = run_eval(snap.signature.format(), "random/uniform", plan_runs(["none", "oracle"]),
                                EvalOptions(), workspace=ws)
    assert "1 of 2 questions" in caplog.text and "without text" in caplog.text
    assert oracle.record.extra["questions_without_article_text"] == 1
    assert "questions_without_article_text" not in none.record.extra
    caplog.clear()
    with caplog.at_level("WARNING", logger="okgen.eval.runner"):
        run_eval(snap.signature.format(), "random/uniform", plan_runs(["none"]), EvalOptions(), workspace=ws)
    assert "without text" not in caplog.text  # a no-context run does not need the articles
