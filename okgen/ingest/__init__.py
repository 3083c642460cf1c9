"""The ingest stage: feeds, polite fetching, extraction, dedup, WARC capture and the article store.

Modules (imported lazily by the CLI; importing this package pulls in nothing heavy):

- :mod:`okgen.ingest.pipeline`: :func:`~okgen.ingest.pipeline.run_ingest`, the stage's entry point.
- :mod:`okgen.ingest.config`: :class:`~okgen.ingest.config.IngestConfig` (``okgen.toml`` ``[ingest]``).
- :mod:`okgen.ingest.feeds`: feed lists (TOML, OPML) and feed parsing with feedparser.
- :mod:`okgen.ingest.fetch`: the asynchronous polite fetcher (aiohttp), with
  :mod:`~okgen.ingest.netpolicy` (addresses, retries, content types) and :mod:`~okgen.ingest.robots`.
- :mod:`okgen.ingest.extract`: trafilatura extraction in a process pool; :mod:`~okgen.ingest.filters`.
- :mod:`okgen.ingest.live`: feeds to staged articles for one day (live or replayed).
- :mod:`okgen.ingest.dedup` and :mod:`okgen.ingest.finalize`: URL, exact and near-duplicate
  detection, per-outlet caps, storage.
- :mod:`okgen.ingest.store`: :class:`~okgen.ingest.store.ArticleStore` (SQLite, WAL).
- :mod:`okgen.ingest.warc` and :mod:`okgen.ingest.replay`: per-day WARC capture and replay.
- :mod:`okgen.ingest.importer`: JSON/JSONL news dumps with a field mapping.
- :mod:`okgen.ingest.summary`: :class:`~okgen.ingest.summary.IngestSummary`.
"""
