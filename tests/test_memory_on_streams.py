"""Dated contexts and memory agents on a stream: closed-form OAKS metrics on a synthetic entity,
stale/future rates, retention, the future guard and resuming (every (question, interval) once)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from okgen.cli.main import cli
from okgen.errors import ConfigError
from okgen.memory.base import Memory, article_passage
from okgen.memory.builtin import BM25Memory
from okgen.memory.harness import LeakError, StreamOptions
from okgen.memory.on_streams import read_rows, run_stream_memory, stream_articles
from okgen.settings import Workspace
from okgen.streams.evaluate import Setting, contexts, run_stream_eval, select
from okgen.testing.memory import (
    CEOS,
    STREAM_CHOICES,
    FirstArticleBackend,
    entity_stream_folder,
)
from okgen.testing.memory import PeekingMemory as Peeking

OAKS = ("acc", "al", "ds", "pm")


def oaks(res):
    return {k: round(res[k], 6) for k in OAKS}


@pytest.fixture(scope="module")
def harbor(tmp_path_factory):
    root = tmp_path_factory.mktemp("harbor")
    ws = Workspace(root / "ws")
    return ws, entity_stream_folder(ws), root


@pytest.fixture(scope="module")
def runs(harbor):
    ws, s, root = harbor
    b = FirstArticleBackend()
    return {st: run_stream_memory(s, st, b, root / st.replace(":", "-"))
            for st in ("none", "ctx:closest", "ctx:latest", "ctx:cumulative", "mem:full")}


def test_the_synthetic_stream_changes_three_times(harbor):
    _, s, _ = harbor
    q = s.questions[0]
    assert [q.choices[a] for a in q.answers] == [CEOS[0]] * 3 + [CEOS[1]] * 3 + [CEOS[2]] * 3 + [CEOS[3]]
    assert q.changes == 3 and len(s.manifest.intervals) == 10


def test_closest_is_an_oracle(runs):
    res = runs["ctx:closest"]
    assert oaks(res) == {"acc": 1.0, "al": 0.0, "ds": 0.0, "pm": 0.0}
    assert res["dated"]["gold_in_context"] == 1.0 and res["dated"]["future_context"] == 0.0
    assert res["rates"]["adaptability"] == 1.0 and res["rates"]["stability"] == 1.0
    assert res["transitions"]["adaptability"] == 3 and res["transitions"]["stability"] == 6


def test_latest_is_future_context_and_gives_the_newest_value(runs, harbor):
    res = runs["ctx:latest"]
    # Always Dmitri (the day-10 article): right on the last day only; every earlier phase missed.
    assert oaks(res) == {"acc": 0.1, "al": 0.0, "ds": 0.0, "pm": 0.9}
    assert res["dated"]["future_context"] == 0.9 and res["dated"]["by_interval"]["future_context"] == [1.0] * 9 + [0.0]
    assert res["dated"]["future_answer_rate"] == 1.0 and res["dated"]["with_future_choice"] == 9
    rows = read_rows(harbor[2] / "ctx-latest" / "predictions.jsonl")
    assert all(r["future_context"] == (r["interval"] < 9) for r in rows.values())


def test_cumulative_and_full_hold_every_value_and_a_first_article_reader_is_stale(runs, harbor):
    ws, s, root = harbor
    for st in ("ctx:cumulative", "mem:full"):
        res = runs[st]
        assert oaks(res) == {"acc": 0.3, "al": 0.0, "ds": 0.0, "pm": 0.7}, st
        # a stale option exists from the first change on (intervals 3..9): always picked
        assert res["dated"]["stale_answer_rate"] == 1.0 and res["dated"]["with_stale_choice"] == 7
        assert res["dated"]["by_interval"]["stale_answer_rate"] == [None] * 3 + [1.0] * 7
        assert res["rates"]["stubbornness"] == 1.0 and res["transitions"]["obstinacy"] == 4  # of 6 gold stays
    last = contexts(s, Setting.parse("ctx:cumulative"), 9, s.questions[0], 6000)
    assert all(any(c in x for x in last) for c in CEOS)
    assert [x.split("]")[0][1:11] for x in last] == sorted(x.split("]")[0][1:11] for x in last)  # oldest first


def test_no_context_reads_not_known_yet(runs):
    res = runs["none"]
    assert oaks(res) == {"acc": 0.0, "al": 0.0, "ds": 0.0, "pm": 1.0}
    assert res["dated"]["stale_answer_rate"] == 0.0 and res["dated"]["gold_in_context"] == 0.0


class FirstOnly(Memory):
    """Remembers the first article it ever observed and returns only that."""

    name = "first-only"

    def reset(self, seed):
        self.first = None

    def observe(self, day, articles):
        if self.first is None and articles:
            self.first = articles[0]

    def retrieve(self, query, as_of, k):
        return [article_passage(self.first)] if self.first else []

    def state(self):
        return {"first": self.first.model_dump(mode="json") if self.first else None}

    def restore(self, state):
        from okgen.schema import Article

        self.first = Article.model_validate(state["first"]) if state.get("first") else None


def test_a_memory_of_the_first_article_is_stale_after_the_first_change(harbor, tmp_path):
    _, s, _ = harbor
    res = run_stream_memory(s, "mem:first-only", FirstArticleBackend(), tmp_path, memory=FirstOnly())
    assert oaks(res) == {"acc": 0.3, "al": 0.0, "ds": 0.0, "pm": 0.7}
    assert res["dated"]["by_interval"]["stale_answer_rate"][3:] == [1.0] * 7
    assert res["cost_mean"]["memory_items"] == 0 and len(res["cost_per_day"]) == 10


def test_retention_by_age_of_the_needed_fact(tmp_path):
    ws = Workspace(tmp_path / "ws")
    s = entity_stream_folder(ws, "sparse", mentions=False, others=False)  # the value is reported on change days only
    res = run_stream_memory(s, "mem:recent,window=1", FirstArticleBackend(), tmp_path / "r")
    assert res["by_age"] == {"0": {"n": 4, "accuracy": 1.0}, "1": {"n": 3, "accuracy": 0.0},
                             "2": {"n": 3, "accuracy": 0.0}}
    assert oaks(res) == {"acc": 0.4, "al": 0.0, "ds": 0.6, "pm": 0.0}
    closest = run_stream_memory(s, "ctx:closest", FirstArticleBackend(), tmp_path / "c")
    assert oaks(closest)["acc"] == 1.0 and set(closest["by_age"]) == {"0", "1", "2"}


def test_eval_stream_ctx_settings_match_the_memory_harness(harbor, runs, tmp_path):
    ws, s, root = harbor
    for st in ("ctx:closest", "ctx:latest", "ctx:cumulative"):
        res = run_stream_eval(ws, "harbor", "stub/first-article", st, backend=FirstArticleBackend(), out=tmp_path / st)
        assert oaks(res) == oaks(runs[st]), st
        assert res["dated"]["stale_answer_rate"] == runs[st]["dated"]["stale_answer_rate"]
        assert res["dated"]["future_context"] == runs[st]["dated"]["future_context"]
        rows = [json.loads(x) for x in (tmp_path / st / "predictions.jsonl").read_text().splitlines()]
        assert all("context" in r and "gold_in_context" in r for r in rows)


def test_only_latest_shows_a_later_interval_and_says_so(harbor):
    _, s, _ = harbor
    q = s.questions[0]
    for t in range(10):
        for st in ("none", "full", "window:2", "retrieval:3", "ctx:closest", "ctx:cumulative"):
            assert all(d.interval <= t for d in select(s, Setting.parse(st), t, q)), (st, t)
        latest = select(s, Setting.parse("ctx:latest"), t, q)
        assert [d.interval for d in latest] == [9]
    with pytest.raises(ConfigError, match="ctx:closest, ctx:latest or ctx:cumulative"):
        Setting.parse("ctx:nearest")


def test_a_peeking_memory_is_caught_on_a_stream(harbor, tmp_path):
    _, s, _ = harbor
    everything = [a for day in stream_articles(s) for a in day if "Harbor Lights" in a.title]
    with pytest.raises(LeakError, match="saw the future"):
        run_stream_memory(s, "mem:peeking", FirstArticleBackend(), tmp_path / "a", memory=Peeking(everything))
    # Without the guard the leak goes through: the day-10 article reaches nine earlier intervals.
    res = run_stream_memory(s, "mem:peeking", FirstArticleBackend(), tmp_path / "b", StreamOptions(guard=False),
                            memory=Peeking(everything))
    assert res["dated"]["future_context"] == 0.9 and res["dated"]["future_answer_rate"] == 1.0

    class Ahead(Peeking):  # a later article, its date disguised as today's
        def retrieve(self, query, as_of, k):
            a = max(self.everything, key=lambda a: a.date)
            return [article_passage(a.model_copy(update={"date": as_of}))]

    with pytest.raises(LeakError, match="before it was observed"):
        run_stream_memory(s, "mem:ahead", FirstArticleBackend(), tmp_path / "c", memory=Ahead(everything))


class Interrupted(BM25Memory):
    """BM25 memory killed (KeyboardInterrupt) when it reaches ``die_on``."""

    def __init__(self, die_on=None, log=None):
        super().__init__()
        self.die_on, self.log = die_on, log if log is not None else []

    def observe(self, day, articles):
        if day == self.die_on:
            raise KeyboardInterrupt
        self.log.append(day)
        super().observe(day, articles)


def test_a_killed_stream_run_resumes_and_scores_each_pair_once(harbor, tmp_path):
    _, s, _ = harbor
    dates = [iv.date for iv in s.manifest.intervals]
    b = FirstArticleBackend()
    first: list = []
    with pytest.raises(KeyboardInterrupt):
        run_stream_memory(s, "mem:bm25", b, tmp_path, memory=Interrupted(dates[6], first))
    assert first == dates[:6]
    assert json.loads((tmp_path / "memory_state.json").read_text())["next_day"] == 6
    assert len((tmp_path / "predictions.jsonl").read_text().splitlines()) == 6
    second: list = []
    res = run_stream_memory(s, "mem:bm25", b, tmp_path, memory=Interrupted(None, second))
    assert second == dates[6:]
    lines = [json.loads(x) for x in (tmp_path / "predictions.jsonl").read_text().splitlines()]
    assert sorted((r["question_id"], r["interval"]) for r in lines) == [("q-harbor-ceo", t) for t in range(10)]
    assert res["scored"] == 10 and len(res["cost_per_day"]) == 10 and res["truncated"] == 0
    assert res["correct"] == round(10 * res["acc"])
    full = run_stream_memory(s, "mem:bm25", b, tmp_path / "full", memory=BM25Memory())
    assert oaks(full) == oaks(res) and full["dated"] == res["dated"]


def test_a_torn_last_line_is_dropped_and_rescored(harbor, tmp_path):
    _, s, _ = harbor
    b = FirstArticleBackend()
    run_stream_memory(s, "ctx:closest", b, tmp_path)
    state = json.loads((tmp_path / "memory_state.json").read_text())
    state["next_day"], state["costs"] = 9, state["costs"][:9]
    (tmp_path / "memory_state.json").write_text(json.dumps(state))
    text = (tmp_path / "predictions.jsonl").read_text().splitlines()
    (tmp_path / "predictions.jsonl").write_text("\n".join(text[:9]) + "\n" + text[9][:20])  # killed mid-write
    res = run_stream_memory(s, "ctx:closest", b, tmp_path)
    assert res["scored"] == 10 and oaks(res)["acc"] == 1.0
    assert len((tmp_path / "predictions.jsonl").read_text().splitlines()) == 10


def test_ask_end_and_other_folders_are_refused(harbor, tmp_path):
    _, s, _ = harbor
    with pytest.raises(ConfigError, match="--ask end does not apply"):
        run_stream_memory(s, "mem:bm25", FirstArticleBackend(), tmp_path, StreamOptions(ask="end"))
    run_stream_memory(s, "mem:bm25", FirstArticleBackend(), tmp_path / "x")
    with pytest.raises(ConfigError, match="holds another run"):
        run_stream_memory(s, "mem:bm25", FirstArticleBackend(), tmp_path / "x", StreamOptions(k=2))


def test_structured_memory_on_a_stream(harbor, tmp_path):
    from okgen.memory.structured import KOQAware
    from tests.test_memory_stream import regex_facts

    _, s, _ = harbor
    qa = KOQAware(extract=regex_facts)
    res = run_stream_memory(s, "mem:ko-qaware", FirstArticleBackend(), tmp_path, StreamOptions(k=1), memory=qa)
    assert qa.targets and qa.targets[0] == ("Harbor Lights Company", STREAM_CHOICES)
    assert res["scored"] == 10 and res["dated"]["with_gold_evidence"] == 10


@pytest.mark.slow  # two CLI calls over five settings (~10 s)
def test_memory_eval_stream_cli(harbor, tmp_path):
    ws, s, _ = harbor
    out = tmp_path / "runs"
    args = ["--home", str(ws.home), "--json", "memory", "eval", "--stream", "harbor", "-m", "random/seed0",
            "--setting", "none,ctx:closest,ctx:latest,ctx:cumulative", "--memory", "bm25", "--k", "2",
            "--out", str(out)]
    r = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert r.exit_code == 0, r.output
    res = json.loads(r.stdout)
    by = {row["setting"]: row for row in res["rows"]}
    assert set(by) == {"none", "ctx:closest", "ctx:latest", "ctx:cumulative", "mem:bm25"}
    for row in by.values():
        assert row["n"] == 1 and row["acc"] + row["al"] + row["ds"] + row["pm"] == pytest.approx(1.0)
    assert by["none"]["gain_over_none"] == 0.0 and by["ctx:latest"]["future_context"] == 0.9
    assert {t["setting"] for t in res["transitions"]} == set(by)
    md = (out / "comparison.md").read_text()
    assert "| AL | DS | PM |" in md and "adaptability" in md
    r2 = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert json.loads(r2.stdout)["rows"] == res["rows"]
    assert len((out / "mem-bm25" / "predictions.jsonl").read_text().splitlines()) == 10
    bad = CliRunner().invoke(cli, ["--home", str(ws.home), "memory", "eval", "--stream", "harbor", "--series", "x",
                                   "-m", "random/seed0"])
    assert bad.exit_code == 2 and "exactly one of --series and --stream" in bad.output
    bad = CliRunner().invoke(cli, ["--home", str(ws.home), "memory", "eval", "--stream", "harbor", "-m", "random/seed0",
                                   "--ask", "end"])
    assert bad.exit_code == 1 and "--ask end does not apply" in str(bad.exception)


def test_an_imported_undated_oaks_stream(tmp_path):
    from okgen.streams.oaks import import_oaks
    from okgen.streams.store import open_stream, streams_dir
    from tests.test_stream_oaks import DOC, write

    ws = Workspace(tmp_path / "ws")
    import_oaks(ws, write(tmp_path, [DOC]), "t01")
    s = open_stream(streams_dir(ws) / "t01")
    q = s.questions[0]  # no track: every chunk is about it
    assert [d.interval for d in select(s, Setting.parse("ctx:closest"), 2, q)] == [2]
    assert [d.interval for d in select(s, Setting.parse("ctx:latest"), 0, q)] == [3]
    assert [d.interval for d in select(s, Setting.parse("ctx:cumulative"), 2, q)] == [0, 1, 2]
    res = run_stream_memory(s, "mem:recent,window=1", FirstArticleBackend(), tmp_path / "r")
    assert res["scored"] == 8 and [c["date"] for c in res["cost_per_day"]][:2] == ["2000-01-01", "2000-01-02"]
    row = read_rows(tmp_path / "r" / "predictions.jsonl")[(q.id, 1)]
    assert row["label"] == "chunk 1" and row["gold_in_context"] is True and row["context"] == ["T01/1"]
    # gold evidence: "Rome" is stated in chunk 1; "Oslo" (chunk 0) has no recorded source
    assert res["dated"]["with_gold_evidence"] == 3 and res["dated"]["by_interval"]["gold_in_context"][0] is None


KILLED_RUN = """
import os, signal, sys
from okgen.memory.builtin import BM25Memory
from okgen.memory.on_streams import run_stream_memory
from okgen.settings import Workspace
from okgen.streams.store import open_stream, streams_dir
from okgen.testing.memory import FirstArticleBackend

