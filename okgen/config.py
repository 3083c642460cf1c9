"""okgen's one configuration model, typed and validated in one place (pydantic-settings).

Precedence, lowest first: built-in defaults < ``okgen.toml`` < ``OKGEN_*`` environment <
command-line flags. The file has the sections ``[ingest]``, ``[generate]``, ``[daily]`` and
``[prices]``; the environment sets a key of a section as ``OKGEN_<SECTION>_<KEY>``
(``OKGEN_INGEST_CONCURRENCY=8``, ``OKGEN_DAILY_WINDOWS=1,5``); flags come from the verbs. A list
is a TOML array in the file and comma-separated (or a JSON array) in the environment. The
process-wide settings (:class:`GlobalSettings`) come from the environment and the global flags
only. An unknown section or key, or a value of the wrong type, is one :class:`ConfigError`
line that names the key and where it came from (the file, the variable or the flag).

Resolving settings reads; it never writes.
"""

from __future__ import annotations

import difflib
import json
import os
from pathlib import Path
from typing import Annotated, Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, field_validator
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    SettingsError,
    TomlConfigSettingsSource,
)

from okgen.errors import ConfigError
from okgen.files import load_config
from okgen.ingest.config import IngestConfig, Names, split_list

ENV_PREFIX = "OKGEN_"
CONFIG_FILE = "okgen.toml"


def _one_or_many(value: Any) -> Any:
    """Model specs contain commas, so one string is one spec (a JSON array for several)."""
    if isinstance(value, str):
        return json.loads(value) if value.strip().startswith("[") else (value,)
    return value


Days = Annotated[tuple[Annotated[int, Field(ge=1)], ...], NoDecode, BeforeValidator(split_list)]
Specs = Annotated[tuple[str, ...], NoDecode, BeforeValidator(_one_or_many)]
_SECTION = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)


class GenerateSettings(BaseModel):
    """``[generate]``: question generation (docs/generate.md). Unset keys take the generator's defaults."""

    model_config = _SECTION

    generator: str | None = None
    """Generator model spec (``extractive``, ``openai/MODEL[,...]``, ``hf/PATH``, ``vllm/ID``)."""
    validator: str | None = None
    """Validator model spec, or ``none``."""
    probes: Specs | None = None
    """Freshness probe model specs."""
    agents_dir: str | None = None
    """Agents folder (relative paths are under the workspace)."""
    per_article: int | None = Field(None, ge=1, le=50)
    """Questions per article."""
    seed: int | None = None
    """Snapshot seed."""
    concurrency: int | None = Field(None, ge=1, le=1024)
    """LLM calls in flight at once."""
    pool_days: int | None = Field(None, ge=0)
    """Days of earlier articles that distractors may come from."""
    max_retries: int | None = Field(None, ge=0)
    """Retries of a failed LLM call."""
    max_cost: float | None = Field(None, ge=0)
    """Stop cleanly once this many USD are spent."""
    timeout: float | None = Field(None, ge=0)
    """Seconds one LLM call may take."""
    drop_known: bool | None = None
    """Drop questions every probe answers (else only flag them)."""
    quality_gates: bool | None = None
    """Run the shared quality gates."""
    max_outlet_share: float | None = Field(None, gt=0, le=1)
    """Cap of one outlet's share of the day's questions (1: no cap)."""
    max_answer_repeats: int | None = Field(None, ge=0)
    """Most questions of a day with the same answer (0: no cap)."""
    give_up_after: int | None = Field(None, ge=0)
    """Runs an article may be left unfinished by an error of its own before it is given up (0: never)."""


class DailySettings(BaseModel):
    """``[daily]``: the daily job (docs/daily.md)."""

    model_config = _SECTION

    timezone: str | None = None
    """Zone in which "yesterday" is computed."""
    feeds: str | None = None
    """Feed list (default: the packaged one)."""
    replay: str | None = None
    """Ingest from this WARC capture."""
    import_file: str | None = None
    """Ingest from this JSON/JSONL news dump."""
    retrievers: Names | None = None
    """Indexes built for each window after the snapshot."""
    windows: Days | None = None
    """News windows in days."""
    publish_to: str | None = None
    """Folder or fsspec URL to publish to."""
    sign_key: str | None = None
    """Ed25519 key that signs published manifests."""
    no_text: bool | None = None
    """Publish without article bodies."""

    @field_validator("timezone")
    @classmethod
    def _zone(cls, v: str | None) -> str | None:
        if v is not None:
            try:
                ZoneInfo(v)
            except (ZoneInfoNotFoundError, ValueError):
                raise ValueError("unknown time zone (use an IANA name such as UTC or Europe/Berlin)") from None
        return v

    @field_validator("windows")
    @classmethod
    def _some(cls, v: tuple[int, ...] | None) -> tuple[int, ...] | None:
        if v is not None and not v:
            raise ValueError("expected at least one window")
        return tuple(sorted(set(v))) if v else v


class Price(BaseModel):
    """One model's price, USD per 1M tokens."""

    model_config = _SECTION

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cached_input: float | None = Field(None, ge=0)


class _KnownKeysEnv(EnvSettingsSource):
    """``OKGEN_<SECTION>_<KEY>`` for the keys a section has. The verbs' options share the
    namespace (click reads ``OKGEN_DAILY_GENERATOR`` for ``okgen daily --generator``), so a
    variable that is not a key of its section is left to them."""

    def __call__(self) -> dict[str, Any]:
        data = super().__call__()
        for name, value in list(data.items()):
            model = self.settings_cls.model_fields[name].annotation
            if isinstance(value, dict) and isinstance(model, type) and issubclass(model, BaseModel):
                data[name] = {k: v for k, v in value.items() if k in model.model_fields}
        data.pop("prices", None)  # a table of models: the file only
        return {k: v for k, v in data.items() if v != {}}


