"""``okgen eval``: score a model on a snapshot, resumably, in one or more settings.

:func:`run_eval` resolves the snapshot (catalogue, folder or archive), verifies every hash and
refuses a mismatch, loads the model once, and runs each :class:`RunSpec` (setting, retriever,
window, k) into its own run folder::

    RUN/run.json           what the run is (config, eval signature, model spec)
    RUN/predictions.jsonl  one Prediction per line, appended (and fsynced) as batches finish
    RUN/results.json       the EvalRecord, written when the run completes

A killed run resumes where it stopped: completed predictions are read back (a torn last line
is dropped), predictions that carry a backend ``error`` are retried, and only the rest is
scored. Same snapshot + same model spec + same options give the same predictions (greedy
decoding, fixed seeds, the snapshot's choice order).
"""

from __future__ import annotations

import logging
import os
import platform
import re
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from okgen import __version__
from okgen.errors import ConfigError, IntegrityError, OkgenError
from okgen.eval import contexts
from okgen.eval.rundir import (
    PREDICTIONS,
    RESULTS,
    RUN_FILE,
    folder_lock,
    open_run_dir,
    read_predictions,
    write_run_file,
)
from okgen.eval.scoring import DEFAULT_MAX_TOKENS, SCORINGS, Mode, score
from okgen.eval.stats import N_BOOT, degenerate_warning, diagnostics, summarize
from okgen.eval.templates import DEFAULT_TEMPLATE, get_template
from okgen.files import atomic_write_text, describe_validation_error, pretty_json, record_line
from okgen.hashing import sha256_json
from okgen.models.base import Backend, ModelSpec, answers_differ, parse_model_spec
from okgen.progress import bar
from okgen.schema import EvalRecord, Prediction, Question
from okgen.settings import Workspace
from okgen.signature import (
    EvalSignature,
    expected_snapshot,
    parse_any,
    signature_diff,
)

log = logging.getLogger(__name__)

# Options that change speed or location, never a score: left out of a run's identity.
SPEED_OPTIONS = {"batch_size", "max_batch_tokens", "max_padding", "concurrency", "timeout", "max_retries", "cache",
                 "device", "gpu_memory_utilization", "max_num_seqs", "tensor_parallel_size", "pipeline_parallel_size",
                 "data_parallel_size", "distributed_executor_backend", "prefix_cache", "api_key_env", "base_url",
                 "enforce_eager", "min_prefix"}


@dataclass(frozen=True)
class RunSpec:
    """One evaluation setting: ``none``, ``oracle``, or ``retrieval`` with retriever, window and k."""

    setting: str
    retriever: str | None = None
    window: int | None = None
    k: int | None = None

    def slug(self) -> str:
        """Folder-name form (``retrieval-bm25-w5-k5``)."""
        if self.setting == "retrieval":
            return f"retrieval-{self.retriever}-w{self.window}-k{self.k}"
        return self.setting.replace(":", "-")


@dataclass
class EvalOptions:
    """Options shared by the runs of one call."""

    scoring: str = "loglik"
    fmt: str = "mc"
    template: str | None = None
    limit: int | None = None
    seed: int = 0
    temperature: float = 0.0
    max_tokens: int | None = None
    judge: str | None = None
    chunk_size: int = 64
    n_boot: int = N_BOOT
    overwrite: bool = False


@dataclass
class RunOutcome:
    """A finished run: its folder and record."""

    path: Path
    record: EvalRecord
    scored_now: int = 0
    resumed: int = 0
    warnings: list[str] = field(default_factory=list)
    """One-line warnings about the run (degenerate answers, oracle not above none)."""


@dataclass
class _Clock:
    t: dict[str, float] = field(default_factory=dict)

    def add(self, key: str, since: float) -> None:
        self.t[key] = round(self.t.get(key, 0.0) + time.perf_counter() - since, 6)


