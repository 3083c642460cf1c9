"""Chat models behind an OpenAI-compatible API (OpenAI, vLLM, llama.cpp, Ollama, LM Studio, TGI).

Requests go through the official ``openai`` SDK's typed methods on its stock HTTP client:
``chat.completions.parse`` with the pydantic schema for structured output, ``create``
otherwise. Structured output degrades by what the server supports: ``json_schema``
(``structured``), else ``json_object`` with the schema in the request and in the prompt
(``json``), else plain text with the schema in the prompt (``text``), parsed tolerantly either
way. The mode is learnt from the first refusal naming the response format (HTTP 400, 422 or
500, as llama.cpp's server answers) and remembered per endpoint for the process.

Retries (``tenacity``, one policy): HTTP 429 and 5xx and failures to connect, waiting as the
server's ``Retry-After`` says or with jittered exponential backoff. A request that may have
reached the server (a read timeout, a connection dropped while waiting for the answer) is
never sent again: it may have been processed and billed; the caller leaves the item for a
later run.
"""

from __future__ import annotations

import email.utils
import logging
import os
import re
import time
from collections.abc import Awaitable, Callable
from typing import Any

from okgen.errors import ConfigError
from okgen.llm.base import CallError, ChatModel, ChatRequest, schema_json

log = logging.getLogger(__name__)

MODES = ("structured", "json", "text")  # strongest first
MAX_WAIT = 60.0
# SDK clients by (event loop, base URL, key, timeout) -> (client, ids of the models using it).
_CLIENTS: dict[tuple[Any, ...], tuple[Any, set[int]]] = {}
# The mode learnt per (endpoint, model) in this process.
_LEARNT: dict[tuple[str, str], str] = {}
_FORMAT_WORDS = re.compile(r"response_format|json_schema|json_object|structured output|guided", re.IGNORECASE)
_TOO_LONG = re.compile(r"context length|context window|maximum context|too long|too many tokens|"
                       r"prompt is too|reduce the length|input tokens exceed", re.IGNORECASE)
# Exceptions raised before a request left the client: safe to send again.
_NOT_SENT = {"ConnectError", "ConnectTimeout", "PoolTimeout"}


class _Retry(Exception):
    def __init__(self, kind: str, message: str, wait: float | None = None):
        super().__init__(message)
        self.kind = kind
        self.wait = wait


