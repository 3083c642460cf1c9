"""Working records of question generation: candidates with their verdicts, per-article results.

A :class:`Candidate` is what a generator proposed, before anything is known to be right; it may
be malformed (three choices, an answer that is not among them), which a
:class:`~okgen.schema.Question` cannot be. Candidates and their verdicts are what the store
keeps per article, so a rerun rebuilds the same questions and the same funnel.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from okgen.schema import Verdict, VerdictStage

STAGES: tuple[VerdictStage, ...] = ("check", "validator", "probe")


class Candidate(BaseModel):
    """A proposed question with every verdict it received."""

    model_config = ConfigDict(extra="forbid")

    article_id: str
    """The article it was generated from."""
    index: int
    """Position in the generator's output for that article."""
    question: str = ""
    """Question text."""
    choices: list[str] = Field(default_factory=list)
    """Choices in the generator's order (shuffled later, when positions are balanced)."""
    answer: str = ""
    """The correct choice's text."""
    short_answer: str = ""
    """Short answer span for the open-ended variant."""
    rationale: str = ""
    """Why the answer is correct."""
    evidence: str = ""
    """Quote from the article that supports the answer."""
    answer_type: str | None = None
    """Kind of answer when the generator knows it (person, org, money, date, ...)."""
    verdicts: list[Verdict] = Field(default_factory=list)
    """Every check, validator criterion and probe verdict, in the order they were given."""
    flags: list[str] = Field(default_factory=list)
    """Flags that do not drop the question (``probe_known``)."""
    rejected_by: str | None = None
    """Name of the first failed verdict that dropped it; None while it is kept."""
    rejected_stage: VerdictStage | None = None
    """Stage of that verdict."""

    @property
    def kept(self) -> bool:
        """True while no verdict has dropped it."""
        return self.rejected_by is None

    def add(self, name: str, passed: bool, stage: VerdictStage = "check", reason: str | None = None,
            drop: bool = True) -> None:
        """Record a verdict; the first failed one (with ``drop``) rejects the candidate."""
        # The arguments are already typed; skipping validation matters at ~20 verdicts per question.
        self.verdicts.append(Verdict.model_construct(name=name, passed=bool(passed), stage=stage, reason=reason))
        if not passed and drop and self.rejected_by is None:
            self.rejected_by = name
            self.rejected_stage = stage

    def distractors(self) -> list[str]:
        """The choices other than the answer (its first occurrence, spaces ignored, removed)."""
        out = [c.strip() for c in self.choices]
        if self.answer.strip() in out:
            out.remove(self.answer.strip())
        return out


class Usage(BaseModel):
    """Calls, tokens and cost of one agent on one article."""

    model_config = ConfigDict(extra="forbid")

    calls: int = 0
    cached: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    cached_cost_usd: float = 0.0
    """What the replies served from the cache cost when first made (not spent again)."""
    errors: dict[str, int] = Field(default_factory=dict)
    served: dict[str, int] = Field(default_factory=dict)
    """Calls by the model the server said answered (:func:`okgen.llm.base.served_model`)."""

    def add_result(self, res: Any) -> None:
        """Add a :class:`~okgen.llm.ChatResult` (one refused by the budget was never
        sent: it is counted under ``errors`` only)."""
        if not res.sent:
            self.errors["budget"] = self.errors.get("budget", 0) + 1
            return
        self.calls += 1
        self.cached += int(res.cached)
        self.retries += res.retries
        self.prompt_tokens += res.prompt_tokens
        self.completion_tokens += res.completion_tokens
        self.cost_usd += res.cost
        self.cached_cost_usd += getattr(res, "cached_cost", 0.0)
        if res.error_kind:
            self.errors[res.error_kind] = self.errors.get(res.error_kind, 0) + 1
        if served := getattr(res, "served", None):
            self.served[served] = self.served.get(served, 0) + 1

    def merge(self, other: Usage) -> None:
        """Add another usage record into this one."""
        self.calls += other.calls
        self.cached += other.cached
        self.retries += other.retries
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.cost_usd += other.cost_usd
        self.cached_cost_usd += other.cached_cost_usd
        for k, v in other.errors.items():
            self.errors[k] = self.errors.get(k, 0) + v
        for k, v in other.served.items():
            self.served[k] = self.served.get(k, 0) + v


class ArticleResult(BaseModel):
    """What generation produced for one article: persisted as one row when it finishes."""

    model_config = ConfigDict(extra="forbid")

    article_id: str
    """The article."""
    text_sha256: str
    """Hash of the text it was generated from (a changed text is generated again)."""
    status: str = "ok"
    """``ok``, or ``failed`` when the generator's answer was unusable as a whole."""
    error_kind: str | None = None
    """Why the generator's answer was unusable (invalid_json, refusal, length, schema, ...)."""
    error: str | None = None
    """The error message."""
    short: bool = False
    """The generator returned fewer questions than asked."""
    truncated: bool = False
    """The generator's answer was cut by the length limit and its complete part was kept."""
    candidates: list[Candidate] = Field(default_factory=list)
    """Every candidate with its verdicts."""
    usage: dict[str, Usage] = Field(default_factory=dict)
    """Usage per agent (generator, validator, probe)."""
