"""Scoring modes: turn a batch of prompts into predictions.

* ``loglik``: the log-probability of each choice letter after ``Answer:``, read in one pass
  from the next-token distribution where the backend can; the highest wins.
* ``loglik-full``: the summed log-likelihood of each choice's text as the continuation
  (lm-evaluation-harness's ``acc``).
* ``loglik-norm``: the same divided by the choice's length in characters (lm-eval's
  ``acc_norm``). ``Prediction.scores`` keeps the raw sums.
* ``generate``: the model answers in words; :func:`~okgen.eval.parsing.parse_choice` reads the
  letter or option text; an unparseable answer is wrong and counted as unparsed.
* format ``open``: generation of up to ``max_tokens`` (100), first non-empty line against the
  short answer after normalisation; the optional judge decides the misses.

Choice order is the snapshot's: nothing is shuffled here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from okgen.eval.contexts import Fitted
from okgen.eval.parsing import first_line, open_match, parse_choice
from okgen.eval.templates import LETTERS
from okgen.models.base import Backend, Generated, Scored, argmax
from okgen.schema import Prediction, Question

SCORINGS = ("loglik", "loglik-full", "loglik-norm", "generate")
DEFAULT_MAX_TOKENS = {"mc": 32, "open": 100}


@dataclass(frozen=True)
class Mode:
    """How a run scores: scoring mode, answer format and decoding."""

    scoring: str = "loglik"
    fmt: str = "mc"
    max_tokens: int = 0
    temperature: float = 0.0
    seed: int = 0

    def reserve(self, backend: Backend, question: Question) -> int:
        """Tokens the answer needs beyond the prompt (for the truncation rule)."""
        if self.scoring == "generate":
            return self.max_tokens
        if self.scoring == "loglik":
            return 2
        return max(backend.text_tokens(" " + c) for c in question.choices) + 1


def score(backend: Backend, mode: Mode, questions: Sequence[Question], fitted: Sequence[Fitted],
          base: dict[str, Any]) -> list[Prediction]:
    """Score a batch; ``base`` holds the Prediction fields of the run (setting, retriever...).

    Questions whose prompt cannot fit the model get an ``error`` prediction without a call.
    """
    ok = [i for i, f in enumerate(fitted) if not f.too_long]
    out: list[Prediction | None] = [None] * len(questions)
    for i, f in enumerate(fitted):
        if f.too_long:
            out[i] = _pred(questions[i], f, base, error="the question and choices alone exceed the model's context length")
    qs = [questions[i] for i in ok]
    prompts = [fitted[i].prompt for i in ok]
    if mode.scoring == "generate" or mode.fmt == "open":
        gens = backend.generate(prompts, max_tokens=mode.max_tokens, temperature=mode.temperature, seed=mode.seed)
        preds = [_from_generation(q, fitted[i], g, mode, base) for i, q, g in zip(ok, qs, gens)]
    else:
        if mode.scoring == "loglik":
            scored = backend.letter_logprobs(prompts, [list(LETTERS[:len(q.choices)]) for q in qs])
        else:
            scored = backend.loglik(prompts, [[" " + c for c in q.choices] for q in qs])
        preds = [_from_scores(q, fitted[i], s, mode, base) for i, q, s in zip(ok, qs, scored)]
    for i, p in zip(ok, preds):
        out[i] = p
    return [p for p in out if p is not None]


def _pred(q: Question, f: Fitted, base: dict[str, Any], **kw: Any) -> Prediction:
    fields = dict(base)
    cut = bool(kw.pop("cut", False))  # the backend cut the prompt's beginning itself
    fields.update(question_id=q.id, truncated=f.truncated or cut, retrieved=f.retrieved, gold_rank=f.gold_rank)
    fields.setdefault("correct", False)
    fields.setdefault("parsed", kw.get("error") is None and kw.get("pred_index") is not None)
    fields.update(kw)
    if fields.get("error") is not None:
        fields["parsed"] = False
    return Prediction(**fields)


def _from_scores(q: Question, f: Fitted, s: Scored, mode: Mode, base: dict[str, Any]) -> Prediction:
    scores = tuple(float(x) for x in s.scores)
    if s.error:
        return _pred(q, f, base, scores=_finite(scores) or None, error=s.error, prompt_tokens=s.prompt_tokens,
                     cut=s.truncated)
    ranked = scores
    if mode.scoring == "loglik-norm":
        ranked = tuple(x / max(1, len(c)) for x, c in zip(scores, q.choices))
    pred = argmax(ranked)
    return _pred(q, f, base, pred_index=pred, correct=pred == q.answer_index, scores=_finite(scores),
                 parsed=pred is not None, prompt_tokens=s.prompt_tokens, cut=s.truncated)


def _from_generation(q: Question, f: Fitted, g: Generated, mode: Mode, base: dict[str, Any]) -> Prediction:
    usage = {"prompt_tokens": g.prompt_tokens, "completion_tokens": g.completion_tokens, "cut": g.truncated}
    if g.error:
        return _pred(q, f, base, output=g.text or None, error=g.error, **usage)
    if mode.fmt == "open":
        ok = open_match(g.text, q.short_answer)
        return _pred(q, f, base, output=g.text, correct=ok, parsed=bool(first_line(g.text)), **usage)
    pred = parse_choice(g.text, q.choices)
    return _pred(q, f, base, output=g.text, pred_index=pred, correct=pred == q.answer_index,
                 parsed=pred is not None, **usage)


def _finite(scores: tuple[float, ...]) -> tuple[float, ...]:
    # JSON has no -inf: an unknown score is written as a very low number.
    return tuple(x if x > -1e30 else -1e30 for x in scores)
