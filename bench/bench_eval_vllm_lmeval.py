"""GPU: okgen's vllm backend vs lm-evaluation-harness running the exported task, same model.

Targets: okgen >= 3x questions per second, accuracy within 0.5 points.

Both score the same snapshot in the no-context setting with the same plain prompt: lm-eval runs
the task written by ``okgen export --format lm-eval`` (``multiple_choice``: one request per
choice letter, ``acc``); okgen runs ``--scoring loglik`` (one request per question, the letter
read from the first token's top log-probabilities, prefix caching on). Wall times include
model loading for both, and are also printed without it for okgen.

Needs a CUDA GPU, ``vllm`` and ``lm_eval`` (``pip install "lm-eval[vllm]"``) and a model
(hub id or local path). On a machine without them it prints why and exits 0.

Run: ``python bench/bench_eval_vllm_lmeval.py --signature SIG --model Qwen/Qwen2.5-1.5B-Instruct``
(``--signature`` defaults to a synthetic snapshot built here).
"""

from __future__ import annotations

import argparse
import glob
import importlib.util
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _missing() -> str | None:
    for mod in ("torch", "vllm", "lm_eval"):
        if importlib.util.find_spec(mod) is None:
            return f"{mod} is not installed"
    import torch

    if not torch.cuda.is_available():
        return "no CUDA GPU"
    if shutil.which("lm_eval") is None:
        return "the lm_eval command is not on PATH"
    return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="Qwen/Qwen2.5-0.5B-Instruct", help="hub id or local folder")
    ap.add_argument("--signature", default=None, help="snapshot to score (default: a synthetic one)")
    ap.add_argument("--engine-args", default="gpu_memory_utilization=0.8", help="extra vLLM engine args, k=v,...")
    args = ap.parse_args()
    why = _missing()
    if why:
        print(f"skipped: {why} (this benchmark needs a CUDA GPU, vllm and lm-eval)")
        return

    from okgen.eval.export import export_snapshot, task_name
    from okgen.eval.runner import EvalOptions, RunSpec, run_eval
    from okgen.settings import Workspace
    from okgen.snapshot.store import resolve
    from okgen.testing.eval_data import make_test_snapshot

    tmp = Path(tempfile.mkdtemp(prefix="okgen-bench-"))
    ws = Workspace.from_env() if args.signature else Workspace(tmp)
    snap = resolve(args.signature, ws) if args.signature else make_test_snapshot(ws, n_articles=2000, days=2)
    n = len(snap.questions)
    export_snapshot(snap, "lm-eval", tmp / "task")
    task = task_name(snap)

    t0 = time.perf_counter()
    cmd = ["lm_eval", "--model", "vllm", "--model_args",
           f"pretrained={args.model},dtype=auto,enable_prefix_caching=True,{args.engine_args}",
           "--tasks", task, "--include_path", str(tmp / "task"), "--batch_size", "auto",
           "--output_path", str(tmp / "lm_out")]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    t_lm = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"lm_eval failed:\n{proc.stderr[-3000:]}")
    res_file = sorted(glob.glob(str(tmp / "lm_out" / "**" / "results_*.json"), recursive=True))[-1]
    lm_acc = json.loads(Path(res_file).read_text())["results"][task]["acc,none"]

    t0 = time.perf_counter()
    # chat=no: lm-eval scores the exported task's plain prompt (no --apply_chat_template), so okgen
    # must too, or an instruct model's two accuracies would measure two different prompts.
    out = run_eval(snap.name, f"vllm/{args.model},chat=no,dtype=auto,{args.engine_args}", [RunSpec("none")],
                   EvalOptions(scoring="loglik"), workspace=ws, out=tmp / "okgen")[0]
    t_ok = time.perf_counter() - t0
    import torch

    print(f"GPU: {torch.cuda.device_count()} x {torch.cuda.get_device_name(0)}; model {args.model}; {n} questions")
    print(f"lm-eval (vllm, multiple_choice): {t_lm:8.1f} s  {n / t_lm:8.1f} q/s  acc {100 * lm_acc:.2f}")
    print(f"okgen   (vllm, loglik):          {t_ok:8.1f} s  {n / t_ok:8.1f} q/s  acc {100 * out.record.accuracy:.2f}"
          f"  (scoring only: {out.record.timings.get('questions_per_second')} q/s)")
    ratio = t_lm / t_ok
    diff = abs(100 * (out.record.accuracy - lm_acc))
    print(f"speed ratio: {ratio:.2f}x (target >= 3x: {'met' if ratio >= 3 else 'NOT met'}); "
          f"accuracy difference {diff:.2f} points (target <= 0.5: {'met' if diff <= 0.5 else 'NOT met'})")


if __name__ == "__main__":
    main()
