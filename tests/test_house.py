"""The house rules a maintainer relies on: no import cycles, no torch at test collection."""

from __future__ import annotations

import ast
import hashlib
import os
import shutil
import subprocess
import sys
import zipfile
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


# ------------------------------------------------------------------------------ libraries
def test_run_lock_names_the_holder_and_frees_on_exit(tmp_path):
    from okgen.daily.lock import RunLock
    from okgen.errors import LockedError

    path = tmp_path / "locks" / "daily.lock"
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys\nfrom okgen.daily.lock import RunLock\n"
        f"with RunLock({str(path)!r}):\n    print('held', flush=True)\n    sys.stdin.readline()\n")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(LockedError, match=f"pid {holder.pid}"):
            RunLock(path).acquire()
    finally:
        holder.communicate("\n", timeout=30)
    with RunLock(path):  # free again
        pass


def test_our_canonical_json_is_kept_because_rfc8785_gives_other_bytes():
    """rfc8785 writes 1.0 as 1 and sorts keys by UTF-16 code units: every recorded content hash
    (and so every published signature) would change, so okgen keeps its own canonical form."""
    rfc8785 = pytest.importorskip("rfc8785")
    from okgen.hashing import canonical_json

    assert canonical_json({"x": 1.0}).encode() != rfc8785.dumps({"x": 1.0})
    assert canonical_json({"\U0001F600": 1, "\uff61": 2}).encode() != rfc8785.dumps({"\U0001F600": 1, "\uff61": 2})
    assert canonical_json({"b": [1, "é"], "a": None}).encode() == rfc8785.dumps({"b": [1, "é"], "a": None})


def test_our_url_canonicalisation_is_kept_because_w3lib_keeps_what_we_drop():
    """w3lib's canonicalize_url sorts the query and drops the fragment, but keeps www., default
    ports, tracking parameters and trailing slashes, which okgen's article identity drops."""
    w3lib_url = pytest.importorskip("w3lib.url")
    from okgen.ingest.dedup import canonicalize_url

    url = "https://WWW.Example.com:443/a/b/?utm_source=x&id=2#top"
    assert canonicalize_url(url) == "https://example.com/a/b?id=2"
    assert w3lib_url.canonicalize_url(url) == "https://www.example.com:443/a/b/?id=2&utm_source=x"


def test_no_dead_top_level_code_in_ingest_daily_snapshot_and_helpers():
    """Every top-level function and class of these modules is used (or documented) somewhere
    else: code that nothing calls is deleted, not kept (files.atomic_dir was)."""
    import re
    from collections import Counter

    mine = [p for d in ("ingest", "daily", "snapshot") for p in (ROOT / "okgen" / d).rglob("*.py")]
    mine += [ROOT / "okgen" / f"{m}.py" for m in ("files", "hashing", "registry", "settings", "errors")]
    texts = [p.read_text(encoding="utf-8") for d in ("okgen", "tests", "bench") for p in (ROOT / d).rglob("*.py")]
    texts += [p.read_text(encoding="utf-8") for p in [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]]
    words = Counter(re.findall(r"\w+", "\n".join(texts)))  # an identifier is a whole word
    unused = []
    for path in mine:
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if (isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
                    and words[node.name] <= 1):
                unused.append(f"{path.relative_to(ROOT)}:{node.name}")
    assert unused == []


# ------------------------------------------------------------------------------ one source
def _files(root: Path, skip: set[str]) -> list[Path]:
    """Regular files below ``root``, links not followed, skipping the named folders."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = [d for d in dirnames if d not in skip and not d.startswith(".")]
        out += [Path(dirpath) / f for f in filenames if not (Path(dirpath) / f).is_symlink()]
    return out


def test_package_data_has_no_second_copy_in_the_checkout():
    """``okgen/data`` (agents, retrievers, feeds) is the one source: the top-level ``agents/``
    and ``retrievers/`` are links to it, and no file outside ``okgen/`` repeats one of its files."""
    data = ROOT / "okgen" / "data"
    for name in ("agents", "retrievers"):
        top = ROOT / name
        if top.exists() or top.is_symlink():
            assert top.is_symlink() and top.resolve() == (data / name).resolve(), f"{name}/ is not a link to okgen/data/{name}"
    ours = {hashlib.sha256(p.read_bytes()).hexdigest(): p for p in _files(data, set())}
    assert len(ours) >= 15  # agents, judge, retrievers and the feed list are really there
    skip = {"okgen", "data", "snapshots", "series", "build", "dist", "__pycache__", "venv"}
    copies = [f"{p.relative_to(ROOT)} = {ours[h].relative_to(ROOT)}" for p in _files(ROOT, skip)
              if (h := hashlib.sha256(p.read_bytes()).hexdigest()) in ours]
    assert copies == []


def test_the_built_wheel_ships_every_data_file(tmp_path):
    """What the installed package reads (okgen/data/...) is in the wheel that pip would install."""
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(ROOT / "okgen", src / "okgen", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    out = tmp_path / "wheel"
    code = f"from setuptools import build_meta\nprint(build_meta.build_wheel({str(out)!r}))"
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=src)
    assert res.returncode == 0, res.stderr[-2000:]
    names = set(zipfile.ZipFile(out / res.stdout.split()[-1]).namelist())
    wanted = {p.relative_to(ROOT).as_posix() for p in _files(ROOT / "okgen" / "data", set())}
    assert {"okgen/data/agents/generator/extractive.toml", "okgen/data/retrievers/bm25.toml"} <= wanted
    assert wanted - names == set()
