"""``okgen daily``: ingest -> generate (with validation) -> snapshot -> indexes -> publish.

Every stage checkpoints in the workspace store (:mod:`okgen.daily.state`), so running the same
date again continues where it stopped and never duplicates work: ingest and generation resume
per item, the snapshot is rebuilt with the run's own timestamp (the same signature), indexes
are reused when they exist. ``force`` starts a new run with a new timestamp and signature. A
workspace lock keeps two runs from overlapping.

Configuration (all optional) comes from ``okgen.toml``: ``[ingest]`` and ``[generate]`` as for
those verbs, and ``[daily]``::

    [daily]
    timezone = "UTC"            # "yesterday" is computed in this zone
    feeds = "my-feeds.toml"     # feed list (default: the packaged one)
    retrievers = ["bm25"]       # indexes built for each window after the snapshot
    windows = [1, 5, 10]
    publish_to = "/srv/okgen"   # folder or fsspec URL; unset: no publishing
    sign_key = "okgen.key"      # sign published manifests
    no_text = false             # publish without article bodies
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from okgen.config import DailySettings
from okgen.daily.lock import RunLock
from okgen.daily.state import RunState
from okgen.errors import ConfigError, OkgenError
from okgen.hashing import sha256_file, sha256_text
from okgen.settings import Workspace

log = logging.getLogger(__name__)

STAGES = ("ingest", "generate", "snapshot", "index", "publish")
EXTRACTIVE = ("extractive", "extractive-v2")
# The [generate] settings a daily run uses; every [daily] setting is a daily option too.
GENERATE_KEYS = ("generator", "validator", "probes", "per_article", "seed", "max_cost", "concurrency")
DAILY_KEYS = tuple(DailySettings.model_fields)


@dataclass
class DailyOptions:
    """What one daily run does (:meth:`resolve` reads it from the settings)."""

    feeds: str | None = None
    replay: str | None = None
    import_file: str | None = None
    generator: str = "extractive"
    validator: str | None = None
    probes: tuple[str, ...] = ()
    per_article: int | None = None
    seed: int | None = None
    max_cost: float | None = None
    concurrency: int = 16
    use_cache: bool = True
    retrievers: tuple[str, ...] = ("bm25",)
    windows: tuple[int, ...] = (1, 5, 10)
    publish_to: str | None = None
    sign_key: str | None = None
    no_text: bool = False
    timezone: str = "UTC"
    # True when the generator (validator, probes) came from a flag or okgen.toml; otherwise a
    # rerun or `force` keeps the one the date was begun or first built with.
    generator_chosen: bool = False
    validator_chosen: bool = False
    probes_chosen: bool = False
    # Likewise the indexes: the windows shape the snapshot's corpus (its signature's `window`).
    retrievers_chosen: bool = False
    windows_chosen: bool = False
    # True when `feeds` comes from [daily] in okgen.toml, not from --feeds: a replay then uses
    # the list embedded in the capture (the one that ingest really used when it was made).
    feeds_from_config: bool = False
    # An imported dump's undated records are taken as published on the run's date; `okgen daily
    # --import` without --date sets it False (the default date says nothing about an old dump).
    import_undated: bool = True

    @property
    def llm_configured(self) -> bool:
        """True when an LLM generator is configured (else the offline extractive one runs)."""
        return self.generator not in EXTRACTIVE

    @classmethod
    def resolve(cls, workspace: Workspace, *, use_cache: bool | None = None, check_indexes: bool = True,
                **flags: Any) -> DailyOptions:
        """The options of a run: defaults < ``okgen.toml`` (``[daily]``, and ``[generate]`` for the
        models) < ``OKGEN_*`` environment < ``flags`` (None: unset), resolved by :mod:`okgen.config`.

        ``check_indexes``: check the retriever names too (a verb that builds no index, such as
        ``okgen snapshot build``, passes False: a bad ``[daily] retrievers`` is not its concern).

        Raises:
            ConfigError: a bad setting (one line naming it and where it came from) or a bad model spec.
        """
        unknown = set(flags) - set(GENERATE_KEYS) - set(DAILY_KEYS)
        if unknown:
            raise TypeError(f"not a daily option: {', '.join(sorted(unknown))}")
        s = workspace.settings(generate={k: flags.get(k) for k in GENERATE_KEYS},
                               daily={k: flags.get(k) for k in DAILY_KEYS})
        vals: dict[str, Any] = {k: getattr(s.generate, k) for k in GENERATE_KEYS if getattr(s.generate, k) is not None}
        vals.update({k: getattr(s.daily, k) for k in DAILY_KEYS if getattr(s.daily, k) is not None})
        if use_cache is not None:
            vals["use_cache"] = use_cache
        vals["generator_chosen"] = s.generate.generator is not None
        vals["validator_chosen"] = s.generate.validator is not None
        vals["probes_chosen"] = s.generate.probes is not None
        vals["retrievers_chosen"] = s.daily.retrievers is not None
        vals["windows_chosen"] = s.daily.windows is not None
        vals["feeds_from_config"] = s.daily.feeds is not None and flags.get("feeds") is None
        if vals.get("validator") in ("", "none"):
            vals["validator"] = None
        if vals.get("publish_to") == "":
            vals["publish_to"] = None
        check_model_specs(vals.get("generator"), vals.get("validator"), vals.get("probes") or ())
        if check_indexes and vals.get("retrievers"):
            check_retrievers(vals["retrievers"], workspace, origin=_origin("retrievers", flags, workspace))
        return cls(**vals)


def _origin(key: str, flags: dict[str, Any], workspace: Workspace) -> str:
    """Where a ``[daily]`` value came from, as :mod:`okgen.config` names it in its errors: the
    flag, the ``OKGEN_DAILY_<KEY>`` variable (which click also reads for the flag) or the file."""
    import os

    env = f"OKGEN_DAILY_{key.upper()}"
    env_value = os.environ.get(env) or None
    if flags.get(key) is not None and str(flags[key]) != env_value:
        return f"--{key.replace('_', '-')}"
    if env_value is not None:
        return env
    return f"{workspace.config_path} [daily] {key}"


def check_retrievers(names: Sequence[str], workspace: Workspace, origin: str = "--retrievers") -> None:
    """Check every retriever spec a run would index with before any work starts (an unknown
    name would otherwise be found at the index stage, after ingest, generation and the snapshot).

    Raises:
        ConfigError: the first unknown or invalid spec, naming ``origin`` and the known specs.
    """
    from okgen.retrieval.specs import load_spec

    for name in names:
        try:
            load_spec(name, workspace)
        except ConfigError as e:
            raise ConfigError(f"{origin}: {e}") from None


def check_model_specs(generator: str | None, validator: str | None, probes: Sequence[str] = ()) -> None:
    """Check every model spec of a run before any work starts (a bad one would otherwise be
    found after the whole ingest): the shape, the backend, each option's name and base_url.

    Raises:
        ConfigError: the first bad spec, naming the option and the known ones.
    """
    from okgen.llm import BACKEND_OPTIONS, DECODING_OPTIONS
    from okgen.models.registry import parse_model_spec

    roles = [("--generator", generator), ("--validator", validator), *(("--probe", p) for p in probes)]
    for flag, spec in roles:
        if spec is None or spec in ("", "none") or (flag == "--generator" and spec in EXTRACTIVE):
            continue
        ms = parse_model_spec(spec)
        if ms.backend not in BACKEND_OPTIONS:
            what = "'extractive' or " if flag == "--generator" else ""
            raise ConfigError(f"{flag} {spec!r}: use {what}openai/MODEL[,base_url=URL,...], hf/PATH or vllm/ID "
                              f"(the {ms.backend!r} backend is for okgen eval)")
        known = sorted({*BACKEND_OPTIONS[ms.backend], *DECODING_OPTIONS})
        for key, value in ms.options.items():
            if key not in known:
                raise ConfigError(f"{flag} {spec!r}: unknown option {key!r} (known: {', '.join(known)})")
            if key == "base_url" and not str(value).lower().startswith(("http://", "https://")):
                raise ConfigError(f"{flag} {spec!r}: base_url must start with http:// or https:// "
                                  "(e.g. http://127.0.0.1:8000/v1)")


@dataclass
class DailyResult:
    """The outcome of one date's run."""

    date: dt.date
    run_id: int
    status: str
    signature: str | None = None
    snapshot: str | None = None
    resumed: bool = False
    stages: dict[str, dict[str, Any]] = field(default_factory=dict)
    error: str | None = None
    already_done: bool = False

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"date": str(self.date), "run_id": self.run_id, "status": self.status, "signature": self.signature,
                "snapshot": self.snapshot, "resumed": self.resumed, "already_done": self.already_done,
                "stages": self.stages, "error": self.error}


