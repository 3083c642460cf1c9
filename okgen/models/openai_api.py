"""Access to any OpenAI-compatible server (OpenAI, ``vllm serve``, local servers).

One :class:`OpenAIClient` per model: async with a concurrency limit, retries with exponential
backoff and jitter on 429/5xx/timeouts honouring ``Retry-After``, structured outputs from a
pydantic schema where the server supports them (JSON mode, then tolerant JSON extraction, as
fallbacks), token usage and cost per call, an optional spending budget, and a SQLite response
cache keyed by a hash of (model, parameters, messages).

Failures are per item: :meth:`OpenAIClient.chat_many` and :meth:`OpenAIClient.achat` never
raise for one bad call; each :class:`ChatResult` says what went wrong (``error`` and
``error_kind``: ``rate_limit``, ``http_500``, ``timeout``, ``connection``, ``bad_response``,
``refusal``, ``length``, ``content_filter``, ``invalid_json``, ``schema``, ``budget``,
``internal``, ``http_4xx``).

Requests go through the ``openai`` client's own request machinery (auth, base URL, timeouts,
error classes) with the body built here: its typed-parameter transform costs ~2 ms of CPU per
call, which at 100+ calls in flight is the bottleneck. Below ``httpx2``, connections are kept by
okgen's lean HTTP/1.1 transport (:mod:`okgen.models.http1`), shared by every client of the event
loop: ``httpcore``'s pool costs twice the CPU per request and scans every connection each time.

The ``openai`` package is imported when a request is first sent, not when this module is.
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
import random
import re
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from okgen.errors import ConfigError
from okgen.models.cache import ResponseCache, request_key, request_key_and_text
from okgen.models.jsonfix import JSONExtractError, extract_json
from okgen.models.openai_http import (
    MAX_BACKOFF,
    RETRY_STATUS,
    _json_schema,
    _mentions_format,
    _message,
    _response_format,
    _retry_after,
    parse_endpoint_spec,
    run_sync,
)
from okgen.models.pricing import Budget, PriceTable
from okgen.tls import tls_context

log = logging.getLogger(__name__)

# Completion tokens assumed for a budget reservation before the client has seen any answer.
DEFAULT_COMPLETION_ESTIMATE = 512
# Transient kinds: a retry (now or in a later run) may succeed. Anything else is an answer
# about the request (a refusal, a cut output, a prompt too long for the model). Every HTTP
# error status counts as transient too: authentication, routing, a bad option or a server
# fault says nothing about the article, so the article is left for a rerun, not stored.
TRANSIENT_KINDS = frozenset({"rate_limit", "timeout", "connection", "bad_response", "budget", "internal"})
_TOO_LONG = re.compile(r"context length|context window|maximum context|too long|too many tokens|"
                       r"prompt is too|reduce the length|input tokens exceed", re.IGNORECASE)


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

    @property
    def sent(self) -> bool:
        """False for a call the budget refused before sending it (not a call for accounting)."""
        return self.error_kind != "budget"

    @property
    def transient(self) -> bool:
        """True when the failure says nothing about this request and a later run may succeed
        (HTTP errors, timeouts, rate limits, broken replies, budget)."""
        kind = self.error_kind or ""
        return kind in TRANSIENT_KINDS or kind.startswith("http_")


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


class _ModeUnsupported(Exception):
    pass


class _Fatal(Exception):
    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


class _Pool:
    """The AsyncOpenAI client and the semaphore of one event loop."""

    def __init__(self, owner: OpenAIClient, loop: asyncio.AbstractEventLoop):
        self.owner = owner
        self.loop = loop
        self.sem = asyncio.Semaphore(owner.concurrency)
        self._client: Any = None

    def client(self) -> Any:
        # Created on the first network call, so a fully cached run never builds one.
        if self._client is None:
            self._client = self.owner._new_client()
        return self._client

    async def close(self) -> None:
        if self._client is not None:
            await self._client.close()
        self._client = None


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
        budget: a :class:`Budget` shared with other clients (overrides ``max_cost``).
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
        budget: Budget | None = None,
    ):
        if structured not in ("auto", "json", "text"):
            raise ConfigError(f"structured must be auto, json or text, got {structured!r}")
        transport_choice()  # a bad OKGEN_LLM_TRANSPORT is a config error now, not a failed call later
        self.model = model
        # OPENAI_BASE_URL is what the openai client would use; resolving it here keeps the
        # response cache keyed by the server actually called.
        base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        if base_url is not None and not re.match(r"https?://[^/\s]+", base_url.strip(), re.IGNORECASE):
            raise ConfigError(f"base_url {base_url!r} must start with http:// or https:// (e.g. http://127.0.0.1:8000/v1)")
        if not (isinstance(timeout, int | float) and math.isfinite(timeout) and timeout > 0):
            raise ConfigError(f"timeout must be a positive number of seconds, got {timeout!r}")
        self.base_url = base_url
        key = api_key or os.environ.get(api_key_env)
        if not key and api_key_env != "OPENAI_API_KEY":
            # Named on purpose (api_key_env=...): its absence is a mistake, not a keyless local server.
            raise ConfigError(f"no API key: {api_key_env} is not set (named by api_key_env)")
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
        self.budget = budget if budget is not None else Budget(max_cost)
        self.max_cost = self.budget.limit
        self.backoff_base = backoff_base
        self._mode = {"auto": "structured", "json": "json", "text": "text"}[structured]
        # The cache key uses the mode asked for, not the one a fallback switched to: a rerun
        # starts in the asked-for mode again and must find every answer of the first run.
        self._key_mode = self._mode
        self.stats = Stats()
        self._stats_lock = threading.Lock()
        self._pool: _Pool | None = None

    # -- public API ---------------------------------------------------------------------
    def chat_many(self, requests: Sequence[ChatRequest], *, use_cache: bool = True,
                  on_result: Callable[[int, ChatResult], None] | None = None) -> list[ChatResult]:
        """Run requests concurrently and return results in the same order (sync wrapper)."""
        return run_sync(self.achat_many(requests, use_cache=use_cache, on_result=on_result))

    async def achat_many(self, requests: Sequence[ChatRequest], *, use_cache: bool = True,
                         on_result: Callable[[int, ChatResult], None] | None = None) -> list[ChatResult]:
        """Run requests with at most ``concurrency`` in flight; ``on_result(i, r)`` as each ends."""
        pool = _Pool(self, asyncio.get_running_loop())
        results: list[ChatResult | None] = [None] * len(requests)

        async def one(i: int, req: ChatRequest) -> None:
            res = await self._achat(pool, req, use_cache, None)
            results[i] = res
            if on_result is not None:
                on_result(i, res)

        try:
            await asyncio.gather(*(one(i, r) for i, r in enumerate(requests)))
        finally:
            await pool.close()
            if self.cache is not None:
                self.cache.flush()
        return [r if r is not None else ChatResult(error="not run", error_kind="internal") for r in results]

    async def achat(self, request: ChatRequest, *, use_cache: bool = True,
                    limiter: AbstractAsyncContextManager[Any] | None = None) -> ChatResult:
        """Run one request in the running event loop, sharing connections between calls.

        At most ``concurrency`` calls of this client are in flight; ``limiter`` additionally
        bounds calls shared with other clients (a run-wide limit). Cache hits wait for neither.
        Call :meth:`aclose` when done.
        """
        loop = asyncio.get_running_loop()
        if self._pool is None or self._pool.loop is not loop:
            self._pool = _Pool(self, loop)  # a pool belongs to one loop (run_sync makes new ones)
        return await self._achat(self._pool, request, use_cache, limiter)

    async def aclose(self) -> None:
        """Close the connections opened by :meth:`achat` in the running loop."""
        if self._pool is not None and self._pool.loop is asyncio.get_running_loop():
            await self._pool.close()
        self._pool = None
        if self.cache is not None:
            self.cache.flush()

    def chat(self, request: ChatRequest, *, use_cache: bool = True) -> ChatResult:
        """Run one request (sync)."""
        return self.chat_many([request], use_cache=use_cache)[0]

    @property
    def spent(self) -> float:
        """USD spent by this client so far (cached answers cost nothing)."""
        return self.stats.cost

    def cache_key(self, request: ChatRequest) -> str:
        """The response-cache key of ``request`` (in the output mode asked for, whatever a fallback chose)."""
        mode = self._key_mode if request.schema is not None else "text"
        return request_key(self._cache_request(request, mode))

    # -- internals ----------------------------------------------------------------------
    def _new_client(self) -> Any:
        try:
            import openai
        except ImportError:  # pragma: no cover - openai is a core dependency
            raise ConfigError('the openai package is missing: pip install "openai>=1.92"') from None
        kw: dict[str, Any] = {}
        factory = getattr(openai, "DefaultAsyncHttpxClient", None)
        if factory is not None:
            # One TLS context for every client: building one loads the CA bundle (~50 ms), which a
            # plain-http server (a local vLLM) does not wait for.
            plain_http = (self.base_url or "").lower().startswith("http://")
            ctx = tls_context(wait=not plain_http)
            kw["http_client"] = factory(verify=ctx, **_transport(factory, ctx))
        return openai.AsyncOpenAI(base_url=self.base_url, api_key=self._api_key, max_retries=0, timeout=self.timeout, **kw)

    def _cache_request(self, req: ChatRequest, mode: str) -> dict[str, Any]:
        return {
            # The server is part of the key: two servers may serve different weights under one name.
            "server": _server_id(self.base_url),
            "model": self.model,
            "messages": list(req.messages),
            "temperature": req.temperature,
            "top_p": req.top_p,
            "max_tokens": req.max_tokens,
            "seed": req.seed,
            "schema": _json_schema(req.schema) if req.schema is not None else None,
            "logprobs": req.logprobs,
            "top_logprobs": req.top_logprobs,
            "stop": list(req.stop) if req.stop else None,
            "mode": mode if req.schema is not None else "text",
        }

    def _cacheable(self, req: ChatRequest) -> bool:
        # Greedy decoding is deterministic; sampling is cached only when seeded.
        return req.temperature == 0 or req.seed is not None

    def _estimate(self, req: ChatRequest) -> float:
        """A rough USD cost of ``req`` for budget reservations (prompt chars / 4 tokens)."""
        if self.budget.limit is None:
            return 0.0
        prompt = sum(len(m.get("content") or "") for m in req.messages) // 4
        done = self.stats.calls - self.stats.cached
        completion = self.stats.completion_tokens // done if done > 0 else min(req.max_tokens or DEFAULT_COMPLETION_ESTIMATE, DEFAULT_COMPLETION_ESTIMATE)
        return self.prices.cost(self.model, prompt, completion)

    async def _achat(self, pool: _Pool, req: ChatRequest, use_cache: bool,
                     limiter: AbstractAsyncContextManager[Any] | None) -> ChatResult:
        t0 = time.perf_counter()
        try:
            res = await self._achat_inner(pool, req, use_cache, limiter)
        except asyncio.CancelledError:
            raise
        except Exception as e:  # a bug or an unexpected library error: per item, not the batch
            log.warning("%s: unexpected error: %s: %s", self.model, type(e).__name__, e, exc_info=log.isEnabledFor(logging.DEBUG))
            res = ChatResult(error=f"{type(e).__name__}: {e}", error_kind="internal")
        res.latency = time.perf_counter() - t0
        self._account(res)
        return res

    async def _achat_inner(self, pool: _Pool, req: ChatRequest, use_cache: bool,
                           limiter: Any) -> ChatResult:
        mode = self._mode if req.schema is not None else "text"
        use_cache = use_cache and self.cache is not None and self._cacheable(req)
        key = req_text = None
        if use_cache:
            key_mode = self._key_mode if req.schema is not None else "text"
            key, req_text = request_key_and_text(self._cache_request(req, key_mode))
            hit = self.cache.get(key)
            if hit is not None:
                return self._finish(req, hit, mode, cached=True)
        async with pool.sem:
            if limiter is None:
                sent = await self._call(pool, req, mode)
            else:
                async with limiter:
                    sent = await self._call(pool, req, mode)
        if isinstance(sent, ChatResult):
            return sent
        raw, mode, retries = sent
        # The slot is free: let the calls waiting for it go out before this reply is read. When
        # a burst of replies arrives at once, reading each (parsing, checks, the next prompts)
        # would otherwise hold every waiting call back until the whole burst is read.
        await asyncio.sleep(0)
        if key is not None:
            # Stored under the key of the mode asked for; the text records the mode used.
            key_mode = self._key_mode if req.schema is not None else "text"
            self.cache.put(key, self.model, req_text if mode == key_mode else self._cache_request(req, mode), raw)
        res = self._finish(req, raw, mode, cached=False)
        res.retries = retries
        return res

    async def _call(self, pool: _Pool, req: ChatRequest, mode: str) -> ChatResult | tuple[Any, str, int]:
        """One call holding its concurrency slot: the budget check, the request with retries,
        the charge. Returns a failed :class:`ChatResult`, or (raw reply, output mode, retries)."""
        # The budget is checked once the slot is held, and the call is charged before the slot
        # is given back, so calls queued behind the limit see the money spent before them.
        estimate = self._estimate(req)
        if not self.budget.try_reserve(estimate):
            return ChatResult(error=f"budget of ${self.budget.limit:.2f} reached", error_kind="budget")
        cost = 0.0
        try:
            raw, new_mode, retries, failed = await self._send_with_retries(pool, req, mode)
            if failed is not None:
                return failed
            cost = self._cost(raw)
            return raw, new_mode, retries
        finally:
            self.budget.settle(estimate, cost)

    async def _send_with_retries(self, pool: _Pool, req: ChatRequest, mode: str
                                 ) -> tuple[Any, str, int, ChatResult | None]:
        """Send until an answer, a fatal error or the retry limit: (raw, mode, retries, failure)."""
        retries = 0
        while True:
            if req.schema is not None and _MODES.index(self._mode) > _MODES.index(mode):
                mode = self._mode  # another call found the server lacks `mode` while this one waited
            try:
                return await self._send(pool.client(), req, mode), mode, retries, None
            except _Retryable as e:
                if retries >= self.max_retries:
                    return None, mode, retries, ChatResult(error=f"{e} (after {retries} retries)", error_kind=e.kind, retries=retries)
                wait = e.wait if e.wait is not None else self._backoff(retries)
                retries += 1
                log.debug("%s: %s; retry %d in %.2fs", self.model, e, retries, wait)
                await asyncio.sleep(wait)
            except _ModeUnsupported as e:
                log.warning("%s does not support %s output (%s); falling back", self.model, mode, e)
                mode = self._mode = "json" if mode == "structured" else "text"
            except _Fatal as e:
                return None, mode, retries, ChatResult(error=str(e), error_kind=e.kind, retries=retries)

    def _backoff(self, attempt: int) -> float:
        base = min(MAX_BACKOFF, self.backoff_base * (2**attempt))
        return base * (0.5 + random.random() / 2)  # noqa: S311 - jitter, not crypto

    async def _send(self, client: Any, req: ChatRequest, mode: str) -> dict[str, Any]:
        import openai

        body: dict[str, Any] = {"model": self.model, "messages": list(req.messages), "temperature": req.temperature, "top_p": req.top_p}
        if req.max_tokens is not None:
            body["max_tokens"] = req.max_tokens
        if req.seed is not None:
            body["seed"] = req.seed
        if req.stop:
            body["stop"] = list(req.stop)
        if req.logprobs:
            body["logprobs"] = True
            if req.top_logprobs:
                body["top_logprobs"] = req.top_logprobs
        if mode == "structured" and req.schema is not None:
            body["response_format"] = _response_format(req.schema)
        elif mode == "json" and req.schema is not None:
            body["response_format"] = {"type": "json_object"}
        try:
            data = await client.post("/chat/completions", body=body, cast_to=object)
        except openai.APITimeoutError:
            raise _Retryable("timeout", f"timed out after {self.timeout:g}s", None) from None
        except openai.APIConnectionError as e:
            raise _Retryable("connection", f"cannot reach {self.base_url or 'api.openai.com'}: {e}", None) from None
        except openai.APIStatusError as e:
            status = e.status_code
            if status in RETRY_STATUS or status >= 500:
                kind = "rate_limit" if status == 429 else f"http_{status}"
                raise _Retryable(kind, f"HTTP {status}: {_message(e)}", _retry_after(e.response)) from None
            if status in (400, 422) and mode != "text" and _mentions_format(e):
                raise _ModeUnsupported(_message(e)) from None
            if status in (400, 413, 422) and _TOO_LONG.search(_message(e)):
                # About this request (its prompt is longer than the model takes): a final answer.
                raise _Fatal("too_long", f"HTTP {status}: {_message(e)}") from None
            raise _Fatal(f"http_{status}", f"HTTP {status}: {_message(e)}") from None
        except (ValueError, openai.APIResponseValidationError) as e:  # a 200 whose body is not JSON
            raise _Retryable("bad_response", f"unreadable response body ({e})", None) from None
        _check_reply(data)  # before it can reach the cache: a broken reply is retried, never stored
        return data

    def _finish(self, req: ChatRequest, raw: dict[str, Any], mode: str, cached: bool) -> ChatResult:
        try:
            choice = raw["choices"][0]
            msg = choice.get("message") or {}
            if not isinstance(msg, dict):
                raise TypeError
        except (KeyError, IndexError, TypeError, AttributeError):
            return ChatResult(error="response has no choices", error_kind="bad_response", cached=cached)
        pt, ct, cached_pt = _tokens(raw)
        res = ChatResult(
            text=msg.get("content"),
            finish_reason=choice.get("finish_reason"),
            refusal=msg.get("refusal"),
            prompt_tokens=pt,
            completion_tokens=ct,
            cost=0.0 if cached else self.prices.cost(self.model, pt, ct, cached_pt),
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

    def _cost(self, raw: dict[str, Any]) -> float:
        """USD charged for a reply, from its token usage."""
        return self.prices.cost(self.model, *_tokens(raw))

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
            if not res.sent:
                s.by_error["budget"] = s.by_error.get("budget", 0) + 1
                return
            s.calls += 1
            s.cached += int(res.cached)
            s.retries += res.retries
            s.prompt_tokens += res.prompt_tokens
            s.completion_tokens += res.completion_tokens
            s.cost += res.cost
            if res.error_kind:
                s.errors += 1
                s.by_error[res.error_kind] = s.by_error.get(res.error_kind, 0) + 1


# Spec options that configure the connection (the rest are the caller's: decoding, etc.).
CLIENT_OPTIONS = ("base_url", "api_key_env", "timeout", "max_retries", "structured", "concurrency")


_MODES = ("structured", "json", "text")  # output modes, strongest first


def _check_reply(data: Any) -> None:
    """Raise :class:`_Retryable` unless ``data`` is a chat completion with a usable first choice."""
    if not isinstance(data, dict):
        raise _Retryable("bad_response", f"response body is a {type(data).__name__}, not an object", None)
    if data.get("error") and not data.get("choices"):  # some proxies answer errors with status 200
        err = data["error"]
        msg = err.get("message") if isinstance(err, dict) else err
        raise _Retryable("bad_response", f"the server answered with an error: {str(msg)[:300]}", None)
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise _Retryable("bad_response", "the reply has no choices", None)
    msg = choices[0].get("message")
    if msg is not None and not isinstance(msg, dict):
        raise _Retryable("bad_response", f"the reply's message is a {type(msg).__name__}, not an object", None)
    if not isinstance(data.get("usage") or {}, dict):
        raise _Retryable("bad_response", "the reply's usage is not an object", None)
    if (isinstance(msg, dict) and msg.get("content") is None and not msg.get("refusal") and not msg.get("tool_calls")
            and choices[0].get("finish_reason") not in ("length", "content_filter")):
        # A reasoning model that put everything in reasoning_content, or a broken server.
        raise _Retryable("bad_response", "the reply has no content", None)


def _tokens(raw: dict[str, Any]) -> tuple[int, int, int]:
    """(prompt, completion, cached prompt) tokens of a reply's usage (0 where absent or bad)."""
    usage = raw.get("usage") if isinstance(raw.get("usage"), dict) else {}
    details = usage.get("prompt_tokens_details")
    cached = _count(details.get("cached_tokens")) if isinstance(details, dict) else 0
    return _count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens")), cached


