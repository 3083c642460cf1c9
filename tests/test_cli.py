"""CLI frame: lazy imports, exit codes, one-line errors, env-var options, --version."""

from __future__ import annotations

import json
import os
import subprocess
import sys

HEAVY = ("torch", "transformers", "vllm", "colbert", "faiss", "openai", "sentence_transformers")


def _run(*args, env=None, cwd=None):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=e, cwd=cwd)


def test_import_and_help_import_no_heavy_package(tmp_path):
    code = (
        "import sys, json\n"
        "import okgen, okgen.cli.main, okgen.schema, okgen.signature, okgen.snapshot, okgen.registry\n"
        "from click.testing import CliRunner\n"
        "r = CliRunner().invoke(okgen.cli.main.cli, ['--help'])\n"
        "assert r.exit_code == 0, r.output\n"
        "for verb in okgen.cli.main._available():\n"
        "    r = CliRunner().invoke(okgen.cli.main.cli, [verb, '--help'])\n"
        "    assert r.exit_code == 0, (verb, r.output)\n"
        f"heavy = {HEAVY!r}\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in heavy)))\n"
    )
    out = _run("-c", code, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []


def test_version_and_help(tmp_path):
    from okgen import __version__

    out = _run("-m", "okgen", "--version", cwd=tmp_path)
    assert out.returncode == 0 and out.stdout.strip() == f"okgen {__version__}"
    out = _run("-m", "okgen", "--help", cwd=tmp_path)
    assert out.returncode == 0 and "snapshot" in out.stdout and "signature" in out.stdout


def test_usage_error_exits_2(tmp_path):
    out = _run("-m", "okgen", "no-such-verb", cwd=tmp_path)
    assert out.returncode == 2 and "No such command" in out.stderr
    out = _run("-m", "okgen", "snapshot", "show", cwd=tmp_path)
    assert out.returncode == 2 and "Missing argument" in out.stderr


def test_okgen_error_is_one_line_with_traceback_only_in_debug(tmp_path):
    out = _run("-m", "okgen", "snapshot", "show", "deadbeef", cwd=tmp_path)
    assert out.returncode == 1
    assert out.stderr.strip().splitlines() == [out.stderr.strip()]
    assert out.stderr.startswith("okgen: error: no snapshot matches")
    dbg = _run("-m", "okgen", "--debug", "snapshot", "show", "deadbeef", cwd=tmp_path)
    assert dbg.returncode == 1 and "Traceback" in dbg.stderr


def test_env_vars_set_options(tmp_path, make_snapshot, workspace):
    snap = make_snapshot()
    # OKGEN_HOME picks the workspace, OKGEN_JSON the output format.
    out = _run("-m", "okgen", "snapshot", "ls", env={"OKGEN_HOME": str(workspace.home), "OKGEN_JSON": "1"}, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)[0]["name"] == snap.name
    # A verb option through click's auto-envvar rule: OKGEN_<VERB>_<OPTION>.
    target = tmp_path / "copy.tar.gz"
    out = _run("-m", "okgen", "snapshot", "archive", snap.name,
               env={"OKGEN_HOME": str(workspace.home), "OKGEN_SNAPSHOT_ARCHIVE_OUT": str(target)}, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert target.is_file() and out.stdout.strip() == str(target)


def test_registry_unknown_and_missing_extra():
    import pytest

    from okgen.errors import ConfigError, MissingExtraError
    from okgen.registry import Registry, require

    reg = Registry("retriever", {"bm25": "okgen.hashing:sha256_text", "ghost": "okgen_no_such_mod_xyz:thing"})
    assert reg.get("bm25")("a") == reg.get("bm25")("a")
    with pytest.raises(ConfigError, match="unknown retriever 'nope'; known: bm25, ghost"):
        reg.get("nope")
    with pytest.raises(MissingExtraError, match=r'pip install "okgen\[colbert\]"'):
        require("colbert_not_installed_mod", "colbert", "the colbert retriever")


def test_empty_list_items_are_usage_errors(workspace, make_snapshot):
    """``--setting none,,oracle`` or a trailing comma is a typo: refused before any work, not a
    run with the item dropped."""
    from click.testing import CliRunner

    from okgen.cli.main import cli

    snap = make_snapshot()
    cases = [
        (["eval", "-s", snap.name, "-m", "random", "--setting", "none,,oracle"], "--setting", "'none,,oracle'"),
        (["eval", "-s", snap.name, "-m", "random", "--setting", "retrieval", "--k", "1,5,"], "--k", "'1,5,'"),
        (["index", "build", "--signature", snap.name, "--retriever", "bm25,", "--window", "1"], "--retriever", "'bm25,'"),
        (["retrieval-eval", "--signature", snap.name, "--retrievers", "bm25,,dense"], "--retrievers", "'bm25,,dense'"),
        (["report", "--figures", "png,,svg", "--out", str(workspace.home / "r"), str(workspace.home)], "--figures", "'png,,svg'"),
        (["daily", "--retrievers", "bm25,,dense", "--date", "2025-04-10"], "--retrievers", "'bm25,,dense'"),
    ]
    for args, option, shown in cases:
        r = CliRunner().invoke(cli, args)
        assert r.exit_code == 2, (args, r.output)
        assert option in r.output and shown in r.output and "empty item" in r.output, (args, r.output)
    assert not (workspace.home / "runs").exists()  # nothing ran
