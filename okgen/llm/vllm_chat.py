"""Chat models run in-process with vLLM (GPU), with guided JSON decoding.

Spec: ``vllm/ID[,key=value...]``: ``batch_size`` (64: requests gathered into one ``LLM.chat``
call); the other options (``dtype``, ``tensor_parallel_size``, ``gpu_memory_utilization`` (0.85),
``max_model_len``, ``revision``, ``trust_remote_code``) go to ``vllm.LLM`` unchanged. A schema
constrains the output to its JSON schema (vLLM's structured outputs).
"""

from __future__ import annotations

import json
from typing import Any

from okgen.errors import ConfigError
from okgen.llm.base import ChatModel, ChatRequest, InProcessBatches, schema_json
from okgen.registry import require


class VLLMChat(InProcessBatches, ChatModel):
    """A vLLM engine answering chat requests."""

    backend = "vllm"
    mode = "guided"

    def __init__(self, model: str, *, concurrency: int = 64, cache: Any = None, prices: Any = None, budget: Any = None,
                 **engine: Any):
        super().__init__(model, concurrency=concurrency, cache=cache, prices=prices, budget=budget)
        self._vllm = vllm = require("vllm", "vllm", "the vllm chat backend")
        try:
            self.llm = vllm.LLM(model=model, **{"gpu_memory_utilization": 0.85, **engine})
        except (OSError, ValueError, TypeError) as e:
            raise ConfigError(f"cannot load vllm model {model!r}: {str(e).strip().splitlines()[0]}") from None

    def _batch_key(self, r: ChatRequest) -> Any:
        return None  # each request of a batch has its own sampling parameters

    def params(self, req: ChatRequest) -> Any:
        """vLLM sampling parameters of a request (guided by its schema)."""
        kw: dict[str, Any] = {"temperature": req.temperature, "top_p": req.top_p, "seed": req.seed,
                              "max_tokens": req.max_tokens or 512, "stop": list(req.stop or [])}
        if req.schema is not None:
            schema, sp = json.loads(schema_json(req.schema)), self._vllm.sampling_params
            if hasattr(sp, "StructuredOutputsParams"):  # vLLM >= 0.11
                kw["structured_outputs"] = sp.StructuredOutputsParams(json=schema)
            else:
                kw["guided_decoding"] = sp.GuidedDecodingParams(json=schema)
        return self._vllm.SamplingParams(**kw)

    def generate(self, reqs: list[ChatRequest]) -> list[dict[str, Any]]:
        """One batched ``LLM.chat`` call, answered in the shape of OpenAI chat completions."""
        outs = self.llm.chat([list(r.messages) for r in reqs], [self.params(r) for r in reqs], use_tqdm=False)
        return [{"choices": [{"index": 0, "message": {"role": "assistant", "content": o.outputs[0].text},
                              "finish_reason": o.outputs[0].finish_reason or "stop"}],
                 "usage": {"prompt_tokens": len(o.prompt_token_ids or []), "completion_tokens": len(o.outputs[0].token_ids)}}
                for o in outs]
