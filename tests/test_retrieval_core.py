"""Retrieval foundations: specs and their hash, windows, chunking, the temporal limit, metrics."""

from __future__ import annotations

import datetime as dt
import filecmp
import subprocess
import sys
from pathlib import Path

import pytest

from okgen.errors import ConfigError, NotFoundError, OkgenError
from okgen.retrieval.base import Doc
from okgen.retrieval.evaluate import Cell, RetrievalReport, hit_interval, parse_int_list, score_cell
from okgen.retrieval.specs import available_specs, load_spec, packaged_spec_dir, spec_from_dict
from okgen.retrieval.windows import (
    EmptyWindowError,
    chunk_words,
    corpus_hash,
    limits_for,
    make_units,
    window_articles,
)
from okgen.settings import Workspace
from okgen.testing.retrieval import article, snapshot_from

REPO = Path(__file__).resolve().parents[1]
D = dt.date(2026, 11, 21)


# ------------------------------------------------------------------------------------ specs
def test_default_specs_ship_inside_the_package_identical_to_the_repo():
    repo_specs = sorted(p.name for p in (REPO / "retrievers").glob("*.toml"))
    assert {"bm25.toml", "dpr.toml", "colbert.toml", "bm25-passages.toml"} <= set(repo_specs)
    for name in repo_specs:
        assert filecmp.cmp(REPO / "retrievers" / name, packaged_spec_dir() / name, shallow=False), name


def test_specs_load_by_name_from_the_package(tmp_path):
    ws = Workspace(tmp_path)  # no retrievers/ folder: okgen's own specs answer
    for name, kind in [("bm25", "bm25"), ("bm25-passages", "bm25"), ("dpr", "dpr"), ("colbert", "colbert")]:
        spec = load_spec(name, ws)
        assert (spec.name, spec.kind) == (name, kind)
        assert len(spec.hash) == 12 and int(spec.hash, 16) >= 0
    assert load_spec("bm25-passages", ws).passage_words == 180
    assert load_spec("colbert", ws).params["checkpoint"] == "colbert-ir/colbertv2.0"
    assert set(available_specs(ws)) >= {"bm25", "dpr", "colbert"}


def test_workspace_spec_overrides_the_packaged_one(tmp_path):
    ws = Workspace(tmp_path)
    default = load_spec("bm25", ws)
    (tmp_path / "retrievers").mkdir()
    (tmp_path / "retrievers" / "bm25.toml").write_text('retriever = "bm25"\n[params]\nk1 = 0.9\n')
    mine = load_spec("bm25", ws)
    assert mine.params["k1"] == 0.9 and mine.hash != default.hash
    assert mine.path == tmp_path / "retrievers" / "bm25.toml"


def test_spec_hash_ignores_comments_description_and_speed_settings(tmp_path):
    a = tmp_path / "a.toml"
    a.write_text('retriever = "bm25"\n[params]\nk1 = 1.5\n')
    b = tmp_path / "b.toml"
    b.write_text('# comment\nretriever = "bm25"\ndescription = "x"\n[params]\nk1 = 1.5\nb = 0.75\nbackend = "auto"\n')
    c = tmp_path / "c.toml"
    c.write_text('retriever = "bm25"\n[params]\nk1 = 1.2\n')
    d = tmp_path / "d.toml"
    d.write_text('retriever = "bm25"\n[units]\npassage_words = 100\n')
    ha, hb, hc, hd = (load_spec(p).hash for p in (a, b, c, d))
    assert ha == hb  # defaults filled in; description, comments and backend do not count
    assert len({ha, hc, hd}) == 3
    assert load_spec(a).hash == load_spec(str(a)).hash  # stable


