"""Retriever comparison: hit rate@k and MRR@k per retriever x window x k.

The query is each question's text (optionally followed by its choices); the gold document is
the question's article. Hit rate@k is the share of questions whose article is in the top k;
MRR@k averages 1/rank of the article, counting 0 past rank k. Each hit rate carries the Wilson
95 % interval of its count (a day's snapshot holds tens of questions, not thousands, so two
retrievers a few points apart are often within each other's interval). A query with no indexable
token counts as a miss. A retriever or window that fails (empty window, missing extra, bad
spec) is recorded in its cell and the rest of the table is still computed.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from okgen import __version__
from okgen.errors import ConfigError, MissingExtraError, OkgenError
from okgen.progress import bar
from okgen.retrieval.windows import WindowCoverage, plural, question_query, window_coverage
from okgen.schema import utcnow
from okgen.settings import Workspace

log = logging.getLogger(__name__)


@dataclass
class Cell:
    """One retriever on one window: counts for every k, or the error that stopped it."""

    retriever: str
    window: int
    spec_hash: str | None = None
    n: int = 0
    num_articles: int | None = None
    num_units: int | None = None
    hits: dict[int, int] = field(default_factory=dict)
    mrr: dict[int, float] = field(default_factory=dict)
    no_result_queries: int = 0
    reused: bool = False
    encoded_units: int | None = None
    reused_vectors: int | None = None
    encoded_queries: int | None = None
    reused_queries: int | None = None
    build_seconds: float | None = None
    search_seconds: float | None = None
    error: str | None = None
    ranks: dict[str, int | None] = field(default_factory=dict)
    """Question id -> 1-based rank of its article in the top max(k) (None: not there), for paired
    comparisons of two retrievers on the same questions."""

    def passages_text(self) -> str:
        """What the cell did with passage vectors: encoded and reused, or the whole index reused
        (a reused index encodes nothing, but its vectors are what the scores come from)."""
        if self.reused and not self.encoded_units:
            return f"existing index reused ({plural(self.reused_vectors or 0, 'passage vector')})"
        return f"{plural(self.encoded_units or 0, 'passage')} encoded, {self.reused_vectors} reused"


def parse_int_list(text: str | Sequence[int], what: str) -> list[int]:
    """``"1,5,10"`` -> ``[1, 5, 10]`` (sorted, unique, each >= 1).

    Raises:
        ConfigError: not whole numbers >= 1.
    """
    items = text.split(",") if isinstance(text, str) else list(text)
    out = set()
    for item in items:
        try:
            v = int(str(item).strip())
        except ValueError:
            raise ConfigError(f"{what} must be whole numbers >= 1 separated by commas, got {text!r}") from None
        if v < 1:
            raise ConfigError(f"{what} must be >= 1, got {v}")
        out.add(v)
    if not out:
        raise ConfigError(f"no {what} given")
    return sorted(out)


def gold_ranks(results, gold: Sequence[str]) -> list[int | None]:
    """1-based rank of each query's gold article in its hits (None when absent)."""
    out: list[int | None] = []
    for hits, g in zip(results, gold):
        out.append(next((h.rank for h in hits if h.doc_id == g), None))
    return out


def hit_interval(hits: int, n: int) -> tuple[float, float] | None:
    """Wilson 95 % interval of a hit rate ``hits / n`` (``None`` for no questions)."""
    from scipy import stats

    if not n:
        return None
    ci = stats.binomtest(int(hits), int(n)).proportion_ci(0.95, method="wilson")
    return (round(float(ci.low), 4), round(float(ci.high), 4))


def paired_test(a_only: int, b_only: int) -> float:
    """Two-sided exact McNemar p-value of two retrievers scored on the same questions: a binomial
    test of the questions only one of them finds (1.0 when they find the same ones)."""
    from scipy import stats

    n = a_only + b_only
    return 1.0 if n == 0 else float(stats.binomtest(a_only, n, 0.5).pvalue)


def score_cell(cell: Cell, ranks: Sequence[int | None], ks: Sequence[int]) -> None:
    """Fill a cell's hit counts and MRR@k from gold ranks."""
    n = len(ranks)
    cell.n = n
    for k in ks:
        inside = [r for r in ranks if r is not None and r <= k]
        cell.hits[k] = len(inside)
        cell.mrr[k] = sum(1.0 / r for r in inside) / n if n else 0.0


