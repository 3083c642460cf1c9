"""What `okgen index` and `okgen retrieval-eval` tell the reader: windows shorter than their
name, -q, reused indexes, leftovers of killed builds, usage errors and small output details."""

from __future__ import annotations

import datetime as dt
import json
import os
import stat

import pytest

from okgen.retrieval.evaluate import compare_retrievers
from okgen.retrieval.index import open_index
from okgen.schema import Question
from okgen.testing.retrieval import article, snapshot_from
from tests.test_retrieval_cli import run

D = dt.date(2026, 3, 12)
TOWNS = ["Rivertown", "Lakeport", "Orbis", "Norvik"]


def _news(day: dt.date, town: str, n: int) -> list:
    return [article(f"{town} council item {i}", f"The {town} council voted on item {i} about the harbour "
                    f"ferry and the {town} library roof on {day:%A}.", day, key=f"{town}-{day}-{i}") for i in range(n)]


def _question(a, town: str, date: dt.date) -> Question:
    return Question(id=Question.make_id(a.id, "q"), article_id=a.id, date=date, source="test",
                    question=f"Which council voted on the {town} library roof?",
                    choices=(town, "Westfold", "Eastmere", "Southby"), answer_index=0, answer=town,
                    short_answer=town, generator="test")


@pytest.fixture
def two_days(workspace):
    """A snapshot dated D whose store holds news of D - 1 and D only, built with 1/5/10-day windows."""
    old, new = _news(D - dt.timedelta(days=1), "Rivertown", 3), _news(D, "Lakeport", 3)
    return snapshot_from(workspace, old + new, [_question(new[0], "Lakeport", D)], date=D)


# -------------------------------------------------------------- item 4: short windows
def test_a_window_longer_than_the_stored_news_says_which_days_it_covers(workspace, two_days):
    report = compare_retrievers(two_days, workspace, ["bm25"], [1, 5, 10], [1])
    ten = report.coverage[10]
    assert (ten.first, ten.last, ten.news_days, ten.articles, ten.short) == (D - dt.timedelta(days=1), D, 2, 6, True)
    assert not report.coverage[1].short
    data = report.to_dict()
    assert data["coverage"][2] == {"window": 10, "first": "2026-03-11", "last": "2026-03-12", "news_days": 2,
                                   "articles": 6}
    assert {r["window"]: r["news_days"] for r in data["rows"]} == {1: 1, 5: 2, 10: 2}
    md = report.to_markdown()
    assert "| 1-day hit | 1-day MRR | 5-day‡ hit | 5-day‡ MRR | 10-day‡ hit | 10-day‡ MRR |" in md
    assert "10-day‡: 6 (2 days of news, 2026-03-11..2026-03-12)" in md and "1-day: 3 (1 day of news, 2026-03-12)" in md


def test_retrieval_eval_and_index_build_warn_once_per_short_window(capsys, workspace, two_days, tmp_path):
    ref = two_days.manifest.content_hash[:12]
    code, _, err = run(capsys, "retrieval-eval", "--signature", ref, "--retrievers", "bm25,bm25-passages",
                       "--windows", "1,5,10", "--k", "1", "--no-plot", "--out", str(tmp_path / "r"))
    assert code == 0, err
    warnings = [line for line in err.splitlines() if "warning" in line]
    assert warnings == ["okgen: warning: the 5-day window of 2026-03-12 covers 2 days of stored news "
                        "(2026-03-11..2026-03-12)",
                        "okgen: warning: the 10-day window of 2026-03-12 covers 2 days of stored news "
                        "(2026-03-11..2026-03-12)"]
    code, _, err = run(capsys, "index", "build", "--signature", ref, "--retriever", "bm25,bm25-passages",
                       "--window", "1,10")
    assert code == 0 and [line for line in err.splitlines() if "warning" in line] == warnings[1:]


# ------------------------------------------------------------------- item 5: -q
def test_quiet_leaves_warnings_only(capsys, workspace, two_days, tmp_path):
    ref = two_days.manifest.content_hash[:12]
    args = ["retrieval-eval", "--signature", ref, "--retrievers", "dpr", "--windows", "1,5", "--k", "1", "--no-plot"]
    code, _, err = run(capsys, "-q", *args, "--out", str(tmp_path / "q"))
    assert code == 0 and err.splitlines() == ["okgen: warning: the 5-day window of 2026-03-12 covers 2 days of "
                                              "stored news (2026-03-11..2026-03-12)"]
    code, _, err = run(capsys, *args, "--out", str(tmp_path / "loud"))
    assert code == 0 and "dpr, 1-day window: existing index reused" in err and "okgen: wrote " in err
    code, _, err = run(capsys, "-q", "index", "build", "--signature", ref, "--retriever", "dpr", "--window", "1")
    assert code == 0 and err == ""


