"""Token cost of API calls, and the spending limit behind ``--max-cost``.

A call's cost is, in order: the override table (``[prices."MODEL"]`` in okgen.toml or a
``--prices FILE``, USD per million tokens), the cost the server reports in its usage, then
``genai-prices`` (matched for the provider of the base URL). A model priced by none costs 0,
with one warning (none for a model on this machine or in-process).
"""

from __future__ import annotations

import logging
import math
import threading
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from okgen.errors import ConfigError
from okgen.files import load_config

log = logging.getLogger(__name__)

OPENAI_URL = "https://api.openai.com/v1"
_UNPRICED: set[tuple[str, str | None]] = set()


class PriceTable:
    """The override table (model -> ``{"input": x, "output": y[, "cached_input": z]}``, USD per
    million tokens), backed by ``genai-prices``.

    Raises:
        ConfigError: an entry without numeric ``input`` and ``output``.
    """

    def __init__(self, prices: dict[str, Any] | None = None):
        self._prices: dict[str, tuple[float, float, float | None]] = {}
        self._warned: set[str] = set()
        if not isinstance(prices or {}, dict):
            raise ConfigError(f"prices must be a table of model = {{input = ..., output = ...}}, got {prices!r}"[:200])
        for model, p in (prices or {}).items():
            try:
                cached = p.get("cached_input")
                self._prices[model] = (float(p["input"]), float(p["output"]), None if cached is None else float(cached))
            except (KeyError, TypeError, ValueError, AttributeError):
                raise ConfigError(f"price of {model!r} needs numeric 'input' and 'output' (USD per 1M tokens)") from None

    @classmethod
    def default(cls, extra: dict[str, Any] | None = None, files: list[str | Path] | None = None) -> PriceTable:
        """The overrides in TOML ``files`` and then ``extra`` (later wins); ConfigError for a missing file."""
        merged: dict[str, Any] = {}
        for f in files or []:
            cfg = load_config(f)
            if not cfg and not Path(f).exists():
                raise ConfigError(f"{f}: no such price file")
            cls(table := cfg.get("prices", cfg))  # checked here, to name the file's entry
            merged.update(table)
        return cls({**merged, **(extra or {})})

    def _override(self, model: str) -> tuple[float, float, float | None] | None:
        # As the server names it, without a provider prefix, or as the model spec names it ("openai/NAME").
        return (self._prices.get(model) or self._prices.get(model.split("/", 1)[-1])
                or self._prices.get(f"openai/{model}"))

    def priced(self, model: str, endpoint: str | None = None) -> bool:
        """True when the override table or ``genai-prices`` knows the model (at that endpoint)."""
        return self._override(model) is not None or _genai(model, endpoint, 1, 1, 0) is not None

    def cost(self, model: str, prompt_tokens: int, completion_tokens: int, cached_tokens: int = 0, *,
             endpoint: str | None = None, reported: Any = None, warn: bool = True) -> float:
        """USD of one call (``prompt_tokens`` include the ``cached_tokens`` served from the provider's
        prompt cache; ``endpoint``, the base URL, picks the provider; ``reported``: the server's figure)."""
        if (p := self._override(model)) is not None:
            cached = min(max(0, cached_tokens), prompt_tokens) if p[2] is not None else 0
            return ((prompt_tokens - cached) * p[0] + cached * (p[2] or 0.0) + completion_tokens * p[1]) / 1_000_000
        if isinstance(reported, int | float) and not isinstance(reported, bool) and math.isfinite(reported):
            return max(0.0, float(reported))
        got = _genai(model, endpoint, prompt_tokens, completion_tokens, cached_tokens)
        if got is None and warn and not _local(endpoint) and model not in self._warned:
            self._warned.add(model)
            log.warning("no price known for %s: its cost counts as 0 (add it under [prices] in okgen.toml)", model)
        return got or 0.0


