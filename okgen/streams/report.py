"""Report tables and the accuracy-by-interval plot of stream runs."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from okgen.streams.metrics import GOLD_CHANGES, GOLD_STAYS


def metrics_rows(results: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per run: model, setting, questions, Acc, AL, DS, PM."""
    return [{"model": r["model"], "setting": r["setting"], "n": r["n"],
             **{k: f"{r[k]:.3f}" for k in ("acc", "al", "ds", "pm")}} for r in results]


def transition_rows(results: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per run: the eight transition classes as rates within their gold scenario (count)."""
    rows = []
    for r in results:
        row: dict[str, Any] = {"setting": r["setting"]}
        for c in (*GOLD_CHANGES, *GOLD_STAYS):
            rate = r["rates"].get(c)
            row[c] = "-" if rate is None else f"{rate:.2f} ({r['transitions'].get(c, 0)})"
        rows.append(row)
    return rows


def changes_rows(results: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per run and number of answer changes: questions and Acc/AL/DS/PM of that subset."""
    return [{"setting": r["setting"], "changes": k, "n": v["n"], **{m: f"{v[m]:.3f}" for m in ("acc", "al", "ds", "pm")}}
            for r in results for k, v in r["by_changes"].items()]


def dated_rows(results: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per run: stale- and future-answer rates (over the (question, interval) pairs that
    have such an option), gold evidence in context and future context, with the pair counts."""
    def pct(x: Any) -> str:
        return "-" if x is None else f"{x:.3f}"

    rows = []
    for r in results:
        d = r.get("dated") or {}
        rows.append({"setting": r["setting"], "stale answers": f"{pct(d.get('stale_answer_rate'))} ({d.get('with_stale_choice', 0)})",
                     "future answers": f"{pct(d.get('future_answer_rate'))} ({d.get('with_future_choice', 0)})",
                     "gold in context": f"{pct(d.get('gold_in_context'))} ({d.get('with_gold_evidence', 0)})",
                     "future context": pct(d.get("future_context"))})
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    """Rows of one shape as a Markdown table (``(none)`` for no rows)."""
    if not rows:
        return "(none)\n"
    cols = list(rows[0])
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(str(r[c]) for c in cols) + " |" for r in rows]
    return "\n".join(lines) + "\n"


COMPARABLE = ("signature", "model", "limit", "budget_chars", "template_hash", "answers_by")
"""What two stream runs share to stand side by side in one report: the stream, the model, the
questions scored (``--limit``), the context budget, the prompt template, and what made the
answers beyond the model's name (the random baseline's draw, the chat template:
:func:`okgen.models.base.answers_by`)."""


def with_earlier_settings(results: Sequence[dict[str, Any]], parent: Path,
                          left_out: list[str] | None = None) -> list[dict[str, Any]]:
    """``results`` and, after them, the finished runs of other settings beside them in ``parent``
    (the model's folder of the stream) with the same :data:`COMPARABLE` fields, so the report
    covers every setting run so far, not only the last command's. A run of another ``--limit``,
    ``--context-chars`` or template is not put beside them (2 questions' accuracy next to 9's
    read as a better setting); its setting goes to ``left_out``."""
    import json

    have = {r["setting"] for r in results}
    out = list(results)
    for f in sorted(parent.glob("*/results.json")):
        try:
            r = json.loads(f.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if not (isinstance(r, dict) and r.get("kind") == "okgen-stream-eval" and r.get("setting") not in have
                and r.get("signature") == results[0]["signature"] and r.get("model") == results[0]["model"]):
            continue
        if any(r.get(k) != results[0].get(k) for k in COMPARABLE):
            if left_out is not None:
                left_out.append(str(r.get("setting")))
            continue
        have.add(r["setting"])
        out.append({**r, "path": str(f.parent)})
    return out


def markdown(results: Sequence[dict[str, Any]]) -> str:
    """The three tables as Markdown."""
    head = f"# Stream {results[0]['stream']}\n\n`{results[0]['signature']}`\n\n" if results else ""
    return (head + "## Acc, AL, DS, PM (per question, summing to 1)\n\n" + table(metrics_rows(results))
            + "\n## Transition classes (rate within the gold scenario, count)\n\n" + table(transition_rows(results))
            + "\n## By number of answer changes\n\n" + table(changes_rows(results))
            + "\n## Stale and future answers, gold evidence (rate (pairs))\n\n" + table(dated_rows(results)))


def plot_accuracy(results: Sequence[dict[str, Any]], path: Path) -> Path:
    """Accuracy by interval, one line per run, the phase boundaries as dotted vertical lines."""
    from okgen.eval.plots import LINESTYLES, MARKERS, OKABE_ITO, _plt

    plt = _plt()
    labels = results[0]["intervals"]
    fig, ax = plt.subplots(figsize=(max(5.0, 0.7 * len(labels) + 2), 3.6))
    for b in results[0].get("phase_boundaries", []):
        ax.axvline(b - 0.5, color="0.6", linestyle=":", linewidth=1)
    for i, r in enumerate(results):
        ax.plot(range(len(labels)), r["acc_by_interval"], color=OKABE_ITO[i % 8], marker=MARKERS[i % 8],
                linestyle=LINESTYLES[i % 4], label=f"{r['setting']} (Acc {r['acc']:.2f})")
    ax.set_xticks(range(len(labels)), labels, rotation=30, ha="right", fontsize=8)
    ax.set_ylim(-0.02, 1.02)
    ax.set_ylabel("accuracy")
    model = results[0]["model"].rstrip("/").rsplit("/", 1)[-1]  # a local folder's name, not its whole path
    ax.set_title(f"{results[0]['stream']}: {model}", fontsize=9)
    ax.plot([], [], color="0.6", linestyle=":", label="a gold answer changes")
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