# -------------------------------------------------------- item 8: reused vs built
def test_a_reused_dense_index_reports_its_vectors_and_says_reused(capsys, workspace, two_days, tmp_path):
    ref = two_days.manifest.content_hash[:12]
    code, out, err = run(capsys, "index", "build", "--signature", ref, "--retriever", "bm25,dpr", "--window", "1",
                         "--json")
    first = {r["retriever"]: r for r in json.loads(out)}
    assert code == 0 and {r["status"] for r in first.values()} == {"built"} and first["dpr"]["build_s"] is not None
    code, out, err = run(capsys, "index", "build", "--signature", ref, "--retriever", "bm25,dpr", "--window", "1",
                         "--json")
    again = {r["retriever"]: r for r in json.loads(out)}
    units = again["dpr"]["units"]
    assert code == 0 and {r["status"] for r in again.values()} == {"reused"}
    assert (again["dpr"]["encoded"], again["dpr"]["reused"], again["dpr"]["build_s"]) == (0, units, None)
    assert again["bm25"]["build_s"] is None and again["bm25"]["built_at"] == first["bm25"]["built_at"]
    assert "okgen: dpr, 1-day window: existing index reused (built " in err
    code, out, err = run(capsys, "retrieval-eval", "--signature", ref, "--retrievers", "dpr", "--windows", "1",
                         "--k", "1", "--no-plot", "--json", "--out", str(tmp_path / "r"))
    cell = json.loads(out)["cells"][0]
    assert code == 0 and cell["reused"] is True and (cell["encoded_units"], cell["reused_vectors"]) == (0, units)
    assert f"okgen: dpr, 1-day window: existing index reused ({units} passage vectors); 1 query encoded, 0 reused" in err
    assert f"- dpr, 1-day: existing index reused ({units} passage vectors); queries 1 / 0" in \
        (tmp_path / "r" / "retrieval.md").read_text()


# ------------------------------------------------- item 6: killed builds' leftovers
def test_the_next_build_removes_a_killed_builds_temporary_folder_and_waits_for_a_live_one(workspace, two_days):
    import threading

    from okgen.retrieval.index import index_folder
    from okgen.retrieval.specs import load_spec

    folder = index_folder(workspace, two_days.manifest.content_hash, 1, load_spec("bm25", workspace))
    stale = folder.with_name(f".{folder.name}.k1ll3d.tmp")
    (stale / "bm25s").mkdir(parents=True)
    other = folder.with_name(f".{folder.name}0.x.tmp")  # another index's name with the same prefix: not ours
    other.mkdir()
    assert not open_index(two_days, "bm25", 1, workspace).reused
    assert not stale.exists() and other.is_dir()
    assert sorted(p.name for p in folder.parent.iterdir() if p.name.startswith(f".{folder.name}.")) == \
        [f".{folder.name}.lock"]
    # Two builds of one index at once: one builds, the other waits for it and reuses its index.
    got: list = []
    threads = [threading.Thread(target=lambda: got.append(open_index(two_days, "bm25", 1, workspace, rebuild=False)))
               for _ in range(2)]
    import shutil

    shutil.rmtree(folder)
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(i.reused for i in got) == [False, True]


# ----------------------------------------------------- item 14: errors and exit codes
def test_index_errors_are_usage_errors_without_an_empty_table_and_name_the_remedy(capsys, workspace, two_days):
    ref = two_days.manifest.content_hash[:12]
    code, _, err = run(capsys, "index", "search", "--signature", ref, "--retriever", "bm25", "--window", "1",
                       "-k", "0", "Lakeport")
    assert code == 2 and "-k must be >= 1, got 0" in err
    code, out, err = run(capsys, "index", "build", "--signature", ref, "--retriever", "bm25", "--window", "11")
    assert code == 1 and out == "" and "holds the articles of the 10-day window only" in err
    idx = open_index(two_days, "bm25", 1, workspace)
    data = next(p for p in idx.folder.rglob("*.npy"))
    data.write_bytes(data.read_bytes()[:-4] + b"\0\0\0\1")
    code, out, err = run(capsys, "index", "build", "--signature", ref, "--retriever", "bm25", "--window", "1")
    assert code == 1 and out == ""
    assert f"rebuild it with: okgen index build --signature {ref} --retriever bm25 --window 1 --rebuild" in err