class Settings(BaseSettings):
    """Every section of ``okgen.toml``, merged with the environment and the flags."""

    # An empty variable is unset, as click takes it for the verbs' options.
    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, env_nested_delimiter="_", env_nested_max_split=1,
                                      env_ignore_empty=True, extra="forbid", frozen=True)

    ingest: IngestConfig = IngestConfig()
    """``[ingest]``: fetching, extraction, filters, dedup (docs/ingest.md)."""
    generate: GenerateSettings = GenerateSettings()
    """``[generate]``: question generation (docs/generate.md)."""
    daily: DailySettings = DailySettings()
    """``[daily]``: the daily job (docs/daily.md)."""
    prices: dict[str, Price] = {}
    """``[prices."MODEL"]``: price overrides, input/output USD per 1M tokens (docs/generate.md)."""

    @classmethod
    def settings_customise_sources(cls, settings_cls: type[BaseSettings], init_settings: PydanticBaseSettingsSource,
                                   env_settings: PydanticBaseSettingsSource, dotenv_settings: PydanticBaseSettingsSource,
                                   file_secret_settings: PydanticBaseSettingsSource) -> tuple[PydanticBaseSettingsSource, ...]:
        # Earlier sources win: flags (init), then the environment, then okgen.toml.
        return (init_settings, _KnownKeysEnv(settings_cls),
                TomlConfigSettingsSource(settings_cls, toml_file=settings_cls.model_config.get("toml_file")))


SECTIONS = tuple(Settings.model_fields)


class GlobalSettings(BaseSettings):
    """Process-wide settings: the environment and the global flags only (not in okgen.toml)."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, env_ignore_empty=True, extra="ignore", frozen=True)

    home: str | None = None
    """Workspace folder (``--home``; default: the current folder)."""
    debug: bool = False
    """Tracebacks on errors (``--debug``)."""
    quiet: bool = False
    """Only warnings and errors on stderr, no progress (``-q``)."""
    no_progress: bool = False
    """No progress bars, even on a terminal."""
    progress_seconds: float = Field(10.0, ge=0)
    """Seconds between two progress lines when stderr is not a terminal."""
    torch_extensions_dir: str | None = None
    """Where ColBERT's compiled torch extension is kept (default: the user cache)."""


def global_settings() -> GlobalSettings:
    """The process-wide settings from the environment.

    Raises:
        ConfigError: a variable has a value of the wrong type (the message names it).
    """
    try:
        return GlobalSettings()
    except ValidationError as e:
        err = e.errors()[0]
        key = f"{ENV_PREFIX}{str(err['loc'][0]).upper()}"
        raise ConfigError(f"{key}={os.environ.get(key, '')!r}: {err['msg']}") from None


def load_settings(path: str | os.PathLike[str] | None, **flags: dict[str, Any] | None) -> Settings:
    """Resolve the settings: defaults < the file at ``path`` < environment < ``flags``.

    Args:
        path: the ``okgen.toml`` to read (a missing file is an empty one; None: no file).
        flags: per section, the values given on the command line (``generate={"seed": 3}``);
            None values are unset.

    Raises:
        ConfigError: invalid TOML, an unknown section or key, or a bad value; one line naming
            the key and where it came from.
    """
    file = Path(path) if path is not None else None
    data = load_config(file) if file is not None else {}  # read once here for clear TOML errors
    given = {s: {k: v for k, v in (f or {}).items() if v is not None} for s, f in flags.items()}
    unknown = [s for s in given if s not in SECTIONS]
    if unknown:
        raise ValueError(f"no settings section {unknown[0]!r}")
    where = str(file) if file is not None else CONFIG_FILE

    class _Resolved(Settings):
        model_config = SettingsConfigDict(toml_file=file if data else None)

    try:
        return _Resolved(**{s: f for s, f in given.items() if f})
    except SettingsError as e:
        raise ConfigError(f"environment: {e}") from None
    except ValidationError as e:
        raise ConfigError(_explain(e.errors()[0], data, given, where)) from None


def _explain(err: Any, data: dict[str, Any], given: dict[str, dict[str, Any]], where: str) -> str:
    """One line: the key, where its value came from, and what is wrong with it."""
    loc = [str(x) for x in err.get("loc", ())]
    section = loc[0] if loc else "?"
    if section not in SECTIONS:
        close = difflib.get_close_matches(section, SECTIONS, n=1)
        hint = f"; did you mean [{close[0]}]?" if close else ""
        return f"{where}: unknown section [{section}] (known: {', '.join(sorted(SECTIONS))}){hint}"
    if len(loc) == 1:
        return f"{where} [{section}]: must be a table"
    key = loc[1]
    env = f"{ENV_PREFIX}{section}_{key}".upper()
    env_value = {k.upper(): v for k, v in os.environ.items()}.get(env) if section != "prices" else None
    if key in given.get(section, {}) and str(given[section][key]) != env_value:
        origin = f"--{key.replace('_', '-')}"
    elif env_value is not None:  # click reads the same variable for the verb's option
        origin = env
    else:
        origin = f"{where} [{section}] {'.'.join(loc[1:])}"
    if err.get("type") == "extra_forbidden":
        model = Settings.model_fields[section].annotation
        known = sorted(getattr(model, "model_fields", {}))
        close = difflib.get_close_matches(key, known, n=1)
        return f"{origin}: unknown key (known: {', '.join(known)})" + (f"; did you mean {close[0]}?" if close else "")
    got = err.get("input")
    return f"{origin}: {err['msg']} (got {got!r})"[:300]
