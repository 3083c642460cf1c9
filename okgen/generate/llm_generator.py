"""The LLM question generator: one chat call per article through a :class:`~okgen.llm.ChatModel`.

The answer is parsed leniently so that one bad item does not cost the others: the envelope is
read as JSON, each question is validated on its own (``schema`` verdict), items beyond the
number asked for get a ``question_count`` verdict, and an answer cut by the length limit keeps
its complete questions. Whole-answer failures (refusal, invalid JSON, content filter) fail the
article with that kind; transient ones (HTTP errors, timeouts, budget) leave it for a rerun.
"""

from __future__ import annotations

import math
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from okgen.errors import ConfigError
from okgen.files import describe_validation_error
from okgen.generate.agents import AgentSpec
from okgen.generate.records import Candidate, Usage
from okgen.generate.text import format_date
from okgen.llm import ChatModel, ChatRequest, ChatResult
from okgen.llm.base import repair_json
from okgen.schema import AgentInfo, Article, Decoding

WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


class GeneratedQuestion(BaseModel):
    """One question as the generator writes it."""

    question: str
    choices: list[str]
    answer: str
    short_answer: str
    rationale: str
    evidence: str


class GeneratedQuestions(BaseModel):
    """The generator's whole answer."""

    questions: list[GeneratedQuestion]


@dataclass
class GenOutcome:
    """What one generator call gave for one article."""

    candidates: list[Candidate] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    error_kind: str | None = None
    error: str | None = None
    transient: bool = False
    short: bool = False
    truncated: bool = False


def decoding_from(spec: AgentSpec, options: dict[str, str], seed: int) -> Decoding:
    """Decoding of an agent: the spec's ``[decoding]``, overridden by model-spec options."""
    d = {k: v for k, v in spec.section("decoding").items() if k != "seed"}
    given = {k: options.pop(k) for k in ("temperature", "top_p", "max_tokens", "seed") if k in options}
    d.update(given)
    key, v = "", None
    try:  # the model options and the agent spec's [decoding] alike: a bad value fails before any call
        for key in ("temperature", "top_p", "max_tokens", "seed"):
            if key not in d:
                continue
            v = d[key]
            if isinstance(v, bool):
                raise ValueError
            if key in ("temperature", "top_p"):
                d[key] = float(v)
                if not math.isfinite(d[key]) or d[key] < 0 or (key == "top_p" and not 0 < d[key] <= 1):
                    raise ValueError
            else:
                if isinstance(v, float) and not v.is_integer():
                    raise ValueError
                d[key] = int(v)
                if key == "max_tokens" and d[key] < 0:  # 0: no limit (the backend's default)
                    raise ValueError
    except (TypeError, ValueError):
        expected = {"temperature": "a number >= 0", "top_p": "a number above 0 and at most 1",
                    "max_tokens": "a whole number >= 0 (0: no limit)", "seed": "a whole number"}[key]
        where = "model options" if key in given else f"the {spec.name} spec's [decoding]"
        raise ConfigError(f"bad {key} in {where}: {v}, expected {expected}") from None
    return Decoding(temperature=float(d.get("temperature", 0.0)), top_p=float(d.get("top_p", 1.0)),
                    max_tokens=int(d.get("max_tokens", 0)), seed=int(d.get("seed", seed)))


def cut_text(text: str, limit: int) -> str:
    """Cut a long article at a paragraph (else sentence) boundary before ``limit`` characters."""
    if limit <= 0 or len(text) <= limit:
        return text
    head = text[:limit]
    for sep in ("\n\n", "\n", ". "):
        i = head.rfind(sep)
        if i > limit // 2:
            return head[: i + (1 if sep == ". " else 0)].rstrip()
    return head.rstrip()