def default_date(tz: str = "UTC") -> dt.date:
    """Yesterday in ``tz``: the most recent complete news day."""
    return (dt.datetime.now(ZoneInfo(tz)) - dt.timedelta(days=1)).date()


def run_daily(date: dt.date | None, workspace: Workspace, options: DailyOptions | None = None, *,
              force: bool = False, progress: bool = False,
              on_stage: Callable[[str, str, dict[str, Any]], None] | None = None,
              on_options: Callable[[DailyOptions], None] | None = None) -> DailyResult:
    """Run (or resume) every stage for one date.

    Args:
        date: the news date (default: yesterday in the configured timezone).
        workspace: the workspace.
        options: what to run (default: from ``okgen.toml``).
        force: start a new run (new timestamp and signature) even if the date is done.
        progress: progress bars on stderr.
        on_stage: called as ``on_stage(stage, status, counts)`` after each stage.
        on_options: called with the options the run goes on with (the lock held, a resumed or
            forced run's models kept), before any stage.

    Raises:
        LockedError: another daily run holds the workspace lock.
        OkgenError: a stage failed (its state and error are recorded; rerun to resume).
    """
    opts = options or DailyOptions.resolve(workspace)
    date = date or default_date(opts.timezone)
    with RunLock(workspace.data_dir / "locks" / "daily.lock"), RunState(workspace.db_path) as state:
        # A rebuild (--force) or a resumed run keeps what made the date's questions unless a flag
        # or okgen.toml says otherwise: a day begun with an LLM is never finished by the offline
        # generator because a rerun left out --generator.
        target = None if force else state.rerun_target(date)
        if target is None or target[1] != "done":  # a finished date is only printed again: nothing to keep
            previous = state.last_done_config(date) if force else (target[2] if target else None)
            opts = _keep_source(_keep_generator(opts, previous, date, force), previous, date, force)
            if on_options is not None:
                on_options(opts)
        run_id, resumed = state.start_or_resume(date, force=force, config=_public(opts))
        run = state.run(run_id)
        result = DailyResult(date=date, run_id=run_id, status="running", resumed=resumed)
        if run.status == "done" and not force:
            result.status, result.signature, result.already_done = ("done" if run.signature else "empty"), run.signature, True
            result.stages = {s.stage: {"status": s.status, "counts": s.counts} for s in run.stages}
            result.snapshot = _local_path(workspace, result.stages.get("snapshot", {}).get("counts", {}).get("path"))
            if run.signature is None:
                result.error = result.stages.get("snapshot", {}).get("counts", {}).get("reason")
            log.info("%s is already done (run %d); use --force to rebuild", date, run_id)
            return result
        ctx = _RunContext(workspace, state, run_id, date, opts, progress, dt.datetime.fromtimestamp(int(run.started_at), dt.timezone.utc))
        try:
            for stage in STAGES:
                if state.stage_status(run_id, stage) in ("done", "skipped"):
                    counts = state.stage_counts(run_id, stage)
                    ctx.counts[stage] = counts
                    result.stages[stage] = {"status": "done (earlier)", "counts": counts}
                    continue
                state.begin_stage(run_id, stage)
                t0 = time.perf_counter()
                try:
                    status, counts = getattr(ctx, f"stage_{stage}")()
                except BaseException as e:
                    state.end_stage(run_id, stage, "interrupted" if isinstance(e, KeyboardInterrupt) else "failed",
                                    error=describe_error(e))
                    raise
                counts["seconds"] = round(time.perf_counter() - t0, 3)
                ctx.counts[stage] = counts
                state.end_stage(run_id, stage, status, counts)
                result.stages[stage] = {"status": status, "counts": counts}
                if on_stage is not None:
                    on_stage(stage, status, counts)
        except BaseException as e:
            state.finish_run(run_id, "failed" if not isinstance(e, KeyboardInterrupt) else "interrupted",
                             error=describe_error(e))
            raise
        result.signature = ctx.counts["snapshot"].get("signature")
        result.snapshot = _local_path(workspace, ctx.counts["snapshot"].get("path"))
        result.status = "done" if result.signature else "empty"
        if result.signature is None:
            result.error = ctx.counts["snapshot"].get("reason")
        state.finish_run(run_id, "done", signature=result.signature, error=result.error)
        return result


