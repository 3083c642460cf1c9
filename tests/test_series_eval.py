"""okgen eval --series: one model load, every day scored once, clean resume after a kill;
timeline tables, plot and cutoff output."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
from collections import Counter

import pytest

from okgen.errors import ConfigError, IntegrityError
from okgen.eval.runner import EvalOptions, RunSpec
from okgen.models.base import parse_model_spec
from okgen.models.random_backend import RandomBackend
from okgen.series.evaluate import read_outcomes, run_series_eval
from okgen.series.store import build_series
from okgen.testing.series import day_snapshot

D0 = dt.date(2026, 3, 1)
DAYS = 4


def cli(*args, home):
    return subprocess.run([sys.executable, "-m", "okgen", "--home", str(home), *args], capture_output=True, text=True)


@pytest.fixture
def series(workspace):
    snaps = [day_snapshot(workspace, D0 + dt.timedelta(days=i), n_articles=12, per_article=2) for i in range(DAYS)]
    build_series(workspace, "march", D0, D0 + dt.timedelta(days=DAYS - 1))
    return snaps


class Killed(KeyboardInterrupt):
    pass


class CountingBackend(RandomBackend):
    """The real random backend, counting the prompts it scores; optionally killed after N calls."""

    loads = 0

    def __init__(self, spec, workspace=None, kill_after=None):
        super().__init__(spec, workspace)
        type(self).loads += 1
        self.calls, self.scored, self.kill_after = 0, 0, kill_after

    def letter_logprobs(self, prompts, labels):
        if self.kill_after is not None and self.calls >= self.kill_after:
            raise Killed
        self.calls += 1
        self.scored += len(prompts)
        return super().letter_logprobs(prompts, labels)


def test_series_eval_scores_every_day_once_and_resumes_after_a_kill(workspace, series, tmp_path):
    started = dt.datetime.now(dt.timezone.utc).date()
    spec = parse_model_spec("random/seed0")
    runs = [RunSpec("none"), RunSpec("oracle")]
    opts = EvalOptions(chunk_size=4)
    out = tmp_path / "run"
    total = sum(len(s.questions) for s in series) * len(runs)
    first = CountingBackend(spec, workspace, kill_after=5)
    with pytest.raises(Killed):
        run_series_eval("march", spec, runs, opts, workspace=workspace, out=out, backend=first)
    assert 0 < first.scored < total
    second = CountingBackend(spec, workspace)
    res = run_series_eval("march", spec, runs, opts, workspace=workspace, out=out, backend=second)
    assert first.scored + second.scored == total  # nothing scored twice, nothing left out
    lines = [json.loads(line) for f in out.rglob("predictions.jsonl") for line in f.read_text().splitlines()]
    assert len(lines) == total
    assert max(Counter((p["question_id"], p["setting"]) for p in lines).values()) == 1
    assert {d["date"] for d in res.days} == {str(D0 + dt.timedelta(days=i)) for i in range(DAYS)}
    # Done days are skipped outright: a third call scores nothing.
    third = CountingBackend(spec, workspace)
    again = run_series_eval("march", spec, runs, opts, workspace=workspace, out=out, backend=third)
    assert third.scored == 0 and again.scored_now == 0 and all(d["done_before"] for d in again.days)
    # ... and tell the numbers they had (a rerun prints them again, not blanks)
    assert [(d["n"], d["accuracy"]) for d in again.days] == [(d["n"], d["accuracy"]) for d in res.days]
    assert again.missing == []
    with pytest.raises(ConfigError, match="differs in scoring"):  # another scoring is not silently "done"
        run_series_eval("march", spec, runs, EvalOptions(scoring="loglik-full"), workspace=workspace, out=out,
                        backend=third)
    docs = read_outcomes([out])
    assert len(docs) == DAYS * len(runs)
    rows = [r for d in docs for r in d["rows"]]
    assert all(r["date"] == d["snapshot_date"] for d in docs for r in d["rows"])
    assert all(0 < r["soft_gold"] < 1 for r in rows)
    # The day the scoring ran (a run across midnight UTC may span two).
    days = {str(started), str(dt.datetime.now(dt.timezone.utc).date())}
    assert all(d["eval_date"] in days for d in docs)


def test_series_eval_refuses_a_tampered_member_before_loading(workspace, series, tmp_path):
    q = series[1].path / "questions.jsonl"
    q.write_text(q.read_text().replace('"question":"', '"question":"So, ', 1))
    CountingBackend.loads = 0
    with pytest.raises(IntegrityError, match="2026-03-02"):
        run_series_eval("march", "random/seed0", [RunSpec("none")], workspace=workspace, out=tmp_path / "r")
    assert not (tmp_path / "r").exists()


def test_cli_eval_series_then_timeline(workspace, series, tmp_path):
    out = tmp_path / "runs"
    r = cli("--json", "eval", "--series", "march", "-m", "random/seed0", "--setting", "none,oracle", "--out", str(out),
            home=workspace.home)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert got["scored_now"] == sum(len(s.questions) for s in series) * 2
    assert got["series_signature"].startswith("series:march|") and all(d["eval_signature"] for d in got["days"])
    r = cli("eval", "-m", "random/seed0", home=workspace.home)
    assert r.returncode == 2 and "exactly one of --signature and --series" in r.stderr
    rep = tmp_path / "rep"
    r = cli("--json", "timeline", str(out), "--bucket", "day", "--estimate-cutoff", "--claimed", "random/seed0=2026-03",
            "--out", str(rep), home=workspace.home)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    tls = {t["run"]: t for t in data["timelines"]}
    assert set(tls) == {"none", "oracle"}
    assert [b["bucket"] for b in tls["none"]["buckets"]] == [str(D0 + dt.timedelta(days=i)) for i in range(DAYS)]
    assert "only 4 day(s)" in tls["none"]["cutoff"]["hard"]["reason"]
    assert tls["none"]["claimed_cutoff"] == "2026-03-01"
    b = tls["none"]["buckets"][0]
    assert b["ci_low"] <= b["accuracy"] <= b["ci_high"]
    assert b["gap_oracle_minus_none"] == pytest.approx(tls["oracle"]["buckets"][0]["accuracy"] - b["accuracy"])
    for name in ("timeline.md", "timeline.csv", "timeline.json", "timeline.png"):
        assert (rep / name).stat().st_size > 0
    # What the numbers were scored on travels with them: the series, and each day-run's eval signature.
    from okgen.series.store import resolve_series

    sig = resolve_series("march", workspace)[0].signature
    assert tls["none"]["series_signatures"] == [sig] and len(tls["none"]["eval_signatures"]) == DAYS
    assert f"- `{sig}`" in (rep / "timeline.md").read_text()
    assert (rep / "timeline.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (rep / "timeline.csv").read_text().splitlines()[0].startswith("model,run,bucket")
    r = cli("timeline", str(out), "--claimed", "other/model=2024-06", home=workspace.home)
    assert r.returncode == 1 and "not a model of these runs" in r.stderr


def test_a_series_eval_whose_model_fails_to_load_leaves_no_empty_folder(workspace, series, tmp_path):
    from okgen.errors import OkgenError

    with pytest.raises(OkgenError, match="cannot load"):
        run_series_eval("march", f"hf/{tmp_path}/no-such-model", [RunSpec("none")], workspace=workspace)
    runs = workspace.data_dir / "runs"
    assert not runs.exists() or not any(runs.iterdir())
    # A folder that was there before keeps what it held.
    keep = tmp_path / "mine"
    keep.mkdir()
    (keep / "notes.txt").write_text("mine")
    with pytest.raises(OkgenError, match="cannot load"):
        run_series_eval("march", f"hf/{tmp_path}/no-such-model", [RunSpec("none")], workspace=workspace, out=keep)
    assert (keep / "notes.txt").read_text() == "mine"
    # A new nested --out goes whole; an empty folder that was there before stays.
    with pytest.raises(OkgenError, match="cannot load"):
        run_series_eval("march", f"hf/{tmp_path}/no-such-model", [RunSpec("none")], workspace=workspace,
                        out=tmp_path / "a" / "b" / "c")
    assert not (tmp_path / "a").exists()
    mine = workspace.data_dir / "runs" / "series"
    mine.mkdir(parents=True, exist_ok=True)
    with pytest.raises(OkgenError, match="cannot load"):
        run_series_eval("march", f"hf/{tmp_path}/no-such-model", [RunSpec("none")], workspace=workspace)
    assert mine.is_dir() and not any(mine.iterdir())


def test_outcomes_of_another_snapshot_of_the_day_are_not_taken_as_done(workspace, series, tmp_path):
    # The series was rebuilt (--overwrite) after a day was rebuilt: the day folder's outcomes are
    # of the old snapshot, and reusing them ("done before") would report questions never scored.
    out = tmp_path / "runs"
    run_series_eval("march", "random/seed0", [RunSpec("none")], workspace=workspace, out=out)
    day = out / str(D0 + dt.timedelta(days=1)) / "none" / "outcomes.json"
    doc = json.loads(day.read_text())
    current = doc["snapshot_signature"]
    doc["snapshot_signature"] = current.replace("ts:20260302T060000Z", "ts:20260302T050000Z")
    assert doc["snapshot_signature"] != current
    day.write_text(json.dumps(doc))
    with pytest.raises(ConfigError, match=r"another snapshot of 2026-03-02 \(ts: 2026-03-02 05:00:00\+00:00 \(now "
                                          r"2026-03-02 06:00:00\+00:00\)\).*move that folder aside"):
        run_series_eval("march", "random/seed0", [RunSpec("none")], workspace=workspace, out=out)
    res = run_series_eval("march", "random/seed0", [RunSpec("none")], EvalOptions(overwrite=True), workspace=workspace,
                          out=out)
    assert all(not d["done_before"] for d in res.days)
    assert json.loads(day.read_text())["snapshot_signature"] == current
