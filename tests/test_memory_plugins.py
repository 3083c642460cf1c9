"""Memories through the ``okgen.memories`` entry point (mem0-rest against a local fake) and the rolling summary."""

from __future__ import annotations

import json
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

import okgen.memory.base as base
from okgen.errors import ConfigError
from okgen.memory.base import known_memories, load_memory
from okgen.memory.harness import StreamDay, StreamOptions, run_stream
from okgen.testing.fake_mem0 import FakeMem0
from okgen.testing.memory import FirstArticleBackend, entity_stream
from okgen.testing.openai_server import OpenAIServer

ROOT = Path(__file__).resolve().parents[1]


def stream() -> list[StreamDay]:
    arts, qs = entity_stream()
    dates = sorted({a.date for a in arts})
    return [StreamDay(d, [a for a in arts if a.date == d], [q for q in qs if q.date == d]) for d in dates]


@pytest.fixture
def mem0_entry_point(monkeypatch):
    """The entry point as okgen's pyproject declares it (the editable install may predate it)."""
    decl = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]["okgen.memories"]
    eps = [EntryPoint(name=n, value=v, group=base.ENTRY_POINT_GROUP) for n, v in decl.items()]
    monkeypatch.setattr(base, "entry_points", lambda group: [e for e in eps if e.group == group])
    return decl


def test_entry_point_memory_is_listed_and_loaded(mem0_entry_point):
    assert mem0_entry_point["mem0-rest"] == "okgen.memory.adapters.mem0_rest:Mem0Rest"
    assert "mem0-rest" in known_memories() and "bm25" in known_memories()
    with pytest.raises(ConfigError, match="base_url"):
        load_memory("mem0-rest")


def test_mem0_adapter_over_a_local_fake_runs_the_stream_and_resumes(mem0_entry_point, tmp_path):
    with FakeMem0() as srv:
        days = stream()
        res = run_stream(days, f"mem:mem0-rest,base_url={srv.base_url}", FirstArticleBackend(), tmp_path / "a",
                         StreamOptions(k=2))
        assert res["n"] == 4 and res["dated"]["future_context"] == 0.0
        assert len(srv.memories["okgen-0"]) == sum(len(d.articles) for d in days)
        assert ("DELETE", "/memories") in srv.calls and ("POST", "/search") in srv.calls
        # The server's memories carry okgen's metadata; the passages keep date and article id.
        m = load_memory(f"mem0-rest,base_url={srv.base_url}")
        m.restore(json.loads((tmp_path / "a" / "memory_state.json").read_text())["state"])
        got = m.retrieve("Harbor Lights Company chief executive", days[-1].date, 3)
        assert len(got) == 3 and all(p.date and p.article_id for p in got)
        ids = {a.id for d in days for a in d.articles}
        assert {p.article_id for p in got} <= ids


def test_rolling_summary_through_a_chat_model_spec(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test")

    def notes(req, endpoint):  # the chief executive the day's articles name first, as a one-line note
        text = req["messages"][-1]["content"].split("New articles")[1]
        names = [n for n in ("Alice Moreau", "Bruno Salazar", "Chiara Lindqvist", "Dmitri Okafor") if n in text]
        last = min(names, key=text.find) if names else "nobody"
        return f"Harbor Lights Company chief executive: {last}."

    with OpenAIServer(responder=notes) as srv:
        spec = f"openai/fake-model,base_url={srv.base_url}"
        res = run_stream(stream(), "mem:summary", FirstArticleBackend(), tmp_path, memory_model=spec)
        assert srv.calls["chat"] == 10  # one call per day (2 articles a day, chunk 8)
    assert res["accuracy"] == 1.0  # the notes name the current chief executive each day
    assert res["cost_mean"]["memory_tokens"] > 0 and res["cost_mean"]["memory_chars"] > 0
    state = json.loads((tmp_path / "memory_state.json").read_text())["state"]
    assert state["notes"].endswith("Dmitri Okafor.") and state["as_of"] == "2026-01-10"


def test_summary_needs_a_model():
    with pytest.raises(ConfigError, match="chat model"):
        load_memory("summary")


def test_a_passage_with_a_date_that_is_not_iso_is_one_line_naming_the_memory():
    import datetime as dt

    import pytest

    from okgen.errors import OkgenError
    from okgen.eval.templates import Passage
    from okgen.memory.harness import LeakError, _Feed

    feed = _Feed(dates={"a1": dt.date(2025, 4, 10)}, seen={"a1"})
    day = dt.date(2025, 4, 10)
    feed.check_passages("memory odd", day, [Passage(article_id="a1", title="t", text="x", date="2025-04-10")])
    with pytest.raises(OkgenError) as e:
        feed.check_passages("memory odd", day, [Passage(article_id="a1", title="t", text="x", date="April 10, 2025")])
    assert str(e.value) == ("memory odd returned a1 with date 'April 10, 2025': a passage's date is ISO "
                            "(YYYY-MM-DD), or empty")
    with pytest.raises(LeakError):
        feed.check_passages("memory odd", day, [Passage(article_id="b2", title="t", text="x", date="2025-04-13")])
