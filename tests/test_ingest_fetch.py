"""The polite fetcher against a real HTTP server on 127.0.0.1: errors, retries, limits, robots.txt,
politeness, conditional GET, address policy and WARC capture."""

from __future__ import annotations

import asyncio
import gzip
import socket
import time
from pathlib import Path

import pytest

from okgen.ingest.fetch import Fetcher, FetchResult
from okgen.ingest.warc import WarcArchive, WarcWriter
from okgen.testing.news_site import fast_ingest_config
from okgen.testing.web import Request, Route, WebServer

FIX = Path(__file__).parent / "fixtures" / "ingest"
PAGE = "<html><head><title>t</title></head><body><p>Hello world, a page.</p></body></html>"


def fetch_all(cfg, urls, kind="article", headers=None, warc=None, log=None) -> list[FetchResult]:
    async def go():
        async with Fetcher(cfg, warc=warc, on_log=log) as f:
            return await asyncio.gather(*(f.fetch(u, kind, headers) for u in urls))
    return asyncio.run(go())


def one(cfg, url, **kw) -> FetchResult:
    return fetch_all(cfg, [url], **kw)[0]


@pytest.fixture
def web():
    with WebServer() as w:
        yield w


def test_ok_page_user_agent_and_log(web):
    web.set("/p", Route(body=PAGE))
    rows = []
    cfg = fast_ingest_config(user_agent="okgen-test/1.0 (+http://example.org)")
    r = one(cfg, web.url("/p"), log=rows.append)
    assert r.ok and r.status == 200 and b"Hello world" in r.body and r.attempts == 1
    assert web.requests[-1].headers["user-agent"] == "okgen-test/1.0 (+http://example.org)"
    assert rows and rows[-1]["url"] == web.url("/p") and rows[-1]["status"] == 200 and rows[-1]["bytes"] == len(PAGE)


def test_long_header_lines_are_accepted(web):
    """Real news sites send Content-Security-Policy and Set-Cookie lines well over 8 KB."""
    csp = "default-src 'self'; " + " ".join(f"https://cdn{i}.example.com" for i in range(1200))
    assert len(csp) > 20_000
    web.set("/p", Route(body=PAGE, headers={"Content-Security-Policy": csp}))
    r = one(fast_ingest_config(), web.url("/p"))
    assert r.ok and r.headers["content-security-policy"] == csp


@pytest.mark.parametrize("status", [404, 410, 403])
def test_client_errors_are_not_retried(web, status):
    web.set("/gone", Route(status=status, body="nope"))
    r = one(fast_ingest_config(), web.url("/gone"))
    assert not r.ok and r.error == f"http_{status}" and r.attempts == 1 and web.hits["/gone"] == 1


def test_429_with_retry_after_is_honoured(web):
    web.set("/busy", [Route(status=429, headers={"Retry-After": "1"}), Route(body=PAGE)])
    t0 = time.monotonic()
    r = one(fast_ingest_config(), web.url("/busy"))
    took = time.monotonic() - t0
    assert r.ok and r.attempts == 2 and took >= 0.95
    times = [q.time for q in web.requests if q.path == "/busy"]
    assert times[1] - times[0] >= 0.95


def test_retry_after_too_long_gives_up_at_once(web):
    web.set("/busy", Route(status=503, headers={"Retry-After": "3600"}))
    t0 = time.monotonic()
    r = one(fast_ingest_config(max_retry_after=60), web.url("/busy"))
    assert r.error == "http_503" and r.attempts == 1 and "max_retry_after" in r.detail
    assert time.monotonic() - t0 < 2


def test_500_then_success_and_persistent_5xx(web):
    web.set("/flaky", [Route(status=500), Route(status=502), Route(body=PAGE)])
    web.set("/down", Route(status=503))
    ok, down = fetch_all(fast_ingest_config(max_retries=3), [web.url("/flaky"), web.url("/down")])
    assert ok.ok and ok.attempts == 3
    assert down.error == "http_503" and down.attempts == 4 and web.hits["/down"] == 4