class OpenAIChat(ChatModel):
    """One model on one OpenAI-compatible server.

    Args:
        model: the model's name on the server.
        base_url: the server (``http://127.0.0.1:8000/v1``); None for OpenAI (or ``OPENAI_BASE_URL``).
        api_key_env: the environment variable holding the key.
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
        base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        if base_url is not None and not re.match(r"https?://[^/\s]+", str(base_url).strip(), re.IGNORECASE):
            raise ConfigError(f"base_url {base_url!r} must start with http:// or https:// (e.g. http://127.0.0.1:8000/v1)")
        if not (isinstance(timeout, int | float) and timeout > 0):
            raise ConfigError(f"timeout must be a positive number of seconds, got {timeout!r}")
        key = api_key or os.environ.get(api_key_env)
        if not key and api_key_env != "OPENAI_API_KEY":
            raise ConfigError(f"no API key: {api_key_env} is not set (named by api_key_env)")
        if not key:
            if base_url is None:
                raise ConfigError(f"no API key: set {api_key_env} (or give base_url for a local server)")
            key = "okgen-local"  # local servers ignore the key; the client needs one
        self.base_url = base_url.strip().rstrip("/") if base_url else None
        self.timeout = float(timeout)
        self.max_retries = max(0, int(max_retries))
        self._api_key = key
        self._asked = {"auto": "structured", "json": "json", "text": "text"}[structured]
        self._sleep = sleep
        self._keys: set[tuple[Any, ...]] = set()

    @property
    def endpoint(self) -> str:
        """The base URL (OpenAI's when none is given)."""
        return self.base_url or "https://api.openai.com/v1"

    @property
    def mode(self) -> str:  # type: ignore[override]
        """The structured-output mode in use (learnt from the server's refusals)."""
        learnt = _LEARNT.get((self.endpoint, self.model), "structured")
        return max(self._asked, learnt, key=MODES.index)

    def _key_mode(self, req: ChatRequest) -> str:
        return self._asked if req.schema is not None else "text"

    def priced(self) -> bool:
        """True when the override table or ``genai-prices`` prices this model at this endpoint."""
        return self.prices.priced(self.model, self.endpoint)

    def client(self) -> Any:
        """The SDK's async client of the running event loop, shared by the models of one server
        (one connection pool, one TLS context); its own retries are off: ours decide."""
        import asyncio

        import openai

        key = (asyncio.get_running_loop(), self.base_url, self._api_key, self.timeout)
        entry = _CLIENTS.get(key)
        if entry is None:
            entry = _CLIENTS[key] = (openai.AsyncOpenAI(api_key=self._api_key, base_url=self.base_url,
                                                        timeout=self.timeout, max_retries=0), set())
        entry[1].add(id(self))
        self._keys.add(key)
        return entry[0]

    async def aclose(self) -> None:
        """Stop using the shared HTTP client; the last of its users closes it."""
        keys, self._keys = self._keys, set()
        for key in keys:
            entry = _CLIENTS.get(key)
            if entry is None:
                continue
            entry[1].discard(id(self))
            if not entry[1]:
                del _CLIENTS[key]
                await entry[0].close()

    def _cost(self, raw: dict[str, Any]) -> float:
        usage = raw.get("usage") if isinstance(raw.get("usage"), dict) else {}
        details = usage.get("prompt_tokens_details")
        cached = (details or {}).get("cached_tokens") if isinstance(details, dict) else 0
        return self.prices.cost(self.model, int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0),
                                int(cached or 0), endpoint=self.endpoint, reported=usage.get("cost"))

    async def _send(self, req: ChatRequest) -> dict[str, Any]:
        tries = 0

        async def once() -> dict[str, Any]:
            nonlocal tries
            tries += 1
            return await self._once(req)

        raw = await self.call(once)
        raw["okgen_retries"] = tries - 1
        return raw

    async def call(self, send: Callable[[], Awaitable[Any]]) -> Any:
        """Run ``send`` (one request) under the retry policy of the module docstring.

        Raises:
            CallError: the request failed (``kind`` says how) and is not sent again.
        """
        from tenacity import AsyncRetrying, RetryError, retry_if_exception_type, stop_after_attempt

        retrying = AsyncRetrying(stop=stop_after_attempt(self.max_retries + 1), wait=_wait,
                                 retry=retry_if_exception_type(_Retry), reraise=False,
                                 **({"sleep": self._sleep} if self._sleep else {}))
        try:
            async for attempt in retrying:
                with attempt:
                    return await send()
        except RetryError as e:
            last = e.last_attempt.exception()
            n = e.last_attempt.attempt_number - 1
            raise CallError(getattr(last, "kind", "internal"), f"{last} (after {n} retries)", retries=n) from None
        raise AssertionError("unreachable")  # pragma: no cover

    async def _once(self, req: ChatRequest) -> dict[str, Any]:
        """One request; the output mode falls back (and is remembered) when the server refuses it."""
        while True:
            mode = self.mode if req.schema is not None else "text"
            try:
                raw = await self._request(req, mode)
            except _Unsupported as e:
                nxt = MODES[MODES.index(mode) + 1]
                log.warning("%s at %s does not take %s output (%s); using %s", self.model, self.endpoint,
                            mode, e, nxt)
                _LEARNT[(self.endpoint, self.model)] = max(nxt, _LEARNT.get((self.endpoint, self.model), nxt),
                                                            key=MODES.index)
                continue
            raw["okgen_mode"] = mode
            return raw

    async def _request(self, req: ChatRequest, mode: str) -> dict[str, Any]:
        kw: dict[str, Any] = {"model": self.model, "messages": _with_schema(req, mode), "temperature": req.temperature,
                              "top_p": req.top_p}
        for name in ("max_tokens", "seed", "top_logprobs"):
            if getattr(req, name) is not None:
                kw[name] = getattr(req, name)
        if req.stop:
            kw["stop"] = list(req.stop)
        if req.logprobs:
            kw["logprobs"] = True
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
        import openai

        try:
            return (await call).http_response.json()
        except openai.APIStatusError as e:
            raise _status_error(e, mode) from None
        except openai.APIConnectionError as e:  # APITimeoutError is one too
            cause = type(e.__cause__).__name__
            timeout = isinstance(e, openai.APITimeoutError)
            kind = "timeout" if timeout else "connection"
            msg = f"timed out after {self.timeout:g}s" if timeout else f"cannot reach {self.endpoint}: {e.__cause__ or e}"
            if cause in _NOT_SENT:
                raise _Retry(kind, msg) from None
            raise CallError(kind, f"{msg} (the request may have been processed: not sent again)") from None
        except ValueError as e:  # a 200 whose body is not JSON
            raise CallError("bad_response", f"unreadable response body ({e})") from None


