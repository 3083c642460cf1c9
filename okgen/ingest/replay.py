"""Replay: a fetcher that answers from a WARC file instead of the network.

It follows archived redirects, serves a feed body cached after a 304, and classifies the
responses exactly as the live fetcher does (:func:`okgen.ingest.fetch.classify`), so
``okgen ingest --replay FILE`` rebuilds the same articles. The fetch time of each result is the
record's ``WARC-Date``, which keeps dates that fall back to the fetch time identical.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urljoin

from okgen.ingest.fetch import REDIRECTS, FetchResult, Kind, classify
from okgen.ingest.warc import WarcArchive


class ReplayFetcher:
    """Serve fetches from a :class:`WarcArchive`.

    Args:
        archive: the indexed WARC file.
        max_redirects: redirects followed inside the archive.
    """

    def __init__(self, archive: WarcArchive, max_redirects: int = 10):
        self.archive = archive
        self.max_redirects = max_redirects

    async def __aenter__(self) -> ReplayFetcher:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        return None

    async def fetch(self, url: str, kind: Kind = "article", headers: dict[str, str] | None = None) -> FetchResult:
        """The archived answer to ``url`` (``not_in_archive`` when there is none)."""
        current, seen, redirects = url, {url}, []
        for _ in range(self.max_redirects + 1):
            rec = self.archive.lookup(current)
            if rec is None:
                return FetchResult(url, kind, final_url=current, error="not_in_archive", attempts=1,
                                   detail="no response for this URL in the WARC file", redirects=redirects)
            location = rec.header("location")
            if rec.status in REDIRECTS and location:
                nxt = urljoin(current, location.strip())
                if nxt in seen:
                    return FetchResult(url, kind, final_url=current, status=rec.status, error="redirect_loop",
                                       attempts=1, fetched_at=rec.date, redirects=redirects)
                redirects.append(current)
                seen.add(nxt)
                current = nxt
                continue
            body = rec.body()
            headers = {k.lower(): v for k, v in rec.headers}
            if rec.status == 304:  # the feed body the 304 stood for, with its own content type
                body, ctype = self.archive.cached_body(current) or (b"", None)
                if ctype:  # the cached feed's own type, as the live run read it
                    headers["content-type"] = ctype
            result = FetchResult(url, kind, final_url=current, status=rec.status,
                                 headers=headers, body=body, attempts=1,
                                 fetched_at=rec.date, redirects=redirects)
            if rec.truncated == "length":
                result.error, result.detail, result.body = "too_large", "truncated in the archive", b""
            return classify(result, kind=kind)
        return FetchResult(url, kind, final_url=current, error="too_many_redirects", attempts=1, redirects=redirects)

    def earlier(self, url: str, kind: Kind = "feed") -> list[FetchResult]:
        """The archive's earlier full answers to ``url`` (oldest first), besides the one
        :meth:`fetch` serves: a day ingested in two runs captured its feeds twice, and entries
        that left the feed between them are only in the first capture. Redirects, 304s (their
        body is an earlier capture's) and failures are left out."""
        recs = self.archive.responses.get(url, [])
        last = self.archive.lookup(url)
        if last is not None and last.status != 200:  # fetch() served another answer: every 200 is earlier
            last = None
        out = []
        for rec in recs:
            if rec is last or rec.status != 200:
                continue
            result = FetchResult(url, kind, final_url=url, status=200, headers={k.lower(): v for k, v in rec.headers},
                                 body=rec.body(), attempts=1, fetched_at=rec.date)
            if rec.truncated != "length" and (got := classify(result, kind=kind)).ok:
                out.append(got)
        return out
