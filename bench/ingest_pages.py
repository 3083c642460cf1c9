"""Helpers for the ingest benchmarks: realistic synthetic pages, the real evaluation pages, and a
local HTTP server in a separate process (so its threads do not compete with the fetcher's
event loop for the GIL, as a remote server would not)."""

from __future__ import annotations

import datetime as dt
import gzip
import json
import multiprocessing
import random
from pathlib import Path

DEFAULT_EVAL_DIR = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "extraction-eval"


def synthetic_pages(n: int, seed: int = 0) -> list[bytes]:
    """``n`` news pages of about 40-60 KB: an article from the synthetic corpus inside navigation,
    inline script and style, a comment section, related links and a footer."""
    from okgen.testing.corpus import make_articles
    from okgen.testing.news_site import article_html

    arts, _ = make_articles(max(1, n), dt.date(2024, 5, 1), days=1, seed=seed, facts_per_article=8)
    r = random.Random(seed)
    script = "<script>window.dataLayer=window.dataLayer||[];" + "".join(
        f"dataLayer.push({{'event':'e{i}','value':{i}}});" for i in range(250)) + "</script>"
    style = "<style>" + "".join(f".c{i}{{margin:{i}px;padding:{i % 7}px;color:#{i:06x}}}" for i in range(400)) + "</style>"
    out = []
    for i in range(n):
        a = arts[i % len(arts)]
        comments = "".join(f'<div class="comment"><b>reader{r.randrange(999)}</b><p>I think this is '
                           f'{"great" if j % 2 else "wrong"} news, comment {j}.</p></div>' for j in range(r.randrange(10, 30)))
        html = article_html(a.title, a.text, author=a.author, published=a.published_at, related=40,
                            extra_head=style + script)
        html = html.replace("</main>", f'<section id="comments"><h2>Comments</h2>{comments}</section></main>')
        out.append(html.encode("utf-8"))
    return out


def eval_rows(eval_dir: Path) -> list[dict]:
    """The gold rows of the extraction evaluation set (empty when the folder is missing)."""
    gold = Path(eval_dir) / "gold.jsonl"
    if not gold.is_file():
        return []
    return [json.loads(line) for line in gold.read_text(encoding="utf-8").splitlines() if line.strip()]


def eval_pages(eval_dir: Path, limit: int | None = None) -> list[tuple[str, bytes]]:
    """(url, html bytes) of the evaluation pages."""
    rows = eval_rows(eval_dir)[:limit] if limit else eval_rows(eval_dir)
    return [(r["url"], gzip.decompress((Path(eval_dir) / r["html"]).read_bytes())) for r in rows]


def _serve_threads(pages: list[bytes], latency: float, ready, stop) -> None:
    from okgen.testing.web import Route, WebServer

    routes = {f"/p/{i}": Route(body=b) for i, b in enumerate(pages)}
    routes["/robots.txt"] = Route(body="User-agent: *\nAllow: /\n", content_type="text/plain")
    with WebServer(routes, latency=latency) as web:
        ready.send(web.base)
        stop.wait()


def _serve_asyncio(pages: list[bytes], latency: float, ready, stop, feed: bool = False) -> None:
    """Serve the pages from :mod:`lean_server`'s keep-alive server, ``latency`` per answer.

    okgen.testing.web's threaded server adds GIL wake-up delays when 64 threads sleep and answer
    at once; a remote server would not, so the fetch benchmark uses this one.
    """
    import asyncio
    import threading

    from lean_server import protocol_factory

    robots = b"User-agent: *\nAllow: /\n"
    feed_xml = b""

    def answer(method: str, target: str, headers: dict[str, str], body: bytes) -> tuple[int, dict[str, str], bytes]:
        path = target.split("?", 1)[0]
        if path == "/robots.txt":
            return 200, {"Content-Type": "text/plain"}, robots
        if feed and path == "/feed.xml":
            return 200, {"Content-Type": "application/rss+xml"}, feed_xml
        if path.startswith("/p/") and path[3:].isdigit() and int(path[3:]) < len(pages):
            return 200, {"Content-Type": "text/html; charset=utf-8"}, pages[int(path[3:])]
        return 404, {"Content-Type": "text/plain"}, b"not found"

    factory = protocol_factory(answer, latency)

    async def main() -> None:
        server = await asyncio.get_running_loop().create_server(factory, "127.0.0.1", 0, backlog=1024)
        port = server.sockets[0].getsockname()[1]
        nonlocal feed_xml
        items = "".join(f"<item><title>Story {i}</title><link>http://127.0.0.1:{port}/p/{i}</link>"
                        f"<pubDate>Wed, 01 May 2024 10:00:00 GMT</pubDate></item>" for i in range(len(pages)))
        feed_xml = f'<?xml version="1.0"?><rss version="2.0"><channel><title>bench</title>{items}</channel></rss>'.encode()
        ready.send(f"http://127.0.0.1:{port}")
        done = asyncio.Event()
        loop = asyncio.get_running_loop()
        threading.Thread(target=lambda: (stop.wait(), loop.call_soon_threadsafe(done.set)), daemon=True).start()
        async with server:
            await done.wait()

    asyncio.run(main())


class ServerProcess:
    """Serve ``pages`` at ``/p/<i>`` with ``latency`` seconds per answer from a child process.

    Args:
        pages: page bodies.
        latency: seconds before each answer.
        kind: ``asyncio`` (lean, default) or ``threads`` (okgen.testing.web.WebServer).
        feed: also serve ``/feed.xml``, an RSS feed of every page dated 2024-05-01 (asyncio server only).
    """

    def __init__(self, pages: list[bytes], latency: float, kind: str = "asyncio", feed: bool = False):
        ctx = multiprocessing.get_context("spawn")
        self._stop = ctx.Event()
        recv, send = ctx.Pipe(duplex=False)
        target = _serve_asyncio if kind == "asyncio" else _serve_threads
        args = (pages, latency, send, self._stop) + ((feed,) if kind == "asyncio" else ())
        self._proc = ctx.Process(target=target, args=args, daemon=True)
        self._proc.start()
        self.base: str = recv.recv()

    def urls(self, n: int) -> list[str]:
        """URLs of the first ``n`` pages."""
        return [f"{self.base}/p/{i}" for i in range(n)]

    def close(self) -> None:
        self._stop.set()
        self._proc.join(timeout=10)
        if self._proc.is_alive():
            self._proc.terminate()

    def __enter__(self) -> ServerProcess:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