def test_hanging_server_times_out(web):
    web.set("/hang", Route(hang=True, hang_seconds=3))
    cfg = fast_ingest_config(read_timeout=0.3, max_retries=1)
    t0 = time.monotonic()
    r = one(cfg, web.url("/hang"))
    assert r.error == "timeout" and r.attempts == 2 and time.monotonic() - t0 < 2.5


def test_slow_drip_hits_the_total_deadline(web):
    web.set("/slow", Route(body=PAGE, delay=1.5))
    r = one(fast_ingest_config(read_timeout=5, total_timeout=0.5, max_retries=0), web.url("/slow"))
    assert r.error == "timeout" and "0.5" in r.detail


def test_connection_refused_is_retried_then_reported():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    r = one(fast_ingest_config(max_retries=1), f"http://127.0.0.1:{port}/x")
    assert r.error == "connect_error" and r.attempts == 2
    feed = one(fast_ingest_config(max_retries=0), f"http://127.0.0.1:{port}/feed.xml", kind="feed")
    assert feed.detail.startswith(f"cannot connect to 127.0.0.1:{port}: ") and "ssl" not in feed.detail  # no aiohttp noise


def _closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def _proxy_env(monkeypatch, proxy: str | None, no_proxy: str | None = None) -> None:
    for k in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "no_proxy", "NO_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(k, raising=False)
    if proxy:
        monkeypatch.setenv("http_proxy", proxy)
    if no_proxy:
        monkeypatch.setenv("no_proxy", no_proxy)


def test_proxy_from_the_environment_and_no_proxy(web, monkeypatch):
    """HTTP_PROXY is honoured (the proxy gets the absolute URL); NO_PROXY exempts a host."""
    target = f"http://127.0.0.1:{_closed_port()}/p"  # nothing listens there: only the proxy can answer
    web.set(target, Route(body=PAGE))
    _proxy_env(monkeypatch, web.base)
    r = one(fast_ingest_config(respect_robots=False, max_retries=0), target)
    assert r.ok and b"Hello world" in r.body and web.hits[target] == 1
    _proxy_env(monkeypatch, web.base, no_proxy="127.0.0.1")
    direct = one(fast_ingest_config(respect_robots=False, max_retries=0), target)
    assert direct.error == "connect_error" and web.hits[target] == 1  # went straight to the closed port


def test_netrc_credentials_are_never_sent(web, monkeypatch, tmp_path):
    netrc = tmp_path / "netrc"
    netrc.write_text("machine 127.0.0.1 login alice password secret\n")
    netrc.chmod(0o600)
    monkeypatch.setenv("NETRC", str(netrc))
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".netrc").write_text(netrc.read_text())
    (tmp_path / ".netrc").chmod(0o600)
    web.set("/p", Route(body=PAGE))
    assert one(fast_ingest_config(), web.url("/p")).ok
    assert web.requests and all("authorization" not in r.headers for r in web.requests)


def test_proxy_without_scheme_and_on_a_private_name_is_used(web, monkeypatch):
    """``http_proxy=host:port`` means http://; a proxy the user set is not held to the address
    policy (here on localhost while loopback is refused), the targets still are."""
    target = "http://93.184.216.34/p"  # a public address: the pre-check passes without DNS
    web.set(target, Route(body=PAGE))
    _proxy_env(monkeypatch, f"localhost:{web.port}")
    r = one(fast_ingest_config(allow_networks=(), respect_robots=False, max_retries=0), target)
    assert r.ok and web.hits[target] == 1, (r.error, r.detail)
    blocked = one(fast_ingest_config(allow_networks=(), respect_robots=False, max_retries=0), web.url("/p"))
    assert blocked.error == "blocked_address"  # through the proxy or not, a loopback target is refused


class RawServer:
    """Answers every request on a keep-alive connection with the same raw bytes."""

    def __init__(self, response: bytes):
        import threading

        self.response = response
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        import threading

        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        with conn:
            buf = b""
            while True:
                data = conn.recv(65536)
                if not data:
                    return
                buf += data
                while b"\r\n\r\n" in buf:
                    _, buf = buf.split(b"\r\n\r\n", 1)
                    conn.sendall(self.response)

    def close(self) -> None:
        self.sock.close()