def describe_error(e: BaseException) -> str:
    """The error a failed stage or run records: okgen's own message, what stopped an
    interrupted run (SIGTERM or Ctrl-C, not a Python class name), else the exception."""
    if isinstance(e, OkgenError):
        return str(e)
    if isinstance(e, KeyboardInterrupt):  # the CLI raises a KeyboardInterrupt subclass on SIGTERM
        return "terminated (SIGTERM)" if type(e).__name__ == "_Terminated" else "interrupted (Ctrl-C)"
    return f"{type(e).__name__}: {e}"


def _check_dated(path: str | Path, workspace: Workspace) -> None:
    """A dump imported over several days must date its records: an undated record would be filed
    under every day of the range.

    Raises:
        ConfigError: a record without a date (the first one's line, and what to do).
    """
    from okgen.ingest.config import config_for
    from okgen.ingest.importer import read_dump

    cfg = config_for(workspace)
    first = next((r for r in read_dump(path, cfg.import_mapping, cfg.tz) if (r.error or "").startswith("missing_date")),
                 None)
    if first is not None:
        raise ConfigError(f"{path}: record {first.line} has no date, so a backfill cannot tell its day; "
                          "import a one-day dump with --date, or map its date field ([ingest] import_mapping)")


def run_range(start: dt.date, end: dt.date, workspace: Workspace, options: DailyOptions | None = None, *,
              force: bool = False, progress: bool = False, replay_dir: str | Path | None = None,
              on_result: Callable[[DailyResult], None] | None = None,
              on_options: Callable[[DailyOptions], None] | None = None) -> list[DailyResult]:
    """Backfill every date from ``start`` to ``end`` (inclusive), oldest first.

    A failed date is recorded and the next one runs; the results list every date's outcome.
    With ``replay_dir``, each date replays ``<replay_dir>/okgen-<date>.warc.gz``.
    ``on_result`` is called with each date's result as soon as that date is finished.
    """
    from okgen.ingest.warc import warc_path

    if end < start:
        raise ConfigError(f"--to {end} is before --from {start}")
    opts = options or DailyOptions.resolve(workspace)
    if opts.import_file and end > start:
        _check_dated(opts.import_file, workspace)
    out: list[DailyResult] = []
    d = start
    while d <= end:
        o = opts
        result = None
        if replay_dir is not None:
            wp = warc_path(Path(replay_dir), d)
            if not wp.is_file():
                result = DailyResult(date=d, run_id=0, status="failed", error=f"{wp}: no WARC capture for {d}")
            else:
                o = DailyOptions(**{**opts.__dict__, "replay": str(wp)})
        if result is None:
            try:
                result = run_daily(d, workspace, o, force=force, progress=progress, on_options=on_options)
            except OkgenError as e:
                log.error("%s failed: %s", d, e)
                result = DailyResult(date=d, run_id=0, status="failed", error=str(e))
        out.append(result)
        if on_result is not None:
            on_result(result)
        d += dt.timedelta(days=1)
    return out


