"""``mem0-rest``: an example adapter for a third-party memory behind Mem0's REST API server.

It plugs in through the ``okgen.memories`` entry point (declared in okgen's own
``pyproject.toml``, as a third-party package would declare its adapter) and speaks the shape of
Mem0's FastAPI server:

* ``POST /memories`` ``{"messages": [{"role": "user", "content": ...}], "user_id": ...,
  "metadata": {...}, "infer": false}`` for each observed article (okgen puts its date, id,
  title and outlet in the metadata);
* ``POST /search`` ``{"query": ..., "user_id": ..., "limit": k}`` answering
  ``{"results": [{"id", "memory", "metadata", "score"}]}``;
* ``DELETE /memories?user_id=...`` on :meth:`reset`.

The memories live on the server: :meth:`state` is the ``user_id`` and the last day observed,
so a resumed run carries on with what the server holds. Passages keep the metadata's date and
article id, so the harness's guard checks what the server returns like any other memory's.

Options: ``base_url`` (required), ``user`` (namespace, default ``okgen``), ``timeout`` (30).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

from okgen.errors import ConfigError, OkgenError
from okgen.eval.templates import Passage
from okgen.memory.base import Memory
from okgen.schema import Article


class Mem0Rest(Memory):
    """A memory kept by a Mem0-compatible REST server."""

    name = "mem0-rest"

    def __init__(self, base_url: str | None = None, user: str = "okgen", timeout: float = 30.0, **options: Any):
        if not base_url:
            raise ConfigError("the mem0-rest memory needs base_url=http://HOST:PORT")
        super().__init__(base_url=str(base_url).rstrip("/"), user=str(user), **options)
        import httpx

        self._http = httpx.Client(base_url=self.options["base_url"], timeout=float(timeout))
        self.user_id = ""
        self.as_of: str | None = None
        self.items = 0

    def _call(self, method: str, path: str, **kw: Any) -> Any:
        import httpx

        try:
            r = self._http.request(method, path, **kw)
            r.raise_for_status()
        except httpx.HTTPError as e:
            raise OkgenError(f"mem0-rest {method} {path}: {type(e).__name__}: {e}") from None
        return r.json() if r.content else {}

    def reset(self, seed: int) -> None:
        self.user_id = f"{self.options['user']}-{seed}"
        self._call("DELETE", "/memories", params={"user_id": self.user_id})
        self.as_of, self.items = None, 0

    def observe(self, day: dt.date, articles: Sequence[Article]) -> None:
        for a in articles:
            meta = {"date": a.date.isoformat(), "article_id": a.id, "title": a.title, "source": a.source_name or a.source}
            self._call("POST", "/memories", json={"messages": [{"role": "user", "content": f"{a.title}\n{a.text}"}],
                                                  "user_id": self.user_id, "metadata": meta, "infer": False})
            self.items += 1
        self.as_of = day.isoformat()

    def retrieve(self, query: str, as_of: dt.date, k: int) -> list[Passage]:
        got = self._call("POST", "/search", json={"query": query, "user_id": self.user_id, "limit": k})
        out = []
        for r in (got.get("results") or [])[:k]:
            meta = r.get("metadata") or {}
            out.append(Passage(article_id=str(meta.get("article_id") or r.get("id", "")), title=str(meta.get("title", "")),
                               text=str(r.get("memory", "")), source=str(meta.get("source", "")),
                               date=str(meta.get("date", ""))))
        return out

    def state(self) -> dict[str, Any]:
        return {"user_id": self.user_id, "as_of": self.as_of, "items": self.items}

    def restore(self, state: dict[str, Any]) -> None:
        self.user_id, self.as_of, self.items = state["user_id"], state.get("as_of"), int(state.get("items", 0))

    def stats(self) -> dict[str, Any]:
        return {"items": self.items, "chars": 0, "tokens": 0}

    def close(self) -> None:
        self._http.close()
