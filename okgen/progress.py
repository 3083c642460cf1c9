"""Progress of long work: a tqdm bar on a terminal, periodic log lines elsewhere.

Library code calls :func:`bar` (a ``tqdm`` object: iterate it or ``update`` it):

* stderr is a terminal: tqdm's bar on stderr (off with ``OKGEN_NO_PROGRESS=1``);
* otherwise (cron, CI, ``2> log``): one line on the ``okgen.progress`` logger at INFO every
  :data:`LOG_EVERY` seconds of work (``OKGEN_PROGRESS_SECONDS`` changes it), ``desc: done/total (pct), rate, elapsed, ETA``, and a
  last line when a job that logged a line ends;
* ``-q`` (``OKGEN_QUIET=1``, or the ``okgen.progress`` logger set above INFO): neither.

Work inside a library that reports no steps (colbert-ai's k-means and compression) runs under
:func:`ticker`: a line every :data:`LOG_EVERY` seconds saying what runs and for how long.

The log lines come from a tqdm subclass: the rate is the average so far and the ETA follows
from it; a line also comes every interval while a step runs (a first model batch that takes
minutes). Its clock can be replaced (``clock=``) for tests, which then call ``beat()`` themselves.
"""

from __future__ import annotations

import contextlib
import io
import logging
import sys
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

from tqdm.std import tqdm

T = TypeVar("T")
LOGGER = "okgen.progress"
LOG_EVERY = 10.0
LOG_FORMAT = "{desc}: {n_fmt}/{total_fmt} ({percentage:.0f}%), {speed}, elapsed {elapsed}, ETA {remaining}"
LOG_FORMAT_NO_TOTAL = "{desc}: {n_fmt}, {speed}, elapsed {elapsed}"

log = logging.getLogger(LOGGER)


def quiet() -> bool:
    """Whether progress is silenced (``OKGEN_QUIET``, or ``-q``: the progress logger set above INFO)."""
    from okgen.config import global_settings

    if global_settings().quiet:
        return True
    return log.level > logging.INFO


def enabled() -> bool:
    """Whether a terminal bar is shown (stderr is a terminal, not quiet, not ``OKGEN_NO_PROGRESS``)."""
    from okgen.config import global_settings

    if quiet() or global_settings().no_progress:
        return False
    return sys.stderr.isatty()


class LogBar(tqdm):
    """A tqdm that logs one line every ``interval`` seconds instead of drawing a bar.

    Args:
        logger: where lines go (INFO).
        interval: seconds between lines.
        clock: a ``time.time``-like function (tests pass a fake one).
    """

    monitor_interval = 0  # no tqdm monitor thread: lines come from update() and the heartbeat (beat())

    def __init__(self, *args: Any, logger: logging.Logger = log, interval: float = LOG_EVERY,
                 clock: Callable[[], float] | None = None, **kw: Any):
        self._logger, self._logged_n, self._lines = logger, None, 0
        # smoothing 0: the rate is the average so far; tqdm's moving average moves only when a
        # line is due, so a job whose first item was slow kept that item's rate to its last line.
        kw.update(file=io.StringIO(), mininterval=interval, maxinterval=max(interval, kw.get("maxinterval", 10.0)),
                  miniters=1, delay=0, leave=True, dynamic_ncols=False, smoothing=0)
        self._booting, self._closing = True, False
        super().__init__(*args, **kw)
        self._booting = False
        if clock is not None:
            self._time = clock
            self.start_t = self.last_print_t = clock()
        self._interval, self._line_t = interval or LOG_EVERY, getattr(self, "start_t", 0.0)  # a disabled bar has no start
        self._stop = threading.Event()
        if not self.disable and clock is None:  # a fake clock's test calls beat() itself
            threading.Thread(target=_beats, args=(weakref.ref(self), self._stop, self._interval),
                             name="okgen-progress", daemon=True).start()

    def beat(self) -> None:
        """Log the line when none came for an interval: a step that takes minutes (a model's
        first batch) still shows the job alive, at 0 done too."""
        with self.get_lock():
            if not (self._closing or self.disable) and self._time() - self._line_t >= self._interval:
                self._log()

    def line(self) -> str:
        """The progress line for the current state."""
        d = self.format_dict
        fmt = LOG_FORMAT if d.get("total") else LOG_FORMAT_NO_TOTAL
        return " ".join(self.format_meter(**{**d, "bar_format": fmt, "ncols": None, "speed": _speed(d)}).split())

    def display(self, msg: str | None = None, pos: int | None = None) -> bool:
        if self._booting or self._closing or self.n == self._logged_n or self.n == 0:
            return True
        if self._time() - self._line_t < self.mininterval:  # the heartbeat's line came less than an interval ago
            return True
        self._log()
        return True

    def _log(self) -> None:
        self._logged_n, self._line_t = self.n, self._time()
        self.last_print_n, self.last_print_t = self.n, self._line_t  # tqdm's next due line counts from this one
        self._lines += 1
        self._logger.info("%s", self.line())

    def close(self) -> None:
        if self.disable:
            return
        self._stop.set()
        if self._lines and self.n != self._logged_n:  # a long job: say where it ended
            self._log()
        self._lines, self._closing = 0, True  # tqdm's close redraws: nothing to draw here
        super().close()


