"""Score a model on a stream: every question at every interval, with the text of that interval
and before only.

Settings (what the model reads at interval t):

* ``none``: the question alone;
* ``full``: every document of intervals 0..t, newest kept when the context budget is short;
* ``window:W``: the documents of intervals t-W+1..t;
* ``retrieval:R``: the R best BM25 passages among the documents of intervals 0..t (an index per
  interval, so neither the ranking nor its statistics see a later text);
* ``ctx:closest`` / ``ctx:latest`` / ``ctx:cumulative``: the dated contexts of
  :mod:`okgen.streams.dated` (``ctx:latest`` alone may give a later document: future context,
  recorded in each row's ``future_context``).

Each prediction row records the ids of the documents the model read (``context``), whether one
was after t (``future_context``) and whether the gold evidence was among them
(``gold_in_context``); ``results.json`` adds the stale/future-answer rates overall and per
interval (``dated``) and accuracy by the age of the needed fact (``by_age``).

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
from okgen.memory.dated import DATED_SETTINGS
from okgen.models.base import Prompt, answers_by, answers_differ
from okgen.settings import Workspace
from okgen.streams.dated import StreamView, by_age, rates
from okgen.streams.metrics import score
from okgen.streams.records import StreamDocument, StreamQuestion
from okgen.streams.store import Stream

log = logging.getLogger(__name__)
INSTRUCTION = ("The following is a multiple-choice question about the news as of {when}. Answer with the letter of "
               "the choice that is correct as of {when}; choose \"not known yet\" if the news so far does not say.")
TEMPLATE = "stream-mc-v1"
TEMPLATE_HASH = sha256_text(INSTRUCTION + "|" + ANSWER_PREFIX)[:12]
PASSAGE_CHARS = 1500


@dataclass(frozen=True)
class Setting:
    """A parsed ``--setting``: kind ``none``, ``full``, ``window``, ``retrieval`` or ``ctx`` and its number
    (or, for ``ctx``, which dated context)."""

    kind: str
    n: int = 0
    which: str = ""

    @property
    def name(self) -> str:
        """``none``, ``full``, ``window-3``, ``retrieval-5``, ``ctx-latest`` (a folder name)."""
        if self.kind == "ctx":
            return f"ctx-{self.which}"
        return self.kind if self.kind in ("none", "full") else f"{self.kind}-{self.n}"

    @property
    def text(self) -> str:
        """The setting as given (``ctx:latest``)."""
        return f"ctx:{self.which}" if self.kind == "ctx" else self.name.replace("-", ":")

    @classmethod
    def parse(cls, text: str) -> Setting:
        """Parse ``none``, ``full``, ``window:W``, ``retrieval:R`` or ``ctx:closest|latest|cumulative``.

        Raises:
            ConfigError: anything else.
        """
        t = text.strip().lower()
        if t in ("none", "full"):
            return cls(t)
        if t in DATED_SETTINGS:
            return cls("ctx", which=t.split(":", 1)[1])
        m = re.fullmatch(r"(window|retrieval):(\d+)", t)
        if not m or int(m.group(2)) < 1:
            raise ConfigError(f"bad stream setting {text!r}: use none, full, window:W, retrieval:R (W, R >= 1), "
                              "ctx:closest, ctx:latest or ctx:cumulative")
        return cls(m.group(1), int(m.group(2)))


def select(stream: Stream, setting: Setting, t: int, question: str | StreamQuestion,
           view: StreamView | None = None) -> list[StreamDocument]:
    """The documents a setting gives at interval ``t``, oldest first (``retrieval:R``: best
    first): never a later one, except ``ctx:latest``'s newest document about the entity (future
    context, recorded as such)."""
    if setting.kind == "none":
        return []
    if setting.kind == "ctx":
        if not isinstance(question, StreamQuestion):
            raise TypeError("dated settings need the StreamQuestion, not its text")
        return (view or StreamView(stream)).context(setting.text, question, t)
    text = question.question if isinstance(question, StreamQuestion) else question
    docs = [d for d in stream.documents if d.interval <= t]
    if setting.kind == "window":
        docs = [d for d in docs if d.interval > t - setting.n]
    if setting.kind == "retrieval":
        docs = _bm25(docs, text, setting.n)
    return docs


def passage_text(label: str, outlet: str | None, title: str | None, text: str) -> str:
    """How one document or memory passage is shown: ``[label, outlet] title`` then its first
    :data:`PASSAGE_CHARS` characters."""
    head = f"[{label}{', ' + outlet if outlet else ''}] {title or ''}".strip()
    return f"{head}\n{text[:PASSAGE_CHARS]}"


def fit_budget(texts: Sequence[str], budget_chars: int, keep: str = "newest") -> list[int]:
    """Indices of the texts that fit ``budget_chars``, in their order: ``newest`` keeps the last
    ones (drop-oldest, for chronological contexts), ``first`` the first ones (ranked contexts,
    the least relevant cut). A first text longer than the budget is kept, cut to it."""
    order = list(range(len(texts)))
    if keep == "newest":
        order.reverse()
    out: list[int] = []
    used = 0
    for i in order:
        if used + len(texts[i]) > budget_chars:
            if not out:
                out.append(i)
            break
        out.append(i)
        used += len(texts[i])
    return sorted(out)


def contexts(stream: Stream, setting: Setting, t: int, question: str | StreamQuestion, budget_chars: int,
             view: StreamView | None = None) -> list[str]:
    """The passages a model may read at interval ``t`` (oldest first): never a later document,
    except ``ctx:latest``'s (see :func:`select`)."""
    chosen = select(stream, setting, t, question, view)
    return [text for _, text in _shown(stream, chosen, budget_chars, ranked=setting.kind == "retrieval")]


