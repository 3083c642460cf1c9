"""Price table, budget and tolerant JSON extraction."""

from __future__ import annotations

import pytest

from okgen.errors import ConfigError
from okgen.models.jsonfix import JSONExtractError, extract_json, salvage_truncated
from okgen.models.pricing import Budget, PriceTable


def test_packaged_prices_and_prefix_matching():
    t = PriceTable.default()
    assert t.lookup("gpt-4.1").input == 2.0
    assert t.lookup("gpt-4.1-2025-04-14").output == 8.0  # dated snapshot -> family price
    assert t.lookup("gpt-4.1-mini-2025-04-14").input == 0.4  # longest prefix wins
    assert t.lookup("openai/gpt-4o-mini").output == 0.6  # provider prefix stripped
    assert t.lookup("o3-mini").input == 1.1
    assert t.lookup("my-local-model") is None
    assert t.lookup("gpt-4o-2024-08-06").input == 2.5 and t.lookup("gpt-4o-latest").input == 2.5
    # Another model of the same family is not its family's price (o3-pro costs ~10x o3).
    assert t.lookup("o3-pro") is None and t.lookup("gpt-5-pro") is None and t.lookup("o3x") is None
    assert t.lookup("gpt-5-pro-2025-10-06") is None
    assert PriceTable({"claude-3-5-sonnet": {"input": 3, "output": 15}}).lookup("claude-3-5-sonnet-20241022").output == 15
    assert t.cost("my-local-model", 10, 10) == 0.0


def test_cost_with_cached_input():
    t = PriceTable({"m": {"input": 2.0, "output": 8.0, "cached_input": 0.5}})
    assert t.cost("m", 1_000_000, 0) == pytest.approx(2.0)
    assert t.cost("m", 1_000_000, 1_000_000, cached_tokens=400_000) == pytest.approx(0.6 * 2 + 0.4 * 0.5 + 8.0)


def test_user_prices_extend_and_override(tmp_path):
    f = tmp_path / "prices.toml"
    f.write_text('[prices."gpt-4.1"]\ninput = 1.0\noutput = 4.0\n[prices."my-model"]\ninput = 0.1\noutput = 0.2\n')
    t = PriceTable.default(extra={"other": {"input": 3, "output": 3}}, files=[f])
    assert t.lookup("gpt-4.1").input == 1.0 and t.lookup("my-model").output == 0.2 and t.lookup("other").input == 3
    with pytest.raises(ConfigError):
        PriceTable({"bad": {"input": "cheap"}})
    with pytest.raises(ConfigError):
        PriceTable.default(files=[tmp_path / "missing.toml"])
    f.write_text("prices = 5\n")
    with pytest.raises(ConfigError, match="prices must be a table"):
        PriceTable.default(files=[f])
    f.write_bytes(b"\xff[prices]\n")
    with pytest.raises(ConfigError, match="not UTF-8"):
        PriceTable.default(files=[f])


def test_budget_reservations():
    b = Budget(1.0)
    assert b.try_reserve(0.6) and b.try_reserve(0.6)  # starts while spent + reserved < limit
    assert not b.try_reserve(0.1) and b.refused == 1
    b.settle(0.6, 0.5)
    b.settle(0.6, 0.4)
    assert b.spent == pytest.approx(0.9) and not b.exhausted and b.try_reserve(0.0)
    b.settle(0.0, 0.2)
    assert b.exhausted and not b.try_reserve(0.0)
    assert Budget(None).try_reserve(1e9)
    with pytest.raises(ConfigError):
        Budget(-1)


@pytest.mark.parametrize("text, value", [
    ('{"a": 1}', {"a": 1}),
    ('```json\n{"a": [1, 2]}\n```', {"a": [1, 2]}),
    ('Here you go: {"a": "b"} -- done', {"a": "b"}),
    ('{"a": [1, 2,], }', {"a": [1, 2]}),
    ('{\u201ca\u201d: \u201cb\u201d}', {"a": "b"}),
    ('[{"q": 1}, {"q": 2}]', [{"q": 1}, {"q": 2}]),
])
def test_extract_json(text, value):
    assert extract_json(text) == value