def _raw(headers: list[str], body: bytes) -> bytes:
    return ("HTTP/1.1 200 OK\r\n" + "".join(h + "\r\n" for h in headers)
            + f"Content-Length: {len(body)}\r\n\r\n").encode("latin-1") + body


def test_odd_headers_repeated_many_and_not_utf8():
    cfg = fast_ingest_config(respect_robots=False, max_retries=0)
    page = PAGE.encode()
    # Two Content-Types: every check sees both (joined), so a page is not read as HTML from one
    # and refused as a download from the other.
    srv = RawServer(_raw(["Content-Type: application/octet-stream", "Content-Type: text/html"], page))
    try:
        r = one(cfg, srv.url + "/p")
        assert r.error == "not_html" and r.headers["content-type"] == "application/octet-stream, text/html"
    finally:
        srv.close()
    # 140 Set-Cookie lines (aiohttp refuses more than 128 by default) and a Latin-1 ETag.
    cookies = [f"Set-Cookie: c{i}=v{i}; Path=/" for i in range(140)]
    srv = RawServer(_raw(["Content-Type: text/html; charset=utf-8", 'ETag: "caf\xe9"', *cookies], page))
    try:
        r = one(cfg, srv.url + "/p", kind="feed")
        assert r.ok and r.body == page, (r.error, r.detail)
        assert r.headers["etag"] == '"caf\xe9"'  # Latin-1, as httpx reads it: storable text, no surrogates
        r.headers["etag"].encode("utf-8")
    finally:
        srv.close()


def test_redirects_loop_limit_and_scheme(web):
    web.set("/a", Route(status=302, headers={"Location": "/b"}))
    web.set("/b", Route(status=301, headers={"Location": web.url("/a")}))
    for i in range(8):
        web.set(f"/c{i}", Route(status=307, headers={"Location": f"/c{i + 1}"}))
    web.set("/c8", Route(body=PAGE))
    web.set("/ftp", Route(status=302, headers={"Location": "ftp://127.0.0.1/file"}))
    web.set("/ok", Route(status=308, headers={"Location": "/c8"}))
    loop, chain, ftp, ok = fetch_all(fast_ingest_config(max_redirects=5),
                                     [web.url("/a"), web.url("/c0"), web.url("/ftp"), web.url("/ok")])
    assert loop.error == "redirect_loop"
    assert chain.error == "too_many_redirects" and web.hits.get("/c6", 0) == 0
    assert ftp.error == "bad_scheme"
    assert ok.ok and ok.final_url == web.url("/c8") and ok.redirects == [web.url("/ok")]


def test_endless_body_and_declared_size_are_cut(web):
    web.set("/endless", Route(body="<p>more</p>" * 100, endless=True))
    web.set("/big", Route(body="x" * 300_000))
    t0 = time.monotonic()
    endless, big = fetch_all(fast_ingest_config(max_bytes=200_000), [web.url("/endless"), web.url("/big")])
    assert endless.error == "too_large" and endless.body == b"" and time.monotonic() - t0 < 5
    assert big.error == "too_large" and "Content-Length" in big.detail


def test_pdf_and_image_under_article_links(web):
    pdf, png = (FIX / "report.pdf").read_bytes(), (FIX / "image.png").read_bytes()
    web.set("/report", Route(body=pdf, content_type="application/pdf"))
    web.set("/lying-pdf", Route(body=pdf, content_type="text/html"))
    web.set("/photo", Route(body=png, content_type="image/png"))
    web.set("/untyped", Route(body=PAGE, headers={"Content-Type": ""}))
    urls = [web.url(p) for p in ("/report", "/lying-pdf", "/photo", "/untyped")]
    report, lying, photo, untyped = fetch_all(fast_ingest_config(), urls)
    assert report.error == "not_html" and report.body == b"" and "application/pdf" in report.detail
    assert lying.error == "not_html" and "PDF" in lying.detail
    assert photo.error == "not_html"
    assert untyped.ok
    feed = one(fast_ingest_config(), web.url("/report"), kind="feed")  # feeds are not held to HTML
    assert feed.ok and feed.body == pdf


