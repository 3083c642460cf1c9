"""``okgen report`` tables and plots, and ``okgen export`` for lm-eval, HF datasets and inspect_ai."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from okgen.eval.export import export_snapshot, task_name
from okgen.eval.report import build_report, load_rows, render_markdown
from okgen.eval.rundir import read_predictions
from okgen.eval.runner import EvalOptions, plan_runs, run_eval
from okgen.eval.templates import get_template
from okgen.settings import Workspace
from okgen.testing.eval_data import make_test_snapshot


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    ws = Workspace(tmp_path_factory.mktemp("ws"))
    return ws, make_test_snapshot(ws)


def _okgen(ws, *args):
    env = dict(os.environ, OKGEN_HOME=str(ws.home), OKGEN_NO_PROGRESS="1")
    return subprocess.run([sys.executable, "-m", "okgen", *args], env=env, capture_output=True, text=True, timeout=300)


def test_report_tables_json_and_plots(env, tmp_path):
    ws, snap = env
    runs = plan_runs(["none", "oracle", "retrieval"], ["bm25"], [1, 4], [1, 3])
    for seed in (0, 1):
        run_eval(snap.name, f"random/uniform,seed={seed}", runs, EvalOptions(), workspace=ws,
                 out=tmp_path / "runs" / f"m{seed}")
    rows = load_rows([tmp_path / "runs"])
    assert len(rows) == 2 * len(runs)
    rep = build_report(rows)
    assert [r["model"] for r in rep["settings"]] == ["random/uniform,seed=0", "random/uniform,seed=1"]
    assert len(rep["retrieval"]) == 4 and set(rep["retrieval"][0]["by_k"]) == {"1", "3"}
    out = tmp_path / "report"
    res = _okgen(ws, "report", str(tmp_path / "runs"), "--out", str(out))
    assert res.returncode == 0, res.stderr
    md = (out / "report.md").read_text()
    assert md == res.stdout
    assert "| date | snapshot | n | model | scoring | none | oracle | oracle gain |" in md
    assert "| date | snapshot | n | model | scoring | retriever | window | k=1 | k=3 |" in md
    assert "| bm25 | 1d |" in md and "| bm25 | 4d |" in md
    data = json.loads((out / "report.json").read_text())
    assert data["settings"][0]["none"]["n"] == len(snap.questions)
    for png in ("accuracy_by_setting.png", "accuracy_vs_k.png"):
        import matplotlib.image

        img = matplotlib.image.imread(out / png)
        assert img.shape[0] > 100 and img.shape[1] > 100
    res = _okgen(ws, "report", str(tmp_path / "runs"), "--json")
    assert json.loads(res.stdout)["kind"] == "okgen-report"


def test_report_keeps_incomparable_runs_apart(env, tmp_path):
    ws, snap = env
    run_eval(snap.name, "random/uniform", plan_runs(["none", "oracle"]), EvalOptions(), workspace=ws, out=tmp_path / "a")
    run_eval(snap.name, "random/uniform", plan_runs(["none"]), EvalOptions(scoring="generate"), workspace=ws,
             out=tmp_path / "b")
    rep = build_report(load_rows([tmp_path]))
    assert sorted((r["scoring"], r["oracle"] is not None) for r in rep["settings"]) == [("generate", False), ("loglik", True)]
    assert "| – |" in render_markdown(rep)
    res = _okgen(ws, "report", str(tmp_path / "nothing-here"))
    assert res.returncode == 2  # click: the path does not exist


def test_lm_eval_export(env, tmp_path):
    yaml = pytest.importorskip("yaml")
    ws, snap = env
    res = _okgen(ws, "export", "-s", snap.signature.short, "--format", "lm-eval", "--out", str(tmp_path / "lm"))
    assert res.returncode == 0, res.stderr
    name = task_name(snap)
    task = yaml.safe_load((tmp_path / "lm" / f"{name}.yaml").read_text())
    assert task["task"] == name and task["output_type"] == "multiple_choice"
    assert (task["doc_to_text"], task["doc_to_choice"], task["doc_to_target"]) == ("prompt", "choice_labels", "answer_index")
    assert [m["metric"] for m in task["metric_list"]] == ["acc", "acc_norm"]
    assert task["metadata"]["okgen_signature"] == snap.manifest.signature
    data = task["dataset_kwargs"]["data_files"]["test"]
    rows = [json.loads(line) for line in open(data, encoding="utf-8")]
    assert len(rows) == len(snap.questions)
    t = get_template("mc-v1", "mc")
    for q, r in zip(snap.questions, rows):
        assert r["prompt"] == t.render(q).plain() and r["prompt"].endswith("Answer:")
        assert r["choice_labels"] == ["A", "B", "C", "D"] and r["answer_index"] == q.answer_index
    full = yaml.safe_load((tmp_path / "lm" / f"{name}_full.yaml").read_text())
    assert full["task"] == f"{name}_full" and full["doc_to_choice"] == "choices" and full["target_delimiter"] == " "
    assert full["dataset_kwargs"] == task["dataset_kwargs"]
    manifest = json.loads((tmp_path / "lm" / "okgen_export.json").read_text())
    assert set(manifest["files"]) == {f"{name}.yaml", f"{name}_full.yaml", f"{name}.jsonl"}
    oracle = export_snapshot(snap, "lm-eval", tmp_path / "lmo", "oracle")
    line = json.loads(oracle[2].read_text().splitlines()[0])
    assert line["prompt"].startswith("Article:\n") and oracle[0].name == f"{name}_oracle.yaml"


def test_hf_datasets_export(env, tmp_path, monkeypatch):
    pq = pytest.importorskip("pyarrow.parquet")
    yaml = pytest.importorskip("yaml")
    ws, snap = env
    files = export_snapshot(snap, "hf", tmp_path / "hf")
    qt = pq.read_table(tmp_path / "hf" / "data" / "questions-00000-of-00001.parquet")
    assert qt.num_rows == len(snap.questions)
    assert qt.column("choices").to_pylist()[0] == list(snap.questions[0].choices)
    assert qt.column("answer_index").to_pylist() == [q.answer_index for q in snap.questions]
    ct = pq.read_table(tmp_path / "hf" / "data" / "corpus-00000-of-00001.parquet")
    assert ct.num_rows == len(snap.corpus) and ct.column("text").to_pylist()[0] == snap.corpus[0].text
    card = (tmp_path / "hf" / "README.md").read_text()
    header = yaml.safe_load(card.split("---")[1])
    assert [c["config_name"] for c in header["configs"]] == ["default", "corpus"]
    assert snap.manifest.signature in card and len(files) == 4
    try:
        import datasets
    except ImportError:
        return
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    ds = datasets.load_dataset(str(tmp_path / "hf"), split="test", cache_dir=str(tmp_path / "cache"))
    assert len(ds) == len(snap.questions) and ds[0]["question"] == snap.questions[0].question


def test_inspect_export(env, tmp_path):
    ws, snap = env
    files = export_snapshot(snap, "inspect", tmp_path / "ins", "oracle")
    rows = [json.loads(x) for x in files[0].read_text().splitlines()]
    assert len(rows) == len(snap.questions)
    for q, r in zip(snap.questions, rows):
        assert r["target"] == "ABCD"[q.answer_index] and r["choices"] == list(q.choices) and r["id"] == q.id
        assert r["input"].endswith("Question: " + q.question) and r["input"].startswith("Article:\n")


def test_export_refuses_unknown_format_setting_and_misplaced_retrieval_options(env, tmp_path):
    from okgen.errors import ConfigError

    ws, snap = env
    with pytest.raises(ConfigError, match="known: lm-eval, hf, inspect"):
        export_snapshot(snap, "helm", tmp_path)
    with pytest.raises(ConfigError, match="known: none, oracle, retrieval"):
        export_snapshot(snap, "inspect", tmp_path, "ctx:latest")
    with pytest.raises(ConfigError, match="only to --setting retrieval"):
        export_snapshot(snap, "inspect", tmp_path, "oracle", k=3)
    with pytest.raises(ConfigError, match="at least 1"):
        export_snapshot(snap, "lm-eval", tmp_path / "k0", "retrieval", k=0, workspace=ws)
    with pytest.raises(ConfigError, match="whole number of days"):
        export_snapshot(snap, "lm-eval", tmp_path / "w0", "retrieval", window=0, workspace=ws)
    with pytest.raises(ConfigError, match="a 30-day window needs"):
        export_snapshot(snap, "lm-eval", tmp_path / "w30", "retrieval", window=30, workspace=ws)
    res = _okgen(ws, "export", "-s", snap.signature.short, "--format", "lm-eval", "--out", str(tmp_path / "x"),
                 "--k", "2")
    assert res.returncode != 0 and res.stderr.strip().count("\n") == 0 and "--setting retrieval" in res.stderr
    assert not any((tmp_path / d).exists() for d in ("x", "w30", "k0", "w0"))  # nothing half-written


def test_retrieval_export_holds_the_passages_okgen_eval_scores(env, tmp_path):
    """Another tool given the retrieval export sees what okgen eval --setting retrieval scored:
    the same articles in the same rank order, laid out by the same template."""
    pq = pytest.importorskip("pyarrow.parquet")
    yaml = pytest.importorskip("yaml")
    ws, snap = env
    out = run_eval(snap.name, "random/uniform", plan_runs(["retrieval"], ["bm25"], [4], [2]), EvalOptions(),
                   workspace=ws, out=tmp_path / "run")[0]
    preds = read_predictions(out.path / "predictions.jsonl")
    res = _okgen(ws, "export", "-s", snap.signature.short, "--format", "lm-eval", "--out", str(tmp_path / "lm"),
                 "--setting", "retrieval", "--window", "4", "--k", "2", "--json")
    assert res.returncode == 0, res.stderr
    name = json.loads(res.stdout)["task"]
    assert name == task_name(snap, "retrieval", "bm25", 4, 2) == f"{task_name(snap)}_retrieval_bm25_w4_k2"
    task = yaml.safe_load((tmp_path / "lm" / f"{name}.yaml").read_text())
    meta = task["metadata"]
    assert (meta["okgen_setting"], meta["okgen_retriever"], meta["okgen_window"], meta["okgen_k"]) == ("retrieval", "bm25", 4, 2)
    assert f"|rspec:{meta['okgen_retriever_hash']}|" in out.record.signature  # the index okgen eval used
    rows = [json.loads(line) for line in open(task["dataset_kwargs"]["data_files"]["test"], encoding="utf-8")]
    assert len(rows) == len(snap.questions) == len(preds)
    arts = snap.articles_by_id
    for q, r in zip(snap.questions, rows):
        assert tuple(r["retrieved"]) == preds[q.id].retrieved and len(r["retrieved"]) == 2
        first, second = (arts[a] for a in r["retrieved"])
        assert r["prompt"].startswith(f"Passages:\n[1] {first.title} (")
        assert f"\n\n[2] {second.title} (" in r["prompt"]
        assert all(arts[a].date <= q.date for a in r["retrieved"])  # nothing from after the question
        assert r["prompt"].endswith("\n".join([f"Question: {q.question}", *(f"{'ABCD'[i]}. {c}" for i, c in enumerate(q.choices)),
                                              "Answer:"]))
    # The whole prompt: the hits' own passage texts, laid out by the eval's template.
    from okgen.eval.contexts import retrieve
    from okgen.retrieval.index import open_index

    hits = retrieve(open_index(snap, "bm25", 4, ws), snap.questions, 2, arts)
    tmpl = get_template("mc-v1", "mc")
    assert [r["prompt"] for r in rows] == [tmpl.render(q, p, "retrieval").plain() for q, (p, _) in zip(snap.questions, hits)]
    manifest = json.loads((tmp_path / "lm" / "okgen_export.json").read_text())
    assert (manifest["setting"], manifest["window"], manifest["k"]) == ("retrieval", 4, 2)
    assert manifest["gold_retrieved"] == sum(p.gold_rank is not None for p in preds.values())
    export_snapshot(snap, "hf", tmp_path / "hf", "retrieval", window=4, k=2, workspace=ws)
    qt = pq.read_table(tmp_path / "hf" / "data" / "questions-00000-of-00001.parquet")
    assert qt.column("retrieved").to_pylist() == [list(r["retrieved"]) for r in rows]
    assert all(c.startswith("Passages:\n[1] ") for c in qt.column("context").to_pylist())
    assert "retrieved passages" in (tmp_path / "hf" / "README.md").read_text()
    ins = export_snapshot(snap, "inspect", tmp_path / "ins", "retrieval", window=4, k=2, workspace=ws)
    for q, r, line in zip(snap.questions, rows, ins[0].read_text().splitlines()):
        got = json.loads(line)["input"]
        assert got.startswith(r["prompt"].split("The following is")[0]) and got.endswith("Question: " + q.question)


def test_dataset_card_size_buckets():
    from okgen.eval.export import _size_category

    assert [_size_category(n) for n in (0, 999, 1000, 12_000, 250_000, 2_000_000)] == [
        "n<1K", "n<1K", "1K<n<10K", "10K<n<100K", "100K<n<1M", "1M<n<10M"]


def test_report_lists_answers_counted_wrong_only_for_runs_that_have_them(env, tmp_path):
    import dataclasses

    ws, snap = env
    run_eval(snap.name, "random/uniform", plan_runs(["none", "oracle"]), EvalOptions(), workspace=ws, out=tmp_path / "r")
    clean = load_rows([tmp_path / "r"])
    assert all(r.unparsed == r.errors == r.truncated == 0 for r in clean)
    assert "counted wrong" not in render_markdown(build_report(clean))
    hurt = [dataclasses.replace(clean[0], unparsed=3, errors=1), clean[1]]
    md = render_markdown(build_report(hurt))
    assert "## Answers counted wrong, and truncated contexts" in md
    row = next(line for line in md.splitlines() if line.endswith("| 3 | 1 | 0 |"))
    assert f"| {hurt[0].setting} |" in row
    assert sum(line.endswith(" | 0 | 0 | 0 |") for line in md.splitlines()) == 0  # the clean run has no row


def test_a_retriever_spec_file_names_the_task_by_its_name_and_hash_not_its_path(env, tmp_path):
    import shutil
    from pathlib import Path

    import okgen

    ws, snap = env
    spec = tmp_path / "specs" / "my-bm25.toml"
    spec.parent.mkdir()
    shutil.copy(Path(okgen.__file__).parent / "data" / "retrievers" / "bm25.toml", spec)
    export_snapshot(snap, "lm-eval", tmp_path / "lm", "retrieval", retriever=str(spec), window=4, k=2, workspace=ws)
    manifest = json.loads((tmp_path / "lm" / "okgen_export.json").read_text())
    assert manifest["task"] == f"{task_name(snap)}_retrieval_{manifest['retriever'].replace('-', '_')}_{manifest['retriever_hash'][:8]}_w4_k2"
    assert "specs" not in manifest["task"] and "tmp" not in manifest["task"]


def test_exports_sharing_a_folder_are_all_listed_and_none_overwrites_another(env, tmp_path):
    from okgen.errors import ConfigError
    from okgen.hashing import sha256_file

    ws, snap = env
    out = tmp_path / "lm"
    export_snapshot(snap, "lm-eval", out)
    export_snapshot(snap, "lm-eval", out, "oracle")
    export_snapshot(snap, "inspect", out, "retrieval", k=2)
    manifest = json.loads((out / "okgen_export.json").read_text())
    none, oracle, ret = task_name(snap), task_name(snap, "oracle"), task_name(snap, "retrieval", k=2)
    # The latest export at the top level, as before; every one under "exports", with its files' hashes.
    assert (manifest["task"], manifest["format"], manifest["setting"]) == (ret, "inspect", "retrieval")
    assert sorted(manifest["exports"]) == sorted([f"lm-eval:{none}", f"lm-eval:{oracle}", f"inspect:{ret}"])
    assert set(manifest["exports"][f"lm-eval:{none}"]["files"]) == {f"{none}.yaml", f"{none}_full.yaml", f"{none}.jsonl"}
    assert manifest["exports"][f"inspect:{ret}"]["k"] == 2
    for rec in manifest["exports"].values():
        for f, digest in rec["files"].items():
            assert sha256_file(out / f) == digest
    # The same export again replaces its own record, never another's.
    export_snapshot(snap, "lm-eval", out)
    again = json.loads((out / "okgen_export.json").read_text())
    assert sorted(again["exports"]) == sorted(manifest["exports"]) and again["task"] == none
    # inspect samples of the oracle setting are <task>.jsonl, as the lm-eval task's data: refused,
    # and the lm-eval data stays whole.
    data = out / f"{oracle}.jsonl"
    before = sha256_file(data)
    with pytest.raises(ConfigError, match=f"already holds the lm-eval export {oracle}, whose {oracle}.jsonl"):
        export_snapshot(snap, "inspect", out, "oracle")
    assert sha256_file(data) == before
    # An hf folder holds one dataset: another hf task is refused and the first one stays whole.
    hf = tmp_path / "hf"
    export_snapshot(snap, "hf", hf)
    before = sha256_file(hf / "data" / "questions-00000-of-00001.parquet")
    with pytest.raises(ConfigError, match=f"already holds the hf export {none}.*another --out"):
        export_snapshot(snap, "hf", hf, "oracle")
    assert sha256_file(hf / "data" / "questions-00000-of-00001.parquet") == before
    assert json.loads((hf / "okgen_export.json").read_text())["task"] == none
    export_snapshot(snap, "hf", hf)  # the same dataset again: fine
    # A file no okgen export wrote (a project's README.md, a task of the user's own) is refused
    # and kept; so is a snapshot folder as the target.
    mine = tmp_path / "project"
    mine.mkdir()
    (mine / "README.md").write_text("# my project\n")
    with pytest.raises(ConfigError, match="README.md exists and no okgen export wrote it"):
        export_snapshot(snap, "hf", mine)
    assert (mine / "README.md").read_text() == "# my project\n" and not (mine / "data").exists()
    (mine / f"{none}.yaml").write_text("task: mine\n")
    with pytest.raises(ConfigError, match=f"{none}.yaml exists and no okgen export wrote it"):
        export_snapshot(snap, "lm-eval", mine)
    with pytest.raises(ConfigError, match="snapshot folder or a workspace"):
        export_snapshot(snap, "hf", snap.path)


def test_report_leaves_out_stream_runs_and_says_where_their_reports_are(env, tmp_path, caplog):
    """``okgen report`` reads snapshot runs; a stream or memory run's ``results.json`` (another
    record) is left out with a line naming its own report, not refused as a malformed run."""
    from okgen.errors import NotFoundError

    ws, snap = env
    stream_run = tmp_path / "streams" / "s" / "m" / "full"
    stream_run.mkdir(parents=True)
    (stream_run / "results.json").write_text(json.dumps({"kind": "okgen-stream-eval", "acc": 0.5}))
    with pytest.raises(NotFoundError, match=r"no snapshot runs .*1 stream-eval run\(s\): okgen eval --stream writes "
                                            r"report.md"):
        load_rows([tmp_path / "streams"])
    run_eval(snap.name, "random/uniform", plan_runs(["none"], ["bm25"], [1], [1]), EvalOptions(), workspace=ws,
             out=tmp_path / "snap")
    assert len(load_rows([tmp_path / "streams", tmp_path / "snap"])) == 1
    assert "left out 1 stream-eval run(s)" in caplog.text


def test_report_over_several_days_is_in_date_order_and_names_each_day(tmp_path):
    """A series' runs: rows by news day (not by snapshot hash), a date in every table (the
    LaTeX one too), and each warning names its snapshot and day."""
    import datetime as dt

    from okgen.eval.tables import settings_latex

    ws = Workspace(tmp_path / "ws")
    days = [dt.date(2026, 3, 12), dt.date(2026, 3, 10), dt.date(2026, 3, 11)]
    for i, d in enumerate(days):
        snap = make_test_snapshot(ws, date=d, n_articles=8, days=2, seed=i)
        run_eval(snap.name, "random/uniform", plan_runs(["none", "oracle"]), EvalOptions(), workspace=ws,
                 out=tmp_path / "runs" / str(d))
    rep = build_report(load_rows([tmp_path / "runs"]))
    assert [r["date"] for r in rep["settings"]] == sorted(str(d) for d in days)
    md = render_markdown(rep)
    assert md.index("| 2026-03-10 |") < md.index("| 2026-03-11 |") < md.index("| 2026-03-12 |")
    tex = settings_latex(rep)
    assert "Date & Model & Scoring" in tex and "2026-03-10 & random/uniform" in tex
    import dataclasses

    # A model whose oracle is not above no context on the first day: the warning says which day.
    rows = [dataclasses.replace(r, model="hf/m", accuracy=0.5 if r.setting == "none" else 0.25)
            for r in load_rows([tmp_path / "runs"]) if r.date == "2026-03-10"]
    (w,) = build_report(rows)["warnings"]
    assert w.startswith(f"hf/m (loglik), snapshot {rows[0].snapshot} (2026-03-10, n={rows[0].n}): oracle accuracy"), w


def test_a_second_process_writing_the_same_run_folder_is_refused(env, tmp_path):
    """Two ``okgen eval`` processes on one run folder would append every prediction twice:
    while one writes it, another is refused in one line, and nothing of the folder is lost."""
    from okgen.errors import LockedError
    from okgen.eval.rundir import folder_lock

    ws, snap = env
    out = tmp_path / "runs"
    with folder_lock(ws, out):  # as another process would hold it (one run: --out is its folder)
        with pytest.raises(LockedError, match=r"another okgen eval is writing .*runs.*try again when it has finished"):
            run_eval(snap.name, "random/uniform", plan_runs(["none"]), EvalOptions(), workspace=ws, out=out)
    (o,) = run_eval(snap.name, "random/uniform", plan_runs(["none"]), EvalOptions(), workspace=ws, out=out)
    assert o.record.n == len(snap.questions)


def test_runs_that_differ_in_format_or_size_are_told_apart_in_every_table():
    """Two runs of one model, multiple choice (n=9) and open answers with a judge (n=3): the
    LaTeX rows, the figure labels and the diagnostics table tell them apart; letter shares and
    position bias are shown for multiple choice only."""
    from okgen.eval.plots import _label
    from okgen.eval.tables import settings_latex

    cell = {"accuracy": 0.5, "ci95": [0.2, 0.8], "n": 9}
    base = {"date": "2026-03-14", "snapshot": "abc", "template": "t", "none": cell, "oracle": None,
            "oracle_gain": None, "model": "hf/m", "scoring": "generate"}
    mc, op = {**base, "format": "mc", "judge": "none", "n": 9}, {**base, "format": "open", "judge": "hf/j", "n": 3}
    tex = settings_latex({"settings": [mc, op], "runs": []})
    assert "hf/m & generate & 9 &" in tex and "hf/m & open/generate +judge & 3 &" in tex
    assert _label(mc, True) != _label(op, True)
    diag = {"answered": 3, "predicted_letters": {"A": 3}, "accuracy_by_gold_position": {"A": 1.0},
            "position_bias": 0.5}
    runs = [{**r, "setting": "none", "retriever": "none", "window": None, "k": None, "diagnostics": diag,
             "unparsed": 0, "errors": 0, "truncated": 0, "signature": "s"} for r in (mc, op)]
    md = render_markdown({"settings": [], "retrieval": [], "runs": runs, "warnings": []})
    assert "| hf/m | generate | none | A 100%" in md and "open/generate +judge | none | A" not in md
