"""Memory options are checked against what each memory takes; ``--ask end`` prints retention by age."""

from __future__ import annotations

import json
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from okgen.cli.main import cli
from okgen.errors import ConfigError
from okgen.memory import base
from okgen.memory.base import Memory, check_memory_spec, check_options, load_memory, memory_options
from okgen.memory.builtin import RecentWindow
from okgen.memory.report import by_age_markdown
from okgen.settings import Workspace
from okgen.testing.memory import entity_series

ROOT = Path(__file__).resolve().parents[1]


def memory_eval(tmp_path: Path, *args: str) -> Any:
    return CliRunner().invoke(cli, ["--home", str(tmp_path), "memory", "eval", "--series", "x", "-m", "random/seed0",
                                    "--setting", "none", "--out", str(tmp_path / "out"), *args])


@pytest.mark.parametrize(("spec", "message"), [
    ("recent,windw=2", "memory 'recent' has no option 'windw'; its options: window"),
    ("bm25,k=3", "memory 'bm25' has no option 'k'; it takes none (the number of passages is --k)"),
    ("rag-recent,window=2,k=3", "memory 'rag-recent' has no option 'k'; its options: window (the number of passages is --k)"),
    ("summary,model=openai/x,perday=3", "memory 'summary' has no option 'perday'; its options: chunk, lead_chars, "
                                        "max_tokens, max_words, model, per_day"),
    ("ko-blind,extract=x", "memory 'ko-blind' has no option 'extract'; its options: extractor, model"),
    ("recent,window=x", "memory 'recent': option window must be an integer, got 'x'"),
    ("recent,window=2.5", "memory 'recent': option window must be an integer, got 2.5"),
])
def test_a_bad_memory_option_is_one_line_before_anything_loads(tmp_path, monkeypatch, spec, message):
    def no_model(*a: Any, **kw: Any) -> None:
        raise AssertionError("the model was loaded")

    monkeypatch.setattr("okgen.models.registry.load_backend", no_model)
    r = memory_eval(tmp_path, "--memory", spec)
    # The series "x" does not exist: the option is refused before the series is even looked up.
    assert r.exit_code == 1 and str(r.exception) == message
    assert not (tmp_path / "out").exists()
    with pytest.raises(ConfigError, match="option"):
        load_memory(spec)


def test_good_options_load_and_are_recorded():
    assert load_memory("recent,window=2").identity() == {"memory": "recent", "window": 2}
    assert load_memory("rag-recent,window=3").options["window"] == 3
    assert load_memory("summary,model=openai/x,per_day=3,max_words=50").options["per_day"] == 3
    assert load_memory("ko-blind,extractor=rules").identity() == {"memory": "ko-blind", "extractor": "rules"}
    mem = load_memory("mem0-rest,base_url=http://127.0.0.1:9,timeout=5")
    mem.close()
    assert check_memory_spec("full") == ("full", {})


def test_entry_point_memories_are_checked_too(monkeypatch):
    decl = {"mem0-rest": "okgen.memory.adapters.mem0_rest:Mem0Rest"}
    eps = [EntryPoint(name=n, value=v, group=base.ENTRY_POINT_GROUP) for n, v in decl.items()]
    monkeypatch.setattr(base, "entry_points", lambda group: [e for e in eps if e.group == group])
    with pytest.raises(ConfigError, match="^memory 'mem0-rest' has no option 'url'; its options: base_url, timeout, user$"):
        check_memory_spec("mem0-rest,url=http://x")
    with pytest.raises(ConfigError, match="option timeout must be a number, got 'soon'"):
        check_memory_spec("mem0-rest,base_url=http://x,timeout=soon")


class Declared(RecentWindow):
    """Reads ``alpha`` from its options without naming it in ``__init__``."""

    option_names = ("window", "alpha")


def test_options_come_from_the_signature_or_a_declaration():
    def factory(depth: int = 2, name: str = "a", flag: bool = False) -> Memory:
        return RecentWindow()

    def open_factory(**kw: Any) -> Memory:
        return RecentWindow()

    assert memory_options(RecentWindow) == {"window": int}
    assert memory_options(factory) == {"depth": int, "name": str, "flag": bool}
    assert memory_options(open_factory) is None  # takes any key
    check_options("open", open_factory, {"anything": 1})
    check_options("declared", Declared, {"alpha": 0.5, "window": 2})
    check_options("f", factory, {"depth": 3, "name": 7, "flag": True})  # a number is a fine string
    with pytest.raises(ConfigError, match="^memory 'f': option flag must be true or false, got 3$"):
        check_options("f", factory, {"flag": 3})
    with pytest.raises(ConfigError, match="^memory 'declared' has no option 'beta'; its options: alpha, window$"):
        check_options("declared", Declared, {"beta": 1})


def test_ask_end_prints_and_writes_accuracy_by_age(tmp_path):
    entity_series(Workspace(tmp_path))
    out = tmp_path / "runs"
    args = ["--home", str(tmp_path), "memory", "eval", "--series", "entity", "-m", "random/seed0", "--setting", "none",
            "--memory", "full", "--ask", "end", "--out", str(out)]
    r = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert r.exit_code == 0, r.output
    head = "| setting | 0 d | 3 d | 6 d | 9 d |"
    assert "## Accuracy by age of the needed fact" in r.stdout and head in r.stdout
    md = (out / "comparison.md").read_text()
    assert head in md and md.count("(n=1)") == 8
    rows = json.loads((out / "comparison.json").read_text())["rows"]
    assert set(rows[1]["by_age"]) == {"0", "3", "6", "9"}
    same = CliRunner().invoke(cli, [*args[:-4], "--out", str(tmp_path / "same")], catch_exceptions=False)
    assert same.exit_code == 0 and "by age" not in same.stdout  # same-day: every age is 0


def test_by_age_table_orders_ages_and_marks_the_missing():
    rows = [{"setting": "a", "by_age": {"10": {"n": 2, "accuracy": 0.5}, "2": {"n": 1, "accuracy": 1.0}}},
            {"setting": "b", "by_age": {"2": {"n": 1, "accuracy": 0.0}}}]
    assert by_age_markdown(rows).splitlines()[3:] == [
        "| setting | 2 d | 10 d |", "| --- | --- | --- |", "| a | 100.0 (n=1) | 50.0 (n=2) |", "| b | 0.0 (n=1) | – |"]
    assert by_age_markdown([{"setting": "a", "by_age": {}}]) == ""


def test_docs_say_limit_is_per_day_and_what_future_context_means():
    doc = (ROOT / "docs" / "memory.md").read_text()
    assert "**`--limit N` on `--series` is per day**" in doc
    assert "**Future context with `--ask end`.**" in doc