def test_private_addresses_refused_unless_allowed(web):
    web.set("/p", Route(body=PAGE))
    blocked = one(fast_ingest_config(allow_networks=()), web.url("/p"))
    assert blocked.error == "blocked_address" and "loopback" in blocked.detail and web.hits["/p"] == 0
    localhost = one(fast_ingest_config(allow_networks=()), f"http://localhost:{web.port}/p")
    assert localhost.error == "blocked_address"
    assert one(fast_ingest_config(allow_networks=("127.0.0.0/8",)), web.url("/p")).ok
    web.set("/to-metadata", Route(status=302, headers={"Location": "http://169.254.169.254/latest/meta-data"}))
    hop = one(fast_ingest_config(), web.url("/to-metadata"))
    assert hop.error == "blocked_address" and "link-local" in hop.detail


def test_an_address_that_changes_after_the_check_is_refused_at_connect(web, monkeypatch):
    """DNS rebinding: the name looks public when checked, then connects to loopback."""
    from okgen.ingest import netpolicy

    web.set("/p", Route(body=PAGE))
    checked = []

    async def looks_public(self, host, port):
        checked.append(host)
        return ["93.184.216.34"]  # what the name answered at check time

    monkeypatch.setattr(netpolicy.AddressPolicy, "_resolve", looks_public)
    res = one(fast_ingest_config(allow_networks=(), respect_robots=False), f"http://localhost:{web.port}/p")
    assert checked == ["localhost"]  # the pre-check passed...
    assert res.error == "blocked_address" and "resolved at connect time to loopback address" in res.detail, res.detail
    assert web.hits["/p"] == 0  # ...and nothing was sent to the loopback server
    assert not res.retryable


def test_robots_txt_rules_and_unreachable(web):
    web.set("/robots.txt", Route(body="User-agent: *\nDisallow: /private\n\nUser-agent: okgen\nDisallow: /no-okgen\n",
                                 content_type="text/plain"))
    for p in ("/private/x", "/no-okgen/y", "/public/z"):
        web.set(p, Route(body=PAGE))
    cfg = fast_ingest_config(user_agent="okgen/0.1 (+https://x)")
    priv, mine, pub = fetch_all(cfg, [web.url(p) for p in ("/private/x", "/no-okgen/y", "/public/z")])
    assert mine.error == "robots" and pub.ok
    assert priv.ok  # the okgen group overrides the * group
    assert web.hits["/no-okgen/y"] == 0 and web.hits["/robots.txt"] == 1
    assert one(fast_ingest_config(respect_robots=False), web.url("/no-okgen/y")).ok


def test_robots_5xx_means_nothing_is_fetched(web):
    web.set("/robots.txt", Route(status=500))
    web.set("/page", Route(body=PAGE))
    r = one(fast_ingest_config(max_retries=0), web.url("/page"))
    assert r.error == "http_500" and r.detail == "robots.txt unreachable" and web.hits["/page"] == 0


def test_crawl_delay_and_per_host_delay(web):
    web.set("/robots.txt", Route(body="User-agent: *\nCrawl-delay: 1\n", content_type="text/plain"))
    for i in range(3):
        web.set(f"/p{i}", Route(body=PAGE))
    fetch_all(fast_ingest_config(max_crawl_delay=5), [web.url(f"/p{i}") for i in range(3)])
    starts = sorted(q.time for q in web.requests if q.path.startswith("/p"))
    assert all(b - a >= 0.95 for a, b in zip(starts, starts[1:]))


