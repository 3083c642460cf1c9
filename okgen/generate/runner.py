"""Building a run's agents from specs, and processing articles concurrently.

Each article goes generator -> checks -> validator (one call per surviving candidate) ->
probes (one call per candidate and probe) and is handed to ``on_done`` as one
:class:`ArticleResult`, which the pipeline persists at once. All LLM calls of the run share
one limit of ``concurrency`` calls in flight, generator calls first (:class:`PriorityLimiter`);
at most ``4 x concurrency`` articles are open at a time, so finished articles are written
steadily (a kill loses little) while the call limit stays saturated.
"""

from __future__ import annotations

import asyncio
import heapq
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from okgen.errors import ConfigError
from okgen.generate.agents import AgentSpec, load_agent
from okgen.generate.checks import Limits, check_candidate
from okgen.generate.extractive import ExtractiveGenerator, ExtractivePool
from okgen.generate.gates import GateWorker, apply_gates
from okgen.generate.llm_generator import GenOutcome, LLMGenerator, decoding_from
from okgen.generate.probe import Probe, apply_probes
from okgen.generate.records import ArticleResult, Usage
from okgen.generate.text import normalize
from okgen.generate.validator import LLMValidator
from okgen.llm import DECODING_OPTIONS, Budget, ChatResult, PriceTable, chat_model
from okgen.models.base import parse_model_spec
from okgen.models.cache import ResponseCache
from okgen.schema import Article

log = logging.getLogger(__name__)

EXTRACTIVE_NAMES = ("extractive", "extractive-v2")
MODEL_BACKENDS = ("openai/", "hf/", "vllm/")
# Articles open at once, per call slot: enough for the generator calls to run well ahead of
# validation, few enough that finished articles are written steadily.
OPEN_ARTICLES = 4
# Articles started per event-loop turn at the start of a run, for this many turns.
START_WAVE = 16
START_WAVES = 16


@dataclass
class Agents:
    """The agents of one run."""

    generator: ExtractiveGenerator | LLMGenerator
    validator: LLMValidator | None = None
    probes: list[Probe] = field(default_factory=list)
    specs: list[AgentSpec] = field(default_factory=list)
    drop_known: bool = True
    endpoints: dict[str, Any] = field(default_factory=dict)

    @property
    def clients(self) -> list[Any]:
        """Every LLM client of the run."""
        out = [a.client for a in (self.generator, self.validator) if a is not None and hasattr(a, "client")]
        return out + [p.client for p in self.probes]

    def output_modes(self) -> dict[str, str]:
        """Role -> the structured-output mode its model used (``structured``, ``json``, ``text``, ``guided``)."""
        roles = [("generator", self.generator), ("validator", self.validator)]
        roles += [(f"probe{i}", p) for i, p in enumerate(self.probes)]
        return {r: a.client.mode for r, a in roles if a is not None and hasattr(a, "client")}

    async def aclose(self) -> None:
        """Close every client's connections."""
        for c in self.clients:
            await c.aclose()