def plan_runs(settings: Sequence[str], retrievers: Sequence[str] = ("bm25",), windows: Sequence[int | None] = (),
              ks: Sequence[int] = (5,)) -> list[RunSpec]:
    """Every combination asked for: one run per plain setting, retriever x window x k for retrieval.

    A retrieval run without a window gets the snapshot's longest window when it runs.
    """
    runs: list[RunSpec] = []
    for s in settings:
        if s not in contexts.SETTINGS:
            raise ConfigError(f"unknown setting {s!r}; known: {', '.join(contexts.SETTINGS)}")
        if s != "retrieval":
            runs.append(RunSpec(s))
            continue
        for r in retrievers:
            for w in windows or (None,):
                for k in ks:
                    if int(k) < 1:
                        raise ConfigError(f"k (passages given) must be >= 1, got {k}")
                    if w is not None and int(w) < 1:
                        raise ConfigError(f"a window must be >= 1 day, got {w}")
                    runs.append(RunSpec("retrieval", r, None if w is None else int(w), int(k)))
    return list(dict.fromkeys(runs))


def model_slug(spec: ModelSpec) -> str:
    """Folder-name form of a model spec (its score-relevant options hashed)."""
    base = re.sub(r"[^A-Za-z0-9._-]+", "_", spec.name).strip("_")
    opts = {k: v for k, v in spec.options.items() if k not in SPEED_OPTIONS}
    return f"{base}-{sha256_json(opts)[:6]}" if opts else base


def run_eval(snapshot_ref: str, model: str | ModelSpec, runs: Sequence[RunSpec], opts: EvalOptions | None = None, *,
             workspace: Workspace | None = None, out: str | Path | None = None, backend: Backend | None = None) -> list[RunOutcome]:
    """Score ``model`` on the snapshot ``snapshot_ref`` in every run of ``runs``.

    Args:
        snapshot_ref: signature (long, short, eval), content hash, folder or archive.
        model: model spec (``hf/...``) or a parsed one.
        runs: the settings to run (see :func:`plan_runs`).
        opts: scoring options.
        workspace: the okgen workspace (default: ``OKGEN_HOME``).
        out: run folder for a single run; parent folder of one sub-folder per run otherwise
            (default: ``data/runs/<snapshot>/<model>/<run>``).
        backend: an already loaded backend to reuse (it is not closed).

    Raises:
        IntegrityError: the snapshot fails verification.
        ConfigError: inconsistent options, or a run folder holding another run.
    """
    ws = workspace or Workspace.from_env()
    opts = replace(opts) if opts is not None else EvalOptions()  # defaults are filled in a copy
    spec = model if isinstance(model, ModelSpec) else parse_model_spec(model)
    _check_options(opts)
    if spec.backend == "random" and opts.fmt == "open":  # before any folder is made
        raise ConfigError(f"{spec.text or spec.name}: a random baseline draws among the options, and an "
                          "open answer has none to draw: use --format mc")
    for r in runs:  # plan_runs checks these; runs built by hand are checked before a model loads
        if r.setting == "retrieval" and (r.k is not None and r.k < 1 or r.window is not None and r.window < 1):
            raise ConfigError(f"{r.slug()}: k (passages given) and the window must be >= 1")
    ev = _Evaluator(snapshot_ref, spec, ws, opts, backend)
    runs = [RunSpec(r.setting, r.retriever, ev.snap.signature.window, r.k)
            if r.setting == "retrieval" and r.window is None else r for r in runs]
    try:
        if not ev.snap.manifest.text_included and any(r.setting != "none" for r in runs):
            # A release without texts: the run that needs them fails (one line) before any scoring.
            first = next(r for r in runs if r.setting != "none")
            raise ConfigError(f"snapshot {ev.snap.name} was released without article texts: the {first.setting} "
                              f"setting needs them (okgen hydrate fetches them)")
        if any(r.setting in ("oracle", "retrieval") for r in runs):
            # Imported sets may come without article text: their oracle and retrieval figures say little.
            arts = ev.snap.articles_by_id
            ev.without_text = sum(1 for q in ev.questions if q.article_id not in arts or not arts[q.article_id].text.strip())
        if ev.without_text:
            log.warning("%d of %d questions of %s come from articles without text (as when a set is imported "
                        "without it): the oracle setting shows them an empty article and retrieval can match "
                        "only a title", ev.without_text, len(ev.questions), ev.snap.name)
        outcomes = [ev.run_one(rs, _run_dir(ev, rs, runs, out)) for rs in runs]
    finally:
        ev.close()
    _check_oracle_gain(ev, runs, outcomes, out)
    return outcomes


