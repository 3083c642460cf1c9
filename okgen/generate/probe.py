"""The freshness probe: ask probe models each question with no context.

A question that every probe answers correctly is flagged ``probe_known`` and, when the probe
spec's ``drop_known`` (or ``--drop-known``) says so, dropped. Each probe's answer is recorded
as a verdict named ``probe:<model>`` (passed = the probe did not know), which never drops a
question on its own. A probe that errs or gives no letter counts as not knowing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any

from okgen.generate.agents import ModelAgent
from okgen.generate.positions import LETTERS, display_order
from okgen.generate.records import Candidate
from okgen.llm import ChatRequest, ChatResult
from okgen.schema import AgentInfo

KNOWN = "probe_known"
_FIRST = re.compile(r"^\W*([A-J])(?:[).:\]]|\s+-|\s*$)")  # "B", "B) Lisbon", "(B)", "B: ...", "B - ..."
_STATED = re.compile(r"\b(?:answer|option|choice)\s*(?:is|:)?\s*\(?([A-J])\b", re.IGNORECASE)
_ANY = re.compile(r"\b([B-J]|A(?!\s+[a-z]))\b")  # "A good guess is C": that "A" is an article


def read_letter(text: str | None, n: int) -> int | None:
    """The choice index a free-text answer names ("B", "B) Lisbon", "The answer is B")."""
    t = (text or "").strip()
    for rx in (_FIRST, _STATED, _ANY):
        for m in rx.finditer(t):
            i = ord(m.group(1).upper()) - 65
            if i < n:
                return i
    return None


class Probe(ModelAgent):
    """One probe model (``spec`` is the ``probe`` agent spec)."""

    label: str | None = None
    """Verdict name when the model alone is ambiguous (``probe:openai/m#2``: the same model probed twice)."""

    @property
    def name(self) -> str:
        """Verdict name of this probe: ``probe:openai/MODEL``, numbered when a model is probed twice."""
        return self.label or f"probe:{self.client.name}"

    @property
    def info(self) -> AgentInfo:
        """Identity for the manifest."""
        return AgentInfo(model=self.client.name, spec_hash=self.spec.spec_hash, decoding=self.decoding)

    def request(self, c: Candidate, seed: int) -> tuple[ChatRequest, list[int]]:
        """The question without context, its choices in a seeded order, and that order."""
        order = display_order(len(c.choices), seed, f"{c.article_id}:{c.question}")
        values = {"question": c.question,
                  "choices": "\n".join(f"{LETTERS[i]}) {c.choices[j]}" for i, j in enumerate(order)),
                  "letters": ", ".join(LETTERS[: len(order)])}
        req = ChatRequest(
            messages=({"role": "system", "content": self.spec.render("system", **values)},
                      {"role": "user", "content": self.spec.render("user", **values)}),
            temperature=self.decoding.temperature, top_p=self.decoding.top_p,
            max_tokens=self.decoding.max_tokens or None, seed=self.decoding.seed, tag="probe")
        return req, order

    async def aask(self, c: Candidate, seed: int, *, use_cache: bool = True,
                   limiter: AbstractAsyncContextManager[Any] | None = None) -> tuple[ChatResult, bool]:
        """Ask one question; returns the result and whether the probe chose the answer."""
        req, order = self.request(c, seed)
        res = await self.client.achat(req, use_cache=use_cache, limiter=limiter)
        if not res.ok:
            return res, False
        i = read_letter(res.text, len(order))
        return res, i is not None and c.choices[order[i]] == c.answer


def apply_probes(c: Candidate, probes: Sequence[Probe], outcomes: Sequence[tuple[ChatResult, bool]],
                 drop_known: bool) -> None:
    """Record every probe's verdict on ``c``, then flag (and maybe drop) a known question."""
    for p, (res, correct) in zip(probes, outcomes):
        reason = "answered correctly without context" if correct else (
            f"{res.error_kind}: {res.error}" if not res.ok else "did not choose the answer")
        c.add(p.name, not correct, stage="probe", reason=reason, drop=False)
    known = bool(outcomes) and all(correct for _, correct in outcomes)
    if known:
        c.flags.append(KNOWN)
    c.add(KNOWN, not known, stage="probe", drop=drop_known,
          reason="every probe answered correctly without context" if known else None)
