"""The lazy registry of eval model backends and ``load_backend(spec)``.

A backend module is imported only when its name is used, so ``vllm`` (and torch) are never
imported unless a ``vllm/...`` or ``hf/...`` spec is loaded.

Example::

    backend = load_backend("hf/Qwen/Qwen2.5-0.5B-Instruct,batch_size=16")
"""

from __future__ import annotations

from typing import Any

from okgen.models.base import Backend, ModelSpec, parse_model_spec
from okgen.registry import Registry

BACKENDS = Registry(
    "model backend",
    {
        "hf": "okgen.models.hf:HFBackend",
        "vllm": "okgen.models.vllm_backend:VLLMBackend",
        "openai": "okgen.models.openai_backend:OpenAIBackend",
        "random": "okgen.models.random_backend:RandomBackend",
    },
)


def load_backend(spec: str | ModelSpec, workspace: Any = None) -> Backend:
    """Parse a spec and load its backend (the model is loaded now).

    Raises:
        ConfigError: malformed spec or unknown backend (the message lists the known ones).
        MissingExtraError: the backend's optional dependency is not installed.
    """
    ms = spec if isinstance(spec, ModelSpec) else parse_model_spec(spec)
    cls = BACKENDS.get(ms.backend)
    return cls(ms, workspace)


__all__ = ["BACKENDS", "load_backend", "parse_model_spec"]
