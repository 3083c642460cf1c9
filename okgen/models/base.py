"""The eval model backend interface: batches in, batches out.

Every backend (``hf``, ``vllm``, ``openai``, ``random``) answers three kinds of batched
requests, as lm-evaluation-harness's model interface does:

* :meth:`Backend.letter_logprobs`: the log-probability of each choice label (``A``, ``B``...)
  as the next token after the prompt, read in **one pass** from the next-token distribution
  where the backend can (falling back to scoring each label as a continuation);
* :meth:`Backend.loglik`: the summed log-likelihood of each continuation given the prompt
  (lm-eval's ``loglikelihood``; ``acc`` and, divided by length, ``acc_norm``);
* :meth:`Backend.generate`: free text, greedy unless a temperature is given.

A :class:`Prompt` is chat messages plus an ``answer_prefix`` (``"Answer:"``). Local backends
render it with the tokenizer's chat template when it has one (the prefix opens the assistant
turn) and as plain text otherwise; API backends send the messages. ``Prompt.group`` names a
shared prefix (the oracle article): backends keep a group's requests together so the prefix
is computed once (KV reuse in ``hf``, prefix caching in ``vllm``).

Retries, concurrency and caching live inside backends; one bad item never fails a batch:
results carry ``error`` instead.
"""

from __future__ import annotations

import json
import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from okgen.errors import ConfigError
from okgen.hashing import sha256_text

NEG_INF = float("-inf")


@dataclass(frozen=True)
class ModelSpec:
    """A parsed model spec ``backend/model[,key=value...]``.

    Attributes:
        backend: backend name (``hf``, ``vllm``, ``openai``, ``random``).
        model: model id or path as the backend understands it.
        options: typed ``key=value`` options (ints, floats and yes/no become numbers and bools).
        text: the spec as given.
    """

    backend: str
    model: str
    options: dict[str, Any] = field(default_factory=dict)
    text: str = ""

    @property
    def name(self) -> str:
        """``backend/model`` without options (options hold paths, URLs and speed settings)."""
        return f"{self.backend}/{self.model}"

    def opt(self, key: str, default: Any = None) -> Any:
        """An option's value, or ``default``."""
        return self.options.get(key, default)

    def check_options(self, known: set[str] | frozenset[str]) -> None:
        """Refuse an option this backend does not know.

        Raises:
            ConfigError: naming the first unknown option and the known ones.
        """
        unknown = sorted(set(self.options) - set(known))
        if unknown:
            raise ConfigError(f"unknown {self.backend} option {unknown[0]!r}; known: {', '.join(sorted(known))}")

    def int_opt(self, key: str, default: Any = None) -> Any:
        """An integer option, or ``default`` when absent or none.

        Raises:
            ConfigError: the value is not an integer (``batch_size=abc``).
        """
        return self._num_opt(key, default, int)

    def float_opt(self, key: str, default: Any = None) -> Any:
        """A number option, or ``default`` when absent or none.

        Raises:
            ConfigError: the value is not a number.
        """
        return self._num_opt(key, default, float)

    def _num_opt(self, key: str, default: Any, kind: type) -> Any:
        value = self.options.get(key)
        if value is None:
            return default
        # bools are ints to Python: "yes" is no batch size
        if isinstance(value, bool) or not isinstance(value, int | float) or (kind is int and not float(value).is_integer()):
            raise ConfigError(f"option {key}={value!r} in model spec {self.text or self.name!r} must be "
                              f"{'an integer' if kind is int else 'a number'}")
        return kind(value)


def _typed(value: str) -> Any:
    low = value.lower()
    if low in ("yes", "true", "on"):
        return True
    if low in ("no", "false", "off"):
        return False
    if low in ("none", "null"):
        return None
    try:
        return int(value)
    except ValueError:
        pass
    try:
        f = float(value)
        return f if math.isfinite(f) else value
    except ValueError:
        return value


