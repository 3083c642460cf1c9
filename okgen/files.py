"""File helpers: canonical JSON/JSONL records, atomic writes, normal file modes.

Nothing okgen writes is ever half-written: files go to a temporary name in the same folder and
are renamed into place; folders are built under a temporary name and renamed when complete.
Reading a record file that does not match its schema names the file and the line.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

from pydantic import BaseModel, ValidationError

from okgen.errors import ConfigError, OkgenError, SchemaError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

M = TypeVar("M", bound=BaseModel)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def normal_mode(path: str | os.PathLike[str]) -> None:
    """Give a file or folder made by ``mkstemp``/``mkdtemp`` (0600/0700) the mode an ordinary
    ``open``/``mkdir`` would have given it under the process umask (e.g. 0644/0755), so a
    published folder stays readable by a web server or colleagues."""
    base = 0o777 if Path(path).is_dir() else 0o666
    os.chmod(path, base & ~_umask())


def record_line(record: BaseModel | dict[str, Any]) -> str:
    """One canonical JSONL line (sorted keys, compact, UTF-8) for a record, without newline."""
    data = record.model_dump(mode="json") if isinstance(record, BaseModel) else record
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def pretty_json(record: BaseModel | dict[str, Any]) -> str:
    """Canonical indented JSON for a top-level file (sorted keys, trailing newline)."""
    data = record.model_dump(mode="json") if isinstance(record, BaseModel) else record
    return json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


@contextlib.contextmanager
def _atomic(path: str | os.PathLike[str], mode: int | None = None) -> Iterator[BinaryIO]:
    """A binary file that replaces ``path`` in one rename when the block ends without an error
    (else it is deleted); it gets ``mode``, set before any byte is written, else the usual mode."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        if mode is None:
            normal_mode(tmp)
        else:
            os.chmod(tmp, mode)
        with os.fdopen(fd, "wb") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes, mode: int | None = None) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename; the file gets ``mode``
    (e.g. 0o600 for a private key, set before any byte is written), else the umask's usual mode."""
    with _atomic(path, mode) as f:
        f.write(data)


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write UTF-8 ``text`` to ``path`` atomically."""
    atomic_write_bytes(path, text.encode("utf-8"))


def write_jsonl(path: str | os.PathLike[str], records: Iterable[BaseModel | dict[str, Any]]) -> int:
    """Write records as canonical JSONL, atomically; return the number of lines."""
    n = 0
    with _atomic(path) as f:
        for rec in records:
            f.write(record_line(rec).encode("utf-8") + b"\n")
            n += 1
    return n


def iter_jsonl(path: str | os.PathLike[str], model: type[M]) -> Iterator[M]:
    """Yield validated records from a JSONL file.

    Raises:
        SchemaError: a line is not JSON or does not match ``model`` ("file:line: reason").
        NotFoundError-like OkgenError: the file is missing.
    """
    path = Path(path)
    try:
        f = open(path, encoding="utf-8")
    except FileNotFoundError:
        raise OkgenError(f"{path}: no such file") from None
    with f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
            except json.JSONDecodeError as e:
                raise SchemaError(f"{path.name}:{lineno}: broken JSON line ({e.msg} at column {e.colno})") from None
            except UnicodeDecodeError:
                raise SchemaError(f"{path.name}:{lineno}: not valid UTF-8") from None
            try:
                yield model.model_validate(data)
            except ValidationError as e:
                raise SchemaError(f"{path.name}:{lineno}: {describe_validation_error(e)}") from None


def read_jsonl(path: str | os.PathLike[str], model: type[M]) -> list[M]:
    """Read a whole JSONL file of ``model`` records (see :func:`iter_jsonl`)."""
    try:
        return list(iter_jsonl(path, model))
    except UnicodeDecodeError:
        raise SchemaError(f"{Path(path).name}: not valid UTF-8") from None


def read_model_json(path: str | os.PathLike[str], model: type[M]) -> M:
    """Read a top-level JSON file as ``model``.

    Raises:
        SchemaError: not JSON, or not matching the schema.
    """
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise OkgenError(f"{path}: no such file") from None
    try:
        data = json.loads(raw.decode("utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise SchemaError(f"{path.name}: corrupted JSON ({getattr(e, 'msg', e)})") from None
    try:
        return model.model_validate(data)
    except ValidationError as e:
        raise SchemaError(f"{path.name}: {describe_validation_error(e)}") from None


MISSING_SHOWN = 8  # missing fields named in the one line


def describe_validation_error(e: ValidationError) -> str:
    """One line for a pydantic error: the first problem (``field.sub: message``), or every missing
    field when several are missing (``missing fields id, text_sha256``)."""
    errs = e.errors()

    def where(err: Any) -> str:
        return ".".join(str(x) for x in err.get("loc", ())) or "record"

    missing = [where(x) for x in errs if x.get("type") == "missing"]
    if len(missing) > 1:
        shown = missing[:MISSING_SHOWN]
        rest = len(errs) - len(shown)
        return f"missing fields {', '.join(shown)}" + (f" (and {rest} more problem(s))" if rest else "")
    more = f" (and {e.error_count() - 1} more)" if e.error_count() > 1 else ""
    return f"{where(errs[0])}: {errs[0]['msg']}{more}"


def load_config(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a TOML configuration file; a missing file is an empty configuration.

    Raises:
        ConfigError: the file exists but is not valid TOML.
    """
    p = Path(path)
    if not p.exists():
        return {}
    try:
        with open(p, "rb") as f:
            return tomllib.load(f)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{p}: invalid TOML: {e}") from None
    except UnicodeDecodeError:  # tomllib decodes the bytes itself and lets this through
        raise ConfigError(f"{p}: invalid TOML: not UTF-8 text") from None
    except OSError as e:  # a folder of that name, no permission to read it
        raise ConfigError(f"{p}: {e.strerror or e}") from None


def read_toml(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a TOML file that must exist.

    Raises:
        ConfigError: the file is missing or not valid TOML.
    """
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"{p}: no such file")
    return load_config(p)
