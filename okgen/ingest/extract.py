"""Text and metadata extraction with trafilatura, in a process pool beside the fetcher.

:func:`extract_page` is the extraction step: decode the bytes (charset from a BOM, valid UTF-8,
the header, the ``<meta>`` tag, then detection, so a wrong or missing charset still reads
right), run ``trafilatura.bare_extraction`` with metadata (title, author, date, site name) and
collect the signals the filters need (declared language, og:type, JSON-LD types,
``isAccessibleForFree``). :func:`process_page` adds the dedup fingerprints; it is what the
pool's workers run. :class:`Extractor` owns the pool and survives a crashed worker.
"""

from __future__ import annotations

import asyncio
import codecs
import datetime as dt
import logging
import multiprocessing
import os
import re
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import asdict, dataclass
from typing import Any

from okgen.ingest.filters import detect_language

log = logging.getLogger(__name__)

_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([a-zA-Z0-9_:.-]+)""", re.IGNORECASE)
_HTML_LANG = re.compile(r"""<html\b[^>]*?\blang\s*=\s*["']?([a-zA-Z]{2,3})(?:[-_][a-zA-Z0-9]+)?""", re.IGNORECASE)
_OG_LOCALE = re.compile(r"""<meta[^>]+property\s*=\s*["']og:locale["'][^>]*content\s*=\s*["']([a-zA-Z]{2,3})""", re.IGNORECASE)
_CONTENT_LANG = re.compile(r"""<meta[^>]+http-equiv\s*=\s*["']content-language["'][^>]*content\s*=\s*["']([a-zA-Z]{2,3})""", re.IGNORECASE)
_LD_TYPE = re.compile(r""""@type"\s*:\s*(\[[^\]]*\]|"[^"]*")""")
_LD_FREE = re.compile(r""""isAccessibleForFree"\s*:\s*"?(true|false)""", re.IGNORECASE)
# WHATWG: these labels mean windows-1252 in browsers, and pages rely on it.
_AS_CP1252 = {"iso-8859-1", "iso8859-1", "latin-1", "latin1", "l1", "us-ascii", "ascii", "cp819", "iso_8859-1"}
SIGNAL_CHARS = 300_000


