"""Shared fixtures. Tests are offline: no model downloads, servers only on 127.0.0.1."""

from __future__ import annotations

import datetime as dt
import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("OKGEN_NO_PROGRESS", "1")

SNAP_DATE = dt.date(2026, 11, 21)


def pytest_collection_modifyitems(config, items):
    """Skip gpu tests without CUDA, api tests without a key, and the real-model tier unless asked for."""
    has_cuda = False
    try:
        import importlib.util

        if importlib.util.find_spec("torch") is not None:
            import torch

            has_cuda = torch.cuda.is_available()
    except Exception:
        has_cuda = False
    has_key = bool(os.environ.get("OKGEN_TEST_API_KEY"))
    real = "realmodel" in (config.getoption("-m") or "") or bool(os.environ.get("OKGEN_TEST_REAL_MODELS"))
    for item in items:
        if "gpu" in item.keywords and not has_cuda:
            item.add_marker(pytest.mark.skip(reason="needs a CUDA GPU"))
        if "realmodel" in item.keywords and not real:
            item.add_marker(pytest.mark.skip(reason="real-model tier: run with -m realmodel or OKGEN_TEST_REAL_MODELS=1"))
        if "api" in item.keywords and not has_key:
            item.add_marker(pytest.mark.skip(reason="set OKGEN_TEST_API_KEY to run tests against a real API"))


@pytest.fixture
def workspace(tmp_path, monkeypatch):
    """A fresh workspace in tmp_path; OKGEN_HOME points at it."""
    from okgen.settings import Workspace

    monkeypatch.setenv("OKGEN_HOME", str(tmp_path))
    return Workspace(tmp_path)


@pytest.fixture
def synthetic_records():
    """(articles, questions) of a small synthetic 10-day corpus ending on SNAP_DATE."""
    from okgen.testing.corpus import make_articles, make_questions

    articles, facts = make_articles(60, SNAP_DATE, days=10, seed=7)
    questions = make_questions(articles, facts, SNAP_DATE, seed=7)
    return articles, questions


@pytest.fixture
def make_snapshot(workspace, synthetic_records):
    """Build a snapshot in the workspace: ``make_snapshot(**overrides) -> Snapshot``."""
    from okgen.schema import AgentInfo
    from okgen.snapshot.build import build_snapshot

    def _make(**kw):
        articles, questions = synthetic_records
        questions = kw.pop("questions", questions)
        articles = kw.pop("corpus", articles)
        args = dict(
            date=SNAP_DATE, generator=AgentInfo(model="synthetic-v1"), prompt_hash="ab" * 32,
            feeds_hash="cd" * 32, seed=13, workspace=workspace,
            timestamp=dt.datetime(2026, 11, 22, 6, 0, tzinfo=dt.timezone.utc),
        )
        args.update(kw)
        return build_snapshot(questions, articles, **args)

    return _make
