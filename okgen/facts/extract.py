"""Extract, write and read the facts of a news day (``data/facts/<date>.json``)."""

from __future__ import annotations

import datetime as dt
import logging
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol

from okgen.errors import NotFoundError
from okgen.facts import rules
from okgen.facts.records import RELATIONS, Fact, FactsFile
from okgen.files import atomic_write_text, read_model_json
from okgen.schema import Article
from okgen.settings import Workspace

log = logging.getLogger(__name__)
VERSION = "rules-v1"
MAX_CHARS = 8000  # the lead of an article states its news; the tail is background


class RuleExtractor:
    """``rules-v1``: facts from the spaCy parse (:mod:`okgen.facts.rules`); offline, deterministic.

    Args:
        pipeline: spaCy pipeline name (default: the generator's, ``en_core_web_sm``).
        max_chars: characters of each article's text parsed.
    """

    def __init__(self, pipeline: str | None = None, max_chars: int = MAX_CHARS):
        from okgen.generate.nlp import load_pipeline, pipeline_id

        self.nlp = load_pipeline(pipeline)
        self.id = f"{VERSION}+{pipeline_id(self.nlp)}"
        self.max_chars = max_chars

    def close(self) -> None:
        """Nothing to release (an LLM extractor closes its response cache)."""

    def extract(self, articles: Sequence[Article]) -> list[Fact]:
        """The facts of ``articles`` (each dated by its own news date), in article order."""
        from okgen.generate.extractive import _body
        from okgen.generate.sentences import usable_sentence
        from okgen.progress import bar

        ordered = sorted(articles, key=lambda a: (a.date, a.id))
        docs = self.nlp.pipe((_body(a)[:self.max_chars] for a in ordered), batch_size=32)
        days = sorted({a.date for a in ordered})
        desc = "facts " + (f"{days[0]}" if len(days) == 1 else f"{days[0]}..{days[-1]}" if days else "")
        out: list[Fact] = []
        for art, doc in bar(zip(ordered, docs), total=len(ordered), desc=desc, unit="article"):
            for i, sent in enumerate(doc.sents):
                if not usable_sentence(sent):
                    continue
                out.extend(self._sentence_facts(art, i, sent))
        return out

    def _sentence_facts(self, art: Article, index: int, sent: Any) -> list[Fact]:
        found = rules.number_facts(sent) + rules.name_facts(sent)
        by_slot: dict[tuple[str, str], list[tuple[str, str, str, int]]] = defaultdict(list)
        for rel, subj, obj, kind, pri in found:
            okey = rules.number_key(obj) if kind in ("count", "money", "percent", "number") else rules.key(obj)
            if okey and rules.key(subj):
                by_slot[(rel, subj)].append((obj, okey, kind, pri))
        facts = []
        when = rules.valid_from(sent, art.date)
        past = rules.is_past(sent)
        evidence = " ".join(sent.text.split())
        for (rel, subj), vals in by_slot.items():
            top = max(v[3] for v in vals)
            vals = [v for v in vals if v[3] == top]
            if len({v[1] for v in vals}) != 1:
                continue  # the sentence gives two values for one slot: ambiguous
            obj, okey, kind, _ = vals[0]
            skey = rules.key(subj)
            facts.append(Fact(id=Fact.make_id(self.id, art.id, index, rel, skey, okey), subject=subj, subject_key=skey,
                              relation=rel, object=rules.clean(obj) if kind in ("person", "org") else obj.strip(),
                              object_key=okey, object_kind=kind, valid_from=when, reported=art.date, outlet=art.source,
                              article_id=art.id, evidence=evidence, extractor=self.id, past=past))
        return facts


class Extractor(Protocol):
    """What a fact extractor offers: its ``id`` and ``extract(articles) -> [Fact]`` (an LLM
    extractor also keeps the last call's ``funnel``)."""

    id: str

    def extract(self, articles: Sequence[Article]) -> list[Fact]: ...

    def close(self) -> None: ...


def make_extractor(spec: str | None, ws: Workspace, *, pipeline: str | None = None, max_cost: float | None = None,
                   use_cache: bool = True, concurrency: int = 8) -> Extractor:
    """The extractor a spec names: ``rules`` (or None) for ``rules-v1``, a model spec
    (``openai/NAME[,base_url=URL]``, ``hf/PATH``, ``vllm/ID``) for ``llm-v1``.

    Raises:
        ConfigError: a malformed spec.
    """
    if spec is None or spec.strip().lower() in ("", "rules", VERSION):
        return RuleExtractor(pipeline)
    from okgen.facts.llm import LLMExtractor

    return LLMExtractor.from_spec(spec.strip(), ws, max_cost=max_cost, use_cache=use_cache, concurrency=concurrency)


def facts_dir(ws: Workspace) -> Path:
    """The workspace's facts folder (``data/facts``)."""
    return ws.data_dir / "facts"


def facts_path(ws: Workspace, date: dt.date) -> Path:
    """``data/facts/<date>.json``."""
    return facts_dir(ws) / f"{date.isoformat()}.json"


def extract_facts(articles: Iterable[Article], *, extractor: Extractor | None = None) -> list[Fact]:
    """The facts of ``articles`` with the offline rule extractor (or the one given)."""
    return (extractor or RuleExtractor()).extract(list(articles))


def extract_day(ws: Workspace, date: dt.date, *, extractor: Extractor | None = None,
                articles: Sequence[Article] | None = None, write: bool = True) -> FactsFile:
    """Extract the facts of the articles of news day ``date`` (the workspace's article store, or
    ``articles``) and write them to ``data/facts/<date>.json`` (atomically).

    Raises:
        NotFoundError: no article is dated ``date``.
        OkgenError: an LLM extractor left articles unread (transient failures): nothing written.
    """
    if articles is None:
        from okgen.ingest.store import ArticleStore

        with ArticleStore.for_workspace(ws) as store:
            articles = store.articles_for_date(date)
    articles = [a for a in articles if a.date == date and not a.text_omitted]
    if not articles:
        raise NotFoundError(f"no articles dated {date} in the workspace (okgen ingest --date {date} first)")
    ex = extractor or RuleExtractor()
    facts = ex.extract(articles)
    out = FactsFile(date=date, extractor=ex.id, articles=len(articles), facts=tuple(facts),
                    funnel=getattr(ex, "funnel", None) or None)
    if write:
        path = facts_path(ws, date)
        path.parent.mkdir(parents=True, exist_ok=True)
        # rules-v1 files stay as they were (no funnel key), so earlier okgen versions read them
        atomic_write_text(path, out.model_dump_json(indent=1, exclude={"funnel"} if out.funnel is None else None) + "\n")
    log.info("%s: %d fact(s) from %d article(s)", date, len(facts), len(articles))
    return out


def read_facts(ws: Workspace, date: dt.date) -> FactsFile:
    """The facts file of ``date``.

    Raises:
        NotFoundError: not extracted yet.
    """
    path = facts_path(ws, date)
    if not path.is_file():
        raise NotFoundError(f"no facts for {date} ({path}); run okgen facts extract --date {date}")
    return read_model_json(path, FactsFile)


def relation_counts(facts: Iterable[Fact]) -> dict[str, int]:
    """Facts per relation, in :data:`RELATIONS` order."""
    counts = dict.fromkeys(RELATIONS, 0)
    for f in facts:
        counts[f.relation] += 1
    return counts