def _genai(model: str, endpoint: str | None, prompt: int, completion: int, cached: int) -> float | None:
    if _local(endpoint) or (model, endpoint) in _UNPRICED:
        return None  # a model on this machine has no list price (and the price data is not loaded)
    from genai_prices import Usage, calc_price

    usage = Usage(input_tokens=prompt, output_tokens=completion, cache_read_tokens=min(cached, prompt) or None)
    try:
        return float(calc_price(usage, model, provider_api_url=endpoint or OPENAI_URL).total_price)
    except LookupError:
        _UNPRICED.add((model, endpoint))
        return None


def _local(endpoint: str | None) -> bool:
    host = (urlsplit(endpoint).hostname or endpoint) if endpoint else ""
    return host in ("localhost", "in-process", "::1", "0.0.0.0") or host.startswith("127.")  # noqa: S104


class Budget:
    """A spending limit in USD (None: none, only counting) shared by every model of a run.

    A call starts only when its estimate (an upper bound of its cost: the prompt and the longest
    answer allowed) fits: ``spent + reserved + estimate <= limit``. It reserves the estimate until
    it is charged its real cost, so the limit is not passed while estimates hold. A call that does
    not fit while others are in flight waits for them to settle (their real cost, usually far below
    their reservation, frees room); it is refused only when nothing is in flight. A run therefore
    spends close to its limit, whatever its concurrency. Thread-safe; waiting is for asyncio tasks.
    """

    def __init__(self, limit: float | None = None):
        if limit is not None and not (isinstance(limit, int | float) and math.isfinite(limit) and limit >= 0):
            raise ConfigError(f"a budget must be a number >= 0 USD, got {limit!r}")
        self.limit, self.spent, self.reserved, self.refused, self.in_flight = limit, 0.0, 0.0, 0, 0
        self._lock = threading.Lock()
        self._waiters: list[tuple[Any, Any]] = []  # (event loop, future) of calls waiting for room

    def _fits(self, estimate: float) -> bool:
        return self.limit is None or self.spent + self.reserved + estimate <= self.limit * (1 + 1e-9)  # float sums

    def try_reserve(self, estimate: float) -> bool:
        """Reserve ``estimate`` USD for a call if it fits now; False (and nothing reserved) if not."""
        with self._lock:
            if not self._fits(estimate):
                self.refused += 1
                return False
            self.reserved += estimate
            self.in_flight += 1
            return True

    def poll(self, estimate: float) -> bool | Any:
        """Reserve ``estimate`` USD if it fits now (True); False (nothing reserved) when it does not
        fit with nothing in flight: the budget is reached; else a future of the running event loop
        that is done when a call in flight settles (then ask again)."""
        import asyncio

        with self._lock:
            if self._fits(estimate):
                self.reserved += estimate
                self.in_flight += 1
                return True
            if self.in_flight == 0:
                self.refused += 1
                return False
            loop = asyncio.get_running_loop()
            fut = loop.create_future()
            self._waiters.append((loop, fut))
            return fut

    async def reserve(self, estimate: float) -> bool:
        """Reserve ``estimate`` USD for a call, waiting while calls in flight may free room; False
        (nothing reserved) when it does not fit with nothing in flight: the budget is reached."""
        while not isinstance(got := self.poll(estimate), bool):
            await got
        return got

    def settle(self, estimate: float, actual: float) -> None:
        """Release a reservation and charge the call's real cost (waking the calls waiting for room)."""
        with self._lock:
            self.reserved = max(0.0, self.reserved - estimate)
            self.in_flight = max(0, self.in_flight - 1)
            if self.in_flight == 0:
                self.reserved = 0.0  # no float residue left behind
            self.spent += actual
            waiters, self._waiters = self._waiters, []
        for loop, fut in waiters:
            try:
                loop.call_soon_threadsafe(_wake, fut)
            except RuntimeError:  # its event loop is closed: nobody waits there any more
                pass

    @property
    def exhausted(self) -> bool:
        return self.limit is not None and self.spent >= self.limit

    def describe(self) -> str:
        """What was spent of the limit, for messages ("$0.0049 of $0.05 spent")."""
        return f"${self.spent:.4f} of ${self.limit:g} spent" if self.limit is not None else f"${self.spent:.4f} spent"


def _wake(fut: Any) -> None:
    if not fut.done():
        fut.set_result(None)