@dataclass(frozen=True)
class ExtractOptions:
    """trafilatura options (the same for every page of a run) and fingerprint parameters."""

    favor_precision: bool = False
    favor_recall: bool = False
    include_tables: bool = True
    include_comments: bool = False
    num_perm: int = 128
    shingle_size: int = 5

    def trafilatura_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``trafilatura.bare_extraction``/``extract``.

        The page's date comes from its structured metadata only (meta tags, JSON-LD, ``<time>``,
        the URL): htmldate's extensive search also reads dates in the text, which are often the
        dates of the events told ("a summit on December 25, 2026" made an undated page one of
        2026-01-01, and a day's article fell out of the day). A page without such a date is
        dated by the feed, else by its fetch. The date comes with its time and offset where the
        page gives them (``2026-11-30T18:00:00+0000``; a date alone reads ``...T00:00:00``)."""
        from trafilatura.settings import set_date_params

        # max_date as a time a day ahead, not trafilatura's "YYYY-MM-DD" (midnight of the
        # machine's day): htmldate refuses a time after it, and gave a page of 01:27 today as
        # "today, 00:00" (okgen judges future dates itself: future_tolerance).
        latest = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None) + dt.timedelta(days=1)  # any zone's today
        dates = {**set_date_params(extensive=False), "outputformat": PAGE_DATE_FORMAT, "max_date": latest}
        return {"with_metadata": True, "include_comments": self.include_comments,
                "include_tables": self.include_tables, "favor_precision": self.favor_precision,
                "favor_recall": self.favor_recall, "date_extraction_params": dates}


PAGE_DATE_FORMAT = "%Y-%m-%dT%H:%M:%S%z"
"""How htmldate writes a page's date: the time and UTC offset where the page gives them."""


def extractor_name() -> str:
    """Extractor library and version recorded on articles (``trafilatura==2.3.1``)."""
    import trafilatura

    return f"trafilatura=={trafilatura.__version__}"


def _valid(enc: str | None) -> str | None:
    if not enc:
        return None
    enc = enc.strip().lower()
    if enc in _AS_CP1252:
        enc = "cp1252"
    try:
        return codecs.lookup(enc).name
    except LookupError:
        return None


def decode_html(body: bytes, header_charset: str | None = None) -> tuple[str, str]:
    """Decode an HTML body; return (text, encoding used).

    Valid UTF-8 wins over a declared charset (a page that decodes as UTF-8 almost surely is
    UTF-8, whatever the header says); then the header, the ``<meta>`` charset, detection by
    charset_normalizer, and windows-1252 with replacement as the last resort.
    """
    if body.startswith(codecs.BOM_UTF8):
        return body[3:].decode("utf-8", errors="replace"), "utf-8"
    if body.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return body.decode("utf-16", errors="replace"), "utf-16"
    try:
        return body.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        pass
    meta = _META_CHARSET.search(body[:8192])
    detected: tuple[str, float] | None = None
    for cand in (header_charset, meta.group(1).decode("ascii", "ignore") if meta else None):
        enc = _valid(cand)
        if enc and enc not in ("utf-8", "utf-16"):
            try:
                text = body.decode(enc)
            except (UnicodeDecodeError, LookupError):
                continue
            # A single-byte charset decodes any bytes: keep it only when the text it gives is
            # about as plausible as the detected charset's (a Latin-1 page labelled koi8-r
            # would read "CafИ in ZЭrich").
            detected = detected or _detect(body)
            if detected is None or detected[0] == enc or _chaos(body, enc) <= detected[1] + MAX_EXTRA_CHAOS:
                return text, enc
            log.info("declared charset %s reads implausibly; using detected %s", enc, detected[0])
            return body.decode(detected[0], errors="replace"), detected[0]
    detected = detected or _detect(body)
    if detected is not None:
        return body.decode(detected[0], errors="replace"), detected[0]
    return body.decode("cp1252", errors="replace"), "cp1252"


# How much more "chaos" (charset_normalizer's mess ratio: 0 clean .. 1 garbage) a declared
# charset's text may show than the detected one's before the declaration is overruled.
MAX_EXTRA_CHAOS = 0.05
_SAMPLE = 200_000


def _detect(body: bytes) -> tuple[str, float] | None:
    """The detected charset of ``body`` and its chaos (charset_normalizer), or None."""
    try:
        from charset_normalizer import from_bytes

        matches = list(from_bytes(body[:_SAMPLE]))
    except Exception:  # detection is best effort
        return None
    if not matches:
        return None
    best = matches[0]
    # Single-byte code pages nearly tie on a Western text with few accents; windows-1252
    # is by far the most common legacy charset of the web, so it wins a near tie. With fewer
    # than 8 bytes outside ASCII the language evidence is too thin to break a tie at all
    # (charset_normalizer 3.5 ranks cp1250 over cp1252 on one accented word in English).
    thin = sum(b > 127 for b in body[:_SAMPLE]) < 8
    close = [m.encoding for m in matches
             if m.chaos == best.chaos and (thin or m.coherence >= best.coherence - 0.05)]
    return ("cp1252" if "cp1252" in close else best.encoding), best.chaos


def _chaos(body: bytes, enc: str) -> float:
    """charset_normalizer's mess ratio of ``body`` read as ``enc`` (1.0 when it rejects it)."""
    try:
        from charset_normalizer import from_bytes

        match = from_bytes(body[:_SAMPLE], cp_isolation=[enc]).best()
    except Exception:
        return 0.0  # no verdict: trust the declaration
    return 1.0 if match is None else match.chaos


def _jsonld(html: str) -> str:
    """The JSON-LD blocks of a page, joined (found with str.find: no regex over the whole page)."""
    out, i = [], 0
    while (j := html.find("ld+json", i)) != -1:
        start = html.find(">", j)
        end = html.find("</script", start)
        if start == -1 or end == -1:
            break
        out.append(html[start + 1:end])
        i = end
    return "\n".join(out)


def _jsonld_types(ld: str) -> list[str]:
    out: list[str] = []
    for m in _LD_TYPE.finditer(ld):
        out.extend(re.findall(r'"([A-Za-z]+)"', m.group(1)))
    return sorted(set(out))


def _declared_language(html: str) -> str | None:
    end = html.find("</head>", 0, SIGNAL_CHARS)
    head = html[:end if end != -1 else SIGNAL_CHARS]
    for pattern in (_HTML_LANG, _CONTENT_LANG, _OG_LOCALE):
        m = pattern.search(head)
        if m:
            return m.group(1).lower()
    return None


def strip_title(text: str, *titles: str | None) -> str:
    """``text`` without a first line that repeats the headline (trafilatura keeps the page's
    ``<h1>``; the title is stored in its own field, so the body would say it twice)."""
    first, sep, rest = text.partition("\n")
    norm = " ".join(first.split()).casefold()
    if sep and norm and any(t and norm == " ".join(t.split()).casefold() for t in titles):
        return rest.lstrip("\n")
    return text


def extract_page(body: bytes | str, url: str | None = None, header_charset: str | None = None,
                 options: ExtractOptions | None = None) -> dict[str, Any]:
    """Extract one page's text and metadata (the extraction step; runs in a worker process).

    Returns:
        A dict with ``text`` (empty when nothing was extracted), ``title``, ``author``,
        ``date`` (ISO date or None), ``sitename``, ``page_url`` (canonical link), ``pagetype``,
        ``language`` (detected from the text, else declared), ``declared_language``,
        ``jsonld_types``, ``free`` (isAccessibleForFree), ``words`` and ``encoding``.
    """
    import trafilatura

    opts = options or ExtractOptions()
    if isinstance(body, bytes):
        html, encoding = decode_html(body, header_charset)
    else:
        html, encoding = body, "str"
    ld = _jsonld(html[:SIGNAL_CHARS])
    free_m = _LD_FREE.search(ld)
    out: dict[str, Any] = {
        "text": "", "title": None, "author": None, "date": None, "sitename": None, "page_url": None,
        "pagetype": None, "description": None, "declared_language": _declared_language(html),
        "jsonld_types": _jsonld_types(ld), "free": (free_m.group(1).lower() == "true") if free_m else None,
        "encoding": encoding, "words": 0,
    }
    doc = trafilatura.bare_extraction(html, url=url, **opts.trafilatura_kwargs())
    if doc is not None:
        text = strip_title(doc.text or "", doc.title)
        out.update(text=text, title=doc.title, author=doc.author, date=doc.date, sitename=doc.sitename,
                   page_url=doc.url, pagetype=doc.pagetype, description=doc.description, words=len(text.split()))
    out["language"] = detect_language(out["text"]) or out["declared_language"]
    return out


def process_page(body: bytes, url: str, header_charset: str | None, options: dict[str, Any]) -> dict[str, Any]:
    """Worker task: :func:`extract_page` plus the dedup fingerprints of the text; never raises.

    The result also carries ``cpu_s``, the worker's CPU time for the page (for benchmarks).
    """
    from okgen.ingest.dedup import minhash_signature, norm_text_hash

    t0 = time.process_time()
    try:
        opts = ExtractOptions(**options)
        page = extract_page(body, url, header_charset, opts)
        if page["text"]:
            page["norm_sha256"] = norm_text_hash(page["text"])
            page["minhash"] = minhash_signature(page["text"], opts.num_perm, opts.shingle_size)
        page["ok"] = True
        page["cpu_s"] = time.process_time() - t0
        return page
    except Exception as e:  # one bad page must not stop the batch
        return {"ok": False, "error": "extract_error", "detail": f"{type(e).__name__}: {e}"[:300]}


_WARM_PAGE = ("<html lang='en'><head><title>Warm-up</title></head><body><article><h1>Warm-up</h1><p>"
              + "This page loads every module extraction needs before the first real page arrives. " * 8
              + "</p></article></body></html>").encode()


def _init_worker(nice: int, parent: int | None = None) -> None:
    import signal
    import threading

    # Ctrl-C reaches the whole process group: the parent stops the run and shuts the pool down,
    # so a worker must not die mid-page with a KeyboardInterrupt traceback of its own.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # A parent killed outright (SIGKILL, OOM) cannot shut the pool down, and the worker holds
    # both ends of its queue's pipe, so it would wait for work forever (and keep the
    # multiprocessing resource tracker alive with it): leave as soon as the parent is gone. The
    # parent's pid comes from the parent: read here, after seconds of imports on a loaded
    # machine, getppid() could already be init's, and the worker would wait for that to change.
    parent = os.getppid() if parent is None else parent
    threading.Thread(target=_exit_with_parent, args=(parent,), daemon=True, name="okgen-parent-watch").start()
    if nice and hasattr(os, "nice"):
        try:
            os.nice(nice)
        except OSError:  # not permitted here: run at normal priority
            pass


PARENT_CHECK_S = 0.5


def _exit_with_parent(parent: int) -> None:
    import time

    while os.getppid() == parent:
        time.sleep(PARENT_CHECK_S)
    os._exit(0)


def _warm() -> bool:
    # One real extraction per worker: imports trafilatura, htmldate, datasketch and okgen's
    # modules, so the first pages of a run do not pay for them.
    process_page(_WARM_PAGE, "https://example.org/warm-up", "utf-8", asdict(ExtractOptions()))
    return True


class Extractor:
    """A pool of extraction processes used from asyncio.

    Args:
        workers: number of processes.
        options: extraction options.
        nice: niceness added to the workers, so that the event loop fetching pages gets a CPU as
            soon as a response arrives while extraction soaks up the rest (0: same priority).
    """

    def __init__(self, workers: int, options: ExtractOptions, nice: int = 0):
        self.workers = max(1, workers)
        self.options = options
        self.nice = nice
        self._opts = asdict(options)
        self._pool = self._new_pool()
        self.crashes = 0

    def _new_pool(self) -> ProcessPoolExecutor:
        # spawn: the parent runs threads (WARC writer, test servers); forking them is unsafe.
        return ProcessPoolExecutor(max_workers=self.workers, mp_context=multiprocessing.get_context("spawn"),
                                   initializer=_init_worker, initargs=(self.nice, os.getpid()))

    def warm(self) -> None:
        """Start every worker and import trafilatura in it (so the first pages do not wait)."""
        futures = [self._pool.submit(_warm) for _ in range(self.workers)]
        for f in futures:
            f.result()

    async def extract(self, body: bytes, url: str, header_charset: str | None = None) -> dict[str, Any]:
        """Extract one page in the pool; a crashed worker yields an ``extract_crash`` result."""
        loop = asyncio.get_running_loop()
        for _attempt in range(3):  # pages that were queued beside a crashing one get another go
            pool = self._pool
            try:
                return await loop.run_in_executor(pool, process_page, body, url, header_charset, self._opts)
            except BrokenProcessPool:
                self.crashes += 1
                if self._pool is pool:  # the first to notice rebuilds the pool
                    log.warning("an extraction worker died (page %s); restarting the pool", url)
                    pool.shutdown(wait=False, cancel_futures=True)
                    self._pool = self._new_pool()
        return {"ok": False, "error": "extract_crash", "detail": "extraction worker died"}

    def close(self) -> None:
        """Stop the workers."""
        self._pool.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> Extractor:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
