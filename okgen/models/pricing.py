"""Token prices (USD per million tokens) for cost accounting and ``--max-cost`` budgets.

The packaged table (``okgen/data/prices.toml``) lists list prices for common API models; users
extend or override it with a ``[prices]`` table in ``okgen.toml`` or a TOML file of their own
(``okgen generate --prices FILE``). A model missing from the table costs 0 and is warned about
once, so a budget is never silently wrong without a warning. :class:`Budget` is the spending
limit behind ``--max-cost``.
"""

from __future__ import annotations

import logging
import math
import re
import threading
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from okgen.errors import ConfigError
from okgen.settings import load_config, tomllib

log = logging.getLogger(__name__)
_WARN_LOCK = threading.Lock()


@dataclass(frozen=True)
class Price:
    """USD per million input and output tokens."""

    input: float
    output: float
    cached_input: float | None = None


# What may follow a priced family name in a model id and still mean that family: a dated or
# versioned snapshot (``gpt-4.1-2025-04-14``, ``claude-3-5-sonnet-20241022``, ``-0613``) or
# ``-latest``/``-preview``. ``o3-pro`` or ``gpt-5-pro`` are other models, priced differently.
_SNAPSHOT = re.compile(r"(?:-(?:\d{4}-\d{2}-\d{2}|\d{4}|\d{8}|latest|preview))+", re.I)


class PriceTable:
    """Model -> :class:`Price`, matched exactly, then as a dated snapshot of a priced family.

    Args:
        prices: model name -> ``{"input": x, "output": y}``.
    """

    def __init__(self, prices: dict[str, Any] | None = None):
        self._prices: dict[str, Price] = {}
        self._warned: set[str] = set()
        if prices:
            self.update(prices)

    @classmethod
    def default(cls, extra: dict[str, Any] | None = None, files: list[str | Path] | None = None) -> PriceTable:
        """The packaged table, extended by ``extra`` and TOML ``files`` (later wins)."""
        table = cls()
        text = resources.files("okgen").joinpath("data/prices.toml").read_text(encoding="utf-8")
        table.update(tomllib.loads(text).get("prices", {}))
        for f in files or []:
            cfg = load_config(f)
            if not cfg and not Path(f).exists():
                raise ConfigError(f"{f}: no such price file")
            table.update(cfg.get("prices", cfg))
        if extra:
            table.update(extra)
        return table

    def update(self, prices: dict[str, Any]) -> None:
        """Add or replace entries.

        Raises:
            ConfigError: ``prices`` is not a table of model -> {input, output}.
        """
        if not isinstance(prices, dict):
            raise ConfigError(f"prices must be a table of model = {{input = ..., output = ...}}, got {prices!r}"[:200])
        for model, p in prices.items():
            try:
                self._prices[model] = Price(float(p["input"]), float(p["output"]),
                                            float(p["cached_input"]) if p.get("cached_input") is not None else None)
            except (KeyError, TypeError, ValueError):
                raise ConfigError(f"price of {model!r} needs numeric 'input' and 'output' (USD per 1M tokens)") from None

    def lookup(self, model: str) -> Price | None:
        """The price of ``model``: exact, with the provider prefix stripped, or as a snapshot of the
        longest priced name it extends (``gpt-4.1-2025-04-14`` is ``gpt-4.1``; ``o3-pro`` is not
        ``o3``)."""
        for name in (model, model.split("/", 1)[-1]):
            if name in self._prices:
                return self._prices[name]
        name = model.split("/", 1)[-1]
        best = max((m for m in self._prices if name.startswith(m) and _SNAPSHOT.fullmatch(name[len(m):])),
                   key=len, default=None)
        return self._prices[best] if best else None

    def cost(self, model: str, prompt_tokens: int, completion_tokens: int, cached_tokens: int = 0) -> float:
        """USD cost of one call (0 with a one-time warning for an unknown model).

        Args:
            model: model name.
            prompt_tokens: input tokens, including ``cached_tokens``.
            completion_tokens: output tokens.
            cached_tokens: input tokens the provider served from its prompt cache (billed at
                ``cached_input`` when the table gives one).
        """
        p = self.lookup(model)
        if p is None:
            with _WARN_LOCK:
                first = model not in self._warned
                self._warned.add(model)
            if first:
                log.warning("no price known for %s: its cost counts as 0 (add it under [prices] in okgen.toml)", model)
            return 0.0
        cached = min(max(0, cached_tokens), prompt_tokens) if p.cached_input is not None else 0
        return ((prompt_tokens - cached) * p.input + cached * (p.cached_input or 0.0)
                + completion_tokens * p.output) / 1_000_000

    def known(self) -> dict[str, Price]:
        """Every priced model name, sorted."""
        return dict(sorted(self._prices.items()))


class Budget:
    """A spending limit in USD, shared by every client of a run (thread-safe).

    A call may start only while ``spent + reserved < limit``; it reserves an estimate of its
    cost until it finishes and is then charged its real cost. So no call starts once the limit
    is reached, and the overshoot is bounded by the calls already in flight.

    Args:
        limit: USD; None for no limit (the budget then only counts).
    """

    def __init__(self, limit: float | None = None):
        if limit is not None and not (isinstance(limit, int | float) and math.isfinite(limit) and limit >= 0):
            raise ConfigError(f"a budget must be a number >= 0 USD, got {limit!r}")
        self.limit = limit
        self.spent = 0.0
        self.reserved = 0.0
        self.refused = 0
        self._lock = threading.Lock()

    def try_reserve(self, estimate: float) -> bool:
        """Reserve ``estimate`` USD for a call; False (and nothing reserved) when exhausted."""
        with self._lock:
            if self.limit is not None and self.spent + self.reserved >= self.limit:
                self.refused += 1
                return False
            self.reserved += estimate
            return True

    def settle(self, estimate: float, actual: float) -> None:
        """Release a reservation and charge the call's real cost."""
        with self._lock:
            self.reserved = max(0.0, self.reserved - estimate)
            self.spent += actual

    @property
    def exhausted(self) -> bool:
        """True once the spent money reaches the limit."""
        return self.limit is not None and self.spent >= self.limit

    def __repr__(self) -> str:
        return f"Budget(limit={self.limit}, spent={self.spent:.6f}, reserved={self.reserved:.6f})"
