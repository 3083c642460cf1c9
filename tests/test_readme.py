"""Every `okgen ...` example in README.md names a real verb and only real options."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import click
import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def examples() -> list[str]:
    text = README.read_text(encoding="utf-8")
    out = []
    for block in re.findall(r"```(?:bash)?\n(.*?)```", text, re.S):
        joined = block.replace("\\\n", " ")
        for line in joined.splitlines():
            line = line.strip()
            if line.startswith("okgen "):
                out.append(line)
    return out


def walk(args: list[str]) -> click.Command:
    from okgen.cli.main import cli

    cmd: click.Command = cli
    name = "okgen"
    parent = None
    while True:
        if not isinstance(cmd, click.Group):
            try:
                cmd.make_context(name, list(args), parent=parent)
            except click.NoSuchOption:
                raise
            except (click.BadParameter, click.MissingParameter):
                pass  # files of the example that do not exist here; the options are real
            return cmd
        ctx = cmd.make_context(name, list(args), parent=parent, resilient_parsing=True)
        rest = [*ctx._protected_args, *ctx.args] if hasattr(ctx, "_protected_args") else [*ctx.protected_args, *ctx.args]
        if not rest:
            return cmd
        sub = cmd.get_command(ctx, rest[0])
        assert sub is not None, f"no verb {rest[0]!r} under {name}"
        name, args, cmd, parent = rest[0], rest[1:], sub, ctx


@pytest.mark.parametrize("line", examples())
def test_readme_example_parses(line):
    args = shlex.split(line, comments=True)[1:]
    walk(args)


def test_readme_has_examples_for_every_verb():
    from okgen.cli.main import COMMANDS

    lines = examples()
    for verb in COMMANDS:
        assert any(verb in shlex.split(ln, comments=True)[1:3] for ln in lines), f"README has no example of okgen {verb}"
