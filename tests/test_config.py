"""The one configuration model: defaults < okgen.toml < OKGEN_* environment < flags."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from okgen.config import GlobalSettings, Settings, global_settings, load_settings
from okgen.errors import ConfigError
from okgen.ingest.config import IngestConfig, config_for
from okgen.settings import Workspace

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def clean_env(monkeypatch):
    """No OKGEN_* variable of the developer's shell leaks into these tests."""
    import os

    for name in list(os.environ):
        if name.upper().startswith("OKGEN_"):
            monkeypatch.delenv(name)
    return monkeypatch


def test_each_level_overrides_the_one_below(tmp_path, clean_env):
    ws = Workspace(tmp_path)
    # defaults
    assert ws.settings().ingest.concurrency == IngestConfig().concurrency == 32
    assert ws.config() == {}
    # < okgen.toml
    (tmp_path / "okgen.toml").write_text("[ingest]\nconcurrency = 8\nmin_words = 50\n[generate]\nseed = 7\n")
    assert ws.settings().ingest.concurrency == 8 and ws.settings().generate.seed == 7
    # < environment (only the key it names; the file's other keys stay)
    clean_env.setenv("OKGEN_INGEST_CONCURRENCY", "4")
    s = ws.settings()
    assert s.ingest.concurrency == 4 and s.ingest.min_words == 50 and s.generate.seed == 7
    assert ws.config() == {"ingest": {"concurrency": 4, "min_words": 50}, "generate": {"seed": 7}}
    # < flags (None is "not given")
    assert config_for(ws, concurrency=2).concurrency == 2
    assert config_for(ws, concurrency=None).concurrency == 4
    assert ws.settings(generate={"seed": 1}).generate.seed == 1
    clean_env.setenv("OKGEN_INGEST_CONCURRENCY", "")  # empty is unset, as click takes it
    assert ws.settings().ingest.concurrency == 8


def test_lists_from_the_environment_and_flags(tmp_path, clean_env):
    (tmp_path / "okgen.toml").write_text("[daily]\nwindows = [10, 1]\nretrievers = ['bm25']\n")
    clean_env.setenv("OKGEN_DAILY_WINDOWS", "5, 1")
    clean_env.setenv("OKGEN_DAILY_RETRIEVERS", '["bm25", "dpr"]')
    clean_env.setenv("OKGEN_GENERATE_PROBES", "openai/p,base_url=http://127.0.0.1:9/v1")  # one spec: never split
    s = load_settings(tmp_path / "okgen.toml")
    assert s.daily.windows == (1, 5) and s.daily.retrievers == ("bm25", "dpr")
    assert s.generate.probes == ("openai/p,base_url=http://127.0.0.1:9/v1",)
    assert load_settings(tmp_path / "okgen.toml", daily={"retrievers": ""}).daily.retrievers == ()


def test_a_verb_option_of_the_same_prefix_is_not_a_setting(tmp_path, clean_env):
    """click reads OKGEN_DAILY_GENERATOR for `okgen daily --generator`: not a [daily] key, not an error."""
    clean_env.setenv("OKGEN_DAILY_GENERATOR", "openai/x")
    clean_env.setenv("OKGEN_INGEST_DATE", "2026-11-21")
    assert Workspace(tmp_path).config() == {}


@pytest.mark.parametrize(("toml", "env", "flags", "message"), [
    ("[dialy]\nx = 1\n", {}, {}, "okgen.toml: unknown section [dialy] (known: daily, generate, ingest, prices); did you mean [daily]?"),
    ("[ingest]\nconcurency = 1\n", {}, {}, "okgen.toml [ingest] concurency: unknown key (known: "),
    ("[ingest]\nconcurency = 1\n", {}, {}, "did you mean concurrency?"),
    ("[generate]\nper_article = 'five'\n", {}, {}, "okgen.toml [generate] per_article: Input should be a valid integer"),
    ("ingest = 3\n", {}, {}, "okgen.toml [ingest]: must be a table"),
    ("[prices.m]\ninput = 'x'\noutput = 1\n", {}, {}, "okgen.toml [prices] m.input: Input should be a valid number"),
    ("[generate\n", {}, {}, "invalid TOML"),
    ("", {"OKGEN_INGEST_CONCURRENCY": "many"}, {}, "OKGEN_INGEST_CONCURRENCY: Input should be a valid integer"),
    ("", {"OKGEN_DAILY_WINDOWS": "[1,"}, {}, "OKGEN_DAILY_WINDOWS: Value error, '[1,' is not a JSON array"),
    ("[generate]\nper_article = 3\n", {}, {"generate": {"per_article": 99}}, "--per-article: Input should be less than or equal to 50"),
    ("[daily]\ntimezone = 'Mars/Olympus'\n", {}, {}, "okgen.toml [daily] timezone: Value error, unknown time zone"),
])
def test_a_bad_setting_is_one_line_naming_the_key_and_its_origin(tmp_path, clean_env, toml, env, flags, message):
    (tmp_path / "okgen.toml").write_text(toml)
    for k, v in env.items():
        clean_env.setenv(k, v)
    with pytest.raises(ConfigError) as info:
        load_settings(tmp_path / "okgen.toml", **flags)
    text = str(info.value)
    assert message in text and "\n" not in text


