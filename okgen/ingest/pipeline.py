"""``run_ingest``: one date's ingest, live from the feeds, replayed from a WARC file, or imported.

The run is resumable: every entry's outcome is recorded as soon as it is known, a rerun skips
entries that are settled (stored, staged, filtered, duplicate, or failed for good) and retries
transient failures, and the final dedup-and-store step runs in one transaction. However often a
run is killed and restarted, every article is stored once.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import os
import time
from pathlib import Path
from typing import Any

from okgen import __version__
from okgen.daily.lock import RunLock
from okgen.errors import ConfigError, NotFoundError, OkgenError
from okgen.files import record_line
from okgen.hashing import sha256_file, sha256_text
from okgen.ingest.config import IngestConfig, config_for
from okgen.ingest.dedup import canonicalize_url, minhash_signature, norm_text_hash
from okgen.ingest.extract import ExtractOptions, Extractor
from okgen.ingest.feeds import FeedList, load_feed_list
from okgen.ingest.filters import apply_filters, detect_language
from okgen.ingest.finalize import finalize_date
from okgen.ingest.live import DayRun, is_settled
from okgen.ingest.store import ArticleStore
from okgen.ingest.summary import IngestSummary
from okgen.ingest.warc import WarcArchive, warc_path
from okgen.schema import Article, article_id, utcnow
from okgen.settings import Workspace

log = logging.getLogger(__name__)


class IngestError(OkgenError):
    """The ingest run failed as a whole (e.g. no feed could be read); its completed work is kept."""

    def __init__(self, message: str, summary: IngestSummary | None = None):
        super().__init__(message)
        self.summary = summary


def run_ingest(date: dt.date, workspace: Workspace, *, feeds: str | Path | None = None,
               replay: str | Path | None = None, import_file: str | Path | None = None,
               import_mapping: dict[str, str] | None = None, config: IngestConfig | None = None,
               progress: bool = False, undated_on_date: bool = True) -> IngestSummary:
    """Ingest the articles of news date ``date`` into the workspace's article store.

    Args:
        date: news date D (articles published within D in the configured timezone).
        workspace: where the store (``data/okgen.sqlite``) and WARC files (``data/warc``) live.
        feeds: a feed list (TOML or OPML); None: the packaged default (or, on replay, the
            list embedded in the WARC file).
        replay: rebuild from this WARC file instead of the network.
        import_file: load this JSON/JSONL news dump instead of the feeds.
        import_mapping: field mapping for ``import_file`` (overrides ``[ingest] import_mapping``).
        config: settings; default: the workspace's ``okgen.toml`` ``[ingest]`` (or defaults).
        progress: show progress bars on stderr (when it is a terminal).
        undated_on_date: an imported record without a date is taken as published on ``date``
            (a one-day dump imported with an explicit ``--date``); False: it fails as
            ``missing_date`` (the date was only the command's default, no statement about the dump).

    Returns:
        The run's :class:`IngestSummary`.

    Raises:
        ConfigError: bad settings, feed list or mapping; both ``replay`` and ``import_file``.
        NotFoundError: the replay or import file does not exist.
        IngestError: every feed failed (the run's work is still stored).
        LockedError: another process is ingesting the same date in this workspace.
    """
    cfg = config or config_for(workspace)
    if replay is not None and import_file is not None:
        raise ConfigError("--replay and --import cannot be used together")
    for what, path in (("WARC file", replay), ("import file", import_file)):
        if path is not None and not Path(path).is_file():
            raise NotFoundError(f"{path}: no such {what}")
    if import_file is not None:
        _check_import_file(Path(import_file))
    mode = "replay" if replay is not None else "import" if import_file is not None else "live"
    run_id = f"{date.isoformat()}-{utcnow().strftime('%Y%m%dT%H%M%SZ')}-{os.getpid()}"
    summary = IngestSummary(date=date.isoformat(), mode=mode, run_id=run_id, config_hash=cfg.content_hash)
    t0 = time.monotonic()
    # A feed list that cannot be read, or a --replay file that is no WARC, is said before the
    # workspace's database and lock are made: a refused run creates nothing.
    feed_list, archive = _feed_list_for(feeds, replay) if import_file is None else (None, None)
    with _date_lock(workspace, date), ArticleStore(workspace.db_path) as store:
        store.start_run(run_id, date, mode)
        caps: dict[str, int] = {}
        if import_file is not None:
            # The signature's `feeds` of an imported day: the dump itself (the same for every
            # import of the same file, by `okgen ingest` or `okgen daily`).
            summary.feeds_hash = sha256_text(f"import:{sha256_file(import_file)}")
            _run_import(date, Path(import_file), import_mapping, cfg, store, summary, undated_on_date,
                        names=_outlet_names(feeds))
        else:
            assert feed_list is not None
            summary.feeds_hash = feed_list.hash
            caps = {o.id: o.max_per_day for o in feed_list.outlets if o.max_per_day}
            asyncio.run(_run_fetch(date, workspace, cfg, feed_list, archive, store, summary, run_id, progress))
        finalize_date(store, date, cfg, caps, summary)
        summary.stored_total = store.count(date)
        summary.elapsed_s = time.monotonic() - t0
        store.finish_run(run_id, summary.to_dict())
    log.info("ingest %s (%s): stored %d, %d in all for the date", date, mode, summary.stored, summary.stored_total)
    if mode != "import" and summary.feeds_failed:
        message = failed_feeds_message(summary)
        if cfg.fail_when_all_feeds_fail and summary.feeds_total and not summary.feeds_ok:
            raise IngestError(message, summary)
        log.warning("%s", message)
    return summary


def _check_import_file(path: Path) -> None:
    """Refuse a dump that is not text or not JSON/JSONL before the store is opened, so a bad file
    creates nothing (the same error ``_run_import`` would raise; the dump is read twice).

    Raises:
        ImportFormatError: not UTF-8, empty, or neither JSON nor JSONL.
    """
    from okgen.ingest.importer import iter_records

    next(iter(iter_records(path)), None)


NETWORK_ERRORS = ("dns_error", "connect_error", "timeout", "blocked_address")


def failed_feeds_message(summary: IngestSummary) -> str:
    """One line for the failed feeds of a run, with what to do when it looks like no network."""
    failed = summary.failed_feeds
    first = failed[0]["error"] or f"http_{failed[0]['status']}"
    what = (f"all {summary.feeds_total} feeds failed" if not summary.feeds_ok
            else f"{summary.feeds_failed} of {summary.feeds_total} feeds failed")
    message = f"{what} (first: {failed[0]['url']}: {_one_line(first)}; -v lists each)"
    offline = sum(1 for f in failed if str(f["error"] or "").startswith(NETWORK_ERRORS))
    blocked = sum(1 for f in failed if str(f["error"] or "").startswith("blocked_address"))
    if not summary.feeds_ok and blocked == len(failed):  # okgen's own address policy, not the network
        message += ("; the feeds are on loopback, private or link-local addresses, which okgen does not fetch "
                    "by default: allow them with --allow-net loopback (private, link-local or a CIDR) or "
                    "[ingest] allow_networks in okgen.toml")
    elif not summary.feeds_ok and offline == len(failed):
        message += ("; no network? ingest a news dump with --import FILE or a capture with --replay "
                    "FILE.warc.gz, or set HTTPS_PROXY/HTTP_PROXY (and NO_PROXY) for a proxy")
    return message


def _one_line(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "..."


def _date_lock(workspace: Workspace, date: dt.date) -> RunLock:
    """The ingest lock of ``date`` (raises LockedError when another process is ingesting it)."""
    return RunLock(workspace.data_dir / "locks" / f"ingest-{date.isoformat()}.lock",
                   message=f"another okgen process is ingesting {date} in {workspace.home}{{holder}}")


def _feed_list_for(feeds: str | Path | None, replay: str | Path | None) -> tuple[FeedList, WarcArchive | None]:
    if replay is None:
        return load_feed_list(feeds), None
    archive = WarcArchive(replay)
    if feeds is not None:
        return load_feed_list(feeds), archive
    if archive.feed_list is not None:
        return FeedList.from_data(archive.feed_list, f"{replay} (embedded)"), archive
    log.info("%s holds no feed list; using the default one", replay)
    return load_feed_list(None), archive


async def _run_fetch(date: dt.date, workspace: Workspace, cfg: IngestConfig, feed_list: FeedList,
                     archive: WarcArchive | None, store: ArticleStore, summary: IngestSummary, run_id: str,
                     progress: bool) -> None:
    from okgen.ingest.fetch import Fetcher
    from okgen.ingest.replay import ReplayFetcher
    from okgen.ingest.warc import WarcWriter
    from okgen.progress import bar

    opts = ExtractOptions(cfg.favor_precision, cfg.favor_recall, cfg.include_tables, False, cfg.num_perm, cfg.shingle_size)
    warc = None
    if archive is None and cfg.warc:
        warc = WarcWriter(warc_path(workspace.warc_dir, date))
        warc.write_feed_list(feed_list.to_data())
        summary.warc = str(warc.path)

    def on_log(row: dict[str, Any]) -> None:
        store.log_fetch({**row, "run_id": run_id, "date": date.isoformat()})

    fetcher: Any = ReplayFetcher(archive) if archive is not None else Fetcher(cfg, warc=warc, on_log=on_log)
    pages = bar(total=0, desc=f"ingest {date}", unit="page") if progress else None
    try:
        with Extractor(cfg.workers(), opts, cfg.extract_nice) as extractor:
            async with fetcher:
                day = DayRun(date, cfg, feed_list, store, fetcher, extractor, summary, live=archive is None,
                             warc=warc, progress=pages)
                await day.run()
    finally:
        if pages is not None:
            pages.close()
        store.flush_log()
        if warc is not None:
            warc.close()


MAX_RECORD_WARNINGS = 5  # per failure reason; the rest are counted in one line


def _outlet_names(feeds: str | Path | None) -> dict[str, str]:
    """Outlet id -> display name from a feed list (None: the packaged one), for imported records
    that give an outlet's id ("guardian") but not its name: prompts and rationales then say
    "The Guardian". A feed list that cannot be read names nothing (the import needs none)."""
    try:
        return {o.id: o.name for o in load_feed_list(feeds).outlets if o.name}
    except ConfigError:
        return {}


def _run_import(date: dt.date, path: Path, mapping: dict[str, str] | None, cfg: IngestConfig,
                store: ArticleStore, summary: IngestSummary, undated_on_date: bool = True,
                names: dict[str, str] | None = None) -> None:
    """Stage the records of a dump that belong to ``date`` (``names``: outlet id -> display name,
    for records without a ``source_name``)."""
    from okgen.ingest.importer import read_dump

    states = store.item_states(date)
    eff_mapping = {**cfg.import_mapping, **(mapping or {})}
    extractor = f"okgen-import=={__version__}"
    now = utcnow()
    seen: set[str] = set()
    for rec in read_dump(path, eff_mapping, cfg.tz, default_date=date if undated_on_date else None):
        summary.import_records += 1
        if rec.fields is None:
            code = (rec.error or "error").split(":", 1)[0]
            summary.import_failed[code] += 1
            if summary.import_failed[code] <= MAX_RECORD_WARNINGS:  # a wrong mapping fails every record
                log.warning("%s:%d: %s", path.name, rec.line, rec.error)
            continue
        f = rec.fields
        assert rec.published_at is not None
        if cfg.local_date(rec.published_at) != date:
            summary.out_of_window += 1
            continue
        text = f["text"].strip()
        url = f.get("url") or f"urn:okgen:import:{sha256_text(text)[:24]}"
        canonical = canonicalize_url(url) if url.startswith(("http://", "https://")) else url
        if canonical in seen:
            summary.duplicates["url"] += 1
            continue
        seen.add(canonical)
        st = states.get(canonical)
        if st is not None and is_settled(st[0], st[1]):
            summary.resumed += 1
            continue
        source = _slug(f.get("source") or "import")
        title = f.get("title") or _first_sentence(text)
        language = (f.get("language") or "").lower().split("-")[0] or detect_language(text)
        page = {"text": text, "words": len(text.split()), "language": language}
        summary.extracted += 1
        reason = apply_filters(page, url=url, title=title, expected_languages=cfg.languages, min_words=cfg.min_words,
                               paywall_max_words=cfg.paywall_max_words, enabled=cfg.filters)
        if reason:
            summary.filtered[reason] += 1
            store.set_item(date, canonical, source, url, "filtered", reason)
            continue
        art = Article(
            id=article_id(canonical), url=url, canonical_url=canonical, source=source,
            source_name=f.get("source_name") or (names or {}).get(source) or f.get("source"), category=f.get("category"), title=title,
            author=f.get("author"), published_at=rec.published_at, date=date, date_source="import", fetched_at=now,
            language=language, text=text, text_sha256=sha256_text(text), extractor=extractor,
        )
        store.set_item(date, canonical, source, url, "staged", article_id=art.id,
                       sort_key=f"{art.published_at.isoformat()}|{canonical}", record=record_line(art),
                       minhash=minhash_signature(text, cfg.num_perm, cfg.shingle_size), norm_sha256=norm_text_hash(text),
                       commit=False)
        if summary.import_records % 1000 == 0:
            store.conn.commit()
    store.conn.commit()
    for code, n in sorted(summary.import_failed.items()):
        if n > MAX_RECORD_WARNINGS:
            log.warning("%s: %d more record(s) failed with %s", path.name, n - MAX_RECORD_WARNINGS, code)
    if (summary.import_records and summary.import_records == sum(summary.import_failed.values())
            and summary.import_failed.get("missing_date")):
        raise ConfigError(f"{path}: {summary.import_failed['missing_date']} of its {summary.import_records} records "
                          f"carry no date: give the dump's news day "
                          f"with --date YYYY-MM-DD (an undated record is taken as published that day), or name "
                          f"its date field (--map date=KEY, or [ingest] import_mapping in okgen.toml)")
    if summary.import_records and summary.import_records == sum(summary.import_failed.values()):
        raise ConfigError(f"{path}: none of the {summary.import_records} records could be read "
                          f"(first problem: {next(iter(summary.import_failed))}); check the field mapping")


def _slug(text: str) -> str:
    import re

    s = re.sub(r"[^a-z0-9_.-]+", "-", text.strip().lower()).strip("-")
    return s or "import"


def _first_sentence(text: str, limit: int = 120) -> str:
    first = text.strip().split("\n", 1)[0]
    cut = first.split(". ", 1)[0]
    return (cut if len(cut) <= limit else cut[:limit].rsplit(" ", 1)[0] + "…").strip()
