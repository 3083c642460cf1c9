"""The ``okgen`` command: global options, lazy verb loading, errors and exit codes.

Exit codes: 0 ok, 1 okgen error (one line; the traceback only with ``--debug``), 2 usage error,
130 interrupted (Ctrl-C), 143 terminated (SIGTERM). Every option can be set by an environment variable: the global ones by
``OKGEN_HOME``, ``OKGEN_JSON``, ``OKGEN_DEBUG``, ``OKGEN_VERBOSE``, the others by
``OKGEN_<VERB>_<OPTION>`` (``OKGEN_INGEST_CONCURRENCY``, ``OKGEN_SNAPSHOT_LS_JSON``), click's
auto-envvar rule (OPTION is the option's parameter name: ``okgen ingest --date`` reads
``OKGEN_INGEST_DATE_STR``). A variable under a settings section's prefix that neither the section
nor its verb reads is warned about, with the nearest name.
"""

from __future__ import annotations

import importlib
import logging
import os
import signal
import sys
import threading
import traceback
from typing import Any

import click

from okgen import __version__

# verb -> (module, attribute, one-line help). Modules are imported only when their verb runs
# (or when `okgen VERB --help` is asked), so `okgen --help` stays fast and light.
COMMANDS: dict[str, tuple[str, str, str]] = {
    "daily": ("okgen.cli.daily", "daily", "Run the whole chain for one date: ingest, generate, snapshot, index, publish."),
    "ingest": ("okgen.cli.ingest", "ingest", "Fetch the day's feeds and articles into the article store."),
    "articles": ("okgen.cli.articles", "articles", "List and show stored articles."),
    "generate": ("okgen.cli.generate", "generate", "Write and validate questions for a date's articles."),
    "snapshot": ("okgen.cli.snapshot", "snapshot", "Build, list, show, verify and import snapshots."),
    "review": ("okgen.cli.review", "review", "Write review sheets for a snapshot and record their verdicts."),
    "signature": ("okgen.cli.signature", "signature", "Explain and check signatures."),
    "index": ("okgen.cli.index", "index", "Build retrieval indexes over news windows."),
    "retrieval-eval": ("okgen.cli.retrieval_eval", "retrieval_eval", "Compare retrievers by hit rate and MRR."),
    "eval": ("okgen.cli.eval", "eval_cmd", "Score a model on a snapshot."),
    "series": ("okgen.cli.series", "series", "Build, list, show, verify, publish and pull series of daily snapshots."),
    "facts": ("okgen.cli.facts", "facts", "Extract and show dated facts (offices, death tolls, prices) of a news day."),
    "stream": ("okgen.cli.stream", "stream", "Build, list, show, verify, import and export evolving-fact streams."),
    "timeline": ("okgen.cli.timeline", "timeline", "Accuracy over time, moving averages and cutoff estimates from series runs."),
    "memory": ("okgen.cli.memory", "memory", "Dated contexts and memory agents over a series' daily stream."),
    "report": ("okgen.cli.report", "report", "Render tables and plots from eval runs."),
    "export": ("okgen.cli.export", "export", "Export a snapshot for lm-eval, Hugging Face datasets or inspect_ai."),
    "schedule": ("okgen.cli.schedule", "schedule", "Run `okgen daily` every day with APScheduler."),
    "publish": ("okgen.cli.publish", "publish", "Upload a snapshot archive to a folder or fsspec URL."),
    "pull": ("okgen.cli.publish", "pull", "Download, verify and register a published snapshot."),
    "keygen": ("okgen.cli.publish", "keygen", "Create an Ed25519 key pair for signing snapshots."),
    "hydrate": ("okgen.cli.hydrate", "hydrate", "Re-fetch the article texts of a snapshot released without them."),
    "status": ("okgen.cli.status", "status", "Show recent runs, stage states and the next scheduled run."),
    "gc": ("okgen.cli.gc", "gc", "Delete old raw captures and windows."),
}


def _available() -> dict[str, tuple[str, str, str]]:
    """The verbs whose modules exist in this installation."""
    import importlib.util

    out = {}
    for name, spec in COMMANDS.items():
        if importlib.util.find_spec(spec[0]) is not None:
            out[name] = spec
    return out