def _shown(stream: Stream, docs: Sequence[StreamDocument], budget_chars: int,
           ranked: bool = False) -> list[tuple[StreamDocument, str]]:
    """The documents that fit the budget with their passage texts, oldest first. Chronological
    contexts keep the newest; ``ranked`` ones (``docs`` best first) keep the best-ranked."""
    label = {iv.index: iv.label for iv in stream.manifest.intervals}
    texts = [passage_text(label[d.interval], d.outlet, d.title, d.text) for d in docs]
    kept = fit_budget(texts, budget_chars, "first" if ranked else "newest")
    if ranked:
        kept = sorted(kept, key=lambda i: (docs[i].interval, i))
    return [(docs[i], texts[i][:budget_chars]) for i in kept]


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
    return [docs[i] for i in top if scores[i] > 0]  # best first: the budget keeps the best


def render(question: str, choices: Sequence[str], when: str, passages: Sequence[str]) -> Prompt:
    """The prompt of one question at one interval."""
    ctx = ("News so far:\n" + "\n\n".join(passages) + "\n\n") if passages else ""
    body = (ctx + INSTRUCTION.format(when=when) + "\n\nQuestion: " + question + "\n"
            + "\n".join(f"{LETTERS[i]}. {c}" for i, c in enumerate(choices)))
    return Prompt(messages=({"role": "user", "content": body},), answer_prefix=ANSWER_PREFIX,
                  key="\n".join((when, question, *choices)))


def fit_prompt(be: Any, question: str, choices: Sequence[str], when: str, passages: Sequence[str],
               keep: str = "newest") -> tuple[Prompt, int]:
    """The prompt with as many passages as the model's window takes: passages are dropped from
    the front (``newest``: the oldest go first) or the end (``first``) until it fits. Returns the
    prompt and how many passages were dropped."""
    passages = list(passages)
    dropped = 0
    p = render(question, choices, when, passages)
    while passages and getattr(be, "max_length", None) and be.prompt_tokens(p) > be.max_length - 4:
        passages = passages[1:] if keep == "newest" else passages[:-1]
        dropped += 1
        p = render(question, choices, when, passages)
    return p, dropped


