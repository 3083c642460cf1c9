"""``okgen index`` and ``okgen retrieval-eval`` end to end (bm25 and dpr; real snapshot, real files)."""

from __future__ import annotations

import datetime as dt
import json
import logging
import os

import pytest

from okgen.cli.main import main
from okgen.retrieval.evaluate import compare_retrievers
from okgen.settings import Workspace
from okgen.testing.retrieval import synthetic_snapshot

os.environ.setdefault("HF_HUB_OFFLINE", "1")
D = dt.date(2026, 11, 21)


@pytest.fixture
def snap(workspace):
    snapshot, _, _ = synthetic_snapshot(workspace, 50, D, days=10, seed=11)
    return snapshot


def run(capsys, *args: str) -> tuple[int, str, str]:
    try:
        with pytest.raises(SystemExit) as e:
            main(list(args))
    finally:  # the CLI's stderr handler points at this test's captured stream: drop it after
        root = logging.getLogger()
        for h in [h for h in root.handlers if getattr(h, "_okgen", False)]:
            root.removeHandler(h)
    out, err = capsys.readouterr()
    return e.value.code, out, err


def test_index_build_ls_search(capsys, workspace, snap):
    ref = snap.manifest.content_hash[:12]
    code, out, err = run(capsys, "index", "build", "--signature", ref, "--retriever", "bm25,bm25-passages",
                         "--window", "1,5", "--json")
    assert code == 0, err
    rows = json.loads(out)
    assert [(r["retriever"], r["window"]) for r in rows] == [("bm25", 1), ("bm25", 5), ("bm25-passages", 1), ("bm25-passages", 5)]
    assert all(r["error"] is None and r["articles"] == len(snap.window(r["window"])) for r in rows)
    code, out, _ = run(capsys, "index", "ls", "--json")
    listed = json.loads(out)
    assert code == 0 and len(listed) == 4 and {r["snapshot"] for r in listed} == {ref}
    q = snap.questions[0]
    code, out, _ = run(capsys, "--json", "index", "search", "--signature", snap.signature.short, "--retriever", "bm25",
                       "--window", "1", "-k", "3", q.question)
    hits = json.loads(out)
    assert code == 0 and [h["rank"] for h in hits] == [1, 2, 3] and hits[0]["article"] == q.article_id
    code, out, err = run(capsys, "index", "search", "--signature", ref, "--retriever", "bm25-passages", "--window", "1",
                         "--passages", "--no-build", q.question)
    assert code == 0 and q.article_id in out
    # stderr names the index that answered: spec, window, snapshot.
    assert f"okgen: bm25-passages (rspec {next(r['rspec'] for r in listed if r['retriever'] == 'bm25-passages')}), 1-day window of {snap.manifest.date} " in err
    assert f"snapshot {snap.name}" in err


def test_index_build_refuses_an_unknown_retriever_before_any_work(capsys, workspace, snap):
    code, out, err = run(capsys, "index", "build", "--signature", snap.manifest.content_hash[:12],
                         "--retriever", "bm25", "--retriever", "nope", "--window", "1", "--json")
    assert code == 1 and out.strip() == ""
    assert err.strip().splitlines() == ["okgen: error: no retriever spec named 'nope'; known: bm25-passages, bm25, "
                                        "colbert, dpr (or give a path to a .toml file)"]
    code, out, _ = run(capsys, "index", "ls", "--json")
    assert code == 0 and json.loads(out) == []  # bm25, named first, was not built either
    code, _, err = run(capsys, "index", "build", "--signature", "ffffffffffff", "--retriever", "bm25", "--window", "1")
    assert code == 1 and "no snapshot matches" in err and len(err.strip().splitlines()) == 1
    code, _, err = run(capsys, "index", "build", "--signature", snap.manifest.content_hash[:12], "--retriever", "bm25",
                       "--window", "1,x")
    assert code == 2 and "--window must be whole numbers" in err


