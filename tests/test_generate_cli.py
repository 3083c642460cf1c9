"""``okgen generate``, agent specs and hashes, locking, and the hand-off to build_snapshot."""

from __future__ import annotations

import datetime as dt
import json
import logging
import re
import shutil
from pathlib import Path

import pytest

from okgen.cli.main import main
from okgen.errors import ConfigError, LockedError
from okgen.files import read_jsonl, write_jsonl
from okgen.generate.agents import load_agent, packaged_agents_dir, resolve_agents_dir
from okgen.generate.pipeline import _lock, run_generate
from okgen.schema import Question
from okgen.testing.fixture_questions import fixture_questions
from okgen.testing.llm_agents import AgentResponder
from okgen.testing.news import fixture_articles
from okgen.testing.openai_server import OpenAIServer, Reply

DAY = dt.date(2026, 11, 21)
REPO = Path(__file__).resolve().parents[1]


def run_cli(capsys, *args: str) -> tuple[int, str, str]:
    try:
        with pytest.raises(SystemExit) as e:
            main(list(args))
    finally:  # the CLI installs a stderr log handler; drop it with the captured stream
        root = logging.getLogger()
        for h in [h for h in root.handlers if getattr(h, "_okgen", False)]:
            root.removeHandler(h)
    out = capsys.readouterr()
    return e.value.code, out.out, out.err


@pytest.fixture
def articles_file(tmp_path):
    p = tmp_path / "articles.jsonl"
    write_jsonl(p, fixture_articles())
    return p


def test_cli_generates_with_the_offline_default(workspace, capsys, articles_file, tmp_path):
    out = tmp_path / "q.jsonl"
    code, stdout, _ = run_cli(capsys, "--json", "generate", "--date", str(DAY), "--articles", str(articles_file), "--out", str(out))
    assert code == 0
    data = json.loads(stdout)
    assert data["complete"] and re.match(r"extractive-v2\.[0-9a-f]{8}\+en_core_web_sm", data["generator"]["model"]) and data["validator"] is None
    qs = read_jsonl(out, Question)
    # The six fixture articles offer few plausible distractors (no gazetteer fill-in): one question.
    assert len(qs) == data["questions"] == data["funnel"]["kept"] >= 1
    code, stdout, _ = run_cli(capsys, "generate", "--date", str(DAY), "--articles", str(articles_file))
    assert code == 0 and "funnel for 2026-11-21" in stdout and "resumed" in stdout and "kept" in stdout


def test_cli_errors(workspace, capsys, articles_file):
    code, _, err = run_cli(capsys, "generate", "--date", "2026-11-25", "--articles", str(articles_file))
    # An --articles file of other days names them (it used to say "run okgen ingest first").
    assert code == 1 and "none of the 10 given articles is dated 2026-11-25: they are dated 2026-11-20, 2026-11-21" in err
    code, _, err = run_cli(capsys, "generate", "--date", str(DAY), "--articles", str(articles_file), "--generator", "gpt")
    assert code == 2 and "model spec 'gpt' must read backend/model" in err  # a usage error
    code, _, err = run_cli(capsys, "generate", "--date", "21/11/2026")
    assert code == 2
    code, _, err = run_cli(capsys, "generate", "--date", str(DAY), "--articles", str(articles_file),
                           "--validator", "openai/m,base_url=http://127.0.0.1:9/v1,colour=blue")
    assert code == 2 and "unknown option 'colour'" in err
    # Records that lack several fields: each missing one is named in the one line.
    thin = articles_file.parent / "thin.jsonl"
    thin.write_text(json.dumps({"title": "Harbour strike ends", "text": "The strike ended.", "url": "https://x.org/1"}) + "\n")
    code, _, err = run_cli(capsys, "generate", "--date", str(DAY), "--articles", str(thin))
    assert code == 1 and len(err.strip().splitlines()) == 1 and "thin.jsonl:1: missing fields id, " in err, err
    assert "text_sha256" in err and "fetched_at" in err, err


