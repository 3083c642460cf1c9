"""Progress bars for long work: tqdm on stderr, shown only when stderr is a terminal.

Library code calls :func:`bar`; ``OKGEN_QUIET=1`` or ``OKGEN_NO_PROGRESS=1`` turns bars off.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from typing import Any, TypeVar

T = TypeVar("T")


def enabled() -> bool:
    """Whether bars are shown."""
    if os.environ.get("OKGEN_NO_PROGRESS", "").lower() in ("1", "true", "yes"):
        return False
    if os.environ.get("OKGEN_QUIET", "").lower() in ("1", "true", "yes"):
        return False
    return sys.stderr.isatty()


def bar(iterable: Iterable[T] | None = None, *, total: int | None = None, desc: str = "", unit: str = "it", **kw: Any):
    """A tqdm bar on stderr (disabled when not a terminal). Use as iterator or context manager."""
    from tqdm.auto import tqdm

    return tqdm(iterable, total=total, desc=desc, unit=unit, file=sys.stderr, disable=not enabled(),
                dynamic_ncols=True, leave=False, **kw)