def test_per_host_delay_and_concurrency_limits():
    with WebServer(latency=0.2) as web:
        for i in range(6):
            web.set(f"/p{i}", Route(body=PAGE))
        fetch_all(fast_ingest_config(per_host_delay=0.25, per_host_concurrency=4, respect_robots=False),
                  [web.url(f"/p{i}") for i in range(4)])
        starts = sorted(q.time for q in web.requests)
        assert all(b - a >= 0.22 for a, b in zip(starts, starts[1:]))
    with WebServer(latency=0.3) as web:
        for i in range(6):
            web.set(f"/p{i}", Route(body=PAGE))
        fetch_all(fast_ingest_config(per_host_concurrency=2, concurrency=10, respect_robots=False),
                  [web.url(f"/p{i}") for i in range(6)])
        assert web.max_active == 2
    with WebServer(latency=0.3) as web:
        for i in range(6):
            web.set(f"/p{i}", Route(body=PAGE))
        urls = [web.url(f"/p{i}") for i in range(3)] + [f"http://localhost:{web.port}/p{i}" for i in range(3, 6)]
        fetch_all(fast_ingest_config(per_host_concurrency=10, concurrency=3, respect_robots=False), urls)
        assert web.max_active == 3


def test_per_host_delay_holds_when_requests_queue_for_a_global_slot(web):
    # Both global slots are busy with slow pages; /a1 waits for one past its reserved start and
    # /a2 joins it: they must still start per_host_delay apart, not together.
    web.set("/a0", Route(body=PAGE, delay=1.2))
    web.set("/b0", Route(body=PAGE, delay=1.2))
    for p in ("/a1", "/a2"):
        web.set(p, Route(body=PAGE))
    urls = [web.url("/a0"), f"http://localhost:{web.port}/b0", web.url("/a1"), web.url("/a2")]
    res = fetch_all(fast_ingest_config(per_host_delay=0.5, per_host_concurrency=2, concurrency=2, max_retries=0,
                                       respect_robots=False), urls)
    assert all(r.ok for r in res)
    starts = sorted(q.time for q in web.requests if q.headers.get("host", "").startswith("127.0.0.1"))
    assert len(starts) == 3 and all(b - a >= 0.45 for a, b in zip(starts, starts[1:]))


def test_conditional_get_headers_and_304(web):
    def feed(req: Request) -> Route:
        if req.headers.get("if-none-match") == '"v1"':
            return Route(status=304, body=b"")
        return Route(body="<rss/>", headers={"ETag": '"v1"', "Last-Modified": "Wed, 01 May 2024 00:00:00 GMT"})
    web.set("/feed", feed)
    first = one(fast_ingest_config(), web.url("/feed"), kind="feed")
    assert first.ok and first.headers["etag"] == '"v1"'
    second = one(fast_ingest_config(), web.url("/feed"), kind="feed",
                 headers={"If-None-Match": '"v1"', "If-Modified-Since": first.headers["last-modified"]})
    assert second.ok and second.status == 304 and second.body == b""
    assert web.requests[-1].headers["if-modified-since"] == "Wed, 01 May 2024 00:00:00 GMT"


def test_every_response_is_captured_in_warc(web, tmp_path):
    gz = gzip.compress(PAGE.encode())
    web.set("/gz", Route(body=gz, headers={"Content-Encoding": "gzip"}))
    web.set("/moved", Route(status=301, headers={"Location": "/gz"}))
    web.set("/missing", Route(status=404, body="not here"))
    web.set("/report", Route(body=(FIX / "report.pdf").read_bytes(), content_type="application/pdf"))
    path = tmp_path / "x.warc.gz"
    with WarcWriter(path) as w:
        r, miss, pdf = fetch_all(fast_ingest_config(), [web.url("/moved"), web.url("/missing"), web.url("/report")], warc=w)
    assert r.ok and r.body == PAGE.encode() and miss.error == "http_404" and pdf.error == "not_html"
    arch = WarcArchive(path)
    assert arch.lookup(web.url("/moved")).status == 301
    rec = arch.lookup(web.url("/gz"))
    assert rec.body() == PAGE.encode() and rec.header("X-Okgen-Original-Content-Encoding") == "gzip"
    assert rec.header("content-encoding") is None and rec.date == r.fetched_at
    assert arch.lookup(web.url("/missing")).status == 404
    assert arch.lookup(web.url("/report")).truncated == "unspecified"
    assert arch.lookup(web.url("/robots.txt")).status == 404