@pytest.mark.parametrize("text, message", [
    ('retriever = "bm25"\nfoo = 1\n', "unknown key 'foo'"),
    ('[params]\nk1 = 1.0\n', "'retriever'"),
    ('retriever = "splade"\n', "unknown retriever 'splade'; known: bm25, colbert, dpr"),
    ('retriever = "bm25"\n[params]\nk3 = 1\n', "unknown bm25 parameter 'k3'"),
    ('retriever = "bm25"\n[params]\nk1 = "high"\n', "'k1' must be float"),
    ('retriever = "bm25"\n[params]\nmethod = "okapi"\n', "method must be one of"),
    ('retriever = "bm25"\n[params]\nstemmer = "klingon"\n', "unknown stemmer"),
    ('retriever = "bm25"\n[units]\npassage_words = 5\n', "at least 10"),
    ('retriever = "bm25"\n[units]\npassage_words = 50\npassage_overlap = 50\n', "smaller than passage_words"),
    ('retriever = "dpr"\n[params]\nquery_model = "q"\n', "both query_model and context_model"),
    ('retriever = "dpr"\n[params]\nquery_model = "q"\ncontext_model = "c"\n', 'set model = ""'),
    ('retriever = "colbert"\n[params]\nnbits = 3\n', "nbits must be 1, 2, 4 or 8"),
    ('retriever = "bm25"\n[params\n', "invalid TOML"),
])
def test_bad_specs_are_one_line_config_errors(tmp_path, text, message):
    p = tmp_path / "bad.toml"
    p.write_text(text)
    with pytest.raises(ConfigError) as e:
        load_spec(p)
    assert message in str(e.value) and "\n" not in str(e.value)


def test_unknown_spec_name_lists_the_known_ones(tmp_path):
    with pytest.raises(ConfigError, match="no retriever spec named 'nope'; known: .*bm25.*colbert.*dpr"):
        load_spec("nope", Workspace(tmp_path))
    with pytest.raises(ConfigError, match="no such retriever spec file"):
        load_spec(tmp_path / "missing.toml")
    with pytest.raises(ConfigError, match="spec name"):
        spec_from_dict({"retriever": "bm25"}, "bad|name")


# ----------------------------------------------------------------------------------- windows
def test_chunk_words_sizes_overlap_and_tail():
    text = " ".join(f"w{i}" for i in range(400))
    chunks = chunk_words(text, 180)
    assert [len(c.split()) for c in chunks] == [180, 220]  # a 40-word tail (< 45) merges into the last passage
    chunks = chunk_words(text, 100, overlap=20)
    assert chunks[1].split()[0] == "w80" and all(len(c.split()) <= 100 for c in chunks)
    assert " ".join(chunks[-1].split()[-1:]) == "w399"
    assert chunk_words("  ", 100) == [] and chunk_words("one two", 100) == ["one two"]


def test_units_sorted_by_date_with_title_and_stable_ids():
    arts = [article("Later story", "b " * 300, D), article("Early story", "a " * 50, D - dt.timedelta(days=3)),
            article("No text", "", D - dt.timedelta(days=1))]
    whole = make_units(arts)
    assert [u.date for u in whole] == sorted(u.date for u in whole)
    assert whole[0].text.startswith("Early story\n") and whole[0].id == whole[0].article_id
    assert whole[1].text == "No text"  # an article without text can still be found by its title
    passages = make_units(arts, passage_words=100)
    later = [u for u in passages if u.article_id == arts[0].id]
    assert [u.id for u in later] == [f"{arts[0].id}#0", f"{arts[0].id}#1", f"{arts[0].id}#2"]
    assert all(u.text.startswith("Later story\n") for u in later)
    assert corpus_hash(passages) == corpus_hash(make_units(list(reversed(arts)), passage_words=100))
    assert corpus_hash(passages) != corpus_hash(whole)


def test_limits_for_is_the_prefix_dated_on_or_before_the_query():
    dates = [D - dt.timedelta(days=d) for d in (4, 4, 2, 1, 0)]
    ords = [d.toordinal() for d in dates]
    assert limits_for(ords, [D, D - dt.timedelta(days=1), D - dt.timedelta(days=3), D - dt.timedelta(days=9)]) == [5, 4, 2, 0]


