"""``vllm``: vLLM's offline ``LLM`` on one or more GPUs (an optional extra, imported only here).

Spec: ``vllm/MODEL[,key=value...]``. okgen's own options: ``chat`` (auto|yes|no),
``add_bos`` (unset: as the tokenizer adds special tokens, like lm-evaluation-harness), ``top_logprobs`` (20: alternatives read for single-pass letter scoring),
``data_parallel_size`` (1), ``truncation`` (left: a sequence longer than the engine's
``max_model_len`` loses its first tokens as lm-evaluation-harness's ``vllm`` model cuts it;
context: okgen's rule, the article's end). Every other option is passed to ``vllm.LLM`` as an engine argument,
unchanged: ``tensor_parallel_size``, ``pipeline_parallel_size``, ``dtype``,
``gpu_memory_utilization``, ``max_model_len``, ``quantization``, ``enforce_eager``,
``max_num_seqs``, ``distributed_executor_backend`` (``ray`` for multi-node), ``revision``,
``trust_remote_code``... okgen sets ``enable_prefix_caching=True``, ``seed=0`` and
``max_logprobs`` unless given.

* ``letter_logprobs``: one request per question with ``max_tokens=1`` and ``logprobs=N``;
  each single-token letter is read from the first token's top-N log-probabilities (prefix
  caching applies). A question none of whose letters is in the top N is re-scored through
  prompt log-probabilities of ``context + letter``; multi-token letters go through ``loglik``.
* ``loglik``: ``prompt_logprobs`` of ``context + continuation`` (lm-evaluation-harness's
  method; vLLM recomputes instead of reading the prefix cache for these requests).
* ``generate``: greedy (or seeded sampling) ``SamplingParams``.

Requests of one group (the oracle article) are sent next to each other so the article's KV
blocks are computed once and reused by prefix caching. ``data_parallel_size > 1`` starts one
engine process per rank, as vLLM's offline data-parallel example does (``VLLM_DP_*``
variables), and gives each rank a contiguous block of the group-ordered requests (so an
article's questions share one rank's prefix cache); tensor and pipeline parallelism are
vLLM's own, inside each rank.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from typing import Any

from okgen.errors import ConfigError, OkgenError
from okgen.models.base import (
    NEG_INF,
    Backend,
    Generated,
    LocalTokenizerMixin,
    ModelSpec,
    Prompt,
    Scored,
    group_order,
    resolve_chat,
    resolve_truncation,
)
from okgen.registry import require

log = logging.getLogger(__name__)

OKGEN_OPTIONS = {"chat", "add_bos", "top_logprobs", "data_parallel_size", "truncation"}


def _convert(out: Any) -> dict[str, Any]:
    """A vLLM ``RequestOutput`` as plain data (picklable across data-parallel ranks)."""
    c = out.outputs[0]
    lps = None
    if c.logprobs:
        lps = [{int(t): float(v.logprob) for t, v in step.items()} for step in c.logprobs]
    plps = None
    if getattr(out, "prompt_logprobs", None):
        plps = [None if step is None else {int(t): float(v.logprob) for t, v in step.items()} for step in out.prompt_logprobs]
    return {"text": c.text or "", "n_out": len(c.token_ids), "finish_reason": c.finish_reason,
            "logprobs": lps, "prompt_logprobs": plps}


def _generate(llm: Any, prompts: list[list[int]], params: list[dict[str, Any]]) -> list[dict[str, Any]]:
    from vllm import SamplingParams

    sps = [SamplingParams(**p) for p in params]
    outs = llm.generate([{"prompt_token_ids": ids} for ids in prompts], sps, use_tqdm=False)
    return [_convert(o) for o in outs]


def _dp_worker(rank: int, size: int, port: int, model: str, engine: dict[str, Any], inq: Any, outq: Any) -> None:
    """One data-parallel rank: vLLM's documented offline DP environment, then a job loop."""
    os.environ["VLLM_DP_RANK"] = os.environ["VLLM_DP_RANK_LOCAL"] = str(rank)
    os.environ["VLLM_DP_SIZE"] = str(size)
    os.environ["VLLM_DP_MASTER_IP"] = "127.0.0.1"
    os.environ["VLLM_DP_MASTER_PORT"] = str(port)
    try:
        from vllm import LLM

        llm = LLM(model=model, **engine)
        outq.put((rank, "ready", None))
    except Exception as e:  # reported to the parent as one line
        outq.put((rank, "error", f"{type(e).__name__}: {e}"))
        return
    while True:
        job = inq.get()
        if job is None:
            break
        try:
            outq.put((rank, "ok", _generate(llm, *job)))
        except Exception as e:
            outq.put((rank, "error", f"{type(e).__name__}: {e}"))