def test_a_record_missing_many_fields_is_still_one_short_line():
    from pydantic import BaseModel, ValidationError, create_model

    from okgen.files import MISSING_SHOWN, describe_validation_error

    wide: type[BaseModel] = create_model("Wide", **{f"f{i}": (int, ...) for i in range(MISSING_SHOWN + 4)})
    with pytest.raises(ValidationError) as e:
        wide.model_validate({})
    line = describe_validation_error(e.value)
    assert line.startswith("missing fields f0, f1, ") and f"f{MISSING_SHOWN - 1}" in line and f"f{MISSING_SHOWN}," not in line
    assert line.endswith("(and 4 more problem(s))") and "\n" not in line


def test_cli_config_defaults(workspace, capsys, articles_file):
    (workspace.home / "okgen.toml").write_text("[generate]\nper_article = 2\nseed = 99\n")
    code, stdout, _ = run_cli(capsys, "--json", "generate", "--date", str(DAY), "--articles", str(articles_file))
    data = json.loads(stdout)
    assert code == 0 and data["seed"] == 99 and data["funnel"]["candidates"] <= 2 * 6


@pytest.mark.parametrize("toml, message", [
    ("[generate]\nper_article = 'five'\n", "[generate] per_article: Input should be a valid integer"),
    ("[generate]\nper_article = 0\n", "[generate] per_article: Input should be greater than or equal to 1"),
    ("[generate]\nseed = 1.5\n", "[generate] seed: Input should be a valid integer, got a number with a fractional part"),
    ("[generate]\nconcurrency = 0\n", "[generate] concurrency: Input should be greater than or equal to 1"),
    ("[generate]\nmax_cost = 'lots'\n", "[generate] max_cost: Input should be a valid number"),
    ("[generate]\nprobes = [1, 2]\n", "[generate] probes.0: Input should be a valid string"),
    ("generate = 5\n", "[generate]: must be a table"),
])
def test_cli_bad_config_values_are_one_line_errors(workspace, capsys, articles_file, toml, message):
    (workspace.home / "okgen.toml").write_text(toml)
    code, _, err = run_cli(capsys, "generate", "--date", str(DAY), "--articles", str(articles_file))
    assert code == 1 and message in err and "internal error" not in err and "Traceback" not in err


def test_cli_probe_string_in_config_is_one_spec(workspace, capsys, articles_file):
    (workspace.home / "okgen.toml").write_text("[generate]\nprobes = 'openai/m,base_url=http://127.0.0.1:9/v1,colour=x'\n")
    code, _, err = run_cli(capsys, "generate", "--date", str(DAY), "--articles", str(articles_file))
    assert code == 1 and "unknown option(s) colour in model spec 'openai/m,base_url=" in err  # not split into letters


def test_cli_today_is_the_news_day_of_the_ingest_timezone(workspace, capsys, tmp_path):
    from zoneinfo import ZoneInfo

    from okgen.testing.corpus import make_articles

    now = dt.datetime.now(dt.timezone.utc)
    # One of the two zones is on another calendar day than UTC at any moment.
    tz = next(z for z in ("Pacific/Kiritimati", "Pacific/Pago_Pago") if now.astimezone(ZoneInfo(z)).date() != now.date())
    (workspace.home / "okgen.toml").write_text(f'[ingest]\ntimezone = "{tz}"\n')
    local_today = dt.datetime.now(ZoneInfo(tz)).date()
    arts, _ = make_articles(6, local_today, days=1, seed=3)
    path = tmp_path / "today.jsonl"
    write_jsonl(path, arts)
    code, stdout, err = run_cli(capsys, "--json", "generate", "--date", "today", "--articles", str(path))
    assert code == 0, err
    assert json.loads(stdout)["date"] == local_today.isoformat()