def pick(scored: Any) -> int | None:
    """The option with the highest letter log-probability (the first on ties), None on an error."""
    if scored.error or not scored.scores:
        return None
    return max(range(len(scored.scores)), key=lambda i: (scored.scores[i], -i))


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
    from okgen.eval.rundir import folder_lock
    from okgen.eval.runner import _remove_if_empty
    from okgen.models.registry import load_backend
    from okgen.streams.store import open_verified_stream

    st = Setting.parse(setting)
    stream = open_verified_stream(ref, ws)
    view = StreamView(stream)
    questions = stream.questions[:limit] if limit else stream.questions
    spec_name = model if isinstance(model, str) else str(model)
    run = out or ws.data_dir / "runs" / "streams" / stream.manifest.name / _slug(spec_name) / st.name
    cfg = {"kind": "okgen-stream-eval", "stream": stream.manifest.name, "stream_hash": stream.manifest.content_hash,
           "model": spec_name, "setting": st.name, "template": TEMPLATE, "template_hash": TEMPLATE_HASH,
           "budget_chars": budget_chars, "limit": limit}
    lock = folder_lock(ws, run, "okgen eval --stream")
    lock.acquire()  # one process a run folder: two would append every prediction twice
    try:
        created = [d for d in (run, *run.parents) if not d.exists()]
        try:
            stored = open_run_dir(run, cfg, overwrite)
            be = backend or load_backend(model, ws)
            info = be.info()
            if not stored:
                write_run_file(run, cfg, stream.manifest.signature, spec_name, info)
            done = read_rows(run / PREDICTIONS)
            intervals = stream.manifest.intervals
            keys = [(q.id, iv.index) for q in questions for iv in intervals]
            resumed = sum(1 for k in keys if k in done and done[k]["error"] is None)
            if resumed and stored and (differs := answers_differ(stored.get("backend"), info)):
                raise ConfigError(f"{run} holds answers made with another {differs}; use another --out or --overwrite")
            if resumed:
                log.info("%s: resuming, %d of %d (question, interval) pairs already scored", run.name, resumed, len(keys))
            scored_now = _score_pending(stream, view, questions, st, be, budget_chars, run / PREDICTIONS, done)
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
                   "budget_chars": budget_chars, "limit": limit, "answers_by": answers_by(info),
                   "intervals": [iv.label for iv in intervals], "resumed": resumed, "scored_now": scored_now,
                   "errors": errors, "phase_boundaries": _boundaries(stream, questions), **sc.to_dict(),
                   "dated": rates(questions, rows, len(intervals)), "by_age": by_age(view, rows),
                   "context_cut": context_cut(rows)}
        atomic_write_text(run / RESULTS, json.dumps(results, indent=2) + "\n")
        results["path"] = str(run)
        return results
    finally:
        lock.release()


def context_cut(rows: Sequence[dict[str, Any]]) -> dict[str, int]:
    """How many (question, interval) pairs read fewer documents than their setting chose (the
    character budget or the model's window left the oldest out), and how many documents that left
    out in all; rows of runs before this count was kept count as uncut."""
    cut = [int(r.get("left_out") or 0) for r in rows]
    return {"pairs": sum(c > 0 for c in cut), "of": len(cut), "documents": sum(cut)}


def _score_pending(stream: Stream, view: StreamView, questions: Sequence[Any], st: Setting, be: Any,
                   budget_chars: int, path: Path, done: dict[tuple[str, int], dict[str, Any]]) -> int:
    """Score the (question, interval) pairs of ``questions`` not in ``done`` (or errors), one
    question's pairs per backend call, appending each question's rows to ``path`` at once.
    Each row names the documents the model read (``context``), whether one was after the
    interval (``future_context``: ``ctx:latest`` only) and whether the gold's evidence was there."""
    from okgen.progress import bar

    n = 0
    intervals = stream.manifest.intervals
    pending = sum(1 for q in questions for iv in intervals if (r := done.get((q.id, iv.index))) is None or r["error"] is not None)
    total = len(questions) * len(intervals)
    with open(path, "a", encoding="utf-8") as f, \
            bar(total=total, initial=total - pending, desc=f"{stream.manifest.name} {st.text}", unit="pair") as pb:
        for q in questions:
            todo = [iv for iv in intervals if (r := done.get((q.id, iv.index))) is None or r["error"] is not None]
            if not todo:
                continue
            prompts, shown, left_out = [], [], []
            for iv in todo:
                chosen = select(stream, st, iv.index, q, view)
                got = _shown(stream, chosen, budget_chars, ranked=st.kind == "retrieval")
                p, dropped = fit_prompt(be, q.question, q.choices, iv.label, [text for _, text in got])
                prompts.append(p)
                shown.append(got[dropped:])
                left_out.append(len(chosen) - len(got) + dropped)
            scored = be.letter_logprobs(prompts, [list(LETTERS[:len(q.choices)])] * len(prompts))
            for iv, s, got, cut in zip(todo, scored, shown, left_out):
                pred, t = pick(s), iv.index
                ids = [d.id for d, _ in got]
                row = {"question_id": q.id, "interval": t, "label": iv.label, "gold": q.answers[t],
                       "pred": pred, "correct": pred == q.answers[t], "error": s.error, "context": ids,
                       "left_out": cut,
                       "future_context": any(d.interval > t for d, _ in got),
                       "gold_in_context": view.gold_in_context(q, t, ids, [x for _, x in got])}
                f.write(json.dumps(row) + "\n")
                done[(q.id, t)] = row
                n += 1
            f.flush()
            os.fsync(f.fileno())
            pb.update(len(todo))
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
