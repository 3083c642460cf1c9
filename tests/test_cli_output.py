"""CLI output contracts: --json on every reporting verb, --help wording, normal file modes."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys

import pytest


def _okgen(*args, home, env=None):
    e = dict(os.environ, OKGEN_HOME=str(home), OKGEN_NO_PROGRESS="1")
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "okgen", *args], capture_output=True, text=True, env=e, cwd=home)


def test_help_says_daily_builds_yesterday(tmp_path):
    out = _okgen("--help", home=tmp_path)
    assert out.returncode == 0
    assert "yesterday" in out.stdout and "today's benchmark" not in out.stdout


def test_signature_check_json(make_snapshot, tmp_path):
    snap = make_snapshot()
    out = _okgen("signature", "check", "--json", snap.signature.short, home=tmp_path)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["long"] == snap.manifest.signature and data["short"] == snap.signature.short
    bad = _okgen("--json", "signature", "check", "d:2026-11-21|nonsense", home=tmp_path)
    assert bad.returncode == 1 and bad.stdout == ""


def test_keygen_json(tmp_path):
    pytest.importorskip("cryptography")
    out = _okgen("keygen", "--json", "--out", str(tmp_path / "k.key"), home=tmp_path)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["private_key"].endswith("k.key") and data["public_key"].endswith("k.pub")
    assert stat.S_IMODE(os.stat(data["private_key"]).st_mode) == 0o600
    assert len(data["key_id"]) == 16


def test_archive_json_and_published_files_have_normal_modes(make_snapshot, workspace):
    old = os.umask(0o022)
    try:
        snap = make_snapshot()
        out = _okgen("snapshot", "archive", "--json", snap.name, home=workspace.home)
    finally:
        os.umask(old)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    from okgen.hashing import sha256_file

    assert data["sha256"] == sha256_file(data["archive"]) and data["signature"] == snap.manifest.signature
    mode = lambda p: stat.S_IMODE(os.stat(p).st_mode)  # noqa: E731
    assert mode(data["archive"]) == 0o644
    assert mode(snap.path) == 0o755
    assert {mode(p) for p in snap.path.iterdir()} == {0o644}


def test_a_released_snapshots_funnel_has_no_this_run_line():
    # `snapshot show` reads a funnel from a release: "this run 0 calls" means nothing there.
    from okgen.generate.funnel import render_funnel

    f = {"date": "2026-11-21", "candidates": 4, "kept": 2, "answer_positions": {"A": 1, "C": 1},
         "articles": {"total": 2, "generated": 2, "resumed": 0, "failed": {}, "pending": 0, "pending_by_reason": {},
                      "short": 0, "truncated": 0},
         "checks": {"passed": 2, "rejected": {}}, "validator": {"ran": False}, "probes": {"models": 0},
         "dedup": {"near_duplicate": 0}, "balance": {},
         "usage": {"calls": 3, "cached_calls": 0, "retries": 0, "prompt_tokens": 900, "completion_tokens": 300,
                   "cost_usd": 0.01, "this_run_calls": 0, "this_run_cost_usd": 0.0}}
    assert "this run" in render_funnel(f)  # a run's own output: it made none of the 3 calls
    shown = render_funnel(f, this_run=False)
    assert "this run" not in shown and "usage         3 calls" in shown
