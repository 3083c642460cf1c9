"""Run lm-evaluation-harness on an okgen export and compare its answers with okgen's.

Used by the real-model test tier and ``bench/bench_eval_lmeval.py``. lm-eval runs through its
Python API (``lm_eval.simple_evaluate``) on the task folder ``okgen export --format lm-eval``
writes, with ``log_samples`` so every question's log-likelihoods come back.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass
class LmEvalRun:
    """lm-eval's answers on one task."""

    task: str
    predictions: dict[str, int]
    """Question id -> index of the highest-scoring choice (lm-eval's ``acc``)."""
    scores: dict[str, list[float]]
    """Question id -> log-likelihood of each choice."""
    accuracy: float
    seconds: float
    """Wall time of ``simple_evaluate`` (model load included)."""


def run_lm_eval(export_dir: str | Path, task: str, model_dir: str | Path, *, batch_size: int = 8,
                chat: bool = False, model_args: dict[str, Any] | None = None, limit: int | None = None) -> LmEvalRun:
    """Score ``task`` of an okgen lm-eval export with lm-eval's ``hf`` model on CPU.

    Args:
        export_dir: folder written by ``okgen export --format lm-eval``.
        task: the task name (``okgen_<date>_<hash>[_oracle][_full]``).
        model_dir: a transformers model folder.
        batch_size: lm-eval's batch size.
        chat: lm-eval's ``apply_chat_template``.
        model_args: extra ``HFLM`` arguments (``add_bos_token``, ``max_length``...).
        limit: first N questions only.
    """
    import lm_eval
    from lm_eval.tasks import TaskManager

    args = {"pretrained": str(model_dir), "dtype": "float32", "device": "cpu", **(model_args or {})}
    tm = TaskManager(include_path=str(export_dir))
    t0 = time.perf_counter()
    out = lm_eval.simple_evaluate(model="hf", model_args=args, tasks=[task], task_manager=tm, batch_size=batch_size,
                                  log_samples=True, apply_chat_template=chat, limit=limit, verbosity="ERROR",
                                  random_seed=0, numpy_random_seed=0, torch_random_seed=0, fewshot_random_seed=0)
    seconds = time.perf_counter() - t0
    preds, scores = {}, {}
    for s in out["samples"][task]:
        lls = [float(r[0]) for r in s["filtered_resps"]]
        preds[s["doc"]["id"]] = max(range(len(lls)), key=lambda i: lls[i])
        scores[s["doc"]["id"]] = lls
    acc = float(out["results"][task]["acc,none"])
    return LmEvalRun(task=task, predictions=preds, scores=scores, accuracy=acc, seconds=seconds)


def agreement(a: dict[str, int | None], b: dict[str, int]) -> float:
    """Share of the questions of ``b`` on which ``a`` picks the same choice."""
    if not b:
        return 0.0
    return sum(1 for k, v in b.items() if a.get(k) == v) / len(b)
