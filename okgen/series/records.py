"""On-disk records of a series: its manifest (``series/<name>/manifest.json``)."""

from __future__ import annotations

import datetime as dt
import json

from pydantic import Field, field_validator

from okgen.hashing import canonical_json, sha256_text
from okgen.schema import Record, to_utc

SERIES_SCHEMA_VERSION = 1
COMBINED_VERSION = "okgen-series-v1"
# What `okgen series build` compares across members; names accepted by --allow-differ.
CHECKED_FIELDS = ("generator", "validator", "prompts", "feeds")


class SeriesMember(Record):
    """One day of a series."""

    date: dt.date
    """News date of the snapshot."""
    signature: str
    """Long-form snapshot signature."""
    content_hash: str
    """The snapshot's content hash (also in its signature)."""
    name: str
    """Snapshot folder name."""
    questions: int
    """Question count."""


class SeriesManifest(Record):
    """``manifest.json`` of a series folder."""

    schema_version: int = SERIES_SCHEMA_VERSION
    """Series manifest schema version."""
    kind: str = "okgen-series"
    """File kind."""
    name: str
    """Series name."""
    signature: str
    """Long-form series signature."""
    start: dt.date
    """First date asked for."""
    end: dt.date
    """Last date asked for."""
    members: tuple[SeriesMember, ...]
    """Member snapshots, one per day, in date order."""
    missing_days: tuple[dt.date, ...] = ()
    """Days between start and end without a snapshot (only when gaps were allowed)."""
    allowed_differences: tuple[str, ...] = ()
    """Fields allowed to differ between members (generator, validator, prompts, feeds)."""
    values: dict[str, list[str]] = Field(default_factory=dict)
    """The distinct values of every checked field across members."""
    content_hash: str
    """Combined hash over the ordered members (also in the signature)."""
    created_at: dt.datetime
    """When the series was built, UTC."""
    okgen_version: str
    """okgen version that built it."""
    manifest_sha256: str = ""
    """SHA-256 of this manifest's canonical JSON without this field."""

    _utc = field_validator("created_at")(classmethod(lambda cls, v: to_utc(v)))


def combined_hash(members: tuple[SeriesMember, ...] | list[SeriesMember]) -> str:
    """SHA-256 over the ordered (date, snapshot signature, content hash) of every member."""
    lines = [COMBINED_VERSION] + [f"{m.date} {m.content_hash} {m.signature}" for m in members]
    return sha256_text("\n".join(lines) + "\n")


def manifest_hash(manifest: SeriesManifest) -> str:
    """SHA-256 of a series manifest's canonical JSON without ``manifest_sha256``."""
    data = manifest.model_dump(mode="json")
    data.pop("manifest_sha256", None)
    return sha256_text(canonical_json(data))


def manifest_bytes(manifest: SeriesManifest) -> bytes:
    """The exact bytes of a series ``manifest.json``."""
    return (json.dumps(manifest.model_dump(mode="json"), sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
