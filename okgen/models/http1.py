"""A lean HTTP/1.1 keep-alive transport for the ``openai`` client's ``httpx2`` client.

The ``openai`` client sends its requests through an ``httpx2.AsyncClient``, whose default
transport (``httpcore2`` + ``h11``) costs about 0.6 ms of CPU per request and scans its whole
connection pool on every request. At 128 LLM calls in flight (640 calls a second at 0.2 s
latency) that, with the rest of the client, is more than one core, and replies queue for the
event loop. This transport keeps everything of the ``openai`` client and of ``httpx2`` above
the socket (request building, auth, timeouts, redirects, content decoding, error classes) and
replaces only the connection layer: one ``asyncio.Protocol`` per connection, a LIFO pool of
idle connections per origin, HTTP/1.1 framing (Content-Length, chunked, read-to-close).

What it does not do is left to ``httpx2``'s own transport: proxies are mounted by
``httpx2.AsyncClient`` from the environment as usual (the proxied requests never reach this
class), and HTTP/2 is never negotiated.

Errors are ``httpx2``'s, so the ``openai`` client maps them as usual: a refused or unreachable
server is ``ConnectError``, a timeout ``ConnectTimeout``/``ReadTimeout``/``WriteTimeout``, a
garbled or cut reply ``RemoteProtocolError``. A request that fails on a reused keep-alive
connection before any byte of the reply arrived (the server had closed the idle connection)
is sent once more on a new connection, as browsers and urllib3 do.
"""

from __future__ import annotations

import asyncio
import ssl
import time
import weakref
from collections import deque
from typing import Any

import httpx2

# Longest reply head (status line and headers) accepted; real servers send a few KB.
MAX_HEAD = 256 * 1024
# Idle connections older than this are closed rather than reused (httpcore's default).
KEEPALIVE_EXPIRY = 5.0
# Idle connections kept per origin.
MAX_IDLE = 512


class _Closed(Exception):
    """The connection closed (``received``: bytes of the reply that had arrived)."""

    def __init__(self, received: int, exc: BaseException | None):
        super().__init__(str(exc) if exc else "connection closed")
        self.received = received
        self.exc = exc


class _Conn(asyncio.Protocol):
    """One HTTP/1.1 connection: a byte buffer filled by the event loop, read by one request at a time."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buf = bytearray()
        self.pos = 0  # read position in buf
        self.eof = False
        self.exc: BaseException | None = None
        self.waiter: asyncio.Future[None] | None = None
        self.idle_since = 0.0
        self.received = 0  # bytes of the current reply that have arrived
        self.paused = False

    # -- protocol callbacks (event loop) ---------------------------------------------
    def connection_made(self, transport: Any) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buf += data
        self.received += len(data)
        self._wake()

    def eof_received(self) -> bool:
        self.eof = True
        self._wake()
        return False  # close the transport

    def connection_lost(self, exc: BaseException | None) -> None:
        self.eof = True
        self.exc = exc
        self._wake()

    def pause_writing(self) -> None:
        self.paused = True

    def resume_writing(self) -> None:
        self.paused = False
        self._wake()

    def _wake(self) -> None:
        w = self.waiter
        if w is not None and not w.done():
            w.set_result(None)

    # -- used by the transport ---------------------------------------------------------
    @property
    def usable(self) -> bool:
        t = self.transport
        return not self.eof and t is not None and not t.is_closing() and self.pos == len(self.buf)

    async def _wait(self, deadline: float | None) -> None:
        """Wait for the next callback; :class:`_Expired` at ``deadline`` (event-loop time)."""
        loop = asyncio.get_running_loop()
        self.waiter = fut = loop.create_future()
        handle = None
        if deadline is not None:
            handle = loop.call_at(deadline, _expire, fut)
        try:
            await fut
        finally:
            self.waiter = None
            if handle is not None:
                handle.cancel()

    async def write(self, data: bytes, deadline: float | None) -> None:
        """Send ``data``, waiting while the socket's buffer is full (until ``deadline``)."""
        assert self.transport is not None
        self.transport.write(data)
        while self.paused and not self.eof:
            try:
                await self._wait(deadline)
            except _Expired:
                raise httpx2.WriteTimeout("timed out sending the request") from None
        if self.eof and not self.received:  # closed before any answer (else read what came)
            raise _Closed(0, self.exc)

    async def more(self, deadline: float | None) -> None:
        """Wait for more bytes (or the end of the connection)."""
        if self.eof:
            raise _Closed(self.received, self.exc)
        try:
            await self._wait(deadline)
        except _Expired:
            raise httpx2.ReadTimeout("timed out reading the response") from None

    def take(self, n: int) -> bytes:
        """The next ``n`` buffered bytes (the caller made sure they are there)."""
        out = bytes(self.buf[self.pos:self.pos + n])
        self.pos += n
        if self.pos > 65536 and self.pos * 2 > len(self.buf):
            del self.buf[:self.pos]
            self.pos = 0
        return out

    def reset(self) -> None:
        """Start a new request: forget the previous reply's bytes."""
        del self.buf[:self.pos]
        self.pos = 0
        self.received = len(self.buf)

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()
        self.eof = True


