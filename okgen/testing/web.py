"""A real threaded HTTP server on 127.0.0.1 with scripted routes, for tests and benchmarks.

Example::

    with WebServer({"/feed.xml": Route(body=xml, headers={"Content-Type": "application/rss+xml"})}) as web:
        url = web.url("/feed.xml")

A route is a :class:`Route`, a list of routes (served in turn, the last one repeating) or a
callable taking the :class:`Request` and returning a :class:`Route`. Unknown paths answer 404.
"""

from __future__ import annotations

import socket
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Route:
    """How to answer one request.

    Attributes:
        status: HTTP status.
        body: response bytes (str is UTF-8 encoded).
        headers: extra headers (Content-Type defaults to text/html; charset=utf-8).
        delay: seconds to wait before answering (server latency).
        hang: never answer (sleep ``hang_seconds``), to test client timeouts.
        hang_seconds: how long a hanging answer sleeps.
        endless: stream the body forever (no Content-Length), to test size limits.
        content_type: shorthand for the Content-Type header.
    """

    status: int = 200
    body: bytes | str = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    hang: bool = False
    hang_seconds: float = 30.0
    endless: bool = False
    content_type: str | None = None


@dataclass
class Request:
    """What the server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    time: float


RouteSpec = Route | list[Route] | Callable[[Request], Route]


class WebServer:
    """Serve scripted routes on 127.0.0.1 from a background thread.

    Args:
        routes: path (with query string, or without to match any query) -> route spec.
        latency: seconds added before every answer.
        port: 0 picks a free port.
    """

    def __init__(self, routes: dict[str, RouteSpec] | None = None, latency: float = 0.0, port: int = 0):
        self.routes: dict[str, RouteSpec] = dict(routes or {})
        self.latency = latency
        self.hits: Counter[str] = Counter()
        self.requests: list[Request] = []
        self._served: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._active = 0
        self.max_active = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self) -> None:
                super().setup()
                # Headers and body go out in two writes; without TCP_NODELAY, Nagle's algorithm
                # and the client's delayed ACK stall every keep-alive answer by ~40 ms.
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                server._handle(self, "GET")

            def do_HEAD(self) -> None:
                server._handle(self, "HEAD")

            def do_POST(self) -> None:
                server._handle(self, "POST")

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            request_queue_size = 1024
            allow_reuse_address = True

        self._httpd = Server(("127.0.0.1", port), Handler)
        self.port = self._httpd.server_address[1]
        self._thread: threading.Thread | None = None

    # -- lifecycle ------------------------------------------------------------------------
    def start(self) -> WebServer:
        """Start serving in a daemon thread."""
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving."""
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> WebServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    @property
    def base(self) -> str:
        """``http://127.0.0.1:PORT``."""
        return f"http://127.0.0.1:{self.port}"

    def url(self, path: str) -> str:
        """Absolute URL of ``path``."""
        return self.base + (path if path.startswith("/") else "/" + path)

    def set(self, path: str, spec: RouteSpec) -> None:
        """Add or replace a route."""
        with self._lock:
            self.routes[path] = spec
            self._served[path] = 0

    # -- serving --------------------------------------------------------------------------
    def _pick(self, req: Request) -> Route:
        with self._lock:
            spec = self.routes.get(req.path)
            key = req.path
            if spec is None:
                key = req.path.split("?", 1)[0]
                spec = self.routes.get(key)
            if spec is None:
                return Route(status=404, body=b"not found")
            if isinstance(spec, list):
                i = min(self._served[key], len(spec) - 1)
                self._served[key] += 1
                return spec[i]
        if callable(spec):
            return spec(req)
        return spec

    def _handle(self, h: BaseHTTPRequestHandler, method: str) -> None:
        length = int(h.headers.get("Content-Length") or 0)
        body = h.rfile.read(length) if length else b""
        req = Request(method, h.path, {k.lower(): v for k, v in h.headers.items()}, body, time.time())
        with self._lock:
            self.hits[h.path] += 1
            self.requests.append(req)
            self._active += 1
            self.max_active = max(self.max_active, self._active)
        active = True

        def done() -> None:
            # Before the answer leaves: once the client has it, its next request may arrive while
            # this thread is still writing, and must not be counted as concurrent with this one.
            nonlocal active
            if active:
                active = False
                with self._lock:
                    self._active -= 1

        try:
            route = self._pick(req)
            wait = self.latency + route.delay
            if wait:
                time.sleep(wait)
            if route.hang:
                time.sleep(route.hang_seconds)
                return
            done()
            data = route.body.encode("utf-8") if isinstance(route.body, str) else route.body
            h.send_response(route.status)
            headers = {"Content-Type": route.content_type or "text/html; charset=utf-8"}
            headers.update(route.headers)
            for k, v in headers.items():
                h.send_header(k, v)
            if route.endless:
                h.send_header("Connection", "close")
                h.end_headers()
                chunk = (data or b"x") * max(1, 65536 // max(1, len(data or b"x")))
                try:
                    while True:
                        h.wfile.write(chunk)
                except (BrokenPipeError, ConnectionResetError, OSError):
                    return
            h.send_header("Content-Length", str(len(data)))
            h.end_headers()
            if method != "HEAD":
                h.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass
        finally:
            done()
