"""The optional LLM judge of open answers: it decides only the misses of the exact match.

The judge is an agent spec (``agents/judge/``: ``spec.toml``, ``system.md``, ``user.md``; a
copy ships in the package and is used when the workspace has none). Its name in the eval
signature is ``<backend>/<model>@<hash of the spec folder>``, so a different model or an
edited prompt gives a different signature. It runs on any OpenAI-compatible server through
:class:`~okgen.llm.ChatModel` of any backend (cached, retried, structured output).
"""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from okgen.errors import ConfigError
from okgen.hashing import sha256_tree
from okgen.models.base import parse_model_spec

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

log = logging.getLogger(__name__)

_PLACEHOLDER = re.compile(r"\{(question|reference|answer)\}")


class JudgeVerdict(BaseModel):
    """The judge's structured answer."""

    correct: bool
    reason: str = ""


def judge_folder(workspace: Any = None) -> Path:
    """The judge spec folder: the workspace's ``agents/judge/`` if present, else the packaged one."""
    if workspace is not None:
        local = Path(workspace.home) / "agents" / "judge"
        if (local / "spec.toml").is_file():
            return local
    return Path(str(resources.files("okgen").joinpath("data/agents/judge")))


@dataclass
class JudgeSpec:
    """A loaded judge spec."""

    folder: Path
    spec: dict[str, Any]
    system: str
    user: str
    hash: str

    @classmethod
    def load(cls, folder: Path) -> JudgeSpec:
        """Read ``spec.toml`` and its prompts.

        Raises:
            ConfigError: a file is missing or the TOML is invalid.
        """
        try:
            spec = tomllib.loads((folder / "spec.toml").read_text(encoding="utf-8"))
            prompts = spec.get("prompts", {})
            system = (folder / prompts.get("system", "system.md")).read_text(encoding="utf-8")
            user = (folder / prompts.get("user", "user.md")).read_text(encoding="utf-8")
        except (OSError, tomllib.TOMLDecodeError) as e:
            raise ConfigError(f"judge spec in {folder}: {e}") from None
        return cls(folder, spec, system.strip(), user.strip(), sha256_tree(folder)[:8])


class Judge:
    """An LLM judge on any chat backend.

    Args:
        model_spec: ``openai/MODEL[,base_url=...,api_key_env=...]``, ``hf/PATH`` or ``vllm/ID``
            (``default``: the spec's model).
        workspace: for the spec folder and the response cache.
    """

    def __init__(self, model_spec: str, workspace: Any = None):
        from okgen.llm import chat_model
        from okgen.models.cache import ResponseCache

        self.spec = JudgeSpec.load(judge_folder(workspace))
        if model_spec in ("default", ""):
            model_spec = self.spec.spec.get("defaults", {}).get("model", "")
        ms = parse_model_spec(model_spec)
        cache = ResponseCache(Path(workspace.cache_dir) / "llm.sqlite") if workspace is not None else None
        self.cache = cache
        self.client, overrides = chat_model(ms, concurrency=8, cache=cache)
        self.name = f"{ms.name}@{self.spec.hash}"
        self.decoding = {**self.spec.spec.get("decoding", {}), **overrides}

    def decide(self, items: Sequence[tuple[str, str, str]]) -> list[tuple[bool | None, str]]:
        """Judge ``(question, reference, answer)`` triples; ``(None, error)`` where the call failed."""
        from okgen.llm import ChatRequest

        reqs = []
        for question, reference, answer in items:
            # One pass, so a "{answer}" inside a question is text, not a placeholder.
            values = {"question": question, "reference": reference, "answer": answer}
            user = _PLACEHOLDER.sub(lambda m, v=values: v[m.group(1)], self.spec.user)
            reqs.append(ChatRequest(
                messages=({"role": "system", "content": self.spec.system}, {"role": "user", "content": user}),
                temperature=float(self.decoding.get("temperature", 0.0)), top_p=float(self.decoding.get("top_p", 1.0)),
                max_tokens=int(self.decoding.get("max_tokens", 200)), seed=int(self.decoding.get("seed", 0)),
                schema=JudgeVerdict, tag="judge"))
        out = []
        for r in self.client.chat_many(reqs):
            if r.ok and isinstance(r.parsed, JudgeVerdict):
                out.append((bool(r.parsed.correct), r.parsed.reason[:500]))
            else:
                out.append((None, r.error or "no verdict"))
        return out

    def usage(self) -> dict[str, Any]:
        """The judge client's calls, tokens and cost."""
        return self.client.stats.to_dict()

    def close(self) -> None:
        """Flush and close the response cache."""
        if self.cache is not None:
            self.cache.close()
            self.cache = None
