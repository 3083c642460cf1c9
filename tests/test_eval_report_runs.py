"""Which runs ``okgen report`` shows and how it names them: runs of several days, ``--limit``
runs, runs with few answers, unfinished and unreadable runs, and copies of a run that disagree."""

from __future__ import annotations

import csv
import datetime as dt
import json
import shutil

import pytest

from okgen.errors import NotFoundError
from okgen.eval.report import build_report, load_rows, render_markdown
from okgen.eval.runner import EvalOptions, plan_runs, run_eval
from okgen.settings import Workspace
from okgen.testing.eval_data import make_test_snapshot

DAYS = (dt.date(2026, 3, 10), dt.date(2026, 3, 11))


@pytest.fixture(scope="module")
def days(tmp_path_factory):
    """Two news days of 8 questions, each run without context, with the oracle and with retrieval."""
    ws = Workspace(tmp_path_factory.mktemp("ws"))
    root = tmp_path_factory.mktemp("runs")
    snaps = []
    for i, d in enumerate(DAYS):
        snap = make_test_snapshot(ws, date=d, n_articles=8, days=2, seed=i)
        run_eval(snap.name, "random/seed0", plan_runs(["none", "oracle", "retrieval"], ["bm25"], [1], [1]),
                 EvalOptions(n_boot=200), workspace=ws, out=root / str(d))
        snaps.append(snap)
    return ws, snaps, root


def _copy(src, dst):
    shutil.copytree(src, dst)
    return dst


def test_heat_maps_of_several_days_name_the_day_and_show_retrieval_runs(days, tmp_path):
    import matplotlib.pyplot as plt

    from okgen.eval.plots import figures, overlapping_texts

    _, _, root = days
    rep = build_report(load_rows([root]))
    figs = figures(rep, tmp_path)
    for name in ("plot_by_outlet", "plot_by_position"):
        labels = [t.get_text() for t in figs[name].axes[0].get_yticklabels()]
        assert len(labels) == len(set(labels)) == 6, labels  # 2 days x 3 settings, no two alike
        assert sum(str(DAYS[0]) in label for label in labels) == 3
        assert sum("retrieval bm25 1d k=1" in label for label in labels) == 2
        assert overlapping_texts(figs[name]) == [], name
    for fig in figs.values():
        plt.close(fig)


def test_a_limit_run_with_few_answers_is_marked_in_tables_and_figures(days, tmp_path):
    import matplotlib.pyplot as plt

    from okgen.eval.plots import figures
    from okgen.eval.tables import settings_latex, write_tables

    ws, snaps, _ = days
    run_eval(snaps[0].name, "random/seed1", plan_runs(["none", "oracle"]), EvalOptions(n_boot=200, limit=2),
             workspace=ws, out=tmp_path / "lim")
    rep = build_report(load_rows([tmp_path / "lim"]))
    assert rep["settings"][0]["limit"] == 2
    md = render_markdown(rep)
    assert f"| {DAYS[0]} | {snaps[0].signature.short_hash} | 2 (limit) | random/seed1 |" in md
    assert "(n=2)" in md.split("## Answer diagnostics")[1]
    assert "2 (limit) &" in settings_latex(rep)
    write_tables(rep, tmp_path / "t")
    row = next(csv.DictReader((tmp_path / "t" / "settings.csv").open(encoding="utf-8")))
    assert (row["n"], row["limit"]) == ("2", "2")
    figs = figures(rep, tmp_path)
    outlet = [t.get_text() for t in figs["plot_by_outlet"].axes[0].get_yticklabels()]
    position = [t.get_text() for t in figs["plot_by_position"].axes[0].get_yticklabels()]
    assert outlet == ["random/seed1 (limit 2) · none (n=2)", "random/seed1 (limit 2) · oracle (n=2)"]
    setting_rows = [t.get_text() for t in figs["plot_by_setting"].axes[0].get_yticklabels()]
    assert setting_rows == ["random/seed1 (limit 2)"]  # a --limit run never reads as the full one
    assert all(label.endswith(", n=2)") and "(bias " in label for label in position)
    for fig in figs.values():
        plt.close(fig)


def test_full_runs_are_not_marked(days):
    _, _, root = days
    md = render_markdown(build_report(load_rows([root])))
    assert "(limit)" not in md and "(n=" not in md


def test_retrieval_tables_have_cis_format_and_template(days, tmp_path):
    from okgen.eval.tables import retrieval_latex, write_tables

    _, _, root = days
    rep = build_report(load_rows([root]))
    write_tables(rep, tmp_path)
    rows = list(csv.DictReader((tmp_path / "retrieval.csv").open(encoding="utf-8")))
    assert len(rows) == 2
    assert {"format", "template", "limit", "k=1", "k=1_ci_low", "k=1_ci_high"} <= set(rows[0])
    cell = rep["retrieval"][0]["by_k"]["1"]
    assert (float(rows[0]["k=1_ci_low"]), float(rows[0]["k=1_ci_high"])) == pytest.approx(tuple(cell["ci95"]))
    tex = retrieval_latex(rep)
    assert tex.count("\\scriptsize [") == 2 and "Scoring & $n$ & Retriever" in tex


