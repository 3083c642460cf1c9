"""A lean HTTP/1.1 keep-alive server on asyncio, for the benchmarks' local servers.

okgen.testing.web's threaded server (what the tests use) sleeps in one thread per request;
when 32 or more threads wake at once they queue for the process's GIL, which adds latency a
remote server would not. This one answers every request ``latency`` seconds after it arrived
(the answer is computed within that time), one coroutine per connection.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from http import HTTPStatus

# (method, target, lowercased headers, body) -> (status, headers, body)
Answer = Callable[[str, str, dict[str, str], bytes], tuple[int, dict[str, str], bytes]]


def _reason(status: int) -> bytes:
    try:
        return HTTPStatus(status).phrase.encode("latin-1")
    except ValueError:
        return b"Status"


def connection_handler(answer: Answer, latency: float) -> Callable[[asyncio.StreamReader, asyncio.StreamWriter], object]:
    """An ``asyncio.start_server`` callback answering each request with ``answer``."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                arrived = time.monotonic()
                lines = head.decode("latin-1").split("\r\n")
                method, target = lines[0].split(" ", 2)[:2]
                headers = {k.strip().lower(): v.strip() for k, v in (x.split(":", 1) for x in lines[1:] if ":" in x)}
                body = await reader.readexactly(int(headers.get("content-length") or 0))
                status, out, data = answer(method, target, headers, body)
                wait = arrived + latency - time.monotonic()
                if wait > 0:
                    await asyncio.sleep(wait)
                fields = {**out, "Content-Length": str(len(data))}
                writer.write(b"HTTP/1.1 %d %s\r\n" % (status, _reason(status))
                             + "".join(f"{k}: {v}\r\n" for k, v in fields.items()).encode("latin-1") + b"\r\n" + data)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            pass
        finally:
            writer.close()

    return handle