def _count(value: Any) -> int:
    """A token count from a reply (0 for anything that is not a non-negative number)."""
    try:
        n = int(value or 0)
    except (TypeError, ValueError, OverflowError):
        return 0
    return max(0, n)


def _server_id(base_url: str | None) -> str:
    """``base_url`` as a cache-key part: scheme and case of the host ignored, no trailing slash."""
    if not base_url:
        return "api.openai.com/v1"
    url = base_url.strip().rstrip("/")
    scheme, sep, rest = url.partition("://")
    if not sep:
        rest = scheme
    host, slash, path = rest.partition("/")
    return host.lower() + slash + path


def client_from_spec(spec: str, **kwargs: Any) -> tuple[OpenAIClient, dict[str, str]]:
    """Build a client from ``openai/MODEL[,base_url=...,api_key_env=...,timeout=...,
    max_retries=...,structured=auto|json|text,concurrency=N]``.

    Keyword arguments are passed to :class:`OpenAIClient` (spec options win).

    Returns:
        The client and the spec's other options (for the caller: ``temperature=0.2`` ...).

    Raises:
        ConfigError: a malformed spec, a bad option value, or no API key for a remote server.
    """
    if not spec.startswith("openai/"):
        raise ConfigError(f"model spec {spec!r} must look like openai/MODEL[,base_url=URL,key=value...]")
    model, opts = parse_endpoint_spec(spec)
    rest = {k: v for k, v in opts.items() if k not in CLIENT_OPTIONS}
    kw = dict(kwargs)
    try:
        for k in ("base_url", "api_key_env", "structured"):
            if k in opts:
                kw[k] = opts[k]
        if "timeout" in opts:
            kw["timeout"] = float(opts["timeout"])
        for k in ("max_retries", "concurrency"):
            if k in opts:
                kw[k] = int(opts[k])
    except ValueError:
        raise ConfigError(f"bad number in model spec {spec!r}") from None
    return OpenAIClient(model, **kw), rest


