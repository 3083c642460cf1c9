"""The chat-model interface every agent uses, whatever runs the model.

A :class:`ChatModel` answers :class:`ChatRequest` s with :class:`ChatResult` s (text, the
parsed output for a schema, token usage and cost, or what went wrong: failures are per item,
never raised). Backends implement one coroutine, :meth:`ChatModel._send`, returning an
OpenAI-shaped chat completion (``choices[0].message.content``, ``finish_reason``, ``usage``);
this module adds what every backend shares: the response cache, the budget, the tolerant
parsing of structured output (``json-repair``) and usage totals.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import re
import signal
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import asdict, dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from okgen.llm.prices import Budget, PriceTable
from okgen.models.cache import ResponseCache, request_key_and_text

log = logging.getLogger(__name__)

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL)

# Transient kinds: a retry (now or in a later run) may succeed; anything else is an answer
# about the request. Every HTTP error status counts as transient too.
TRANSIENT_KINDS = frozenset({"rate_limit", "timeout", "connection", "bad_response", "budget", "internal"})
# Completion tokens assumed for a budget reservation when the request sets no limit.
DEFAULT_COMPLETION_ESTIMATE = 512


@dataclass(frozen=True)
class ChatRequest:
    """One chat request: messages, decoding, and an optional pydantic output schema."""

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
    """Free label for accounting (not sent, not part of the cache key)."""


@dataclass
class ChatResult:
    """The outcome of one request (never raised: ``error`` and ``error_kind`` say what failed)."""

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
        """False for a call the budget refused before sending it."""
        return self.error_kind != "budget"

    @property
    def transient(self) -> bool:
        """True when the failure says nothing about the request and a later run may succeed."""
        kind = self.error_kind or ""
        return kind in TRANSIENT_KINDS or kind.startswith("http_")


@dataclass
class Stats:
    """Running totals of a model."""

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
        d = asdict(self)
        d["cost_usd"] = round(d.pop("cost"), 6)
        d["errors_by_kind"] = dict(sorted(d.pop("by_error").items()))
        return d


class CallError(Exception):
    """A failed call, with its ``kind`` (``timeout``, ``http_500``, ...)."""

    def __init__(self, kind: str, message: str, retries: int = 0):
        super().__init__(message)
        self.kind = kind
        self.retries = retries


class ChatModel:
    """Base of every chat backend.

    Args:
        model: the model's name (as the server knows it) or path.
        concurrency: calls in flight at once (a batch size for in-process backends).
        cache: response cache (None: none).
        prices: price table (overrides first); in-process models cost nothing.
        budget: spending limit shared by the run's models.
    """

    backend = "base"
    #: the output mode of structured requests (``structured``, ``json``, ``text``, ``guided``)
    mode = "text"

    def __init__(self, model: str, *, concurrency: int = 16, cache: ResponseCache | None = None,
                 prices: PriceTable | None = None, budget: Budget | None = None):
        self.model = model
        self.concurrency = max(1, int(concurrency))
        self.cache = cache
        self.prices = prices or PriceTable()
        self.budget = budget if budget is not None else Budget(None)
        self.stats = Stats()
        self._stats_lock = threading.Lock()
        self._sems: dict[Any, asyncio.Semaphore] = {}

    @property
    def name(self) -> str:
        """``backend/model``, as a model spec names it."""
        return f"{self.backend}/{self.model}"

    @property
    def endpoint(self) -> str:
        """Where the model runs (a base URL, or ``in-process``): part of the cache key."""
        return "in-process"

    # -- the interface --------------------------------------------------------------
    async def complete(self, messages: Sequence[dict[str, str]], schema: type[BaseModel] | None = None,
                       **decoding: Any) -> tuple[Any, ChatResult]:
        """One call: (the parsed output, or the text without a schema, or None on failure; the result
        with usage and any error)."""
        res = await self.achat(ChatRequest(messages=tuple(messages), schema=schema, **decoding))
        return (res.parsed if schema is not None else res.text) if res.ok else None, res

    async def complete_many(self, requests: Sequence[ChatRequest], *, use_cache: bool = True,
                            on_result: Callable[[int, ChatResult], None] | None = None) -> list[ChatResult]:
        """Run requests, at most ``concurrency`` at once, results in request order."""

        async def one(i: int, req: ChatRequest) -> ChatResult:
            res = await self.achat(req, use_cache=use_cache)
            if on_result is not None:
                on_result(i, res)
            return res

        try:
            return list(await asyncio.gather(*(one(i, r) for i, r in enumerate(requests))))
        finally:
            await self.aclose()
            if self.cache is not None:
                self.cache.flush()

    achat_many = complete_many

    def chat(self, req: ChatRequest, *, use_cache: bool = True) -> ChatResult:
        """One request from sync code."""
        return self.chat_many([req], use_cache=use_cache)[0]

    def cache_key(self, req: ChatRequest) -> str:
        """The response-cache key of a request."""
        return request_key_and_text(self._cache_request(req))[0]

    def chat_many(self, requests: Sequence[ChatRequest], *, use_cache: bool = True,
                  on_result: Callable[[int, ChatResult], None] | None = None) -> list[ChatResult]:
        """:meth:`complete_many` from sync code."""
        return run_sync(self.complete_many(requests, use_cache=use_cache, on_result=on_result))

    async def achat(self, req: ChatRequest, *, use_cache: bool = True,
                    limiter: AbstractAsyncContextManager[Any] | None = None) -> ChatResult:
        """One request; ``limiter`` bounds calls shared with other models (cache hits skip it)."""
        t0 = time.perf_counter()
        try:
            res = await self._achat(req, use_cache, limiter)
        except asyncio.CancelledError:
            raise
        except Exception as e:  # a bug or an unexpected library error: per item, not the batch
            log.warning("%s: unexpected error: %s: %s", self.name, type(e).__name__, e,
                        exc_info=log.isEnabledFor(logging.DEBUG))
            res = ChatResult(error=f"{type(e).__name__}: {e}", error_kind="internal")
        res.latency = time.perf_counter() - t0
        self._account(res)
        return res

    async def aclose(self) -> None:
        """Release connections (the model itself stays loaded)."""

    # -- for backends ---------------------------------------------------------------
    async def _send(self, req: ChatRequest) -> dict[str, Any]:
        """Send one request; an OpenAI-shaped chat completion, or :class:`CallError`."""
        raise NotImplementedError

    def _key_mode(self, req: ChatRequest) -> str:
        """The output mode named in the cache key (the one asked for, not one fallen back to)."""
        return self.mode if req.schema is not None else "text"

    def _cost(self, raw: dict[str, Any]) -> float:
        return 0.0

    # -- shared machinery -------------------------------------------------------------
    async def _achat(self, req: ChatRequest, use_cache: bool, limiter: Any) -> ChatResult:
        key = text = None
        if use_cache and self.cache is not None and (req.temperature == 0 or req.seed is not None):
            key, text = request_key_and_text(self._cache_request(req))
            hit = self.cache.get(key)
            if hit is not None:
                return self._finish(req, hit, cached=True)
        loop = asyncio.get_running_loop()
        sem = self._sems.get(loop)
        if sem is None:
            self._sems = {loop: (sem := asyncio.Semaphore(self.concurrency))}  # one loop at a time
        estimate = self._estimate(req)
        async with sem:
            if limiter is not None:
                await limiter.__aenter__()
            try:
                # Checked once the slot is held, charged before it is given back, so calls queued
                # behind the limit see the money spent before them.
                if not self.budget.try_reserve(estimate):
                    return ChatResult(error=f"budget of ${self.budget.limit:.2f} reached", error_kind="budget")
                cost = 0.0
                try:
                    raw = await self._send(req)
                    cost = self._cost(raw)
                except CallError as e:
                    return ChatResult(error=str(e), error_kind=e.kind, retries=e.retries)
                finally:
                    self.budget.settle(estimate, cost)
            finally:
                if limiter is not None:
                    await limiter.__aexit__(None, None, None)
        retries = raw.pop("okgen_retries", 0)
        if key is not None:
            self.cache.put(key, self.model, text, raw)
        res = self._finish(req, raw, cached=False)
        res.cost, res.retries = cost, retries
        return res

    def _cache_request(self, req: ChatRequest) -> dict[str, Any]:
        return {"backend": self.backend, "server": self.endpoint, "model": self.model, "messages": list(req.messages),
                "temperature": req.temperature, "top_p": req.top_p, "max_tokens": req.max_tokens, "seed": req.seed,
                "stop": list(req.stop) if req.stop else None, "logprobs": req.logprobs,
                "top_logprobs": req.top_logprobs, "mode": self._key_mode(req),
                "schema": schema_json(req.schema) if req.schema is not None else None}

    def _estimate(self, req: ChatRequest) -> float:
        if self.budget.limit is None:
            return 0.0
        chars = sum(len(m.get("content") or "") for m in req.messages)
        return self.prices.cost(self.model, chars // 3 + 16, req.max_tokens or DEFAULT_COMPLETION_ESTIMATE,
                                endpoint=self.endpoint, warn=False)

    def _finish(self, req: ChatRequest, raw: dict[str, Any], cached: bool) -> ChatResult:
        try:
            choice = raw["choices"][0]
            msg = choice.get("message") or {}
        except (KeyError, IndexError, TypeError, AttributeError):
            return ChatResult(error="response has no choices", error_kind="bad_response", cached=cached)
        usage = raw.get("usage") if isinstance(raw.get("usage"), dict) else {}
        res = ChatResult(text=msg.get("content"), finish_reason=choice.get("finish_reason"), refusal=msg.get("refusal"),
                         prompt_tokens=_count(usage.get("prompt_tokens")),
                         completion_tokens=_count(usage.get("completion_tokens")), cached=cached,
                         mode=raw.get("okgen_mode") or self._key_mode(req),
                         logprobs=(choice.get("logprobs") or {}).get("content"))
        if res.refusal:
            res.error, res.error_kind = f"refused: {res.refusal}", "refusal"
        elif res.finish_reason == "length" and req.schema is not None:
            res.error, res.error_kind = "output cut by the length limit", "length"
        elif res.finish_reason == "content_filter":
            res.error, res.error_kind = "output blocked by the content filter", "content_filter"
        elif req.schema is not None:
            res.parsed, res.error, res.error_kind = parse_output(res.text or "", req.schema)
        return res

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


def parse_output(text: str, schema: type[BaseModel]) -> tuple[Any, str | None, str | None]:
    """Parse a model's text into ``schema``: strict JSON first, then repaired by ``json-repair``
    (code fences, trailing commas, a cut-off end). Returns (parsed, error, error kind)."""
    try:
        return schema.model_validate_json(text), None, None
    except ValidationError:
        pass
    data = repair_json(text)
    if not isinstance(data, dict):
        return None, "invalid JSON: no JSON object in the output", "invalid_json"
    try:
        return schema.model_validate(data), None, None
    except ValidationError as e:
        from okgen.files import describe_validation_error

        return None, f"output does not match the schema: {describe_validation_error(e)}", "schema"


def repair_json(text: str) -> Any:
    """The JSON value in a model's text, repaired by ``json-repair`` (code fences, prose around
    it, trailing commas, a cut-off end; a reasoning model's ``<think>`` block skipped). None when
    the text holds no JSON object or list."""
    import json_repair

    text = _THINK.sub("", text)
    if "{" not in text and "[" not in text:
        return None
    try:
        data = json_repair.loads(text)
    except (ValueError, RecursionError):
        return None
    if isinstance(data, list) and len(data) > 1 and all(isinstance(x, dict) for x in data) and text.lstrip()[:1] != "[":
        data = data[0]  # several objects one after another: the first
    return data if isinstance(data, dict | list) and data else None


@functools.lru_cache(maxsize=64)
def schema_json(schema: type[BaseModel]) -> str:
    """The JSON schema of a pydantic model, as compact text (cache keys, prompts)."""
    return json.dumps(schema.model_json_schema(), separators=(",", ":"), sort_keys=True)


def _count(value: Any) -> int:
    try:
        return max(0, int(value or 0))
    except (TypeError, ValueError, OverflowError):
        return 0


def run_sync(coro: Any) -> Any:
    """Run a coroutine to completion from sync code, also from inside a running event loop.

    In the main thread a SIGTERM that arrives while the loop runs cancels the coroutine (so its
    tasks wind down and none is left with an exception nobody retrieves), then the Python
    handler installed for SIGTERM (the CLI's: exit 143) is called once the loop has closed.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return _run_in_main(coro)
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


def _run_in_main(coro: Any) -> Any:
    handler = signal.getsignal(signal.SIGTERM) if threading.current_thread() is threading.main_thread() else None
    if not callable(handler):
        return asyncio.run(coro)
    got: list[int] = []

    async def main() -> Any:
        task = asyncio.ensure_future(coro)
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGTERM, lambda: (got.append(1), task.cancel()))
        try:
            return await task
        finally:
            loop.remove_signal_handler(signal.SIGTERM)
            signal.signal(signal.SIGTERM, handler)

    try:
        result = asyncio.run(main())
    except asyncio.CancelledError:
        if got:
            handler(signal.SIGTERM, None)
        raise
    if got:
        handler(signal.SIGTERM, None)
    return result


class InProcessBatches:
    """For in-process backends: requests of one event-loop turn queue up and a single worker
    task (the backend's ``_drain``) generates them in batches; each caller awaits its own
    future. The backend sets ``self._queue = []`` and ``self._worker = None``."""

    _queue: list[tuple[ChatRequest, asyncio.Future[dict[str, Any]]]]
    _worker: asyncio.Task[None] | None

    async def _drain(self) -> None:  # pragma: no cover - every backend has its own
        raise NotImplementedError

    async def _send(self, req: ChatRequest) -> dict[str, Any]:
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._queue.append((req, fut))
        if self._worker is None or self._worker.done():
            self._worker = asyncio.create_task(self._drain())
        return await fut