def test_window_articles_and_its_bad_inputs(tmp_path):
    ws = Workspace(tmp_path)
    arts = [article(f"t{i}", f"text {i}", D - dt.timedelta(days=i)) for i in (0, 1, 6)]
    snap = snapshot_from(ws, arts, date=D)
    assert len(window_articles(snap, 1)) == 1 and len(window_articles(snap, 5)) == 2 and len(window_articles(snap, 10)) == 3
    with pytest.raises(ConfigError, match="whole number of days >= 1"):
        window_articles(snap, 0)
    with pytest.raises(ConfigError, match="10-day window only"):
        window_articles(snap, 30)
    gap = snapshot_from(Workspace(tmp_path / "gap"), [article("old", "x y", D - dt.timedelta(days=4))], date=D)
    with pytest.raises(EmptyWindowError, match="1-day window .* holds no article"):
        window_articles(gap, 1)
    assert issubclass(EmptyWindowError, NotFoundError)
    bare = snapshot_from(Workspace(tmp_path / "bare"), arts, date=D, include_text=False)
    with pytest.raises(OkgenError, match="without article texts; run `okgen hydrate`"):
        window_articles(bare, 1)


# ----------------------------------------------------------------------------------- metrics
def test_hit_rate_and_mrr():
    cell = Cell(retriever="x", window=1)
    score_cell(cell, [1, 2, None, 4, 10], [1, 3, 5])
    assert cell.n == 5 and cell.hits == {1: 1, 3: 2, 5: 3}
    assert cell.mrr[1] == pytest.approx(1 / 5)
    assert cell.mrr[3] == pytest.approx((1 + 1 / 2) / 5)
    assert cell.mrr[5] == pytest.approx((1 + 1 / 2 + 1 / 4) / 5)


def test_hit_rates_carry_the_wilson_interval_of_their_count():
    # 13 of 14: the Wilson score interval (z = 1.96) is [0.6853, 0.9873]
    low, high = hit_interval(13, 14)
    assert low == pytest.approx(0.6853, abs=1e-3) and high == pytest.approx(0.9873, abs=1e-3)
    assert hit_interval(0, 0) is None
    cell = Cell("bm25", 1, n=0)
    score_cell(cell, [1] * 13 + [None], [1])
    report = RetrievalReport("s", "sig", "2026-11-21", 14, False, ["bm25"], [1], [1], [cell])
    row = report.rows()[0]
    assert row["hits"] == 13 and row["hit_rate_ci95"] == [pytest.approx(0.6853, abs=1e-3), pytest.approx(0.9873, abs=1e-3)]
    assert "| bm25 |  | 1 | 0.929 [0.69, 0.99] | 0.929 |" in report.to_markdown()


def test_parse_int_list():
    assert parse_int_list("10, 1,5,5", "windows") == [1, 5, 10]
    for bad in ("1,x", "0", ""):
        with pytest.raises(ConfigError):
            parse_int_list(bad, "k")


def test_doc_is_a_plain_record():
    d = Doc("a#0", "a", "text", D)
    assert d.article_id == "a" and d._replace(id="a#1").id == "a#1"


def test_retrieval_modules_import_no_heavy_dependency():
    code = (
        "import sys\n"
        "import okgen.retrieval.index, okgen.retrieval.evaluate, okgen.retrieval.dense, okgen.retrieval.bm25\n"
        "import okgen.retrieval.colbert_retriever, okgen.cli.index, okgen.cli.retrieval_eval\n"
        "from okgen.retrieval.specs import load_spec\n"
        "for n in ('bm25', 'dpr', 'colbert'): load_spec(n)\n"
        "heavy = [m for m in ('torch', 'faiss', 'colbert', 'sentence_transformers', 'transformers') if m in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
    assert out.stdout.strip() == ""
