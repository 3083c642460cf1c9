"""The closing summary of an ingest run: counts per stage, filter reasons, duplicates, feeds."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any


@dataclass
class IngestSummary:
    """Counts of one ingest run, stage by stage.

    ``fetch_failed``, ``filtered``, ``duplicates`` and ``import_failed`` map a reason to a count.
    Counts are of this run; ``stored_total`` is every article stored for the date so far.
    """

    date: str
    mode: str
    run_id: str = ""
    feeds_total: int = 0
    feeds_ok: int = 0
    feeds_failed: int = 0
    feeds_not_modified: int = 0
    feeds_bozo: int = 0
    feeds_truncated: int = 0
    failed_feeds: list[dict[str, Any]] = field(default_factory=list)
    entries: int = 0
    duplicate_entries: int = 0
    in_window: int = 0
    out_of_window: int = 0
    undated: int = 0
    future_dated: int = 0
    resumed: int = 0
    over_budget: int = 0
    fetched: int = 0
    fetch_failed: Counter[str] = field(default_factory=Counter)
    extracted: int = 0
    extract_failed: int = 0
    filtered: Counter[str] = field(default_factory=Counter)
    duplicates: Counter[str] = field(default_factory=Counter)
    over_cap: int = 0
    stored: int = 0
    stored_total: int = 0
    by_outlet: Counter[str] = field(default_factory=Counter)
    date_sources: Counter[str] = field(default_factory=Counter)
    import_records: int = 0
    import_failed: Counter[str] = field(default_factory=Counter)
    elapsed_s: float = 0.0
    warc: str | None = None
    feeds_hash: str | None = None
    config_hash: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready data (counters as sorted dicts)."""
        out: dict[str, Any] = {}
        for k, v in self.__dict__.items():
            if isinstance(v, Counter):
                out[k] = dict(sorted(v.items()))
            elif isinstance(v, float):
                out[k] = round(v, 3)
            else:
                out[k] = v
        out["filtered_total"] = sum(self.filtered.values())
        out["duplicates_total"] = sum(self.duplicates.values())
        out["fetch_failed_total"] = sum(self.fetch_failed.values())
        return out

    def rows(self) -> list[tuple[str, Any]]:
        """(label, value) lines for the readable summary."""
        def fmt(c: Counter[str]) -> str:
            total = sum(c.values())
            return f"{total}" + (f"  ({', '.join(f'{k} {v}' for k, v in sorted(c.items()))})" if c else "")

        rows: list[tuple[str, Any]] = [("date", self.date), ("mode", self.mode)]
        if self.mode != "import":
            rows += [
                ("feeds ok / failed", f"{self.feeds_ok} / {self.feeds_failed}" + _notes(
                    (self.feeds_not_modified, "not modified"), (self.feeds_truncated, "truncated"),
                    (self.feeds_bozo, "malformed, read as recovered"))),
                ("entries", f"{self.entries}" + (f"  ({self.duplicate_entries} repeated)" if self.duplicate_entries else "")),
                ("in window", f"{self.in_window}  (+{self.undated} undated, {self.out_of_window} outside D, "
                              f"{self.future_dated} future-dated)"),
                ("already done", self.resumed),
                ("over fetch budget", self.over_budget),
                ("fetched", self.fetched),
                ("fetch failed", fmt(self.fetch_failed)),
            ]
        else:
            rows += [("records", self.import_records), ("records failed", fmt(self.import_failed)),
                     ("outside D", self.out_of_window), ("already done", self.resumed)]
        rows += [
            ("extracted", self.extracted),
            ("filtered", fmt(self.filtered)),
            ("duplicates", fmt(self.duplicates)),
            ("over outlet cap", self.over_cap),
            ("stored", f"{self.stored}  ({self.stored_total} for the date in all)"),
        ]
        if self.failed_feeds:
            rows.append(("failed feeds", "; ".join(f"{f['outlet']}: {f['error']}" for f in self.failed_feeds[:10])))
        if self.warc:
            rows.append(("warc", self.warc))
        rows.append(("elapsed", f"{self.elapsed_s:.1f} s"))
        return rows


def _notes(*counts: tuple[int, str]) -> str:
    """``  (3 not modified; 1 malformed, read as recovered)`` for the non-zero counts, else ""."""
    said = [f"{n} {what}" for n, what in counts if n]
    return f"  ({'; '.join(said)})" if said else ""