def test_cli_budget_stop_exits_1_and_keeps_work(workspace, capsys, articles_file):
    r = AgentResponder(fixture_articles(), questions=fixture_questions())  # four per article

    def priced(req, endpoint):
        return Reply(content=r(req, endpoint), usage={"prompt_tokens": 10_000, "completion_tokens": 0, "total_tokens": 10_000})

    (workspace.home / "okgen.toml").write_text('[prices."judge"]\ninput = 1.0\noutput = 1.0\n'
                                               '[prices."writer"]\ninput = 0.0\noutput = 0.0\n')
    with OpenAIServer(responder=priced) as srv:
        code, stdout, err = run_cli(capsys, "generate", "--date", str(DAY), "--articles", str(articles_file),
                                    "--generator", f"openai/writer,base_url={srv.base_url}",
                                    "--validator", f"openai/judge,base_url={srv.base_url}", "--max-cost", "0.005",
                                    "--concurrency", "1")  # $0.01 a validator call; several for the day
    assert code == 1 and "budget of $0.005 reached ($0.0100 spent by this run)" in err, err  # one call, its real cost
    assert "rerun with a higher --max-cost" in err
    assert "stopped early: budget" in stdout and "this run" in stdout and "$0.0100" in stdout  # one call spent
    assert re.search(r"this run +\d+ calls \(\d+ cached, 0 retries\)", stdout), stdout


def test_agents_folder_resolution_and_prompt_hash(workspace, tmp_path):
    assert resolve_agents_dir(workspace) == packaged_agents_dir()  # no agents/ in the workspace
    custom = tmp_path / "custom-agents"
    shutil.copytree(packaged_agents_dir(), custom)
    articles = fixture_articles()
    base = run_generate(DAY, workspace, articles, agents_dir=custom)
    spec = custom / "generator" / "extractive.toml"
    spec.write_text(spec.read_text().replace("max_per_kind = 2", "max_per_kind = 1"))
    edited = run_generate(DAY, workspace, articles, agents_dir=custom)
    assert edited.prompt_hash != base.prompt_hash and edited.run_key != base.run_key
    assert edited.generator.spec_hash != base.generator.spec_hash
    assert edited.funnel["articles"]["resumed"] == 0  # a new run, not a resume of the old one
    # Questions per article shape the snapshot: another than the default is in the prompt hash;
    # the default keeps the agents' hash alone (signatures of default runs stay comparable).
    from okgen.generate.agents import prompt_hash

    two = run_generate(DAY, workspace, articles, agents_dir=custom, per_article=2)
    assert two.prompt_hash != edited.prompt_hash
    assert edited.prompt_hash == prompt_hash([load_agent("extractive", custom)])
    shutil.copytree(custom, workspace.home / "agents")
    assert resolve_agents_dir(workspace) == (workspace.home / "agents").resolve()
    with pytest.raises(ConfigError):
        resolve_agents_dir(workspace, tmp_path / "missing")


def test_template_placeholders_are_checked(tmp_path):
    root = tmp_path / "agents"
    shutil.copytree(packaged_agents_dir(), root)
    (root / "validator" / "probe_user.md").write_text("{{ question }} {{ colour }}")
    spec = load_agent("probe", root)
    with pytest.raises(ConfigError, match="colour"):
        spec.render("user", question="q", choices="", letters="A")
    (root / "generator" / "spec.toml").write_text("[agent\nbroken")
    with pytest.raises(ConfigError, match="invalid TOML"):
        load_agent("generator", root)


def test_one_generation_per_date_at_a_time(workspace):
    with _lock(workspace, DAY), pytest.raises(LockedError):
        run_generate(DAY, workspace, fixture_articles())


def test_result_feeds_build_snapshot(workspace):
    from okgen.snapshot.build import build_snapshot

    articles = fixture_articles()
    res = run_generate(DAY, workspace, articles, seed=77)
    snap = build_snapshot(res.questions, articles, date=DAY, generator=res.generator, validator=res.validator,
                          probes=res.probes, prompt_hash=res.prompt_hash, feeds_hash="ab" * 32, seed=res.seed,
                          funnel=res.funnel, workspace=workspace)
    m = snap.manifest
    assert m.funnel["kept"] == len(res.questions) == m.counts["questions"]
    # The offline generator's own funnel: stems made and why the other pairs gave none, on the
    # printed funnel's "stems" line too.
    why = res.funnel["extractive_reasons"]
    assert why["stem_made"] >= len(res.questions) and "kept" not in why
    stems_line = next(line for line in res.render_funnel().splitlines() if line.strip().startswith("stems"))
    top = min((k for k in why if k != "stem_made"), key=lambda k: (-why[k], k))
    assert str(why["stem_made"]) in stems_line and f"most dropped: {top} {why[top]}" in stems_line, stems_line
    assert re.match(r"extractive-v2\.[0-9a-f]{8}\+", snap.signature.generator) and snap.signature.seed == 77
    assert snap.signature.prompt_hash == res.prompt_hash[:12]
    counts = m.counts["answer_positions"]
    assert max(counts.values()) - min(counts.values()) <= 1