@dataclass
class RetrievalReport:
    """The comparison table with what it was computed on. See :func:`compare_retrievers`."""

    snapshot: str
    snapshot_signature: str
    date: str
    n_questions: int
    with_choices: bool
    retrievers: list[str]
    windows: list[int]
    ks: list[int]
    cells: list[Cell]
    coverage: dict[int, WindowCoverage] = field(default_factory=dict)
    """Per window, the days of news it actually holds (a store younger than the window gives fewer)."""
    created_at: str = field(default_factory=lambda: utcnow().isoformat())
    okgen_version: str = __version__

    def cell(self, retriever: str, window: int) -> Cell:
        """The cell of one retriever and window."""
        return next(c for c in self.cells if c.retriever == retriever and c.window == window)

    def rows(self) -> list[dict[str, Any]]:
        """One flat row per retriever x window x k (errors as rows without metrics)."""
        out = []
        for c in self.cells:
            cov = self.coverage.get(c.window)
            base = {"retriever": c.retriever, "rspec": c.spec_hash, "window": c.window,
                    "news_days": cov.news_days if cov else None, "n": c.n, "articles": c.num_articles}
            if c.error:
                out.append({**base, "k": None, "hits": None, "hit_rate": None, "hit_rate_ci95": None, "mrr": None,
                            "error": c.error})
                continue
            for k in self.ks:
                ci = hit_interval(c.hits[k], c.n)
                out.append({**base, "k": k, "hits": c.hits[k], "hit_rate": c.hits[k] / c.n if c.n else 0.0,
                            "hit_rate_ci95": list(ci) if ci else None, "mrr": c.mrr[k], "error": None})
        return out

    def paired(self) -> list[dict[str, Any]]:
        """Each pair of retrievers that both ran on a window, at every k: the questions only the
        first finds in its top k, only the second, both, and the exact McNemar p-value. Paired on
        the same questions, this tells two retrievers apart where their Wilson intervals overlap."""
        out = []
        for w in self.windows:
            ok = [c for c in self.cells if c.window == w and not c.error and c.ranks]
            for i, a in enumerate(ok):
                for b in ok[i + 1:]:
                    qids = [q for q in a.ranks if q in b.ranks]
                    for k in self.ks:
                        hit_a = {q for q in qids if (r := a.ranks[q]) is not None and r <= k}
                        hit_b = {q for q in qids if (r := b.ranks[q]) is not None and r <= k}
                        a_only, b_only = len(hit_a - hit_b), len(hit_b - hit_a)
                        out.append({"window": w, "k": k, "a": a.retriever, "b": b.retriever, "n": len(qids),
                                    "a_only": a_only, "b_only": b_only, "both": len(hit_a & hit_b),
                                    "p_value": round(paired_test(a_only, b_only), 4)})
        return out

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict: metadata, the flat rows, the paired comparisons and the cells (timings,
        unit counts, each question's gold rank)."""
        return {
            "kind": "okgen-retrieval-eval", "schema_version": 1, "snapshot": self.snapshot,
            "snapshot_signature": self.snapshot_signature, "date": self.date, "n_questions": self.n_questions,
            "query": "question+choices" if self.with_choices else "question", "retrievers": self.retrievers,
            "windows": self.windows, "coverage": [self.coverage[w].to_dict() for w in self.windows if w in self.coverage],
            "ks": self.ks, "created_at": self.created_at, "okgen_version": self.okgen_version,
            "rows": self.rows(), "paired": self.paired(), "cells": [asdict(c) for c in self.cells],
        }

    def to_markdown(self) -> str:
        """The OKBench-style table: rows retriever x k, columns hit rate and MRR per window."""
        head = ["retriever", "rspec", "k"]
        for w in self.windows:
            head += [f"{self._window_label(w)} hit", f"{self._window_label(w)} MRR"]
        lines = [
            f"### Retrieval: snapshot {self.date} ({self.snapshot}), {plural(self.n_questions, 'question')}",
            "",
            f"Query: {'question and choices' if self.with_choices else 'question text'}. Hit rate@k: gold "
            "article in the top k, with the Wilson 95 % interval of the count; MRR@k: mean 1/rank of the gold "
            "article (0 past k).",
            "",
            "| " + " | ".join(head) + " |",
            "|" + "|".join(["---"] * 3 + ["---:"] * (2 * len(self.windows))) + "|",
        ]
        short = False
        for r in self.retrievers:
            for k in self.ks:
                row = [r, next((c.spec_hash for c in self.cells if c.retriever == r and c.spec_hash), "") or "", str(k)]
                for w in self.windows:
                    c = self.cell(r, w)
                    if c.error:
                        row += ["error", "error"]
                        continue
                    mark = "†" if c.num_articles is not None and c.num_articles < k else ""
                    short = short or bool(mark)
                    ci = hit_interval(c.hits[k], c.n)
                    hit = f"{c.hits[k] / c.n:.3f}{mark} [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "-"
                    row += [hit, f"{c.mrr[k]:.3f}" if c.n else "-"]
                lines.append("| " + " | ".join(row) + " |")
        lines += ["", f"Articles per window: {'; '.join(self._window_news(w) for w in self.windows)}."]
        if short:
            lines.append("† the window holds fewer articles than k.")
        if any(c.short for c in self.coverage.values()):
            lines.append("‡ the stored news starts after the window's first day: its column is not a "
                         "full window.")
        pairs = self.paired()
        if pairs:
            lines += ["", "Paired on the same questions (exact McNemar test: questions only one retriever "
                      "finds in its top k):", "", "| window | k | A | B | only A | only B | both | p |",
                      "|---:|---:|---|---|---:|---:|---:|---:|"]
            lines += [f"| {self._window_label(p['window'])} | {p['k']} | {p['a']} | {p['b']} | {p['a_only']} | "
                      f"{p['b_only']} | {p['both']} | {p['p_value']:.3g} |" for p in pairs]
        errors = [c for c in self.cells if c.error]
        if errors:
            lines += ["", "Errors:"] + [f"- {c.retriever}, {c.window}-day: {c.error}" for c in errors]
        enc = [c for c in self.cells if c.encoded_units is not None]
        if enc:
            lines += ["", "Encodings (passages encoded, and reused from the store; queries encoded / reused):", ""]
            lines += [f"- {c.retriever}, {c.window}-day: {c.passages_text()}; "
                      f"queries {c.encoded_queries if c.encoded_queries is not None else '-'} / "
                      f"{c.reused_queries if c.reused_queries is not None else '-'}" for c in enc]
        no_tok = [c for c in self.cells if c.no_result_queries]
        if no_tok:
            lines += [""] + [f"- {c.retriever}, {c.window}-day: {c.no_result_queries} queries got no result "
                             "(no indexable token; counted as misses)" for c in no_tok]
        lines += ["", "Snapshot signature:", "", "```", self.snapshot_signature, "```", ""]
        return "\n".join(lines)

    def _window_label(self, w: int) -> str:
        """``10-day``, or ``10-day‡`` when the stored news starts after the window's first day."""
        cov = self.coverage.get(w)
        return f"{w}-day‡" if cov is not None and cov.short else f"{w}-day"

    def _window_news(self, w: int) -> str:
        """``5-day: 570 (2 days of news, 2025-04-10..2025-04-11)‡``: articles and the days they cover."""
        cov = self.coverage.get(w)
        if cov is None or not cov.news_days:
            n = next((c.num_articles for c in self.cells if c.window == w and c.num_articles is not None), None)
            return f"{w}-day: {n if n is not None else (cov.articles if cov else '?')}"
        return f"{self._window_label(w)}: {cov.articles} ({plural(cov.news_days, 'day')} of news, {cov.span()})"

    def plot(self, path: str | Path) -> Path:
        """Write a PNG: hit rate against k, one panel per window, one line per retriever."""
        from okgen.registry import require

        matplotlib = require("matplotlib", "plot", "the retrieval plot")
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(1, len(self.windows), figsize=(4.2 * len(self.windows), 3.6), sharey=True, squeeze=False)
        for ax, w in zip(axes[0], self.windows):
            for r in self.retrievers:
                c = self.cell(r, w)
                if c.error or not c.n:
                    continue
                ax.plot(self.ks, [c.hits[k] / c.n for k in self.ks], marker="o", label=r)
            cov = self.coverage.get(w)
            ax.set_title(f"{w}-day window" + (f" ({plural(cov.news_days, 'day')} of news)" if cov and cov.short else ""))
            ax.set_xlabel("k")
            ax.set_xticks(self.ks)
            ax.set_ylim(0, 1.02)
            ax.grid(alpha=0.3)
        axes[0][0].set_ylabel("hit rate@k")
        handles, labels = axes[0][0].get_legend_handles_labels()
        if handles:
            axes[0][-1].legend(handles, labels, loc="lower right")
        fig.suptitle(f"okgen retrieval, {self.date} ({plural(self.n_questions, 'question')})")
        fig.tight_layout()
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, dpi=120)
        plt.close(fig)
        return path

    def save(self, folder: str | Path, plot: bool = True) -> dict[str, Path]:
        """Write ``retrieval.json``, ``retrieval.md`` and (when matplotlib is there) ``retrieval.png``."""
        from okgen.files import atomic_write_text, pretty_json

        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        out = {"json": folder / "retrieval.json", "markdown": folder / "retrieval.md"}
        atomic_write_text(out["json"], pretty_json(self.to_dict()))
        atomic_write_text(out["markdown"], self.to_markdown())
        if plot:
            try:
                out["plot"] = self.plot(folder / "retrieval.png")
            except MissingExtraError as e:
                log.warning("no plot: %s", e)
        return out


