"""``hf``: Hugging Face transformers on CPU or GPU, batched.

Spec: ``hf/MODEL[,key=value...]`` where MODEL is a hub id or a local folder. Options:

``device`` (auto|cpu|cuda|cuda:N), ``dtype`` (auto|float32|bfloat16|float16),
``batch_size`` (8), ``max_length`` (tokens; default from the model config),
``chat`` (auto|yes|no: use the tokenizer's chat template as lm-evaluation-harness's
``--apply_chat_template`` renders it; auto = when it has one; no = plain prompts),
``add_bos`` (unset: special tokens as the tokenizer adds them, like lm-evaluation-harness;
yes|no forces them on or off),
``prefix_cache`` (yes: prompts sharing a group prefix run it once and reuse its KV cache; the
other prompts of a call do the same with the start they all share, at least ``min_prefix`` tokens),
``truncation`` (left: a sequence longer than ``max_length`` loses its first tokens, exactly as
lm-evaluation-harness's ``HFLM`` cuts it; context: okgen's rule, the article or passages are cut
from their end before tokenising), ``revision``, ``trust_remote_code`` (no), ``max_batch_tokens``
(65536: padded tokens per forward), ``max_padding`` (the largest share of a batch's tokens that
may be padding, for whole prompts and shared article prefixes: 0.1 on a CPU, where a padded batch
of unequal prompts costs more than running them apart; 1 on any other device, where batching
wins), ``min_prefix`` (16: shortest shared prefix worth caching).
Sampling is seeded by ``okgen eval --seed``.

Scoring follows lm-evaluation-harness (context/continuation split, summed log-probabilities)
with two speed-ups: choice letters are read from **one** next-token distribution when every
letter is a single token, and prompts of one group (the oracle article) compute their common
token prefix once and run their suffixes against its cache (prompts outside a group, with the start
they all share). Sequences are left-padded with
explicit position ids, and only the logits that are needed are computed (``logits_to_keep``).
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from okgen.errors import ConfigError
from okgen.models.base import (
    NEG_INF,
    Backend,
    Generated,
    LocalTokenizerMixin,
    ModelSpec,
    Prompt,
    Scored,
    common_prefix_len,
    resolve_chat,
    resolve_truncation,
)
from okgen.registry import require

log = logging.getLogger(__name__)

OPTIONS = {"device", "dtype", "batch_size", "max_length", "chat", "add_bos", "prefix_cache", "revision",
           "trust_remote_code", "max_batch_tokens", "max_padding", "min_prefix", "truncation"}
_HUGE = 10**7
_DEFAULT_MAX_LENGTH = 2048  # lm-evaluation-harness's, for a model whose config names no length


@dataclass
class _Seq:
    """One token sequence to score: the last ``cont_len`` tokens' log-probs, and/or the
    next-token log-probs of ``next_ids`` after the last token."""

    ids: list[int]
    cont_len: int = 0
    next_ids: tuple[int, ...] = ()
    group: str | None = None
    truncated: bool = False

    @property
    def fed(self) -> int:
        """Tokens the model reads: all when the next-token distribution is wanted, else all but the
        last (its log-prob comes from the position before it), as lm-eval feeds ``inp[:-1]``."""
        return len(self.ids) if self.next_ids else len(self.ids) - 1


@dataclass
class _Out:
    cont_logprob: float = 0.0
    next_logprobs: tuple[float, ...] = ()
    error: str | None = None


class HFBackend(LocalTokenizerMixin, Backend):
    """A transformers causal LM."""

    name = "hf"

    def __init__(self, spec: ModelSpec, workspace: Any = None):
        super().__init__(spec, workspace)
        spec.check_options(OPTIONS)
        o = spec.options
        self.batch_size = max(1, spec.int_opt("batch_size", 8))
        self.max_batch_tokens = spec.int_opt("max_batch_tokens", 65536)
        self.min_prefix = spec.int_opt("min_prefix", 16)
        self.prefix_cache = bool(o.get("prefix_cache", True))
        self.add_bos = None if o.get("add_bos") is None else bool(o.get("add_bos"))
        max_padding = spec.float_opt("max_padding")  # checked before the model loads
        if max_padding is not None and not 0 <= max_padding <= 1:
            raise ConfigError(f"max_padding must be a share between 0 and 1, not {max_padding}")
        self.truncation = resolve_truncation(o.get("truncation"))
        self.torch, self.device, self.tokenizer, self.model = load_causal_lm(
            spec.model, device=o.get("device", "auto"), dtype=o.get("dtype", "auto"), revision=o.get("revision"),
            trust_remote_code=o.get("trust_remote_code", False))
        self.max_padding = max_padding if max_padding is not None else 0.1 if self.device.type == "cpu" else 1.0
        self.chat = resolve_chat(o.get("chat", "auto"), self.tokenizer, spec.model)
        self.pad_id = _first_id(self.tokenizer.pad_token_id, self.tokenizer.eos_token_id, 0)
        self._max_len = spec.int_opt("max_length") if o.get("max_length") else _model_max_length(self.model, self.tokenizer)
        # Length is enforced by the truncation rule; the tokenizer's own warning would only be noise.
        self.tokenizer.model_max_length = _HUGE
        import inspect

        self._keep_arg = "logits_to_keep" in inspect.signature(self.model.forward).parameters
        self.counters = {"forward_passes": 0, "tokens_processed": 0, "prefix_groups": 0,
                         "prefix_tokens_reused": 0, "single_pass": 0, "multi_token_fallback": 0}

    @property
    def max_length(self) -> int | None:
        """Most tokens the model takes."""
        return self._max_len

    # -- scoring ----------------------------------------------------------------------
    def letter_logprobs(self, prompts: Sequence[Prompt], labels: Sequence[Sequence[str]]) -> list[Scored]:
        """One forward pass per prompt when every label is one token; else each label is scored."""
        seqs: list[_Seq] = []
        plan: list[tuple[str, list[int], int]] = []  # (kind, seq indices, prompt tokens)
        for i, (p, labs) in enumerate(zip(prompts, labels)):
            ctx_text, conts = self.label_continuations(p, labs)
            pairs = self.encode_pairs(ctx_text, conts)
            ctx = pairs[0][0]
            shared = _shared_head(pairs)
            if shared is not None:
                # Every label is (common tokens, e.g. the "\n" a chat template ends with) + one token:
                # one sequence gives the common part's log-prob and the next-token distribution.
                seqs.append(self._seq(ctx + shared, len(shared), tuple(c[-1] for _, c in pairs), p.group))
                plan.append(("single", [len(seqs) - 1], len(ctx)))
                self.counters["single_pass"] += 1
            else:
                start = len(seqs)
                seqs.extend(self._seq(cx + c, len(c), (), _group(p, i)) for cx, c in pairs)
                plan.append(("multi", list(range(start, len(seqs))), len(ctx)))
                self.counters["multi_token_fallback"] += 1
        outs = self._score(seqs)
        res = []
        for (kind, idx, ntok), labs in zip(plan, labels):
            if kind == "single":
                o = outs[idx[0]]
                scores = tuple(o.cont_logprob + x for x in o.next_logprobs)
            else:
                scores = tuple(outs[i].cont_logprob for i in idx)
            res.append(Scored(scores=tuple(scores), lengths=tuple(len(x) + 1 for x in labs),
                              prompt_tokens=self._seen(ntok), single_pass=kind == "single",
                              error=next((outs[i].error for i in idx if outs[i].error), None),
                              truncated=any(seqs[i].truncated for i in idx)))
        return res

    def loglik(self, prompts: Sequence[Prompt], continuations: Sequence[Sequence[str]]) -> list[Scored]:
        """Summed log-probability of each continuation, one sequence per (prompt, continuation)."""
        seqs: list[_Seq] = []
        plan = []
        for pi, (p, conts) in enumerate(zip(prompts, continuations)):
            ctx_text = self.render(p)
            start = len(seqs)
            ntok = 0
            for cx, ct in self.encode_pairs(ctx_text, [self.continuation(c) for c in conts]):
                ntok = len(cx)
                seqs.append(self._seq(cx + ct, len(ct), (), _group(p, pi)))
            plan.append((list(range(start, len(seqs))), ntok))
        outs = self._score(seqs)
        return [Scored(scores=tuple(outs[i].cont_logprob for i in idx), lengths=tuple(len(c) for c in conts),
                       prompt_tokens=self._seen(ntok), error=next((outs[i].error for i in idx if outs[i].error), None),
                       truncated=any(seqs[i].truncated for i in idx))
                for (idx, ntok), conts in zip(plan, continuations)]

    def _seq(self, ids: list[int], cont_len: int, next_ids: tuple[int, ...] = (), group: str | None = None) -> _Seq:
        """A sequence to score; with ``truncation=left``, cut as lm-eval's ``HFLM`` cuts it: the model
        reads ``(context + continuation)[-(max_length + 1):][:-1]``, so a sequence whose fed part is
        longer than ``max_length`` loses its first tokens (BOS and chat header included)."""
        s = _Seq(ids, cont_len, tuple(next_ids), group)
        limit = self._max_len
        if self.truncation == "left" and limit and s.fed > limit:
            s.ids = ids[len(ids) - (limit + (0 if next_ids else 1)):]
            s.truncated = True
        return s

    def _seen(self, ntok: int) -> int:
        """Prompt tokens the model read (at most ``max_length`` after a left cut)."""
        return min(ntok, self._max_len) if self.truncation == "left" and self._max_len else ntok

    def _score(self, seqs: list[_Seq]) -> list[_Out]:
        outs: list[_Out | None] = [None] * len(seqs)
        groups: dict[str, list[int]] = {}
        plain: list[int] = []
        for i, s in enumerate(seqs):
            if s.cont_len > s.fed or s.fed < 1:
                # lm-eval refuses a continuation longer than the model's context: so does okgen, per question
                outs[i] = _Out(error="the answer alone exceeds the model's context length")
            elif s.group is not None and self.prefix_cache:
                groups.setdefault(s.group, []).append(i)
            else:
                plain.append(i)
        with self.torch.inference_mode():
            shared: list[tuple[list[int], int]] = []
            for idx in groups.values():
                # The shared prefix stops before the first token whose log-prob is needed.
                cut = min(seqs[i].fed - max(1, seqs[i].cont_len) for i in idx)
                p = min(common_prefix_len([seqs[i].ids for i in idx]), cut)
                if len(idx) < 2 or p < self.min_prefix:
                    plain.extend(idx)
                else:
                    shared.append((idx, p))
            if self.prefix_cache and len(plain) > 1:
                # What every other prompt starts with (a chat template's system turn, the
                # instruction) is read once too, in a forward of its own (not padded to an article).
                cut = min(seqs[i].fed - max(1, seqs[i].cont_len) for i in plain)
                if (p := min(common_prefix_len([seqs[i].ids for i in plain]), cut)) >= self.min_prefix:
                    self._run_prefixed(seqs, [(plain, p)], outs)
                    plain = []
            # Several groups' prefixes run in one batched forward, their members in another.
            batch: list[tuple[list[int], int]] = []
            for g in sorted(shared, key=lambda g: -g[1]):
                if batch and (len(batch) >= self.batch_size or
                              (len(batch) + 1) * max(batch[0][1], g[1]) > self.max_batch_tokens
                              or self._too_padded([p for _, p in batch] + [g[1]])):
                    self._run_prefixed(seqs, batch, outs)
                    batch = []
                batch.append(g)
            if batch:
                self._run_prefixed(seqs, batch, outs)
            plain.sort(key=lambda i: -seqs[i].fed)
            for b in self._batches(plain, seqs, 0):
                self._run(seqs, b, outs)
        return [o if o is not None else _Out() for o in outs]

    def _too_padded(self, lengths: list[int]) -> bool:
        """Whether a batch of sequences of these lengths, left-padded to the longest, would be
        more than ``max_padding`` padding."""
        width = max(lengths) * len(lengths)
        return width - sum(lengths) > self.max_padding * width

    def _batches(self, idx: list[int], seqs: list[_Seq], offset: int):
        batch: list[int] = []
        for i in idx:
            longest = max([seqs[j].fed - offset for j in batch] + [seqs[i].fed - offset])
            if batch and (len(batch) >= self.batch_size or longest * (len(batch) + 1) > self.max_batch_tokens
                          or self._too_padded([seqs[j].fed - offset for j in batch + [i]])):
                yield batch
                batch = []
            batch.append(i)
        if batch:
            yield batch

    def _forward(self, ids: list[list[int]], keep: int, prefix_mask: Any = None, cache: Any = None):
        """Left-padded forward of token lists, optionally after cached prefixes (their attention
        mask given); log-probs of the last ``keep`` positions."""
        torch = self.torch
        width = max(len(x) for x in ids)
        inp = torch.full((len(ids), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(ids), width), dtype=torch.long)
        for r, x in enumerate(ids):
            inp[r, width - len(x):] = torch.tensor(x, dtype=torch.long)
            mask[r, width - len(x):] = 1
        pos = (mask.cumsum(-1) - 1).clamp(min=0)
        if prefix_mask is not None:
            pos = pos + prefix_mask.sum(-1, keepdim=True)
            mask = torch.cat([prefix_mask, mask], dim=1)
        kw: dict[str, Any] = {"attention_mask": mask.to(self.device), "position_ids": pos.to(self.device),
                              "use_cache": cache is not None}
        if cache is not None:
            kw["past_key_values"] = cache
        if self._keep_arg:
            kw["logits_to_keep"] = keep
        out = self.model(input_ids=inp.to(self.device), **kw)
        self.counters["forward_passes"] += 1
        self.counters["tokens_processed"] += int(sum(len(x) for x in ids))
        logits = out.logits[:, -keep:, :].float()
        return torch.log_softmax(logits, dim=-1), out, mask

    def _run(self, seqs: list[_Seq], batch: list[int], outs: list) -> None:
        logp, _, _ = self._forward([seqs[i].ids[:seqs[i].fed] for i in batch], _needed(seqs, batch))
        for r, i in enumerate(batch):
            outs[i] = self._read(seqs[i], logp[r], None, 0)

    def _run_prefixed(self, seqs: list[_Seq], groups: list[tuple[list[int], int]], outs: list) -> None:
        """Run each group's prefix once (all groups in one batch), then every member's suffix
        against its group's KV cache, rows gathered from the batched cache."""
        torch = self.torch
        first, pout, pmask = self._forward([seqs[idx[0]].ids[:p] for idx, p in groups], 1, cache=_new_cache(self.model))
        cache = pout.past_key_values
        self.counters["prefix_groups"] += len(groups)
        self.counters["prefix_tokens_reused"] += sum(p * (len(idx) - 1) for idx, p in groups)
        members = [(g, i) for g, (idx, _) in enumerate(groups) for i in idx]
        members.sort(key=lambda m: -(seqs[m[1]].fed - groups[m[0]][1]))
        # Short suffixes take more rows per forward (up to 4x the batch size), but a forward never
        # computes more tokens than a batch of whole sequences would (a long retrieval prompt after a
        # short shared start), nor attends over more than max_batch_tokens, the cached prefix counted.
        step, width = 4 * self.batch_size, int(pmask.shape[1])
        chunks: list[list[tuple[int, int]]] = [[]]
        for m in members:
            lens = [seqs[i].fed - groups[g][1] for g, i in chunks[-1] + [m]]
            if chunks[-1] and (len(lens) > step or lens[0] * len(lens) > self.batch_size * (width + lens[0])
                               or (width + lens[0]) * len(lens) > self.max_batch_tokens or self._too_padded(lens)):
                chunks.append([])
            chunks[-1].append(m)
        for chunk in chunks:
            rows = torch.tensor([g for g, _ in chunk], dtype=torch.long)
            c = copy.deepcopy(cache)
            c.batch_select_indices(rows.to(self.device))
            suffixes = [seqs[i].ids[groups[g][1]:seqs[i].fed] for g, i in chunk]
            logp, _, _ = self._forward(suffixes, _needed(seqs, [i for _, i in chunk]), prefix_mask=pmask[rows], cache=c)
            for r, (g, i) in enumerate(chunk):
                outs[i] = self._read(seqs[i], logp[r], first[g, -1], groups[g][1])

    def _read(self, s: _Seq, logp: Any, prefix_last: Any, offset: int) -> _Out:
        """Pick the needed log-probs from one row: the model read ``s.ids[offset:s.fed]`` (after a
        cached prefix of ``offset`` tokens, whose last position's log-probs are ``prefix_last``)."""
        # The model returns fewer positions than asked when the batch is shorter than that (a
        # suffix that is only the continuation, after a cached prefix): count the rows it gave.
        keep = int(logp.shape[0])
        n = s.fed - offset
        total = 0.0
        for j in range(len(s.ids) - s.cont_len, len(s.ids)):  # token j is predicted at position j - 1
            p = j - 1 - offset
            row = prefix_last if p < 0 else logp[keep - n + p]
            total += float(row[s.ids[j]])
        nxt = tuple(float(logp[keep - 1, t]) for t in s.next_ids)
        return _Out(cont_logprob=total if s.cont_len else 0.0, next_logprobs=nxt)

    # -- generation -------------------------------------------------------------------
    def generate(self, prompts: Sequence[Prompt], *, max_tokens: int, temperature: float = 0.0,
                 seed: int = 0, stop: Sequence[str] = ()) -> list[Generated]:
        """Batched generation, greedy unless ``temperature`` > 0 (seeded)."""
        torch = self.torch
        transformers = require("transformers", "hf")
        # In chat mode the model writes its reply from scratch; plain prompts end with the prefix.
        enc = [self.encode(self.render(p, with_prefix=not self.chat)) for p in prompts]
        cut = [False] * len(enc)
        if self.truncation == "left" and self._max_len:
            # lm-eval's generate_until keeps the last max_length - max_gen_toks tokens of the context
            room = self._max_len - max(1, int(max_tokens))
            if room < 1:
                why = f"max_tokens {max_tokens} leaves no room for a prompt in {self._max_len} tokens"
                return [Generated(error=why) for _ in prompts]
            for i, e in enumerate(enc):
                if len(e) > room:
                    enc[i], cut[i] = e[-room:], True
        order = sorted(range(len(enc)), key=lambda i: -len(enc[i]))
        eos = self.model.generation_config.eos_token_id
        if eos is None:
            eos = self.tokenizer.eos_token_id
        cfg = transformers.GenerationConfig(
            max_new_tokens=max(1, int(max_tokens)), do_sample=temperature > 0,
            temperature=temperature if temperature > 0 else 1.0, top_p=1.0, top_k=0 if temperature > 0 else 50,
            pad_token_id=self.pad_id, eos_token_id=eos, bos_token_id=self.model.generation_config.bos_token_id)
        eos_set = set(eos if isinstance(eos, list) else [eos]) - {None}
        res: list[Generated | None] = [None] * len(enc)
        with torch.inference_mode():
            for start in range(0, len(order), self.batch_size):
                batch = order[start:start + self.batch_size]
                width = max(len(enc[i]) for i in batch)
                inp = torch.full((len(batch), width), self.pad_id, dtype=torch.long)
                mask = torch.zeros((len(batch), width), dtype=torch.long)
                for r, i in enumerate(batch):
                    inp[r, width - len(enc[i]):] = torch.tensor(enc[i], dtype=torch.long)
                    mask[r, width - len(enc[i]):] = 1
                torch.manual_seed(seed)
                out = self.model.generate(input_ids=inp.to(self.device), attention_mask=mask.to(self.device),
                                          generation_config=cfg)
                self.counters["forward_passes"] += 1
                self.counters["tokens_processed"] += int(mask.sum()) + int(out[:, width:].numel())
                for r, i in enumerate(batch):
                    new = out[r, width:].tolist()
                    finish = "length"
                    for k, t in enumerate(new):
                        if t in eos_set:
                            new, finish = new[:k + 1], "stop"
                            break
                    text = self.tokenizer.decode(new, skip_special_tokens=True)
                    for s in stop:
                        if s and s in text:
                            text, finish = text[:text.index(s)], "stop"
                    res[i] = Generated(text=text, prompt_tokens=len(enc[i]), completion_tokens=len(new),
                                       finish_reason=finish, truncated=cut[i])
        return [r or Generated(error="not run") for r in res]

    # -- identity ---------------------------------------------------------------------
    def info(self) -> dict[str, Any]:
        """Library versions, device, dtype and size."""
        import transformers

        return {
            "backend": self.name, "model": self.spec.model, "transformers": transformers.__version__,
            "torch": self.torch.__version__, "device": str(self.device), "dtype": str(self.model.dtype),
            "chat_template": self.chat, "parameters": int(sum(p.numel() for p in self.model.parameters())),
            "max_length": self._max_len, "truncation": self.truncation, "prefix_cache": self.prefix_cache,
            "conventions": self.conventions(),
        }

    def usage(self) -> dict[str, int]:
        """Forward passes, tokens processed and prefix reuse."""
        return dict(self.counters)

    def close(self) -> None:
        """Drop the model."""
        self.model = None
        if self.device.type == "cuda":
            self.torch.cuda.empty_cache()


