"""The install metadata declares every distribution the ingest/daily path imports.

A user's stock ``pip`` (e.g. 23.x, what ``python3 -m venv`` ships) does not normalise extra
names (PEP 685): ``justext`` asks for ``lxml[html_clean]`` while lxml spells the extra
``html-clean``, so ``lxml_html_clean`` is never installed and trafilatura dies on import.
The rule checked here is therefore strict: every distribution imported on the daily path must
be reachable from okgen's core requirements through *unconditional* requirements only.
"""

from __future__ import annotations

import importlib.metadata as md
import json
import subprocess
import sys
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]

# What `okgen daily` (ingest → extract → generate → snapshot → signature) loads at run time.
DAILY_PATH = """
import json, sys
startup = set(sys.modules)  # site hooks (e.g. setuptools' _distutils_hack) are not okgen's
import okgen.cli.main, okgen.cli.daily, okgen.cli.ingest, okgen.cli.snapshot
import okgen.ingest.pipeline, okgen.ingest.extract, okgen.ingest.fetch, okgen.ingest.feeds
import okgen.ingest.warc, okgen.ingest.dedup, okgen.ingest.robots, okgen.ingest.importer
import okgen.daily.pipeline, okgen.daily.scheduler, okgen.snapshot.build, okgen.snapshot.archive
import okgen.tls
okgen.tls.tls_context()
import trafilatura
trafilatura.extract("<html><body><article><p>" + "A sentence of news. " * 30
                    + "</p></article></body></html>")
print(json.dumps(sorted({m.split('.')[0] for m in set(sys.modules) - startup})))
"""


def _core_requirements() -> list[Requirement]:
    """okgen's core requirements: the installed metadata when it was built from this checkout,
    else pyproject.toml (the source that metadata is built from)."""
    try:
        dist = md.distribution("okgen")
        url = json.loads(dist.read_text("direct_url.json") or "{}").get("url", "")
        if url.rstrip("/") == ROOT.as_uri():
            return [Requirement(r) for r in dist.requires or [] if "extra ==" not in r]
    except md.PackageNotFoundError:
        pass
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return [Requirement(r) for r in project["dependencies"]]


def _reachable(roots: list[Requirement]) -> set[str]:
    """Distributions reachable through requirements that apply without any extra."""
    env = default_environment() | {"extra": ""}
    seen: set[str] = set()
    todo = [r for r in roots if r.marker is None or r.marker.evaluate(env)]
    while todo:
        req = todo.pop()
        name = canonicalize_name(req.name)
        if name in seen:
            continue
        seen.add(name)
        try:
            reqs = md.requires(req.name) or []
        except md.PackageNotFoundError:
            continue
        for r in map(Requirement, reqs):
            if r.marker is None or r.marker.evaluate(env):
                todo.append(r)
    return seen


def test_daily_path_imports_are_declared():
    out = subprocess.run([sys.executable, "-c", DAILY_PATH], capture_output=True, text=True,
                         check=True, cwd=ROOT).stdout
    modules = json.loads(out.strip().splitlines()[-1])
    owners = md.packages_distributions()
    imported = {canonicalize_name(d) for m in modules for d in owners.get(m, [])}
    imported.discard("okgen")
    assert "lxml-html-clean" in imported  # the daily path really loads it (via justext)
    missing = imported - _reachable(_core_requirements())
    assert not missing, f"imported on the daily path but not declared: {sorted(missing)}"


def test_ci_keeps_the_readme_install_line():
    """.ci/run may upgrade pip, but installs with the README's own command."""
    ci = (ROOT / ".ci" / "run").read_text()
    readme = (ROOT / "README.md").read_text()
    assert 'pip install -c .ci/constraints.txt -e ".[all,dev]"' in readme
    assert 'pip install --quiet -c .ci/constraints.txt -e ".[all,dev]"' in ci