def compare_retrievers(snapshot, workspace: Workspace, retrievers: list[str], windows: list[int], ks: list[int], *,
                       with_choices: bool = False, build: bool = True) -> RetrievalReport:
    """Score retrievers on a snapshot's questions for every window and k.

    Args:
        snapshot: the snapshot (questions and corpus).
        workspace: where indexes are stored and specs looked up.
        retrievers: spec names (``bm25``, ``dpr``, ``colbert``, or your own).
        windows: window lengths in days.
        ks: cut-offs.
        with_choices: append the choices to each query.
        build: build missing indexes (else a missing index is an error in its cell).

    Returns:
        The report; cells that failed carry their one-line error.

    Raises:
        ConfigError: no retriever, window or k given, or a bad value.
        OkgenError: the snapshot holds no question.
    """
    retrievers = list(dict.fromkeys(r.strip() for r in retrievers if r.strip()))
    if not retrievers:
        raise ConfigError("no retriever given")
    windows, ks = parse_int_list(windows, "windows"), parse_int_list(ks, "k")
    questions = snapshot.questions
    if not questions:
        raise OkgenError(f"snapshot {snapshot.name} holds no question")
    queries = [question_query(q, with_choices) for q in questions]
    dates = [q.date for q in questions]
    gold = [q.article_id for q in questions]
    ids = [q.id for q in questions]
    cells: list[Cell] = []
    coverage = window_coverage(snapshot, windows)
    pb = bar(total=len(retrievers) * len(windows), desc="retrieval-eval", unit="cell")
    for name in retrievers:
        fatal: str | None = None
        for w in windows:
            cell = Cell(retriever=name, window=w)
            cells.append(cell)
            if fatal:  # a missing extra or bad spec fails every window the same way
                cell.error = fatal
                pb.update(1)
                continue
            try:
                _run_cell(cell, snapshot, workspace, name, w, queries, dates, gold, ks, build, ids)
            except (MissingExtraError, ConfigError) as e:
                cell.error = str(e)
                if not (isinstance(e, ConfigError) and w > max(snapshot.manifest.windows)):
                    fatal = cell.error  # a window the snapshot lacks fails that window only
            except OkgenError as e:
                cell.error = str(e)
            except Exception as e:  # noqa: BLE001 - record, log, keep the table going
                log.debug("retrieval eval %s/%d failed", name, w, exc_info=True)
                cell.error = f"internal error: {type(e).__name__}: {e}"
            if cell.error:
                log.warning("%s, %d-day window: %s", name, w, cell.error)
            pb.update(1)
    pb.close()
    return RetrievalReport(
        snapshot=snapshot.name, snapshot_signature=snapshot.manifest.signature, date=str(snapshot.manifest.date),
        n_questions=len(questions), with_choices=with_choices, retrievers=retrievers, windows=windows, ks=ks, cells=cells,
        coverage=coverage,
    )


