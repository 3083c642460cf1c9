"""On-disk records of a stream (``streams/<name>/``): manifest, tracks, questions, documents.

A stream folder holds ``manifest.json`` (:class:`StreamManifest`, with the SHA-256 of every
other file), ``tracks.jsonl`` (every track followed, streamed or not, with the reason when not),
``questions.jsonl`` (one :class:`StreamQuestion` per streamed track: the same question asked at
every interval) and ``documents.jsonl`` (the text of each interval a model may read: the
articles that state a fact, or an imported OAKS document's chunks).
"""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Literal

from pydantic import Field, field_validator, model_validator

from okgen.hashing import canonical_json, sha256_text
from okgen.schema import Record, to_utc

STREAM_SCHEMA_VERSION = 1
NOT_KNOWN = "not known yet"
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
DayStatus = Literal["none", "new", "stays", "changes", "uncorroborated", "retrospective", "conflict"]


class TrackDay(Record):
    """What the news said about one track on one interval."""

    interval: int
    """Interval index (0-based)."""
    status: DayStatus
    """``none`` (not reported), ``new`` (first value, corroborated), ``stays`` (the current
    value again), ``changes`` (a corroborated new value), ``uncorroborated`` (a new value from
    fewer outlets than required: ignored), ``retrospective`` (only an earlier value reported
    late: ignored), ``conflict`` (two values the same day: the track is excluded)."""
    reported: dict[str, list[str]] = Field(default_factory=dict)
    """Value key -> outlets reporting it that day (retrospective reports left out)."""
    value: str | None = None
    """The track's value after this interval (a value key; None: not known yet)."""
    rule: Literal["outlets", "validator"] | None = None
    """On a ``new`` or ``changes`` day, what accepted the value: ``outlets`` (reported by at least
    ``min_outlets`` outlets) or ``validator`` (one outlet, judged a real change by the
    transition validator)."""
    note: str | None = None
    """The transition validator's judgement of the day's new value (accepted or rejected, with
    its reason), when it was asked."""


class Track(Record):
    """One (subject, relation) followed over the intervals of a stream."""

    id: str
    """``<relation>/<subject_key>``."""
    subject: str
    """Subject as written."""
    relation: str
    """Relation (``okgen.facts.RELATIONS``)."""
    object_kind: str
    """Kind of its values."""
    days: tuple[TrackDay, ...]
    """One entry per interval."""
    labels: dict[str, str] = Field(default_factory=dict)
    """Value key -> how the value is shown (``125%``, ``Rory McIlroy``)."""
    changes: int = 0
    """Intervals whose gold value differs from the one before (``not known yet`` -> first value counts)."""
    excluded: str | None = None
    """Why the track is not streamed (None when it is)."""

    @property
    def gold(self) -> list[str | None]:
        """The value key per interval (None: not known yet)."""
        return [d.value for d in self.days]


class StreamQuestion(Record):
    """A question asked at every interval of a stream."""

    id: str
    """Stable id (hash of the stream's track id, or the imported question id)."""
    track: str
    """Track id (``relation/subject``), or ``oaks`` for an imported question."""
    question: str
    """Question text."""
    choices: tuple[str, ...]
    """Options, in a seeded order fixed at build time."""
    answers: tuple[int, ...]
    """Index of the one valid option at each interval."""
    not_known_index: int | None = None
    """Index of the ``not known yet`` option, when there is one."""
    changes: int
    """Number of answer changes between consecutive intervals."""
    sources: dict[str, dict[str, list[str]]] = Field(default_factory=dict)
    """Option -> interval index (as a string) -> evidence sentences (OAKS's ``option_sources``)."""

    @model_validator(mode="after")
    def _check(self) -> StreamQuestion:
        n = len(self.choices)
        if len(set(self.choices)) != n:
            raise ValueError(f"question {self.id}: options repeat")
        if any(not 0 <= a < n for a in self.answers):
            raise ValueError(f"question {self.id}: an answer index is outside the options")
        return self


class StreamDocument(Record):
    """A text a model may read from its interval on."""

    id: str
    """Article id, or ``<bid>/<chunk>`` for an imported chunk."""
    interval: int
    """Interval index it belongs to."""
    outlet: str | None = None
    """Outlet, for articles."""
    title: str | None = None
    """Headline, for articles."""
    text: str
    """The text."""


class StreamInterval(Record):
    """One interval (a news day, or an imported chunk)."""

    index: int
    """0-based position."""
    date: dt.date | None = None
    """News date (None for imported chunks)."""
    label: str
    """How it is shown: the date, or ``chunk N``."""


class StreamManifest(Record):
    """``manifest.json`` of a stream folder."""

    schema_version: int = STREAM_SCHEMA_VERSION
    """Stream manifest schema version."""
    kind: str = "okgen-stream"
    """File kind."""
    name: str
    """Stream name."""
    signature: str
    """Long-form stream signature."""
    origin: Literal["series", "oaks"]
    """Built from a series, or imported from an OAKS file."""
    series: str | None = None
    """The series' signature (built streams)."""
    series_hash: str | None = None
    """The series' combined hash (built streams)."""
    intervals: tuple[StreamInterval, ...]
    """The intervals in order."""
    extractor: str
    """Fact extractor id (``oaks`` for imports)."""
    min_changes: int
    """Least answer changes for a track to be streamed."""
    min_outlets: int
    """Outlets that must report a new value the same day for it to count as a change."""
    validator: str | None = None
    """Transition validator (``backend/model+<prompt hash>``) that judged single-outlet changes, if any."""
    seed: int
    """Seed of option order and distractors."""
    counts: dict[str, int] = Field(default_factory=dict)
    """facts, tracks, transitions, questions, and excluded tracks by reason."""
    files: dict[str, str] = Field(default_factory=dict)
    """File name -> SHA-256 of every other file of the folder."""
    oaks_meta: dict[str, object] | None = None
    """The imported document's ``meta`` (imports)."""
    content_hash: str
    """SHA-256 over the files' hashes (also in the signature)."""
    created_at: dt.datetime
    """When it was built, UTC."""
    okgen_version: str
    """okgen version that built it."""
    manifest_sha256: str = ""
    """SHA-256 of this manifest's canonical JSON without this field."""

    _utc = field_validator("created_at")(classmethod(lambda cls, v: to_utc(v)))


def content_hash(files: dict[str, str]) -> str:
    """SHA-256 over ``name sha256`` lines of the stream's files, sorted by name."""
    return sha256_text("okgen-stream-v1\n" + "".join(f"{k} {v}\n" for k, v in sorted(files.items())))


def manifest_hash(m: StreamManifest) -> str:
    """SHA-256 of a manifest's canonical JSON without ``manifest_sha256``."""
    data = m.model_dump(mode="json")
    data.pop("manifest_sha256", None)
    return sha256_text(canonical_json(data))


def manifest_bytes(m: StreamManifest) -> bytes:
    """The exact bytes of ``manifest.json``."""
    return (json.dumps(m.model_dump(mode="json"), sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