def test_a_bug_on_one_article_does_not_sink_the_run(workspace, monkeypatch):
    import okgen.generate.runner as runner

    articles = fixture_articles()
    victim = next(a.id for a in articles if a.date == DAY)
    real = runner.check_candidate

    def flaky(c, *a, **k):
        if c.article_id == victim:
            raise RuntimeError("boom")
        return real(c, *a, **k)

    monkeypatch.setattr(runner, "check_candidate", flaky)
    # Four hand-written questions per article, as an LLM writes (the offline generator writes one
    # for the whole fixture day, too few to see the other articles go on).
    with OpenAIServer(responder=AgentResponder(articles, questions=fixture_questions())) as srv:
        spec = f"openai/writer,base_url={srv.base_url}"
        res = run_generate(DAY, workspace, articles, generator=spec)
        assert res.funnel["articles"]["pending_by_reason"] == {"internal": 1} and not res.complete
        assert res.questions and all(q.article_id != victim for q in res.questions)
        monkeypatch.setattr(runner, "check_candidate", real)
        again = run_generate(DAY, workspace, articles, generator=spec)
    assert again.complete and again.funnel["articles"]["resumed"] == 5


def stored_fixture_articles(workspace):
    """The fixture articles, put in the workspace's article store."""
    from okgen.ingest.store import ArticleStore

    articles = fixture_articles()
    with ArticleStore(workspace.db_path) as st:
        for a in articles:
            st.upsert(a)
    return articles


def test_articles_come_from_the_article_store(workspace, capsys):
    articles = stored_fixture_articles(workspace)
    res = run_generate(DAY, workspace)  # the date's articles, and the day before for distractors
    assert res.funnel["articles"]["total"] == 6 and res.questions
    same = run_generate(DAY, workspace, articles)
    assert [q.id for q in same.questions] == [q.id for q in res.questions]
    code, stdout, _ = run_cli(capsys, "--json", "generate", "--date", str(DAY))
    assert code == 0 and json.loads(stdout)["questions"] == len(res.questions)


def test_cli_server_errors_name_their_cause_and_nothing_is_stored(workspace, capsys, articles_file, monkeypatch):
    monkeypatch.setenv("OKGEN_TEST_KEY", "sk-test")
    r = AgentResponder(fixture_articles())
    with OpenAIServer(responder=r) as srv:
        spec = f"openai/fake,base_url={srv.base_url},api_key_env=OKGEN_TEST_KEY"
        srv.script(*[Reply(status=401, error="Incorrect API key provided")] * 6)
        code, stdout, err = run_cli(capsys, "generate", "--date", str(DAY), "--articles", str(articles_file),
                                    "--generator", spec)
        assert code == 1 and "6 of 6 articles could not be processed (http_401 6)" in err
        assert "Incorrect API key provided" in err and "pending http_401 6" in stdout
        # The server fixed: the articles were left pending (not stored as failed), so a rerun finishes them.
        code, stdout, err = run_cli(capsys, "generate", "--date", str(DAY), "--articles", str(articles_file),
                                    "--generator", spec)
        assert code == 0 and "generated 6" in stdout
        # A probe whose every call fails does not pass as "nobody knew the answer".
        srv.script(*[Reply(status=400, error="max_tokens must be at most 8")] * 40)
        code, stdout, err = run_cli(capsys, "generate", "--date", str(DAY), "--articles", str(articles_file),
                                    "--generator", spec, "--probe", spec, "--concurrency", "1")
        assert code == 1 and "probe: HTTP 400: max_tokens must be at most 8" in err


def test_cli_nothing_kept_is_an_error(workspace, capsys, articles_file):
    with OpenAIServer() as srv:
        srv.script(*[Reply(content=None, refusal="I cannot help with that.")] * 6)
        code, stdout, err = run_cli(capsys, "generate", "--date", str(DAY), "--articles", str(articles_file),
                                    "--generator", f"openai/fake,base_url={srv.base_url}")
    assert code == 1 and "no question kept for 2026-11-21 from 6 articles: refusal 6" in err
    assert "I cannot help with that" in err and "failed refusal 6" in stdout