def build_agents(root: Any, *, generator: str, validator: str | None, probes: Sequence[str], seed: int,
                 concurrency: int, cache: ResponseCache | None, prices: PriceTable, budget: Budget,
                 drop_known: bool | None, client_options: dict[str, Any] | None = None) -> Agents:
    """Load the specs and create the agents named by the run's options.

    Raises:
        ConfigError: an unknown generator, a malformed model spec, unknown spec options.
    """
    kw = dict(concurrency=concurrency, cache=cache, prices=prices, budget=budget, **(client_options or {}))
    endpoints: dict[str, Any] = {}

    loaded: dict[str, Any] = {}

    def llm(spec_str: str, role: str) -> tuple[Any, dict[str, str]]:
        ms = parse_model_spec(spec_str)
        # One in-process model serves every role that names it (decoding options apart).
        key = repr((ms.backend, ms.model, sorted((k, str(v)) for k, v in ms.options.items() if k not in DECODING_OPTIONS)))
        if ms.backend == "openai" or key not in loaded:
            loaded[key] = chat_model(ms, **kw)[0]
        client = loaded[key]
        endpoints[role] = client.endpoint
        return client, {k: str(v) for k, v in ms.options.items() if k in DECODING_OPTIONS}

    specs: list[AgentSpec] = []
    gen_name = (generator or "extractive").strip()
    if gen_name in EXTRACTIVE_NAMES:
        spec = load_agent("extractive", root)
        gen: ExtractiveGenerator | LLMGenerator = ExtractiveGenerator(spec, seed)
    elif gen_name.startswith(MODEL_BACKENDS):
        spec = load_agent("generator", root)
        client, rest = llm(gen_name, "generator")
        gen = LLMGenerator(spec, client, decoding_from(spec, rest, seed))
    else:
        raise ConfigError(f"unknown generator {gen_name!r}: use 'extractive', 'openai/MODEL[,base_url=URL,...]', "
                          "'hf/PATH' or 'vllm/ID'")
    specs.append(spec)
    val = None
    if not is_off(validator):
        if not validator.startswith(MODEL_BACKENDS):
            raise ConfigError(f"unknown validator {validator!r}: use 'openai/MODEL[,base_url=URL,...]', 'hf/PATH', "
                              "'vllm/ID' or 'none'")
        vspec = load_agent("validator", root)
        client, rest = llm(validator, "validator")
        val = LLMValidator(vspec, client, decoding_from(vspec, rest, seed))
        specs.append(vspec)
    plist: list[Probe] = []
    probes = [p for p in probes if not is_off(p)]  # "--probe none" turns off the probes of okgen.toml
    if probes:
        pspec = load_agent("probe", root)
        specs.append(pspec)
        if drop_known is None:
            drop_known = bool(pspec.section("options").get("drop_known", True))
        for i, p in enumerate(probes):
            client, rest = llm(p, f"probe{i}")
            plist.append(Probe(pspec, client, decoding_from(pspec, rest, seed)))
        names = [p.name for p in plist]
        for i, p in enumerate(plist):  # one model probed twice (two servers, two temperatures): keep the verdicts apart
            if names.count(names[i]) > 1:
                p.label = f"{names[i]}#{names[: i + 1].count(names[i])}"
    return Agents(gen, val, plist, specs, bool(drop_known) if drop_known is not None else True, endpoints)


def is_off(spec: str | None) -> bool:
    """True for "no agent": None, "", "none", "no", "off"."""
    return not spec or spec.strip().lower() in ("none", "no", "off")


class PriorityLimiter:
    """A run-wide limit on calls in flight where waiting calls go in priority order.

    By default generator calls (priority 0) go before validator and probe calls (priority 1): every
    article's generation is then under way early, and the end of the run is independent
    validation calls that keep every slot busy, instead of a chain of generate-then-validate
    calls for the last articles with slots idle.

    Use ``async with limiter.at(priority):``.
    """

    def __init__(self, slots: int):
        self.free = max(1, slots)
        self._waiters: list[tuple[int, int, asyncio.Future[None]]] = []
        self._seq = 0

    def at(self, priority: int) -> _Slot:
        """An async context manager holding one slot at ``priority`` (lower goes first)."""
        return _Slot(self, priority)

    async def acquire(self, priority: int) -> None:
        """Wait for a slot; waiters are served by priority, then in arrival order."""
        if self.free > 0 and not self._waiters:
            self.free -= 1
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._seq += 1
        heapq.heappush(self._waiters, (priority, self._seq, fut))
        try:
            await fut
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled():
                self.release()  # the slot was handed over just as we were cancelled
            else:
                self._waiters = [w for w in self._waiters if w[2] is not fut]
                heapq.heapify(self._waiters)
            raise

    def release(self) -> None:
        """Give a slot back (straight to the first waiter, if any)."""
        while self._waiters:
            _, _, fut = heapq.heappop(self._waiters)
            if not fut.done():
                fut.set_result(None)  # the slot passes straight to the next waiter
                return
        self.free += 1


class _Slot:
    def __init__(self, limiter: PriorityLimiter, priority: int):
        self.limiter = limiter
        self.priority = priority

    async def __aenter__(self) -> None:
        await self.limiter.acquire(self.priority)

    async def __aexit__(self, *exc: Any) -> None:
        self.limiter.release()


