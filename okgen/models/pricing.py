"""Token prices (USD per million tokens) for cost accounting and ``--max-cost`` budgets.

The packaged table (``okgen/data/prices.toml``) lists list prices for common API models; users
extend or override it with a ``[prices]`` table in ``okgen.toml`` or a TOML file of their own
(``okgen generate --prices FILE``). A model missing from the table costs 0 and is warned about
once, so a budget is never silently wrong without a warning.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from okgen.errors import ConfigError
from okgen.settings import load_config

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Price:
    """USD per million input and output tokens."""

    input: float
    output: float
    cached_input: float | None = None


class PriceTable:
    """Model -> :class:`Price`, matched exactly, then by the longest matching prefix.

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
        import sys

        if sys.version_info >= (3, 11):
            import tomllib
        else:  # pragma: no cover
            import tomli as tomllib
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
        """Add or replace entries."""
        for model, p in prices.items():
            try:
                self._prices[model] = Price(float(p["input"]), float(p["output"]),
                                            float(p["cached_input"]) if p.get("cached_input") is not None else None)
            except (KeyError, TypeError, ValueError):
                raise ConfigError(f"price of {model!r} needs numeric 'input' and 'output' (USD per 1M tokens)") from None

    def lookup(self, model: str) -> Price | None:
        """The price of ``model`` (exact, provider prefix stripped, or longest prefix)."""
        for name in (model, model.split("/", 1)[-1]):
            if name in self._prices:
                return self._prices[name]
        best = max((m for m in self._prices if model.split("/", 1)[-1].startswith(m)), key=len, default=None)
        return self._prices[best] if best else None

    def cost(self, model: str, prompt_tokens: int, completion_tokens: int) -> float:
        """USD cost of one call (0 with a one-time warning for an unknown model)."""
        p = self.lookup(model)
        if p is None:
            if model not in self._warned:
                self._warned.add(model)
                log.warning("no price known for %s: its cost counts as 0 (add it under [prices] in okgen.toml)", model)
            return 0.0
        return (prompt_tokens * p.input + completion_tokens * p.output) / 1_000_000