def _keep_generator(opts: DailyOptions, previous: dict[str, Any] | None, date: dt.date,
                    force: bool = True) -> DailyOptions:
    """With no generator chosen, rebuild (``force``) or resume with the models the date was
    built or begun with (a day first made with an LLM is not silently made by the extractive
    generator), and with its questions per article and seed unless given: these are in the
    generation's run key, so a different value re-asks (and re-pays) every article."""
    if not previous:
        return opts
    # Questions per article, seed and budget unless given: the first two are in the run key (a
    # different value asks, and pays for, every article again), and a day begun under a budget
    # is not finished without one.
    kept: dict[str, Any] = {k: previous[k] for k in ("per_article", "seed", "max_cost")
                            if getattr(opts, k) is None and previous.get(k) is not None}
    # The windows and retrievers unless given: the windows make the snapshot's corpus, so a
    # resumed run that read the defaults built another snapshot than the one begun.
    for k in ("retrievers", "windows"):
        if not getattr(opts, f"{k}_chosen") and previous.get(k) and tuple(previous[k]) != tuple(getattr(opts, k)):
            kept[k] = tuple(previous[k])
            log.warning("%s was %s with %s %s: %s with them (pass --%s to change)", date,
                        "built" if force else "begun", k, ",".join(map(str, previous[k])),
                        "--force rebuilds" if force else "the rerun resumes", k)
    same_generator = not opts.generator_chosen or opts.generator == previous.get("generator")
    if previous.get("generator") and same_generator:
        # The models, each unless chosen: okgen.toml naming the day's generator does not drop
        # the validator and probes the day was begun with.
        kept["generator"] = previous["generator"]
        if not opts.validator_chosen and "validator" in previous:
            kept["validator"] = previous["validator"]
        if not opts.probes_chosen:
            kept["probes"] = tuple(previous.get("probes") or ())
        changed = [f"{k} {kept[k]}" for k in ("generator", "validator") if k in kept and kept[k] != getattr(opts, k)]
        if "probes" in kept and kept["probes"] != tuple(opts.probes):
            changed.append(f"probes {', '.join(kept['probes']) or 'none'}")
        if "max_cost" in kept:
            changed.append(f"budget ${kept['max_cost']}")
        if changed:
            log.warning("%s was %s with %s: %s with them (pass --generator, --validator, --probe or --max-cost to "
                        "change)", date, "built" if force else "begun", "; ".join(changed),
                        "--force rebuilds" if force else "the rerun resumes")
    return replace(opts, **kept)


