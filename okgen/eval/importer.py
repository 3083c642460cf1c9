"""``okgen snapshot import``: an external multiple-choice set (JSONL) as okgen snapshots.

Each line is one question::

    {"question": "...", "choices": ["...", "..."], "answer": 2 | "C" | "<choice text>",
     "date": "2026-03-14", "source_url": "https://...", "text": "article text",
     "title": "...", "source": "outlet", "short_answer": "...", "id": "..."}

``question``, ``choices``, ``answer`` and ``date`` are required; ``answer`` is a 0-based index,
a letter, or the text of a choice; ``source_url`` (or ``url``) and ``text`` (or ``article``,
``context``) are optional; other fields are ignored. Questions sharing a URL (or a text) share
an article; an item with neither gets an article of its own with an empty text (it can be
scored in the ``none`` setting only meaningfully). Choice order is kept as given.

One snapshot is built per news date (``--date`` picks one, ``--all-dates`` builds them all);
its corpus holds every imported article of the longest window ending on that date, so the
retrieval setting searches the set's own articles. Bad lines are skipped and reported with
their line numbers (``--strict`` stops at the first). The snapshot timestamp is the date
itself, so importing the same file twice gives the same signature.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from okgen.errors import ConfigError, OkgenError, SchemaError
from okgen.files import describe_validation_error
from okgen.hashing import sha256_file, sha256_text
from okgen.schema import AgentInfo, Article, Question, article_id
from okgen.settings import Workspace

log = logging.getLogger(__name__)

IMPORTER = "okgen-import-v1"
SKIPS_SHOWN = 5  # skipped lines warned of one by one; the rest are counted


class ExternalItem(BaseModel):
    """One line of an external multiple-choice file."""

    model_config = ConfigDict(extra="ignore")

    question: str
    choices: list[str]
    answer: int | str
    date: dt.date
    source_url: str | None = None
    url: str | None = None
    text: str | None = None
    article: str | None = None
    context: str | None = None
    title: str | None = None
    source: str | None = None
    short_answer: str | None = None
    id: str | None = None

    @field_validator("answer", mode="before")
    @classmethod
    def _answer(cls, v: Any) -> Any:
        # pydantic would read true/false as the index 1/0
        if isinstance(v, bool):
            raise ValueError("answer must be a 0-based index, a letter or a choice's text, not true/false")
        return v

    @field_validator("date", mode="before")
    @classmethod
    def _date(cls, v: Any) -> Any:
        if isinstance(v, str) and len(v) > 10:
            return dt.datetime.fromisoformat(v.replace("Z", "+00:00")).date()
        return v

    def answer_index(self) -> int:
        """The 0-based index of the answer (index, letter or choice text)."""
        a = self.answer
        if isinstance(a, int):
            idx = a
        elif (len(a.strip()) == 1 and "A" <= a.strip().upper() < chr(65 + len(self.choices))
              and a.strip().upper() not in [c.strip().upper() for c in self.choices]):
            idx = ord(a.strip().upper()) - 65
        elif a in self.choices:
            idx = self.choices.index(a)
        else:
            folded = [c.strip().casefold() for c in self.choices]
            if a.strip().casefold() not in folded:
                raise ValueError(f"answer {a!r} is neither an index, a choice letter nor one of the choices")
            idx = folded.index(a.strip().casefold())
        if not 0 <= idx < len(self.choices):
            raise ValueError(f"answer index {idx} is out of range for {len(self.choices)} choices")
        return idx

    def body(self) -> str:
        """The article text given, if any."""
        return (self.text or self.article or self.context or "").strip()


@dataclass
class ImportResult:
    """What an import did."""

    snapshots: list[Any] = field(default_factory=list)
    items: int = 0
    skipped: list[tuple[int, str]] = field(default_factory=list)
    existing: list[str] = field(default_factory=list)


def read_items(path: Path, strict: bool = False) -> tuple[list[tuple[int, ExternalItem]], list[tuple[int, str]]]:
    """Parse the file; return good items with their line numbers, and skipped lines with reasons."""
    good, bad = [], []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError:
        raise SchemaError(f"{path.name}: not valid UTF-8") from None
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            item = ExternalItem.model_validate(json.loads(line))
            if len(item.choices) < 2 or len(set(item.choices)) != len(item.choices) or not all(c.strip() for c in item.choices):
                raise ValueError("needs at least two distinct, non-empty choices")
            if not item.question.strip():
                raise ValueError("empty question")
            item.answer_index()
        except json.JSONDecodeError as e:
            reason = f"broken JSON ({e.msg})"
        except ValidationError as e:
            reason = describe_validation_error(e)
        except ValueError as e:
            reason = str(e)
        else:
            good.append((n, item))
            continue
        if strict:
            raise SchemaError(f"{path.name}:{n}: {reason}")
        bad.append((n, reason))
    return good, bad


def _article(item: ExternalItem, source_name: str) -> Article:
    url = item.source_url or item.url
    text = item.body()
    if not url:
        key = sha256_text(text)[:16] if text else sha256_text(item.question)[:16]
        url = f"okgen-import://{source_name}/{key}"
    host = urlparse(url).netloc or source_name
    when = dt.datetime(item.date.year, item.date.month, item.date.day, tzinfo=dt.timezone.utc)
    title = (item.title or (text.split("\n", 1)[0][:120] if text else item.question[:120])).strip()
    return Article(id=article_id(url), url=url, canonical_url=url, source=item.source or host, title=title,
                   published_at=when, date=item.date, date_source="import", fetched_at=when, text=text,
                   text_sha256=sha256_text(text), extractor=IMPORTER)


def import_mc_jsonl(path: str | Path, workspace: Workspace | None = None, *, date: dt.date | None = None,
                    all_dates: bool = False, windows: tuple[int, ...] = (1, 5, 10), name: str | None = None,
                    strict: bool = False) -> ImportResult:
    """Turn an external multiple-choice JSONL file into snapshots (see the module docstring).

    Raises:
        ConfigError: several dates without ``date``/``all_dates``, or no item of ``date``.
        SchemaError: a bad line with ``strict``, or no valid line at all.
    """
    from okgen.snapshot.build import build_snapshot
    from okgen.snapshot.store import Snapshot

    ws = workspace or Workspace.from_env()
    path = Path(path)
    if not windows or any(int(w) < 1 for w in windows):
        raise ConfigError(f"windows must be positive day counts, got {tuple(windows)}")
    if not path.is_file():
        raise OkgenError(f"{path}: no such file")
    source_name = name or path.stem
    items, skipped = read_items(path, strict)
    for n, reason in skipped[:SKIPS_SHOWN]:
        log.warning("%s:%d skipped: %s", path.name, n, reason)
    if not items:
        raise SchemaError(f"{path.name}: no valid question ({len(skipped)} line(s) skipped; first: line "
                          f"{skipped[0][0]}: {skipped[0][1]})" if skipped else f"{path.name}: empty file")
    dates = sorted({it.date for _, it in items})
    if date is not None:
        if date not in dates:
            raise ConfigError(f"{path.name} has no question dated {date} (dates: {', '.join(map(str, dates[:10]))})")
        wanted = [date]
    elif all_dates or len(dates) == 1:
        wanted = dates
    else:
        raise ConfigError(f"{path.name} spans {len(dates)} dates ({dates[0]} .. {dates[-1]}): "
                          "pick one with --date or build one snapshot per date with --all-dates")
    articles: dict[str, Article] = {}
    questions: list[tuple[ExternalItem, Question]] = []
    for _, it in items:
        a = _article(it, source_name)
        prev = articles.setdefault(a.id, a)
        if prev.text != a.text and a.text:
            log.warning("%s: article %s appears with different texts; keeping the first", path.name, a.url)
        idx = it.answer_index()
        choices = tuple(c.strip() for c in it.choices)
        questions.append((it, Question(
            id=Question.make_id(a.id, it.question.strip()), article_id=a.id, date=it.date, source=prev.source,
            question=it.question.strip(), choices=choices, answer_index=idx, answer=choices[idx],
            short_answer=(it.short_answer or choices[idx]).strip(), generator=f"import/{source_name}")))
    file_hash = sha256_file(path)
    result = ImportResult(items=len(items), skipped=skipped)
    longest = max(windows)
    for d in wanted:
        qs = list({q.id: q for it, q in questions if it.date == d}.values())
        corpus = [a for a in articles.values() if d - dt.timedelta(days=longest) < a.date <= d]
        no_text = sum(1 for a in corpus if not a.text)
        try:
            snap = build_snapshot(
                qs, corpus, date=d, generator=AgentInfo(model=f"import/{source_name}"), prompt_hash=file_hash[:12],
                feeds_hash=sha256_text(f"import:{source_name}")[:12], seed=0, windows=windows,
                timestamp=dt.datetime(d.year, d.month, d.day, tzinfo=dt.timezone.utc), workspace=ws,
                extra={"import": {"file": path.name, "sha256": file_hash, "items": len(qs),
                                  "skipped_lines": len(skipped), "articles_without_text": no_text}})
        except OkgenError as e:
            # The folder name carries the content hash: "already exists" means this very content.
            existing = Path(str(e).split(" already exists")[0])
            if "already exists" not in str(e) or not (existing / "manifest.json").is_file():
                raise
            result.existing.append(existing.name)
            snap = Snapshot(existing)
        result.snapshots.append(snap)
    return result
