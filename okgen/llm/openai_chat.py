"""Chat models behind an OpenAI-compatible API (OpenAI, vLLM, llama.cpp, Ollama, LM Studio, TGI).

Requests go through the official ``openai`` SDK's typed methods on its stock HTTP client:
``chat.completions.parse`` with the pydantic schema for structured output, ``create``
otherwise. Structured output degrades by what the server supports: ``json_schema``
(``structured``), else ``json_object`` with the schema in the request and in the prompt
(``json``), else plain text with the schema in the prompt (``text``), parsed tolerantly either
way. The mode is learnt from the first refusal naming the response format (HTTP 400, 422 or
500, as llama.cpp's server answers) and remembered per endpoint for the process.

Retries (``tenacity``; the SDK's own are off, as they resend a request that may have been
processed): HTTP 429 and 5xx and connections that could not be opened, waiting as the server's
``Retry-After`` says or a jittered exponential backoff. A request that may have reached the
server (a read timeout, a connection dropped while waiting for the answer, a broken reply) is
never sent again: it may have been processed and billed; the caller leaves it for a later run.
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
import os
import re
import time
from collections.abc import Awaitable, Callable
from typing import Any

import openai
import tenacity

from okgen.errors import ConfigError
from okgen.llm.base import CallError, ChatModel, ChatRequest, schema_prompt

log = logging.getLogger(__name__)

MODES = ("structured", "json", "text")  # strongest first
MAX_WAIT = 60.0
_CLIENTS: dict[tuple[Any, ...], tuple[openai.AsyncOpenAI, set[int]]] = {}  # (loop, URL, key, timeout) -> (client, users)
_LEARNT: dict[tuple[str, str], str] = {}  # (endpoint, model) -> the mode learnt in this process
_FORMAT_WORDS = re.compile(r"response_format|json_schema|json_object|structured output|guided", re.IGNORECASE)
_TOO_LONG = re.compile(r"context length|context window|maximum context|too long|too many tokens|"
                       r"prompt is too|reduce the length|input tokens exceed", re.IGNORECASE)
_NOT_SENT = {"ConnectError", "ConnectTimeout", "PoolTimeout"}  # failed before the request left: safe to resend
_backoff = tenacity.wait_random_exponential(multiplier=0.5, max=MAX_WAIT)


class _Retry(CallError):
    def __init__(self, kind: str, message: str, wait: float | None = None):
        super().__init__(kind, message)
        self.wait = wait


class _Unsupported(Exception):
    pass


class OpenAIChat(ChatModel):
    """One model on one OpenAI-compatible server.

    Args:
        model: the model's name on the server.
        base_url: the server (``http://127.0.0.1:8000/v1``); None for OpenAI (or ``OPENAI_BASE_URL``).
        api_key, api_key_env: the key, or the environment variable holding it.
        timeout: seconds per request.
        max_retries: retries of a request that was not processed.
        structured: ``auto`` (start from json_schema), ``json`` or ``text``.
        sleep: the coroutine that waits between retries (a fake clock in tests).
        **kw: :class:`~okgen.llm.base.ChatModel` options (concurrency, cache, prices, budget).
    """

    backend = "openai"

    def __init__(self, model: str, *, base_url: str | None = None, api_key: str | None = None,
                 api_key_env: str = "OPENAI_API_KEY", timeout: float = 120.0, max_retries: int = 6,
                 structured: str = "auto", sleep: Callable[[float], Awaitable[None]] | None = None, **kw: Any):
        super().__init__(model, **kw)
        if structured not in ("auto", "json", "text"):
            raise ConfigError(f"structured must be auto, json or text, got {structured!r}")
        base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or "").strip().rstrip("/") or None
        if base_url is not None and not re.match(r"https?://[^/\s]+", base_url, re.IGNORECASE):
            raise ConfigError(f"base_url {base_url!r} must start with http:// or https:// (e.g. http://127.0.0.1:8000/v1)")
        if not (isinstance(timeout, int | float) and timeout > 0):
            raise ConfigError(f"timeout must be a positive number of seconds, got {timeout!r}")
        key = api_key or os.environ.get(api_key_env)
        if not key and (api_key_env != "OPENAI_API_KEY" or base_url is None):
            raise ConfigError(f"no API key: {api_key_env} is not set" + (
                " (named by api_key_env)" if api_key_env != "OPENAI_API_KEY" else " (or give base_url for a local server)"))
        self.base_url, self.timeout, self.max_retries = base_url, float(timeout), max(0, int(max_retries))
        self._api_key = key or "okgen-local"  # local servers ignore the key; the client needs one
        self._asked = {"auto": "structured", "json": "json", "text": "text"}[structured]
        self._sleep = sleep
        self._keys: set[tuple[Any, ...]] = set()

    @property
    def endpoint(self) -> str:  # type: ignore[override]
        """The base URL (OpenAI's when none is given)."""
        return self.base_url or "https://api.openai.com/v1"

    @property
    def mode(self) -> str:  # type: ignore[override]
        """The structured-output mode in use (learnt from the server's refusals)."""
        return max(self._asked, _LEARNT.get((self.endpoint, self.model), "structured"), key=MODES.index)

    def _key_mode(self, req: ChatRequest) -> str:
        return self._asked if req.schema is not None else "text"

    def priced(self) -> bool:
        """True when the override table or ``genai-prices`` prices this model at this endpoint."""
        return self.prices.priced(self.model, self.endpoint)

    def client(self) -> openai.AsyncOpenAI:
        """The SDK's async client of the running event loop, shared by the models of one server
        (one connection pool); its own retries are off: ours decide."""
        key = (asyncio.get_running_loop(), self.base_url, self._api_key, self.timeout)
        if key not in _CLIENTS:
            _CLIENTS[key] = (openai.AsyncOpenAI(api_key=self._api_key, base_url=self.base_url, timeout=self.timeout,
                                                max_retries=0), set())
        _CLIENTS[key][1].add(id(self))
        self._keys.add(key)
        return _CLIENTS[key][0]

    async def aclose(self) -> None:
        """Stop using the shared HTTP client; its last user closes it."""
        for key in self._keys:
            client, users = _CLIENTS.get(key, (None, set()))
            users.discard(id(self))
            if client is not None and not users:
                del _CLIENTS[key]
                await client.close()
        self._keys = set()

    def _cost(self, raw: dict[str, Any]) -> float:
        usage = raw.get("usage") or {}
        cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0
        return self.prices.cost(self.model, int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0),
                                int(cached), endpoint=self.endpoint, reported=usage.get("cost"))

    async def _send(self, req: ChatRequest) -> dict[str, Any]:
        raw, retries = await self._retried(lambda: self._once(req))
        raw["okgen_retries"] = retries
        return raw

    async def call(self, send: Callable[[], Awaitable[Any]]) -> Any:
        """Run ``send`` (one request) under the retry policy of the module docstring.

        Raises:
            CallError: the request failed (``kind`` says how) and is not sent again.
        """
        return (await self._retried(send))[0]

    async def _retried(self, send: Callable[[], Awaitable[Any]]) -> tuple[Any, int]:
        """(what ``send`` returned, the retries it took), from tenacity's own statistics."""
        retrying = tenacity.AsyncRetrying(stop=tenacity.stop_after_attempt(self.max_retries + 1), wait=_wait, reraise=True,
                                          retry=tenacity.retry_if_exception_type(_Retry),
                                          **({"sleep": self._sleep} if self._sleep else {}))

        async def attempt() -> Any:  # ``send`` may be a plain function returning an awaitable
            return await send()

        try:
            out = await retrying(attempt)
        except _Retry as e:
            n = retrying.statistics.get("attempt_number", 1) - 1
            raise CallError(e.kind, f"{e} (after {n} retries)", retries=n) from None
        return out, retrying.statistics["attempt_number"] - 1

    async def _once(self, req: ChatRequest) -> dict[str, Any]:
        """One request; the output mode falls back (and is remembered) when the server refuses it."""
        while True:
            mode = self.mode if req.schema is not None else "text"
            try:
                raw = await self._request(req, mode)
            except _Unsupported as e:
                nxt = MODES[MODES.index(mode) + 1]
                log.warning("%s at %s does not take %s output (%s); using %s", self.model, self.endpoint, mode, e, nxt)
                key = (self.endpoint, self.model)
                _LEARNT[key] = max(nxt, _LEARNT.get(key, nxt), key=MODES.index)
                continue
            raw["okgen_mode"] = mode
            return raw

    async def _request(self, req: ChatRequest, mode: str) -> dict[str, Any]:
        messages = [dict(m) for m in req.messages]
        if req.schema is not None and mode != "structured":  # the server does not enforce it: ask in the prompt
            messages[-1]["content"] = schema_prompt(messages[-1].get("content") or "", req.schema)
        kw: dict[str, Any] = {"model": self.model, "messages": messages, "temperature": req.temperature,
                              "top_p": req.top_p, "max_tokens": req.max_tokens, "seed": req.seed,
                              "top_logprobs": req.top_logprobs, "stop": list(req.stop) if req.stop else None,
                              "logprobs": req.logprobs or None}
        kw = {k: v for k, v in kw.items() if v is not None}
        api = self.client().chat.completions.with_raw_response
        if mode == "structured":
            data = await self.raw(api.parse(response_format=req.schema, **kw), mode)
        else:
            if mode == "json":
                kw["response_format"] = {"type": "json_object", "schema": req.schema.model_json_schema()}
            data = await self.raw(api.create(**kw), mode)
        _check_reply(data)
        return data

    async def raw(self, call: Awaitable[Any], mode: str = "text") -> Any:
        """The JSON body of one SDK ``with_raw_response`` call, its failures sorted for :meth:`call`."""
        try:
            return (await call).http_response.json()
        except openai.APIStatusError as e:
            status, msg = e.status_code, (e.message.partition(" - ")[2] or str(e.body or e.message))[:300]
            if status in (400, 422, 500) and mode != "text" and _FORMAT_WORDS.search(msg):
                raise _Unsupported(msg) from None
            if status == 429 or status >= 500:
                raise _Retry("rate_limit" if status == 429 else f"http_{status}", f"HTTP {status}: {msg}",
                             retry_after(e.response.headers)) from None
            kind = "too_long" if status in (400, 413, 422) and _TOO_LONG.search(msg) else f"http_{status}"
            raise CallError(kind, f"HTTP {status}: {msg}") from None
        except openai.APIConnectionError as e:  # APITimeoutError is one too
            timeout = isinstance(e, openai.APITimeoutError)
            kind = "timeout" if timeout else "connection"
            msg = f"timed out after {self.timeout:g}s" if timeout else f"cannot reach {self.endpoint}: {e.__cause__ or e}"
            if type(e.__cause__).__name__ in _NOT_SENT:
                raise _Retry(kind, msg) from None
            raise CallError(kind, f"{msg} (the request may have been processed: not sent again)") from None
        except ValueError as e:  # a 200 whose body is not JSON
            raise CallError("bad_response", f"unreadable response body ({e})") from None


def retry_after(headers: Any) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date)."""
    ms, ra = headers.get("retry-after-ms"), headers.get("retry-after")
    try:
        return max(0.0, float(ms) / 1000 if ms else float(ra)) if ms or ra else None
    except ValueError:
        pass
    try:
        return max(0.0, email.utils.parsedate_to_datetime(ra).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def _wait(state: Any) -> float:
    """tenacity wait: the server's Retry-After, else jittered exponential backoff."""
    exc = state.outcome.exception()
    return min(exc.wait, 10 * MAX_WAIT) if getattr(exc, "wait", None) is not None else _backoff(state)


def _check_reply(data: Any) -> None:
    """Raise :class:`CallError` unless ``data`` is a chat completion with a usable first choice
    (a broken reply is never cached; it was processed, so it is not sent again)."""
    choices = data.get("choices") if isinstance(data, dict) else None
    first = choices[0] if isinstance(choices, list) and choices else None
    msg = first.get("message") if isinstance(first, dict) else None
    if not isinstance(msg, dict) or not isinstance(data.get("usage") or {}, dict):
        err = data.get("error") if isinstance(data, dict) else None
        detail = f": the server answered with an error: {str(err)[:300]}" if err else ""
        raise CallError("bad_response", f"the reply is not a chat completion{detail}")
    if msg.get("content") is None and not msg.get("refusal") and not msg.get("tool_calls") \
            and first.get("finish_reason") not in ("length", "content_filter"):
        raise CallError("bad_response", "the reply has no content")