class Dies(BM25Memory):
    def observe(self, day, articles):
        if str(day) == sys.argv[3]:
            os.kill(os.getpid(), signal.SIGKILL)  # no cleanup, no finally: as when the machine dies
        super().observe(day, articles)

s = open_stream(streams_dir(Workspace(sys.argv[1])) / "harbor")
run_stream_memory(s, "mem:bm25", FirstArticleBackend(), sys.argv[2], memory=Dies())
"""


@pytest.mark.slow
def test_a_sigkilled_stream_run_resumes_and_scores_each_pair_once(harbor, tmp_path):
    import os
    import signal
    import subprocess
    import sys
    from pathlib import Path

    ws, s, _ = harbor
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parents[1]), os.environ.get("PYTHONPATH", "")])}
    run = [sys.executable, "-c", KILLED_RUN, str(ws.home), str(tmp_path)]
    p = subprocess.run([*run, str(s.manifest.intervals[7].date)], env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == -signal.SIGKILL, p.stderr
    assert json.loads((tmp_path / "memory_state.json").read_text())["next_day"] == 7
    p = subprocess.run([*run, "never"], env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    lines = [json.loads(x) for x in (tmp_path / "predictions.jsonl").read_text().splitlines()]
    assert sorted(r["interval"] for r in lines) == list(range(10))
    res = json.loads((tmp_path / "results.json").read_text())
    assert res["scored"] == 10 and len(res["cost_per_day"]) == 10


def test_memory_runs_report_progress_day_by_day(tmp_path, caplog, monkeypatch):
    """A memory run can take minutes a day: a progress line per day (``OKGEN_PROGRESS_SECONDS``
    0 here), with done/total days."""
    import logging

    from okgen import progress

    monkeypatch.delenv("OKGEN_QUIET", raising=False)
    monkeypatch.setenv("OKGEN_PROGRESS_SECONDS", "0")
    monkeypatch.setattr(progress.log, "level", logging.INFO)
    caplog.set_level(logging.INFO, logger=progress.LOGGER)
    ws = Workspace(tmp_path / "ws")
    s = entity_stream_folder(ws, "sparse", mentions=False, others=False)
    run_stream_memory(s, "mem:recent,window=1", FirstArticleBackend(), tmp_path / "r")
    got = [r.getMessage() for r in caplog.records if r.name == progress.LOGGER]
    days = len(s.manifest.intervals)
    assert any(m.startswith(f"{tmp_path.name}/r: {days}/{days} (100%)") for m in got), got
