"""Chat models run in-process with Hugging Face transformers (CPU or GPU), batched.

Spec: ``hf/PATH[,key=value...]`` (a hub id or a local folder). Options: ``device``
(auto|cpu|cuda|cuda:N), ``dtype`` (auto|float32|bfloat16|float16), ``batch_size`` (8: requests
generated together), ``gguf_file`` (a GGUF file inside PATH, loaded by transformers),
``revision``, ``trust_remote_code``.

Prompts are rendered with the tokenizer's chat template; a schema is asked for in the prompt
(with its JSON schema) and the output is parsed tolerantly. Requests arriving together are
generated as one left-padded batch in a worker thread, so the event loop stays free.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from okgen.errors import ConfigError
from okgen.llm.base import CallError, ChatModel, ChatRequest, InProcessBatches
from okgen.llm.openai_chat import schema_prompt
from okgen.registry import require

log = logging.getLogger(__name__)

DEFAULT_MAX_NEW_TOKENS = 512


class HFChat(InProcessBatches, ChatModel):
    """A transformers causal LM answering chat requests.

    Args:
        model: hub id or local folder.
        device, dtype, gguf_file, revision, trust_remote_code: loading options.
        **kw: :class:`ChatModel` options (``concurrency`` is the batch size).
    """

    backend = "hf"
    mode = "text"

    def __init__(self, model: str, *, device: str = "auto", dtype: str = "auto", gguf_file: str | None = None,
                 revision: str | None = None, trust_remote_code: bool = False, concurrency: int = 8, **kw: Any):
        super().__init__(model, concurrency=concurrency, **kw)
        torch = require("torch", "hf", "the hf chat backend")
        transformers = require("transformers", "hf", "the hf chat backend")
        from okgen.models.hf import _device, _dtype

        self.torch = torch
        self.device = _device(torch, str(device))
        load = {"revision": revision, "trust_remote_code": bool(trust_remote_code)}
        if gguf_file:
            load["gguf_file"] = str(gguf_file)
        try:
            self.tokenizer = transformers.AutoTokenizer.from_pretrained(model, **load)
            self.lm = transformers.AutoModelForCausalLM.from_pretrained(
                model, dtype=_dtype(torch, str(dtype), self.device), **load)
        except (OSError, ValueError) as e:
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise ConfigError(f"cannot load hf model {model!r}: {first}") from None
        if getattr(self.tokenizer, "chat_template", None) is None:
            raise ConfigError(f"hf model {model!r} has no chat template: the agents need a chat (instruct) model")
        self.lm.to(self.device).eval()
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self._queue: list[tuple[ChatRequest, asyncio.Future[dict[str, Any]]]] = []
        self._worker: asyncio.Task[None] | None = None

    async def _drain(self) -> None:
        """Generate queued requests in batches of like decoding, in a worker thread."""
        await asyncio.sleep(0)  # let the requests of this turn join the batch
        while self._queue:
            head = _decoding(self._queue[0][0])
            batch = [x for x in self._queue if _decoding(x[0]) == head][: self.concurrency]
            self._queue = [x for x in self._queue if all(x is not b for b in batch)]
            try:
                outs = await asyncio.to_thread(self.generate, [r for r, _ in batch])
            except Exception as e:  # noqa: BLE001 - one failed batch fails its requests, not the run
                err = CallError("internal", f"generation failed: {type(e).__name__}: {e}")
                for _, fut in batch:
                    if not fut.done():
                        fut.set_exception(err)
                continue
            for (_, fut), out in zip(batch, outs):
                if not fut.done():
                    fut.set_result(out)

    def render(self, req: ChatRequest) -> str:
        """The prompt text: the chat template over the messages (the schema asked for in the last)."""
        from okgen.models.base import apply_chat_template

        msgs = [dict(m) for m in req.messages]
        if req.schema is not None:
            msgs[-1]["content"] = schema_prompt(msgs[-1].get("content") or "", req.schema)
        return apply_chat_template(self.tokenizer, msgs)

    def generate(self, reqs: list[ChatRequest]) -> list[dict[str, Any]]:
        """Generate one batch (same decoding) and answer in the shape of OpenAI chat completions."""
        torch, tok, r0 = self.torch, self.tokenizer, reqs[0]
        enc = tok([self.render(r) for r in reqs], return_tensors="pt", padding=True, add_special_tokens=False)
        enc = {k: enc[k].to(self.device) for k in ("input_ids", "attention_mask")}
        gen: dict[str, Any] = {"max_new_tokens": r0.max_tokens or DEFAULT_MAX_NEW_TOKENS, "pad_token_id": tok.pad_token_id}
        if r0.temperature > 0:
            gen.update(do_sample=True, temperature=r0.temperature, top_p=r0.top_p)
            torch.manual_seed(r0.seed if r0.seed is not None else 0)
        else:
            gen.update(do_sample=False, temperature=None, top_p=None, top_k=None)
        if r0.stop:
            gen.update(stop_strings=list(r0.stop), tokenizer=tok)
        with torch.inference_mode():
            out = self.lm.generate(**enc, **gen)
        width = enc["input_ids"].shape[1]
        eos = set(_as_list(self.lm.generation_config.eos_token_id) or _as_list(tok.eos_token_id))
        replies = []
        for i in range(len(reqs)):
            new = out[i, width:].tolist()
            ended = next((j for j, t in enumerate(new) if t in eos), None)
            ids = new if ended is None else new[:ended]
            while ids and ids[-1] == tok.pad_token_id and tok.pad_token_id not in eos:
                ids.pop()
            text = tok.decode(ids, skip_special_tokens=True)
            cut = ended is None and len(new) >= gen["max_new_tokens"]
            replies.append({
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                             "finish_reason": "length" if cut else "stop"}],
                "usage": {"prompt_tokens": int(enc["attention_mask"][i].sum()),
                          "completion_tokens": len(ids) + (0 if ended is None else 1)},
            })
        return replies


def _decoding(r: ChatRequest) -> tuple[Any, ...]:
    return (r.temperature, r.top_p, r.max_tokens, r.seed, r.stop)


def _as_list(x: Any) -> list[int]:
    if x is None:
        return []
    return list(x) if isinstance(x, list | tuple) else [int(x)]