class LazyGroup(click.Group):
    """A click group that imports a verb's module only when the verb is used."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(_available()))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        cmd = super().get_command(ctx, cmd_name)
        if cmd is not None:
            return cmd
        spec = _available().get(cmd_name)
        if spec is None:
            return None
        module = importlib.import_module(spec[0])
        return getattr(module, spec[1])

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # Help text from the table, so `okgen --help` imports no verb module.
        rows = [(name, spec[2]) for name, spec in sorted(_available().items())]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, "-V", "--version", prog_name="okgen", message="%(prog)s %(version)s")
@click.option("--home", type=click.Path(file_okay=False), envvar="OKGEN_HOME", help="Workspace folder (default: current directory).")
@click.option("--json", "json_out", is_flag=True, envvar="OKGEN_JSON", help="Print results as JSON on stdout.")
@click.option("-v", "--verbose", count=True, envvar="OKGEN_VERBOSE", help="More logging on stderr (-vv for debug).")
@click.option("-q", "--quiet", is_flag=True, envvar="OKGEN_QUIET", help="Only warnings and errors on stderr; no progress bars.")
@click.option("--debug", is_flag=True, envvar="OKGEN_DEBUG", help="Show tracebacks on errors.")
@click.pass_context
def cli(ctx: click.Context, home: str | None, json_out: bool, verbose: int, quiet: bool, debug: bool) -> None:
    """okgen: fresh, leak-free knowledge benchmarks from the day's news.

    Start with `okgen daily` (yesterday's news as a benchmark, on the embedded defaults) and
    `okgen VERB --help` for any verb below.
    """
    from okgen.cli.common import Context, setup_logging, warn
    from okgen.config import global_settings
    from okgen.settings import Workspace

    global_settings()  # a bad OKGEN_* value is one error line now, not in the middle of a run

    setup_logging(verbose=verbose, quiet=quiet)
    for var, hint in _stray_variables(ctx):
        warn(f"okgen: warning: {var} is neither a key of its okgen.toml section nor an option of its verb: "
             f"ignored{hint}")
    ctx.obj = Context(workspace=Workspace.from_env(home), json=json_out, debug=debug, quiet=quiet)


def _stray_variables(ctx: click.Context) -> list[tuple[str, str]]:
    """``OKGEN_<SECTION>_<NAME>`` variables that nothing reads (a misspelt key: neither a key of
    the section nor an option of the verb of that name, which click reads under the same prefix),
    each with a "did you mean" hint."""
    import difflib

    from pydantic import BaseModel

    from okgen.config import SECTIONS, Settings

    out = []
    for var in sorted(os.environ):
        for sec in SECTIONS:
            prefix = f"OKGEN_{sec.upper()}_"
            model = Settings.model_fields[sec].annotation
            if not var.upper().startswith(prefix) or not (isinstance(model, type) and issubclass(model, BaseModel)):
                continue
            cmd = cli.get_command(ctx, sec)
            if isinstance(cmd, click.Group):
                continue  # its subcommands' options share the prefix
            known = set(model.model_fields) | {p.name for p in (cmd.params if cmd else []) if p.name}
            key = var.upper()[len(prefix):].lower()
            if key not in known:
                close = difflib.get_close_matches(key, sorted(known), n=1)
                out.append((var, f" (did you mean {prefix}{close[0].upper()}?)" if close else ""))
    return out


class _Terminated(KeyboardInterrupt):
    """SIGTERM (``kill``, ``scancel``, ``docker stop``), handled like Ctrl-C: work in progress
    is wound down the same way (finished articles and pages are already stored)."""


# What a user wants to know when a long run stops part-way: every verb keeps finished work.
_RESUME = " (finished work is kept: the same command goes on from there)"


def _on_sigterm(signum: int, frame: Any) -> None:
    raise _Terminated


def main(argv: list[str] | None = None) -> None:
    """Console entry point: run the CLI and map errors to one-line messages and exit codes."""
    from okgen.errors import OkgenError

    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args or _env_debug()
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        rv = cli.main(args=args, prog_name="okgen", standalone_mode=False, auto_envvar_prefix="OKGEN")
    except (_Terminated, click.exceptions.Abort) as e:  # click turns a KeyboardInterrupt into Abort
        if isinstance(e, _Terminated) or isinstance(e.__cause__, _Terminated):
            click.echo(f"okgen: terminated{_RESUME}", err=True)
            sys.exit(143)
        click.echo(f"okgen: interrupted{_RESUME}", err=True)
        sys.exit(130)
    except KeyboardInterrupt:
        click.echo(f"okgen: interrupted{_RESUME}", err=True)
        sys.exit(130)
    except click.exceptions.Exit as e:
        sys.exit(e.exit_code)
    except click.ClickException as e:
        e.show()
        sys.exit(e.exit_code)
    except OkgenError as e:
        if debug:
            traceback.print_exc()
        click.echo(f"okgen: error: {_one_line(str(e))}", err=True)
        sys.exit(e.exit_code)
    except BrokenPipeError:
        sys.exit(0)
    except Exception as e:  # a bug (or a full disk, a read-only workspace): one line unless --debug
        from okgen.errors import describe_os_error

        if debug:
            traceback.print_exc()
        else:
            logging.getLogger("okgen").debug("internal error", exc_info=True)
        known = describe_os_error(e)
        if known is not None:
            click.echo(f"okgen: error: {known}", err=True)
        else:
            click.echo(f"okgen: internal error: {type(e).__name__}: {_one_line(str(e))} (rerun with --debug for the traceback)", err=True)
        sys.exit(1)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    sys.exit(rv if isinstance(rv, int) else 0)


def _env_debug() -> bool:
    """``OKGEN_DEBUG`` (an unreadable value is reported by the ``cli`` callback, not here)."""
    from okgen.config import global_settings
    from okgen.errors import ConfigError

    try:
        return global_settings().debug
    except ConfigError:
        return False


def _one_line(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 2000 else text[:2000] + "..."
