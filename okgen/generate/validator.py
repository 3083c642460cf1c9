"""The validator agent: an LLM reads the article and one candidate and judges each criterion.

Criteria come from the spec (``[[criteria]]`` in ``agents/validator/spec.toml``); the output
schema is built from them, one ``{"reason": ..., "passed": ...}`` object per criterion, so
structured outputs force an answer for every criterion. Each criterion becomes a verdict of
stage ``validator``; a question failing any is dropped. An unusable answer (refusal, invalid
JSON) drops the question with the verdict ``validator_error``; a transient failure leaves the
article for a rerun.
"""

from __future__ import annotations

import re
from contextlib import AbstractAsyncContextManager
from functools import cached_property
from typing import Any

from pydantic import BaseModel, create_model

from okgen.errors import ConfigError
from okgen.generate.agents import AgentSpec, ModelAgent
from okgen.generate.llm_generator import cut_text
from okgen.generate.positions import LETTERS, display_order
from okgen.generate.records import Candidate
from okgen.generate.text import format_date
from okgen.llm import ChatModel, ChatRequest, ChatResult
from okgen.schema import AgentInfo, Article, Decoding

ERROR = "validator_error"


class CriterionVerdict(BaseModel):
    """The validator's judgement of one criterion."""

    reason: str
    passed: bool


class LLMValidator(ModelAgent):
    """Validator backed by a chat model (any backend) (``spec`` is the ``validator`` agent spec)."""

    def __init__(self, spec: AgentSpec, client: ChatModel, decoding: Decoding):
        super().__init__(spec, client, decoding)
        self.max_chars = int(spec.section("prompt").get("max_article_chars", 12000))
        crit = spec.data.get("criteria") or []
        if not isinstance(crit, list) or not crit:
            raise ConfigError(f"{spec.path}: no [[criteria]]")
        self.criteria: list[tuple[str, str]] = []
        for c in crit:
            name, desc = str(c.get("name", "")), str(c.get("description", ""))
            if not re.fullmatch(r"[a-z][a-z0-9_]*", name) or not desc:
                raise ConfigError(f"{spec.path}: each criterion needs a snake_case name and a description, got {c}")
            self.criteria.append((name, desc))

    @property
    def info(self) -> AgentInfo:
        """Identity for the signature."""
        return AgentInfo(model=self.client.name, spec_hash=self.spec.spec_hash, decoding=self.decoding)

    @cached_property
    def schema(self) -> type[BaseModel]:
        """The output schema: one :class:`CriterionVerdict` per criterion."""
        fields = {name: (CriterionVerdict, ...) for name, _ in self.criteria}
        return create_model("ValidatorVerdicts", **fields)  # type: ignore[call-overload]

    @cached_property
    def _fixed(self) -> dict[str, str]:
        """Template values that are the same for every request."""
        return {"criteria": "\n".join(f"- {name}: {desc}" for name, desc in self.criteria),
                "example": "{\n" + ",\n".join(f'  "{name}": {{"reason": "<one sentence>", "passed": <true or false>}}'
                                               for name, _ in self.criteria) + "\n}"}

    def request(self, article: Article, c: Candidate, seed: int) -> ChatRequest:
        """The chat request judging candidate ``c``."""
        order = display_order(len(c.choices), seed, f"{c.article_id}:{c.question}")
        shown = [c.choices[i] for i in order]
        letter = LETTERS[shown.index(c.answer)] if c.answer in shown else "?"
        values = {
            **self._fixed,
            "date": format_date(article.date), "source": article.source_name or article.source,
            "title": article.title, "text": cut_text(article.text, self.max_chars),
            "question": c.question, "choices": "\n".join(f"{LETTERS[i]}) {x}" for i, x in enumerate(shown)),
            "answer_letter": letter, "answer": c.answer, "evidence": c.evidence or "(none)",
        }
        return ChatRequest(
            messages=({"role": "system", "content": self.spec.render("system", **values)},
                      {"role": "user", "content": self.spec.render("user", **values)}),
            temperature=self.decoding.temperature, top_p=self.decoding.top_p,
            max_tokens=self.decoding.max_tokens or None, seed=self.decoding.seed, schema=self.schema, tag="validator")

    async def ajudge(self, article: Article, c: Candidate, seed: int, *, use_cache: bool = True,
                     limiter: AbstractAsyncContextManager[Any] | None = None) -> ChatResult:
        """Ask the validator about one candidate."""
        return await self.client.achat(self.request(article, c, seed), use_cache=use_cache, limiter=limiter)

    def apply(self, c: Candidate, res: ChatResult) -> None:
        """Record the validator's verdicts on ``c`` (the caller handles transient failures)."""
        if not res.ok or res.parsed is None:
            c.add(ERROR, False, stage="validator", reason=f"{res.error_kind}: {res.error}")
            return
        for name, _ in self.criteria:
            v: CriterionVerdict = getattr(res.parsed, name)
            c.add(name, bool(v.passed), stage="validator", reason=v.reason.strip()[:500] or None)
