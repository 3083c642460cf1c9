"""The generation funnel: counts at every stage, tokens and cost, JSON-ready and printable.

Stages and how they add up (a test checks every equation)::

    articles.total     = articles.generated + sum(articles.failed) + articles.pending
    candidates         = checks.passed + sum(checks.rejected)          (first failed check)
    checks.passed      = validator.passed + sum(validator.rejected) + validator.errors
    validator.passed   = probes.passed + probes.dropped
    probes.passed      = dedup.kept + dedup.near_duplicate + dedup.near_duplicate_recent
    dedup.kept         = balance.kept + balance.outlet_balance + balance.answer_balance
    kept               = balance.kept

``*_failures`` tables count every failure (a candidate failing three checks counts three
times); ``rejected`` tables count each dropped candidate once, under its first failure.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Sequence
from typing import Any

from okgen.generate.checks import CHECKS, DEDUP
from okgen.generate.dayset import ANSWERS, BALANCE, RECENT
from okgen.generate.gates import GATES
from okgen.generate.probe import KNOWN
from okgen.generate.records import ArticleResult, Candidate, Usage
from okgen.generate.validator import ERROR as VALIDATOR_ERROR

FUNNEL_VERSION = 2
ORDER = (*CHECKS, *GATES)
DAY_LEVEL = (DEDUP, RECENT, BALANCE, ANSWERS)


def build_funnel(date: dt.date, total_articles: int, results: Sequence[ArticleResult],
                 pending: dict[str, int], survivors: Sequence[Candidate],
                 positions: dict[str, int], *, validator: bool, probes: int, stopped: str | None,
                 resumed: int, run_usage: Usage | None = None,
                 pending_errors: dict[str, str] | None = None) -> dict[str, Any]:
    """Assemble the funnel of a run.

    Args:
        date: the news date.
        total_articles: articles of the date.
        results: finished articles (this run and resumed ones).
        pending: articles not finished, by reason (transient error kind, ``budget``, ``stopped``).
        survivors: candidates that passed checks, validator and probes (before the day-level
            gates: near duplicates within the day and of recent snapshots, outlet balance).
        positions: kept questions per answer letter.
        validator: whether a validator ran.
        probes: number of probe models.
        stopped: why the run stopped early (``budget``, ``errors``), None when it did not.
        resumed: articles taken from an earlier run.
        run_usage: usage of this invocation only (the ``usage`` table covers all results).
        pending_errors: the latest message of each kind that left articles unfinished.
    """
    failed = Counter(r.error_kind or "unknown" for r in results if r.status != "ok")
    cands = [c for r in results for c in r.candidates]
    # Near duplicates and outlet balance act last, across the day, though their verdicts are checks'.
    dropped_by_check = [c for c in cands if c.rejected_stage == "check" and c.rejected_by not in DAY_LEVEL]
    check_rej = Counter(c.rejected_by for c in dropped_by_check)
    check_fail = Counter(v.name for c in cands for v in c.verdicts
                         if v.stage == "check" and not v.passed and v.name not in DAY_LEVEL)
    passed_checks = [c for c in cands if c.rejected_stage != "check" or c.rejected_by in DAY_LEVEL]
    val_rej = Counter(c.rejected_by for c in passed_checks if c.rejected_stage == "validator" and c.rejected_by != VALIDATOR_ERROR)
    val_err = sum(1 for c in passed_checks if c.rejected_by == VALIDATOR_ERROR)
    val_fail = Counter(v.name for c in passed_checks for v in c.verdicts if v.stage == "validator" and not v.passed)
    passed_val = [c for c in passed_checks if c.rejected_stage != "validator"]
    probe_correct = Counter(v.name for c in passed_val for v in c.verdicts
                            if v.stage == "probe" and v.name != KNOWN and not v.passed)
    usage: dict[str, Usage] = {}
    for r in results:
        for agent, u in r.usage.items():
            usage.setdefault(agent, Usage()).merge(u)
    total = Usage()
    for u in usage.values():
        total.merge(u)
    day = Counter(c.rejected_by for c in survivors if c.rejected_by in DAY_LEVEL)
    deduped = len(survivors) - day[DEDUP] - day[RECENT]
    kept = deduped - day[BALANCE] - day[ANSWERS]
    by_outlet = Counter(v.reason.split(" already has ")[0] for c in survivors for v in c.verdicts
                        if v.name == BALANCE and not v.passed and v.reason)
    return {
        "version": FUNNEL_VERSION,
        "date": date.isoformat(),
        "articles": {
            "total": total_articles,
            "generated": sum(1 for r in results if r.status == "ok"),
            "failed": dict(sorted(failed.items())),
            "pending": sum(pending.values()),
            "pending_by_reason": dict(sorted(pending.items())),
            "resumed": resumed,
            "short": sum(1 for r in results if r.short),
            "truncated": sum(1 for r in results if r.truncated),
            # One message per kind of failure, so an error names its cause ("HTTP 401: Incorrect API key").
            "errors": {**{r.error_kind or "unknown": (r.error or "")[:300] for r in results if r.status != "ok"},
                       **{k: v[:300] for k, v in (pending_errors or {}).items() if k in pending}},
        },
        "candidates": len(cands),
        "checks": {"passed": len(passed_checks), "rejected": _ordered(check_rej, ORDER)},
        "check_failures": _ordered(check_fail, ORDER),
        "validator": {
            "ran": validator,
            "passed": len(passed_val),
            "rejected": dict(sorted(val_rej.items())),
            "errors": val_err,
        },
        "validator_failures": dict(sorted(val_fail.items())),
        "probes": {
            "models": probes,
            "passed": len(survivors),
            "flagged": sum(1 for c in passed_val if KNOWN in c.flags),
            "dropped": sum(1 for c in passed_val if c.rejected_by == KNOWN),
            "correct_by_model": dict(sorted(probe_correct.items())),
        },
        "dedup": {"kept": deduped, "near_duplicate": day[DEDUP], "near_duplicate_recent": day[RECENT]},
        "balance": {"kept": kept, "outlet_balance": day[BALANCE], "by_outlet": dict(sorted(by_outlet.items())),
                    "answer_balance": day[ANSWERS]},
        "kept": kept,
        "answer_positions": dict(sorted(positions.items())),
        "usage": {
            "calls": total.calls, "cached_calls": total.cached, "retries": total.retries,
            "prompt_tokens": total.prompt_tokens, "completion_tokens": total.completion_tokens,
            "cost_usd": round(total.cost_usd, 6), "cached_cost_usd": round(total.cached_cost_usd, 6),
            "errors": dict(sorted(total.errors.items())),
            "by_agent": {k: {**v.model_dump(), "cost_usd": round(v.cost_usd, 6), "cached_cost_usd": round(v.cached_cost_usd, 6)}
                         for k, v in sorted(usage.items())},
            "this_run_calls": run_usage.calls if run_usage else 0,
            "this_run_cost_usd": round(run_usage.cost_usd, 6) if run_usage else 0.0,
            "this_run_cached_calls": run_usage.cached if run_usage else 0,
            "this_run_retries": run_usage.retries if run_usage else 0,
            # Calls this run sent that ended in an error, by kind: no reply (a server never reached),
            # or a reply cut by the token limit or off the schema, whose whole questions may be kept.
            "this_run_errors": ({k: v for k, v in sorted(run_usage.errors.items()) if k != "budget"}
                                if run_usage else {}),
        },
        "stopped": stopped,
        # What the servers said answered, by agent, over every finished article (resumed ones too).
        **({"served_models": {k: dict(sorted(v.served.items())) for k, v in sorted(usage.items()) if v.served}}
           if any(v.served for v in usage.values()) else {}),
    }


def _ordered(counts: Counter, order: Sequence[str]) -> dict[str, int]:
    out = {k: counts[k] for k in order if counts.get(k)}
    out.update({k: v for k, v in sorted(counts.items()) if k not in out})
    return out


def render_funnel(f: dict[str, Any], this_run: bool = True) -> str:
    """A readable, indented rendering of a funnel for the terminal; ``this_run`` False leaves out
    the line about the run that wrote it (a released snapshot's record: no run is going on)."""
    a = f["articles"]
    lines = [f"funnel for {f['date']}"]
    extra = []
    if a["resumed"]:
        extra.append(f"{a['resumed']} resumed")
    if a["failed"]:
        extra.append("failed " + _kv(a["failed"]))
    if a["pending"]:
        extra.append("pending " + _kv(a["pending_by_reason"]))
    if a["short"]:
        extra.append(f"{a['short']} short")
    if a["truncated"]:
        extra.append(f"{a['truncated']} truncated")
    lines.append(f"  articles      {a['total']:>6}   generated {a['generated']}" + (f" ({'; '.join(extra)})" if extra else ""))
    r = {k: v for k, v in (f.get("extractive_reasons") or {}).items() if k != "stem_made"}
    if f.get("extractive_reasons"):
        # The offline generator: question stems the parse's (sentence, answer) pairs gave, and the
        # commonest reasons a pair gave none (all of them: --json, extractive_reasons).
        top = dict(sorted(r.items(), key=lambda kv: (-kv[1], kv[0]))[:5])
        lines.append(f"  stems         {f['extractive_reasons'].get('stem_made', 0):>6}"
                     + (f"   most dropped: {_kv(top)}" if top else ""))
    lines.append(f"  candidates    {f['candidates']:>6}")
    c = f["checks"]
    # In the pipeline's order, also for a funnel read back from the store (its JSON keys sorted).
    lines.append(f"  after checks  {c['passed']:>6}"
                 + (f"   rejected {_kv(_ordered(Counter(c['rejected']), ORDER))}" if c["rejected"] else ""))
    v = f["validator"]
    if v["ran"]:
        rej = dict(v["rejected"])
        if v["errors"]:
            rej["validator_error"] = v["errors"]
        lines.append(f"  validated     {v['passed']:>6}" + (f"   rejected {_kv(rej)}" if rej else ""))
    p = f["probes"]
    if p["models"]:
        lines.append(f"  after probes  {p['passed']:>6}   flagged {p['flagged']}, dropped {p['dropped']}")
    d = f["dedup"]
    if d["near_duplicate"] or d.get("near_duplicate_recent"):
        lines.append(f"  deduplicated  {d['kept']:>6}   near_duplicate {d['near_duplicate']}"
                     + (f", near_duplicate_recent {d['near_duplicate_recent']}" if d.get("near_duplicate_recent") else ""))
    b = f.get("balance") or {}
    if b.get("outlet_balance") or b.get("answer_balance"):
        parts = [f"outlet_balance {b['outlet_balance']} ({_kv(b['by_outlet'])})"] if b.get("outlet_balance") else []
        parts += [f"answer_balance {b['answer_balance']}"] if b.get("answer_balance") else []
        lines.append(f"  balanced      {b['kept']:>6}   " + ", ".join(parts))
    lines.append(f"  kept          {f['kept']:>6}" + (f"   positions {_kv(f['answer_positions'])}" if f["kept"] else ""))
    u = f["usage"]
    if u["calls"]:
        lines.append(f"  usage         {u['calls']} calls ({u['cached_calls']} cached, {u['retries']} retries), "
                     f"{u['prompt_tokens']:,} prompt + {u['completion_tokens']:,} completion tokens, ${u['cost_usd']:.4f}"
                     + (f" (+${u['cached_cost_usd']:.4f} of cached replies, at current prices)"
                        if u.get("cached_cost_usd") else ""))
    if this_run and (u["calls"] or u.get("this_run_calls")) and u.get("this_run_calls", 0) != u["calls"]:
        # The usage line covers every stored result (earlier runs included); this one's own calls,
        # also those spent on articles it left unfinished, follow.
        failed = u.get("this_run_errors") or {}
        lines.append(f"  this run      {u['this_run_calls']} calls ({u.get('this_run_cached_calls', 0)} cached, "
                     f"{u.get('this_run_retries', 0)} retries"
                     + (f", {sum(failed.values())} failed: {_kv(failed)}" if failed else "")
                     + f"), ${u['this_run_cost_usd']:.4f}")
    if f.get("served_models"):  # what the servers said answered, where they said
        lines.append("  served by     " + "; ".join(f"{role} {', '.join(f'{m} ({n})' for m, n in models.items())}"
                                                   for role, models in f["served_models"].items()))
    if f.get("stopped"):
        lines.append(f"  stopped early: {f['stopped']}")
    return "\n".join(lines)


def _kv(d: dict[str, Any]) -> str:
    return ", ".join(f"{k} {v}" for k, v in d.items())


def cause(counts: dict[str, int], articles: dict[str, Any], form: str) -> str:
    """``form`` filled with the commonest kind of ``counts`` (a funnel's ``pending_by_reason`` or
    ``failed``) and its last server message from ``articles["errors"]`` ("" without one)."""
    kind = max(counts, key=counts.get, default=None)
    msg = articles.get("errors", {}).get(kind) if kind else None
    return form.format(kind=kind, msg=msg) if msg else ""
