"""WARC capture of every raw response (one gzip WARC file per news day) and its index for replay.

:class:`WarcWriter` appends one gzip member per record from a background thread (compression
runs beside the event loop) and repairs the file on open: a run killed mid-record leaves a
partial member, which is cut off so the file stays readable and later records can be appended.
Bodies are stored decoded (``Content-Encoding`` removed from the stored headers, the original
value kept as ``X-Okgen-Original-Content-Encoding``).

:class:`WarcArchive` indexes a WARC file by URL (offsets only; bodies are read on demand) and
holds the feed list embedded by the run, so ``okgen ingest --replay FILE`` needs nothing else.
"""

from __future__ import annotations

import asyncio
import base64
import concurrent.futures
import datetime as dt
import hashlib
import json
import logging
import os
import uuid
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from okgen import __version__
from okgen.errors import OkgenError

log = logging.getLogger(__name__)

FEEDLIST_URI = "urn:okgen:feedlist"
KIND_HEADER = "WARC-Okgen-Kind"
_DROP_HEADERS = {"content-encoding", "transfer-encoding", "content-length"}


class WarcError(OkgenError):
    """A WARC file is missing or not readable."""


def warc_path(warc_dir: Path, date: dt.date) -> Path:
    """The WARC file of a news day: ``<warc_dir>/okgen-YYYY-MM-DD.warc.gz``."""
    return Path(warc_dir) / f"okgen-{date.isoformat()}.warc.gz"


def repair_warc(path: Path) -> int:
    """Cut a partial record off the end of a gzip WARC file; return the bytes removed.

    okgen writes one gzip member per record, so the file is sound up to the end of the last
    member that decompresses completely; whatever follows is a record a killed run left half
    written.
    """
    import zlib

    if not path.exists() or path.stat().st_size == 0:
        return 0
    size = path.stat().st_size
    good_end = pos = 0
    d = zlib.decompressobj(wbits=31)
    member_start = 0
    with open(path, "rb") as f:
        if f.read(2) != b"\x1f\x8b":
            raise WarcError(f"{path}: not a gzip WARC file; refusing to append to it")
        f.seek(0)
        try:
            while chunk := f.read(1 << 20):
                while chunk:
                    d.decompress(chunk)
                    if not d.eof:
                        pos += len(chunk)
                        break
                    used = len(chunk) - len(d.unused_data)
                    pos += used
                    good_end = member_start = pos
                    chunk = d.unused_data
                    d = zlib.decompressobj(wbits=31)
        except zlib.error as e:  # damaged member: keep what precedes it
            log.warning("%s: damaged gzip member at byte %d (%s)", path.name, member_start, e)
    if good_end < size:
        log.warning("%s: cutting %d bytes of a partial record at byte %d", path.name, size - good_end, good_end)
        with open(path, "r+b") as f:
            f.truncate(good_end)
        return size - good_end
    return 0


def _sha1(data: bytes) -> str:
    return "sha1:" + base64.b32encode(hashlib.sha1(data).digest()).decode("ascii")


def _clean(value: str) -> str:
    """A header value on one line (a CR or LF would break the record)."""
    return str(value).replace("\r", " ").replace("\n", " ")