def dp_shards(n: int, size: int) -> list[list[int]]:
    """Request indices per data-parallel rank: contiguous, near-equal blocks.

    Contiguous (not dealt in turn) because requests arrive ordered by group: the questions of
    one article then mostly land on one rank, whose prefix cache computes the article once.
    """
    base, extra = divmod(n, size)
    out, start = [], 0
    for r in range(size):
        end = start + base + (1 if r < extra else 0)
        out.append(list(range(start, end)))
        start = end
    return out


class _DPPool:
    """Persistent engine processes, one per data-parallel rank."""

    #: How often a wait for the ranks checks that their processes are still alive.
    poll_seconds = 5.0

    def __init__(self, model: str, engine: dict[str, Any], size: int):
        import multiprocessing as mp
        import socket

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        ctx = mp.get_context("spawn")
        self.size = size
        self.outq = ctx.Queue()
        self.inqs = [ctx.Queue() for _ in range(size)]
        self.procs = [ctx.Process(target=_dp_worker, args=(r, size, port, model, engine, self.inqs[r], self.outq),
                                  daemon=True) for r in range(size)]
        for p in self.procs:
            p.start()
        started = self._collect()
        failed = [(rank, msg) for rank, (status, msg) in sorted(started.items()) if status != "ready"]
        if failed:
            self.close()
            raise OkgenError(f"vLLM data-parallel rank {failed[0][0]} failed to start: {failed[0][1]}")

    def _collect(self) -> dict[int, tuple[str, Any]]:
        """One message from every rank; a rank that died without a word is an error, not a hang."""
        import queue

        got: dict[int, tuple[str, Any]] = {}
        while len(got) < self.size:
            try:
                rank, status, msg = self.outq.get(timeout=self.poll_seconds)
                got[rank] = (status, msg)
            except queue.Empty:
                for r, p in enumerate(self.procs):
                    if r not in got and not p.is_alive():
                        got[r] = ("error", f"the engine process exited (code {p.exitcode})")
        return got

    def run(self, prompts: list[list[int]], params: list[dict[str, Any]]) -> list[dict[str, Any]]:
        shards = dp_shards(len(prompts), self.size)
        for r, idx in enumerate(shards):
            if idx:
                self.inqs[r].put(([prompts[i] for i in idx], [params[i] for i in idx]))
            else:  # every DP rank must step together: an idle rank gets a placeholder
                self.inqs[r].put(([prompts[0]], [{"max_tokens": 1, "temperature": 0.0}]))
        # Every rank's answer is read before failing, so none is left queued for the next call.
        got = self._collect()
        failed = [(rank, res) for rank, (status, res) in sorted(got.items()) if status != "ok"]
        if failed:
            raise OkgenError(f"vLLM data-parallel rank {failed[0][0]} failed: {failed[0][1]}")
        out: list[Any] = [None] * len(prompts)
        for rank, (_, res) in got.items():
            for i, r in zip(shards[rank], res):
                out[i] = r
        return out

    def close(self) -> None:
        for q in self.inqs:
            q.put(None)
        for p in self.procs:
            p.join(timeout=30)
            if p.is_alive():
                p.kill()