# A spec of the wrong shape (backend, option names, base_url) is a usage error (2); a value the
# model refuses when it is set up, an unset key or an unpriced model is an okgen error (1).
@pytest.mark.parametrize("args, message, status", [
    (["--generator", "openai/m,base_url=127.0.0.1:8000/v1"], "must start with http:// or https://", 2),
    (["--generator", "openai/m,base_url=http://127.0.0.1:9/v1,timeout=-1"], "timeout must be a positive number", 1),
    (["--generator", "openai/m,base_url=http://127.0.0.1:9/v1,api_key_env=OKGEN_NO_SUCH_KEY"],
     "OKGEN_NO_SUCH_KEY is not set", 1),
    (["--generator", "openai/m,base_url=http://127.0.0.1:9/v1,temperature=hot"], "bad temperature in model options", 1),
    (["--generator", "openai/m,base_url=http://127.0.0.1:9/v1,max_tokens=-5"],
     "bad max_tokens in model options: -5, expected a whole number >= 0 (0: no limit)", 1),
    (["--generator", "openai/m,base_url=http://127.0.0.1:9/v1,max_tokens=1.5"], "bad max_tokens in model options", 1),
    (["--generator", "openai/m,base_url=http://127.0.0.1:9/v1,top_p=1.5"],
     "bad top_p in model options: 1.5, expected a number above 0 and at most 1", 1),
    (["--generator", "openai/m,base_url=http://127.0.0.1:9/v1", "--max-cost", "nan"],
     "--max-cost: Input should be greater than or equal to 0", 1),
    (["--generator", "openai/local-model,base_url=http://127.0.0.1:9/v1", "--max-cost", "5"],
     "--max-cost needs a price for every model, and local-model has none", 1),
])
def test_cli_bad_model_options_fail_before_any_call(workspace, capsys, articles_file, args, message, status):
    code, _, err = run_cli(capsys, "generate", "--date", str(DAY), "--articles", str(articles_file), *args)
    assert code == status and message in err and "Traceback" not in err


@pytest.mark.parametrize("extra, flag, why", [([], "--drop-known", "none is set: add --probe SPEC"),
                                               (["--probe", "none"], "--flag-known", "--probe none turned them off")])
def test_drop_or_flag_known_without_a_probe_is_a_usage_error(workspace, capsys, articles_file, extra, flag, why):
    # The flag acts on probe verdicts: with no probe it used to do nothing, silently.
    (workspace.home / "okgen.toml").write_text("[generate]\ndrop_known = false\n")  # the setting alone is fine
    code, stdout, err = run_cli(capsys, "generate", "--date", str(DAY), "--articles", str(articles_file),
                                *extra, flag)
    assert code == 2 and f"{flag} acts on freshness probes, and {why}" in err and "funnel" not in stdout


def test_flag_known_on_the_command_line_keeps_what_the_probe_knew(workspace, capsys, articles_file):
    articles = fixture_articles()
    r = AgentResponder(articles)
    r.probe_answer = lambda req: r.letter(req, correct=True)
    with OpenAIServer(responder=r) as srv:
        spec = f"openai/fake,base_url={srv.base_url}"
        code, stdout, err = run_cli(capsys, "--json", "generate", "--date", str(DAY), "--articles", str(articles_file),
                                    "--generator", spec, "--probe", spec, "--flag-known")
    assert code == 0, err
    probes = json.loads(stdout)["funnel"]["probes"]
    assert probes["dropped"] == 0 and probes["flagged"] > 0