class LLMGenerator:
    """Question generator backed by a chat model (any backend).

    Args:
        spec: the ``generator`` agent spec.
        client: the model's client.
        decoding: decoding parameters (from the spec and the model spec).
    """

    def __init__(self, spec: AgentSpec, client: ChatModel, decoding: Decoding):
        self.spec = spec
        self.client = client
        self.decoding = decoding
        self.max_chars = int(spec.section("prompt").get("max_article_chars", 12000))

    @property
    def info(self) -> AgentInfo:
        """Identity for the signature: ``backend/MODEL`` and the spec hash."""
        return AgentInfo(model=self.client.name, spec_hash=self.spec.spec_hash, decoding=self.decoding)

    def request(self, article: Article, n: int) -> ChatRequest:
        """The chat request for one article."""
        values = {"n": n, "date": format_date(article.date), "iso_date": article.date.isoformat(),
                  "weekday": WEEKDAYS[article.date.weekday()], "source": article.source_name or article.source,
                  "title": article.title, "text": cut_text(article.text, self.max_chars)}
        return ChatRequest(
            messages=({"role": "system", "content": self.spec.render("system", **values)},
                      {"role": "user", "content": self.spec.render("user", **values)}),
            temperature=self.decoding.temperature, top_p=self.decoding.top_p,
            max_tokens=self.decoding.max_tokens or None, seed=self.decoding.seed,
            schema=GeneratedQuestions, tag="generator")

    async def agenerate(self, article: Article, n: int, *, use_cache: bool = True,
                        limiter: AbstractAsyncContextManager[Any] | None = None) -> GenOutcome:
        """Generate and parse the candidates of one article."""
        res = await self.client.achat(self.request(article, n), use_cache=use_cache, limiter=limiter)
        out = parse_outcome(res, article.id, n)
        out.usage.add_result(res)
        return out


def parse_outcome(res: ChatResult, article_id: str, n: int) -> GenOutcome:
    """Turn a generator answer into candidates, per item (see the module docstring)."""
    out = GenOutcome()
    cut: Candidate | None = None
    if res.ok and res.parsed is not None:
        items: list[Any] = [q.model_dump() for q in res.parsed.questions]
    elif res.transient:
        out.error_kind, out.error, out.transient = res.error_kind, res.error, True
        return out
    elif res.error_kind in ("schema", "length"):
        data = repair_json(res.text or "")  # a cut answer keeps its complete questions
        if data is None:
            out.error_kind, out.error = res.error_kind, f"{res.error} (no JSON in the answer)"
            return out
        items = data.get("questions") if isinstance(data, dict) else data if isinstance(data, list) else None
        if not isinstance(items, list):
            out.error_kind, out.error = "schema", "the answer holds no list of questions"
            return out
        out.truncated = res.error_kind == "length"
        if out.truncated and items:
            # The question being written when the answer was cut (repaired, not whole): a candidate
            # the funnel counts as failed, so every question the model began is accounted for.
            last, items = items[-1], items[:-1]
            raw = last if isinstance(last, dict) else {}
            cut = Candidate(article_id=article_id, index=len(items), question=str(raw.get("question", ""))[:1000])
            if len(items) < n:
                cut.add("schema", False, reason="cut off by the completion token limit (raise max_tokens)")
            else:  # an extra question beyond those asked: refused for that, whole or not
                cut.add("question_count", False, reason=f"question {len(items) + 1} of a request for {n}")
    else:
        out.error_kind, out.error = res.error_kind or "bad_response", res.error
        return out
    for i, item in enumerate(items):
        out.candidates.append(_candidate(article_id, i, item, n))
    if cut is not None:
        out.candidates.append(cut)
    out.short = len(items) < n
    return out


def _candidate(article_id: str, index: int, item: Any, n: int) -> Candidate:
    try:
        q = GeneratedQuestion.model_validate(item)
    except ValidationError as e:
        raw = item if isinstance(item, dict) else {}
        c = Candidate(article_id=article_id, index=index, question=str(raw.get("question", ""))[:1000])
        c.add("schema", False, reason=describe_validation_error(e))
        return c
    choices = [str(x).strip() for x in q.choices]
    answer = q.answer.strip()
    letter = answer.rstrip(").").upper()
    if len(letter) == 1 and "A" <= letter <= "Z" and answer not in choices and ord(letter) - 65 < len(choices):
        answer = choices[ord(letter) - 65]  # "B" or "B)" for the second choice
    c = Candidate(article_id=article_id, index=index, question=q.question.strip(),
                  choices=choices, answer=answer,
                  short_answer=q.short_answer.strip(), rationale=q.rationale.strip(), evidence=q.evidence.strip())
    c.add("schema", True)
    c.add("question_count", index < n, reason=None if index < n else f"question {index + 1} of a request for {n}")
    return c