def _group(p: Prompt, i: int) -> str:
    """The prefix group of a prompt's continuations: its own group (the oracle article), else the
    prompt itself, so its choices share one forward of the prompt."""
    return p.group if p.group is not None else f"\x00prompt-{i}"


def _shared_head(pairs: list[tuple[list[int], list[int]]]) -> list[int] | None:
    """The tokens every continuation starts with when each is those tokens plus exactly one more
    (and every context is the same); None otherwise."""
    ctx, first = pairs[0]
    head = first[:-1]
    if not first or any(cx != ctx or len(c) != len(first) or c[:-1] != head for cx, c in pairs):
        return None
    return head


def load_causal_lm(model: str, *, device: Any = "auto", dtype: Any = "auto", revision: str | None = None,
                   trust_remote_code: bool = False, gguf_file: str | None = None) -> tuple[Any, Any, Any, Any]:
    """(torch, device, tokenizer, model in eval mode on the device) of a hub id or local folder
    (``gguf_file``: a GGUF file inside it, loaded by transformers). Shared by the eval backend and
    :class:`okgen.llm.hf_chat.HFChat`.

    Raises:
        ConfigError: a bad device or dtype, or a model that cannot be loaded (one line).
        MissingExtraError: torch or transformers is not installed.
    """
    torch = require("torch", "hf", "the hf backend")
    transformers = require("transformers", "hf", "the hf backend")
    dev = _device(torch, str(device))
    kw = {"revision": revision, "trust_remote_code": bool(trust_remote_code), **({"gguf_file": str(gguf_file)} if gguf_file else {})}
    if model.startswith(("/", "./", "../", "~")):
        # A local path, not a hub id: say what is wrong, rather than the hub's "Repo id must be ...".
        local = Path(model).expanduser()
        if not local.is_dir():
            raise ConfigError(f"cannot load hf model {model!r}: " + ("not a folder" if local.exists() else "no such folder"))
        model = str(local)
    try:
        tok = transformers.AutoTokenizer.from_pretrained(model, **kw)
        lm = transformers.AutoModelForCausalLM.from_pretrained(model, dtype=_dtype(torch, str(dtype), dev), **kw)
    except (OSError, ValueError) as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ConfigError(f"cannot load hf model {model!r}: {first}") from None
    return torch, dev, tok, lm.to(dev).eval()


