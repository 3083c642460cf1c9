"""Access to any OpenAI-compatible server (OpenAI, ``vllm serve``, local servers).

One :class:`OpenAIClient` per model: async with a concurrency limit, retries with exponential
backoff and jitter on 429/5xx/timeouts honouring ``Retry-After``, structured outputs from a
pydantic schema where the server supports them (JSON mode, then tolerant JSON extraction, as
fallbacks), token usage and cost per call, an optional spending budget, and a SQLite response
cache keyed by a hash of (model, parameters, messages).

Failures are per item: :meth:`OpenAIClient.chat_many` never raises for one bad call; each
:class:`ChatResult` says what went wrong (``error`` and ``error_kind``).

The ``openai`` package is imported when a client is created, not when this module is.
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
import os
import random
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from okgen.errors import ConfigError
from okgen.models.cache import ResponseCache, request_key
from okgen.models.jsonfix import JSONExtractError, extract_json
from okgen.models.pricing import PriceTable

log = logging.getLogger(__name__)

RETRY_STATUS = {408, 409, 429, 500, 502, 503, 504}
MAX_BACKOFF = 60.0


@dataclass(frozen=True)
class ChatRequest:
    """One chat-completion request.

    Attributes:
        messages: chat messages (``{"role": ..., "content": ...}``).
        temperature, top_p, max_tokens, seed: decoding parameters.
        schema: pydantic model for structured output (None: free text).
        logprobs: ask for token log-probabilities; ``top_logprobs`` alternatives each.
        stop: stop sequences.
        tag: free label for accounting (not sent, not part of the cache key).
    """

    messages: tuple[dict[str, str], ...]
    temperature: float = 0.0
    top_p: float = 1.0
    max_tokens: int | None = None
    seed: int | None = None
    schema: type[BaseModel] | None = None
    logprobs: bool = False
    top_logprobs: int | None = None
    stop: tuple[str, ...] | None = None
    tag: str = ""


@dataclass
class ChatResult:
    """The outcome of one request (never raised: ``error`` says what failed)."""

    text: str | None = None
    parsed: Any = None
    finish_reason: str | None = None
    refusal: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    cached: bool = False
    retries: int = 0
    latency: float = 0.0
    mode: str = "text"
    logprobs: list[dict[str, Any]] | None = None
    error: str | None = None
    error_kind: str | None = None

    @property
    def ok(self) -> bool:
        """True when the call succeeded (and, with a schema, the output parsed)."""
        return self.error is None


@dataclass
class Stats:
    """Running totals of a client."""

    calls: int = 0
    cached: int = 0
    retries: int = 0
    errors: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    by_error: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready totals."""
        return {
            "calls": self.calls, "cached": self.cached, "retries": self.retries, "errors": self.errors,
            "prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
            "cost_usd": round(self.cost, 6), "errors_by_kind": dict(sorted(self.by_error.items())),
        }


class _Retryable(Exception):
    def __init__(self, kind: str, message: str, wait: float | None):
        super().__init__(message)
        self.kind = kind
        self.wait = wait


