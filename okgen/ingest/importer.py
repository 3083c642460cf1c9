"""Import an external news dump (JSON or JSONL, optionally gzip) with a configurable field mapping.

The mapping names, for each article field, the key in the dump (dotted paths reach nested
objects: ``meta.headline``). Defaults are the field names themselves::

    title = "title"     text = "text"     url = "url"       date = "date"
    source = "source"   author = "author" language = "language"   source_name = "source_name"
    category = "category"

Dates may be ISO 8601 (with or without time and offset), epoch seconds or RFC 2822. A record
that lacks text, or a date (unless the import names the day: records without a date then belong
to it), or whose line is broken, is counted as a failure with its line number; a file that is not JSON at all is an error.
"""

from __future__ import annotations

import datetime as dt
import email.utils
import gzip
import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from okgen.errors import ConfigError, OkgenError
from okgen.ingest.feeds import unescape_entities

log = logging.getLogger(__name__)

FIELDS = ("title", "text", "url", "date", "source", "author", "language", "source_name", "category")
# Keys that common news dumps use for a field, tried in order when the field's own key is absent and
# no --map option names one (the news-dev / OKBench dumps: article_text, news_site, link).
ALIASES = {"text": ("article_text", "content", "body", "maintext"), "url": ("link",),
           "source": ("news_site", "outlet", "publisher"), "date": ("published", "date_publish", "published_at")}
REQUIRED = ("text", "date")
LIST_KEYS = ("articles", "items", "data", "records", "results", "documents")


class ImportFormatError(OkgenError):
    """An import file is not JSON/JSONL of records."""


@dataclass
class ImportedRecord:
    """One mapped record (or its failure)."""

    line: int
    """Line (JSONL) or 1-based index (JSON array) in the file."""
    fields: dict[str, Any] | None
    """Mapped fields; None when the record failed."""
    error: str | None = None
    """Why the record failed (``bad_json``, ``missing_text``, ``bad_date`` ...)."""
    published_at: dt.datetime | None = None
    """Parsed publication time (UTC)."""
    date_only: bool = False
    """The dump gave a date without a time."""


def make_mapping(mapping: dict[str, str] | None) -> dict[str, str]:
    """The full field mapping: defaults overridden by ``mapping``.

    Raises:
        ConfigError: ``mapping`` names an unknown article field.
    """
    out = {f: f for f in FIELDS}
    for k, v in (mapping or {}).items():
        if k not in FIELDS:
            raise ConfigError(f"import mapping: unknown field {k!r} (known: {', '.join(FIELDS)})")
        if not isinstance(v, str) or not v:
            raise ConfigError(f"import mapping: {k} must name a key of the dump")
        out[k] = v
    return out


def parse_mapping_options(items: tuple[str, ...] | list[str]) -> dict[str, str]:
    """Parse CLI ``--map field=key`` options.

    Raises:
        ConfigError: an item is not ``field=key``.
    """
    out: dict[str, str] = {}
    for item in items:
        field, sep, key = item.partition("=")
        if not sep or not field.strip() or not key.strip():
            raise ConfigError(f"--map {item!r}: expected FIELD=KEY, e.g. title=headline")
        out[field.strip()] = key.strip()
    return out


def _get(obj: Any, path: str) -> Any:
    for part in path.split("."):
        if isinstance(obj, dict):
            obj = obj.get(part)
        elif isinstance(obj, list) and part.isdigit() and int(part) < len(obj):
            obj = obj[int(part)]
        else:
            return None
    return obj


def parse_date(value: Any, tz: dt.tzinfo = dt.timezone.utc) -> tuple[dt.datetime, bool] | None:
    """Parse a dump's date into (UTC datetime, date_only); None when unreadable.

    A date without a time is taken as midnight in ``tz`` (the configured news timezone), and a
    time without an offset as local time in ``tz``.
    """
    if value is None or value == "":
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        ts = float(value) / (1000 if value > 1e11 else 1)  # milliseconds are common in dumps
        try:
            return dt.datetime.fromtimestamp(ts, dt.timezone.utc), False
        except (OverflowError, OSError, ValueError):
            return None
    text = str(value).strip()
    if len(text) == 10:
        try:
            d = dt.date.fromisoformat(text)
            return dt.datetime.combine(d, dt.time(0), tz).astimezone(dt.timezone.utc), True
        except ValueError:
            pass
    try:
        parsed = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        try:
            parsed = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return None
        if parsed is None:
            return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=tz)
    return parsed.astimezone(dt.timezone.utc), False


def _open_text(path: Path) -> str:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ImportFormatError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise ImportFormatError(f"{path}: is a folder, not a JSON or JSONL file") from None
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as e:
            raise ImportFormatError(f"{path}: broken gzip file ({e})") from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ImportFormatError(f"{path}: not UTF-8 text") from None