def _check_oracle_gain(ev: _Evaluator, runs: Sequence[RunSpec], outcomes: list[RunOutcome],
                       out: str | Path | None) -> None:
    """Warn when the oracle run is not above the no-context one (this call's runs, or the other
    setting's results.json beside them; one of another --limit is compared on the questions both
    scored). Not for the random baseline: its answers ignore the prompt by design."""
    if ev.spec.backend == "random":
        return
    acc: dict[str, tuple[float, RunOutcome | None]] = {o.record.extra["run"]["setting"]: (o.record.accuracy, o)
                                                         for o in outcomes if o.record.extra.get("run")}
    common = ""
    for setting in ("none", "oracle"):
        if setting in acc or not ({"none", "oracle"} - {setting}) & set(acc):
            continue
        if out is not None and len(runs) == 1:
            continue  # a single run with --out: its sibling's folder is unknown
        other = _run_dir(ev, RunSpec(setting), [RunSpec(setting), RunSpec("x")], out) / RESULTS
        try:
            rec = EvalRecord.model_validate_json(other.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        mine = acc[({"none", "oracle"} - {setting}).pop()][1]  # this call's run of the other setting
        if mine is None:
            continue
        if rec.n == mine.record.n:
            acc[setting] = (rec.accuracy, None)
        else:
            # Another --limit: compared on the questions both runs scored (not 0/3 against 5/9).
            theirs, ours = read_predictions(other.parent / PREDICTIONS), read_predictions(mine.path / PREDICTIONS)
            both = [q for q in ours if q in theirs and ours[q].error is None and theirs[q].error is None]
            if both:
                acc[setting] = (sum(bool(theirs[q].correct) for q in both) / len(both), None)
                acc[mine.record.extra["run"]["setting"]] = (sum(bool(ours[q].correct) for q in both) / len(both), mine)
                common = f" (on the {len(both)} questions both runs scored)"
    if "none" in acc and "oracle" in acc and acc["oracle"][0] <= acc["none"][0]:
        msg = (f"{ev.spec.name}: oracle accuracy {acc['oracle'][0]:.3f} is not above no-context accuracy "
               f"{acc['none'][0]:.3f}{common}: the model does not use the article (check truncation, prompt format, BOS)")
        log.warning("%s", msg)
        for o in outcomes:
            o.warnings.append(msg)
            _keep_warning(ev, o, msg)


def _keep_warning(ev: _Evaluator, o: RunOutcome, msg: str) -> None:
    """Add ``msg`` to the run's results.json, as the degenerate-letter warning is kept: under the
    folder's lock, and only while the file is still this run's (another process may have rerun
    the folder since; a folder it holds now is left as it is)."""
    from okgen.errors import LockedError

    try:
        with folder_lock(ev.ws, o.path):
            current = EvalRecord.model_validate_json((o.path / RESULTS).read_text(encoding="utf-8"))
            if (current.signature, current.created_at) != (o.record.signature, o.record.created_at):
                return
            kept = o.record.extra.setdefault("warnings", [])
            if msg not in kept:
                kept.append(msg)
                atomic_write_text(o.path / RESULTS, pretty_json(o.record))
    except (LockedError, OSError, ValueError):
        return


_UNKNOWN = object()


def _stored_limit(text: str, total: int) -> Any:
    """The ``--limit`` a stored run signature says, as this okgen counts it (a limit covering the
    whole snapshot is none); ``_UNKNOWN`` for an older okgen's signature that does not parse."""
    try:
        limit = getattr(parse_any(text), "limit", None)
    except OkgenError:
        return _UNKNOWN
    return None if limit is not None and limit >= total else limit


def _limit_text(limit: int | None) -> str:
    return "all questions" if limit is None else f"the first {limit} questions (--limit {limit})"


def _check_options(opts: EvalOptions) -> None:
    if opts.fmt not in ("mc", "open"):
        raise ConfigError(f"--format must be mc or open, got {opts.fmt!r}")
    if opts.scoring not in SCORINGS:
        raise ConfigError(f"--scoring must be one of {', '.join(SCORINGS)}, got {opts.scoring!r}")
    if opts.fmt == "open" and opts.scoring != "generate":
        raise ConfigError("--format open is scored by generation: use --scoring generate")
    if opts.judge and opts.fmt != "open":
        raise ConfigError("--judge applies to --format open only")
    if opts.scoring != "generate":
        opts.max_tokens = 0  # nothing is generated: keep the signature's emax honest
    elif opts.max_tokens is None:
        opts.max_tokens = DEFAULT_MAX_TOKENS[opts.fmt]
    get_template(opts.template, opts.fmt)


def _run_dir(ev: _Evaluator, rs: RunSpec, runs: Sequence[RunSpec], out: str | Path | None) -> Path:
    o = ev.opts
    name = f"{rs.slug()}-{o.scoring}-{o.fmt}"
    if o.template and o.template != DEFAULT_TEMPLATE[o.fmt]:
        name += f"-{o.template}"
    if o.temperature or o.seed:
        name += f"-t{o.temperature:g}-s{o.seed}"
    if o.judge:
        name += "-judged"
    if out is not None:
        return Path(out) if len(runs) == 1 else Path(out) / name
    return ev.ws.runs_dir / ev.snap.name / model_slug(ev.spec) / name


class _Evaluator:
    """State shared by the runs of one call: snapshot, backend, judge, indexes."""

    def __init__(self, ref: str, spec: ModelSpec, ws: Workspace, opts: EvalOptions, backend: Backend | None):
        from okgen.snapshot.store import resolve
        from okgen.snapshot.verify import verify_folder

        self.snap = resolve(ref, ws)
        if opts.limit and opts.limit >= len(self.snap.questions):  # the whole snapshot: the same run as no limit
            log.info("--limit %d covers all %d questions of %s: scoring them all", opts.limit,
                     len(self.snap.questions), self.snap.name)
            opts = replace(opts, limit=None)
        self.ws, self.spec, self.opts = ws, spec, opts
        report = verify_folder(self.snap.path, expected_snapshot(ref, self.snap.signature))
        if not report.ok:
            raise IntegrityError(f"snapshot {self.snap.name} failed verification ({len(report.problems)} problem(s); "
                                 f"first: {report.problems[0]}); refusing to evaluate it")
        self.questions: list[Question] = self.snap.questions[: opts.limit] if opts.limit else self.snap.questions
        self.without_text = 0  # questions whose article has no text (set when a run needs articles)
        self.template = get_template(opts.template, opts.fmt)
        self.mode = Mode(opts.scoring if opts.fmt == "mc" else "generate", opts.fmt, int(opts.max_tokens or 0),
                         float(opts.temperature), int(opts.seed))
        self._backend, self._owned = backend, backend is None
        self._judge = None
        self._indexes: dict[tuple[str, int], Any] = {}
        self.load_seconds = 0.0

    @property
    def backend(self) -> Backend:
        if self._backend is None:
            from okgen.models.registry import load_backend

            t0 = time.perf_counter()
            log.info("loading %s", self.spec.text)
            self._backend = load_backend(self.spec, self.ws)
            self.load_seconds = time.perf_counter() - t0
        return self._backend

    @property
    def judge(self) -> Any:
        if self._judge is None and self.opts.judge:
            from okgen.eval.judge import Judge

            self._judge = Judge(self.opts.judge, self.ws)
        return self._judge

    @property
    def pool(self) -> Any:
        """The snapshot's corpus as a dated pool (:class:`okgen.memory.dated.Pool`), built once."""
        if getattr(self, "_pool", None) is None:
            from okgen.memory.dated import Pool

            self._pool = Pool.of(self.snap.articles_by_id.values())
        return self._pool

    def index(self, retriever: str, window: int) -> Any:
        key = (retriever, window)
        if key not in self._indexes:
            from okgen.retrieval.index import open_index

            self._indexes[key] = open_index(self.snap, retriever, window, self.ws)
        return self._indexes[key]

    def close(self) -> None:
        if self._owned and self._backend is not None:
            self._backend.close()
        if self._judge is not None:
            self._judge.close()
        self._indexes.clear()  # the loaded indexes (a ColBERT searcher holds its index in memory)

    # -- one run ------------------------------------------------------------------------
    def config(self, rs: RunSpec) -> dict[str, Any]:
        o = self.opts
        ident = {k: v for k, v in sorted(self.spec.options.items()) if k not in SPEED_OPTIONS}
        return {"snapshot": self.snap.manifest.content_hash, "model": self.spec.name, "model_options": ident,
                **asdict(rs), "scoring": self.mode.scoring, "format": o.fmt, "template": self.template.name,
                "seed": o.seed, "temperature": o.temperature, "max_tokens": self.mode.max_tokens, "judge": o.judge}

    def signature(self, rs: RunSpec) -> EvalSignature:
        rname, rhash = "none", "none"
        if rs.setting == "retrieval":
            idx = self.index(rs.retriever, rs.window)
            rname, rhash = idx.name, idx.spec_hash
        from pydantic import ValidationError

        try:
            return EvalSignature.from_snapshot(
                self.snap.signature, setting=rs.setting, retriever=rname, retriever_hash=str(rhash),
                ret_window=rs.window, k=rs.k, template=self.template.name + self.backend.template_suffix,
                scoring=self.mode.scoring, answer_format=self.opts.fmt, eval_temperature=float(self.opts.temperature),
                eval_max_tokens=self.mode.max_tokens, eval_seed=int(self.opts.seed),
                judge=self.judge.name if self.judge is not None else "none", limit=self.opts.limit, version=__version__)
        except ValidationError as e:  # a RunSpec no run gives (k 0), built outside plan_runs
            raise ConfigError(f"{rs.slug()}: {describe_validation_error(e)}") from None

    def run_one(self, rs: RunSpec, path: Path) -> RunOutcome:
        created = [d for d in (path, *path.parents) if not d.exists()]
        try:
            with folder_lock(self.ws, path):
                return self._run_one(rs, path)
        except BaseException:
            _remove_if_empty(path, created)
            raise

    def _run_one(self, rs: RunSpec, path: Path) -> RunOutcome:
        clock = _Clock()
        t_all = time.perf_counter()
        if rs.setting != "none" and not self.snap.manifest.text_included:
            raise ConfigError(f"snapshot {self.snap.name} was released without article texts: the {rs.setting} "
                              f"setting needs them (okgen hydrate fetches them)")
        cfg = self.config(rs)
        stored = open_run_dir(path, cfg, self.opts.overwrite)
        done = read_predictions(path / PREDICTIONS)
        pending = [q for q in self.questions if q.id not in done or done[q.id].error is not None]
        resumed = len(self.questions) - len(pending)
        if resumed:
            log.info("%s: resuming, %d of %d questions already scored", path.name, resumed, len(self.questions))
        sig_text = stored.get("signature")
        info = stored.get("backend")
        was = _stored_limit(sig_text, len(self.snap.questions)) if sig_text is not None else _UNKNOWN
        if was is not _UNKNOWN and was != self.opts.limit:
            # A --limit run into a full run's folder (or the reverse) has nothing to score and would
            # rewrite results.json with the other run's signature: a part passing for the whole.
            raise ConfigError(f"{path} holds a run of {_limit_text(was)}, not {_limit_text(self.opts.limit)}; "
                              "use another --out or --overwrite")
        if pending or sig_text is None:
            load_before = self.load_seconds
            sig_text = self.signature(rs).format()
            if stored.get("signature") not in (None, sig_text):
                raise ConfigError(f"{path} holds another run (its signature differs in "
                                  f"{signature_diff(stored['signature'], sig_text)}); use another --out or --overwrite")
            info = self.backend.info()
            if resumed and (differs := answers_differ(stored.get("backend"), info,
                                                      continuations=self.mode.scoring in ("loglik-full", "loglik-norm"))):
                # The same signature, but what renders or draws the answers changed since the
                # scored part: one number would mix two models' answers.
                raise ConfigError(f"{path} holds answers made with another {differs}; use another --out or "
                                  "--overwrite")
            clock.t["load_model"] = round(self.load_seconds - load_before, 6)
            write_run_file(path, cfg, sig_text, self.spec.text, info)
        before = {}
        if pending:
            # The backend and judge count over their life, and one call scores several runs
            # with them: each run records what it used (the difference).
            before = {"backend_usage": self._backend.usage() if self._backend is not None else {},
                      "judge_usage": self._judge.usage() if self._judge is not None else {}}
            self._score_pending(rs, path, pending, clock)
        preds = read_predictions(path / PREDICTIONS)
        clock.add("total", t_all)
        record = self._record(rs, sig_text, preds, clock, info, resumed, len(pending), before)
        if not pending:
            record = _keep_measured(record, path / RESULTS)
        first = next((p.error for q in self.questions if (p := preds.get(q.id)) is not None and p.error), None)
        if record.n and record.errors == record.n:
            # Nothing was measured (server down, no logprobs...): no results.json for a report to
            # pick up as a 0% score. The predictions stay, so a rerun retries them.
            raise OkgenError(f"{path.name}: all {record.n} questions failed, so there is no score; first error: "
                             f"{first}. Rerun the same command to retry them")
        if record.errors:
            log.warning("%s: %d of %d questions failed and count as wrong (rerun the same command to retry them); "
                        "first error: %s", path.name, record.errors, record.n, first)
        atomic_write_text(path / RESULTS, pretty_json(record))
        warnings = list(record.extra.get("warnings", []))
        for w in warnings:
            log.warning("%s", w)
        return RunOutcome(path, record, len(pending), resumed, warnings)

    def _score_pending(self, rs: RunSpec, path: Path, pending: list[Question], clock: _Clock) -> None:
        backend, arts = self.backend, self.snap.articles_by_id
        base = {"setting": rs.setting, "retriever": rs.retriever, "window": rs.window, "k": rs.k}
        with open(path / PREDICTIONS, "a", encoding="utf-8") as f, \
                bar(total=len(self.questions), initial=len(self.questions) - len(pending), desc=path.name, unit="q") as pb:
            for chunk in _chunks(pending, self.opts.chunk_size):
                t0 = time.perf_counter()
                if rs.setting == "retrieval":
                    got = contexts.retrieve(self.index(rs.retriever, rs.window), chunk, rs.k, arts)
                elif rs.setting.startswith("ctx:"):
                    got = [([contexts.article_passage(a) for a in self.pool.context(rs.setting, q)], None)
                           for q in chunk]
                elif rs.setting == "oracle":
                    got = [([contexts.article_passage(arts[q.article_id])], None) for q in chunk]
                else:
                    got = [([], None) for _ in chunk]
                clock.add("retrieval", t0)
                t0 = time.perf_counter()
                fitted = []
                cuts_itself = getattr(backend, "truncation", "context") == "left"
                for q, (passages, gold) in zip(chunk, got):
                    if rs.setting == "ctx:cumulative":
                        # okgen's own policy (whole articles, oldest dropped first), whatever the backend cuts.
                        fi = contexts.fit_oldest_first(self.template, q, passages, rs.setting, backend,
                                                       self.mode.reserve(backend, q))
                        fitted.append(fi)
                        continue
                    reserve = 0 if cuts_itself else self.mode.reserve(backend, q)
                    fi = contexts.fit(self.template, q, passages, rs.setting, backend, reserve,
                                      group=q.article_id if rs.setting == "oracle" else None)
                    fi.gold_rank = gold
                    fitted.append(fi)
                clock.add("prompts", t0)
                t0 = time.perf_counter()
                preds = score(backend, self.mode, chunk, fitted, base)
                clock.add("scoring", t0)
                if self.judge is not None:
                    t0 = time.perf_counter()
                    preds = self._judge_misses(chunk, preds)
                    clock.add("judge", t0)
                for p in preds:
                    f.write(record_line(p) + "\n")
                f.flush()
                os.fsync(f.fileno())
                pb.update(len(chunk))

    def _judge_misses(self, chunk: list[Question], preds: list[Prediction]) -> list[Prediction]:
        by_id = {q.id: q for q in chunk}
        misses = [i for i, p in enumerate(preds) if not p.correct and p.error is None and p.parsed]
        if not misses:
            return preds
        from okgen.eval.parsing import first_line

        items = [(by_id[preds[i].question_id].question, by_id[preds[i].question_id].short_answer,
                  first_line(preds[i].output or "")) for i in misses]
        out = list(preds)
        for i, (verdict, reason) in zip(misses, self.judge.decide(items)):
            if verdict is None:  # an error, so a rerun asks the judge again
                out[i] = preds[i].model_copy(update={"error": f"judge failed: {reason}", "judge_reason": None})
            else:
                out[i] = preds[i].model_copy(update={"correct": verdict, "judged": True, "judge_reason": reason})
        return out

    def _record(self, rs: RunSpec, sig: str, preds: dict[str, Prediction], clock: _Clock, info: Any,
                resumed: int, scored_now: int, before: dict[str, dict[str, Any]] | None = None) -> EvalRecord:
        summ = summarize(self.questions, preds, self.opts.n_boot, self.opts.seed)
        diag = diagnostics(self.questions, preds)
        warn = degenerate_warning(f"{self.spec.name} {rs.slug()}", diag) if self.opts.fmt == "mc" else None
        got = [preds[q.id] for q in self.questions if q.id in preds]
        timings = dict(clock.t)
        if scored_now and timings.get("scoring"):
            timings["questions_per_second"] = round(scored_now / timings["scoring"], 3)
        pt = sum(p.prompt_tokens for p in got)
        ct = sum(p.completion_tokens for p in got)
        extra: dict[str, Any] = {
            "backend": info, "okgen": __version__, "python": sys.version.split()[0], "platform": platform.platform(),
            "run": asdict(rs), "limit": self.opts.limit, "questions_in_snapshot": len(self.snap.questions),
            "resumed": resumed, "scored_now": scored_now, "judged": sum(p.judged for p in got),
            "diagnostics": diag, "warnings": [warn] if warn else [],
        }
        before = before or {}
        if self._backend is not None and scored_now:
            extra["backend_usage"] = _used(self._backend.usage(), before.get("backend_usage", {}))
        if self._judge is not None and scored_now:
            extra["judge_usage"] = _used(self._judge.usage(), before.get("judge_usage", {}))
        if rs.setting in ("oracle", "retrieval") and self.without_text:
            extra["questions_without_article_text"] = self.without_text
        if (rs.setting.startswith("ctx:") or rs.setting == "retrieval") and got:
            extra["dated"] = self.pool.rates(self.questions, preds)
        if rs.setting == "retrieval" and got:
            gold = {q.id: q.article_id for q in self.questions}
            extra["gold_retrieved"] = round(sum(p.gold_rank is not None for p in got) / len(got), 6)
            extra["gold_in_context"] = round(sum(gold.get(p.question_id) in p.retrieved for p in got) / len(got), 6)
        return EvalRecord(signature=sig, snapshot_signature=self.snap.manifest.signature, model=self.spec.text,
                          timings=timings, usage={"prompt_tokens": pt, "completion_tokens": ct, "total_tokens": pt + ct},
                          extra=extra, **summ)


def _used(after: dict[str, Any], before: dict[str, Any]) -> dict[str, Any]:
    """Counters ``after`` less ``before``, key by key (nested tables too); what is not a number
    (a model name, a mode) is kept as it is after."""
    out: dict[str, Any] = {}
    for key, value in after.items():
        was = before.get(key)
        if isinstance(value, dict):
            out[key] = _used(value, was if isinstance(was, dict) else {})
        elif isinstance(value, (int, float)) and not isinstance(value, bool) and isinstance(was, (int, float)) \
                and not isinstance(was, bool):
            out[key] = round(value - was, 9) if isinstance(value, float) or isinstance(was, float) else value - was
        else:
            out[key] = value
    return out


MEASURED = ("backend_usage", "judge_usage", "scored_now", "resumed")


def _keep_measured(record: EvalRecord, results: Path) -> EvalRecord:
    """A rerun that scored nothing keeps what the run that scored measured (its timings and
    questions per second, the backend's counters, when it was made) instead of writing its own
    empty clock over them."""
    try:
        earlier = EvalRecord.model_validate_json(results.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return record
    if earlier.signature != record.signature:
        return record
    extra = {**record.extra, **{k: earlier.extra[k] for k in MEASURED if k in earlier.extra}}
    return record.model_copy(update={"timings": earlier.timings, "created_at": earlier.created_at, "extra": extra})


def _remove_if_empty(path: Path, created: list[Path]) -> None:
    """After a failed run: remove the run folder (and the parents this run created) when no
    prediction was saved, so a failed run leaves no empty folder behind; a run.json alone goes too."""
    preds = path / PREDICTIONS
    if preds.is_file() and preds.stat().st_size > 0:
        return  # completed work stays, for a rerun to resume
    if path in created:
        for name in (RUN_FILE, PREDICTIONS):
            (path / name).unlink(missing_ok=True)
    for d in created:  # deepest first
        try:
            d.rmdir()
        except OSError:
            break


def _chunks(questions: list[Question], size: int) -> Iterator[list[Question]]:
    """Batches of about ``size`` questions that do not split an article's questions."""
    chunk: list[Question] = []
    for q in questions:
        if len(chunk) >= size and chunk[-1].article_id != q.article_id:
            yield chunk
            chunk = []
        chunk.append(q)
    if chunk:
        yield chunk


__all__ = ["EvalOptions", "RunOutcome", "RunSpec", "model_slug", "plan_runs", "read_predictions", "run_eval"]
