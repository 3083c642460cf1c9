"""The chat-model interface every agent uses, whatever runs the model.

Backends implement :meth:`ChatModel._send` (an OpenAI-shaped chat completion dict, or
:class:`CallError`); the base adds the response cache, the budget, tolerant parsing of structured
output (``json-repair``) and usage totals. Failures are per result, never raised.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import re
import signal
import threading
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from okgen.llm.prices import Budget, PriceTable
from okgen.models.cache import ResponseCache, request_key_and_text

log = logging.getLogger(__name__)

# Error kinds a later run may cure (a call is retried at once only for the kinds openai_chat says);
# every ``http_*`` kind too: a plain 400 may be a setup mistake (a parameter the model refuses)
# that would otherwise fail every article for good. What is known to be about the article itself
# is final: ``content_filter`` (a 400 with that code) and ``too_long``.
TRANSIENT_KINDS = frozenset({"rate_limit", "timeout", "connection", "unreachable", "bad_response", "budget", "internal"})
DEFAULT_COMPLETION_ESTIMATE = 512  # completion tokens reserved from the budget when a request sets no limit
_THINK = re.compile(r"<think>.*?</think>", re.DOTALL)


@dataclass(frozen=True)
class ChatRequest:
    """One chat request; ``tag`` is for accounting (neither sent nor in the cache key)."""

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
    """The outcome of one request (``error`` and ``error_kind`` say what failed)."""

    text: str | None = None
    parsed: Any = None
    finish_reason: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    cached: bool = False
    cached_cost: float = 0.0
    """A cached reply's cost at current prices (what it cost when made; ``cost`` is 0: nothing is spent now)."""
    retries: int = 0
    mode: str = "text"
    logprobs: list[dict[str, Any]] | None = None
    error: str | None = None
    error_kind: str | None = None
    served: str | None = None
    """The model the server says answered (with its ``system_fingerprint``), when it says."""

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def sent(self) -> bool:
        """False for a call the budget refused before sending it."""
        return self.error_kind != "budget"

    @property
    def transient(self) -> bool:
        """True when the failure says nothing about the request (a later run may succeed)."""
        kind = self.error_kind or ""
        return kind in TRANSIENT_KINDS or kind.startswith("http_")


def served_model(raw: Any) -> str | None:
    """The model a reply says answered (``model``, with ``system_fingerprint`` when given), or
    None: an alias such as ``gpt-4.1`` is re-pointed over time, and two servers may serve other
    weights under one name; the funnel records what really answered."""
    name = raw.get("model") if isinstance(raw, dict) else None
    if not isinstance(name, str) or not name:
        return None
    fp = raw.get("system_fingerprint")
    return f"{name} ({fp})" if isinstance(fp, str) and fp else name


@dataclass
class Stats:
    """Running totals of a model (a call the budget refused counts only under ``by_error``)."""

    calls: int = 0
    cached: int = 0
    retries: int = 0
    errors: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    by_error: dict[str, int] = field(default_factory=dict)

    def add(self, res: ChatResult) -> None:
        if res.error_kind:
            self.by_error[res.error_kind] = self.by_error.get(res.error_kind, 0) + 1
        if res.sent:
            self.calls, self.cached, self.retries = self.calls + 1, self.cached + res.cached, self.retries + res.retries
            self.errors += res.error_kind is not None
            self.prompt_tokens += res.prompt_tokens
            self.completion_tokens += res.completion_tokens
            self.cost += res.cost

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        return {**d, "cost_usd": round(d.pop("cost"), 6), "errors_by_kind": dict(sorted(d.pop("by_error").items()))}


class CallError(Exception):
    """A failed call, with its ``kind`` (``timeout``, ``http_500``, ...)."""

    def __init__(self, kind: str, message: str, retries: int = 0):
        super().__init__(message)
        self.kind, self.retries = kind, retries


