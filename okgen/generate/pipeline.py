"""``run_generate``: questions for one date's articles, persisted per article, resumable.

The run key hashes everything that determines the questions (date, agents with their spec
hashes and decoding, seed, questions per article, probe settings, okgen version). Finished
articles of that key are read back from the store and skipped; the rest are processed and
each is written as soon as it is done. The kept questions are then assembled from every
finished article of the date: near duplicates removed across the day, choices shuffled with
the seed so each answer position is used equally often. A rerun of a finished date makes no
call and returns the same questions.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import os
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from okgen import __version__
from okgen.errors import ConfigError, LockedError, NotFoundError, OkgenError
from okgen.generate import gates as quality_gates
from okgen.generate.agents import prompt_hash as hash_prompts
from okgen.generate.agents import resolve_agents_dir
from okgen.generate.checks import CHECKS_VERSION, DEDUP, Limits, dedup_features, near_duplicates
from okgen.generate.dayset import (
    ANSWERS,
    BALANCE,
    DEFAULT_MAX_ANSWER_REPEATS,
    DEFAULT_MAX_OUTLET_SHARE,
    RECENT,
    balance_answers,
    balance_outlets,
    outlet_caps,
    prior_fingerprint,
    recent_questions,
)
from okgen.generate.extractive import ExtractiveGenerator
from okgen.generate.funnel import build_funnel, render_funnel
from okgen.generate.positions import LETTERS, balanced_positions, place
from okgen.generate.records import ArticleResult, Candidate
from okgen.generate.runner import RunState, build_agents, own_failure, process_articles
from okgen.generate.store import GenerateStore
from okgen.hashing import sha256_json
from okgen.llm import Budget, PriceTable, run_sync
from okgen.schema import AgentInfo, Article, Question
from okgen.settings import Workspace

log = logging.getLogger(__name__)

DEFAULT_SEED = 1234
DEFAULT_PER_ARTICLE = 5
DEFAULT_POOL_DAYS = 3
DEFAULT_GIVE_UP_AFTER = 3
"""Runs an article may be left unfinished by an error of its own before it is given up."""


@dataclass
class GenerateResult:
    """The outcome of :func:`run_generate`.

    Attributes:
        date: the news date.
        questions: the kept questions (choices shuffled with the seed, positions balanced),
            sorted by article id and question id.
        funnel: counts at every stage, tokens and cost (JSON-ready; goes into the manifest).
        generator, validator, probes: agent identities for the snapshot.
        prompt_hash: hash of the agent specs and prompts used (and of the probes and questions per
            article when they are not the defaults).
        seed: the snapshot seed.
        run_key: the store key of this run's parameters.
        complete: every article of the date is finished.
        stopped: why the run stopped early (``budget``, ``errors``), or None.
    The ``candidates`` property gives every candidate of the date with its verdicts.
    """

    date: dt.date
    questions: list[Question]
    funnel: dict[str, Any]
    generator: AgentInfo
    validator: AgentInfo | None
    probes: tuple[AgentInfo, ...]
    prompt_hash: str
    seed: int
    run_key: str = ""
    complete: bool = True
    stopped: str | None = None
    _candidates: list[Candidate] | None = field(default=None, repr=False)
    _loader: Callable[[], list[Candidate]] | None = field(default=None, repr=False)

    @property
    def candidates(self) -> list[Candidate]:
        """Every candidate of the date with its verdicts (read from the store on first use
        when the result came from a stored run)."""
        if self._candidates is None:
            self._candidates = self._loader() if self._loader is not None else []
        return self._candidates

    @property
    def pending(self) -> int:
        """Articles not finished (rerun to finish them)."""
        return int(self.funnel["articles"]["pending"])

    def render_funnel(self) -> str:
        """The funnel as readable text."""
        return render_funnel(self.funnel)


def run_generate(
    date: dt.date,
    workspace: Workspace,
    articles: Sequence[Article] | None = None,
    *,
    generator: str = "extractive",
    validator: str | None = None,
    probes: Sequence[str] = (),
    per_article: int = DEFAULT_PER_ARTICLE,
    concurrency: int = 16,
    max_cost: float | None = None,
    use_cache: bool = True,
    seed: int = DEFAULT_SEED,
    config: dict[str, Any] | None = None,
    pool: Sequence[Article] = (),
    fresh: bool = False,
    drop_known: bool | None = None,
    agents_dir: str | Path | None = None,
    prices: Sequence[str | Path] = (),
    progress: bool = True,
    require_finished: bool = False,
) -> GenerateResult:
    """Generate, check, validate and probe questions for one date's articles.

    Args:
        date: the news date.
        workspace: where the store, cache and agents live.
        articles: the articles; those dated ``date`` get questions, all of them feed the
            extractive generator's distractors. None: read the date's articles (and those of
            the ``pool_days - 1`` days before, for distractors) from the article store.
        generator: ``extractive`` or ``openai/MODEL[,base_url=URL,key=value...]``.
        validator: ``openai/MODEL...``, or None / ``none``.
        probes: freshness probe model specs (``openai/MODEL...``).
        per_article: questions asked per article.
        concurrency: LLM calls in flight at once (all agents together).
        max_cost: USD budget for this invocation's calls; reaching it stops cleanly (finished
            articles are kept; ``stopped == "budget"``; rerun to continue).
        use_cache: read and write the LLM response cache (``--no-cache`` turns it off).
        seed: snapshot seed (generation seed, distractor sampling, choice shuffling).
        config: the workspace configuration (``okgen.toml`` as a dict); None reads it. Its
            ``[generate]`` table may set ``agents_dir``, ``drop_known``, ``pool_days``,
            ``timeout``, ``max_retries``, ``give_up_after``; its ``[prices]`` table extends the price table.
        pool: more articles for distractors only.
        fresh: forget this run's finished articles and start over.
        drop_known: drop questions every probe answers (None: the probe spec decides).
        agents_dir: agents folder (default: the workspace's ``agents/``, else the packaged one).
        prices: extra price files (TOML).
        progress: show a progress bar on stderr (when it is a terminal).
        require_finished: only read a finished run: raise instead of calling a model when any
            article has no finished questions under these settings (``okgen snapshot build``).

    Raises:
        NotFoundError: no article is dated ``date``.
        ConfigError: bad generator/validator/probe spec or configuration.
        LockedError: another process is generating this date in this workspace.
    """
    t0 = time.perf_counter()
    cfg = workspace.config() if config is None else config
    gcfg = dict(cfg.get("generate", {}) or {})
    pool_days = int(gcfg.get("pool_days", DEFAULT_POOL_DAYS))
    targets, pool_articles = _articles(date, workspace, articles, pool, pool_days)
    if not targets:
        if articles:  # an --articles file of other days: say which, not "ingest first"
            days = sorted({str(a.date) for a in articles})
            shown = ", ".join(days[:5]) + (f" and {len(days) - 5} more" if len(days) > 5 else "")
            raise NotFoundError(f"none of the {len(articles)} given articles is dated {date}: they are dated {shown}")
        raise NotFoundError(f"no articles dated {date} (run `okgen ingest --date {date}` first)")
    cfg_dir = gcfg.get("agents_dir")
    if not agents_dir and cfg_dir and not Path(str(cfg_dir)).expanduser().is_absolute():
        cfg_dir = workspace.home / str(cfg_dir)  # okgen.toml paths are relative to the workspace, not the cwd
    root = resolve_agents_dir(workspace, agents_dir or cfg_dir)
    budget = Budget(max_cost)
    price_table = PriceTable.default(extra=cfg.get("prices") or None, files=list(prices))
    cache = None  # opened once there is work to do (a finished date needs none)
    client_options = {k: gcfg[k] for k in ("timeout", "max_retries") if k in gcfg}
    agents = build_agents(root, generator=generator, validator=validator, probes=probes, seed=seed,
                          concurrency=concurrency, cache=None, prices=price_table, budget=budget,
                          drop_known=drop_known if drop_known is not None else gcfg.get("drop_known"),
                          client_options=client_options)
    if budget.limit is not None:
        unpriced = sorted({c.model for c in agents.clients if hasattr(c, "priced") and not c.priced()})
        if unpriced:
            run_sync(agents.aclose())
            raise ConfigError(f"--max-cost needs a price for every model, and {', '.join(unpriced)} "
                              f"{'has' if len(unpriced) == 1 else 'have'} none: add "
                              f"[prices.\"{unpriced[0]}\"] input/output (USD per 1M tokens) to okgen.toml or a "
                              "--prices file (0 for a free local server)")
    if len(agents.probes) == 1 and agents.drop_known:
        # A probe that knows nothing still picks the right letter 1 time in 4.
        log.warning("one freshness probe drops every question it answers right, about 1 good question in 4 "
                    "by chance alone: use two or more probes to drop, or --flag-known to only flag")
    gates_on = bool(gcfg.get("quality_gates", quality_gates.DEFAULT_ON))
    gen_info = agents.generator.info
    val_info = agents.validator.info if agents.validator else None
    probe_infos = tuple(p.info for p in agents.probes)
    params = {
        "date": date.isoformat(), "generator": gen_info.model_dump(mode="json"),
        "validator": val_info.model_dump(mode="json") if val_info else None,
        "probes": [p.model_dump(mode="json") for p in probe_infos], "drop_known": agents.drop_known,
        "per_article": per_article, "seed": seed, "endpoints": agents.endpoints, "okgen": __version__,
        "gates": quality_gates.GATES_VERSION if gates_on else 0, "checks": CHECKS_VERSION,
    }
    if isinstance(agents.generator, ExtractiveGenerator):
        # Its distractors come from the pool's other articles: another pool is another run.
        params["pool"] = sha256_json(sorted([a.id, a.text_sha256] for a in pool_articles))
    run_key = sha256_json(params)[:32]
    share = float(gcfg.get("max_outlet_share", DEFAULT_MAX_OUTLET_SHARE))
    if not 0 < share <= 1:
        run_sync(agents.aclose())
        raise ConfigError(f"[generate] max_outlet_share must be in (0, 1], got {share}")
    raw = gcfg.get("max_answer_repeats", DEFAULT_MAX_ANSWER_REPEATS)
    repeats = int(raw) if not isinstance(raw, bool) and str(raw).strip().isdigit() else -1
    if repeats < 0:
        run_sync(agents.aclose())
        raise ConfigError(f"[generate] max_answer_repeats must be a whole number >= 0 (0: no cap), got {raw!r}")
    raw = gcfg.get("give_up_after", DEFAULT_GIVE_UP_AFTER)
    give_up = int(raw) if not isinstance(raw, bool) and str(raw).strip().isdigit() else -1
    if give_up < 0:
        run_sync(agents.aclose())
        raise ConfigError(f"[generate] give_up_after must be a whole number >= 0 (0: never give up), got {raw!r}")
    # The signature's `prompt`: the agents' files, and what else shapes the questions that no other
    # key names (the probes, by model and spec, whether they drop, the questions asked per article,
    # the gates, the day's caps, the distractor pool's days) when it is not the default (a run
    # with the defaults keeps the agents' hash alone).
    p_hash = hash_prompts(agents.specs)
    changed = {k: v for k, v, default in (
        ("quality_gates", gates_on, quality_gates.DEFAULT_ON), ("max_outlet_share", share, DEFAULT_MAX_OUTLET_SHARE),
        ("max_answer_repeats", repeats, DEFAULT_MAX_ANSWER_REPEATS),
        ("pool_days", pool_days if isinstance(agents.generator, ExtractiveGenerator) else DEFAULT_POOL_DAYS,
         DEFAULT_POOL_DAYS)) if v != default}
    if probe_infos or per_article != DEFAULT_PER_ARTICLE or changed:
        p_hash = sha256_json({"agents": p_hash, "per_article": per_article,
                              "probes": [[p.model, p.spec_hash] for p in probe_infos],
                              "drop_known": agents.drop_known if probe_infos else None,
                              **({"settings": changed} if changed else {})})
    prior = recent_questions(workspace, date)
    day = dict(prior=prior, max_outlet_share=share, max_answer_repeats=repeats)
    fingerprint = _fingerprint(targets, prior, share, repeats)
    base = dict(date=date, generator=gen_info, validator=val_info, probes=probe_infos, prompt_hash=p_hash,
                seed=seed, run_key=run_key)
    state = RunState()
    try:
        with _lock(workspace, date), GenerateStore(workspace.db_path) as store:
            if fresh:
                log.info("forgot %d finished articles of run %s", store.clear(run_key), run_key[:12])
            store.record_invocation(run_key, {  # how to start this run again (okgen snapshot build)
                "generator": generator, "validator": validator, "probes": list(probes), "per_article": per_article,
                "seed": seed, "drop_known": drop_known, "agents_dir": str(root) if (agents_dir or cfg_dir) else None,
                "articles_given": articles is not None})
            hashes = store.finished_hashes(run_key)
            todo = [a for a in targets if hashes.get(a.id) != a.text_sha256]
            if require_finished and todo:
                run_sync(agents.aclose())
                raise OkgenError(f"{len(todo)} of the {len(targets)} articles of {date} have no finished questions "
                                 "under these settings (new or changed articles, or okgen, its gates or the agents "
                                 f"changed since the run): finish them with `okgen generate --date {date}`, then build")
            resumed = len(targets) - len(todo)
            if not todo:
                hit = store.assembly(run_key, fingerprint)
                if hit is not None:  # a finished date: one read
                    run_sync(agents.aclose())
                    return _from_assembly(hit, base, workspace, targets, t0, day)
            store.start_run(run_key, date.isoformat(), params)
            done = store.finished(run_key)
            finished = {a.id: done[a.id] for a in targets if a.id in done and done[a.id].text_sha256 == a.text_sha256}
            ext_pool = None
            if todo:
                log.info("generating %s: %d articles (%d finished earlier), generator %s", date, len(todo), resumed, gen_info.model)
                if use_cache and agents.clients:
                    from okgen.models.cache import ResponseCache, default_cache_path

                    cache = ResponseCache(default_cache_path(workspace.cache_dir))
                    for client in agents.clients:
                        client.cache = cache
                if isinstance(agents.generator, ExtractiveGenerator):
                    ext_pool = agents.generator.build_pool(pool_articles, date, progress=progress)
                _process(todo, agents, store, run_key, finished, state, per_article, seed, concurrency,
                         use_cache, ext_pool, progress and len(todo) > 1, date, finish_first=budget.limit is not None,
                         gates=gates_on)
                _give_up(todo, store, run_key, finished, state, give_up)
            else:
                run_sync(agents.aclose())
            results = [finished[a.id] for a in targets if a.id in finished]
            questions, cands, survivors = _assemble(results, {a.id: a for a in targets}, date, seed,
                                                    gen_info, val_info, **day)
            positions = Counter(LETTERS[q.answer_index] for q in questions)
            funnel = build_funnel(date, len(targets), results, state.pending, survivors, dict(positions),
                                  validator=val_info is not None, probes=len(probe_infos), stopped=state.stopped,
                                  resumed=resumed, run_usage=state.usage, pending_errors=state.last_error)
            funnel["quality_gates"] = gates_on
            # What shaped the day's questions besides the agents (the signature's `prompt` hashes
            # those set otherwise than the default): listed in the snapshot's manifest with the funnel.
            funnel["settings"] = {"per_article": per_article, "quality_gates": gates_on, "max_outlet_share": share,
                                  "max_answer_repeats": repeats, "pool_days": pool_days}
            if ext_pool is not None:  # why the parse's (sentence, answer) pairs made no question
                funnel["extractive_reasons"] = dict(ext_pool.reasons.most_common())
            if agents.clients:  # the structured-output mode each model ended on (learnt from its server)
                funnel["output_modes"] = agents.output_modes()
            if funnel["articles"]["pending"] == 0:
                store.save_assembly(run_key, fingerprint, _QUESTIONS.dump_json(questions).decode(), funnel)
    finally:
        if cache is not None:
            cache.close()
    funnel["seconds"] = round(time.perf_counter() - t0, 3)
    funnel["run_key"] = run_key
    log.info("generated %s: %d questions kept from %d candidates", date, len(questions), funnel["candidates"])
    return GenerateResult(questions=questions, funnel=funnel, complete=funnel["articles"]["pending"] == 0,
                          stopped=state.stopped, _candidates=cands, **base)


_QUESTIONS = TypeAdapter(list[Question])


def _fingerprint(targets: Sequence[Article], prior: Sequence[tuple[str, ...]] = (), share: float = 1.0,
                 repeats: int = DEFAULT_MAX_ANSWER_REPEATS) -> str:
    """What a stored assembly depends on besides the run key: the articles and their texts, the
    recent snapshots' questions, the outlet cap and the answer cap."""
    return sha256_json([sorted((a.id, a.text_sha256) for a in targets), prior_fingerprint(prior), share, repeats])


def _from_assembly(hit: tuple[str, dict[str, Any]], base: dict[str, Any], ws: Workspace,
                   targets: Sequence[Article], t0: float, day: dict[str, Any]) -> GenerateResult:
    questions_json, funnel = hit
    funnel["articles"]["resumed"] = len(targets)
    u = funnel["usage"]  # this run made no call: none of the stored run's own counts is this run's
    u.update(this_run_calls=0, this_run_cost_usd=0.0, this_run_cached_calls=0, this_run_retries=0, this_run_errors={})
    funnel["seconds"] = round(time.perf_counter() - t0, 3)
    funnel["run_key"] = base["run_key"]
    ids = {a.id for a in targets}
    run_key = base["run_key"]

    def load() -> list[Candidate]:
        with GenerateStore(ws.db_path) as st:
            done = st.finished(run_key)
        return _assemble([done[i] for i in sorted(done) if i in ids], {a.id: a for a in targets}, base["date"],
                         base["seed"], base["generator"], base["validator"], **day)[1]

    log.info("%s was generated before (run %s): %d questions", base["date"], run_key[:12], funnel["kept"])
    return GenerateResult(questions=_QUESTIONS.validate_json(questions_json), funnel=funnel, complete=True,
                          stopped=None, _candidates=None, _loader=load, **base)


def _process(todo: list[Article], agents: Any, store: GenerateStore, run_key: str, finished: dict[str, ArticleResult],
             state: RunState, per_article: int, seed: int, concurrency: int, use_cache: bool, ext_pool: Any,
             show: bool, date: dt.date, finish_first: bool = False, gates: bool = True) -> None:
    from okgen.progress import bar

    with (bar(total=len(todo), desc=f"generate {date}", unit="article") if show else _NoBar()) as pbar:
        def on_done(result: ArticleResult) -> None:
            store.save(run_key, result)  # persisted before anything else can go wrong
            finished[result.article_id] = result
            for c in result.candidates:
                if c.kept:  # computed now, while calls are in flight, rather than at the end
                    dedup_features(c.question, c.answer)
            pbar.update(1)

        run_sync(process_articles(todo, agents, n=per_article, seed=seed, concurrency=concurrency,
                                  use_cache=use_cache, pool=ext_pool, on_done=on_done, state=state,
                                  finish_first=finish_first, limits=Limits(gates=gates)))


def _give_up(todo: Sequence[Article], store: GenerateStore, run_key: str, finished: dict[str, ArticleResult],
             state: RunState, after: int) -> None:
    """Count a run against each article it left unfinished by an error of its own, and give up
    those left so ``after`` runs (0: never): recorded as failed, with their last error, so the
    date can finish without them. Only a run that did not stop for errors counts, and only when the server answered other articles of the date (in this run or
    an earlier one): a server down for every article says nothing about one."""
    if not after or state.stopped == "errors" or not any(r.status == "ok" for r in finished.values()):
        return
    for a in todo:
        kind, message = state.left.get(a.id, ("", ""))
        if not kind or not own_failure(kind):
            continue
        runs = store.count_attempt(run_key, a.id, a.text_sha256)
        if runs < after:
            continue
        result = ArticleResult(article_id=a.id, text_sha256=a.text_sha256, status="failed", error_kind=kind,
                               error=f"given up after {runs} runs left it unfinished: {message}")
        store.save(run_key, result)
        finished[a.id] = result
        state.pending[kind] -= 1
        if not state.pending[kind]:
            del state.pending[kind]
        log.warning("article %s given up after %d runs left it unfinished (%s: %s); the date goes on without it "
                    "([generate] give_up_after)", a.id, runs, kind, message[:200])


class _NoBar:
    def __enter__(self) -> _NoBar:
        return self

    def __exit__(self, *exc: Any) -> None:
        pass

    def update(self, n: int = 1) -> None:
        pass


def _assemble(results: Sequence[ArticleResult], by_id: dict[str, Article], date: dt.date, seed: int,
              gen: AgentInfo, val: AgentInfo | None, prior: Sequence[tuple[str, ...]] = (),
              max_outlet_share: float = 1.0, max_answer_repeats: int = 0
              ) -> tuple[list[Question], list[Candidate], list[Candidate]]:
    """Dedupe across the day and against the recent snapshots, cap each outlet's share, and
    build the final questions with balanced positions."""
    cands = [c for r in results for c in sorted(r.candidates, key=lambda c: c.index)]
    survivors = [c for c in cands if c.kept]
    dups = near_duplicates([(c.question, c.answer) for c in survivors], prior=[(p[0], p[1]) for p in prior],
                           evidence=[c.evidence for c in survivors],
                           prior_evidence=[p[3] if len(p) > 3 else "" for p in prior])
    deduped: list[Candidate] = []
    for i, c in enumerate(survivors):
        j = dups.get(i)
        if j is not None and j >= 0:
            other = survivors[j]
            c.add(DEDUP, False, reason=f"near duplicate of {Question.make_id(other.article_id, other.question)}")
            continue
        c.add(DEDUP, True)
        c.add(RECENT, j is None, reason=None if j is None else f"near duplicate of {prior[-1 - j][2]}")
        if j is None:
            deduped.append(c)
    sources = [by_id[c.article_id].source for c in deduped]
    keep = balance_outlets(deduped, sources, max_outlet_share, seed)
    caps = outlet_caps(sources, max_outlet_share)
    kept: list[Candidate] = []
    for c, s, ok in zip(deduped, sources, keep):
        c.add(BALANCE, ok, reason=None if ok else f"{s} already has its {caps[s]} questions "
                                                  f"(max_outlet_share {max_outlet_share:g})")
        if ok:
            kept.append(c)
    answer_ok = balance_answers([c.answer for c in kept], [by_id[c.article_id].source for c in kept],
                                max_answer_repeats, seed)
    for c, ok in zip(list(kept), answer_ok):
        if not ok:
            c.add(ANSWERS, False, reason=f"the day already has {max_answer_repeats} questions answered "
                                         f"{c.answer.strip()!r} (max_answer_repeats {max_answer_repeats})")
            kept.remove(c)
    kept.sort(key=lambda c: (c.article_id, Question.make_id(c.article_id, c.question)))
    positions = balanced_positions(len(kept), seed)
    questions = []
    for c, pos in zip(kept, positions):
        qid = Question.make_id(c.article_id, c.question)
        choices, idx = place(c.answer.strip(), c.distractors(), pos, seed, qid)
        a = by_id[c.article_id]
        questions.append(Question(
            id=qid, article_id=c.article_id, date=date, source=a.source, question=c.question, choices=choices,
            answer_index=idx, answer=choices[idx], short_answer=c.short_answer, rationale=c.rationale,
            evidence=c.evidence, generator=gen.model, validator=val.model if val else None,
            verdicts=tuple(c.verdicts), flags=tuple(c.flags)))
    return questions, cands, survivors


def _articles(date: dt.date, ws: Workspace, articles: Sequence[Article] | None, pool: Sequence[Article],
              pool_days: int) -> tuple[list[Article], list[Article]]:
    if articles is None:
        try:
            from okgen.ingest.store import ArticleStore
        except ImportError:
            raise NotFoundError("the article store (okgen.ingest) is not available: pass articles explicitly") from None
        with ArticleStore(ws.db_path) as st:
            given = list(st.articles_for_date(date))
            for d in range(1, max(1, pool_days)):
                given += list(st.articles_for_date(date - dt.timedelta(days=d)))
    else:
        given = list(articles)
    seen: dict[str, Article] = {}
    for a in [*given, *pool]:
        seen.setdefault(a.id, a)
    targets = sorted((a for a in given if a.date == date), key=lambda a: a.id)
    ids = {a.id for a in targets}
    if len(ids) != len(targets):
        targets = list({a.id: a for a in targets}.values())
    return targets, sorted(seen.values(), key=lambda a: a.id)


@contextlib.contextmanager
def _lock(ws: Workspace, date: dt.date) -> Iterator[None]:
    """Hold an exclusive lock on generating ``date`` in this workspace (POSIX)."""
    path = ws.data_dir / "locks" / f"generate-{date.isoformat()}.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: no lock
        yield
        return
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise LockedError(f"another okgen process is generating {date} in {ws.home}") from None
        yield
    finally:
        os.close(fd)