class VLLMBackend(LocalTokenizerMixin, Backend):
    """vLLM offline inference."""

    name = "vllm"

    def __init__(self, spec: ModelSpec, workspace: Any = None):
        super().__init__(spec, workspace)
        vllm = require("vllm", "vllm", "the vllm backend")
        transformers = require("transformers", "hf", "the vllm backend's tokenizer")
        o = dict(spec.options)
        self.chat_option = o.pop("chat", "auto")
        add_bos = o.pop("add_bos", None)
        self.add_bos = None if add_bos is None else bool(add_bos)
        self.truncation = resolve_truncation(o.pop("truncation", None))
        self.top_logprobs = spec.int_opt("top_logprobs", 20)
        dp = max(1, spec.int_opt("data_parallel_size", 1))
        o.pop("top_logprobs", None)
        o.pop("data_parallel_size", None)
        engine = dict(o)
        engine.setdefault("enable_prefix_caching", True)
        engine.setdefault("seed", 0)
        engine.setdefault("max_logprobs", max(20, self.top_logprobs))
        self.engine_args = engine
        self.data_parallel_size = dp
        self.vllm_version = getattr(vllm, "__version__", "?")
        self.llm = None
        self.pool = None
        self._max_len: int | None = None
        try:
            if dp > 1:
                self.pool = _DPPool(spec.model, engine, dp)
            else:
                self.llm = vllm.LLM(model=spec.model, **engine)
        except TypeError as e:
            raise ConfigError(f"vLLM rejected an engine option: {e}") from None
        if self.llm is not None:
            self.tokenizer = self.llm.get_tokenizer()
        else:
            self.tokenizer = transformers.AutoTokenizer.from_pretrained(
                spec.model, revision=engine.get("revision"), trust_remote_code=bool(engine.get("trust_remote_code")))
        self.chat = resolve_chat(self.chat_option, self.tokenizer, spec.model)
        self.counters = {"requests": 0, "single_pass": 0, "prompt_logprob_fallback": 0, "multi_token_fallback": 0}

    @property
    def max_length(self) -> int | None:
        """The engine's ``max_model_len`` (read once: the truncation rule asks for every question)."""
        if self._max_len is None:
            if self.llm is not None:
                self._max_len = int(self.llm.llm_engine.model_config.max_model_len)
            elif self.engine_args.get("max_model_len"):
                self._max_len = int(self.engine_args["max_model_len"])
            else:
                from transformers import AutoConfig

                cfg = AutoConfig.from_pretrained(self.spec.model, revision=self.engine_args.get("revision"),
                                                 trust_remote_code=bool(self.engine_args.get("trust_remote_code")))
                self._max_len = getattr(cfg, "max_position_embeddings", None)
        return self._max_len

    def _run(self, prompts: list[list[int]], params: list[dict[str, Any]], groups: Sequence[str | None]) -> list[dict[str, Any]]:
        # Group members go next to each other so prefix caching finds the shared article.
        order = group_order(groups)
        ps, pr = [prompts[i] for i in order], [params[i] for i in order]
        self.counters["requests"] += len(ps)
        got = self.pool.run(ps, pr) if self.pool is not None else _generate(self.llm, ps, pr)
        out: list[Any] = [None] * len(prompts)
        for i, r in zip(order, got):
            out[i] = r
        return out

    # -- scoring ----------------------------------------------------------------------
    def letter_logprobs(self, prompts: Sequence[Prompt], labels: Sequence[Sequence[str]]) -> list[Scored]:
        """Single pass over the top-N next-token log-probabilities where letters are single tokens."""
        res: list[Scored | None] = [None] * len(prompts)
        single, ids, params, groups, label_ids, single_cut = [], [], [], [], [], []
        multi: list[int] = []
        for i, (p, labs) in enumerate(zip(prompts, labels)):
            ctx_text, conts = self.label_continuations(p, labs)
            pairs = self.encode_pairs(ctx_text, conts)
            ctx = pairs[0][0]
            if all(len(c) == 1 and cx == ctx for cx, c in pairs):
                single.append(i)
                # lm-eval reads (context + letter)[-(max_length - 1):]: the context's last max_length - 2 tokens
                ids.append(self._left(ctx, 2))
                single_cut.append(len(ids[-1]) < len(ctx))
                label_ids.append([c[0] for _, c in pairs])
                groups.append(p.group)
                params.append({"max_tokens": 1, "temperature": 0.0, "logprobs": self.top_logprobs, "detokenize": False})
            else:
                multi.append(i)
        fallback: list[int] = []
        for i, lids, out, ctx, was_cut in zip(single, label_ids, self._run(ids, params, groups) if ids else [], ids,
                                              single_cut):
            top = (out["logprobs"] or [{}])[0]
            scores = tuple(top.get(t, NEG_INF) for t in lids)
            if all(s == NEG_INF for s in scores):
                fallback.append(i)
                continue
            self.counters["single_pass"] += 1
            res[i] = Scored(scores=scores, lengths=tuple(len(x) + 1 for x in labels[i]), prompt_tokens=len(ctx),
                            single_pass=True, truncated=was_cut)
        self.counters["prompt_logprob_fallback"] += len(fallback)
        self.counters["multi_token_fallback"] += len(multi)
        rest = sorted(fallback + multi)
        if rest:
            conts = [self.label_continuations(prompts[i], labels[i])[1] for i in rest]
            for i, sc in zip(rest, self.loglik([prompts[i] for i in rest], conts)):
                sc.lengths = tuple(len(x) + 1 for x in labels[i])
                res[i] = sc
        return [r or Scored(error="not scored") for r in res]

    def loglik(self, prompts: Sequence[Prompt], continuations: Sequence[Sequence[str]]) -> list[Scored]:
        """Continuation log-likelihoods from prompt log-probabilities."""
        ids, params, groups, spans, ctx_len, cut = [], [], [], [], [], []
        for p, conts in zip(prompts, continuations):
            ctx_text = self.render(p)
            for cx, ct in self.encode_pairs(ctx_text, [self.continuation(c) for c in conts]):
                # lm-eval: inp = (context + continuation)[-(max_length - 1):]
                seq = self._left(cx + ct, 1)
                ids.append(seq)
                cut.append(len(seq) < len(cx) + len(ct))
                spans.append((len(seq) - len(ct), len(seq)))
                groups.append(p.group)
                params.append({"max_tokens": 1, "temperature": 0.0, "prompt_logprobs": 1, "detokenize": False})
            ctx_len.append(len(cx) if conts else 0)
        outs = self._run(ids, params, groups) if ids else []
        res, k = [], 0
        for n_ctx, conts in zip(ctx_len, continuations):
            scores, was_cut = [], any(cut[k:k + len(conts)])
            for _ in conts:
                seq, (a, b), out = ids[k], spans[k], outs[k]
                plps = out["prompt_logprobs"] or []
                scores.append(sum(plps[j][seq[j]] for j in range(a, b)) if len(plps) >= b else NEG_INF)
                k += 1
            res.append(Scored(scores=tuple(scores), lengths=tuple(len(c) for c in conts), prompt_tokens=n_ctx,
                              truncated=was_cut))
        return res

    def generate(self, prompts: Sequence[Prompt], *, max_tokens: int, temperature: float = 0.0,
                 seed: int = 0, stop: Sequence[str] = ()) -> list[Generated]:
        """Greedy (or seeded) generation."""
        full = [self.encode(self.render(p, with_prefix=not self.chat)) for p in prompts]
        # lm-eval's generate_until keeps the last max_length - max_gen_toks tokens of the context
        ids = [self._left(x, max(1, int(max_tokens))) for x in full]
        params = [{"max_tokens": max(1, int(max_tokens)), "temperature": float(temperature), "seed": int(seed),
                   "stop": list(stop) or None} for _ in prompts]
        outs = self._run(ids, params, [p.group for p in prompts]) if ids else []
        return [Generated(text=o["text"], prompt_tokens=len(x), completion_tokens=o["n_out"],
                          finish_reason=o["finish_reason"], truncated=len(x) < len(f))
                for x, f, o in zip(ids, full, outs)]

    def _cuts(self) -> bool:
        return self.truncation == "left" and bool(self.max_length)

    def _left(self, ids: list[int], reserve: int) -> list[int]:
        """With ``truncation=left``, the last ``max_length - reserve`` tokens (lm-eval's cut)."""
        if not self._cuts():
            return ids
        room = max(1, int(self.max_length or 0) - reserve)
        return ids[-room:] if len(ids) > room else ids

    # -- identity ---------------------------------------------------------------------
    def info(self) -> dict[str, Any]:
        """vLLM version, engine arguments and GPUs."""
        gpu = None
        try:
            import torch

            if torch.cuda.is_available():
                gpu = f"{torch.cuda.device_count()} x {torch.cuda.get_device_name(0)}"
        except ImportError:  # pragma: no cover - vllm depends on torch
            pass
        return {"backend": self.name, "model": self.spec.model, "vllm": self.vllm_version, "gpu": gpu,
                "engine_args": {k: v for k, v in sorted(self.engine_args.items())},
                "data_parallel_size": self.data_parallel_size, "chat_template": self.chat,
                "truncation": self.truncation,
                "conventions": self.conventions()}

    def usage(self) -> dict[str, int]:
        """Requests and scoring paths taken."""
        return dict(self.counters)

    def close(self) -> None:
        """Stop data-parallel workers and drop the engine."""
        if self.pool is not None:
            self.pool.close()
            self.pool = None
        self.llm = None