class _Unsupported(Exception):
    pass


def _status_error(e: Any, mode: str) -> Exception:
    status, msg = e.status_code, _message(e)
    if status in (400, 422, 500) and mode != "text" and _FORMAT_WORDS.search(msg):
        return _Unsupported(msg)
    if status == 429 or status >= 500:
        return _Retry("rate_limit" if status == 429 else f"http_{status}", f"HTTP {status}: {msg}",
                      retry_after(e.response.headers))
    if status in (400, 413, 422) and _TOO_LONG.search(msg):
        return CallError("too_long", f"HTTP {status}: {msg}")
    return CallError(f"http_{status}", f"HTTP {status}: {msg}")


def _message(e: Any) -> str:
    body = getattr(e, "body", None)
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])[:300]
        if isinstance(err, str):
            return err[:300]
    return str(getattr(e, "message", e))[:300]


def retry_after(headers: Any) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date)."""
    ms = headers.get("retry-after-ms")
    ra = headers.get("retry-after")
    try:
        if ms:
            return max(0.0, float(ms) / 1000)
        if ra:
            return max(0.0, float(ra))
    except ValueError:
        pass
    try:
        return max(0.0, email.utils.parsedate_to_datetime(ra).timestamp() - time.time()) if ra else None
    except (TypeError, ValueError):
        return None


def _wait(state: Any) -> float:
    """tenacity wait: the server's Retry-After, else jittered exponential backoff."""
    from tenacity import wait_random_exponential

    exc = state.outcome.exception() if state.outcome else None
    if isinstance(exc, _Retry) and exc.wait is not None:
        return min(exc.wait, 10 * MAX_WAIT)
    return wait_random_exponential(multiplier=0.5, max=MAX_WAIT)(state)


def _with_schema(req: ChatRequest, mode: str) -> list[dict[str, str]]:
    """The messages, with the JSON schema appended to the last one when the server does not enforce it."""
    msgs = [dict(m) for m in req.messages]
    if req.schema is not None and mode != "structured" and msgs:
        msgs[-1]["content"] = schema_prompt(msgs[-1].get("content") or "", req.schema)
    return msgs


def schema_prompt(text: str, schema: Any) -> str:
    """``text`` followed by the instruction to answer with JSON matching ``schema``."""
    return f"{text}\n\nAnswer with one JSON object that follows this JSON schema:\n{schema_json(schema)}"


def _check_reply(data: Any) -> None:
    """Raise :class:`CallError` unless ``data`` is a chat completion with a usable first choice
    (a broken reply never reaches the cache; it was processed, so it is not sent again)."""
    if not isinstance(data, dict):
        raise CallError("bad_response", f"response body is a {type(data).__name__}, not an object")
    if data.get("error") and not data.get("choices"):  # some proxies answer errors with status 200
        err = data["error"]
        raise CallError("bad_response", f"the server answered with an error: {str(err.get('message') if isinstance(err, dict) else err)[:300]}")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise CallError("bad_response", "the reply has no choices")
    msg = choices[0].get("message")
    if msg is not None and not isinstance(msg, dict):
        raise CallError("bad_response", f"the reply's message is a {type(msg).__name__}, not an object")
    if not isinstance(data.get("usage") or {}, dict):
        raise CallError("bad_response", "the reply's usage is not an object")
    if (isinstance(msg, dict) and msg.get("content") is None and not msg.get("refusal") and not msg.get("tool_calls")
            and choices[0].get("finish_reason") not in ("length", "content_filter")):
        raise CallError("bad_response", "the reply has no content")
