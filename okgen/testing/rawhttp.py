"""A raw HTTP server on 127.0.0.1 for tests of HTTP clients: scripted bytes per request,
connections closed on cue, optional TLS."""

from __future__ import annotations

import socketserver
import ssl
import threading


class RawServer:
    """Answers the requests of each connection with scripted raw replies, recording per
    connection the requests' first lines and bodies.

    ``replies`` are consumed in order across connections; a reply is raw bytes, ``None`` (close
    the connection without answering) or ``"close"`` (answer nothing more on this connection:
    close it right after the previous reply, before reading the next request)."""

    def __init__(self, *replies: bytes | str | None, tls: ssl.SSLContext | None = None):
        self.replies = list(replies)
        self.connections: list[list[tuple[str, bytes]]] = []
        self.closed = threading.Event()
        outer = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                seen: list[tuple[str, bytes]] = []
                outer.connections.append(seen)
                try:
                    while True:
                        if outer.replies and outer.replies[0] == "close":
                            outer.replies.pop(0)
                            return
                        line = self.rfile.readline()
                        if not line:
                            return
                        length = 0
                        while (h := self.rfile.readline()) not in (b"\r\n", b"\n", b""):
                            k, _, v = h.decode("latin-1").partition(":")
                            if k.strip().lower() == "content-length":
                                length = int(v)
                        seen.append((line.decode("latin-1").strip(), self.rfile.read(length)))
                        reply = outer.replies.pop(0) if outer.replies else None
                        if reply is None:
                            return
                        self.wfile.write(reply)
                        self.wfile.flush()
                finally:
                    outer.closed.set()

        class TLSServer(socketserver.ThreadingTCPServer):
            def get_request(self):  # noqa: ANN202 - socketserver's signature
                sock, addr = super().get_request()
                return (tls.wrap_socket(sock, server_side=True) if tls else sock), addr

        self.server = TLSServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def requests(self) -> list[tuple[str, bytes]]:
        return [r for c in self.connections for r in c]

    def __enter__(self) -> RawServer:
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    @property
    def lines(self) -> list[str]:
        """The first line of every request, in order."""
        return [line for line, _ in self.requests]
