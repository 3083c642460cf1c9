"""A real HTTP server on 127.0.0.1 that speaks the OpenAI API with scripted replies.

It answers ``POST /v1/chat/completions``, ``POST /v1/completions`` and ``GET /v1/models`` the
way an OpenAI-compatible server does, so okgen's real ``openai`` client code runs against it.
Replies come from a FIFO script (:meth:`OpenAIServer.script`) and then from a responder
function; each reply can set the HTTP status, ``Retry-After``, latency, finish reason,
refusal, logprobs or a raw (malformed) body.

Example::

    with OpenAIServer(responder=lambda req, endpoint: '{"answer": "B"}', latency=0.2) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="test")
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from okgen.testing.web import Request, Route, WebServer


@dataclass
class Reply:
    """One scripted answer.

    Attributes:
        content: assistant message content (chat) or completion text.
        status: HTTP status; non-200 answers carry an OpenAI-style error body.
        headers: extra headers (``{"Retry-After": "1"}``).
        delay: seconds to wait before answering.
        finish_reason: ``stop``, ``length``, ``content_filter``.
        refusal: refusal text (structured outputs).
        logprobs: chat logprobs content list, or completions logprobs object.
        raw: raw response body that replaces everything else (malformed JSON tests).
        error: error message for non-200 answers.
        usage: token usage; estimated from word counts when omitted.
    """

    content: str | None = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    finish_reason: str = "stop"
    refusal: str | None = None
    logprobs: Any = None
    raw: bytes | str | None = None
    error: str | None = None
    usage: dict[str, int] | None = None


# What llama.cpp's server answers to a json_schema response format (an internal error naming it).
LLAMA_CPP_REFUSAL = {"error": {"code": 500, "type": "server_error",
                               "message": "response_format type must be one of \"text\" or \"json_object\", "
                                          "but got: json_schema"}}

Responder = Callable[[dict[str, Any], str], "Reply | str"]


def _words(obj: Any) -> int:
    if isinstance(obj, str):
        return len(obj.split())
    if isinstance(obj, list):
        return sum(_words(x) for x in obj)
    if isinstance(obj, dict):
        return sum(_words(v) for k, v in obj.items() if k in ("content", "text"))
    return 0


class OpenAIServer:
    """Scripted OpenAI-compatible server.

    Args:
        responder: ``f(request_json, endpoint) -> Reply | str`` used when the script is empty;
            ``endpoint`` is ``"chat"`` or ``"completions"``.
        latency: seconds added to every answer.
        model: model name reported by ``/v1/models``.
        refuse_json_schema: answer a ``json_schema`` response format with HTTP 500, as
            llama.cpp's server does (it takes ``text`` and ``json_object`` with a ``schema``).
    """

    def __init__(self, responder: Responder | None = None, latency: float = 0.0, model: str = "fake-model",
                 refuse_json_schema: bool = False):
        self.responder = responder
        self.model = model
        self.refuse_json_schema = refuse_json_schema
        self.requests: list[dict[str, Any]] = []
        self.calls: Counter[str] = Counter()
        self._script: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self.web = WebServer(
            {
                "/v1/chat/completions": lambda r: self._answer(r, "chat"),
                "/v1/completions": lambda r: self._answer(r, "completions"),
                "/v1/models": lambda r: self._models(),
            },
            latency=latency,
        )

    def __enter__(self) -> OpenAIServer:
        self.web.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.web.stop()

    def start(self) -> OpenAIServer:
        """Start serving."""
        self.web.start()
        return self

    def stop(self) -> None:
        """Stop serving."""
        self.web.stop()

    @property
    def base_url(self) -> str:
        """The ``/v1`` base URL to give the OpenAI client."""
        return self.web.url("/v1")

    @property
    def max_active(self) -> int:
        """Most requests in flight at once so far."""
        return self.web.max_active

    def script(self, *replies: Reply | str) -> None:
        """Queue replies, answered in order before the responder is used."""
        with self._lock:
            for r in replies:
                self._script.append(r if isinstance(r, Reply) else Reply(content=r))

    def _models(self) -> Route:
        body = {"object": "list", "data": [{"id": self.model, "object": "model", "owned_by": "okgen-test"}]}
        return Route(body=json.dumps(body), content_type="application/json")

    def _answer(self, req: Request, endpoint: str) -> Route:
        try:
            payload = json.loads(req.body or b"{}")
        except json.JSONDecodeError:
            return Route(status=400, body=json.dumps({"error": {"message": "bad JSON", "type": "invalid_request_error"}}),
                         content_type="application/json")
        with self._lock:
            self.requests.append(payload)
            self.calls[endpoint] += 1
            fmt = payload.get("response_format") if isinstance(payload.get("response_format"), dict) else {}
            if self.refuse_json_schema and fmt.get("type") not in (None, "text", "json_object"):
                return Route(status=500, body=json.dumps(LLAMA_CPP_REFUSAL), content_type="application/json")
            reply = self._script.popleft() if self._script else None
        if reply is None:
            if self.responder is None:
                reply = Reply(status=500, error="no scripted reply left")
            else:
                got = self.responder(payload, endpoint)
                reply = got if isinstance(got, Reply) else Reply(content=got)
        if reply.delay:
            time.sleep(reply.delay)
        headers = dict(reply.headers)
        if reply.raw is not None:
            return Route(status=reply.status, body=reply.raw, headers=headers, content_type="application/json")
        if reply.status != 200:
            err = {"error": {"message": reply.error or f"error {reply.status}", "type": "server_error", "code": reply.status}}
            return Route(status=reply.status, body=json.dumps(err), headers=headers, content_type="application/json")
        model = payload.get("model", self.model)
        prompt_tokens = _words(payload.get("messages") or payload.get("prompt") or "")
        completion_tokens = _words(reply.content or "")
        usage = reply.usage or {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
        n = next(self._ids)
        if endpoint == "chat":
            body = {
                "id": f"chatcmpl-{n}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": model,
                "choices": [{
                    "index": 0,
                    "message": {"role": "assistant", "content": reply.content, "refusal": reply.refusal},
                    "finish_reason": reply.finish_reason,
                    "logprobs": {"content": reply.logprobs} if reply.logprobs is not None else None,
                }],
                "usage": usage,
            }
        else:
            body = {
                "id": f"cmpl-{n}",
                "object": "text_completion",
                "created": int(time.time()),
                "model": model,
                "choices": [{
                    "index": 0,
                    "text": reply.content or "",
                    "finish_reason": reply.finish_reason,
                    "logprobs": reply.logprobs,
                }],
                "usage": usage,
            }
        return Route(body=json.dumps(body), headers=headers, content_type="application/json")


def chat_logprobs(tokens: list[tuple[str, float, dict[str, float]]]) -> list[dict[str, Any]]:
    """Build a chat ``logprobs.content`` list: ``[(token, logprob, {alt: logprob}), ...]``."""
    out = []
    for tok, lp, top in tokens:
        out.append({
            "token": tok,
            "logprob": lp,
            "bytes": list(tok.encode("utf-8")),
            "top_logprobs": [{"token": t, "logprob": v, "bytes": list(t.encode("utf-8"))} for t, v in top.items()],
        })
    return out
