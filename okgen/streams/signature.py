"""The stream signature (same rules as snapshot and series signatures: both forms parse back)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import field_validator

from okgen.signature import _SignatureBase  # the shared format/parse machinery


class StreamSignature(_SignatureBase):
    """A stream: its series (or import), extractor, rules, and the hash of its files."""

    KIND: ClassVar[str] = "stream signature"
    FIELDS: ClassVar[tuple[tuple[str, str, str], ...]] = (
        ("name", "stream", "st"),
        ("origin", "origin", "o"),
        ("series_hash", "series", "sh"),
        ("intervals", "intervals", "ni"),
        ("extractor", "extractor", "x"),
        ("min_changes", "changes", "mc"),
        ("min_outlets", "outlets", "mo"),
        ("seed", "seed", "s"),
        ("questions", "n", "n"),
        ("content_hash", "hash", "h"),
        ("version", "version", "v"),
    )

    name: str
    """Stream name."""
    origin: str
    """``series`` or ``oaks``."""
    series_hash: str
    """First 12 hex digits of the series' combined hash (``none`` for imports)."""
    intervals: int
    """Number of intervals."""
    extractor: str
    """Fact extractor id (``oaks`` for imports)."""
    min_changes: int
    """Least answer changes for a streamed track."""
    min_outlets: int
    """Outlets needed to corroborate a change."""
    seed: int
    """Seed of option order and distractors."""
    questions: int
    """Streamed questions."""
    content_hash: str
    """SHA-256 over the stream's files."""
    version: str
    """okgen version."""

    @field_validator("intervals", "min_changes", "min_outlets", "questions")
    @classmethod
    def _non_negative(cls, v: int) -> int:
        if v < 0:
            raise ValueError("must be >= 0")
        return v


def looks_like_stream_signature(text: str) -> bool:
    """True for text that starts like a stream signature."""
    return text.startswith(("stream:", "st:"))
