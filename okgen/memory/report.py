"""Metrics of stream runs, and the table that compares settings.

Per setting (:func:`results`): accuracy with a bootstrap 95% CI, accuracy by the **age of the
needed fact** (days between the question's article and when it was asked: retention),
stale- and future-answer rates (:func:`okgen.memory.dated.answer_rates`), whether the gold
evidence (the question's own article) reached the context, and the cost per day (prompt tokens,
seconds observing/retrieving/scoring, the memory's size and its own LLM tokens). Across
settings (:func:`compare`): the **memory gain**, accuracy minus the ``none`` setting's;
:func:`by_age_markdown` tabulates retention (accuracy by age, for ``--ask end``).
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from typing import Any

from okgen.eval.stats import bootstrap_ci
from okgen.memory.dated import Pool, answer_rates
from okgen.schema import Prediction, Question

OAKS = ("acc", "al", "ds", "pm")


def results(setting: str, asked: dict[str, tuple[Question, dt.date]], preds: dict[str, Prediction], pool: Pool,
            costs: list[dict[str, Any]], cfg: dict[str, Any]) -> dict[str, Any]:
    """The results of one stream run (what ``results.json`` holds)."""
    qs = [q for q, _ in asked.values()]
    got = [(q, preds[q.id]) for q in qs if q.id in preds]
    correct = [bool(p.correct and p.error is None) for _, p in got]
    n = len(got)
    by_age: dict[int, list[bool]] = defaultdict(list)
    for (q, _p), ok in zip(got, correct):
        by_age[(asked[q.id][1] - q.date).days].append(ok)
    lo, hi = bootstrap_ci(correct, seed=int(cfg.get("seed", 0))) if n else (0.0, 0.0)
    per_day = [{k: v for k, v in c.items()} for c in costs]
    return {
        "kind": "okgen-stream-results", "setting": setting, "config": cfg, "n": n, "asked": len(asked),
        "correct": sum(correct), "accuracy": round(sum(correct) / n, 6) if n else 0.0, "ci95": [lo, hi],
        "errors": sum(p.error is not None for _, p in got), "truncated": sum(p.truncated for _, p in got),
        "by_age": {str(a): {"n": len(v), "accuracy": round(sum(v) / len(v), 6)} for a, v in sorted(by_age.items())},
        "dated": answer_rates(qs, preds, pool),
        "cost_per_day": per_day,
        "cost_mean": mean_costs(per_day),
    }


def mean_costs(rows: list[dict[str, Any]]) -> dict[str, float]:
    """Mean seconds and prompt tokens per day, and the memory's size after the last day."""
    if not rows:
        return {}
    keys = ("observe_s", "retrieve_s", "score_s", "prompt_tokens")
    out = {k: round(sum(r.get(k, 0) for r in rows) / len(rows), 6) for k in keys}
    last = rows[-1].get("memory") or {}
    out["memory_items"] = last.get("items", 0)
    out["memory_chars"] = last.get("chars", 0)
    out["memory_tokens"] = last.get("tokens", 0)
    return out


def compare(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per setting: accuracy, CI, memory gain over ``none``, stale/future rates, gold in context, cost."""
    base = next((r["accuracy"] for r in runs if r["setting"] in ("none", "mem:none")), None)
    rows = []
    for r in runs:
        d = r["dated"]
        c = r.get("cost_mean", {})
        rows.append({"setting": r["setting"], "n": r["n"], "accuracy": r["accuracy"], "ci95": r["ci95"],
                     "gain_over_none": None if base is None else round(r["accuracy"] - base, 6),
                     "stale_answer_rate": d["stale_answer_rate"], "future_answer_rate": d["future_answer_rate"],
                     "with_stale_choice": d.get("with_stale_choice"), "with_future_choice": d.get("with_future_choice"),
                     "gold_in_context": d["gold_in_context"], "future_context": d["future_context"],
                     "prompt_tokens_per_day": c.get("prompt_tokens"), "seconds_per_day":
                     round(sum(c.get(k, 0.0) for k in ("observe_s", "retrieve_s", "score_s")), 3) if c else None,
                     "memory_chars": c.get("memory_chars"), "memory_tokens": c.get("memory_tokens"),
                     "by_age": r.get("by_age", {}), **{k: round(r[k], 6) for k in OAKS if k in r}})
    return rows


def markdown(rows: list[dict[str, Any]]) -> str:
    """The comparison as a Markdown table (accuracy and rates in %; on streams OAKS's AL, DS, PM
    as fractions after the accuracy, which is then OAKS's Acc)."""
    def pct(x: Any) -> str:
        return "–" if x is None else f"{100 * x:.1f}"

    def rate(r: dict[str, Any], kind: str) -> str:  # with the questions it rests on: 100.0 of 1 is not of 40
        n = r.get(f"with_{kind}_choice")
        return pct(r[f"{kind}_answer_rate"]) + ("" if n is None else f" (of {n})")

    oaks = any("al" in r for r in rows)
    extra = " AL | DS | PM |" if oaks else ""
    head = (f"| setting | n | accuracy [95% CI] |{extra} gain over none | stale answers | future answers | gold in context "
            "| future context | prompt tokens/day | s/day | memory chars |\n" + "| --- " * (14 if oaks else 11) + "|\n")
    lines = []
    for r in rows:
        g = r["gain_over_none"]
        cols = "".join(f" {r[k]:.3f} |" for k in ("al", "ds", "pm")) if oaks else ""
        lines.append(f"| {r['setting']} | {r['n']} | {pct(r['accuracy'])} [{pct(r['ci95'][0])}, {pct(r['ci95'][1])}] |{cols}"
                     f" {'–' if g is None else f'{100 * g:+.1f}'} | {rate(r, 'stale')} "
                     f"| {rate(r, 'future')} | {pct(r['gold_in_context'])} | {pct(r['future_context'])} "
                     f"| {r['prompt_tokens_per_day'] if r['prompt_tokens_per_day'] is not None else '–'} "
                     f"| {r['seconds_per_day'] if r['seconds_per_day'] is not None else '–'} "
                     f"| {r['memory_chars'] if r['memory_chars'] is not None else '–'} |")
    return head + "\n".join(lines) + "\n"


def by_age_markdown(rows: list[dict[str, Any]]) -> str:
    """Retention: accuracy (%) and n by the age of the needed fact, one row per setting, one
    column per age in days (what ``--ask end`` measures)."""
    ages = sorted({a for r in rows for a in r.get("by_age", {})}, key=lambda a: (not a.isdigit(), int(a) if a.isdigit() else 0, a))
    if not ages:
        return ""
    head = ("\n## Accuracy by age of the needed fact (days between the question's article and when it was asked)\n\n"
            "| setting | " + " | ".join(f"{a} d" if a.isdigit() else a for a in ages) + " |\n"
            + "| --- " * (len(ages) + 1) + "|\n")
    lines = []
    for r in rows:
        cells = [(f"{100 * c['accuracy']:.1f} (n={c['n']})" if (c := r.get("by_age", {}).get(a)) else "–") for a in ages]
        lines.append(f"| {r['setting']} | " + " | ".join(cells) + " |")
    return head + "\n".join(lines) + "\n"