def own_failure(kind: str) -> bool:
    """Whether an article left unfinished by ``kind`` may be failing by itself (``give_up_after``
    gives such an article up): a server error (HTTP 500), a client error its request alone
    draws (400, 413, 422...), a broken reply, okgen's own bug on it. Not what a server down or
    busy gives every request (502, 503, 504, timeouts, refused connections, 408, 409, 429), nor
    what a setup gives every request (401, 402, 403, 404: a key, a payment, a model gone), nor
    the budget: an outage over a few reruns must not give up the articles left."""
    if kind in ("http_500", "bad_response", "internal"):
        return True
    return kind.startswith("http_4") and kind not in ("http_401", "http_402", "http_403", "http_404", "http_408",
                                                       "http_409", "http_429")


@dataclass
class RunState:
    """Progress of one invocation (shared by the article tasks)."""

    pending: dict[str, int] = field(default_factory=dict)
    stopped: str | None = None
    usage: Usage = field(default_factory=Usage)
    consecutive_failures: int = 0
    last_error: dict[str, str] = field(default_factory=dict)
    """The latest message of each kind that left an article unfinished (for the user)."""
    done: int = 0
    """Articles this invocation finished."""
    left: dict[str, tuple[str, str]] = field(default_factory=dict)
    """Articles this invocation tried and left unfinished: article id -> (kind, message)."""


