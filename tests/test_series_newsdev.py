"""End to end on the five real news-dev days: ingest, offline generation, snapshots, a series,
okgen eval --series with the random baseline, and the timeline (skipped without shared/)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

NEWS = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "news-dev"
DAYS = [f"2025-04-1{i}" for i in range(5)]
# Records of each day's dump (they carry no date: --date gives it). The whole day: the offline
# generator keeps a question only with three plausible options from the day's near stories,
# and a 60-record slice leaves some days none.
PER_DAY = None

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not NEWS.is_dir(), reason="shared/data/news-dev is absent")]


def okgen(*args, home):
    r = subprocess.run([sys.executable, "-m", "okgen", "-q", "--home", str(home), *args], capture_output=True, text=True)
    return r


def test_news_dev_series_end_to_end(tmp_path):
    home = tmp_path / "ws"
    built = []  # the days with a snapshot
    for day in DAYS:
        records = json.loads((NEWS / f"news_{day}.json").read_text(encoding="utf-8"))[:PER_DAY]
        dump = tmp_path / f"{day}.json"
        dump.write_text(json.dumps(records), encoding="utf-8")
        for args in (("ingest", "--import", str(dump), "--date", day, "--map", "text=article_text", "--map", "url=link",
                      "--map", "source=news_site"),
                     ("generate", "--date", day, "--generator", "extractive"),
                     ("snapshot", "build", "--date", day, "--windows", "1,5")):
            r = okgen(*args, home=home)
            if args[0] == "generate" and r.returncode == 1 and "no question kept" in r.stderr:
                # The offline generator keeps only questions that pass every precision rule: a
                # quiet day may keep none, said in one line, and has no snapshot.
                assert len(r.stderr.strip().splitlines()) == 1, r.stderr
                break
            assert r.returncode == 0, (args, r.stderr)
        else:
            built.append(day)
    assert len(built) >= 3, built  # a series worth plotting
    gaps = ["--allow-gaps"] if len(built) < len(DAYS) else []
    # Each day's import is its own feed list: refused, named, then allowed explicitly.
    r = okgen("series", "build", "april", "--from", DAYS[0], "--to", DAYS[-1], *gaps, home=home)
    assert r.returncode == 1 and "differ in feeds" in r.stderr and "--allow-differ feeds" in r.stderr
    r = okgen("series", "build", "april", "--from", "2025-04-09", "--to", DAYS[-1], "--allow-differ", "feeds", home=home)
    assert r.returncode == 1 and "no snapshot: 2025-04-09" in r.stderr
    r = okgen("series", "build", "april", "--from", DAYS[0], "--to", DAYS[-1], "--allow-differ", "feeds", *gaps,
              home=home)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"series:april|from:2025-04-10|to:2025-04-14|days:{len(built)}|"
                               f"missing:{len(DAYS) - len(built)}|gen:extractive-v2")
    assert okgen("series", "verify", "april", home=home).returncode == 0
    r = okgen("--json", "eval", "--series", "april", "-m", "random/seed0", "--setting", "none,oracle", home=home)
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)
    assert [d["date"] for d in res["days"][::2]] == built and res["scored_now"] > 0
    again = json.loads(okgen("--json", "eval", "--series", "april", "-m", "random/seed0", "--setting", "none,oracle",
                             home=home).stdout)
    assert again["scored_now"] == 0
    r = okgen("--json", "timeline", res["path"], "--bucket", "day", "--estimate-cutoff", "--out", str(tmp_path / "rep"),
              home=home)
    assert r.returncode == 0, r.stderr
    tls = {t["run"]: t for t in json.loads(r.stdout)["timelines"]}
    assert [b["bucket"] for b in tls["none"]["buckets"]] == built
    assert tls["none"]["cutoff"]["hard"]["identified"] is False
    assert (tmp_path / "rep" / "timeline.png").stat().st_size > 10_000
