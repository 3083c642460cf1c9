"""One chat-model layer for every agent (generator, validator, freshness probe, judge).

``chat_model("openai/gpt-4.1-mini")``, ``chat_model("hf/HuggingFaceTB/SmolLM2-135M-Instruct")``
or ``chat_model("vllm/ID")`` (the spec ``okgen eval --model`` takes) gives a :class:`ChatModel`:
``await model.complete(messages, schema=None, **decoding)`` returns ``(parsed output or text,
result)``; ``achat``/``chat_many`` take :class:`ChatRequest` s. Backends are imported on first use.
"""

from __future__ import annotations

from typing import Any

from okgen.errors import ConfigError
from okgen.llm.base import TRANSIENT_KINDS, ChatModel, ChatRequest, ChatResult, Stats, run_sync
from okgen.llm.prices import Budget, PriceTable
from okgen.models.base import ModelSpec, parse_model_spec
from okgen.registry import Registry

CHAT_BACKENDS = Registry("chat backend", {
    "openai": "okgen.llm.openai_chat:OpenAIChat",
    "hf": "okgen.llm.hf_chat:HFChat",
    "vllm": "okgen.llm.vllm_chat:VLLMChat",
})
DECODING_OPTIONS = ("temperature", "top_p", "max_tokens", "seed")  # for the agent; the rest configure the backend
BACKEND_OPTIONS = {
    "openai": ("base_url", "api_key_env", "timeout", "max_retries", "structured", "concurrency"),
    "hf": ("device", "dtype", "batch_size", "gguf_file", "revision", "trust_remote_code"),
    "vllm": ("dtype", "batch_size", "tensor_parallel_size", "gpu_memory_utilization", "max_model_len",
             "revision", "trust_remote_code"),
}
_NUMBERS = {"timeout": "float_opt", "max_retries": "int_opt", "concurrency": "int_opt", "batch_size": "int_opt"}


def chat_model(spec: str | ModelSpec, **kw: Any) -> tuple[ChatModel, dict[str, str]]:
    """The chat model a spec names, and the spec's decoding options (as text, for the agent).

    ``kw`` are :class:`ChatModel` options (concurrency, cache, prices, budget; timeout and
    max_retries for ``openai``); the spec's own options win (``batch_size`` is the concurrency).

    Raises:
        ConfigError: a malformed spec, an unknown backend or option, a bad option value.
        MissingExtraError: the backend's optional dependency is not installed.
    """
    ms = spec if isinstance(spec, ModelSpec) else parse_model_spec(spec)
    if (known := BACKEND_OPTIONS.get(ms.backend)) is None:
        raise ConfigError(f"unknown chat backend {ms.backend!r} in model spec {ms.text or ms.name!r}; "
                          f"known: {', '.join(BACKEND_OPTIONS)}")
    if unknown := sorted(set(ms.options) - set(known) - set(DECODING_OPTIONS)):
        raise ConfigError(f"unknown option(s) {', '.join(unknown)} in model spec {ms.text or ms.name!r} "
                          f"(known: {', '.join(known + DECODING_OPTIONS)})")
    if ms.backend != "openai":
        kw = {k: v for k, v in kw.items() if k not in ("timeout", "max_retries")}
    for k in (k for k in known if k in ms.options):
        value = getattr(ms, _NUMBERS[k])(k) if k in _NUMBERS else ms.options[k]
        kw["concurrency" if k == "batch_size" else k] = str(value) if k in ("base_url", "api_key_env", "structured") else value
    decoding = {k: str(v) for k, v in ms.options.items() if k in DECODING_OPTIONS}
    return CHAT_BACKENDS.get(ms.backend)(ms.model, **kw), decoding


__all__ = ["Budget", "ChatModel", "ChatRequest", "ChatResult", "PriceTable", "Stats", "TRANSIENT_KINDS",
           "chat_model", "run_sync"]