def _speed(d: dict[str, Any]) -> str:
    """The average rate as a reader takes it in: ``6.4 article/s``, or ``12.5 s/question`` under
    one a second (tqdm writes ``6.40article/s``), ``? question/s`` before any is done."""
    unit, elapsed = d.get("unit") or "it", d.get("elapsed") or 0.0
    n = (d.get("n") or 0) - (d.get("initial") or 0)  # a resumed job's rate counts this run's work
    if n <= 0 or elapsed <= 0:
        return f"? {unit}/s"
    rate = n / elapsed
    return f"{rate:,.1f} {unit}/s" if rate >= 1 else f"{1 / rate:,.1f} s/{unit}"


def _beats(ref: Any, stop: threading.Event, every: float) -> None:
    """The heartbeat thread of a :class:`LogBar`: it holds the bar weakly, so a bar dropped
    without ``close()`` (an error escaping the loop) ends its thread instead of logging on."""
    while not stop.wait(every):
        pb = ref()
        if pb is None:
            return
        pb.beat()
        del pb


def bar(iterable: Iterable[T] | None = None, *, total: int | None = None, desc: str = "", unit: str = "it",
        clock: Callable[[], float] | None = None, **kw: Any) -> tqdm:
    """Progress for ``total`` steps: a terminal bar, periodic log lines, or nothing (see module doc).

    Use as an iterator or a context manager (``with bar(total=n) as pb: pb.update(k)``);
    ``disable=True`` gives one that shows nothing (a caller asked for no progress).
    """
    off = bool(kw.pop("disable", False))
    if enabled():
        from tqdm.auto import tqdm as auto

        return auto(iterable, total=total, desc=desc, unit=unit, file=sys.stderr, dynamic_ncols=True, leave=False,
                    disable=off, **kw)
    silent = off or quiet() or not log.isEnabledFor(logging.INFO)
    return LogBar(iterable, total=total, desc=desc, unit=unit, disable=silent, clock=clock, interval=interval(), **kw)


def interval() -> float:
    """Seconds between progress lines: ``OKGEN_PROGRESS_SECONDS`` (default :data:`LOG_EVERY`)."""
    from okgen.config import global_settings

    return global_settings().progress_seconds


class Ticker:
    """What :func:`ticker` yields: the phase shown in its lines, and :meth:`line` / :meth:`tick`."""

    def __init__(self, desc: str, phase: str = "", clock: Callable[[], float] = time.monotonic):
        self.desc, self._clock = desc, clock
        self.phases: list[str] = []
        """Every phase set, in order."""
        self.phase = phase
        self.start = clock()
        self.lines = 0

    @property
    def phase(self) -> str:
        """What part of the work runs now (shown in brackets)."""
        return self.phases[-1] if self.phases else ""

    @phase.setter
    def phase(self, value: str) -> None:
        self.phases.append(value)

    def line(self) -> str:
        """``desc (phase): elapsed MM:SS``."""
        what = f"{self.desc} ({self.phase})" if self.phase else self.desc
        return f"{what}: elapsed {tqdm.format_interval(self._clock() - self.start)}"

    def tick(self) -> None:
        """Log the current line (the ticker's thread calls this every interval)."""
        self.lines += 1
        log.info("%s", self.line())


@contextlib.contextmanager
def ticker(desc: str, *, phase: str = "", clock: Callable[[], float] = time.monotonic) -> Iterator[Ticker]:
    """Progress of a block that reports no steps: one line every :func:`interval` seconds while it runs.

    The lines go to the ``okgen.progress`` logger, on a terminal too (there is no bar to draw
    without steps); ``-q`` silences them. Set ``.phase`` on the yielded object to say what
    part of the work is running.
    """
    t = Ticker(desc, phase, clock)
    if quiet() or not log.isEnabledFor(logging.INFO):
        yield t
        return
    stop = threading.Event()

    def run() -> None:
        while not stop.wait(interval() or LOG_EVERY):
            t.tick()

    thread = threading.Thread(target=run, name="okgen-ticker", daemon=True)
    thread.start()
    try:
        yield t
    finally:
        stop.set()
        thread.join()