@pytest.mark.parametrize("line, message", [
    ("max_tokens = -5", "bad max_tokens in the generator spec's [decoding]: -5, expected a whole number >= 0"),
    ('temperature = "hot"', "bad temperature in the generator spec's [decoding]: hot, expected a number >= 0"),
])
def test_a_bad_decoding_value_in_an_agent_spec_fails_before_any_call(workspace, capsys, articles_file, tmp_path,
                                                                      line, message):
    custom = tmp_path / "agents"
    shutil.copytree(packaged_agents_dir(), custom)
    spec = custom / "generator" / "spec.toml"
    text = spec.read_text()
    key = line.split()[0]
    spec.write_text(re.sub(rf"(?m)^{key} = .*$", line, text) if re.search(rf"(?m)^{key} = ", text)
                    else text.replace("[decoding]\n", f"[decoding]\n{line}\n"))
    with OpenAIServer(responder=AgentResponder(fixture_articles())) as srv:
        code, _, err = run_cli(capsys, "generate", "--date", str(DAY), "--articles", str(articles_file), "--agents",
                               str(custom), "--generator", f"openai/fake,base_url={srv.base_url}")
        assert srv.calls["chat"] == 0
    assert code == 1 and message in err and "Traceback" not in err


def test_an_unwritable_out_fails_before_the_run(workspace, capsys, articles_file, tmp_path):
    code, stdout, err = run_cli(capsys, "generate", "--date", str(DAY), "--articles", str(articles_file),
                                "--out", str(tmp_path / "no" / "such" / "q.jsonl"))
    assert code == 1 and "does not exist or is not writable" in err and "funnel" not in stdout  # nothing ran


def test_an_unknown_placeholder_stops_the_run_with_a_config_error(workspace, capsys, articles_file, tmp_path):
    custom = tmp_path / "agents"
    shutil.copytree(packaged_agents_dir(), custom)
    user = custom / "generator" / "user.md"
    user.write_text(user.read_text() + "\n{{ titel }}\n")
    with OpenAIServer(responder=AgentResponder(fixture_articles())) as srv:
        code, _, err = run_cli(capsys, "generate", "--date", str(DAY), "--articles", str(articles_file),
                               "--agents", str(custom), "--generator", f"openai/fake,base_url={srv.base_url}")
        assert srv.calls["chat"] == 0
    assert code == 1 and "titel" in err and "rerun" not in err


def test_a_relative_agents_dir_in_okgen_toml_is_under_the_workspace(workspace, tmp_path, monkeypatch):
    shutil.copytree(packaged_agents_dir(), workspace.home / "my-agents")
    spec = workspace.home / "my-agents" / "generator" / "extractive.toml"
    spec.write_text(spec.read_text().replace("max_per_kind = 2", "max_per_kind = 1"))
    (workspace.home / "okgen.toml").write_text('[generate]\nagents_dir = "my-agents"\n')
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    res = run_generate(DAY, workspace, fixture_articles())
    assert res.generator.spec_hash == load_agent("extractive", workspace.home / "my-agents").spec_hash
    assert res.generator.spec_hash != load_agent("extractive", packaged_agents_dir()).spec_hash