class OpenAIClient:
    """Client of one model on one OpenAI-compatible server.

    Args:
        model: model name as the server knows it.
        base_url: server URL (``http://127.0.0.1:8000/v1``); None for OpenAI.
        api_key: the key; by default read from the ``api_key_env`` variable.
        api_key_env: environment variable holding the key (``OPENAI_API_KEY``).
        concurrency: requests in flight at once.
        max_retries: retries per request on 429/5xx/timeouts/connection errors.
        timeout: seconds per request.
        cache: response cache (None: no caching).
        prices: price table for cost accounting.
        max_cost: stop making new calls once this many USD are spent (None: no limit).
        structured: ``auto`` (structured outputs, falling back to JSON mode, then text),
            ``json`` (JSON mode, then text) or ``text`` (prompt only).
        backoff_base: first backoff in seconds (doubles each retry, with jitter).
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        concurrency: int = 16,
        max_retries: int = 6,
        timeout: float = 120.0,
        cache: ResponseCache | None = None,
        prices: PriceTable | None = None,
        max_cost: float | None = None,
        structured: str = "auto",
        backoff_base: float = 0.5,
    ):
        if structured not in ("auto", "json", "text"):
            raise ConfigError(f"structured must be auto, json or text, got {structured!r}")
        self.model = model
        self.base_url = base_url
        key = api_key or os.environ.get(api_key_env)
        if not key:
            if base_url is None:
                raise ConfigError(f"no API key: set {api_key_env} (or give base_url for a local server)")
            key = "okgen-local"  # local servers usually ignore the key, the client needs one
        self._api_key = key
        self.concurrency = max(1, int(concurrency))
        self.max_retries = max(0, int(max_retries))
        self.timeout = timeout
        self.cache = cache
        self.prices = prices or PriceTable.default()
        self.max_cost = max_cost
        self.backoff_base = backoff_base
        self._mode = {"auto": "structured", "json": "json", "text": "text"}[structured]
        self.stats = Stats()
        self._stats_lock = threading.Lock()

    # -- public API ---------------------------------------------------------------------
    def chat_many(self, requests: Sequence[ChatRequest], *, use_cache: bool = True,
                  on_result: Callable[[int, ChatResult], None] | None = None) -> list[ChatResult]:
        """Run requests concurrently and return results in the same order (sync wrapper)."""
        return run_sync(self.achat_many(requests, use_cache=use_cache, on_result=on_result))

    async def achat_many(self, requests: Sequence[ChatRequest], *, use_cache: bool = True,
                         on_result: Callable[[int, ChatResult], None] | None = None) -> list[ChatResult]:
        """Run requests with at most ``concurrency`` in flight; ``on_result(i, r)`` as each ends."""
        client = self._client()
        sem = asyncio.Semaphore(self.concurrency)
        results: list[ChatResult | None] = [None] * len(requests)

        async def one(i: int, req: ChatRequest) -> None:
            async with sem:
                res = await self._achat(client, req, use_cache)
            results[i] = res
            if on_result is not None:
                on_result(i, res)

        try:
            await asyncio.gather(*(one(i, r) for i, r in enumerate(requests)))
        finally:
            await client.close()
        return [r if r is not None else ChatResult(error="not run", error_kind="internal") for r in results]

    def chat(self, request: ChatRequest, *, use_cache: bool = True) -> ChatResult:
        """Run one request (sync)."""
        return self.chat_many([request], use_cache=use_cache)[0]

    @property
    def spent(self) -> float:
        """USD spent by this client so far (cached answers cost nothing)."""
        return self.stats.cost

    # -- internals ----------------------------------------------------------------------
    def _client(self):
        try:
            import openai
        except ImportError:  # pragma: no cover - openai is a core dependency
            raise ConfigError('the openai package is missing: pip install "openai>=1.92"') from None
        return openai.AsyncOpenAI(base_url=self.base_url, api_key=self._api_key, max_retries=0, timeout=self.timeout)

    def _cache_request(self, req: ChatRequest, mode: str) -> dict[str, Any]:
        return {
            "model": self.model,
            "messages": list(req.messages),
            "temperature": req.temperature,
            "top_p": req.top_p,
            "max_tokens": req.max_tokens,
            "seed": req.seed,
            "schema": req.schema.model_json_schema() if req.schema is not None else None,
            "logprobs": req.logprobs,
            "top_logprobs": req.top_logprobs,
            "stop": list(req.stop) if req.stop else None,
            "mode": mode if req.schema is not None else "text",
        }

    def _cacheable(self, req: ChatRequest) -> bool:
        # Greedy decoding is deterministic; sampling is cached only when seeded.
        return req.temperature == 0 or req.seed is not None

    async def _achat(self, client: Any, req: ChatRequest, use_cache: bool) -> ChatResult:
        t0 = time.perf_counter()
        mode = self._mode if req.schema is not None else "text"
        use_cache = use_cache and self.cache is not None and self._cacheable(req)
        key = request_key(self._cache_request(req, mode)) if use_cache else None
        if key is not None:
            hit = self.cache.get(key)
            if hit is not None:
                res = self._finish(req, hit, mode, cached=True)
                res.latency = time.perf_counter() - t0
                self._account(res)
                return res
        if self.max_cost is not None and self.stats.cost >= self.max_cost:
            res = ChatResult(error=f"budget of ${self.max_cost:.2f} reached", error_kind="budget")
            self._account(res)
            return res
        retries = 0
        while True:
            try:
                raw = await self._send(client, req, mode)
                break
            except _Retryable as e:
                if retries >= self.max_retries:
                    res = ChatResult(error=f"{e} (after {retries} retries)", error_kind=e.kind, retries=retries,
                                     latency=time.perf_counter() - t0)
                    self._account(res)
                    return res
                wait = e.wait if e.wait is not None else self._backoff(retries)
                retries += 1
                log.debug("%s: %s; retry %d in %.2fs", self.model, e, retries, wait)
                await asyncio.sleep(wait)
            except _ModeUnsupported as e:
                log.warning("%s does not support %s output (%s); falling back", self.model, mode, e)
                mode = self._mode = "json" if mode == "structured" else "text"
            except _Fatal as e:
                res = ChatResult(error=str(e), error_kind=e.kind, retries=retries, latency=time.perf_counter() - t0)
                self._account(res)
                return res
        if key is not None:
            self.cache.put(key, self.model, self._cache_request(req, mode), raw)
        res = self._finish(req, raw, mode, cached=False)
        res.retries = retries
        res.latency = time.perf_counter() - t0
        self._account(res)
        return res

    def _backoff(self, attempt: int) -> float:
        base = min(MAX_BACKOFF, self.backoff_base * (2**attempt))
        return base * (0.5 + random.random() / 2)  # noqa: S311 - jitter, not crypto

    async def _send(self, client: Any, req: ChatRequest, mode: str) -> dict[str, Any]:
        import openai

        params: dict[str, Any] = {"model": self.model, "messages": list(req.messages), "temperature": req.temperature, "top_p": req.top_p}
        if req.max_tokens is not None:
            params["max_tokens"] = req.max_tokens
        if req.seed is not None:
            params["seed"] = req.seed
        if req.stop:
            params["stop"] = list(req.stop)
        if req.logprobs:
            params["logprobs"] = True
            if req.top_logprobs:
                params["top_logprobs"] = req.top_logprobs
        try:
            if mode == "structured":
                raw = await client.chat.completions.with_raw_response.parse(response_format=req.schema, **params)
            else:
                if mode == "json":
                    params["response_format"] = {"type": "json_object"}
                raw = await client.chat.completions.with_raw_response.create(**params)
            return raw.http_response.json()
        except openai.APITimeoutError:
            raise _Retryable("timeout", f"timed out after {self.timeout:g}s", None) from None
        except openai.APIConnectionError as e:
            raise _Retryable("connection", f"connection error: {e}", None) from None
        except openai.APIStatusError as e:
            status = e.status_code
            if status in RETRY_STATUS or status >= 500:
                kind = "rate_limit" if status == 429 else f"http_{status}"
                raise _Retryable(kind, f"HTTP {status}: {_message(e)}", _retry_after(e.response)) from None
            if status in (400, 422) and mode != "text" and _mentions_format(e):
                raise _ModeUnsupported(_message(e)) from None
            raise _Fatal(f"http_{status}", f"HTTP {status}: {_message(e)}") from None
        except ValueError as e:  # a 200 whose body is not JSON
            raise _Retryable("bad_response", f"unreadable response body ({e})", None) from None

    def _finish(self, req: ChatRequest, raw: dict[str, Any], mode: str, cached: bool) -> ChatResult:
        try:
            choice = raw["choices"][0]
            msg = choice.get("message") or {}
        except (KeyError, IndexError, TypeError):
            return ChatResult(error="response has no choices", error_kind="bad_response", cached=cached)
        usage = raw.get("usage") or {}
        pt, ct = int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
        res = ChatResult(
            text=msg.get("content"),
            finish_reason=choice.get("finish_reason"),
            refusal=msg.get("refusal"),
            prompt_tokens=pt,
            completion_tokens=ct,
            cost=0.0 if cached else self.prices.cost(self.model, pt, ct),
            cached=cached,
            mode=mode,
            logprobs=((choice.get("logprobs") or {}).get("content")),
        )
        if res.refusal:
            res.error, res.error_kind = f"refused: {res.refusal}", "refusal"
        elif res.finish_reason == "length" and req.schema is not None:
            res.error, res.error_kind = "output cut by the length limit", "length"
        elif res.finish_reason == "content_filter":
            res.error, res.error_kind = "output blocked by the content filter", "content_filter"
        elif req.schema is not None:
            self._parse_into(res, req.schema)
        return res

    def _parse_into(self, res: ChatResult, schema: type[BaseModel]) -> None:
        text = res.text or ""
        try:
            res.parsed = schema.model_validate_json(text)
            return
        except ValidationError:
            pass
        try:
            data = extract_json(text)
        except JSONExtractError as e:
            res.error, res.error_kind = f"invalid JSON: {e}", "invalid_json"
            return
        try:
            res.parsed = schema.model_validate(data)
        except ValidationError as e:
            from okgen.files import describe_validation_error

            res.error, res.error_kind = f"output does not match the schema: {describe_validation_error(e)}", "schema"

    def _account(self, res: ChatResult) -> None:
        with self._stats_lock:
            s = self.stats
            s.calls += 1
            s.cached += int(res.cached)
            s.retries += res.retries
            s.prompt_tokens += res.prompt_tokens
            s.completion_tokens += res.completion_tokens
            s.cost += res.cost
            if res.error_kind:
                s.errors += 1
                s.by_error[res.error_kind] = s.by_error.get(res.error_kind, 0) + 1


class _ModeUnsupported(Exception):
    pass


class _Fatal(Exception):
    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


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
        return max(0.0, when.timestamp() - time.time())
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


__all__ = ["ChatRequest", "ChatResult", "OpenAIClient", "Stats", "run_sync", "parse_endpoint_spec"]