class ChatModel:
    """Base of every chat backend: ``concurrency`` calls in flight (the batch size in-process),
    an optional response ``cache``, ``prices`` (in-process models cost nothing) and a ``budget``
    shared by the run's models."""

    backend = "base"
    mode = "text"  #: output mode of structured requests (``structured``, ``json``, ``text``, ``guided``)
    endpoint = "in-process"  #: where the model runs (a base URL for servers): part of the cache key

    def __init__(self, model: str, *, concurrency: int = 16, cache: ResponseCache | None = None,
                 prices: PriceTable | None = None, budget: Budget | None = None):
        self.model, self.concurrency, self.cache = model, max(1, int(concurrency)), cache
        self.prices, self.budget = prices or PriceTable(), budget if budget is not None else Budget(None)
        self.stats = Stats()
        self._sem: tuple[Any, asyncio.Semaphore] | None = None  # (event loop, its semaphore)

    @property
    def name(self) -> str:
        return f"{self.backend}/{self.model}"

    async def complete(self, messages: Sequence[dict[str, str]], schema: type[BaseModel] | None = None,
                       **decoding: Any) -> tuple[Any, ChatResult]:
        """One call: (the parsed output, or the text without a schema, or None on failure; the result)."""
        res = await self.achat(ChatRequest(messages=tuple(messages), schema=schema, **decoding))
        return (res.parsed if schema is not None else res.text) if res.ok else None, res

    def chat_many(self, requests: Sequence[ChatRequest], *, use_cache: bool = True,
                  on_done: Callable[[ChatResult], None] | None = None) -> list[ChatResult]:
        """Run requests from sync code, at most ``concurrency`` at once; results in request order.
        ``on_done`` is called with each result as it comes (progress)."""
        async def one(r: ChatRequest) -> ChatResult:
            res = await self.achat(r, use_cache=use_cache)
            if on_done is not None:
                on_done(res)
            return res

        async def run() -> list[ChatResult]:
            try:
                return list(await asyncio.gather(*(one(r) for r in requests)))
            finally:
                await self.aclose()
                if self.cache is not None:
                    self.cache.flush()
        return run_sync(run())

    def chat(self, req: ChatRequest, *, use_cache: bool = True) -> ChatResult:
        return self.chat_many([req], use_cache=use_cache)[0]

    def cache_key(self, req: ChatRequest) -> str:
        return request_key_and_text(self._cache_request(req))[0]

    async def achat(self, req: ChatRequest, *, use_cache: bool = True, limiter: Any = None) -> ChatResult:
        """One request; ``limiter`` (an async context manager) bounds calls shared with other
        models (cache hits skip it)."""
        try:
            res = await self._achat(req, use_cache, limiter)
        except asyncio.CancelledError:
            raise
        except Exception as e:  # a bug or an unexpected library error: per item, not the batch
            log.warning("%s: unexpected error: %s: %s", self.name, type(e).__name__, e, exc_info=log.isEnabledFor(logging.DEBUG))
            res = ChatResult(error=f"{type(e).__name__}: {e}", error_kind="internal")
        self.stats.add(res)
        return res

    async def aclose(self) -> None:
        """Release connections (the model itself stays loaded)."""

    async def _send(self, req: ChatRequest) -> dict[str, Any]:
        raise NotImplementedError

    def _cost(self, raw: dict[str, Any], warn: bool = True) -> float:
        return 0.0

    def _key_mode(self, req: ChatRequest) -> str:
        """The output mode named in the cache key (the one asked for, not one fallen back to)."""
        return self.mode if req.schema is not None else "text"

    async def _achat(self, req: ChatRequest, use_cache: bool, limiter: Any) -> ChatResult:
        key = text = None
        if use_cache and self.cache is not None and (req.temperature == 0 or req.seed is not None):
            key, text = request_key_and_text(self._cache_request(req))
            if (hit := self.cache.get(key)) is not None:
                res = self._finish(req, hit, cached=True)
                res.served = served_model(hit)
                res.cached_cost = self._cost(hit, warn=False)  # at today's prices; nothing is spent now
                return res
        if self._sem is None or self._sem[0] is not asyncio.get_running_loop():
            self._sem = (asyncio.get_running_loop(), asyncio.Semaphore(self.concurrency))
        estimate = self._estimate(req)
        async with self._sem[1]:
            if not await self._reserve(estimate, limiter):
                return ChatResult(error=f"budget reached: {self.budget.describe()}, and the next call may cost "
                                        f"up to ${estimate:.4f}", error_kind="budget")
            try:  # the budget is charged before the slot is given back
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
        res.cost, res.retries, res.served = cost, retries, served_model(raw)
        return res

    async def _reserve(self, estimate: float, limiter: Any) -> bool:
        """Hold a slot of ``limiter`` and a reservation of the budget (True), or neither (False: the
        budget is reached). A call that does not fit the budget while others are in flight gives its
        slot back while it waits for them to settle: other calls (validation of started articles)
        may fit meanwhile."""
        while True:
            if limiter is not None:
                await limiter.__aenter__()
            got = self.budget.poll(estimate)
            if got is True:
                return True
            if limiter is not None:
                await limiter.__aexit__(None, None, None)
            if got is False:
                return False
            await got

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
        if req.schema is not None:  # sent in the prompt (json, text modes) or billed as part of it
            chars += len(schema_json(req.schema))
        return self.prices.cost(self.model, chars // 3 + 16, req.max_tokens or DEFAULT_COMPLETION_ESTIMATE,
                                endpoint=self.endpoint, warn=False)

    def _finish(self, req: ChatRequest, raw: dict[str, Any], cached: bool) -> ChatResult:
        choice = raw["choices"][0]
        msg, usage = choice.get("message") or {}, raw.get("usage") or {}
        res = ChatResult(text=msg.get("content"), finish_reason=choice.get("finish_reason"),
                         prompt_tokens=int(usage.get("prompt_tokens") or 0),
                         completion_tokens=int(usage.get("completion_tokens") or 0), cached=cached,
                         mode=raw.get("okgen_mode") or self._key_mode(req),
                         logprobs=(choice.get("logprobs") or {}).get("content"))
        if msg.get("refusal"):
            res.error, res.error_kind = f"refused: {msg['refusal']}", "refusal"
        elif res.finish_reason == "length" and req.schema is not None:
            res.error, res.error_kind = "output cut by the length limit", "length"
        elif res.finish_reason == "content_filter":
            res.error, res.error_kind = "output blocked by the content filter", "content_filter"
        elif req.schema is not None:
            res.parsed, res.error, res.error_kind = parse_output(res.text or "", req.schema)
        return res