# ------------------------------------------------------------ item 15: output nits
def test_index_ls_is_sorted_by_date_and_index_folders_follow_the_umask(capsys, workspace):
    snaps = []
    for back, town in enumerate(TOWNS[:3]):  # dated D, D - 1, D - 2: content hashes in no date order
        day = D - dt.timedelta(days=back)
        snaps.append(snapshot_from(workspace, _news(day, town, 2), date=day, windows=(1,)))
    hashes = [s.manifest.content_hash[:12] for s in snaps]
    assert sorted(hashes) != hashes[::-1]  # the folder order alone would not sort them by date
    old = os.umask(0o022)
    try:
        for s in snaps:
            open_index(s, "bm25", 1, workspace)
    finally:
        os.umask(old)
    code, out, _ = run(capsys, "index", "ls", "--json")
    assert code == 0 and [r["snapshot"] for r in json.loads(out)] == hashes[::-1]
    for s in snaps:
        folder = open_index(s, "bm25", 1, workspace).folder
        assert stat.S_IMODE(folder.stat().st_mode) == 0o755


def test_one_question_is_not_questions(workspace, two_days):
    md = compare_retrievers(two_days, workspace, ["bm25"], [1], [1]).to_markdown()
    assert md.splitlines()[0].endswith(", 1 question")


# ------------------------------------------------- per-question ranks, paired comparison
def test_each_question_rank_is_kept_and_two_retrievers_are_compared_on_the_same_questions(workspace, two_days):
    report = compare_retrievers(two_days, workspace, ["bm25", "bm25-passages"], [1], [1, 5])
    q = two_days.questions[0]
    for c in report.cells:
        assert set(c.ranks) == {q.id} and c.ranks[q.id] is not None and c.hits[5] == (c.ranks[q.id] <= 5)
    data = report.to_dict()
    assert data["cells"][0]["ranks"] == report.cells[0].ranks
    assert [(p["a"], p["b"], p["k"], p["n"]) for p in data["paired"]] == [("bm25", "bm25-passages", 1, 1),
                                                                          ("bm25", "bm25-passages", 5, 1)]


def test_the_paired_test_counts_the_questions_only_one_retriever_finds():
    from okgen.retrieval.evaluate import Cell, RetrievalReport, score_cell

    ids = [f"q{i}" for i in range(10)]
    a = Cell("bm25", 1, ranks={i: 1 for i in ids})  # finds all ten at rank 1
    b = Cell("dpr", 1, ranks={i: (1 if n < 4 else 3 if n < 6 else None) for n, i in enumerate(ids)})
    broken = Cell("colbert", 1, error="missing extra")
    for c in (a, b):
        score_cell(c, list(c.ranks.values()), [1, 5])
    rep = RetrievalReport(snapshot="s", snapshot_signature="sig", date="2026-03-12", n_questions=10,
                          with_choices=False, retrievers=["bm25", "dpr", "colbert"], windows=[1], ks=[1, 5],
                          cells=[a, b, broken])
    got = {p["k"]: p for p in rep.paired()}
    assert set(got) == {1, 5} and all(p["b"] == "dpr" for p in got.values())  # the failed cell is left out
    assert (got[1]["a_only"], got[1]["b_only"], got[1]["both"]) == (6, 0, 4)
    assert got[1]["p_value"] == pytest.approx(2 * 0.5 ** 6, abs=1e-4)  # exact two-sided McNemar
    assert (got[5]["a_only"], got[5]["b_only"], got[5]["both"]) == (4, 0, 6)
    assert got[5]["p_value"] == pytest.approx(2 * 0.5 ** 4, abs=1e-4)
    assert "| 1-day | 1 | bm25 | dpr | 6 | 0 | 4 | 0.0312 |" in rep.to_markdown()


def test_each_window_the_snapshot_lacks_names_itself_and_fails_only_itself(workspace, two_days):
    longest = max(two_days.manifest.windows)
    report = compare_retrievers(two_days, workspace, ["bm25"], [1, longest + 1, longest + 2], [1])
    errors = [c.error for c in report.cells]
    assert errors[0] is None
    assert f"a {longest + 1}-day window needs" in errors[1] and f"a {longest + 2}-day window needs" in errors[2]
