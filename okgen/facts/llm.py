"""``llm-v1``: facts an LLM lists for each article, checked against the article.

The model (any spec ``okgen eval --model`` and the agents take: ``openai/NAME[,base_url=URL]``,
``hf/PATH``, ``vllm/ID``) reads one article with the ``facts`` agent's prompt
(``okgen/data/agents/facts/``) and answers with JSON (:class:`ExtractedFacts`). Each fact it
proposes is kept only when

* its relation is one of the closed set (:data:`okgen.facts.records.RELATIONS`),
* its evidence sentence is in the article (whitespace, case and quote styles aside), at least
  four words long,
* its value is written in that sentence (for numbers: the same number, ``125 percent`` = ``125%``),
* a count, percentage or amount holds a number, and the subject is not empty,
* the same sentence gives no other value for that subject and relation.

Every proposed fact that is dropped is counted under its reason, and every article that gave no
usable answer under the kind of failure (:attr:`LLMExtractor.funnel`, written to the facts
file), so that ``proposed = kept + sum(dropped)`` and ``articles = read + sum(failed)``. A
transient failure (HTTP error, timeout, budget) writes nothing: a rerun asks again, with the
answers already given served from the response cache.

The extractor id is ``llm-v1+<backend/model>+<8 hex of the prompt files>``; a fact's id starts
with ``llm-v1+<backend/model>:``.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ValidationError

from okgen.errors import BudgetExceeded, ConfigError, OkgenError
from okgen.facts import rules
from okgen.facts.records import RELATIONS, Fact
from okgen.llm import ChatModel, ChatRequest, ChatResult
from okgen.llm.base import repair_json
from okgen.schema import Article, Decoding
from okgen.settings import Workspace

log = logging.getLogger(__name__)
VERSION = "llm-v1"
NUMERIC = ("count", "percent", "money", "number")
MIN_EVIDENCE_WORDS = 4
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_NUM = re.compile(r"[$€£]?\s?\d[\d,]*(?:\.\d+)?(?:\s?(?:%|percent|per cent|million|billion|trillion|thousand|bn|m)\b|%)?",
                  re.IGNORECASE)
_CURRENCY = re.compile(r"[$€£¥]|\b(?:dollars?|euros?|pounds?|yen|yuan|usd|eur|gbp)\b", re.IGNORECASE)


class ExtractedFact(BaseModel):
    """One fact as the model writes it."""

    subject: str
    relation: str
    object: str
    valid_from: str | None
    past: bool
    evidence: str


class ExtractedFacts(BaseModel):
    """The model's whole answer for one article."""

    facts: list[ExtractedFact]


def squash(text: str) -> str:
    """Text for matching: NFKC, one style of quotes and dashes, case-folded, single spaces."""
    t = unicodedata.normalize("NFKC", text)
    t = t.translate(str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2013": "-",
                                   "\u2014": "-", "\u00a0": " "}))
    return " ".join(t.casefold().split())


def number_keys(text: str) -> set[str]:
    """The normalised numbers written in ``text`` (:func:`okgen.facts.rules.number_key`)."""
    out = set()
    for m in _NUM.finditer(text):
        k = rules.number_key(m.group(0).replace("per cent", "percent"))
        if k is not None:
            out.add(k)
    return out


def open_client(spec: str, ws: Workspace, *, max_cost: float | None = None, use_cache: bool = True,
                concurrency: int = 8) -> tuple[ChatModel, dict[str, str], Any]:
    """The chat model of an agent spec with the agents' response cache, budget and prices.

    Returns:
        (model, the spec's decoding options, the response cache or None).

    Raises:
        ConfigError: a malformed spec, or ``max_cost`` with a model that has no price.
    """
    from okgen.llm import Budget, PriceTable, chat_model
    from okgen.models.base import parse_model_spec

    if not spec.startswith(("openai/", "hf/", "vllm/")):
        raise ConfigError(f"unknown model spec {spec!r}: use 'openai/MODEL[,base_url=URL,...]', 'hf/PATH' or 'vllm/ID'")
    cfg = ws.config()
    gcfg = dict(cfg.get("generate", {}) or {})
    prices = PriceTable.default(extra=cfg.get("prices") or None)
    budget = Budget(max_cost)
    kw = {k: gcfg[k] for k in ("timeout", "max_retries") if k in gcfg}
    cache = None
    if use_cache:
        from okgen.models.cache import ResponseCache, default_cache_path

        cache = ResponseCache(default_cache_path(ws.cache_dir))
    client, decoding = chat_model(parse_model_spec(spec), concurrency=concurrency, cache=cache, prices=prices,
                                  budget=budget, **kw)
    if budget.limit is not None and hasattr(client, "priced") and not client.priced():
        if cache is not None:
            cache.close()
        raise ConfigError(f"--max-cost needs a price for {client.model}: add [prices.\"{client.model}\"] input/output "
                          "(USD per 1M tokens) to okgen.toml (0 for a free local server)")
    return client, decoding, cache