def test_extract_json_failures():
    for bad in ("", None, "no json here", '{"a": '):
        with pytest.raises(JSONExtractError):
            extract_json(bad)


def test_truncated_output_keeps_complete_items():
    cut = '{"questions": [{"q": "one", "c": ["a", "b"]}, {"q": "two", "c": ["a"]}, {"q": "thr'
    assert extract_json(cut, allow_truncated=True) == {"questions": [{"q": "one", "c": ["a", "b"]}, {"q": "two", "c": ["a"]}]}
    assert extract_json('```json\n[{"a": 1}, {"a": 2', allow_truncated=True) == [{"a": 1}]
    assert salvage_truncated('{"questions": [{"q": "only') is None
    with pytest.raises(JSONExtractError):
        extract_json('{"questions": [{"q": "only', allow_truncated=True)


def test_cache_commits_in_groups_and_never_holds_the_file_long(tmp_path):
    import sqlite3
    import time

    from okgen.models.cache import ResponseCache

    path = tmp_path / "llm.sqlite"
    cache = ResponseCache(path, flush_every=3, flush_seconds=0.3)
    other = sqlite3.connect(path, timeout=0.05)

    def visible() -> int:
        return other.execute("SELECT COUNT(*) FROM llm_cache").fetchone()[0]

    cache.put("k1", "m", {"a": 1}, {"r": 1})
    cache.put("k2", "m", '{"a":2}', {"r": 2})
    assert cache.get("k2") == {"r": 2} and visible() == 0  # not committed yet, readable here
    cache.put("k3", "m", {"a": 3}, {"r": 3})
    assert visible() == 3  # a group of three
    cache.put("k4", "m", {"a": 4}, {"r": 4})
    deadline = time.time() + 5
    while visible() < 4:  # the background flush commits a lone answer soon
        assert time.time() < deadline
        time.sleep(0.05)
    with other:  # another writer is not locked out
        other.execute("INSERT INTO llm_cache VALUES ('x', 'm', '{}', '{}', 0)")
    cache.put("k5", "m", {"a": 5}, {"r": 5})
    cache.close()
    assert visible() == 6
    cache.close()  # twice is fine


def test_extract_json_skips_reasoning_and_asides():
    # A reasoning model's <think> block (with braces of its own) before the answer.
    assert extract_json('<think>try {x} first</think>\n{"a": 1}') == {"a": 1}
    assert extract_json('<think>{"draft": 1}</think>```json\n{"a": 2}\n```') == {"a": 2}
    # A bracketed aside before the object: the object wins over the earlier array.
    assert extract_json('Here it is (see [1]): {"a": 1}') == {"a": 1}
    assert extract_json("Note {x}, then {\"a\": 1} and {\"b\": 2}") == {"a": 1}
    assert extract_json('[{"q": 1}, {"q": 2}]') == [{"q": 1}, {"q": 2}]  # a top-level array stays whole
    assert extract_json("only [1, 2] here") == [1, 2]
    # Python-style literals (single quotes, True/None); nothing is evaluated but literals.
    assert extract_json("{'a': 'b', 'ok': True, 'n': None}") == {"a": "b", "ok": True, "n": None}
    with pytest.raises(JSONExtractError):
        extract_json("{'a': __import__('os').getcwd()}")
    # A cut output is not mistaken for one of its inner objects; salvage keeps the whole prefix.
    cut = '<think>plan</think>{"questions": [{"q": 1}, {"q": 2}, {"q'
    with pytest.raises(JSONExtractError):
        extract_json(cut)
    assert extract_json(cut, allow_truncated=True) == {"questions": [{"q": 1}, {"q": 2}]}