def _keep_source(opts: DailyOptions, previous: dict[str, Any] | None, date: dt.date,
                 force: bool = True) -> DailyOptions:
    """With no source given (no ``--import``, ``--replay`` or ``--feeds``), rebuild (``force``)
    or resume from the news dump or capture the date was built from, when it is still there (a
    day first made from a dump is not silently rebuilt from the live feeds)."""
    if not previous or opts.import_file or opts.replay or (opts.feeds and not opts.feeds_from_config):
        return opts
    for key, flag in (("import_file", "--import"), ("replay", "--replay")):
        path = previous.get(key)
        if not path:
            continue
        if Path(path).is_file():
            log.warning("%s was %s with %s %s: %s it (pass --import, --replay or --feeds to change)", date,
                        "built" if force else "begun", flag, path, "--force re-reads" if force else "the rerun reads")
            # ... as it was read then: undated records of a dump taken as the date, or not.
            return replace(opts, **{key: str(path)}, import_undated=bool(previous.get("import_undated", True)))
        log.warning("%s was %s with %s %s, which is gone: %s the feeds", date, "built" if force else "begun", flag,
                    path, "--force reads" if force else "the rerun reads")
    return opts


def _local_path(ws: Workspace, recorded: str | None) -> str | None:
    """A snapshot folder a run recorded, in this workspace: a workspace copied or mounted
    elsewhere holds its own copy under the same name (the recorded path is absolute, and named
    the original's folder)."""
    if not recorded:
        return recorded
    p = Path(recorded)
    if not p.is_absolute():
        return str(ws.home / p)
    here = ws.snapshots_dir / p.name
    return str(here) if here.is_dir() else recorded


