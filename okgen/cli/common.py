"""Shared CLI helpers: the context object, logging setup, output rendering, progress bars."""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import click

from okgen.settings import Workspace


@dataclass
class Context:
    """What every verb gets from the global options."""

    workspace: Workspace
    json: bool = False
    debug: bool = False
    quiet: bool = False


def get_ctx() -> Context:
    """The :class:`Context` of the running command."""
    ctx = click.get_current_context()
    root = ctx.find_root()
    if not isinstance(root.obj, Context):  # called directly (tests): defaults from the env
        root.obj = Context(workspace=Workspace.from_env())
    return root.obj


def split_list(value: str | Iterable[str] | None, option: str) -> list[str]:
    """A comma-separated option value as its items, stripped (repeated options joined; None or
    blank: none). An empty item (``none,,oracle``, a trailing comma) is a usage error: it is
    more often a typo than a wish.

    Raises:
        click.BadParameter: an empty item.
    """
    text = ",".join(value) if value is not None and not isinstance(value, str) else (value or "")
    if not text.strip():
        return []
    items = [x.strip() for x in text.split(",")]
    if "" in items:
        raise click.BadParameter(f"has an empty item in {text!r} (items are separated by single commas)",
                                 param_hint=option)
    return items


def json_option(f):
    """Add ``--json`` to a reporting verb (same as the global ``okgen --json``)."""
    return click.option("--json", "json_out", is_flag=True, default=False, envvar="OKGEN_JSON",
                        help="Print the result as JSON on stdout (env: OKGEN_JSON).")(f)


def want_json(local: bool = False) -> bool:
    """True when JSON output was asked for globally or on the verb."""
    return local or get_ctx().json


def setup_logging(verbose: int = 0, quiet: bool = False) -> None:
    """Configure logging to stderr (only the CLI configures logging).

    okgen's own messages: warnings by default, ``-v`` info, ``-vv`` debug; other libraries'
    messages: warnings, or everything with ``-vv``. ``--quiet``: okgen's warnings and errors,
    other libraries' errors.
    """
    if quiet:
        own, other = logging.WARNING, logging.ERROR
    else:
        own = {0: logging.WARNING, 1: logging.INFO}.get(verbose, logging.DEBUG)
        other = logging.DEBUG if verbose >= 2 else logging.WARNING
    root = logging.getLogger()
    for h in list(root.handlers):
        if getattr(h, "_okgen", False):
            root.removeHandler(h)
    handler = logging.StreamHandler(sys.stderr)
    handler._okgen = True  # type: ignore[attr-defined]
    handler.addFilter(_LevelFilter(own, other))
    handler.setFormatter(logging.Formatter("%(levelname).1s %(asctime)s %(name)s: %(message)s", "%H:%M:%S"))
    root.addHandler(handler)
    root.setLevel(min(own, other))
    logging.getLogger("okgen.progress").setLevel(logging.ERROR if quiet else logging.INFO)  # progress lines unless -q


class _LevelFilter(logging.Filter):
    """Different thresholds for okgen's loggers and everyone else's (libraries set their own
    logger levels, so the threshold is applied at the handler)."""

    def __init__(self, own: int, other: int):
        super().__init__()
        self.own, self.other = own, other

    def filter(self, record: logging.LogRecord) -> bool:
        mine = record.name == "okgen" or record.name.startswith("okgen.")
        if record.name == "okgen.progress":  # its level (INFO, or ERROR with -q) is set on the logger
            return True
        return record.levelno >= (self.own if mine else self.other)


def note(message: str) -> None:
    """A progress or advice line on stderr, silenced by ``--quiet``."""
    try:
        quiet = get_ctx().quiet
    except RuntimeError:
        quiet = False
    if not quiet:
        click.echo(message, err=True)


def warn(message: str) -> None:
    """A warning line on stderr (``--quiet`` keeps it)."""
    click.echo(message, err=True)


def echo_json(data: Any) -> None:
    """Print ``data`` as indented JSON on stdout."""
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str, sort_keys=False))


PIPE_WIDTH = 1000  # a table's width when stdout is no terminal


def echo_table(rows: Sequence[dict[str, Any]], columns: Sequence[str] | None = None, title: str | None = None) -> None:
    """Print rows as a readable table on stdout (rich, no colours when not a terminal)."""
    from rich.console import Console
    from rich.table import Table

    columns = list(columns or (rows[0].keys() if rows else []))
    table = Table(show_lines=False, box=None, pad_edge=False, header_style="bold")
    for c in columns:
        table.add_column(str(c), overflow="fold")
    for r in rows:
        table.add_row(*("" if r.get(c) is None else str(r.get(c)) for c in columns))
    # On a terminal, its width; into a file or a pipe, no folding: each row stays one line to grep.
    width = max(100, _term_width()) if sys.stdout.isatty() else PIPE_WIDTH
    console = Console(soft_wrap=False, width=width)
    if title:  # a line of its own: as the table's title rich folds it to the table's width, mid-word
        console.print(title, style="italic", highlight=False, markup=False, overflow="ignore", crop=False)
    console.print(table)


def _term_width() -> int:
    import shutil

    return shutil.get_terminal_size((120, 20)).columns


def echo_kv(pairs: Iterable[tuple[str, Any]]) -> None:
    """Print ``key: value`` lines on stdout, keys aligned."""
    pairs = list(pairs)
    width = max((len(k) for k, _ in pairs), default=0)
    for k, v in pairs:
        click.echo(f"{k.ljust(width)}  {v}")


def progress_enabled() -> bool:
    """Progress unless --quiet: a bar when stderr is a terminal, else a line every
    ``OKGEN_PROGRESS_SECONDS`` (:func:`okgen.progress.bar` chooses)."""
    try:
        quiet = get_ctx().quiet
    except RuntimeError:
        quiet = False
    return not quiet