def parse_model_spec(spec: str) -> ModelSpec:
    """Parse ``backend/model[,key=value...]``.

    The model may itself hold slashes (``hf/Qwen/Qwen2.5-1.5B-Instruct``) and be a local path
    (``hf//data/models/tiny``). Option values ``yes``/``no``, integers and floats are typed.

    Raises:
        ConfigError: no backend, no model, or an option that is not ``key=value``.
    """
    text = str(spec).strip()
    backend, slash, rest = text.partition("/")
    if not slash or not backend:
        raise ConfigError(f"model spec {text!r} must read backend/model[,key=value...] (e.g. hf/Qwen/Qwen2.5-1.5B-Instruct)")
    model, *opts = rest.split(",")
    model = model.strip()
    if not model and backend != "random":
        raise ConfigError(f"model spec {text!r} names no model")
    options: dict[str, Any] = {}
    for opt in opts:
        k, eq, v = opt.partition("=")
        if not eq or not k.strip():
            raise ConfigError(f"bad option {opt!r} in model spec {text!r} (expected key=value)")
        options[k.strip()] = _typed(v.strip())
    return ModelSpec(backend=backend.strip(), model=model or "uniform", options=options, text=text)


@dataclass(frozen=True)
class Prompt:
    """One prompt.

    Attributes:
        messages: chat messages (``{"role": "system"|"user", "content": ...}``).
        answer_prefix: text the answer follows (``"Answer:"``), opening the assistant turn.
        group: key of a prefix shared with other prompts (the oracle article), or None.
        key: what the prompt asks, apart from its context (a question's id; a stream question's
            text, options and interval), or None: a seeded baseline draws its answer by it, so
            it answers a question the same in every setting and anew at every interval.
    """

    messages: tuple[dict[str, str], ...]
    answer_prefix: str = ""
    group: str | None = None
    key: str | None = None

    def plain(self, with_prefix: bool = True) -> str:
        """The prompt as plain text: message contents, then the answer prefix on its own line."""
        body = "\n\n".join(m["content"] for m in self.messages)
        if with_prefix and self.answer_prefix:
            return f"{body}\n{self.answer_prefix}"
        return body


@dataclass
class Scored:
    """Scores of one prompt's candidates.

    Attributes:
        scores: log-likelihood per candidate (``-inf`` when unknown).
        lengths: characters of each candidate continuation (for length normalisation).
        prompt_tokens: tokens processed for the prompt.
        single_pass: the scores came from one next-token distribution.
        error: what went wrong, or None.
    """

    scores: tuple[float, ...] = ()
    lengths: tuple[int, ...] = ()
    prompt_tokens: int = 0
    single_pass: bool = False
    error: str | None = None
    truncated: bool = False
    """The backend cut the token sequence's beginning to fit the model (``truncation=left``)."""


@dataclass
class Generated:
    """One generated answer."""

    text: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str | None = None
    error: str | None = None
    truncated: bool = False
    """The backend cut the prompt's beginning to fit the model (``truncation=left``)."""


