"""``okgen gc``: retention of raw captures, old retrieval indexes and ingest working state.

Snapshots and their archives are releases and are never deleted here. What goes, for days
before ``today - keep_days``:

* raw WARC captures (``data/warc/okgen-<date>.warc.gz``);
* retrieval index folders of snapshots dated before the cutoff, and of snapshots no longer
  present in the workspace;
* stored encodings (``data/vectors``) last used by a window dated before the cutoff: no kept
  index needs them (a kept index's vectors are marked with its date, or a later one);
* the ingest stage's per-item resume state and fetch log of those days;
* with ``articles=True``, stored articles dated more than 10 days before the cutoff (the
  10-day window that dedup and the kept days' snapshots need is always kept).
"""

from __future__ import annotations

import datetime as dt
import logging
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from okgen.errors import ConfigError, OkgenError
from okgen.settings import Workspace

log = logging.getLogger(__name__)
_WARC = re.compile(r"^okgen-(\d{4}-\d{2}-\d{2})\.warc\.gz$")
WINDOW_DAYS = 10


@dataclass
class GcReport:
    """What was (or, in a dry run, would be) deleted."""

    cutoff: dt.date
    dry_run: bool
    warc: list[str] = field(default_factory=list)
    indexes: list[str] = field(default_factory=list)
    vectors: int = 0
    store: dict[str, int] = field(default_factory=dict)
    bytes_freed: int = 0
    free_bytes: int = 0
    """Space the article store's file keeps from deleted rows (``--compact`` gives it back)."""
    warning: str | None = None
    """A dry run's note that the real run would be refused (the cutoff passes all the news)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"cutoff": str(self.cutoff), "dry_run": self.dry_run, "warc": self.warc, "indexes": self.indexes,
                "vectors": self.vectors, "store": self.store, "bytes_freed": self.bytes_freed, "store_free_bytes": self.free_bytes, "warning": self.warning}


def _size(p: Path) -> int:
    if p.is_file():
        return p.stat().st_size
    return sum(f.stat().st_size for f in p.rglob("*") if f.is_file())


def collect_garbage(ws: Workspace, keep_days: int, *, today: dt.date | None = None, dry_run: bool = False,
                    articles: bool = False, force: bool = False, compact: bool = False) -> GcReport:
    """Delete what is older than ``keep_days`` days (see the module docstring).

    The days count back from today. A workspace whose newest news day is before the cutoff (a
    backfill of past news) would lose all of it: refused without ``force`` (a dry run lists it).

    Raises:
        ConfigError: ``keep_days`` is negative, or the cutoff passes the newest news day.
    """
    if keep_days < 0:
        raise ConfigError(f"--keep-days must be >= 0, got {keep_days}")
    today = today or dt.datetime.now(dt.timezone.utc).date()
    cutoff = today - dt.timedelta(days=keep_days)
    rep = GcReport(cutoff=cutoff, dry_run=dry_run)
    dates = _snapshot_dates(ws)
    newest = _newest_news_day(ws, dates)
    if newest is not None and newest < cutoff and not force:
        refusal = (f"the cutoff {cutoff} (today minus {keep_days} days) is after the newest news day here, "
                   f"{newest}: all of this news would go. --keep-days counts from today: --keep-days "
                   f"{(today - newest).days + keep_days} keeps as many days of it; --force deletes it all")
        if not dry_run:
            raise ConfigError(refusal)
        rep.warning = f"without --dry-run this is refused: {refusal}"
    if ws.warc_dir.is_dir():
        for p in sorted(ws.warc_dir.iterdir()):
            m = _WARC.match(p.name)
            if m and dt.date.fromisoformat(m.group(1)) < cutoff:
                rep.warc.append(p.name)
                rep.bytes_freed += _size(p)
                if not dry_run:
                    p.unlink()
    if ws.index_dir.is_dir():
        for folder in sorted(ws.index_dir.iterdir()):
            if not folder.is_dir() or folder.name.startswith("."):
                continue
            date = dates.get(folder.name)
            if date is None or date < cutoff:
                rep.indexes.append(folder.name + ("" if date else " (no such snapshot)"))
                rep.bytes_freed += _size(folder)
                if not dry_run:
                    shutil.rmtree(folder)
    from okgen.retrieval.vectors import collect_vectors

    rep.vectors, freed = collect_vectors(ws, cutoff, dry_run=dry_run)
    rep.bytes_freed += freed
    if ws.db_path.is_file():
        from okgen.ingest.store import ArticleStore

        before = _db_size(ws.db_path)
        with ArticleStore(ws.db_path) as store:
            rep.store = store.prune(cutoff, articles_before=cutoff - dt.timedelta(days=WINDOW_DAYS) if articles else None,
                                    dry_run=dry_run)
            rep.free_bytes = store.free_bytes()
            if compact and not dry_run:
                import sqlite3

                from okgen.daily.lock import RunLock

                # VACUUM rewrites the whole file (room for a copy needed) and holds the database:
                # never under a daily run, whose writes would time out.
                with RunLock(ws.data_dir / "locks" / "daily.lock", message="okgen daily is running in this "
                             "workspace{holder}: compact the store (okgen gc --compact) when it has finished"):
                    try:
                        done = store.compact()
                    except sqlite3.OperationalError as e:  # another process reads or writes it, or no room
                        raise OkgenError(f"the article store could not be compacted now ({e}); nothing else is "
                                         "lost: rerun okgen gc --compact when no okgen runs, with room for a copy "
                                         "of data/okgen.sqlite") from None
                if done:
                    rep.bytes_freed += max(0, before - _db_size(ws.db_path))
                    rep.free_bytes = store.free_bytes()
                else:
                    log.warning("gc: the article store was compacted, but a reader kept its log from being folded "
                                "back; the space comes back when no okgen runs")
    log.info("gc: cutoff %s, %d WARC files, %d index folders, %d vectors, store %s%s", cutoff, len(rep.warc),
             len(rep.indexes), rep.vectors, rep.store, " (dry run)" if dry_run else "")
    return rep


def _newest_news_day(ws: Workspace, snapshot_dates: dict[str, dt.date]) -> dt.date | None:
    """The newest day of news the workspace holds: snapshots, captures, stored articles."""
    days = [*snapshot_dates.values()]
    if ws.warc_dir.is_dir():
        days += [dt.date.fromisoformat(m.group(1)) for p in ws.warc_dir.iterdir() if (m := _WARC.match(p.name))]
    if ws.db_path.is_file():
        from okgen.ingest.store import ArticleStore

        with ArticleStore(ws.db_path) as store:
            days += [d for d, n in store.dates() if n]
    return max(days, default=None)


def _db_size(path: Path) -> int:
    """The database file and its write-ahead log, in bytes."""
    return sum(p.stat().st_size for p in (path, path.with_name(path.name + "-wal")) if p.exists())


def _snapshot_dates(ws: Workspace) -> dict[str, dt.date]:
    """First 12 hex digits of each present snapshot's content hash -> its date: a folder, or a
    catalogued archive it can be restored from (``okgen snapshot show`` re-extracts it)."""
    from okgen.snapshot.store import catalogue, list_snapshots

    out: dict[str, dt.date] = {}
    cat = catalogue(ws)
    for entry, snap in list_snapshots(ws):
        if snap is not None:
            key, date = snap.manifest.content_hash[:12], snap.manifest.date
        elif entry is not None and entry.archive and (a := cat.resolve_path(entry.archive)) is not None and a.is_file():
            key, date = entry.content_hash[:12], entry.date
        else:
            continue
        out[key] = max(out.get(key, date), date)
    return out