def test_unfinished_runs_are_named_in_one_line(days, tmp_path, caplog):
    _, _, root = days
    _copy(root / str(DAYS[0]), tmp_path / "Rivertown")
    for name in ("Lakeport", "Orbis"):
        run = _copy(root / str(DAYS[1]) / "none-loglik-mc", tmp_path / name / "none-loglik-mc")
        (run / "results.json").unlink()
    assert len(load_rows([tmp_path])) == 3
    lines = [r.getMessage() for r in caplog.records if "unfinished" in r.getMessage()]
    assert len(lines) == 1
    assert "left out 2 unfinished or failed run(s)" in lines[0]
    assert str(tmp_path / "Lakeport" / "none-loglik-mc") in lines[0] and str(tmp_path / "Orbis") in lines[0]
    # A stream's or memory's unfinished run is no okgen eval run to rerun: not named here.
    stream = tmp_path / "Norvik" / "closest"
    stream.mkdir(parents=True)
    (stream / "predictions.jsonl").write_text("")
    (stream / "run.json").write_text(json.dumps({"kind": "okgen-eval-run", "config": {"kind": "okgen-stream-eval"}}))
    caplog.clear()
    load_rows([tmp_path])
    lines = [r.getMessage() for r in caplog.records if "unfinished" in r.getMessage()]
    assert "left out 2 unfinished" in lines[0] and "Norvik" not in lines[0]


def test_copies_of_a_run_that_disagree_are_named_in_a_warning(days, tmp_path, caplog):
    _, _, root = days
    src = root / str(DAYS[0]) / "none-loglik-mc"
    a, b = _copy(src, tmp_path / "Norvik"), _copy(src, tmp_path / "Rivertown")
    rows = load_rows([tmp_path])
    assert len(rows) == 1 and "differ" not in caplog.text  # identical copies: one row, nothing to say
    res = json.loads((b / "results.json").read_text())
    res["accuracy"] = 0.99
    (b / "results.json").write_text(json.dumps(res))
    rows = load_rows([tmp_path])
    assert len(rows) == 1
    warn = [r.getMessage() for r in caplog.records if "differ" in r.getMessage()]
    assert len(warn) == 1 and str(a) in warn[0] and str(b) in warn[0] and "share a signature" in warn[0]
    assert "0.990" in warn[0]


def test_a_corrupted_results_file_is_skipped_with_its_path(days, tmp_path, caplog):
    _, _, root = days
    _copy(root / str(DAYS[0]), tmp_path / "Lakeport")
    bad = _copy(root / str(DAYS[1]), tmp_path / "Orbis") / "oracle-loglik-mc" / "results.json"
    bad.write_text('{"accuracy": 0.5')
    rows = load_rows([tmp_path])
    assert len(rows) == 5 and not any(r.path == str(bad.parent) for r in rows)
    assert f"skipped {bad}: corrupted JSON" in caplog.text
    with pytest.raises(NotFoundError, match=rf"no readable run under the given paths \(skipped {bad}: corrupted JSON"):
        load_rows([bad.parent])


def test_warnings_of_retrieval_runs_name_their_configuration(days):
    import dataclasses

    _, _, root = days
    diag = {"dominant_letter": "A", "dominant_share": 0.9, "position_bias": 0.6}
    rows = [dataclasses.replace(r, diagnostics={**(r.diagnostics or {}), **diag})
            for r in load_rows([root]) if r.setting == "retrieval" and r.date == str(DAYS[0])]
    (warning,) = build_report(rows)["warnings"]
    assert warning.startswith(f"random/seed0 retrieval bm25 1d k=1, snapshot {rows[0].snapshot} ({DAYS[0]})")


def test_figures_name_a_local_model_folder_by_its_name():
    from okgen.eval.plots import shown_model

    assert shown_model("hf//home/ana/models/Orbis-1B") == "hf/Orbis-1B"
    assert shown_model("hf//home/ana/models/Orbis-1B/,chat=no") == "hf/Orbis-1B,chat=no"
    assert shown_model("hf/Norvik/Lakeport-7B,add_bos=yes") == "hf/Norvik/Lakeport-7B,add_bos=yes"  # a hub id stays
    assert shown_model("random/seed0") == "random/seed0"
    # Checkpoints of one name in two runs' folders: as much of the path as tells them apart.
    runs = ["hf//ckpt/run1/final", "hf//ckpt/run2/final", "hf//ckpt/run2/best"]
    assert [shown_model(m, runs) for m in runs] == ["hf/run1/final", "hf/run2/final", "hf/best"]
    assert shown_model("hf//a/final", ["hf//a/final", "hf/final"]) == "hf/a/final"  # not a hub id's name either


def test_dated_context_runs_have_a_table_of_their_own(days, tmp_path):
    """A ctx: run's accuracy was in no table or figure, and nothing said so."""
    from okgen.eval.tables import write_tables

    ws, snaps, root = days
    out = _copy(root / str(DAYS[0]), tmp_path / "runs")
    run_eval(snaps[0].name, "random/seed1", plan_runs(["ctx:closest"]), EvalOptions(n_boot=200), workspace=ws,
             out=out / "ctx")
    rep = build_report(load_rows([out]))
    assert [(r["model"], sorted(r["by_setting"])) for r in rep["contexts"]] == [("random/seed1", ["ctx:closest"])]
    assert all(r["model"] != "random/seed1" for r in rep["settings"])  # no row of dashes for it there
    md = render_markdown(rep)
    assert "## Accuracy with dated contexts" in md and "| ctx:closest |" in md
    written = {p.name for p in write_tables(rep, tmp_path / "tables")}
    assert "contexts.csv" in written
    with open(tmp_path / "tables" / "contexts.csv") as f:
        row = next(csv.DictReader(f))
    assert row["model"] == "random/seed1" and 0 <= float(row["ctx:closest"]) <= 1