class Backend(ABC):
    """Base class of eval model backends.

    Args:
        spec: the parsed model spec.
        workspace: the okgen workspace (caches), or None.
    """

    name: ClassVar[str] = ""
    #: Backends that can read the next-token distribution (one pass per question).
    supports_single_pass: ClassVar[bool] = True
    #: How a prompt too long for the model is cut: ``context`` (the runner's truncation rule cuts
    #: the article or passages from their end) or ``left`` (the backend cuts the token sequence's
    #: beginning, as lm-evaluation-harness does; backends with a tokenizer, by default).
    truncation: str = "context"

    def __init__(self, spec: ModelSpec, workspace: Any = None):
        self.spec = spec
        self.workspace = workspace

    # -- scoring ----------------------------------------------------------------------
    @abstractmethod
    def letter_logprobs(self, prompts: Sequence[Prompt], labels: Sequence[Sequence[str]]) -> list[Scored]:
        """Log-probability of each label (``"A"``...) as the answer's first token.

        Labels are given without a leading space; backends add the separator their
        rendering needs (``" A"`` after ``"Answer:"``).
        """

    @abstractmethod
    def loglik(self, prompts: Sequence[Prompt], continuations: Sequence[Sequence[str]]) -> list[Scored]:
        """Summed log-likelihood of each continuation (given with its leading space) after the prompt."""

    @abstractmethod
    def generate(self, prompts: Sequence[Prompt], *, max_tokens: int, temperature: float = 0.0,
                 seed: int = 0, stop: Sequence[str] = ()) -> list[Generated]:
        """Generate an answer per prompt (greedy when ``temperature`` is 0)."""

    # -- context budget ---------------------------------------------------------------
    @property
    def max_length(self) -> int | None:
        """Most tokens the model takes (prompt plus answer), or None when unknown/unlimited."""
        return None

    def prompt_tokens(self, prompt: Prompt) -> int:
        """Tokens of the rendered prompt (an estimate where the backend has no tokenizer)."""
        return estimate_tokens(prompt.plain())

    def truncate_text(self, text: str, max_tokens: int) -> str:
        """Cut ``text`` to at most ``max_tokens`` tokens (by the backend's tokenizer where it has one)."""
        return text[: max(0, max_tokens) * CHARS_PER_TOKEN]

    def text_tokens(self, text: str) -> int:
        """Tokens of a piece of text (an estimate where the backend has no tokenizer)."""
        return estimate_tokens(text)

    # -- identity ---------------------------------------------------------------------
    @property
    def template_suffix(self) -> str:
        """Appended to the template name in the eval signature (``+chat`` with a chat template)."""
        return ""

    def info(self) -> dict[str, Any]:
        """Backend, library versions and hardware, recorded in ``results.json``."""
        return {"backend": self.name, "model": self.spec.model}

    def usage(self) -> dict[str, int]:
        """Backend-specific counters (calls, cache hits...) for ``results.json``."""
        return {}

    def close(self) -> None:  # noqa: B027 - optional hook, most backends hold nothing to release
        """Release the model (GPU memory, worker processes)."""


CHARS_PER_TOKEN = 4
TRUNCATIONS = ("left", "context")


def resolve_truncation(option: Any) -> str:
    """The ``truncation`` option of a local backend: ``left`` (default, lm-eval's) or ``context``.

    Raises:
        ConfigError: another value.
    """
    value = "left" if option in (None, "auto") else str(option)
    if value not in TRUNCATIONS:
        raise ConfigError(f"truncation must be left (lm-evaluation-harness) or context (cut the article's end), "
                          f"got {option!r}")
    return value