__all__ = ["ChatRequest", "ChatResult", "OpenAIClient", "Stats", "Budget", "run_sync", "parse_endpoint_spec",
           "client_from_spec", "TRANSIENT_KINDS"]


def transport_choice() -> str:
    """``OKGEN_LLM_TRANSPORT``: ``lean`` (the default) or ``httpx``.

    Raises:
        ConfigError: any other value.
    """
    choice = os.environ.get("OKGEN_LLM_TRANSPORT", "lean").strip().lower() or "lean"
    if choice not in ("lean", "httpx"):
        raise ConfigError(f"OKGEN_LLM_TRANSPORT must be lean or httpx, got {choice!r}")
    return choice


def _transport(factory: Any, ctx: Any) -> dict[str, Any]:
    """The HTTP client options that put okgen's lean HTTP/1.1 transport under an ``openai``
    client on ``httpx2`` (openai 3.x), proxies from the environment still going through
    ``httpx2``'s own; none (the client's own transport) with an older ``openai`` on ``httpx``,
    or with ``OKGEN_LLM_TRANSPORT=httpx`` (for comparison, or a server that needs it)."""
    if transport_choice() == "httpx":
        return {}
    try:
        import httpx2
        from httpx2._utils import get_environment_proxies
    except ImportError:  # pragma: no cover - openai before 3.x, on httpx
        return {}
    if not (isinstance(factory, type) and issubclass(factory, httpx2.AsyncClient)):
        return {}  # pragma: no cover - openai before 3.x
    from okgen.models.http1 import SharedTransport

    # A client given its own transport ignores HTTP_PROXY and friends: mount them as httpx2 would.
    mounts = {pattern: None if url is None else httpx2.AsyncHTTPTransport(verify=ctx, proxy=url)
              for pattern, url in get_environment_proxies().items()}
    return {"transport": SharedTransport(ctx), "mounts": mounts}
