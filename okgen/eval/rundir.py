"""Run folders: ``run.json`` (what the run is), ``predictions.jsonl`` (appended as batches
finish) and ``results.json``; reading predictions back after an interrupted run."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from okgen import __version__
from okgen.errors import ConfigError, OkgenError
from okgen.files import atomic_write_text, pretty_json
from okgen.schema import Prediction

log = logging.getLogger(__name__)

RUN_FILE, PREDICTIONS, RESULTS = "run.json", "predictions.jsonl", "results.json"


def folder_lock(ws: Any, path: Path, what: str = "okgen eval") -> Any:
    """The lock one process holds while it writes the run folder ``path`` (under the workspace's
    ``data/locks/``, named by the folder's resolved path): a second process writing the same
    folder would append every prediction twice."""
    from okgen.daily.lock import RunLock
    from okgen.hashing import sha256_text

    name = f"run-{sha256_text(str(Path(path).resolve()))[:16]}.lock"
    return RunLock(ws.data_dir / "locks" / name,
                   message=f"another {what} is writing {path}{{holder}}; try again when it has finished")


def open_run_dir(path: Path, cfg: dict[str, Any], overwrite: bool) -> dict[str, Any]:
    """Create the run folder, or check that an existing one holds this run (its run.json).

    Raises:
        ConfigError: the folder holds another run (the differing fields are named).
    """
    rf = path / RUN_FILE
    if overwrite and path.exists():
        for name in (RUN_FILE, PREDICTIONS, RESULTS):
            (path / name).unlink(missing_ok=True)
    path.mkdir(parents=True, exist_ok=True)
    if not rf.is_file():
        if (path / PREDICTIONS).exists():
            raise ConfigError(f"{path} holds predictions but no {RUN_FILE}: use another --out or --overwrite")
        return {}
    try:
        stored = json.loads(rf.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise ConfigError(f"{rf}: corrupted; use --overwrite to start the run again") from None
    if stored.get("config") != cfg:
        diff = sorted(k for k in set(cfg) | set(stored.get("config", {})) if cfg.get(k) != stored.get("config", {}).get(k))
        raise ConfigError(f"{path} holds another run (differs in {', '.join(diff)}); use another --out or --overwrite")
    return stored


def write_run_file(path: Path, cfg: dict[str, Any], sig: str, model: str, info: Any) -> None:
    data = {"kind": "okgen-eval-run", "schema_version": 1, "config": cfg, "signature": sig, "model": model,
            "backend": info, "okgen": __version__}
    atomic_write_text(path / RUN_FILE, pretty_json(data))


def read_predictions(path: Path) -> dict[str, Prediction]:
    """Predictions of a run by question id (the last line of a question wins).

    A torn last line (a run killed mid-write) is cut off the file; a bad line elsewhere is an
    error naming its line.

    Raises:
        SchemaError-like OkgenError: a corrupted line that is not the last.
    """
    if not path.is_file():
        return {}
    raw = path.read_bytes()
    lines = raw.split(b"\n")
    out: dict[str, Prediction] = {}
    good_bytes = 0
    for i, line in enumerate(lines):
        if not line.strip():
            good_bytes += len(line) + (1 if i < len(lines) - 1 else 0)
            continue
        try:
            p = Prediction.model_validate(json.loads(line))
        except (json.JSONDecodeError, UnicodeDecodeError, ValidationError) as e:
            if i >= len(lines) - 2 and not any(x.strip() for x in lines[i + 1:]):
                log.warning("%s: dropping a torn last line (the run was interrupted)", path.name)
                with open(path, "r+b") as f:
                    f.truncate(good_bytes)
                break
            raise OkgenError(f"{path}:{i + 1}: corrupted prediction line ({type(e).__name__})") from None
        out[p.question_id] = p
        good_bytes += len(line) + 1
    return out
