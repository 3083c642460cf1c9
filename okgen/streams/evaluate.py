"""Score a model on a stream: every question at every interval, with the text of that interval
and before only.

Settings (what the model reads at interval t):

* ``none``: the question alone;
* ``full``: every document of intervals 0..t, newest kept when the context budget is short;
* ``window:W``: the documents of intervals t-W+1..t;
* ``retrieval:R``: the R best BM25 passages among the documents of intervals 0..t (an index per
  interval, so neither the ranking nor its statistics see a later text).

The model answers by the letter of an option (log-likelihood of the letters, one pass). The run
folder (``data/runs/streams/<stream>/<model>/<setting>/``) holds ``predictions.jsonl`` (one row
per question and interval, appended as each question is scored: a killed run resumes where it
stopped), ``run.json`` (what the run is) and ``results.json`` (the stream signature, the model, the metrics of
:mod:`okgen.streams.metrics` under OAKS's short names, the transition table, the accuracy per
interval).
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from okgen.errors import ConfigError
from okgen.eval.rundir import PREDICTIONS, RESULTS, open_run_dir, write_run_file
from okgen.eval.templates import ANSWER_PREFIX, LETTERS
from okgen.files import atomic_write_text
from okgen.hashing import sha256_text
from okgen.models.base import Prompt
from okgen.settings import Workspace
from okgen.streams.metrics import score
from okgen.streams.store import Stream, open_stream, resolve_stream

log = logging.getLogger(__name__)
INSTRUCTION = ("The following is a multiple-choice question about the news as of {when}. Answer with the letter of "
               "the choice that is correct as of {when}; choose \"not known yet\" if the news so far does not say.")
TEMPLATE = "stream-mc-v1"
TEMPLATE_HASH = sha256_text(INSTRUCTION + "|" + ANSWER_PREFIX)[:12]
PASSAGE_CHARS = 1500


@dataclass(frozen=True)
class Setting:
    """A parsed ``--setting``: kind ``none``, ``full``, ``window`` or ``retrieval`` and its number."""

    kind: str
    n: int = 0

    @property
    def name(self) -> str:
        """``none``, ``full``, ``window-3``, ``retrieval-5`` (a folder name)."""
        return self.kind if self.kind in ("none", "full") else f"{self.kind}-{self.n}"

    @classmethod
    def parse(cls, text: str) -> Setting:
        """Parse ``none``, ``full``, ``window:W`` or ``retrieval:R``.

        Raises:
            ConfigError: anything else.
        """
        t = text.strip().lower()
        if t in ("none", "full"):
            return cls(t)
        m = re.fullmatch(r"(window|retrieval):(\d+)", t)
        if not m or int(m.group(2)) < 1:
            raise ConfigError(f"bad stream setting {text!r}: use none, full, window:W or retrieval:R (W, R >= 1)")
        return cls(m.group(1), int(m.group(2)))


def contexts(stream: Stream, setting: Setting, t: int, question: str, budget_chars: int) -> list[str]:
    """The passages a model may read at interval ``t`` (oldest first): never a later document."""
    if setting.kind == "none":
        return []
    docs = [d for d in stream.documents if d.interval <= t]
    if setting.kind == "window":
        docs = [d for d in docs if d.interval > t - setting.n]
    if setting.kind == "retrieval":
        docs = _bm25(docs, question, setting.n)
    label = {iv.index: iv.label for iv in stream.manifest.intervals}
    out: list[str] = []
    used = 0
    for d in reversed(docs):  # newest first, so the budget keeps the latest news
        head = f"[{label[d.interval]}{', ' + d.outlet if d.outlet else ''}] {d.title or ''}".strip()
        text = f"{head}\n{d.text[:PASSAGE_CHARS]}"
        if used + len(text) > budget_chars:
            if not out:
                out.append(text[:budget_chars])
            break
        out.append(text)
        used += len(text)
    return list(reversed(out))


def _bm25(docs: Sequence[Any], query: str, k: int) -> list[Any]:
    import bm25s

    from okgen.retrieval.bm25 import Tokenizer

    if not docs:
        return []
    tok = Tokenizer()
    vocab: dict[str, int] = {}
    ids = tok.ids([f"{d.title or ''} {d.text}" for d in docs], vocab)
    model = bm25s.BM25()
    model.index((ids, vocab), show_progress=False)
    q = [vocab[w] for w in tok.tokenize_one(query) if w in vocab]
    if not q:
        return []
    scores = model.get_scores_from_ids(q)
    top = sorted(range(len(docs)), key=lambda i: (-scores[i], i))[:k]
    top = [i for i in top if scores[i] > 0]
    return [docs[i] for i in sorted(top, key=lambda i: (docs[i].interval, i))]


def render(question: str, choices: Sequence[str], when: str, passages: Sequence[str]) -> Prompt:
    """The prompt of one question at one interval."""
    ctx = ("News so far:\n" + "\n\n".join(passages) + "\n\n") if passages else ""
    body = (ctx + INSTRUCTION.format(when=when) + "\n\nQuestion: " + question + "\n"
            + "\n".join(f"{LETTERS[i]}. {c}" for i, c in enumerate(choices)))
    return Prompt(messages=({"role": "user", "content": body},), answer_prefix=ANSWER_PREFIX)


def run_stream_eval(ws: Workspace, ref: str, model: str, setting: str, *, limit: int | None = None,
                    budget_chars: int = 6000, out: Path | None = None, backend: Any = None,
                    overwrite: bool = False) -> dict[str, Any]:
    """Score ``model`` on stream ``ref`` in one setting; write the run folder; return results.

    The run resumes: ``run.json`` says what the run is, ``predictions.jsonl`` gets each
    question's intervals as soon as they are scored (flushed and fsynced), and a rerun of the
    same command scores only the (question, interval) pairs without a prediction (or whose
    prediction is a backend error), so a killed run loses at most the question in flight and
    every pair is scored once. ``overwrite`` starts the run again.

    Raises:
        ConfigError: a bad setting or model spec; a run folder holding another run.
        IntegrityError: the stream fails verification.
    """
    from okgen.errors import IntegrityError
    from okgen.eval.runner import _remove_if_empty
    from okgen.models.registry import load_backend
    from okgen.streams.store import verify_stream

    st = Setting.parse(setting)
    folder = resolve_stream(ref, ws)
    problems = verify_stream(folder, ws, series=False)
    if problems:
        raise IntegrityError(f"stream {folder.name}: {problems[0]}")
    stream = open_stream(folder)
    questions = stream.questions[:limit] if limit else stream.questions
    spec_name = model if isinstance(model, str) else str(model)
    run = out or ws.data_dir / "runs" / "streams" / stream.manifest.name / _slug(spec_name) / st.name
    cfg = {"kind": "okgen-stream-eval", "stream": stream.manifest.name, "stream_hash": stream.manifest.content_hash,
           "model": spec_name, "setting": st.name, "template": TEMPLATE, "template_hash": TEMPLATE_HASH,
           "budget_chars": budget_chars, "limit": limit}
    created = [d for d in (run, *run.parents) if not d.exists()]
    try:
        stored = open_run_dir(run, cfg, overwrite)
        be = backend or load_backend(model, ws)
        if not stored:
            write_run_file(run, cfg, stream.manifest.signature, spec_name, be.info())
        done = read_rows(run / PREDICTIONS)
        intervals = stream.manifest.intervals
        keys = [(q.id, iv.index) for q in questions for iv in intervals]
        resumed = sum(1 for k in keys if k in done and done[k]["error"] is None)
        if resumed:
            log.info("%s: resuming, %d of %d (question, interval) pairs already scored", run.name, resumed, len(keys))
        scored_now = _score_pending(stream, questions, st, be, budget_chars, run / PREDICTIONS, done)
    except BaseException:
        _remove_if_empty(run, created)
        raise
    rows = [done[k] for k in keys]
    items = [([r["gold"] for r in rows[i:i + len(intervals)]], [r["pred"] for r in rows[i:i + len(intervals)]])
             for i in range(0, len(rows), len(intervals))]
    sc = score(items)
    errors = sum(1 for r in rows if r["error"] is not None)
    if errors:
        log.warning("%s: %d of %d answers failed and count as wrong (rerun the same command to retry them)",
                    run.name, errors, len(rows))
    results = {"kind": "okgen-stream-eval", "stream": stream.manifest.name, "signature": stream.manifest.signature,
               "model": spec_name, "setting": setting, "template": TEMPLATE, "template_hash": TEMPLATE_HASH,
               "budget_chars": budget_chars, "limit": limit,
               "intervals": [iv.label for iv in intervals], "resumed": resumed, "scored_now": scored_now,
               "errors": errors, "phase_boundaries": _boundaries(stream, questions), **sc.to_dict()}
    atomic_write_text(run / RESULTS, json.dumps(results, indent=2) + "\n")
    results["path"] = str(run)
    return results


def _score_pending(stream: Stream, questions: Sequence[Any], st: Setting, be: Any, budget_chars: int, path: Path,
                   done: dict[tuple[str, int], dict[str, Any]]) -> int:
    """Score the (question, interval) pairs of ``questions`` not in ``done`` (or errors), one
    question's pairs per backend call, appending each question's rows to ``path`` at once."""
    n = 0
    with open(path, "a", encoding="utf-8") as f:
        for q in questions:
            todo = [iv for iv in stream.manifest.intervals
                    if (r := done.get((q.id, iv.index))) is None or r["error"] is not None]
            if not todo:
                continue
            prompts = []
            for iv in todo:
                passages = contexts(stream, st, iv.index, q.question, budget_chars)
                p = render(q.question, q.choices, iv.label, passages)
                while passages and be.max_length and be.prompt_tokens(p) > be.max_length - 4:
                    passages = passages[1:]  # drop the oldest until it fits
                    p = render(q.question, q.choices, iv.label, passages)
                prompts.append(p)
            scored = be.letter_logprobs(prompts, [list(LETTERS[:len(q.choices)])] * len(prompts))
            for iv, s in zip(todo, scored):
                pred = None if s.error or not s.scores else max(range(len(s.scores)), key=lambda i: (s.scores[i], -i))
                row = {"question_id": q.id, "interval": iv.index, "label": iv.label, "gold": q.answers[iv.index],
                       "pred": pred, "correct": pred == q.answers[iv.index], "error": s.error}
                f.write(json.dumps(row) + "\n")
                done[(q.id, iv.index)] = row
                n += 1
            f.flush()
            os.fsync(f.fileno())
    return n


def read_rows(path: Path) -> dict[tuple[str, int], dict[str, Any]]:
    """The prediction rows of a stream run by (question id, interval); the last row of a pair
    wins. A torn last line (a run killed mid-write) is cut off the file.

    Raises:
        OkgenError: a corrupted line that is not the last.
    """
    from okgen.errors import OkgenError

    if not path.is_file():
        return {}
    lines = path.read_bytes().split(b"\n")
    out: dict[tuple[str, int], dict[str, Any]] = {}
    good = 0
    for i, line in enumerate(lines):
        if not line.strip():
            good += len(line) + (1 if i < len(lines) - 1 else 0)
            continue
        try:
            row = json.loads(line)
            key = (str(row["question_id"]), int(row["interval"]))
            if not {"gold", "pred"} <= set(row):
                raise KeyError("gold")
        except (json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError, ValueError) as e:
            if not any(x.strip() for x in lines[i + 1:]):
                log.warning("%s: dropping a torn last line (the run was interrupted)", path.name)
                with open(path, "r+b") as f:
                    f.truncate(good)
                break
            raise OkgenError(f"{path}:{i + 1}: corrupted prediction line ({type(e).__name__})") from None
        row.setdefault("error", None)
        out[key] = row
        good += len(line) + 1
    return out


def _boundaries(stream: Stream, questions: Sequence[Any]) -> list[int]:
    """Intervals where at least one question's gold answer changes (for the plot)."""
    return sorted({t for q in questions for t in range(1, len(q.answers)) if q.answers[t] != q.answers[t - 1]})


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_")[:120] or "model"
