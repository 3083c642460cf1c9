"""Ingest settings: the ``[ingest]`` section of ``okgen.toml`` (resolved by :mod:`okgen.config`).

Every key is optional; unknown keys are an error (a typo must not silently fall back to a
default). Settings that change which articles are stored (filters, caps, dedup thresholds,
timezone) are part of :attr:`IngestConfig.content_hash`; speed and politeness settings are not.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import json
from typing import Annotated, Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, field_validator
from pydantic_settings import NoDecode

from okgen import __version__
from okgen.errors import ConfigError
from okgen.hashing import sha256_json

DEFAULT_USER_AGENT = f"okgen/{__version__} (+https://github.com/okgen/okgen; news benchmark builder)"
NETWORK_KEYWORDS = ("loopback", "private", "link-local")
# The filters that can be switched off (no_content and no_title always apply).
FILTER_NAMES = ("video", "live_blog", "cookie_wall", "paywall", "too_short", "wrong_language")
# Keys whose value changes what is stored (hashed into content_hash).
CONTENT_KEYS = (
    "timezone", "min_words", "languages", "max_per_outlet", "near_dup_threshold", "num_perm",
    "shingle_size", "dedup_days", "future_tolerance", "favor_precision", "favor_recall",
    "include_tables", "paywall_max_words", "filters",
)


def split_list(value: Any) -> Any:
    """A list given as one string (the environment, a flag): a JSON array or comma-separated."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    if text.startswith("["):
        try:
            return json.loads(text)
        except ValueError:
            raise ValueError(f"{value!r} is not a JSON array") from None
    items = [x.strip() for x in text.split(",")] if text else []
    if "" in items:
        raise ValueError(f"{value!r} has an empty item (items are separated by single commas)")
    return items


# A list setting: a TOML array in okgen.toml; one string (environment, flag) is split.
Names = Annotated[tuple[str, ...], NoDecode, BeforeValidator(split_list)]


class IngestConfig(BaseModel):
    """Settings of the ingest stage (``okgen.toml`` ``[ingest]``)."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    # -- window
    timezone: str = "UTC"
    """Timezone that defines the news day D (IANA name)."""
    future_tolerance: float = Field(600.0, ge=0)
    """Seconds a feed date may lie after the fetch time (clock skew) before it is ignored."""

    # -- politeness and robustness
    user_agent: str = DEFAULT_USER_AGENT
    """User-Agent header, also matched against robots.txt groups."""
    concurrency: int = Field(32, ge=1, le=1024)
    """Requests in flight at once, all hosts together."""
    per_host_concurrency: int = Field(2, ge=1, le=1024)
    """Requests in flight at once to one host."""
    per_host_delay: float = Field(1.0, ge=0)
    """Seconds between the starts of two requests to the same host."""
    max_crawl_delay: float = Field(10.0, ge=0)
    """Upper bound on a robots.txt Crawl-delay that is honoured."""
    respect_robots: bool = True
    """Check robots.txt before fetching article pages."""
    connect_timeout: float = Field(10.0, gt=0)
    """Seconds to establish a connection."""
    read_timeout: float = Field(20.0, gt=0)
    """Seconds without receiving a byte before a request times out."""
    total_timeout: float = Field(60.0, gt=0)
    """Seconds one attempt may take in all (guards against slow-drip servers)."""
    max_retries: int = Field(3, ge=0, le=20)
    """Retries after a timeout, connection error, 429 or 5xx."""
    backoff_base: float = Field(1.0, ge=0)
    """First backoff in seconds; doubled at each retry, with full jitter."""
    backoff_max: float = Field(30.0, ge=0)
    """Upper bound of one backoff."""
    max_retry_after: float = Field(120.0, ge=0)
    """A Retry-After longer than this gives up instead of waiting."""
    max_bytes: int = Field(5_000_000, ge=1024)
    """Largest article body read (decoded bytes); larger ones are dropped while streaming."""
    feed_max_bytes: int = Field(10_000_000, ge=1024)
    """Largest feed body read."""
    max_redirects: int = Field(5, ge=0, le=30)
    """Redirects followed before giving up."""
    allow_networks: Names = ()
    """Address ranges fetched although not public: ``loopback``, ``private``, ``link-local`` or CIDRs."""

    # -- extraction and filters
    extract_workers: int = Field(0, ge=0, le=256)
    """Extraction processes (0: one per CPU)."""
    extract_nice: int = Field(10, ge=0, le=19)
    """Niceness added to extraction processes, so fetching gets the CPU first when both need it."""
    favor_precision: bool = False
    """trafilatura: prefer less but cleaner text."""
    favor_recall: bool = False
    """trafilatura: prefer more text when unsure."""
    include_tables: bool = True
    """trafilatura: keep table text."""
    min_words: int = Field(120, ge=0)
    """Articles with fewer words are filtered (too_short)."""
    paywall_max_words: int = Field(400, ge=0)
    """A page showing a paywall notice is a stub when its text has fewer words than this."""
    languages: Names = ()
    """Accepted languages (ISO 639-1); empty: the outlet's language from the feed list."""
    filters: Names = FILTER_NAMES
    """Filters applied (no_content always is)."""

    # -- caps and dedup
    max_per_outlet: int = Field(30, ge=1)
    """Articles stored per outlet and day (an outlet's ``max_per_day`` overrides it)."""
    fetch_factor: float = Field(2.0, ge=1.0)
    """Pages fetched per outlet at most ``fetch_factor`` times its cap (filters drop some)."""
    near_dup_threshold: float = Field(0.8, gt=0, le=1)
    """Estimated Jaccard similarity of word shingles above which two texts are near-duplicates."""
    num_perm: int = Field(128, ge=16, le=1024)
    """MinHash permutations."""
    shingle_size: int = Field(5, ge=1, le=20)
    """Words per shingle."""
    dedup_days: int = Field(10, ge=0)
    """Days before D whose articles new ones are compared against."""

    # -- storage and import
    warc: bool = True
    """Capture every response in the day's WARC file."""
    import_mapping: dict[str, str] = Field(default_factory=dict)
    """Import field mapping (``title = "headline"``), see :mod:`okgen.ingest.importer`."""
    fail_when_all_feeds_fail: bool = True
    """Raise (exit 1) when no feed could be read; the run's work is kept."""

    @field_validator("timezone")
    @classmethod
    def _tz(cls, v: str) -> str:
        try:
            ZoneInfo(v)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"unknown timezone {v!r}") from None
        return v

    @field_validator("allow_networks")
    @classmethod
    def _nets(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        for item in v:
            if item in NETWORK_KEYWORDS:
                continue
            try:
                ipaddress.ip_network(item, strict=False)
            except ValueError:
                raise ValueError(f"{item!r} is neither one of {', '.join(NETWORK_KEYWORDS)} nor a CIDR") from None
        return v

    @field_validator("filters")
    @classmethod
    def _filters(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        # A misspelt name would silently switch its filter off.
        unknown = [x for x in v if x not in FILTER_NAMES]
        if unknown:
            raise ValueError(f"unknown filter {unknown[0]!r} (known: {', '.join(FILTER_NAMES)})")
        return v

    @field_validator("languages")
    @classmethod
    def _langs(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(x.lower().split("-")[0] for x in v)

    @property
    def tz(self) -> ZoneInfo:
        """The news-day timezone."""
        return ZoneInfo(self.timezone)

    @property
    def content_hash(self) -> str:
        """SHA-256 over the settings that change which articles are stored."""
        data = self.model_dump(mode="json")
        return sha256_json({k: data[k] for k in CONTENT_KEYS})

    def workers(self) -> int:
        """Number of extraction processes."""
        import os

        return self.extract_workers or max(1, os.cpu_count() or 1)

    def local_date(self, when: dt.datetime) -> dt.date:
        """The news date of an instant in the configured timezone."""
        return when.astimezone(self.tz).date()

    def day_start(self, date: dt.date) -> dt.datetime:
        """Midnight starting ``date`` in the configured timezone, as UTC."""
        return dt.datetime.combine(date, dt.time(0), self.tz).astimezone(dt.timezone.utc)


def make_config(data: dict[str, Any] | None = None, *, where: str = "[ingest]", **overrides: Any) -> IngestConfig:
    """Validate settings into an :class:`IngestConfig`.

    Raises:
        ConfigError: an unknown key or a bad value (one line naming the key).
    """
    merged = dict(data or {})
    merged.update({k: v for k, v in overrides.items() if v is not None})
    try:
        return IngestConfig.model_validate(merged)
    except ValidationError as e:
        err = e.errors()[0]
        loc = ".".join(str(x) for x in err.get("loc", ())) or "value"
        msg = "unknown key" if err.get("type") == "extra_forbidden" else err["msg"]
        raise ConfigError(f"{where}: {loc}: {msg}") from None


def config_for(workspace: Any, **overrides: Any) -> IngestConfig:
    """The workspace's ingest settings: defaults < ``okgen.toml`` ``[ingest]`` < environment <
    ``overrides`` (flags; None values are unset), see :mod:`okgen.config`."""
    return workspace.settings(ingest=overrides).ingest
