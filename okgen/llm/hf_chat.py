"""Chat models run in-process with Hugging Face transformers (CPU or GPU), batched.

Spec: ``hf/PATH[,key=value...]`` (a hub id or a local folder). Options: ``device``
(auto|cpu|cuda|cuda:N), ``dtype`` (auto|float32|bfloat16|float16), ``batch_size`` (8),
``gguf_file`` (a GGUF file inside PATH), ``revision``, ``trust_remote_code``.

Prompts go through the tokenizer's chat template, a schema asked for in the prompt and, where
``lm-format-enforcer`` is installed (the ``hf`` extra), enforced token by token (mode
``guided``; else ``text``, parsed tolerantly). Requests arriving together are generated as one
left-padded batch in a worker thread.
"""

from __future__ import annotations

import importlib.util
import json
import threading
from typing import Any

from okgen.errors import ConfigError
from okgen.llm.base import ChatModel, ChatRequest, InProcessBatches, schema_json, schema_prompt
from okgen.models.base import apply_chat_template
from okgen.models.hf import load_causal_lm

DEFAULT_MAX_NEW_TOKENS = 512


class HFChat(InProcessBatches, ChatModel):
    """A transformers causal LM answering chat requests (``concurrency`` is the batch size)."""

    backend = "hf"

    def __init__(self, model: str, *, device: str = "auto", dtype: str = "auto", gguf_file: str | None = None,
                 revision: str | None = None, trust_remote_code: bool = False, concurrency: int = 8, **kw: Any):
        super().__init__(model, concurrency=concurrency, **kw)
        self.torch, self.device, self.tokenizer, self.lm = load_causal_lm(
            model, device=device, dtype=dtype, revision=revision, trust_remote_code=trust_remote_code, gguf_file=gguf_file)
        tok = self.tokenizer
        if getattr(tok, "chat_template", None) is None:
            raise ConfigError(f"hf model {model!r} has no chat template: the agents need a chat (instruct) model")
        tok.padding_side = "left"
        if tok.pad_token_id is None:
            tok.pad_token = tok.eos_token
        eos = self.lm.generation_config.eos_token_id
        eos = eos if eos is not None else tok.eos_token_id
        self.eos = set(eos if isinstance(eos, list | tuple) else [eos])
        self.mode = "guided" if importlib.util.find_spec("lmformatenforcer") else "text"
        self._vocab: Any = None  # lm-format-enforcer's view of the tokenizer, built on first use
        self._stop = threading.Event()  # set by cancel(): the running batch stops at its next token

    def cancel(self) -> None:
        self._stop.set()

    def begin(self) -> None:
        self._stop.clear()

    def _stopping(self) -> list[Any]:
        """transformers' stopping criteria: stop every row once :meth:`cancel` was called."""
        from transformers import StoppingCriteria

        stop, torch = self._stop, self.torch

        class Cancelled(StoppingCriteria):
            def __call__(self, input_ids: Any, scores: Any, **kw: Any) -> Any:
                return torch.full((input_ids.shape[0],), stop.is_set(), dtype=torch.bool, device=input_ids.device)

        return [Cancelled()]

    def _batch_key(self, r: ChatRequest) -> Any:
        return (*super()._batch_key(r), r.schema)

    def guide(self, schema: Any) -> dict[str, Any]:
        """``generate`` options constraining the output to ``schema``'s JSON (none in text mode)."""
        if schema is None or self.mode != "guided":
            return {}
        from lmformatenforcer import JsonSchemaParser
        from lmformatenforcer.integrations import transformers as lmfe

        if self._vocab is None:
            self._vocab = lmfe.build_token_enforcer_tokenizer_data(self.tokenizer)
        parser = JsonSchemaParser(json.loads(schema_json(schema)))
        return {"prefix_allowed_tokens_fn": lmfe.build_transformers_prefix_allowed_tokens_fn(self._vocab, parser)}

    def render(self, req: ChatRequest) -> str:
        """The prompt text: the chat template over the messages (the schema asked for in the last)."""
        msgs = [dict(m) for m in req.messages]
        if req.schema is not None:
            msgs[-1]["content"] = schema_prompt(msgs[-1].get("content") or "", req.schema)
        return apply_chat_template(self.tokenizer, msgs)

    def generate(self, reqs: list[ChatRequest]) -> list[dict[str, Any]]:
        """Generate one batch (same decoding), answered in the shape of OpenAI chat completions."""
        torch, tok, r0 = self.torch, self.tokenizer, reqs[0]
        enc = tok([self.render(r) for r in reqs], return_tensors="pt", padding=True, add_special_tokens=False)
        ids, mask = enc["input_ids"].to(self.device), enc["attention_mask"].to(self.device)
        limit = r0.max_tokens or DEFAULT_MAX_NEW_TOKENS
        gen: dict[str, Any] = {"max_new_tokens": limit, "pad_token_id": tok.pad_token_id, "do_sample": r0.temperature > 0,
                               **self.guide(r0.schema), **({"stop_strings": list(r0.stop), "tokenizer": tok} if r0.stop else {})}
        if r0.temperature > 0:
            gen.update(temperature=r0.temperature, top_p=r0.top_p)
            torch.manual_seed(r0.seed if r0.seed is not None else 0)
        else:
            gen.update(temperature=None, top_p=None, top_k=None)
        from transformers import StoppingCriteriaList

        if self._stop.is_set():  # cancelled while the batch was prepared
            from okgen.llm.base import CallError

            return [CallError("internal", "generation cancelled")] * len(reqs)
        with torch.inference_mode():
            out = self.lm.generate(input_ids=ids, attention_mask=mask, stopping_criteria=StoppingCriteriaList(self._stopping()),
                                   **gen)
        if self._stop.is_set():  # cut short by cancel(): no reply is whole
            from okgen.llm.base import CallError

            return [CallError("internal", "generation cancelled")] * len(reqs)
        replies = []
        for i, row in enumerate(out[:, ids.shape[1]:].tolist()):
            end = next((j for j, t in enumerate(row) if t in self.eos), len(row))
            new = row[:end]
            while new and new[-1] == tok.pad_token_id:  # a row stopped early by a stop string
                new.pop()
            cut = end == len(row) and len(new) >= limit
            replies.append({"choices": [{"index": 0, "finish_reason": "length" if cut else "stop",
                                         "message": {"role": "assistant", "content": tok.decode(new, skip_special_tokens=True)}}],
                            "usage": {"prompt_tokens": int(mask[i].sum()), "completion_tokens": len(new) + (end < len(row))}})
        return replies