class InProcessBatches:
    """For in-process backends (mixed in before :class:`ChatModel`): the requests of one
    event-loop turn queue up and are answered by the backend's ``generate(requests)`` in a
    thread, in batches of ``concurrency`` requests with the same :meth:`_batch_key`."""

    _queue: list[tuple[ChatRequest, asyncio.Future[dict[str, Any]]]] | None = None
    _worker: asyncio.Task[None] | None = None
    concurrency: int
    generate: Callable[[list[ChatRequest]], list[dict[str, Any]]]

    def _batch_key(self, r: ChatRequest) -> Any:
        return (r.temperature, r.top_p, r.max_tokens, r.seed, r.stop)

    def cancel(self) -> None:
        """Ask a batch running in the worker thread to stop soon (a backend that can: at its next
        token). Cancelling the awaiting task does not stop a thread, and the event loop waits for
        its threads before it closes: without this, Ctrl-C would wait out minutes of generation."""

    def begin(self) -> None:
        """Called in the event loop before each batch goes to the worker thread (a backend that
        can cancel clears its flag here, never in the thread: a cancel while the thread prepares
        the batch must hold)."""

    async def _send(self, req: ChatRequest) -> dict[str, Any]:
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._queue = self._queue or []
        self._queue.append((req, fut))
        if self._worker is None or self._worker.done():
            self._worker = asyncio.create_task(self._drain())
        return await fut

    async def _drain(self) -> None:
        await asyncio.sleep(0)  # let the requests of this turn join the batch
        while self._queue:
            head = self._batch_key(self._queue[0][0])
            batch = [x for x in self._queue if self._batch_key(x[0]) == head][: self.concurrency]
            self._queue = [x for x in self._queue if all(x is not b for b in batch)]
            self.begin()
            try:
                outs: list[Any] = await asyncio.to_thread(self.generate, [r for r, _ in batch])
            except asyncio.CancelledError:
                self.cancel()
                for _, fut in [*batch, *(self._queue or [])]:  # nobody is left to answer: none runs later
                    fut.cancel()
                self._queue = []
                raise
            except Exception as e:  # noqa: BLE001 - one failed batch fails its requests, not the run
                outs = [CallError("internal", f"generation failed: {type(e).__name__}: {e}")] * len(batch)
            for (_, fut), out in zip(batch, outs):
                if not fut.done():
                    fut.set_exception(out) if isinstance(out, Exception) else fut.set_result(out)


def parse_output(text: str, schema: type[BaseModel]) -> tuple[Any, str | None, str | None]:
    """(parsed, error, error kind) of a model's text: strict JSON first, then ``json-repair``'s."""
    try:
        return schema.model_validate_json(text), None, None
    except ValidationError:
        pass
    if not isinstance(data := repair_json(text), dict):
        return None, "invalid JSON: no JSON object in the output", "invalid_json"
    try:
        return schema.model_validate(data), None, None
    except ValidationError as e:
        from okgen.files import describe_validation_error

        return None, f"output does not match the schema: {describe_validation_error(e)}", "schema"


def repair_json(text: str) -> Any:
    """The JSON object or list in a model's text, repaired by ``json-repair`` (code fences, prose
    around it, trailing commas, a cut-off end; a ``<think>`` block skipped); None when there is none."""
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


def schema_prompt(text: str, schema: type[BaseModel]) -> str:
    return f"{text}\n\nAnswer with one JSON object that follows this JSON schema:\n{schema_json(schema)}"


def run_sync(coro: Any) -> Any:
    """Run a coroutine from sync code, also inside a running event loop (in a thread). In the main
    thread a SIGTERM cancels it, then calls the Python SIGTERM handler (the CLI's: exit 143)."""
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
        task, loop = asyncio.ensure_future(coro), asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGTERM, lambda: (got.append(1), task.cancel()))
        try:
            return await task
        finally:
            loop.remove_signal_handler(signal.SIGTERM)
            signal.signal(signal.SIGTERM, handler)

    try:
        return asyncio.run(main())
    finally:
        if got:
            handler(signal.SIGTERM, None)
