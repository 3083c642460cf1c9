"""A local fake of Mem0's REST server (``POST /memories``, ``POST /search``, ``DELETE /memories``).

A real HTTP server on 127.0.0.1 (the standard library's ``ThreadingHTTPServer``) that stores
memories per ``user_id`` in a dict and ranks them by words shared with the query, so the
``mem0-rest`` adapter is tested over real HTTP without Mem0 itself.
"""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

_WORD = re.compile(r"\w+")


class FakeMem0:
    """``with FakeMem0() as srv: srv.base_url``; ``srv.memories[user_id]`` holds what was stored."""

    def __init__(self) -> None:
        self.memories: dict[str, list[dict[str, Any]]] = {}
        self.calls: list[tuple[str, str]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _reply(self, status: int, body: Any) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _json(self) -> Any:
                n = int(self.headers.get("Content-Length") or 0)
                return json.loads(self.rfile.read(n) or b"{}")

            def do_POST(self) -> None:
                path = urlsplit(self.path).path
                body = self._json()
                fake.calls.append(("POST", path))
                if path == "/memories":
                    mems = fake.memories.setdefault(body["user_id"], [])
                    text = "\n".join(m["content"] for m in body.get("messages", []))
                    mems.append({"id": f"m{len(mems)}", "memory": text, "metadata": body.get("metadata") or {}})
                    return self._reply(200, {"results": [{"id": mems[-1]["id"], "event": "ADD"}]})
                if path == "/search":
                    q = set(_WORD.findall(body["query"].lower()))
                    mems = fake.memories.get(body["user_id"], [])
                    scored = [(len(q & set(_WORD.findall(m["memory"].lower()))), i, m) for i, m in enumerate(mems)]
                    scored = sorted((s for s in scored if s[0] > 0), key=lambda s: (-s[0], -s[1]))
                    return self._reply(200, {"results": [{**m, "score": float(s)} for s, _, m in scored][: body.get("limit", 5)]})
                return self._reply(404, {"detail": "not found"})

            def do_DELETE(self) -> None:
                u = urlsplit(self.path)
                fake.calls.append(("DELETE", u.path))
                user = parse_qs(u.query).get("user_id", [""])[0]
                fake.memories.pop(user, None)
                self._reply(200, {"message": "deleted"})

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def __enter__(self) -> FakeMem0:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
