"""A lean HTTP/1.1 keep-alive server on asyncio, for the benchmarks' local servers.

okgen.testing.web's threaded server (what the tests use) sleeps in one thread per request;
when 32 or more threads wake at once they queue for the process's GIL, which adds latency a
remote server would not. This one answers every request ``latency`` seconds (a fixed figure, or
one computed per request) after its first byte arrived (the answer is computed within that time), one protocol object per connection;
arrival times are taken before any request of a burst is parsed, so the server's own work does
not add to the latency while it keeps up.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from http import HTTPStatus

# (method, target, lowercased headers, body) -> (status, headers, body)
Answer = Callable[[str, str, dict[str, str], bytes], tuple[int, dict[str, str], bytes]]
# (request body, reply body) -> seconds from the request's arrival to its answer
Latency = Callable[[bytes, bytes], float]


def _reason(status: int) -> bytes:
    try:
        return HTTPStatus(status).phrase.encode("latin-1")
    except ValueError:
        return b"Status"


class _Connection(asyncio.Protocol):
    """One keep-alive connection. A request's arrival is the time its first byte came in,
    taken in ``data_received`` before any request is parsed or answered, so that a burst of
    requests on many connections gets the same latency: the answers are computed in a later
    callback and each is written ``latency`` seconds after its request arrived."""

    def __init__(self, answer: Answer, latency: float | Latency):
        self.answer = answer
        self.latency = latency
        self.buf = bytearray()
        self.arrived: float | None = None
        self.transport: asyncio.Transport | None = None
        self.pending = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        loop = asyncio.get_running_loop()
        if self.arrived is None:
            self.arrived = loop.time()
        self.buf += data
        if not self.pending:
            self.pending = True
            loop.call_soon(self._process)

    def _process(self) -> None:
        self.pending = False
        loop = asyncio.get_running_loop()
        while self.transport is not None and not self.transport.is_closing():
            end = self.buf.find(b"\r\n\r\n")
            if end < 0:
                return
            try:
                lines = bytes(self.buf[:end]).decode("latin-1").split("\r\n")
                method, target = lines[0].split(" ", 2)[:2]
                headers = {k.strip().lower(): v.strip() for k, v in (x.split(":", 1) for x in lines[1:] if ":" in x)}
                length = int(headers.get("content-length") or 0)
            except ValueError:
                self.transport.close()
                return
            if len(self.buf) < end + 4 + length:
                return
            body = bytes(self.buf[end + 4:end + 4 + length])
            del self.buf[:end + 4 + length]
            arrived = self.arrived if self.arrived is not None else loop.time()
            self.arrived = loop.time() if self.buf else None
            status, out, data = self.answer(method, target, headers, body)
            fields = {**out, "Content-Length": str(len(data))}
            reply = (b"HTTP/1.1 %d %s\r\n" % (status, _reason(status))
                     + "".join(f"{k}: {v}\r\n" for k, v in fields.items()).encode("latin-1") + b"\r\n" + data)
            delay = self.latency(body, data) if callable(self.latency) else self.latency
            loop.call_at(arrived + delay, self._send, reply)

    def _send(self, reply: bytes) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(reply)

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None


def protocol_factory(answer: Answer, latency: float | Latency) -> Callable[[], asyncio.Protocol]:
    """A ``loop.create_server`` protocol factory answering each request with ``answer``,
    ``latency`` seconds (or ``latency(request body, reply body)``) after the request's first
    byte arrived."""
    return lambda: _Connection(answer, latency)