async def process_articles(articles: Sequence[Article], agents: Agents, *, n: int, seed: int,
                           concurrency: int, use_cache: bool, pool: ExtractivePool | None,
                           on_done: Callable[[ArticleResult], None], state: RunState,
                           limits: Limits = Limits(), breaker: int | None = None, finish_first: bool = False) -> None:
    """Process articles concurrently, calling ``on_done`` for each finished one.

    With ``finish_first`` (a budget is set) waiting validator and probe calls go before new
    generator calls, so money goes into finishing the articles already started rather than
    into starting new ones the budget may leave unfinished.

    Articles left unfinished (transient errors, budget, an early stop) are counted in
    ``state.pending`` by reason; ``state.stopped`` says why the run stopped early: ``budget`` (a
    call did not fit the budget with no other call in flight: see :class:`okgen.llm.Budget`) or
    ``errors`` (``breaker`` articles in a row left unfinished, or a model's server never answered).
    """
    limiter = PriorityLimiter(concurrency)
    gen_priority = 1 if finish_first else 0
    open_articles = asyncio.Semaphore(max(2, OPEN_ARTICLES * concurrency))
    breaker = breaker or max(10, 2 * concurrency)
    # An LLM run gates in a worker thread while its calls are in flight; the offline generator
    # parses on this thread, and one spaCy pipeline is not shared between two threads at once.
    # Under a budget (finish_first) an article's validator calls must be queued before the next
    # generator calls take the free slots, so the gates run inline there: waiting on the worker
    # let new articles spend the money meant to finish started ones.
    gates = None if isinstance(agents.generator, ExtractiveGenerator) or not limits.gates or finish_first \
        else GateWorker()
    if gates is not None:
        gates.warm()  # the pipeline loads while the first generator calls are out

    async def one(i: int, a: Article) -> None:
        # The first articles start in waves, one event-loop turn apart: a turn runs every ready
        # task before it polls the sockets, so starting all at once would hold back the first
        # requests until every article's first request had been prepared.
        for _ in range(min(i, START_WAVES * START_WAVE) // START_WAVE):
            await asyncio.sleep(0)
        async with open_articles:
            if state.stopped:
                state.pending[state.stopped] = state.pending.get(state.stopped, 0) + 1
                return
            try:
                result, transient = await _article(a, agents, n=n, seed=seed, use_cache=use_cache, pool=pool,
                                                   limiter=limiter, limits=limits, state=state, gen_priority=gen_priority,
                                                   gates=gates)
            except ConfigError:
                raise  # a bad agent spec or prompt (an unknown placeholder): the whole run is wrong
            except Exception as e:  # a bug on one article must not sink the others
                state.last_error["internal"] = f"{type(e).__name__}: {e}"
                log.warning("article %s failed: %s: %s", a.id, type(e).__name__, e, exc_info=log.isEnabledFor(logging.DEBUG))
                result, transient = None, "internal"
            if result is None:
                kind = transient or "unknown"
                state.pending[kind] = state.pending.get(kind, 0) + 1
                state.left[a.id] = (kind, state.last_error.get(kind, ""))
                state.consecutive_failures += 1
                if state.stopped is not None:
                    return
                if kind == "budget":
                    state.stopped = "budget"
                    budget = next((c.budget for c in agents.clients), None)
                    log.warning("budget reached%s: no new calls; finished articles are kept",
                                f" ({budget.describe()})" if budget is not None else "")
                elif kind == "unreachable":  # a wrong base_url or a server not started: every call would fail
                    state.stopped = "errors"
                    state.last_error["errors"] = state.last_error.get(kind, "")
                    log.error("stopping: a model's server never answered (the articles are left for a rerun)")
                elif state.consecutive_failures >= breaker:
                    state.stopped = "errors"
                    state.last_error["errors"] = (f"{state.consecutive_failures} articles in a row failed, the last "
                                                  f"with {kind}: {state.last_error.get(kind, '')}")
                    log.error("%d articles in a row failed (last: %s); stopping", state.consecutive_failures, kind)
                return
            state.consecutive_failures = 0
            state.done += 1
            on_done(result)

    try:
        await asyncio.gather(*(one(i, a) for i, a in enumerate(articles)))
    finally:
        await agents.aclose()


async def _article(a: Article, agents: Agents, *, n: int, seed: int, use_cache: bool, pool: ExtractivePool | None,
                   limiter: PriorityLimiter, limits: Limits, state: RunState,
                   gen_priority: int = 0, gates: GateWorker | None = None) -> tuple[ArticleResult | None, str | None]:
    gen = agents.generator
    if isinstance(gen, ExtractiveGenerator):
        out = GenOutcome(candidates=gen.generate(a, n, pool if pool is not None else gen.build_pool([a], a.date)))
        for c in out.candidates:
            c.add("schema", True)
            c.add("question_count", True)
        out.short = len(out.candidates) < n
    else:
        out = await gen.agenerate(a, n, use_cache=use_cache, limiter=limiter.at(gen_priority))
        state.usage.merge(out.usage)
    if out.transient:
        return _leave(state, out.error_kind, out.error or "")
    result = ArticleResult(article_id=a.id, text_sha256=a.text_sha256, status="failed" if out.error_kind else "ok",
                           error_kind=out.error_kind, error=out.error, short=out.short, truncated=out.truncated,
                           candidates=out.candidates)
    if out.usage.calls:
        result.usage["generator"] = out.usage
    if out.error_kind:
        return result, None
    article_norm = normalize(f"{a.title}\n{a.text}")
    for c in result.candidates:
        check_candidate(c, article_norm, limits)
    if limits.gates:  # the quality gates shared by every generator
        if gates is not None:
            await gates.apply(a, result.candidates)
        else:
            apply_gates(a, result.candidates)
    alive = [c for c in result.candidates if c.kept]
    if agents.validator is not None and alive:
        res = await asyncio.gather(*(agents.validator.ajudge(a, c, seed, use_cache=use_cache, limiter=limiter.at(1 - gen_priority)) for c in alive))
        usage = _usage(res, state)
        bad = next((r for r in res if r.transient), None)
        if bad is not None:
            return _leave(state, bad.error_kind, f"validator: {bad.error}")
        for c, r in zip(alive, res):
            agents.validator.apply(c, r)
        result.usage["validator"] = usage
    alive = [c for c in result.candidates if c.kept]
    if agents.probes and alive:
        asks = [p.aask(c, seed, use_cache=use_cache, limiter=limiter.at(1 - gen_priority)) for c in alive for p in agents.probes]
        outs = await asyncio.gather(*asks)
        usage = _usage([r for r, _ in outs], state)
        bad = next((r for r, _ in outs if r.transient), None)
        if bad is not None:
            return _leave(state, bad.error_kind, f"probe: {bad.error}")
        k = len(agents.probes)
        for i, c in enumerate(alive):
            apply_probes(c, agents.probes, outs[i * k:(i + 1) * k], agents.drop_known)
        result.usage["probe"] = usage
    return result, None


def _leave(state: RunState, kind: str | None, message: str) -> tuple[None, str | None]:
    """Leave an article unfinished for a rerun, keeping the message for the user."""
    state.last_error[kind or "unknown"] = message
    return None, kind


def _usage(results: Sequence[ChatResult], state: RunState) -> Usage:
    u = Usage()
    for r in results:
        u.add_result(r)
    state.usage.merge(u)
    return u