class LocalTokenizerMixin:
    """Rendering and tokenization shared by backends that hold a transformers tokenizer.

    Follows lm-evaluation-harness (0.4.x, ``HFLM``) by default:

    * special tokens as the tokenizer adds them (``add_bos`` unset), except that a text already
      starting with the BOS token (a chat template that writes it) gets none added;
      ``add_bos=yes/no`` forces ``add_special_tokens`` either way;
    * with a chat template (lm-eval's ``--apply_chat_template``), the whole prompt, ``Answer:``
      included, is the user turn, the template's generation prompt opens the reply, and the
      answer follows with no delimiter; plain prompts put ``" A"`` after ``Answer:``;
    * trailing whitespace of the context moves to the continuation.

    Expects ``self.tokenizer``, ``self.chat`` (use the chat template) and ``self.add_bos``
    (None: the tokenizer's default).
    """

    tokenizer: Any
    chat: bool
    add_bos: bool | None

    def render(self, prompt: Prompt, with_prefix: bool = True) -> str:
        """The prompt as the model sees it (chat: the template with the generation prompt)."""
        if not self.chat:
            return prompt.plain(with_prefix)
        system = [dict(m) for m in prompt.messages if m["role"] == "system"]
        user = "\n\n".join(m["content"] for m in prompt.messages if m["role"] != "system")
        if with_prefix and prompt.answer_prefix:
            user = f"{user}\n{prompt.answer_prefix}"
        return apply_chat_template(self.tokenizer, [*system, {"role": "user", "content": user}])

    def _special(self, text: str) -> dict[str, bool]:
        """``add_special_tokens`` as lm-eval's ``tok_encode`` chooses it."""
        if self.add_bos is not None:
            return {"add_special_tokens": bool(self.add_bos)}
        bos = bos_text(self.tokenizer)
        if bos and text.startswith(bos):
            return {"add_special_tokens": False}
        return {}

    def encode(self, text: str) -> list[int]:
        """Token ids of a rendered prompt."""
        return list(self.tokenizer(text, **self._special(text)).input_ids)

    def encode_pair(self, context: str, continuation: str) -> tuple[list[int], list[int]]:
        """Context and continuation ids, split as lm-evaluation-harness does."""
        return self.encode_pairs(context, [continuation])[0]

    def encode_pairs(self, context: str, continuations: Sequence[str]) -> list[tuple[list[int], list[int]]]:
        """Context and continuation ids, split as lm-evaluation-harness does, in one tokenizer call.

        Trailing spaces of the context move to the continuations; a continuation's ids are what
        the whole text has beyond the context's ids.
        """
        n = len(context) - len(context.rstrip())
        if n:
            continuations = [context[-n:] + c for c in continuations]
            context = context[:-n]
        ctx = self.encode(context)
        wholes = [context + c for c in continuations]
        enc = self.tokenizer(wholes, **self._special(context)).input_ids if wholes else []
        return [(ctx, list(w[len(ctx):])) for w in enc]

    @property
    def target_delimiter(self) -> str:
        """Between the prompt and the answer: ``" "`` after ``Answer:``, none after a chat template's
        generation prompt (lm-eval's ``target_delimiter`` under ``--apply_chat_template``)."""
        return "" if self.chat else " "

    def label_continuations(self, prompt: Prompt, labels: Sequence[str]) -> tuple[str, list[str]]:
        """The rendered context and each label as its continuation (``" A"`` after ``"Answer:"``)."""
        ctx = self.render(prompt)
        sep = "" if not ctx or ctx[-1].isspace() else self.target_delimiter
        return ctx, [sep + lab for lab in labels]

    def continuation(self, text: str) -> str:
        """A choice continuation (given as ``" text"``) with this backend's delimiter."""
        return text if not self.chat else text.lstrip(" ")

    def prompt_tokens(self, prompt: Prompt) -> int:
        """Tokens of the rendered prompt."""
        return len(self.encode(self.render(prompt)))

    def text_tokens(self, text: str) -> int:
        """Tokens of a piece of text."""
        return len(self.tokenizer(text, add_special_tokens=False).input_ids)

    def truncate_text(self, text: str, max_tokens: int) -> str:
        """Cut ``text`` to its first ``max_tokens`` tokens."""
        ids = self.tokenizer(text, add_special_tokens=False).input_ids
        if len(ids) <= max_tokens:
            return text
        return self.tokenizer.decode(ids[: max(0, max_tokens)], skip_special_tokens=True)

    @property
    def template_suffix(self) -> str:
        """``+chat2`` when prompts go through the chat template (lm-eval's rendering; ``+chat``
        named okgen's earlier rendering with ``Answer:`` opening the reply)."""
        return "+chat2" if self.chat else ""

    def conventions(self) -> dict[str, Any]:
        """How prompts are tokenised, for ``run.json`` and ``results.json`` (BOS, chat template, delimiter)."""
        probe = "Answer:"
        ids = self.encode(probe)
        bos_id = getattr(self.tokenizer, "bos_token_id", None)
        return {
            "add_bos": "tokenizer default" if self.add_bos is None else bool(self.add_bos),
            "bos_token": getattr(self.tokenizer, "bos_token", None),
            "bos_added_to_plain_prompts": bool(ids) and bos_id is not None and ids[0] == bos_id,
            "chat_template": bool(self.chat),
            "chat_template_hash": template_hash(self.tokenizer) if self.chat else None,
            "answer_prefix_in": "user turn" if self.chat else "prompt",
            "target_delimiter": self.target_delimiter,
            "truncation": getattr(self, "truncation", "left"),
            "reference": "lm-evaluation-harness 0.4 HFLM" + (" --apply_chat_template" if self.chat else ""),
        }


def answers_differ(stored: Any, info: dict[str, Any], continuations: bool = False) -> str | None:
    """What of the backend a resumed run's stored answers were made with differs now: the chat
    template (a model repository can change it under the same name) or the random baseline's
    draw (of full continuations too, for a run that scores them: ``continuations``); None when
    nothing is known to differ."""
    if not isinstance(stored, dict):
        return None
    old = (stored.get("conventions") or {}).get("chat_template_hash")
    new = (info.get("conventions") or {}).get("chat_template_hash")
    if old and new and old != new:
        return f"chat template ({old}, now {new})"
    if stored.get("backend") == "random" and stored.get("draw") != info.get("draw"):
        return f"random draw (version {stored.get('draw') or 1}, now {info.get('draw')})"
    if continuations and stored.get("backend") == "random" and stored.get("draw_full", 1) != info.get("draw_full", 1):
        return f"random draw of full continuations (version {stored.get('draw_full', 1)}, now {info.get('draw_full', 1)})"
    return None