class LLMExtractor:
    """Facts from an LLM's reading of each article, checked against the article.

    Args:
        client: the chat model (:func:`open_client`, or any :class:`~okgen.llm.ChatModel`).
        decoding: the model spec's decoding options (override the agent spec's).
        agents_dir: agents folder (default: the packaged one).
        cache: the response cache the client uses (closed by :meth:`close`).
    """

    def __init__(self, client: ChatModel, decoding: dict[str, str] | None = None, *, agents_dir: Any = None,
                 cache: Any = None, workspace: Workspace | None = None):
        from okgen.generate.agents import load_agent, resolve_agents_dir
        from okgen.generate.llm_generator import decoding_from

        self.spec = load_agent("facts", resolve_agents_dir(workspace, agents_dir))
        self.client = client
        self.cache = cache
        self.decoding: Decoding = decoding_from(self.spec, dict(decoding or {}), 0)
        self.max_chars = int(self.spec.section("prompt").get("max_article_chars", 8000))
        self.max_facts = int(self.spec.section("options").get("max_facts", 12))
        self.name = f"{VERSION}+{client.name}"
        self.id = f"{self.name}+{self.spec.spec_hash[:8]}"
        self.funnel: dict[str, Any] = {}

    @classmethod
    def from_spec(cls, spec: str, ws: Workspace, *, max_cost: float | None = None, use_cache: bool = True,
                  concurrency: int = 8, agents_dir: Any = None) -> LLMExtractor:
        """The extractor for a model spec, with the workspace's cache, prices and a budget."""
        client, decoding, cache = open_client(spec, ws, max_cost=max_cost, use_cache=use_cache, concurrency=concurrency)
        return cls(client, decoding, agents_dir=agents_dir, cache=cache, workspace=ws)

    def close(self) -> None:
        """Close the response cache."""
        if self.cache is not None:
            self.cache.close()
            self.cache = None

    def request(self, article: Article) -> ChatRequest:
        """The chat request for one article."""
        from okgen.generate.llm_generator import cut_text
        from okgen.generate.text import format_date

        relations = "\n".join(f"- {name}: subject = {subj}; value = {desc}" for name, (subj, _, desc) in RELATIONS.items())
        values = {"relations": relations, "max_facts": self.max_facts, "date": format_date(article.date),
                  "iso_date": article.date.isoformat(), "weekday": WEEKDAYS[article.date.weekday()],
                  "source": article.source_name or article.source, "title": article.title,
                  "text": cut_text(article.text, self.max_chars)}
        d = self.decoding
        return ChatRequest(messages=({"role": "system", "content": self.spec.render("system", **values)},
                                     {"role": "user", "content": self.spec.render("user", **values)}),
                           temperature=d.temperature, top_p=d.top_p, max_tokens=d.max_tokens or None, seed=d.seed,
                           schema=ExtractedFacts, tag="facts")

    def extract(self, articles: Sequence[Article]) -> list[Fact]:
        """The checked facts of ``articles`` (in date and id order); :attr:`funnel` says what
        was proposed, kept and dropped.

        Raises:
            BudgetExceeded: the budget stopped some calls (nothing to write; rerun with more).
            OkgenError: transient failures left articles unread (rerun: answers are cached).
        """
        from okgen.progress import bar

        ordered = sorted(articles, key=lambda a: (a.date, a.id))
        # A model on a CPU takes minutes an article: the job shows it is alive and how far it is.
        dates = sorted({a.date for a in ordered})
        desc = f"facts {dates[0]}" if len(dates) == 1 else f"facts of {len(dates)} days"
        with bar(total=len(ordered), desc=desc, unit="article") as pb:
            results = self.client.chat_many([self.request(a) for a in ordered], on_done=lambda _: pb.update(1))
        if self.cache is not None:
            self.cache.flush()
        pending = [(a, r) for a, r in zip(ordered, results) if r.transient]
        if pending:
            kinds = Counter(r.error_kind for _, r in pending)
            what = ", ".join(f"{k} {v}" for k, v in kinds.most_common())
            first = pending[0][1].error
            msg = (f"{len(pending)} of {len(ordered)} article(s) got no answer ({what}; first: {first}); "
                   "nothing written, rerun to finish (answers so far are cached)")
            raise BudgetExceeded(msg) if "budget" in kinds else OkgenError(msg)
        out: list[Fact] = []
        failed: Counter[str] = Counter()
        dropped: Counter[str] = Counter()
        drops: list[dict[str, str]] = []
        proposed = 0
        for art, res in zip(ordered, results):
            items, err = answer_items(res)
            if err is not None:
                failed[err] += 1
                drops.append({"article_id": art.id, "reason": f"article:{err}", "detail": (res.error or "")[:300]})
                continue
            proposed += len(items)
            kept, why = self.check(art, items)
            out += kept
            for reason, item in why:
                dropped[reason] += 1
                drops.append({"article_id": art.id, "reason": reason,
                              **{k: str(item.get(k, ""))[:300] for k in ("relation", "subject", "object", "evidence")
                                 if isinstance(item, dict)}})
        st = self.client.stats
        self.funnel = {"articles": {"total": len(ordered), "read": len(ordered) - sum(failed.values()),
                                    "failed": dict(failed.most_common())},
                       "proposed": proposed, "kept": len(out), "dropped": dict(dropped.most_common()), "drops": drops,
                       "usage": {"calls": st.calls, "cached": st.cached, "prompt_tokens": st.prompt_tokens,
                                 "completion_tokens": st.completion_tokens, "cost_usd": round(st.cost, 6)}}
        return out

    def check(self, art: Article, items: Sequence[Any]) -> tuple[list[Fact], list[tuple[str, Any]]]:
        """Check one article's proposed facts: (kept facts, [(drop reason, item)])."""
        text = squash(art.text)
        drops: list[tuple[str, Any]] = []
        cands: list[tuple[Any, dict[str, Any]]] = []
        for n, item in enumerate(items):
            if n >= self.max_facts:
                drops.append(("over_limit", item))
                continue
            try:
                f = ExtractedFact.model_validate(item)
            except ValidationError:
                if isinstance(item, dict) and all(isinstance(item.get(k), str) for k in ("subject", "relation", "object",
                                                                                          "evidence")):
                    f = ExtractedFact(subject=item["subject"], relation=item["relation"], object=item["object"],
                                      evidence=item["evidence"], valid_from=None, past=bool(item.get("past")))
                else:
                    drops.append(("schema", item))
                    continue
            reason, fields = self._check_one(art, f, text)
            if reason:
                drops.append((reason, item))
            else:
                cands.append((item, fields))
        slots: dict[tuple[str, str, str], set[str]] = {}
        for _, fd in cands:
            slots.setdefault((fd["relation"], fd["subject_key"], squash(fd["evidence"])), set()).add(fd["object_key"])
        kept: list[Fact] = []
        seen: set[str] = set()
        for item, fd in cands:
            if len(slots[(fd["relation"], fd["subject_key"], squash(fd["evidence"]))]) > 1:
                drops.append(("ambiguous", item))  # one sentence, two values for one slot
                continue
            fid = Fact.make_id(self.id, art.id, fd.pop("offset"), fd["relation"], fd["subject_key"], fd["object_key"],
                               name=self.name)
            if fid in seen:
                drops.append(("duplicate", item))
                continue
            seen.add(fid)
            kept.append(Fact(id=fid, reported=art.date, outlet=art.source, article_id=art.id, extractor=self.id, **fd))
        return kept, drops

    def _check_one(self, art: Article, f: ExtractedFact, text: str) -> tuple[str | None, dict[str, Any]]:
        rel = f.relation.strip()
        if rel not in RELATIONS:
            return "relation", {}
        ev = " ".join(f.evidence.split())
        sev = squash(ev)
        if len(sev.split()) < MIN_EVIDENCE_WORDS:
            return "evidence_too_short", {}
        offset = text.find(sev)
        if offset < 0:
            return "evidence_not_in_article", {}
        subject = rules.clean(f.subject)
        skey = rules.key(subject)
        if not skey:
            return "subject_empty", {}
        obj = " ".join(f.object.split())
        kind = RELATIONS[rel][1]
        if kind in NUMERIC:
            okey = rules.number_key(obj)
            if okey is None:
                return "value_not_a_number", {}
            found = number_keys(ev)
            if okey not in found:
                if okey + "%" in found and rel in ("tariff_rate", "interest_rate", "approval_rating"):
                    okey += "%"
                else:
                    return "value_not_in_evidence", {}
            if rel == "price" and not _CURRENCY.search(obj):
                kind = "number"
            if okey == skey:
                return "subject_is_value", {}
        else:
            if not squash(obj) or squash(obj) not in sev:
                return "value_not_in_evidence", {}
            obj = rules.clean(obj)
            okey = rules.key(obj)
            if not okey or okey == skey:
                return "subject_is_value", {}
        return None, {"subject": subject, "subject_key": skey, "relation": rel, "object": obj, "object_key": okey,
                      "object_kind": kind, "valid_from": _valid_from(f.valid_from, art.date), "evidence": ev,
                      "past": bool(f.past), "offset": offset}


def answer_items(res: ChatResult) -> tuple[list[Any], str | None]:
    """The items of a model's answer, read leniently: (items, None), or ([], failure kind) when
    the answer holds no list of facts. An answer cut by the length limit keeps its complete items."""
    if res.ok and res.parsed is not None:
        return [f.model_dump() for f in res.parsed.facts], None
    if res.error_kind in ("schema", "length", "invalid_json"):
        data = repair_json(res.text or "")
        items = data.get("facts") if isinstance(data, dict) else data if isinstance(data, list) else None
        if not isinstance(items, list):
            return [], res.error_kind if res.error_kind != "schema" else "no_facts_list"
        if res.error_kind == "length":
            items = items[:-1]  # the item being written when the answer was cut
        return items, None
    return [], res.error_kind or "bad_response"


def _valid_from(text: str | None, reported: dt.date) -> dt.date | None:
    """The model's valid-from day when it is a date within the year before the report, else None."""
    if not text:
        return None
    try:
        d = dt.date.fromisoformat(str(text).strip()[:10])
    except ValueError:
        return None
    return d if reported - dt.timedelta(days=366) <= d <= reported else None
