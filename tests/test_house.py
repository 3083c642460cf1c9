"""The house rules a maintainer relies on: no import cycles, no torch at test collection."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _module_name(p: Path) -> str:
    parts = p.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """okgen module -> okgen modules it imports (module level or inside functions alike)."""
    files = {_module_name(p): p for p in (ROOT / "okgen").rglob("*.py")}
    graph: dict[str, set[str]] = {m: set() for m in files}

    def known(name: str) -> str | None:
        while name and name not in files:
            name = name.rpartition(".")[0]
        return name or None

    for mod, path in files.items():
        pkg = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = pkg.split(".")[: len(pkg.split(".")) - (node.level - 1)]
                    base = ".".join(up + ([node.module] if node.module else []))
                targets = [f"{base}.{a.name}" for a in node.names]
            for t in targets:
                hit = known(t)
                if hit and hit != mod and hit.startswith("okgen"):
                    graph[mod].add(hit)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_okgen_has_no_import_cycle():
    graph = import_graph()
    assert "okgen.snapshot.store" in graph["okgen.snapshot.build"]  # the graph is real
    assert cycles(graph) == []


def test_collection_imports_no_torch():
    """Collecting tests (conftest's gpu check included) must not import torch: test files that
    need it import it themselves, inside the tests or with importorskip."""
    code = ("import sys, pytest\n"
            "class P:\n"
            "    def pytest_collection_finish(self, session):\n"
            "        print('TORCH', 'torch' in sys.modules)\n"
            f"pytest.main(['--collect-only', '-q', '-p', 'no:cacheprovider', {str(ROOT / 'tests' / 'test_house.py')!r},"
            f" {str(ROOT / 'tests' / 'test_daily.py')!r}], plugins=[P()])\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    line = [ln for ln in out.stdout.splitlines() if ln.startswith("TORCH")]
    assert line == ["TORCH False"], out.stdout + out.stderr


@pytest.mark.gpu
def test_gpu_tests_run_only_with_cuda():
    import torch

    assert torch.cuda.is_available()  # conftest skips this test (and every gpu test) without CUDA
