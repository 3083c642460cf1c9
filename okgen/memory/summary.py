"""``summary``: a rolling summary written by a chat model (the agents' model spec).

Every day the memory rewrites its notes from the old notes and the day's articles (title and
lead), ``chunk`` articles per call, at most ``per_day`` articles a day (in the order the day
gives them), keeping the notes under ``max_words`` words. ``retrieve`` returns the notes as
one passage dated on the last day observed. The model is any chat spec
(:func:`okgen.llm.chat_model`): ``hf/PATH``, ``openai/NAME,base_url=...``, ``vllm/ID``.

Options: ``model`` (required), ``per_day`` (24), ``chunk`` (8), ``lead_chars`` (300),
``max_words`` (200), ``max_tokens`` (320).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

from okgen.errors import ConfigError
from okgen.eval.templates import Passage
from okgen.memory.base import Memory
from okgen.schema import Article

SYSTEM = ("You keep short running notes about the news for a reader who will be quizzed on it. "
          "Keep names, numbers, places and dates. When a new article changes a fact, replace the old value "
          "and say since when the new one holds.")


class RollingSummary(Memory):
    """Notes rewritten by a chat model each day."""

    name = "summary"
    chronological = False

    def __init__(self, model: str | None = None, per_day: int = 24, chunk: int = 8, lead_chars: int = 300,
                 max_words: int = 200, max_tokens: int = 320, **options: Any):
        if not model:
            raise ConfigError("the summary memory needs a chat model: summary,model=SPEC or --memory-model SPEC")
        super().__init__(model=str(model), per_day=int(per_day), chunk=int(chunk), lead_chars=int(lead_chars),
                         max_words=int(max_words), max_tokens=int(max_tokens), **options)
        self._chat: Any = None
        self.notes, self.as_of, self.tokens, self.calls = "", None, 0, 0

    @property
    def chat(self) -> Any:
        if self._chat is None:
            from okgen.llm import chat_model

            self._chat, _ = chat_model(self.options["model"])
        return self._chat

    def reset(self, seed: int) -> None:
        self.notes, self.as_of, self.tokens, self.calls = "", None, 0, 0

    def _request(self, day: dt.date, batch: Sequence[Article]) -> Any:
        from okgen.llm import ChatRequest

        o = self.options
        items = "\n".join(f"- {a.title} ({a.source_name or a.source}): {a.text[: o['lead_chars']].strip()}" for a in batch)
        user = (f"Notes so far:\n{self.notes or '(none)'}\n\nNew articles of {day.isoformat()}:\n{items}\n\n"
                f"Rewrite the notes in at most {o['max_words']} words.")
        return ChatRequest(messages=({"role": "system", "content": SYSTEM}, {"role": "user", "content": user}),
                           temperature=0.0, max_tokens=o["max_tokens"], seed=0, tag="memory-summary")

    def observe(self, day: dt.date, articles: Sequence[Article]) -> None:
        o = self.options
        todo = list(articles)[: o["per_day"]]
        for i in range(0, len(todo), o["chunk"]):
            res = self.chat.chat(self._request(day, todo[i:i + o["chunk"]]))
            self.calls += 1
            self.tokens += res.prompt_tokens + res.completion_tokens
            if res.ok and res.text and res.text.strip():
                words = res.text.strip().split()
                self.notes = " ".join(words[: o["max_words"] * 2])
        self.as_of = day

    def retrieve(self, query: str, as_of: dt.date, k: int) -> list[Passage]:
        if not self.notes or self.as_of is None:
            return []
        return [Passage(article_id="memory:summary", title=f"Notes up to {self.as_of.isoformat()}", text=self.notes,
                        source="memory", date=self.as_of.isoformat())]

    def state(self) -> dict[str, Any]:
        return {"notes": self.notes, "as_of": self.as_of.isoformat() if self.as_of else None,
                "tokens": self.tokens, "calls": self.calls}

    def restore(self, state: dict[str, Any]) -> None:
        self.notes = state.get("notes", "")
        self.as_of = dt.date.fromisoformat(state["as_of"]) if state.get("as_of") else None
        self.tokens, self.calls = int(state.get("tokens", 0)), int(state.get("calls", 0))

    def stats(self) -> dict[str, Any]:
        return {"items": 1 if self.notes else 0, "chars": len(self.notes), "tokens": self.tokens, "calls": self.calls}

    def close(self) -> None:
        if self._chat is not None:
            from okgen.llm import run_sync

            run_sync(self._chat.aclose())