def _iso(when: dt.datetime) -> str:
    return when.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class WarcWriter:
    """Append records to a gzip WARC file from one background thread.

    Args:
        path: the WARC file (created with its folder; repaired when it exists).
    """

    def __init__(self, path: str | Path, compresslevel: int = 6):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        cut = repair_warc(self.path)
        if cut:
            log.info("%s: removed %d bytes of a partial record left by an interrupted run", self.path.name, cut)
        self.compresslevel = compresslevel
        self._f = open(self.path, "ab")
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="okgen-warc")
        self.records = 0
        info = f"software: okgen/{__version__}\r\nformat: WARC File Format 1.1\r\n".encode()
        self._pool.submit(self._record, "warcinfo", None, dt.datetime.now(dt.timezone.utc), "application/warc-fields",
                          info, {"WARC-Filename": self.path.name}).result()

    def _record(self, rec_type: str, uri: str | None, when: dt.datetime, content_type: str, block: bytes,
                extra: dict[str, str], payload: bytes | None = None) -> None:
        """Serialise one record as its own gzip member and append it (runs in the writer thread).

        Written directly rather than through warcio's writer: hashing and compressing whole
        buffers lets zlib and hashlib work without the GIL, so capture keeps up with 64 fetches.
        """
        headers = {"WARC-Type": rec_type, "WARC-Record-ID": f"<urn:uuid:{uuid.uuid4()}>", "WARC-Date": _iso(when)}
        if uri is not None:
            headers["WARC-Target-URI"] = uri
        headers["Content-Type"] = content_type
        if payload is not None:
            headers["WARC-Payload-Digest"] = _sha1(payload)
        headers["WARC-Block-Digest"] = _sha1(block)
        headers.update(extra)
        headers["Content-Length"] = str(len(block))
        head = "WARC/1.1\r\n" + "".join(f"{k}: {_clean(v)}\r\n" for k, v in headers.items()) + "\r\n"
        data = zlib.compressobj(self.compresslevel, zlib.DEFLATED, 31)
        member = data.compress(head.encode("utf-8")) + data.compress(block) + data.compress(b"\r\n\r\n") + data.flush()
        self._f.write(member)
        self._f.flush()
        self.records += 1

    def _response(self, url: str, status: int, reason: str, headers: list[tuple[str, str]], body: bytes,
                  fetched_at: dt.datetime, kind: str, http_version: str, truncated: str | None) -> None:
        kept = [(k, v) for k, v in headers if k.lower() not in _DROP_HEADERS]
        kept += [("X-Okgen-Original-Content-Encoding", v) for k, v in headers if k.lower() == "content-encoding"]
        kept.append(("Content-Length", str(len(body))))
        status_line = f"{http_version or 'HTTP/1.1'} {status} {reason or ''}".strip()
        http_head = (status_line + "\r\n" + "".join(f"{k}: {_clean(v)}\r\n" for k, v in kept) + "\r\n").encode("utf-8")
        extra = {KIND_HEADER: kind}
        if truncated:
            extra["WARC-Truncated"] = truncated
        self._record("response", url, fetched_at, "application/http; msgtype=response", http_head + body, extra, body)

    def _resource(self, uri: str, data: bytes, content_type: str, kind: str, when: dt.datetime | None) -> None:
        self._record("resource", uri, when or dt.datetime.now(dt.timezone.utc), content_type, data, {KIND_HEADER: kind})

    def submit_response(self, url: str, status: int, reason: str, headers: list[tuple[str, str]], body: bytes, *,
                        fetched_at: dt.datetime, kind: str, http_version: str = "HTTP/1.1",
                        truncated: str | None = None) -> concurrent.futures.Future[None]:
        """Queue a response record; the future completes when it is written (and flushed to the OS)."""
        return self._pool.submit(self._response, url, status, reason, headers, body, fetched_at, kind, http_version, truncated)

    async def write_response(self, *args: Any, **kw: Any) -> None:
        """Write a response record without blocking the event loop (see :meth:`submit_response`)."""
        await asyncio.wrap_future(self.submit_response(*args, **kw))

    def write_resource(self, uri: str, data: bytes, content_type: str, kind: str, when: dt.datetime | None = None) -> None:
        """Write a resource record (the embedded feed list, a cached feed body) and wait for it."""
        self._pool.submit(self._resource, uri, data, content_type, kind, when).result()

    def write_feed_list(self, data: dict[str, Any]) -> None:
        """Embed the run's feed list, so a replay needs nothing but this file."""
        self.write_resource(FEEDLIST_URI, json.dumps(data, sort_keys=True).encode("utf-8"), "application/json", "feedlist")

    def close(self) -> None:
        """Finish pending writes and close the file."""
        if self._f.closed:
            return
        self._pool.shutdown(wait=True)
        self._f.flush()
        os.fsync(self._f.fileno())
        self._f.close()

    def __enter__(self) -> WarcWriter:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


@dataclass
class WarcResponse:
    """One archived response (body read on demand)."""

    url: str
    status: int
    reason: str
    headers: list[tuple[str, str]]
    date: dt.datetime
    kind: str
    truncated: str | None
    offset: int
    archive: WarcArchive

    def header(self, name: str) -> str | None:
        """First header value named ``name`` (case-insensitive)."""
        name = name.lower()
        return next((v for k, v in self.headers if k.lower() == name), None)

    def body(self) -> bytes:
        """The stored (decoded) body."""
        return self.archive._read_payload(self.offset)


