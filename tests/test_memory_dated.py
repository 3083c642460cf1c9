"""Dated contexts (ctx:closest / ctx:latest / ctx:cumulative) on a synthetic entity whose value changes."""

from __future__ import annotations

import pytest

from okgen.eval.runner import RunSpec, plan_runs, read_predictions, run_eval
from okgen.memory.dated import Pool, entity_of_question
from okgen.settings import Workspace
from okgen.signature import parse_any
from okgen.testing.memory import CEOS, ENTITY, FirstArticleBackend, day, entity_stream
from okgen.testing.retrieval import snapshot_from


@pytest.fixture(scope="module")
def outs(tmp_path_factory):
    """``okgen eval`` on the day-10 snapshot (10-day window): the pool is its corpus."""
    ws = Workspace(tmp_path_factory.mktemp("ws"))
    arts, qs = entity_stream()
    snap = snapshot_from(ws, arts, qs[-1:], date=day(10), windows=(10,))
    runs = [RunSpec(s) for s in ("none", "ctx:closest", "ctx:latest", "ctx:cumulative")]
    res = run_eval(snap.signature.format(), "stub/first-article", runs, workspace=ws, backend=FirstArticleBackend())
    return {o.record.extra["run"]["setting"]: o for o in res}, qs[-1:], arts


def _picked(o, qs):
    preds = read_predictions(o.path / "predictions.jsonl")
    return {q.id: q.choices[preds[q.id].pred_index] for q in qs}, preds


def test_entity_is_the_longest_name():
    assert entity_of_question(f"Who did {ENTITY} name as its chief executive?") == ENTITY
    assert entity_of_question("What did the Bank of England decide on Thursday?") == "Bank of England"
    assert entity_of_question("what happened?") is None
    assert entity_of_question("Who won in Ohio, as reported on April 10, 2025?") == "Ohio"


def test_closest_and_latest_give_the_gold_on_the_snapshot_day(outs):
    by, qs, _ = outs
    for s in ("ctx:closest", "ctx:latest"):
        assert by[s].record.accuracy == 1.0
        assert by[s].record.extra["dated"]["future_context"] == 0.0
        assert by[s].record.extra["dated"]["gold_in_context"] == 1.0


def test_cumulative_holds_all_values_oldest_first_and_the_stub_is_stale(outs):
    by, qs, arts = outs
    picked, preds = _picked(by["ctx:cumulative"], qs)
    last = preds["q-ceo-10"]
    dates = [next(a.date for a in arts if a.id == i) for i in last.retrieved]
    assert dates == sorted(dates) and len(last.retrieved) == 10  # every Harbor Lights article of days 1-10
    pool = Pool.of(arts)
    text = "\n".join(pool.articles[i].text for i in last.retrieved)
    assert all(c in text for c in CEOS)
    assert set(picked.values()) == {CEOS[0]}  # the stub reads the oldest article
    d = by["ctx:cumulative"].record.extra["dated"]
    assert d["stale_answer_rate"] == 1.0 and d["with_stale_choice"] == 1
    assert d["cumulative_policy"] == "drop-oldest"


def test_signature_names_the_dated_setting(outs):
    by, _, _ = outs
    sig = parse_any(by["ctx:latest"].record.signature)
    assert sig.setting == "ctx:latest"
    assert parse_any(sig.format()) == sig and parse_any(sig.format(short=True)) == sig
    assert by["ctx:latest"].path.name.startswith("ctx-latest-")


def test_cumulative_drops_oldest_first_when_the_window_is_small(tmp_path):
    class Small(FirstArticleBackend):
        @property
        def max_length(self):
            return 160

    ws = Workspace(tmp_path)
    arts, qs = entity_stream()
    snap = snapshot_from(ws, arts, qs[-1:], date=day(10), windows=(10,))
    (o,) = run_eval(snap.signature.format(), "stub/first-article", [RunSpec("ctx:cumulative")], workspace=ws,
                    backend=Small())
    last = read_predictions(o.path / "predictions.jsonl")["q-ceo-10"]
    assert last.truncated and 0 < len(last.retrieved) < 10
    assert last.retrieved[-1] == qs[-1].article_id  # the question's own (newest) article stays
    assert o.record.truncated == 1


def test_unknown_setting_is_refused():
    from okgen.errors import ConfigError

    with pytest.raises(ConfigError, match="ctx:closest"):
        plan_runs(["ctx:nearest"])


def test_series_eval_runs_dated_settings_day_by_day(tmp_path):
    """`okgen eval --series` with ctx settings: each day's pool is that day's snapshot window."""
    from okgen.series.evaluate import run_series_eval
    from okgen.testing.memory import entity_series

    ws = Workspace(tmp_path)
    entity_series(ws)
    out = run_series_eval("entity", "stub/first-article", [RunSpec("ctx:latest"), RunSpec("ctx:cumulative")],
                          workspace=ws, backend=FirstArticleBackend())
    acc = {(d["date"], d["run"]): d["accuracy"] for d in out.days if d["n"]}
    assert acc[("2026-01-07", "ctx-latest")] == 1.0  # no day after the question in that day's window
    assert acc[("2026-01-07", "ctx-cumulative")] == 0.0  # the oldest article says Alice Moreau
    assert sum(d["n"] for d in out.days) == 8


def test_cumulative_puts_the_questions_own_article_last_on_its_day():
    from okgen.testing.retrieval import article

    arts, qs = entity_stream()
    q = qs[-1]
    same_day = [article(f"{ENTITY} shares rise {i}", f"{ENTITY} shares rose on day ten ({i}).", q.date, key=f"x{i}")
                for i in range(3)]
    got = Pool.of(arts + same_day).cumulative(q)
    assert got[-1].id == q.article_id and {a.id for a in same_day} <= {a.id for a in got}


def test_eval_prints_the_stale_and_future_answer_rates_of_a_dated_run(tmp_path):
    import json

    from click.testing import CliRunner

    from okgen.cli.main import cli

    ws = Workspace(tmp_path)
    arts, qs = entity_stream()
    snap = snapshot_from(ws, arts, qs[-1:], date=day(10), windows=(10,))
    args = ["--home", str(tmp_path), "eval", "-s", snap.signature.format(), "-m", "random/seed0",
            "--setting", "ctx:latest", "--out", str(tmp_path / "run")]
    r = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert r.exit_code == 0, r.output
    d = json.loads((tmp_path / "run" / "results.json").read_text())["extra"]["dated"]
    line = next(ln for ln in r.stdout.splitlines() if ln.startswith("ctx:latest: stale-answer rate"))
    stale = "-" if d["stale_answer_rate"] is None else f"{d['stale_answer_rate']:.3f} (of {d['with_stale_choice']} with one)"
    assert f"stale-answer rate {stale}," in line and "future-answer rate" in line, line