def _public(opts: DailyOptions) -> dict[str, Any]:
    """Options as recorded in the run (no secrets are in them: keys come from the environment);
    the dump or capture as an absolute path, so a later ``--force`` finds it from any folder."""
    out = {k: v for k, v in opts.__dict__.items()}
    for key in ("import_file", "replay"):
        if out.get(key):
            out[key] = str(Path(out[key]).resolve())
    return out


class _RunContext:
    """The stages of one run; each returns (status, counts)."""

    def __init__(self, ws: Workspace, state: RunState, run_id: int, date: dt.date, opts: DailyOptions,
                 progress: bool, timestamp: dt.datetime):
        self.ws, self.state, self.run_id, self.date, self.opts = ws, state, run_id, date, opts
        self.progress = progress
        self.timestamp = timestamp
        self.counts: dict[str, dict[str, Any]] = {}

    # -- ingest ---------------------------------------------------------------------------
    def stage_ingest(self) -> tuple[str, dict[str, Any]]:
        from okgen.ingest.pipeline import run_ingest

        o = self.opts
        feeds = None if (o.replay and o.feeds_from_config) else o.feeds
        summary = run_ingest(self.date, self.ws, feeds=feeds, replay=o.replay, import_file=o.import_file, progress=self.progress,
                             undated_on_date=o.import_undated)
        counts = summary.to_dict()
        if o.import_file:
            counts["feeds_hash"] = sha256_text(f"import:{sha256_file(o.import_file)}")
        return "done", counts

    # -- generate -------------------------------------------------------------------------
    def stage_generate(self) -> tuple[str, dict[str, Any]]:
        res = self._generate()
        f = res.funnel
        if res.stopped == "budget":
            spent = (f.get("usage") or {}).get("this_run_cost_usd", 0.0)
            raise OkgenError(f"the budget of ${self.opts.max_cost} (--max-cost or [generate] max_cost) was reached "
                             f"(${spent:.4f} spent by this run) with {res.pending} article(s) unfinished; "
                             "finished ones are kept: rerun (with a larger budget) to continue")
        if not res.complete:
            from okgen.generate.funnel import cause

            a = f["articles"]
            kinds = ", ".join(f"{k} {v}" for k, v in a.get("pending_by_reason", {}).items()) or res.stopped or "errors"
            raise OkgenError(f"{res.pending} article(s) could not be finished ({kinds})"
                             f"{cause(a.get('pending_by_reason', {}), a, '; last {kind} error: {msg}')}; "
                             "rerun to retry them (an article left so by errors of its own in "
                             "[generate] give_up_after runs, 3 by default, is then given up)")
        # A quiet day (no candidate survives the checks) is no failure: the day is done, with no
        # snapshot, and the later stages say why; a rerun does not retry it (--force does).
        return "done", {"kept": len(res.questions), "candidates": f.get("candidates"), "articles": f.get("articles"),
                        "generator": res.generator.model, "validator": res.validator.model if res.validator else None,
                        "usage": f.get("usage"), "run_key": res.run_key}

    def _generate(self):
        from okgen.generate.pipeline import DEFAULT_PER_ARTICLE, DEFAULT_SEED, run_generate

        o = self.opts
        return run_generate(
            self.date, self.ws, generator=o.generator, validator=o.validator, probes=o.probes,
            per_article=o.per_article or DEFAULT_PER_ARTICLE, concurrency=o.concurrency, max_cost=o.max_cost,
            use_cache=o.use_cache, seed=o.seed if o.seed is not None else DEFAULT_SEED, progress=self.progress,
        )

    def _quiet(self) -> dict[str, Any] | None:
        """The reason the later stages have nothing to do (no question kept), or None."""
        g = self.counts.get("generate", {})
        if g.get("kept", 1):
            return None
        n = (g.get("articles") or {}).get("total", 0)
        c = g.get("candidates") or 0
        return {"reason": f"no question kept ({c} candidate{'s' * (c != 1)} from {n} article{'s' * (n != 1)})"}

    # -- snapshot -------------------------------------------------------------------------
    def stage_snapshot(self) -> tuple[str, dict[str, Any]]:
        from okgen.signature import format_timestamp
        from okgen.snapshot.from_store import build_from_store
        from okgen.snapshot.store import Snapshot

        if (quiet := self._quiet()) is not None:
            return "skipped", quiet

        # A run killed after the build but before its checkpoint finds its own folder again.
        for p in sorted(self.ws.snapshots_dir.glob(f"{self.date}_{format_timestamp(self.timestamp)}_*")):
            if (p / "manifest.json").is_file():
                snap = Snapshot(p)
                break
        else:
            ingest = self.counts.get("ingest", {})
            snap = build_from_store(
                self.date, self.ws, self._generate(), windows=self.opts.windows, timestamp=self.timestamp,
                feeds_hash=ingest.get("feeds_hash"),
                extra={"ingest": {k: ingest.get(k) for k in ("mode", "config_hash", "stored_total")}},
            )
        return "done", {"signature": snap.manifest.signature, "short": snap.signature.short, "path": str(snap.path),
                        "questions": snap.manifest.counts["questions"], "articles": snap.manifest.counts["articles"]}

    # -- indexes --------------------------------------------------------------------------
    def stage_index(self) -> tuple[str, dict[str, Any]]:
        from okgen.retrieval.index import open_index
        from okgen.retrieval.windows import EmptyWindowError
        from okgen.snapshot.store import Snapshot

        if (quiet := self._quiet()) is not None:
            return "skipped", quiet
        if not self.opts.retrievers:
            return "skipped", {"reason": "no retrievers configured"}
        snap = Snapshot(_local_path(self.ws, self.counts["snapshot"]["path"]))
        built: dict[str, Any] = {}
        for name in self.opts.retrievers:
            for w in self.opts.windows:
                try:
                    idx = open_index(snap, name, w, self.ws)
                except EmptyWindowError as e:
                    built[f"{name}@{w}"] = f"empty: {e}"
                    continue
                built[f"{name}@{w}"] = {"docs": idx.num_docs, "folder": str(idx.folder)}
        return "done", {"indexes": built}

    # -- publish --------------------------------------------------------------------------
    def stage_publish(self) -> tuple[str, dict[str, Any]]:
        from okgen.snapshot.publish import publish
        from okgen.snapshot.store import Snapshot

        o = self.opts
        if (quiet := self._quiet()) is not None:
            return "skipped", quiet
        if not o.publish_to:
            return "skipped", {"reason": "no publish_to configured"}
        snap = Snapshot(_local_path(self.ws, self.counts["snapshot"]["path"]))
        entry = publish(snap, o.publish_to, self.ws, sign_key=o.sign_key, no_text=o.no_text)
        return "done", {"dest": o.publish_to, "archive": entry["archive"], "sha256": entry["sha256"], "signed": entry["signed"]}


def summarize(results: Sequence[DailyResult]) -> dict[str, int]:
    """Counts of outcomes for a backfill."""
    out: dict[str, int] = {}
    for r in results:
        out[r.status] = out.get(r.status, 0) + 1
    return out