def _device(torch: Any, name: str) -> Any:
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise ConfigError("device=cuda but torch sees no CUDA GPU")
    return torch.device(name)


def _dtype(torch: Any, name: str, device: Any) -> Any:
    if name == "auto":
        # bf16 halves memory on GPUs; CPUs are faster and exact in float32.
        return "auto" if device.type == "cuda" else torch.float32
    try:
        return {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}[name]
    except KeyError:
        raise ConfigError(f"dtype must be auto, float32, float16 or bfloat16, got {name!r}") from None


def _first_id(*ids: Any) -> int:
    for i in ids:
        if isinstance(i, list):
            i = i[0] if i else None
        if i is not None:
            return int(i)
    return 0


def _model_max_length(model: Any, tokenizer: Any) -> int:
    """The context length as lm-evaluation-harness resolves it (``resolve_max_length``): the text
    config's ``n_positions``, ``max_position_embeddings`` or ``n_ctx``, else the tokenizer's
    ``model_max_length`` when set, else 2048."""
    cfg = getattr(model.config, "text_config", None) or model.config
    for attr in ("n_positions", "max_position_embeddings", "n_ctx"):
        v = getattr(cfg, attr, None)
        if v is not None:
            return int(v)
    tml = getattr(tokenizer, "model_max_length", None)
    if isinstance(tml, int) and 0 < tml < _HUGE:
        return tml
    return _DEFAULT_MAX_LENGTH


def _needed(seqs: list[_Seq], batch: list[int]) -> int:
    """Trailing positions whose log-probs a batch needs: each continuation token's, and the last
    position's where the next-token distribution is read."""
    return max(1, max(seqs[i].cont_len + (1 if seqs[i].next_ids else 0) for i in batch))


def _new_cache(model: Any) -> Any:
    from transformers import DynamicCache

    try:
        return DynamicCache(config=model.config)
    except TypeError:  # older transformers
        return DynamicCache()


__all__ = ["HFBackend", "NEG_INF"]
