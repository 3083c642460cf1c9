"""Low-level helpers of the OpenAI-compatible client: HTTP error handling, ``Retry-After``,
response formats, running coroutines from sync code, model specs."""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import functools
import gc
import threading
import time
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel

from okgen.errors import ConfigError

RETRY_STATUS = {408, 409, 429, 500, 502, 503, 504}
MAX_BACKOFF = 60.0


@functools.lru_cache(maxsize=64)
def _json_schema(schema: type[BaseModel]) -> dict[str, Any]:
    # Part of every cache key: computing it per request would cost more than the lookup.
    return schema.model_json_schema()


@functools.lru_cache(maxsize=64)
def _response_format(schema: type[BaseModel]) -> dict[str, Any]:
    """The ``json_schema`` response format of a pydantic model (strict, as OpenAI wants it)."""
    try:
        from openai.lib import type_to_response_format_param

        return dict(type_to_response_format_param(schema))
    except ImportError:  # pragma: no cover - older openai releases
        js = dict(schema.model_json_schema())
        js["additionalProperties"] = False
        return {"type": "json_schema", "json_schema": {"name": schema.__name__, "schema": js, "strict": True}}


def _message(e: Any) -> str:
    body = getattr(e, "body", None)
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])[:300]
    return str(getattr(e, "message", e))[:300]


def _mentions_format(e: Any) -> bool:
    text = _message(e).lower()
    return any(w in text for w in ("response_format", "json_schema", "json_object", "structured", "guided"))


def _retry_after(response: Any) -> float | None:
    """Seconds to wait from ``retry-after-ms`` / ``Retry-After`` (seconds or HTTP date)."""
    if response is None:
        return None
    headers = response.headers
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    ra = headers.get("retry-after")
    if not ra:
        return None
    try:
        return min(MAX_BACKOFF * 10, max(0.0, float(ra)))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(ra)
        return min(MAX_BACKOFF * 10, max(0.0, when.timestamp() - time.time()))
    except (TypeError, ValueError):
        return None


# Allocations between young-generation collections while many calls are in flight (Python's
# default is 700, which at hundreds of calls a second means a collection every few calls).
BUSY_GC_THRESHOLD = 20_000


@contextlib.contextmanager
def quiet_gc() -> Iterator[None]:
    """Fewer and shorter garbage collections for a burst of concurrent calls.

    Objects alive when the burst starts (imported modules, the day's articles) are frozen out
    of collections, and young objects are collected less often. A full collection otherwise
    scans every imported module's objects, pausing the event loop for ~100 ms while replies
    wait, which at a 0.2 s latency shows in the wall time. The settings are restored on exit;
    a process that froze objects itself is left as it is.
    """
    if gc.get_freeze_count() or not gc.isenabled():
        yield
        return
    old = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(max(old[0], BUSY_GC_THRESHOLD), *old[1:])
    try:
        yield
    finally:
        gc.set_threshold(*old)
        gc.unfreeze()


def run_sync(coro: Any) -> Any:
    """Run a coroutine to completion from sync code, also inside a running event loop, with
    :func:`quiet_gc`."""
    with quiet_gc():
        return _run_sync(coro)


def _run_sync(coro: Any) -> Any:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    out: dict[str, Any] = {}

    def target() -> None:
        try:
            out["v"] = asyncio.run(coro)
        except BaseException as e:  # re-raised in the caller's thread
            out["e"] = e

    t = threading.Thread(target=target)
    t.start()
    t.join()
    if "e" in out:
        raise out["e"]
    return out["v"]


def parse_endpoint_spec(spec: str) -> tuple[str, dict[str, str]]:
    """Split ``openai/MODEL[,key=value...]`` into the model and its options.

    >>> parse_endpoint_spec("openai/gpt-4.1,base_url=http://127.0.0.1:8000/v1")
    ('gpt-4.1', {'base_url': 'http://127.0.0.1:8000/v1'})
    """
    body = spec.split("/", 1)[1] if spec.startswith("openai/") else spec
    model, *opts = body.split(",")
    options: dict[str, str] = {}
    for opt in opts:
        k, eq, v = opt.partition("=")
        if not eq or not k:
            raise ConfigError(f"bad option {opt!r} in model spec {spec!r} (expected key=value)")
        options[k.strip()] = v.strip()
    if not model:
        raise ConfigError(f"model spec {spec!r} names no model")
    return model, options
