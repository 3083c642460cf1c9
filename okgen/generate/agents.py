"""Agent specs: the generator, validator and probe as data (TOML spec + prompt templates).

An agent spec is a TOML file in an agents folder (``agents/generator/spec.toml``) naming its
prompt templates, decoding defaults and options. Templates are text with ``{{ name }}``
placeholders; a placeholder the code does not fill is an error, so a typo in a prompt cannot
silently send a literal ``{{ titel }}`` to a model.

The agents folder is, in order: an explicit path (``--agents DIR`` or ``[generate] agents_dir``
in okgen.toml), the workspace's ``agents/`` when it holds the spec, or the copy shipped inside
the package (``okgen/data/agents``), so an installed okgen works without the repository. The
spec hash covers exactly the files an agent uses, by path relative to the agents folder, so
the repository and the packaged copy hash the same.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from okgen.errors import ConfigError
from okgen.hashing import sha256_files
from okgen.settings import Workspace, tomllib

if TYPE_CHECKING:
    from okgen.llm import ChatModel
    from okgen.schema import Decoding

_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")

# agent name -> spec file, relative to the agents folder
SPECS = {
    "generator": "generator/spec.toml",
    "extractive": "generator/extractive.toml",
    "validator": "validator/spec.toml",
    "probe": "validator/probe.toml",
    "facts": "facts/spec.toml",
    "transition": "facts/transition.toml",
}


def packaged_agents_dir() -> Path:
    """The agents folder shipped inside the package."""
    return Path(str(resources.files("okgen").joinpath("data/agents")))


def resolve_agents_dir(workspace: Workspace | None = None, override: str | Path | None = None) -> Path:
    """The agents folder to use (see the module docstring for the order).

    Raises:
        ConfigError: ``override`` is not a folder.
    """
    if override:
        p = Path(override).expanduser()
        if not p.is_dir():
            raise ConfigError(f"agents folder {p} does not exist")
        return p.resolve()
    if workspace is not None:
        local = workspace.home / "agents"
        if (local / SPECS["generator"]).is_file():
            return local.resolve()
    return packaged_agents_dir()


@dataclass
class AgentSpec:
    """One loaded agent spec.

    Attributes:
        name: agent name (``generator``, ``validator``, ``probe``, ``extractive``).
        root: the agents folder.
        path: the spec file.
        data: the parsed TOML.
        templates: template name -> text (from ``[prompt]``).
        files: every file the agent uses (spec and templates).
    """

    name: str
    root: Path
    path: Path
    data: dict[str, Any]
    templates: dict[str, str] = field(default_factory=dict)
    files: list[Path] = field(default_factory=list)

    @property
    def spec_hash(self) -> str:
        """SHA-256 over the agent's files (relative path and content)."""
        return sha256_files(self.files, self.root)

    @property
    def version(self) -> str:
        """``[agent] version`` as text."""
        return str(self.data.get("agent", {}).get("version", "1"))

    def section(self, name: str) -> dict[str, Any]:
        """A table of the spec (empty when absent)."""
        value = self.data.get(name, {})
        if not isinstance(value, dict):
            raise ConfigError(f"{self.path}: [{name}] must be a table")
        return value

    def render(self, template: str, **values: Any) -> str:
        """Fill a template's ``{{ name }}`` placeholders.

        Raises:
            ConfigError: the template is unknown or uses a placeholder not given.
        """
        if template not in self.templates:
            raise ConfigError(f"{self.path}: no template {template!r} under [prompt]")
        text = self.templates[template]

        def repl(m: re.Match[str]) -> str:
            key = m.group(1)
            if key not in values:
                raise ConfigError(f"{self.path}: template {template!r} uses {{{{ {key} }}}}, which okgen does not provide "
                                  f"(known: {', '.join(sorted(values))})")
            return str(values[key])

        return _PLACEHOLDER.sub(repl, text)


def load_agent(name: str, root: Path) -> AgentSpec:
    """Load an agent spec and its templates from an agents folder.

    Raises:
        ConfigError: missing spec or template file, invalid TOML.
    """
    rel = SPECS.get(name)
    if rel is None:
        raise ConfigError(f"unknown agent {name!r}; known: {', '.join(SPECS)}")
    path = root / rel
    if not path.is_file():
        raise ConfigError(f"agent spec {path} not found")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: invalid TOML: {e}") from None
    spec = AgentSpec(name=name, root=root, path=path, data=data, files=[path])
    prompt = data.get("prompt", {})
    for key, value in prompt.items():
        if not isinstance(value, str) or not value.endswith((".md", ".txt")):
            continue  # other [prompt] settings (max_article_chars ...)
        tpath = path.parent / value
        if not tpath.is_file():
            raise ConfigError(f"{path}: template {value} not found")
        spec.templates[key] = tpath.read_text(encoding="utf-8")
        spec.files.append(tpath)
    return spec


def prompt_hash(specs: list[AgentSpec]) -> str:
    """Hash of every file the run's agents use (goes into the snapshot signature)."""
    files: list[Path] = []
    roots = {s.root for s in specs}
    if len(roots) > 1:
        raise ConfigError("all agents of a run must come from one agents folder")
    for s in specs:
        files += [f for f in s.files if f not in files]
    return sha256_files(files, specs[0].root)


class ModelAgent:
    """An agent spec bound to the model that plays it (the validator, a probe).

    Args:
        spec: the agent spec.
        client: the model (any backend of :mod:`okgen.llm`).
        decoding: decoding parameters.
    """

    def __init__(self, spec: AgentSpec, client: ChatModel, decoding: Decoding):
        self.spec = spec
        self.client = client
        self.decoding = decoding
