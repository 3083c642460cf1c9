"""The spending budget and the SQLite response cache."""

from __future__ import annotations

import asyncio

import pytest

from okgen.errors import ConfigError
from okgen.llm import Budget, ChatModel, ChatRequest


def test_budget_reservations():
    b = Budget(1.0)
    assert b.try_reserve(0.6) and not b.try_reserve(0.6)  # a call starts only if its estimate fits
    assert b.refused == 1 and b.try_reserve(0.4) and b.in_flight == 2
    b.settle(0.6, 0.5)
    b.settle(0.4, 0.3)
    assert b.spent == pytest.approx(0.8) and b.in_flight == 0 and not b.exhausted and b.try_reserve(0.0)
    b.settle(0.0, 0.2)
    assert b.exhausted and not b.try_reserve(0.01) and b.try_reserve(0.0)  # a free call costs nothing
    assert Budget(None).try_reserve(1e9)
    with pytest.raises(ConfigError):
        Budget(-1)


def test_a_refused_reservation_waits_for_the_calls_in_flight():
    async def main():
        b = Budget(1.0)
        assert b.try_reserve(0.4) and b.try_reserve(0.4)
        waiting = asyncio.ensure_future(b.reserve(0.4))  # 0.4 + 0.4 + 0.4 > 1: waits, not refused
        await asyncio.sleep(0)
        assert not waiting.done() and b.refused == 0
        b.settle(0.4, 0.1)  # spent 0.1 + reserved 0.4 + 0.4 fits now
        assert await waiting and b.in_flight == 2
        second = asyncio.ensure_future(b.reserve(0.4))
        await asyncio.sleep(0)
        b.settle(0.4, 0.35)
        await asyncio.sleep(0)
        assert not second.done()  # 0.45 + 0.4 + 0.4 still does not fit: one call is in flight
        b.settle(0.4, 0.4)  # nothing in flight, and 0.85 + 0.4 passes the limit: refused
        assert not await second and b.refused == 1
        assert await b.reserve(0.1)  # a smaller call still fits
        b.settle(0.1, 0.1)
        assert b.spent == pytest.approx(0.95) and b.spent <= b.limit

    asyncio.run(main())


class _Priced(ChatModel):
    """A backend whose calls take a few event-loop turns: $0.004 each, $0.01 reserved."""

    def __init__(self, **kw):
        super().__init__("m", **kw)
        self.sent = self.active = self.max_active = 0

    def _estimate(self, req):
        return 0.01

    def _cost(self, raw, warn=True):
        return 0.004

    async def _send(self, req):
        self.sent, self.active = self.sent + 1, self.active + 1
        self.max_active = max(self.max_active, self.active)
        assert self.budget.spent + self.budget.reserved <= self.budget.limit + 1e-12
        for _ in range(3):
            await asyncio.sleep(0)  # an event-loop turn, not a wait
        self.active -= 1
        return {"choices": [{"message": {"content": "x"}, "finish_reason": "stop"}]}


def test_a_budget_is_mostly_spent_at_concurrency_and_never_passed():
    # Four calls in flight reserve $0.04 of a $0.05 budget: refusing the fifth call outright (and
    # stopping the run) spent 10 % of it; waiting for the calls in flight spends it up to the last
    # call that fits.
    model = _Priced(concurrency=4, budget=Budget(0.05))
    results = model.chat_many([ChatRequest(messages=({"role": "user", "content": f"{i}"},)) for i in range(40)])
    b = model.budget
    assert model.max_active == 4
    assert sum(r.ok for r in results) == model.sent == 11 and b.spent == pytest.approx(0.044)  # 88 %
    assert all(r.error_kind == "budget" for r in results if not r.ok)
    assert "$0.0440 of $0.05 spent" in next(r.error for r in results if not r.ok)
    assert b.spent <= b.limit and b.in_flight == 0 and b.reserved == pytest.approx(0.0)


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
