"""``openai``: any OpenAI-compatible server (OpenAI, ``vllm serve``, others), async and cached.

Spec: ``openai/MODEL[,key=value...]``. Options: ``base_url`` (None: OpenAI),
``api_key_env`` (OPENAI_API_KEY), ``concurrency`` (16), ``max_retries`` (6), ``timeout`` (120),
``top_logprobs`` (20), ``max_context`` (tokens, for truncation; none by default), ``cache``
(yes: the workspace's response cache, ``data/cache/llm.sqlite``).

* ``letter_logprobs``: one chat call per question, the whole prompt with ``Answer:`` as the user
  turn (as lm-evaluation-harness's ``--apply_chat_template`` renders it), ``max_tokens=1``, ``logprobs`` and
  ``top_logprobs``; each letter's score is the best log-probability among the first token's
  alternatives that read as that letter (``"B"``, ``" B"``). Letters outside the top
  alternatives score ``-inf``; when none is there the answer counts as unparsed (and wrong).
* ``loglik``: the legacy ``/v1/completions`` endpoint with ``echo`` and ``logprobs`` (what
  lm-evaluation-harness's ``local-completions`` uses; ``vllm serve`` supports it, OpenAI's
  chat models do not), summing the log-probabilities of the continuation's tokens.
* ``generate``: chat completions, greedy unless a temperature is given (seeded).

Retries, concurrency, usage accounting and the SQLite response cache come from
:mod:`okgen.llm.openai_chat`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any

from okgen.llm import ChatRequest, ChatResult, run_sync
from okgen.llm.base import CallError
from okgen.llm.openai_chat import OpenAIChat
from okgen.models.base import (
    NEG_INF,
    Backend,
    Generated,
    ModelSpec,
    Prompt,
    Scored,
    estimate_tokens,
)
from okgen.models.cache import ResponseCache, request_key

log = logging.getLogger(__name__)

OPTIONS = {"base_url", "api_key_env", "concurrency", "max_retries", "timeout", "top_logprobs", "max_context",
           "cache", "seed"}


class OpenAIBackend(Backend):
    """A model behind an OpenAI-compatible API."""

    name = "openai"

    def __init__(self, spec: ModelSpec, workspace: Any = None):
        super().__init__(spec, workspace)
        spec.check_options(OPTIONS)
        o = spec.options
        self.top_logprobs = spec.int_opt("top_logprobs", 20)
        self._max_context = spec.int_opt("max_context") or None
        self.cache = None
        if o.get("cache", True) and workspace is not None:
            self.cache = ResponseCache(workspace.cache_dir / "llm.sqlite")
        self.client = OpenAIChat(
            spec.model, base_url=o.get("base_url"), api_key_env=str(o.get("api_key_env", "OPENAI_API_KEY")),
            concurrency=spec.int_opt("concurrency", 16), max_retries=spec.int_opt("max_retries", 6),
            timeout=spec.float_opt("timeout", 120.0), cache=self.cache, structured="text")
        self.completion_calls = 0

    @property
    def max_length(self) -> int | None:
        """The ``max_context`` option (tokens estimated at 4 characters each)."""
        return self._max_context

    # -- scoring ----------------------------------------------------------------------
    def letter_logprobs(self, prompts: Sequence[Prompt], labels: Sequence[Sequence[str]]) -> list[Scored]:
        """First-token log-probabilities of each label from one chat call per prompt."""
        reqs = [ChatRequest(messages=lm_eval_messages(p), max_tokens=1, temperature=0.0, seed=self._seed(),
                            logprobs=True, top_logprobs=self.top_logprobs) for p in prompts]
        results = self.client.chat_many(reqs)
        out = []
        for res, labs in zip(results, labels):
            lengths = tuple(len(x) + 1 for x in labs)
            if not res.ok:
                out.append(Scored(scores=tuple(NEG_INF for _ in labs), lengths=lengths, error=res.error))
                continue
            scores = _label_scores(res, labs)
            # No letter among the alternatives is the model's doing (an unparsed answer), not an error.
            err = None if res.logprobs is not None else "the server returned no logprobs (use --scoring generate for this model)"
            out.append(Scored(scores=scores, lengths=lengths, prompt_tokens=res.prompt_tokens, single_pass=True,
                              error=err))
        return out

    def loglik(self, prompts: Sequence[Prompt], continuations: Sequence[Sequence[str]]) -> list[Scored]:
        """Continuation log-likelihoods through ``/v1/completions`` with ``echo``."""
        jobs = [(p.plain(), c) for p, conts in zip(prompts, continuations) for c in conts]
        got = run_sync(self._completions_many(jobs))
        out, k = [], 0
        for conts in continuations:
            part = got[k:k + len(conts)]
            k += len(conts)
            errors = [e for _, _, e in part if e]
            out.append(Scored(scores=tuple(s for s, _, _ in part), lengths=tuple(len(c) for c in conts),
                              prompt_tokens=max((n for _, n, _ in part), default=0),
                              error=errors[0] if errors else None))
        return out

    def generate(self, prompts: Sequence[Prompt], *, max_tokens: int, temperature: float = 0.0,
                 seed: int = 0, stop: Sequence[str] = ()) -> list[Generated]:
        """Chat completions."""
        reqs = [ChatRequest(messages=tuple(p.messages), max_tokens=max_tokens, temperature=temperature,
                            seed=self._seed(seed), stop=tuple(stop) or None) for p in prompts]
        return [Generated(text=r.text or "", prompt_tokens=r.prompt_tokens, completion_tokens=r.completion_tokens,
                          finish_reason=r.finish_reason, error=r.error)
                for r in self.client.chat_many(reqs)]

    def _seed(self, seed: int | None = None) -> int:
        return self.spec.int_opt("seed", seed if seed is not None else 0)

    # -- /v1/completions ----------------------------------------------------------------
    async def _completions_many(self, jobs: list[tuple[str, str]]) -> list[tuple[float, int, str | None]]:
        sem = asyncio.Semaphore(self.client.concurrency)

        async def one(ctx: str, cont: str) -> tuple[float, int, str | None]:
            async with sem:
                return await self._completion(ctx, cont)

        try:
            return list(await asyncio.gather(*(one(c, x) for c, x in jobs)))
        finally:
            await self.client.aclose()

    async def _completion(self, ctx: str, cont: str) -> tuple[float, int, str | None]:
        payload = {"model": self.spec.model, "prompt": ctx + cont, "max_tokens": 1, "temperature": 0.0,
                   "logprobs": 1, "echo": True, "seed": self._seed()}
        key = (request_key({"endpoint": "completions", "server": self.client.endpoint, **payload})
               if self.cache is not None else None)
        raw = self.cache.get(key) if key is not None else None
        if raw is None:
            c = self.client
            try:
                raw, _ = await c.call(lambda: c.raw(c.client().completions.with_raw_response.create(**payload)))
            except CallError as e:
                return NEG_INF, 0, f"/v1/completions failed: {str(e)[:200]}"
            self.completion_calls += 1
            if key is not None:
                self.cache.put(key, self.spec.model, payload, raw)
        return _echo_loglik(raw, len(ctx), len(ctx) + len(cont))

    # -- identity ---------------------------------------------------------------------
    def prompt_tokens(self, prompt: Prompt) -> int:
        """Estimated tokens of the prompt."""
        return estimate_tokens(prompt.plain())

    def info(self) -> dict[str, Any]:
        """Server and client versions."""
        import openai

        return {"backend": self.name, "model": self.spec.model, "base_url": self.client.base_url or "api.openai.com",
                "openai": openai.__version__}

    def usage(self) -> dict[str, Any]:
        """Calls, cache hits, tokens and cost."""
        stats = self.client.stats.to_dict()
        stats["completion_calls"] = self.completion_calls
        return stats

    def close(self) -> None:
        """Close the cache."""
        if self.cache is not None:
            self.cache.close()


def _label_scores(res: ChatResult, labels: Sequence[str]) -> tuple[float, ...]:
    """Best first-token log-probability per label among the token and its alternatives."""
    if not res.logprobs:
        return tuple(NEG_INF for _ in labels)
    first = res.logprobs[0]
    cands = [(first.get("token", ""), first.get("logprob"))]
    cands += [(t.get("token", ""), t.get("logprob")) for t in first.get("top_logprobs") or []]
    best = {lab: NEG_INF for lab in labels}
    for tok, lp in cands:
        t = (tok or "").strip()
        if t in best and lp is not None and lp > best[t]:
            best[t] = float(lp)
    return tuple(best[lab] for lab in labels)


def lm_eval_messages(prompt: Prompt) -> tuple[dict[str, str], ...]:
    """Chat messages as lm-eval renders a prompt under ``--apply_chat_template``: system messages,
    then one user turn holding the rest and the answer prefix."""
    system = tuple(dict(m) for m in prompt.messages if m["role"] == "system")
    user = "\n\n".join(m["content"] for m in prompt.messages if m["role"] != "system")
    if prompt.answer_prefix:
        user = f"{user}\n{prompt.answer_prefix}"
    return (*system, {"role": "user", "content": user})


def _echo_loglik(raw: dict[str, Any], start: int, end: int) -> tuple[float, int, str | None]:
    """Sum the echoed prompt's token log-probabilities in characters [start, end)."""
    try:
        lp = raw["choices"][0]["logprobs"]
        offsets, values = lp["text_offset"], lp["token_logprobs"]
    except (KeyError, IndexError, TypeError):
        return NEG_INF, 0, "the server returned no echoed logprobs (it may not support echo on /v1/completions)"
    total, n_prompt = 0.0, 0
    for off, v in zip(offsets, values):
        if off >= end:
            break  # the generated token
        if off < start:
            n_prompt += 1
            continue
        if v is None:
            return NEG_INF, n_prompt, "missing logprob inside the continuation"
        total += float(v)
    return total, n_prompt, None