def test_retrieval_eval_writes_json_markdown_and_plot(capsys, workspace, snap, tmp_path):
    out_dir = tmp_path / "report"
    code, out, err = run(capsys, "retrieval-eval", "--signature", snap.manifest.content_hash[:12],
                         "--retrievers", "bm25,dpr,nope", "--windows", "1,5,10", "--k", "1,3,5,10",
                         "--out", str(out_dir), "--json")
    # A misspelt retriever: one line, nothing written, no index built.
    assert code == 1 and out.strip() == "" and not out_dir.exists()
    assert err.strip().splitlines() == ["okgen: error: no retriever spec named 'nope'; known: bm25-passages, bm25, "
                                        "colbert, dpr (or give a path to a .toml file)"]
    code, out, err = run(capsys, "retrieval-eval", "--signature", snap.manifest.content_hash[:12],
                         "--retrievers", "bm25,dpr", "--windows", "1,5,10", "--k", "1,3,5,10",
                         "--out", str(out_dir), "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["kind"] == "okgen-retrieval-eval" and data["n_questions"] == len(snap.questions)
    assert data["snapshot_signature"] == snap.manifest.signature
    ok = [r for r in data["rows"] if r["error"] is None]
    assert len(ok) == 2 * 3 * 4 and all(r["n"] == len(snap.questions) for r in ok)
    bm25_1 = {r["k"]: r for r in ok if r["retriever"] == "bm25" and r["window"] == 1}
    assert bm25_1[10]["hit_rate"] >= bm25_1[3]["hit_rate"] >= bm25_1[1]["hit_rate"] > 0.5
    assert bm25_1[1]["mrr"] == pytest.approx(bm25_1[1]["hit_rate"])
    assert json.loads((out_dir / "retrieval.json").read_text())["rows"] == data["rows"]
    md = (out_dir / "retrieval.md").read_text()
    assert "| bm25 |" in md and "| dpr |" in md and "1-day hit" in md
    assert (out_dir / "retrieval.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # The indexes built for the eval are reused by a second run.
    code, out, _ = run(capsys, "retrieval-eval", "--signature", snap.manifest.content_hash[:12], "--retrievers", "bm25",
                       "--windows", "1", "--k", "1", "--out", str(tmp_path / "again"), "--json", "--no-build")
    assert code == 0 and json.loads(out)["cells"][0]["reused"] is True


def test_retrieval_eval_markdown_to_stdout_and_total_failure(capsys, workspace, snap, tmp_path):
    code, out, _ = run(capsys, "retrieval-eval", "--signature", snap.manifest.content_hash[:12], "--retrievers", "bm25",
                       "--windows", "1", "--k", "1,200", "--out", str(tmp_path / "md"), "--no-plot")
    assert code == 0 and out.startswith("### Retrieval: snapshot 2026-11-21")
    assert "†" in out  # k = 200 is more than the window's articles: flagged, not an error
    assert not (tmp_path / "md" / "retrieval.png").exists()
    code, _, err = run(capsys, "--home", str(tmp_path / "elsewhere"), "retrieval-eval", "--signature",
                       snap.manifest.content_hash[:12], "--retrievers", "bm25", "--windows", "1", "--k", "1")
    assert code == 1 and "no snapshot matches" in err
    bad = tmp_path / "broken.toml"  # a spec file that exists but does not load: every cell fails
    bad.write_text("not toml [\n", encoding="utf-8")
    code, _, err = run(capsys, "retrieval-eval", "--signature", snap.manifest.content_hash[:12], "--retrievers", str(bad),
                       "--windows", "1,5", "--k", "1", "--out", str(tmp_path / "fail"))
    assert code == 1 and "every retriever x window failed (first: " in err and "broken.toml" in err
    assert (tmp_path / "fail" / "retrieval.json").is_file()  # the failed table is still written


def test_compare_retrievers_matches_direct_search(workspace, snap):
    from okgen.retrieval.index import open_index

    report = compare_retrievers(snap, workspace, ["bm25"], [5], [1, 5], with_choices=True)
    idx = open_index(snap, "bm25", 5, workspace)
    queries = [q.question + " " + " ".join(q.choices) for q in snap.questions]
    hits = idx.search(queries, 5)
    expect = sum(any(h.doc_id == q.article_id for h in hs) for hs, q in zip(hits, snap.questions))
    cell = report.cell("bm25", 5)
    assert cell.hits[5] == expect and cell.n == len(snap.questions) and report.to_dict()["query"] == "question+choices"


def test_compare_retrievers_records_an_empty_window_and_goes_on(tmp_path):
    from okgen.schema import Question
    from okgen.testing.retrieval import article, snapshot_from

    ws = Workspace(tmp_path)
    a = article("Port strike ends", "Dock workers in Rotterdam ended their strike after a pay deal.", D - dt.timedelta(days=3))
    q = Question(id=Question.make_id(a.id, "q"), article_id=a.id, date=D, source="test",
                 question="Where did dock workers end a strike?", choices=("Rotterdam", "Osaka", "Accra", "Lisbon"),
                 answer_index=0, answer="Rotterdam", short_answer="Rotterdam", generator="test")
    snap = snapshot_from(ws, [a], [q], date=D)
    report = compare_retrievers(snap, ws, ["bm25"], [1, 5], [1, 3])
    assert "1-day window" in report.cell("bm25", 1).error and "holds no article" in report.cell("bm25", 1).error
    five = report.cell("bm25", 5)
    assert five.error is None and five.hits == {1: 1, 3: 1} and five.num_articles == 1
    md = report.to_markdown()
    assert "| bm25 | " in md and "error" in md and "1.000†" in md


def test_plot_without_matplotlib_is_one_line_and_the_rest_is_written(workspace, snap, tmp_path, monkeypatch):
    import sys

    from okgen.errors import MissingExtraError

    report = compare_retrievers(snap, workspace, ["bm25"], [1], [1, 3])
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(MissingExtraError) as e:
        report.plot(tmp_path / "x.png")
    assert str(e.value) == 'matplotlib is needed for the retrieval plot but is not installed: pip install "okgen[plot]"'
    paths = report.save(tmp_path / "out")
    assert set(paths) == {"json", "markdown"} and paths["markdown"].is_file()


def test_dense_build_and_eval_print_encoded_and_reused_counts_and_progress_lines(capsys, workspace, snap, monkeypatch):
    monkeypatch.setenv("OKGEN_PROGRESS_SECONDS", "0")  # a line per batch instead of every 10 s of work
    ref = snap.manifest.content_hash[:12]
    code, out, err = run(capsys, "index", "build", "--signature", ref, "--retriever", "dpr", "--window", "1,5", "--json")
    assert code == 0, err
    one, five = json.loads(out)
    assert (one["encoded"], one["reused"]) == (one["units"], 0)
    assert (five["encoded"], five["reused"]) == (five["units"] - one["units"], one["units"])
    assert f"dpr, 5-day window: {five['encoded']} passages encoded, {one['units']} vectors reused" in err
    assert f"dpr: encode passages: {one['units']}/{one['units']} (100%)" in err and "ETA" in err
    code, out, err = run(capsys, "retrieval-eval", "--signature", ref, "--retrievers", "dpr,bm25", "--windows", "1,5,10",
                         "--k", "1", "--json", "--no-plot")
    assert code == 0, err
    cells = {(c["retriever"], c["window"]): c for c in json.loads(out)["cells"]}
    n, ten = len(snap.questions), cells[("dpr", 10)]
    assert (ten["encoded_units"], ten["reused_vectors"]) == (ten["num_units"] - five["units"], five["units"])
    # one snapshot, one set of queries: encoded for the first window, reused by the others
    assert [(cells[("dpr", w)]["encoded_queries"], cells[("dpr", w)]["reused_queries"]) for w in (1, 5, 10)] == \
        [(n, 0), (0, n), (0, n)]
    assert cells[("bm25", 1)]["encoded_units"] is None
    assert f"dpr, 10-day window: {ten['encoded_units']} passages encoded, {five['units']} reused; 0 queries encoded" in err
    assert "retrieval-eval: 6/6 (100%)" in err
    code, out, err = run(capsys, "-q", "index", "build", "--signature", ref, "--retriever", "dpr", "--window", "10",
                         "--rebuild", "--json")
    assert code == 0 and json.loads(out)[0]["reused"] == ten["num_units"] and "okgen.progress" not in err


def test_a_misspelt_retriever_is_refused_before_the_snapshot_is_read(capsys, workspace):
    # The name is checked first: one line, whatever the snapshot (here: none matches).
    for verb in (["retrieval-eval", "--retrievers", "bm25,nope"], ["index", "build", "--retriever", "bm25,nope", "--window", "1"]):
        code, out, err = run(capsys, *verb, "--signature", "ffffffffffff")
        assert code == 1 and out.strip() == "", verb
        assert err.strip().splitlines() == ["okgen: error: no retriever spec named 'nope'; known: bm25-passages, "
                                            "bm25, colbert, dpr (or give a path to a .toml file)"], err