class WarcArchive:
    """Index of a WARC file for replay.

    Args:
        path: a WARC file (gzip or not) written by okgen or another crawler.

    Raises:
        WarcError: the file is missing or is not a WARC file.
    """

    def __init__(self, path: str | Path):
        from warcio.archiveiterator import ArchiveIterator
        from warcio.exceptions import ArchiveLoadFailed

        self.path = Path(path)
        if not self.path.is_file():
            raise WarcError(f"{self.path}: no such WARC file")
        self.responses: dict[str, list[WarcResponse]] = {}
        self.resources: dict[str, list[tuple[int, str]]] = {}
        self.feed_list: dict[str, Any] | None = None
        n = 0
        try:
            with open(self.path, "rb") as f:
                it = ArchiveIterator(f)
                for rec in it:
                    if not str(getattr(rec, "format", "warc")).startswith("warc"):
                        raise ArchiveLoadFailed(f"an {rec.format} record, not WARC")
                    n += 1
                    payload = rec.content_stream().read() if rec.rec_type == "resource" else b""
                    offset = it.get_record_offset()  # reads the record to its end: payload first
                    uri = rec.rec_headers.get_header("WARC-Target-URI") or ""
                    kind = rec.rec_headers.get_header(KIND_HEADER) or ""
                    if rec.rec_type == "response" and rec.http_headers is not None:
                        status = int(rec.http_headers.get_statuscode() or 0)
                        line = rec.http_headers.statusline or ""
                        self.responses.setdefault(uri, []).append(WarcResponse(
                            uri, status, line.partition(" ")[2], list(rec.http_headers.headers),
                            _parse_date(rec.rec_headers.get_header("WARC-Date")), kind,
                            rec.rec_headers.get_header("WARC-Truncated"), offset, self))
                    elif rec.rec_type == "resource":
                        if uri == FEEDLIST_URI:
                            self.feed_list = json.loads(payload.decode("utf-8"))
                        else:
                            self.resources.setdefault(uri, []).append((offset, kind))
                    it.read_to_end(rec)
        except ArchiveLoadFailed as e:
            if not n:
                raise WarcError(f"{self.path}: not a WARC file ({_first_line(e)})") from None
            log.warning("%s: stopped reading at a damaged record (%s)", self.path.name, _first_line(e))
        except (OSError, EOFError, ValueError) as e:
            if not n:
                raise WarcError(f"{self.path}: not a WARC file ({_first_line(e)})") from None
            log.warning("%s: stopped reading at a damaged record (%s)", self.path.name, _first_line(e))
        if not n:
            raise WarcError(f"{self.path}: empty WARC file")

    def __len__(self) -> int:
        return sum(len(v) for v in self.responses.values())

    def lookup(self, url: str) -> WarcResponse | None:
        """The response to replay for ``url``: the last one that is not a 429/5xx, else the last one."""
        recs = self.responses.get(url)
        if not recs:
            return None
        good = [r for r in recs if r.status != 429 and r.status < 500]
        return (good or recs)[-1]

    def cached_body(self, url: str) -> tuple[bytes, str | None] | None:
        """The body and content type of the last ``feed-cache`` resource of ``url`` (a feed served
        from cache after a 304); the type is None where the capture did not keep it."""
        recs = [off for off, kind in self.resources.get(url, []) if kind == "feed-cache"]
        return self._read_resource(recs[-1]) if recs else None

    def _read_resource(self, offset: int) -> tuple[bytes, str | None]:
        from warcio.archiveiterator import ArchiveIterator

        with open(self.path, "rb") as f:
            f.seek(offset)
            for rec in ArchiveIterator(f):
                ctype = rec.rec_headers.get_header("Content-Type")
                # Captures before okgen kept the feed's own type wrote every cached body as octet-stream.
                return rec.content_stream().read(), None if ctype in (None, "application/octet-stream") else ctype
        return b"", None

    def _read_payload(self, offset: int) -> bytes:
        from warcio.archiveiterator import ArchiveIterator

        with open(self.path, "rb") as f:
            f.seek(offset)
            for rec in ArchiveIterator(f):
                return rec.content_stream().read()
        return b""


def _parse_date(value: str | None) -> dt.datetime:
    if not value:
        return dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
    v = value.replace("Z", "+00:00")
    try:
        d = dt.datetime.fromisoformat(v)
    except ValueError:
        return dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
    return d if d.tzinfo else d.replace(tzinfo=dt.timezone.utc)


def _first_line(e: BaseException) -> str:
    return " ".join(str(e).split())[:200] or type(e).__name__