def test_snapshot_build_takes_up_the_finished_run_and_calls_no_model(workspace, capsys):
    from okgen.ingest.store import ArticleStore

    articles = stored_fixture_articles(workspace)
    seen = []
    r = AgentResponder(articles, questions=fixture_questions())

    def counted(req, endpoint):
        seen.append(req["model"])
        return r(req, endpoint)

    with OpenAIServer(responder=counted) as srv:
        gen, probe = f"openai/writer,base_url={srv.base_url}", f"openai/prober,base_url={srv.base_url}"
        code, stdout, err = run_cli(capsys, "--json", "generate", "--date", str(DAY), "--generator", gen, "--probe",
                                    probe, "--per-article", "2")
        assert code == 0, err
        calls = len(seen)
        assert "prober" in seen
        # One probe drops a quarter of good questions by chance: said once.
        assert err.count("one freshness probe drops every question it answers right") == 1
        # What the server says answered is recorded, by role (an alias is re-pointed over time).
        served = json.loads(stdout)["funnel"]["served_models"]
        assert set(served) == {"generator", "probe"} and set(served["generator"]) == {"writer"}
        assert served["probe"] == {"prober": seen.count("prober")}
        # The build names only the generator (by model name): the run with its probe and its two
        # questions per article is taken up, and no model is called again.
        code, stdout, err = run_cli(capsys, "snapshot", "build", "--date", str(DAY), "--generator", "openai/writer")
        assert code == 0, err
        assert len(seen) == calls, "the build called a model"
        assert "the finished generation of 2026-11-21 by " + gen in err and "2 per article" in err
        assert "probes " + probe in err
    from okgen.signature import Signature
    from okgen.snapshot.store import resolve

    snap = resolve(Signature.parse(stdout.strip().splitlines()[-1]).short, workspace)
    assert [p.model for p in snap.manifest.probes] == ["openai/prober"]
    # Built from the store with no call: the snapshot still names what answered, for every article.
    assert snap.manifest.funnel["served_models"] == served
    # Nothing finished by another generator: it says it generates, with the settings it uses.
    code, _, err = run_cli(capsys, "snapshot", "build", "--date", str(DAY), "--generator", "extractive")
    assert code == 0 and "no finished generation of 2026-11-21 by extractive: generating now" in err
    # okgen.toml names another generator, and no flag: the finished runs are named, nothing is spent.
    seen.clear()
    (workspace.home / "okgen.toml").write_text('[generate]\ngenerator = "openai/tomlmodel,base_url=http://127.0.0.1:9/v1"\n')
    code, _, err = run_cli(capsys, "snapshot", "build", "--date", str(DAY))
    assert code == 1 and "okgen.toml's generator" in err and "the date has finished runs by" in err
    assert "openai/writer" in err and seen == []
    (workspace.home / "okgen.toml").unlink()
    # An article added since the finished run: taking it up would generate, so the build refuses
    # in one line rather than spend (nor does it fall back to another generator).
    seen.clear()
    extra = next(a for a in fixture_articles() if a.date == DAY).model_copy(update={"id": "feedfacefeedface", "url": "https://example.org/new-1",
                                                     "canonical_url": "https://example.org/new-1"})
    with ArticleStore(workspace.db_path) as st:
        st.upsert(extra)
    code, _, err = run_cli(capsys, "snapshot", "build", "--date", str(DAY), "--generator", "openai/writer")
    assert code == 1 and "lacks 1 of the date's 7 articles" in err and "okgen generate --date 2026-11-21" in err
    assert seen == []


def test_a_run_read_back_for_a_snapshot_never_generates(workspace):
    """require_finished (what snapshot build uses) reads a finished run, and refuses in one line
    where the settings no longer give it (here: other gates), rather than generate."""
    from okgen.errors import OkgenError

    stored_fixture_articles(workspace)
    first = run_generate(DAY, workspace)
    again = run_generate(DAY, workspace, require_finished=True)
    assert again.questions == first.questions
    (workspace.home / "okgen.toml").write_text("[generate]\nquality_gates = false\n")  # another run key
    with pytest.raises(OkgenError, match=r"6 of the 6 articles of 2026-11-21 have no finished questions"):
        run_generate(DAY, workspace, require_finished=True)


def test_snapshot_build_reads_a_run_made_with_a_relative_agents_folder_from_anywhere(workspace, capsys, monkeypatch,
                                                                                      tmp_path):
    """The run records its agents folder resolved: read back from another folder it is found, and
    a run made from an --articles file is not read back as the store's (it was not made from it)."""
    stored_fixture_articles(workspace)
    here = tmp_path / "cwd1"
    shutil.copytree(packaged_agents_dir(), here / "myagents")
    monkeypatch.chdir(here)
    code, _, err = run_cli(capsys, "generate", "--date", str(DAY), "--agents", "myagents")
    assert code == 0, err
    monkeypatch.chdir(tmp_path)
    code, _, err = run_cli(capsys, "snapshot", "build", "--date", str(DAY))
    assert code == 0 and "the finished generation of 2026-11-21 by extractive" in err, err
    other = tmp_path / "arts.jsonl"
    write_jsonl(other, [a for a in fixture_articles() if a.date == DAY][:3])
    code, _, err = run_cli(capsys, "generate", "--date", str(DAY), "--articles", str(other), "--per-article", "2")
    assert code == 0, err
    code, _, err = run_cli(capsys, "snapshot", "build", "--date", str(DAY), "--generator", "extractive")
    # The store's run, not the --articles one: the same questions as the first build (within the
    # same second, the same snapshot folder, which is refused rather than overwritten).
    assert "5 per article" in err and (code == 0 or "already exists" in err), err
