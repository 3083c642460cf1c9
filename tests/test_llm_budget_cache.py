"""The spending budget and the SQLite response cache."""

from __future__ import annotations

import pytest

from okgen.errors import ConfigError
from okgen.llm import Budget


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
