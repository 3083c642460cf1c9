"""Oracle setting: questions sharing an article, batched so the article is processed once.

Compares, through the real ``okgen eval`` runner on the hf backend (CPU, tiny Llama):

* one by one: each question's prompt (article + question) in its own forward pass
  (``batch_size=1,prefix_cache=no``);
* batched: the same prompts, 8 per forward (``prefix_cache=no``);
* grouped: a group's common token prefix (the article) runs once and its KV cache is reused
  by every question of the article (``prefix_cache=yes``, the default).

It prints the scoring time of each (best of interleaved repeats, and the CPU time of the whole
run, steadier on a shared machine), the ratios against one-by-one order, the share of prompt
tokens the prefix reuse skipped, and whether the predictions are the same. vLLM gets the same
effect from its prefix caching (okgen sends a group's requests next to each other).

Run: ``python bench/bench_eval_oracle_prefix.py [--articles 24] [--per-article 4]``.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("OKGEN_NO_PROGRESS", "1")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--articles", type=int, default=24, help="synthetic articles (half of them give questions)")
    ap.add_argument("--per-article", type=int, default=4, help="questions per article")
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--scoring", default="loglik", choices=["loglik", "loglik-full"])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1,
                    help="torch threads (1: no spin-waiting, so timings hold up on a shared machine)")
    args = ap.parse_args()

    import torch

    torch.set_num_threads(args.threads)

    from okgen.eval.runner import EvalOptions, RunSpec, read_predictions, run_eval
    from okgen.settings import Workspace
    from okgen.testing.eval_data import make_test_snapshot, tiny_model_for

    tmp = Path(tempfile.mkdtemp(prefix="okgen-bench-"))
    ws = Workspace(tmp)
    snap = make_test_snapshot(ws, n_articles=args.articles, days=2, per_article=args.per_article)
    model = tiny_model_for(snap, tmp / "tiny", hidden=args.hidden, layers=args.layers, heads=8, max_positions=2048)
    n = len(snap.questions)
    per = n / len({q.article_id for q in snap.questions})
    variants = {
        "one by one": "batch_size=1,prefix_cache=no",
        "batched (8)": "batch_size=8,prefix_cache=no",
        "grouped, article once": "batch_size=8,prefix_cache=yes",
    }
    opts = EvalOptions(scoring=args.scoring)
    # warm-up (first forward passes allocate)
    run_eval(snap.name, f"hf/{model}", [RunSpec("oracle")], EvalOptions(scoring=args.scoring, limit=4), workspace=ws,
             out=tmp / "warm")
    secs = {name: float("inf") for name in variants}
    cpu = {name: float("inf") for name in variants}
    usage, preds, ptok = {}, {}, 0
    # Interleaved repeats (the machine is shared), best of each; CPU time of this process too.
    for rep in range(args.repeats):
        for name, o in variants.items():
            c0 = time.process_time()
            out = run_eval(snap.name, f"hf/{model},{o}", [RunSpec("oracle")], opts, workspace=ws,
                           out=tmp / f"{name.split()[0]}-{rep}")[0]
            cpu[name] = min(cpu[name], time.process_time() - c0)
            secs[name] = min(secs[name], out.record.timings["scoring"])
            usage[name] = out.record.extra.get("backend_usage", {})
            preds[name] = {k: p.pred_index for k, p in read_predictions(out.path / "predictions.jsonl").items()}
            ptok = out.record.usage["prompt_tokens"]
    print(f"machine: {os.cpu_count()} CPU cores, torch {torch.__version__}, {torch.get_num_threads()} threads")
    print(f"oracle setting, scoring={args.scoring}: {n} questions on {n / per:.0f} articles ({per:.1f} per article), "
          f"mean prompt {ptok / n:.0f} tokens; tiny Llama hidden={args.hidden} layers={args.layers}; best of {args.repeats}")
    one = "one by one"
    for name in variants:
        same = sum(preds[name][k] == preds[one][k] for k in preds[one])
        print(f"{name:24s} scoring {secs[name]:7.3f} s ({n / secs[name]:6.1f} q/s) x{secs[one] / secs[name]:5.2f}   "
              f"whole run cpu {cpu[name]:7.3f} s x{cpu[one] / cpu[name]:5.2f}   "
              f"tokens run {usage[name].get('tokens_processed', 0):6d}  same predictions {same}/{n}")
    g, b = "grouped, article once", "batched (8)"
    reused = usage[g].get("prefix_tokens_reused", 0)
    print(f"grouped vs batched: x{secs[b] / secs[g]:.2f} (cpu x{cpu[b] / cpu[g]:.2f}); prefix tokens reused: {reused} "
          f"of {ptok} prompt tokens ({100 * reused / max(1, ptok):.0f}% not recomputed)")

if __name__ == "__main__":
    main()
