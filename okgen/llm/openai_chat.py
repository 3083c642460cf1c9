"""Chat models behind an OpenAI-compatible API, through the official SDK's typed methods.

Structured output degrades by what the server supports: ``json_schema`` (``chat.completions.parse``
with the pydantic schema: mode ``structured``), else ``json_object`` with the schema in the
request and the prompt (``json``), else the schema in the prompt only (``text``), parsed
tolerantly. The mode is learnt from the first refusal naming the response format (HTTP 400, 422
or 500, as llama.cpp answers) and remembered per endpoint for the process.

Retries (``tenacity``; the SDK's own are off): HTTP 408, 409, 429 and 5xx, and connections that
could not be opened, after the server's ``Retry-After`` or a jittered exponential backoff. Other
4xx answers are final for the call (an HTTP 400 with the code ``content_filter``, Azure OpenAI's
content filter, is the kind ``content_filter``). A request that may have been processed (a read
timeout, a connection dropped while waiting, a broken reply) is never sent again: the caller
leaves it for a later run. An endpoint that has never answered (nothing listens there, a wrong
host) gets :data:`UNREACHABLE_RETRIES` quick retries, then the kind ``unreachable``, and the
model's later calls fail at once: a wrong ``base_url`` costs seconds, not minutes of backoff.
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
MAX_WAIT = 60.0  # the longest backoff; a server's Retry-After is followed up to 10 times this
LONG_WAIT = 10.0  # a wait at least this long is announced (a warning line)
UNREACHABLE_RETRIES = 2  # retries of a connection refused by an endpoint that has never answered
UNREACHABLE_HOLD = 30.0  # seconds later calls fail at once after that, before one tries again (a server still loading)
RETRIED_STATUS = (408, 409, 429)  # and every 5xx
_LEARNT: dict[tuple[str, str], str] = {}  # (endpoint, model) -> the mode learnt in this process
_FORMAT_WORDS = re.compile(r"response_format|json_schema|json_object|structured output|guided", re.IGNORECASE)
_TOO_LONG = re.compile(r"context length|context window|maximum context|too long|too many tokens|"
                       r"prompt is too|reduce the length|input tokens exceed", re.IGNORECASE)
_NOT_SENT = {"ConnectError", "ConnectTimeout", "PoolTimeout"}  # failed before the request left: safe to resend
_NO_CONNECTION = {"ConnectError", "ConnectTimeout"}  # the server could not be reached at all
_backoff = tenacity.wait_random_exponential(multiplier=0.5, max=MAX_WAIT)


class _Retry(CallError):
    def __init__(self, kind: str, message: str, wait: float | None = None, no_connection: bool = False):
        super().__init__(kind, message)
        self.wait, self.no_connection = wait, no_connection


class _Unsupported(Exception):
    pass


class OpenAIChat(ChatModel):
    """One model on one OpenAI-compatible server (``base_url`` None: OpenAI's, or ``OPENAI_BASE_URL``).

    ``structured``: ``auto`` (start from json_schema), ``json`` or ``text``; ``max_retries``: of a
    request that was not processed; ``sleep``: the coroutine waiting between retries (tests).
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
        self._sleep = {"sleep": sleep} if sleep else {}
        self._client: tuple[Any, openai.AsyncOpenAI] | None = None  # (event loop, the SDK's client)
        self._answered = False  # the endpoint has answered (any HTTP status) since this model was made
        self._unreachable: str | None = None  # why it is given up on, when it never answered
        self._unreachable_at = 0.0  # when (time.monotonic)

    @property
    def endpoint(self) -> str:  # type: ignore[override]
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
        """The SDK's async client for the running event loop, its own retries off."""
        loop = asyncio.get_running_loop()
        if self._client is None or self._client[0] is not loop:
            self._client = (loop, openai.AsyncOpenAI(api_key=self._api_key, base_url=self.base_url,
                                                     timeout=self.timeout, max_retries=0))
        return self._client[1]

    async def aclose(self) -> None:
        if self._client is not None:
            client, self._client = self._client[1], None
            await client.close()

    def _cost(self, raw: dict[str, Any], warn: bool = True) -> float:
        usage = raw.get("usage") or {}
        cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0
        return self.prices.cost(self.model, int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0),
                                int(cached), endpoint=self.endpoint, reported=usage.get("cost"), warn=warn)

    async def _send(self, req: ChatRequest) -> dict[str, Any]:
        raw, retries = await self.call(lambda: self._once(req))
        return {**raw, "okgen_retries": retries}

    async def call(self, send: Callable[[], Awaitable[Any]]) -> tuple[Any, int]:
        """(what ``send``, one request, returned; the retries it took) under the module's retry policy.

        Raises:
            CallError: the request failed (``kind`` says how) and is not sent again.
        """
        if self._unreachable is not None and not self._answered:
            if time.monotonic() - self._unreachable_at < UNREACHABLE_HOLD:
                raise CallError("unreachable", self._unreachable)
            self._unreachable = None  # a while later: the server may be up now (vllm serve loading weights)
        stop = tenacity.stop_any(tenacity.stop_after_attempt(self.max_retries + 1), self._stop_unreachable)
        retrying = tenacity.AsyncRetrying(stop=stop, wait=_wait,
                                          retry=tenacity.retry_if_exception_type(_Retry), reraise=True,
                                          before_sleep=self._say_long_wait, **self._sleep)
        async def attempt() -> Any:  # ``send`` may be a lambda returning an awaitable: tenacity would not await it
            return await send()

        try:
            out = await retrying(attempt)
        except _Retry as e:
            n = retrying.statistics.get("attempt_number", 1) - 1
            if e.no_connection and not self._answered:
                if self._unreachable is None:
                    self._unreachable_at = time.monotonic()
                    self._unreachable = (f"{e}: no server answered there (after {n} "
                                         f"{'retry' if n == 1 else 'retries'}); start the server, or fix base_url "
                                         "in the model spec (e.g. openai/MODEL,base_url=http://127.0.0.1:8000/v1)")
                    log.error("%s: %s", self.model, self._unreachable)
                raise CallError("unreachable", self._unreachable, retries=n) from None
            raise CallError(e.kind, f"{e} (after {n} {'retry' if n == 1 else 'retries'})", retries=n) from None
        return out, retrying.statistics["attempt_number"] - 1

    def _stop_unreachable(self, state: Any) -> bool:
        """Stop retrying a connection to an endpoint that has never answered, after a few quick tries
        (another call getting an answer meanwhile lifts this: the endpoint is up, retry as usual)."""
        exc = state.outcome.exception() if state.outcome is not None else None
        return (getattr(exc, "no_connection", False) and not self._answered
                and (state.attempt_number > UNREACHABLE_RETRIES or self._unreachable is not None))

    def _say_long_wait(self, state: Any) -> None:
        """A wait the user would otherwise sit through in silence (a long Retry-After) is said."""
        wait = state.next_action.sleep if state.next_action else 0.0
        if wait >= LONG_WAIT:
            log.warning("%s at %s: %s; waiting %.0f s before retry %d of %d", self.model, self.endpoint,
                        state.outcome.exception(), wait, state.attempt_number, self.max_retries)

    async def _once(self, req: ChatRequest) -> dict[str, Any]:
        """One request; the output mode falls back (and is remembered) when the server refuses it."""
        while True:
            mode = self.mode if req.schema is not None else "text"
            try:
                return {**await self._request(req, mode), "okgen_mode": mode}
            except _Unsupported as e:
                nxt = MODES[MODES.index(mode) + 1]
                log.warning("%s at %s does not take %s output (%s); using %s", self.model, self.endpoint, mode, e, nxt)
                key = (self.endpoint, self.model)
                _LEARNT[key] = max(nxt, _LEARNT.get(key, nxt), key=MODES.index)

    async def _request(self, req: ChatRequest, mode: str) -> dict[str, Any]:
        messages = [dict(m) for m in req.messages]
        if req.schema is not None and mode != "structured":  # the server does not enforce it: ask in the prompt
            messages[-1]["content"] = schema_prompt(messages[-1].get("content") or "", req.schema)
        kw = {k: v for k, v in {"model": self.model, "messages": messages, "temperature": req.temperature,
                                "top_p": req.top_p, "max_tokens": req.max_tokens, "seed": req.seed,
                                "top_logprobs": req.top_logprobs, "stop": list(req.stop) if req.stop else None,
                                "logprobs": req.logprobs or None}.items() if v is not None}
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
            response = await call
            self._answered = True
            return response.http_response.json()
        except openai.APIStatusError as e:
            self._answered = True
            status, msg = e.status_code, (e.message.partition(" - ")[2] or str(e.body or e.message))[:300]
            if status in (400, 422, 500) and mode != "text" and _FORMAT_WORDS.search(msg):
                raise _Unsupported(msg) from None
            if status in RETRIED_STATUS or status >= 500:
                raise _Retry("rate_limit" if status == 429 else f"http_{status}", f"HTTP {status}: {msg}",
                             retry_after(e.response.headers)) from None
            if status == 400 and getattr(e, "code", None) == "content_filter":
                raise CallError("content_filter", f"HTTP 400, blocked by the content filter: {msg}") from None
            kind = "too_long" if status in (400, 413, 422) and _TOO_LONG.search(msg) else f"http_{status}"
            raise CallError(kind, f"HTTP {status}: {msg}") from None
        except openai.APIConnectionError as e:  # APITimeoutError is one too
            timeout = isinstance(e, openai.APITimeoutError)
            kind = "timeout" if timeout else "connection"
            msg = f"timed out after {self.timeout:g}s" if timeout else f"cannot reach {self.endpoint}: {e.__cause__ or e}"
            if type(e.__cause__).__name__ in _NOT_SENT:
                # A TLS handshake that failed reached a server: not "nothing listens there".
                nothing = type(e.__cause__).__name__ in _NO_CONNECTION and "ssl" not in str(e.__cause__).lower()
                raise _Retry(kind, msg, no_connection=nothing) from None
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
    """The server's Retry-After, else jittered exponential backoff."""
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
        raise CallError("bad_response", "the reply is not a chat completion"
                        + (f": the server answered with an error: {str(err)[:300]}" if err else ""))
    if msg.get("content") is None and not msg.get("refusal") and not msg.get("tool_calls") \
            and first.get("finish_reason") not in ("length", "content_filter"):
        raise CallError("bad_response", "the reply has no content")
