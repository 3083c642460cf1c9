"""Low-level helpers of the OpenAI-compatible client: HTTP error handling, ``Retry-After``,
response formats, the shared TLS context, running coroutines from sync code, model specs."""

from __future__ import annotations

import asyncio
import email.utils
import functools
import os
import threading
import time
from typing import Any

from pydantic import BaseModel

from okgen.errors import ConfigError

RETRY_STATUS = {408, 409, 429, 500, 502, 503, 504}
MAX_BACKOFF = 60.0


_TLS_LOCK = threading.Lock()
_TLS: Any = None
_TLS_READY = threading.Event()


def _ca_file() -> str | None:
    cafile = os.environ.get("SSL_CERT_FILE")
    if not cafile:
        try:
            import certifi

            cafile = certifi.where()
        except ImportError:  # pragma: no cover - certifi comes with httpx
            cafile = None
    return cafile


def _load_cas(ctx: Any) -> None:
    try:
        cafile = _ca_file()
        if cafile:
            ctx.load_verify_locations(cafile=cafile)
        else:  # pragma: no cover - no certifi and no SSL_CERT_FILE
            ctx.load_default_certs()
    except Exception as e:  # pragma: no cover - an unreadable bundle: TLS handshakes will fail, loudly
        import logging

        logging.getLogger(__name__).warning("could not load CA certificates: %s", e)
    finally:
        _TLS_READY.set()


def _ssl_context(wait: bool = True) -> Any:
    """The TLS context shared by every client of the process (certifi's CA bundle, or the
    file named by ``SSL_CERT_FILE``, else the system default), verifying certificates and
    host names.

    Loading the CA bundle takes ~50 ms; it runs in a thread (OpenSSL releases the GIL), started
    by the first call. ``wait=False`` returns the context at once, for clients of plain-http
    servers that need it only if a server redirects them to https: a handshake before the
    bundle is loaded fails verification, it is never accepted unverified.
    """
    global _TLS
    import ssl

    with _TLS_LOCK:
        if _TLS is None:
            _TLS = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # CERT_REQUIRED and check_hostname by default
            threading.Thread(target=_load_cas, args=(_TLS,), name="okgen-ca-load", daemon=True).start()
    if wait:
        _TLS_READY.wait()
    return _TLS


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


def run_sync(coro: Any) -> Any:
    """Run a coroutine to completion from sync code, also inside a running event loop."""
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