def answers_by(info: dict[str, Any]) -> dict[str, Any] | None:
    """What, beyond the model's name, makes its answers (a backend's ``info()``): the random
    baseline's draw, the chat template's hash; None when neither applies. Runs put side by side
    in one report must agree on it."""
    got = {"draw": info.get("draw") if info.get("backend") == "random" else None,
           "chat_template_hash": (info.get("conventions") or {}).get("chat_template_hash")}
    return {k: v for k, v in got.items() if v is not None} or None


def template_hash(tokenizer: Any) -> str | None:
    """The first 12 hex digits of the SHA-256 of the tokenizer's chat template (a dict of named
    templates as canonical JSON), so a run names the template that rendered its prompts, not only
    that one did: a model repository's template can change under the same name."""
    tpl = getattr(tokenizer, "chat_template", None)
    if not tpl:
        return None
    return sha256_text(tpl if isinstance(tpl, str) else json.dumps(tpl, sort_keys=True))[:12]


def bos_text(tokenizer: Any) -> str | None:
    """The text lm-eval checks a prompt for before adding special tokens: the BOS token (else EOS)."""
    tid = getattr(tokenizer, "bos_token_id", None)
    if tid is None:
        tid = getattr(tokenizer, "eos_token_id", None)
    if tid is None:
        return None
    text = tokenizer.decode([tid])
    return text or None


def apply_chat_template(tokenizer: Any, messages: Sequence[dict[str, str]]) -> str:
    """Render with the chat template; a template without a system role gets it merged into the user turn."""
    try:
        return tokenizer.apply_chat_template(list(messages), tokenize=False, add_generation_prompt=True)
    except Exception as e:  # jinja2 raises TemplateError for an unsupported system role
        if not any(m["role"] == "system" for m in messages):
            raise ConfigError(f"the chat template failed: {e}") from None
        system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
        rest = [dict(m) for m in messages if m["role"] != "system"]
        rest[0]["content"] = f"{system}\n\n{rest[0]['content']}"
        return tokenizer.apply_chat_template(rest, tokenize=False, add_generation_prompt=True)


def resolve_chat(option: Any, tokenizer: Any, model: str) -> bool:
    """Whether to use the chat template: ``auto`` (when the tokenizer has one), yes or no."""
    has_template = getattr(tokenizer, "chat_template", None) is not None
    if option is True and not has_template:
        raise ConfigError(f"chat=yes but the tokenizer of {model} has no chat template")
    return has_template if option in ("auto", None) else bool(option)


def estimate_tokens(text: str) -> int:
    """A tokenizer-free estimate: one token per 4 characters (OpenAI's rule of thumb)."""
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def common_prefix_len(seqs: Sequence[Sequence[int]]) -> int:
    """Length of the longest common prefix of token sequences."""
    if not seqs:
        return 0
    first = seqs[0]
    n = min(len(s) for s in seqs)
    for i in range(n):
        t = first[i]
        if any(s[i] != t for s in seqs[1:]):
            return i
    return n


def group_order(groups: Sequence[str | None]) -> list[int]:
    """Indices ordered so that items of the same group are adjacent (first-seen order kept)."""
    first: dict[str, int] = {}
    keyed = []
    for i, g in enumerate(groups):
        if g is None:
            keyed.append((i, 0, i))
        else:
            pos = first.setdefault(g, i)
            keyed.append((pos, 1, i))
    return [i for _, _, i in sorted(keyed)]


def argmax(scores: Sequence[float]) -> int | None:
    """Index of the highest score (first on ties); None when every score is -inf or NaN."""
    best, best_i = NEG_INF, None
    for i, s in enumerate(scores):
        if s is not None and not math.isnan(s) and s > best:
            best, best_i = s, i
    return best_i