def _parses(line: str) -> bool:
    try:
        json.loads(line)
    except json.JSONDecodeError:
        return False
    return True


def iter_records(path: str | Path) -> Iterator[tuple[int, Any]]:
    """Yield (line or index, raw object) from a JSON or JSONL file; broken JSONL lines yield (line, exception).

    Raises:
        ImportFormatError: the file is missing, not text, or neither JSON nor JSONL.
    """
    p = Path(path)
    text = _open_text(p)
    stripped = text.lstrip()
    if not stripped:
        raise ImportFormatError(f"{p}: empty file")
    jsonl = p.name.lower().endswith((".jsonl", ".ndjson", ".jsonl.gz", ".ndjson.gz"))
    if not jsonl:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            if stripped[0] == "[" or "\n" not in stripped.strip():
                raise ImportFormatError(f"{p}: not valid JSON (line {e.lineno}, column {e.colno}: {e.msg})") from None
            doc_error = e
            jsonl = True  # several JSON objects, one a line
        else:
            if isinstance(data, dict):
                lists = [k for k in LIST_KEYS if isinstance(data.get(k), list)]
                data = data[lists[0]] if lists else [data]
            if not isinstance(data, list):
                raise ImportFormatError(f"{p}: expected a list of records, got {type(data).__name__}")
            if not data:  # a day a dump has nothing for: stored as such, said
                log.warning("%s: no record (an empty list): nothing to import", p)
            yield from enumerate(data, 1)
            return
        # Taken for JSONL (several lines, not one JSON document): refused in one line, before any
        # record is read, when no line is a JSON value (a README, a CSV; a JSON object with a typo
        # is told where the typo is). A broken line among records is only that record's failure.
        if not any(_parses(line) for line in text.splitlines() if line.strip()):
            if stripped[0] == "{":
                raise ImportFormatError(f"{p}: not valid JSON (line {doc_error.lineno}, column {doc_error.colno}: "
                                        f"{doc_error.msg})")
            raise ImportFormatError(f"{p}: neither JSON nor JSONL (no line is a JSON record)")
    good = 0
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            yield lineno, json.loads(line)
            good += 1
        except json.JSONDecodeError as e:
            yield lineno, e
    if not good:
        raise ImportFormatError(f"{p}: no line is a JSON record")


def read_dump(path: str | Path, mapping: dict[str, str] | None = None,
              tz: dt.tzinfo = dt.timezone.utc, default_date: dt.date | None = None) -> Iterator[ImportedRecord]:
    """Map every record of a dump; failures come back with their reason, never raised.

    A record without a date takes ``default_date`` when one is given (a dump of one news day
    whose records carry no date, imported with ``--date``), else it fails as ``missing_date``.

    Raises:
        ImportFormatError: the file as a whole is unreadable (see :func:`iter_records`).
        ConfigError: the mapping is invalid.
    """
    m = make_mapping(mapping)
    for line, obj in iter_records(path):
        if isinstance(obj, Exception):
            yield ImportedRecord(line, None, f"bad_json: {getattr(obj, 'msg', obj)}")
            continue
        if not isinstance(obj, dict):
            yield ImportedRecord(line, None, f"not_an_object: {type(obj).__name__}")
            continue
        fields = {f: _get(obj, key) for f, key in m.items()}
        for f, keys in ALIASES.items():
            if fields.get(f) is None and m[f] == f and not (mapping or {}).get(f):
                fields[f] = next((v for v in (_get(obj, k) for k in keys) if v is not None), None)
        for f in ("title", "text", "url", "source", "author", "language", "source_name", "category"):
            v = fields.get(f)
            if v is not None and f in ("title", "author", "source_name"):
                v = unescape_entities(str(v))  # "Baldur&#8217;s": escaped twice; a URL stays as written
            fields[f] = " ".join(str(v).split()) if v is not None and f != "text" else (str(v) if v is not None else None)
        if not (fields.get("text") or "").strip():
            yield ImportedRecord(line, None, f"missing_text: no {m['text']!r} or it is empty")
            continue
        if fields.get("date") in (None, ""):
            if default_date is not None:
                day = dt.datetime.combine(default_date, dt.time(0), tz).astimezone(dt.timezone.utc)
                yield ImportedRecord(line, fields, None, day, True)
            else:
                yield ImportedRecord(line, None, f"missing_date: no {m['date']!r}")
            continue
        parsed = parse_date(fields["date"], tz)  # the mapped key's value, or a fallback key's
        if parsed is None:
            yield ImportedRecord(line, None, f"bad_date: {str(fields['date'])[:40]!r}")
            continue
        yield ImportedRecord(line, fields, None, parsed[0], parsed[1])