class _Expired(Exception):
    pass


def _expire(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_exception(_Expired())


class LeanTransport(httpx2.AsyncBaseTransport):
    """An ``httpx2`` transport speaking HTTP/1.1 over asyncio protocols, with keep-alive.

    Args:
        ssl_context: the TLS context for ``https`` origins (certificates and host names
            verified; see :func:`okgen.tls.tls_context`).
        keepalive_expiry: seconds an idle connection is kept for reuse.
    """

    def __init__(self, ssl_context: ssl.SSLContext | None = None, keepalive_expiry: float = KEEPALIVE_EXPIRY):
        self._ssl = ssl_context
        self.keepalive_expiry = keepalive_expiry
        self._idle: dict[tuple[bytes, bytes, int], deque[_Conn]] = {}
        self._busy: set[_Conn] = set()
        self._closed = False

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        """Send ``request`` and read its whole reply (LLM replies are small; no streaming)."""
        if self._closed:
            raise httpx2.ConnectError("the transport is closed")
        url = request.url
        scheme = url.raw_scheme
        if scheme not in (b"http", b"https"):
            raise httpx2.UnsupportedProtocol(f"unsupported URL scheme {scheme.decode('ascii', 'replace')!r}")
        port = url.port or (443 if scheme == b"https" else 80)
        key = (scheme, url.raw_host, port)
        timeouts = request.extensions.get("timeout") or {}
        body = await request.aread()
        head = _request_head(request)
        data = head + body if len(body) < 65536 else None
        conn, reused = await self._acquire(key, timeouts)
        try:
            try:
                return await self._exchange(conn, request, data, head, body, timeouts)
            except _Closed as e:
                if not (reused and e.received == 0):
                    raise
            # The server closed the idle connection as we sent on it: one more try, on a new one.
            conn.close()
            self._busy.discard(conn)
            conn = await self._connect(key, timeouts)
            self._busy.add(conn)
            return await self._exchange(conn, request, data, head, body, timeouts)
        except _Closed as e:
            conn.close()
            if e.received == 0:
                raise httpx2.RemoteProtocolError("server disconnected without sending a response") from None
            raise httpx2.RemoteProtocolError("peer closed connection without sending complete message body") from None
        except BaseException:
            conn.close()
            raise
        finally:
            self._busy.discard(conn)

    async def _exchange(self, conn: _Conn, request: httpx2.Request, data: bytes | None, head: bytes, body: bytes,
                        timeouts: dict[str, float | None]) -> httpx2.Response:
        loop = asyncio.get_running_loop()
        wt = timeouts.get("write")
        conn.reset()
        if data is not None:
            await conn.write(data, loop.time() + wt if wt is not None else None)
        else:
            await conn.write(head, loop.time() + wt if wt is not None else None)
            await conn.write(body, loop.time() + wt if wt is not None else None)
        rt = timeouts.get("read")
        status, reason, version, headers, content, keep = await _read_response(
            conn, request.method == "HEAD", rt, loop)
        if keep and not self._closed:
            self._release(conn, request)
        else:
            conn.close()
        return httpx2.Response(status, headers=headers, stream=httpx2.ByteStream(content),
                               extensions={"http_version": version, "reason_phrase": reason})

    def _release(self, conn: _Conn, request: httpx2.Request) -> None:
        url = request.url
        scheme = url.raw_scheme
        key = (scheme, url.raw_host, url.port or (443 if scheme == b"https" else 80))
        idle = self._idle.setdefault(key, deque())
        if len(idle) >= MAX_IDLE:
            conn.close()
            return
        conn.idle_since = time.monotonic()
        idle.append(conn)

    async def _acquire(self, key: tuple[bytes, bytes, int], timeouts: dict[str, float | None]) -> tuple[_Conn, bool]:
        idle = self._idle.get(key)
        if idle:
            now = time.monotonic()
            while idle:
                conn = idle.pop()  # the most recently used: the least likely to have been closed
                if conn.usable and now - conn.idle_since < self.keepalive_expiry:
                    self._busy.add(conn)
                    return conn, True
                conn.close()
        conn = await self._connect(key, timeouts)
        self._busy.add(conn)
        return conn, False

    async def _connect(self, key: tuple[bytes, bytes, int], timeouts: dict[str, float | None]) -> _Conn:
        scheme, raw_host, port = key
        host = raw_host.decode("ascii")
        if host.startswith("[") and host.endswith("]"):
            host = host[1:-1]
        loop = asyncio.get_running_loop()
        kw: dict[str, Any] = {}
        if scheme == b"https":
            kw["ssl"] = self._ssl if self._ssl is not None else ssl.create_default_context()
            kw["server_hostname"] = host
        conn = _Conn()
        try:
            await asyncio.wait_for(loop.create_connection(lambda: conn, host, port, **kw), timeouts.get("connect"))
        except TimeoutError:
            raise httpx2.ConnectTimeout(f"timed out connecting to {host}:{port}") from None
        except (OSError, ssl.SSLError) as e:
            raise httpx2.ConnectError(str(e) or type(e).__name__) from None
        return conn

    async def aclose(self) -> None:
        """Close every connection, idle or in use."""
        self._closed = True
        for idle in self._idle.values():
            for conn in idle:
                conn.close()
        self._idle.clear()
        for conn in list(self._busy):
            conn.close()
        self._busy.clear()


def _request_head(request: httpx2.Request) -> bytes:
    url = request.url
    target = url.raw_path or b"/"
    parts = [request.method.encode("ascii"), b" ", target, b" HTTP/1.1\r\n"]
    for name, value in request.headers.raw:
        if b"\r" in value or b"\n" in value or b"\r" in name or b"\n" in name:
            raise httpx2.LocalProtocolError("header contains a line break")
        parts += [name, b": ", value, b"\r\n"]
    parts.append(b"\r\n")
    return b"".join(parts)


async def _read_response(conn: _Conn, head_only: bool, read_timeout: float | None, loop: asyncio.AbstractEventLoop
                         ) -> tuple[int, bytes, bytes, list[tuple[bytes, bytes]], bytes, bool]:
    """Read one reply: (status, reason, http version, headers, body, connection reusable)."""
    while True:
        deadline = loop.time() + read_timeout if read_timeout is not None else None
        while True:
            end = conn.buf.find(b"\r\n\r\n", conn.pos)
            if end >= 0:
                break
            if len(conn.buf) - conn.pos > MAX_HEAD:
                raise httpx2.RemoteProtocolError("the response head is too large")
            await conn.more(deadline)
            deadline = loop.time() + read_timeout if read_timeout is not None else None
        head = conn.take(end + 4 - conn.pos)
        lines = head[:-4].split(b"\r\n")
        status_line = lines[0]
        parts = status_line.split(b" ", 2)
        if len(parts) < 2 or not parts[0].startswith(b"HTTP/1.") or len(parts[1]) != 3 or not parts[1].isdigit():
            raise httpx2.RemoteProtocolError(f"malformed status line {status_line[:80]!r}")
        version = parts[0]
        status = int(parts[1])
        reason = parts[2] if len(parts) > 2 else b""
        headers: list[tuple[bytes, bytes]] = []
        for line in lines[1:]:
            name, colon, value = line.partition(b":")
            if not colon or not name or name != name.strip():
                raise httpx2.RemoteProtocolError(f"malformed header line {line[:80]!r}")
            headers.append((name, value.strip(b" \t")))
        if 100 <= status < 200 and status != 101:
            continue  # an interim reply (100 Continue): the real one follows
        break
    te = cl = None
    close = version == b"HTTP/1.0"
    for name, value in headers:
        low = name.lower()
        if low == b"content-length":
            cl = value
        elif low == b"transfer-encoding":
            te = value.lower()
        elif low == b"connection":
            tokens = {t.strip() for t in value.lower().split(b",")}
            if b"close" in tokens:
                close = True
            elif b"keep-alive" in tokens:
                close = False if version == b"HTTP/1.0" else close
    if head_only or status in (204, 304) or status == 101:
        return status, reason, version, headers, b"", not close and status != 101
    deadline_for = (lambda: loop.time() + read_timeout) if read_timeout is not None else (lambda: None)
    if te is not None and te.endswith(b"chunked"):
        body = await _read_chunked(conn, deadline_for)
        return status, reason, version, headers, body, not close
    if cl is not None:
        try:
            n = int(cl.split(b",")[0])
            if n < 0:
                raise ValueError
        except ValueError:
            raise httpx2.RemoteProtocolError(f"bad Content-Length {cl[:40]!r}") from None
        while len(conn.buf) - conn.pos < n:
            await conn.more(deadline_for())
        return status, reason, version, headers, conn.take(n), not close
    # No length: the body runs to the end of the connection.
    while True:
        try:
            await conn.more(deadline_for())
        except _Closed:
            break
    return status, reason, version, headers, conn.take(len(conn.buf) - conn.pos), False


async def _read_chunked(conn: _Conn, deadline_for: Any) -> bytes:
    out = bytearray()
    while True:
        while (end := conn.buf.find(b"\r\n", conn.pos)) < 0:
            if len(conn.buf) - conn.pos > 4096:
                raise httpx2.RemoteProtocolError("bad chunk size line")
            await conn.more(deadline_for())
        line = conn.take(end + 2 - conn.pos)[:-2]
        try:
            size = int(line.split(b";", 1)[0].strip(), 16)
        except ValueError:
            raise httpx2.RemoteProtocolError(f"bad chunk size {line[:40]!r}") from None
        if size == 0:
            # Trailers, then an empty line.
            while True:
                while (end := conn.buf.find(b"\r\n", conn.pos)) < 0:
                    if len(conn.buf) - conn.pos > MAX_HEAD:
                        raise httpx2.RemoteProtocolError("trailers too large")
                    await conn.more(deadline_for())
                if not conn.take(end + 2 - conn.pos)[:-2]:
                    return bytes(out)
        while len(conn.buf) - conn.pos < size + 2:
            await conn.more(deadline_for())
        chunk = conn.take(size + 2)
        if chunk[-2:] != b"\r\n":
            raise httpx2.RemoteProtocolError("chunk not followed by CRLF")
        out += chunk[:-2]


class SharedTransport(httpx2.AsyncBaseTransport):
    """A handle on the event loop's one :class:`LeanTransport`.

    Every client of one event loop (the generator's, the validator's, the probes') then reuses
    the same keep-alive connections to a server instead of opening its own. The connections
    are closed when the last handle of the loop is closed.
    """

    _by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, tuple[LeanTransport, int]] = weakref.WeakKeyDictionary()

    def __init__(self, ssl_context: ssl.SSLContext | None = None):
        self._loop: asyncio.AbstractEventLoop | None = None
        self._ssl = ssl_context
        self._open = True

    def _transport(self) -> LeanTransport:
        loop = asyncio.get_running_loop()
        if self._loop is None:
            self._loop = loop
            shared, refs = self._by_loop.get(loop, (None, 0))
            if shared is None or shared._closed:
                shared, refs = LeanTransport(self._ssl), 0
            self._by_loop[loop] = (shared, refs + 1)
        elif self._loop is not loop:
            raise RuntimeError("an HTTP client was used from two event loops")
        return self._by_loop[loop][0]

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        """Send ``request`` on the loop's shared connections."""
        if not self._open:
            raise httpx2.ConnectError("the transport is closed")
        return await self._transport().handle_async_request(request)

    async def aclose(self) -> None:
        """Give the handle back; the last one of the loop closes the connections."""
        if not self._open:
            return
        self._open = False
        loop = self._loop
        if loop is None or loop not in self._by_loop:
            return
        shared, refs = self._by_loop[loop]
        if refs <= 1:
            del self._by_loop[loop]
            await shared.aclose()
        else:
            self._by_loop[loop] = (shared, refs - 1)
