"""The stream harness: dated contexts over days, memory agents, the future guard, resuming."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from okgen.errors import ConfigError
from okgen.memory.base import article_passage, load_memory
from okgen.memory.builtin import BM25Memory
from okgen.memory.harness import LeakError, StreamDay, StreamOptions, predictions_of, run_stream
from okgen.memory.report import compare, markdown
from okgen.testing.memory import CEOS, FirstArticleBackend, entity_stream
from okgen.testing.memory import PeekingMemory as Peeking


def stream() -> list[StreamDay]:
    arts, qs = entity_stream()
    dates = sorted({a.date for a in arts})
    return [StreamDay(d, [a for a in arts if a.date == d], [q for q in qs if q.date == d]) for d in dates]


def picked(path):
    days = stream()
    qs = {q.id: q for d in days for q in d.questions}
    return {i: qs[i].choices[p.pred_index] for i, p in predictions_of(path).items()}


@pytest.fixture(scope="module")
def dated(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    b = FirstArticleBackend()
    out = {}
    for s in ("none", "ctx:closest", "ctx:latest", "ctx:cumulative"):
        out[s] = (run_stream(stream(), s, b, root / s.replace(":", "-")), root / s.replace(":", "-"))
    return out


def test_closest_gives_the_gold(dated):
    res, _ = dated["ctx:closest"]
    assert res["accuracy"] == 1.0 and res["dated"]["gold_in_context"] == 1.0 and res["dated"]["future_context"] == 0


def test_latest_gives_the_newest_value_as_future_context(dated):
    res, path = dated["ctx:latest"]
    assert set(picked(path).values()) == {CEOS[-1]}
    assert res["dated"]["future_context"] == 0.75 and res["dated"]["future_answer_rate"] == 1.0


def test_cumulative_contains_every_value_and_a_first_article_model_is_stale(dated):
    res, path = dated["ctx:cumulative"]
    last = predictions_of(path)["q-ceo-10"]
    arts = {a.id: a for d in stream() for a in d.articles}
    text = "\n".join(arts[i].text for i in last.retrieved)
    assert all(c in text for c in CEOS)
    assert [arts[i].date for i in last.retrieved] == sorted(arts[i].date for i in last.retrieved)
    assert set(picked(path).values()) == {CEOS[0]}
    assert res["dated"]["stale_answer_rate"] == 1.0 and res["dated"]["with_stale_choice"] == 3


def test_compare_table_has_gain_over_none(dated):
    rows = compare([r for r, _ in dated.values()])
    by = {r["setting"]: r for r in rows}
    assert by["ctx:closest"]["gain_over_none"] == pytest.approx(1.0 - by["none"]["accuracy"])
    table = markdown(rows)
    assert "| ctx:closest | 4 | 100.0" in table
    # Each rate says how many questions it rests on.
    n = by["ctx:closest"]["with_stale_choice"]
    assert n is not None and f" (of {n}) |" in table.splitlines()[2 + [r["setting"] for r in rows].index("ctx:closest")]


def test_a_memory_that_peeks_at_the_future_is_caught(tmp_path):
    days = stream()
    everything = [a for d in days for a in d.articles]
    with pytest.raises(LeakError, match="saw the future"):
        run_stream(days, "mem:peeking", FirstArticleBackend(), tmp_path / "a", memory=Peeking(everything))
    # Without the guard the leak goes through unnoticed: future articles reach the context.
    res = run_stream(days, "mem:peeking", FirstArticleBackend(), tmp_path / "b", StreamOptions(guard=False),
                     memory=Peeking(everything))
    assert res["dated"]["future_context"] == 0.75


def test_a_memory_that_returns_an_unobserved_article_is_caught(tmp_path):
    days = stream()

    class Ahead(Peeking):
        def retrieve(self, query, as_of, k):  # an article of a later day, its date disguised as today
            a = max(self.everything, key=lambda a: a.date)
            return [article_passage(a.model_copy(update={"date": as_of}))]

    with pytest.raises(LeakError, match="before it was observed"):
        run_stream(days, "mem:ahead", FirstArticleBackend(), tmp_path, memory=Ahead([a for d in days for a in d.articles]))


def test_a_future_article_in_a_day_batch_never_reaches_observe(tmp_path):
    days = stream()
    days[0].articles.append(days[-1].articles[0])
    seen = []

    class Spy(BM25Memory):
        def observe(self, day, articles):
            seen.extend(articles)
            super().observe(day, articles)

    with pytest.raises(LeakError, match="about to be observed"):
        run_stream(days, "mem:bm25", FirstArticleBackend(), tmp_path, memory=Spy())
    assert seen == []


class Interrupted(BM25Memory):
    """BM25 memory that is killed (KeyboardInterrupt) when it reaches ``die_on``."""

    def __init__(self, die_on=None, log=None):
        super().__init__()
        self.die_on, self.log = die_on, log if log is not None else []

    def observe(self, day, articles):
        if day == self.die_on:
            raise KeyboardInterrupt
        self.log.append(day)
        super().observe(day, articles)


def test_killed_run_resumes_from_saved_state_and_scores_each_question_once(tmp_path):
    days = stream()
    b = FirstArticleBackend()
    first: list = []
    with pytest.raises(KeyboardInterrupt):
        run_stream(days, "mem:bm25", b, tmp_path, memory=Interrupted(days[5].date, first))
    assert first == [d.date for d in days[:5]]
    state = json.loads((tmp_path / "memory_state.json").read_text())
    assert state["next_day"] == 5 and len(state["state"]["articles"]) == 10
    assert len((tmp_path / "predictions.jsonl").read_text().splitlines()) == 2  # days 1 and 4
    second: list = []
    res = run_stream(days, "mem:bm25", b, tmp_path, memory=Interrupted(None, second))
    assert second == [d.date for d in days[5:]]  # days 1-5 come from the saved state
    lines = (tmp_path / "predictions.jsonl").read_text().splitlines()
    assert sorted(json.loads(x)["question_id"] for x in lines) == sorted(f"q-ceo-{n}" for n in (1, 4, 7, 10))
    assert res["n"] == 4 and len(res["cost_per_day"]) == 10
    # The same result as an uninterrupted run.
    full = run_stream(days, "mem:bm25", b, tmp_path / "full", memory=BM25Memory())
    assert full["accuracy"] == res["accuracy"]
    assert {k: v.pred_index for k, v in predictions_of(tmp_path / "full").items()} == \
           {k: v.pred_index for k, v in predictions_of(tmp_path).items()}


def test_builtin_memories_respect_as_of_and_windows(tmp_path):
    days = stream()
    for spec in ("none", "full", "recent,window=2", "bm25", "rag-recent,window=2"):
        m = load_memory(spec)
        m.reset(0)
        for d in days[:6]:
            m.observe(d.date, d.articles)
        got = m.retrieve("Who did Harbor Lights Company name as its chief executive?", days[4].date, 3)
        dates = [dt.date.fromisoformat(p.date) for p in got]
        assert all(x <= days[4].date for x in dates), spec
        if spec == "none":
            assert got == []
        if spec == "full":
            assert len(got) == 10
        if spec.startswith("recent"):
            assert set(dates) == {days[3].date, days[4].date}
        if spec == "bm25":
            assert 0 < len(got) <= 3 and "Harbor Lights" in got[0].text
        clone = load_memory(spec)
        clone.restore(json.loads(json.dumps(m.state())))
        assert clone.retrieve("Harbor Lights chief executive", days[4].date, 3) == \
               m.retrieve("Harbor Lights chief executive", days[4].date, 3)


def test_ask_at_end_measures_retention(tmp_path):
    res = run_stream(stream(), "mem:full", FirstArticleBackend(), tmp_path, StreamOptions(ask="end"))
    assert set(res["by_age"]) == {"0", "3", "6", "9"}


def test_bad_settings_are_refused(tmp_path):
    with pytest.raises(ConfigError, match="unknown memory eval setting"):
        run_stream(stream(), "ctx:nearest", FirstArticleBackend(), tmp_path)
    with pytest.raises(ConfigError, match="unknown memory 'nope'"):
        run_stream(stream(), "mem:nope", FirstArticleBackend(), tmp_path / "x")


def regex_facts(articles):
    """A stand-in extractor for the synthetic stream: '<org> said ... that <person> will lead'."""
    import re
    from types import SimpleNamespace

    out = []
    for a in articles:
        m = re.search(r"^(.+?) said on \w+ that (.+?) will lead the company as chief executive", a.text)
        if m:
            out.append(SimpleNamespace(subject=m.group(1), relation="holds_office", object=m.group(2), valid_from=None,
                                       reported=a.date, outlet=a.source, article_id=a.id, evidence=m.group(0)))
    return out


def test_structured_memory_blind_and_question_aware(tmp_path):
    from okgen.memory.structured import KOBlind, KOQAware

    days = stream()
    b = FirstArticleBackend()
    newest = run_stream(days, "mem:ko-blind", b, tmp_path / "k1", StreamOptions(k=1), memory=KOBlind(extract=regex_facts))
    assert newest["accuracy"] == 1.0 and newest["dated"]["gold_in_context"] == 1.0  # the newest entry is the gold
    allk = run_stream(days, "mem:ko-blind", b, tmp_path / "k5", StreamOptions(k=5), memory=KOBlind(extract=regex_facts))
    assert allk["dated"]["stale_answer_rate"] == 1.0  # oldest entry first: the stub reads the first value
    state = json.loads((tmp_path / "k5" / "memory_state.json").read_text())["state"]
    assert [e["object"] for e in state["entries"]] == list(CEOS)
    qa = KOQAware(extract=regex_facts)
    res = run_stream(days, "mem:ko-qaware", b, tmp_path / "qa", StreamOptions(k=1), memory=qa)
    assert qa.targets and qa.targets[0][0] == "Harbor Lights Company"
    assert any(e.relation == "mentions" for e in qa.entries)
    assert res["config"]["memory"]["memory"] == "ko-qaware" and res["n"] == 4


KILLED_RUN = """
import os, signal, sys
from okgen.memory.builtin import BM25Memory
from okgen.memory.harness import StreamDay, run_stream
from okgen.testing.memory import FirstArticleBackend, entity_stream

