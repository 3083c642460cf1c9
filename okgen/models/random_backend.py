"""``random``: a seeded chance baseline, so every table has a chance line.

Scores are drawn from a generator seeded by the spec's ``seed`` option and the prompt's ``key``
(what it asks apart from its context: the question's id; a stream question's text, options and
interval), else the question part of the prompt (from its last ``Question:`` on), so a question
always gets the same answer whatever the batch, the order, a resume or the setting: the chance
line of ``none``, ``oracle`` and every retrieval setting is the same draw, and a difference
between settings is never the baseline's noise. A stream asks a question anew at each interval,
and gets a new draw there.
Spec: ``random/seedN`` (the seed in the name, so runs and reports tell baselines apart:
``random/seed0``, ``random/seed1``), or ``random/uniform[,seed=N]``.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from typing import Any

from okgen.errors import ConfigError
from okgen.hashing import sha256_text
from okgen.models.base import Backend, Generated, ModelSpec, Prompt, Scored, estimate_tokens

_OPTION_LINE = re.compile(r"^([A-J])\. ", re.MULTILINE)
_SEED_NAME = re.compile(r"seed(\d+)")
DRAW = 2  # how answers are drawn (2: by the prompt's key); a resumed run refuses answers of another
DRAW_FULL = 2  # how full continuations are drawn (2: uniform under the sum and its per-length form); likewise
_QUESTION = "Question: "  # where the templates' question block starts (okgen.eval.templates)


class RandomBackend(Backend):
    """Uniformly random choices, deterministic per (seed, prompt)."""

    name = "random"

    def __init__(self, spec: ModelSpec, workspace: Any = None):
        super().__init__(spec, workspace)
        spec.check_options({"seed"})
        m = _SEED_NAME.fullmatch(spec.model)
        if m is None and spec.model != "uniform":
            raise ConfigError(f"{spec.text or spec.name}: a random baseline is random/seedN (random/seed0) or "
                              f"random/uniform[,seed=N], not {spec.model!r}")
        named = int(m.group(1)) if m else None
        opt = spec.int_opt("seed")
        if named is not None and opt is not None and named != opt:
            raise ConfigError(f"{spec.text or spec.name}: the name says seed {named} but the option says seed={opt}")
        self.seed = named if named is not None else (opt or 0)

    def _rng(self, prompt: Prompt) -> random.Random:
        if prompt.key is not None:
            what = f"key\n{prompt.key}"
        else:
            text = prompt.plain()
            cut = text.rfind(_QUESTION)
            what = text[cut:] if cut >= 0 else text
        return random.Random(int(sha256_text(f"{self.seed}\n{what}")[:16], 16))

    def letter_logprobs(self, prompts: Sequence[Prompt], labels: Sequence[Sequence[str]]) -> list[Scored]:
        """Random scores per label."""
        out = []
        for p, labs in zip(prompts, labels):
            r = self._rng(p)
            out.append(Scored(scores=tuple(-r.random() for _ in labs), lengths=tuple(len(x) for x in labs),
                              prompt_tokens=estimate_tokens(p.plain()), single_pass=True))
        return out

    def loglik(self, prompts: Sequence[Prompt], continuations: Sequence[Sequence[str]]) -> list[Scored]:
        """Random scores per continuation, with a winner drawn uniformly that wins under every
        scoring: by the sum (``loglik-full``) and by the sum over the length (``loglik-norm``).
        (Scores of ``-random * length`` made the sum favour the shortest option: 72 % for an
        option of 3 characters among three of 14.)"""
        out = []
        for p, conts in zip(prompts, continuations):
            r = self._rng(p)
            win = r.randrange(len(conts)) if conts else 0
            scores = tuple(-r.random() * 1e-6 if i == win else -(1.0 + r.random()) * max(1, len(c))
                           for i, c in enumerate(conts))
            out.append(Scored(scores=scores, lengths=tuple(len(c) for c in conts), prompt_tokens=estimate_tokens(p.plain())))
        return out

    def generate(self, prompts: Sequence[Prompt], *, max_tokens: int, temperature: float = 0.0,
                 seed: int = 0, stop: Sequence[str] = ()) -> list[Generated]:
        """A random option letter among those listed in the prompt.

        Raises:
            ConfigError: the prompt lists no options (an open-answer prompt): there is no chance
                line to draw, and answering "A" to everything scored 0 whatever the seed."""
        out = []
        for p in prompts:
            letters = _OPTION_LINE.findall(p.plain())
            if not letters:
                raise ConfigError(f"{self.spec.text or self.spec.name}: a random baseline draws among the options, and "
                                  "an open-answer prompt lists none: use --format mc")
            out.append(Generated(text=self._rng(p).choice(letters), finish_reason="stop", completion_tokens=1,
                                 prompt_tokens=estimate_tokens(p.plain())))
        return out

    def info(self) -> dict[str, Any]:
        """Backend identity."""
        return {"backend": self.name, "model": self.spec.model, "seed": self.seed, "draw": DRAW, "draw_full": DRAW_FULL}
