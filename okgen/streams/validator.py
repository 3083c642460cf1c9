"""The transition validator: an LLM judges a new value that too few outlets reported.

A track's new value counts as a transition when ``min_outlets`` outlets report it the same day,
or, with a validator, when the model shown the dated sentence of the value in force and the
dated sentence of the new one judges that the new sentence is about the same subject
(``same_subject``), gives the value in force on its date and not a past one reported late
(``current``), and that the value really replaced the old one (``changed``). The prompt is the
``transition`` agent (``okgen/data/agents/facts/transition*.md``). A model answer that cannot be
read rejects the change (the track day says why); a transient failure (HTTP error, timeout,
budget) stops the build, so that nothing is written from a partial judgement and a rerun asks
again (answers given are cached).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from okgen.errors import BudgetExceeded, OkgenError
from okgen.facts.records import RELATIONS
from okgen.llm import ChatModel, ChatRequest
from okgen.schema import Decoding
from okgen.settings import Workspace


class TransitionVerdict(BaseModel):
    """The validator's answer."""

    reason: str
    same_subject: bool
    current: bool
    changed: bool


@dataclass(frozen=True)
class Report:
    """One value as one outlet reported it: what, when, where, and the sentence."""

    value: str
    date: dt.date | None
    outlet: str
    evidence: str


@dataclass(frozen=True)
class Judgement:
    """The validator's decision on one change."""

    accepted: bool
    note: str


class TransitionValidator:
    """Judges single-outlet changes of tracks with a chat model.

    Args:
        client: the chat model.
        decoding: the model spec's decoding options.
        cache: the response cache the client uses (closed by :meth:`close`).
    """

    def __init__(self, client: ChatModel, decoding: dict[str, str] | None = None, *, cache: Any = None,
                 workspace: Workspace | None = None, agents_dir: Any = None):
        from okgen.generate.agents import load_agent, resolve_agents_dir
        from okgen.generate.llm_generator import decoding_from

        self.spec = load_agent("transition", resolve_agents_dir(workspace, agents_dir))
        self.client = client
        self.cache = cache
        self.decoding: Decoding = decoding_from(self.spec, dict(decoding or {}), 0)
        self.id = f"{client.name}+{self.spec.spec_hash[:8]}"
        self.asked = self.accepted = self.rejected = self.errors = 0

    @classmethod
    def from_spec(cls, spec: str, ws: Workspace, *, max_cost: float | None = None, use_cache: bool = True,
                  concurrency: int = 8) -> TransitionValidator:
        """The validator for a model spec, with the workspace's cache, prices and a budget."""
        from okgen.facts.llm import open_client

        client, decoding, cache = open_client(spec, ws, max_cost=max_cost, use_cache=use_cache, concurrency=concurrency)
        return cls(client, decoding, cache=cache, workspace=ws)

    def close(self) -> None:
        """Close the response cache."""
        if self.cache is not None:
            self.cache.flush()
            self.cache.close()
            self.cache = None

    def request(self, subject: str, relation: str, old: Report | None, new: Report) -> ChatRequest:
        """The chat request judging the change from ``old`` (None: no value yet) to ``new``."""
        none = "(none yet)"
        values = {"relation_text": RELATIONS[relation][2] if relation in RELATIONS else relation, "subject": subject,
                  "old_value": old.value if old else none, "old_date": str(old.date) if old else "-",
                  "old_outlet": old.outlet if old else "-", "old_evidence": old.evidence if old else none,
                  "new_value": new.value, "new_date": str(new.date), "new_outlet": new.outlet,
                  "new_evidence": new.evidence}
        d = self.decoding
        return ChatRequest(messages=({"role": "system", "content": self.spec.render("system", **values)},
                                     {"role": "user", "content": self.spec.render("user", **values)}),
                           temperature=d.temperature, top_p=d.top_p, max_tokens=d.max_tokens or None, seed=d.seed,
                           schema=TransitionVerdict, tag="transition")

    async def ajudge(self, subject: str, relation: str, old: Report | None, new: Report) -> Judgement:
        """Judge one change.

        Raises:
            BudgetExceeded, OkgenError: a transient failure (the build stops; rerun).
        """
        self.asked += 1
        res = await self.client.achat(self.request(subject, relation, old, new))
        if res.transient:
            msg = f"transition validator {self.client.name}: {res.error}; nothing written, rerun (answers so far are cached)"
            raise BudgetExceeded(msg) if res.error_kind == "budget" else OkgenError(msg)
        if not res.ok or res.parsed is None:
            self.errors += 1
            return Judgement(False, f"validator error ({res.error_kind}): {(res.error or '')[:200]}")
        v: TransitionVerdict = res.parsed
        ok = v.same_subject and v.current and v.changed
        self.accepted += ok
        self.rejected += not ok
        failed = [k for k in ("same_subject", "current", "changed") if not getattr(v, k)]
        return Judgement(ok, ("accepted: " if ok else f"rejected ({', '.join(failed)}): ") + " ".join(v.reason.split())[:300])

    def counts(self) -> dict[str, int]:
        """Changes asked, accepted, rejected, and answers that could not be read."""
        return {"validator_asked": self.asked, "validator_accepted": self.accepted,
                "validator_rejected": self.rejected, "validator_errors": self.errors}