class Dies(BM25Memory):
    def observe(self, day, articles):
        if str(day) == sys.argv[2]:
            os.kill(os.getpid(), signal.SIGKILL)  # no cleanup, no finally: as when the machine dies
        super().observe(day, articles)

arts, qs = entity_stream()
dates = sorted({a.date for a in arts})
days = [StreamDay(d, [a for a in arts if a.date == d], [q for q in qs if q.date == d]) for d in dates]
run_stream(days, "mem:bm25", FirstArticleBackend(), sys.argv[1], memory=Dies())
"""


@pytest.mark.slow
def test_a_sigkilled_process_resumes_and_scores_each_question_once(tmp_path):
    import os
    import signal
    import subprocess
    import sys

    days = stream()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(__import__("pathlib").Path(__file__).parents[1]),
                                                        os.environ.get("PYTHONPATH", "")])}
    p = subprocess.run([sys.executable, "-c", KILLED_RUN, str(tmp_path), str(days[7].date)], env=env,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == -signal.SIGKILL, p.stderr
    assert json.loads((tmp_path / "memory_state.json").read_text())["next_day"] == 7
    p = subprocess.run([sys.executable, "-c", KILLED_RUN, str(tmp_path), "never"], env=env, capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    ids = [json.loads(x)["question_id"] for x in (tmp_path / "predictions.jsonl").read_text().splitlines()]
    assert sorted(ids) == sorted(f"q-ceo-{n}" for n in (1, 4, 7, 10))
    res = json.loads((tmp_path / "results.json").read_text())
    assert res["n"] == 4 and len(res["cost_per_day"]) == 10