def _run_cell(cell: Cell, snapshot, workspace: Workspace, name: str, window: int, queries: list[str], dates,
              gold: list[str], ks: list[int], build: bool, ids: list[str]) -> None:
    from okgen.retrieval.index import open_index
    from okgen.retrieval.specs import load_spec

    spec = load_spec(name, workspace)
    cell.spec_hash = spec.hash
    t0 = time.perf_counter()
    idx = open_index(snapshot, name, window, workspace, build=build)
    cell.build_seconds = round(time.perf_counter() - t0, 3)
    cell.reused = idx.reused
    cell.num_articles, cell.num_units = idx.num_docs, idx.num_units
    if idx.encode_counts is not None:
        cell.encoded_units, cell.reused_vectors = idx.encode_counts.encoded, idx.encode_counts.reused
    elif idx.reused and idx.query_counts is not None:  # the whole folder was reused: all its vectors
        cell.encoded_units, cell.reused_vectors = 0, idx.num_units
    before = (idx.query_counts.encoded, idx.query_counts.reused) if idx.query_counts is not None else None
    t0 = time.perf_counter()
    results = idx.search(queries, max(ks), query_dates=dates)
    cell.search_seconds = round(time.perf_counter() - t0, 3)
    if before is not None:
        cell.encoded_queries = idx.query_counts.encoded - before[0]
        cell.reused_queries = idx.query_counts.reused - before[1]
    cell.no_result_queries = sum(1 for r in results if not r)
    ranks = gold_ranks(results, gold)
    score_cell(cell, ranks, ks)
    cell.ranks = dict(zip(ids, ranks))