def test_a_bad_global_variable_is_named(clean_env):
    clean_env.setenv("OKGEN_PROGRESS_SECONDS", "soon")
    with pytest.raises(ConfigError, match="OKGEN_PROGRESS_SECONDS='soon'"):
        global_settings()
    clean_env.setenv("OKGEN_PROGRESS_SECONDS", "2.5")
    clean_env.setenv("OKGEN_HOME", "/srv/okgen")
    g = global_settings()
    assert g.progress_seconds == 2.5 and g.home == "/srv/okgen" and Workspace.from_env().home == Path("/srv/okgen")


def test_resolving_settings_never_writes(tmp_path, clean_env):
    (tmp_path / "okgen.toml").write_text("[daily]\nwindows = [1]\n")
    before = sorted(p.name for p in tmp_path.iterdir())
    Workspace(tmp_path).settings()
    Workspace(tmp_path / "absent").settings()
    assert sorted(p.name for p in tmp_path.iterdir()) == before and not (tmp_path / "absent").exists()


def _readme_section(title: str) -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index(title)
    return text[start:text.index("\n## ", start + 1)]


def test_the_readme_table_is_the_loader():
    """Every file section and key the README lists is one the loader has, and the other way round;
    every environment variable it names is a global setting or a global option's."""
    from okgen.cli.main import cli

    text = _readme_section("## Configuration")
    listed = dict(re.findall(r"^\| `\[(\w+)\]` \| (.*?) \|", text, flags=re.M))
    assert set(listed) == set(Settings.model_fields)
    for section, keys in listed.items():
        model = Settings.model_fields[section].annotation
        if section == "prices":
            continue
        assert set(re.findall(r"`(\w+)`", keys)) == set(model.model_fields), section
    env_names = set(re.findall(r"`(OKGEN_[A-Z_]+)`", text)) - {"OKGEN_SECTION_KEY"}
    options = {p.envvar for p in cli.params if getattr(p, "envvar", None)}
    globals_ = {f"OKGEN_{k.upper()}" for k in GlobalSettings.model_fields}
    for name in env_names - options - globals_:  # a verb's option, by click's OKGEN_<VERB>_<OPTION> rule
        assert name in _auto_envvars(cli, name.split("_")[1].lower()), name
    assert globals_ <= env_names  # every global setting is documented
    assert options <= env_names


def _auto_envvars(group, verb: str) -> set[str]:
    import click

    out: set[str] = set()
    todo = [([verb], group.get_command(click.Context(group), verb))]
    while todo:
        path, cmd = todo.pop()
        out |= {"OKGEN_" + "_".join([*path, p.name]).upper() for p in cmd.params if isinstance(p, click.Option)}
        if isinstance(cmd, click.Group):
            todo += [([*path, n], cmd.get_command(click.Context(cmd), n)) for n in cmd.list_commands(click.Context(cmd))]
    return out


def test_a_misspelt_variable_under_a_section_prefix_is_warned_about(tmp_path, clean_env):
    """Nothing reads OKGEN_GENERATE_PER_ARTICLES: one warning with the nearest name; known keys and
    the verb's own options (OKGEN_DAILY_GENERATOR) pass silently."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "OKGEN_GENERATE_PER_ARTICLES": "3", "OKGEN_DAILY_GENERATOR": "openai/x",
           "OKGEN_INGEST_CONCURRENCY": "4"}
    out = subprocess.run([sys.executable, "-m", "okgen", "--home", str(tmp_path), "-q", "status"], env=env,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    warned = [ln for ln in out.stderr.splitlines() if "warning" in ln]
    assert len(warned) == 1 and "OKGEN_GENERATE_PER_ARTICLES" in warned[0], out.stderr
    assert "did you mean OKGEN_GENERATE_PER_ARTICLE?" in warned[0]


def test_status_reports_a_broken_okgen_toml(tmp_path, clean_env):
    """`okgen status` shows what it can and names the config error first (exit 1); a valid file
    passes silently."""
    import json
    import os
    import subprocess
    import sys

    (tmp_path / "okgen.toml").write_text('[generate]\nper_article = "x"\n', encoding="utf-8")
    run = [sys.executable, "-m", "okgen", "--home", str(tmp_path)]
    out = subprocess.run([*run, "status"], env=dict(os.environ), capture_output=True, text=True)
    assert out.returncode == 1, out.stderr
    line = next(ln for ln in out.stdout.splitlines() if ln.startswith("config: error:"))
    assert "per_article" in line and "valid integer" in line
    assert "no daily runs yet" in out.stdout
    js = subprocess.run([*run, "--json", "status"], env=dict(os.environ), capture_output=True, text=True)
    assert js.returncode == 1 and "per_article" in json.loads(js.stdout)["config_error"]
    (tmp_path / "okgen.toml").write_text("[generate]\nper_article = 3\n", encoding="utf-8")
    out = subprocess.run([*run, "status"], env=dict(os.environ), capture_output=True, text=True)
    assert out.returncode == 0 and "config:" not in out.stdout, out.stdout
