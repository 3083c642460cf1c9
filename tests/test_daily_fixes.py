"""okgen daily, schedule, gc and status: usage errors, checks before any work, a failed --force,
interrupted runs and the per-date lines of a backfill. Fast: the stages are stand-ins."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from okgen.cli.main import main
from okgen.daily import pipeline
from okgen.daily.pipeline import DailyOptions, run_daily, run_range
from okgen.daily.state import RunState
from okgen.errors import ConfigError, OkgenError
from okgen.settings import Workspace
from okgen.signature import Signature

DAY = dt.date(2026, 11, 21)


def cli(capsys, *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as e:
        main(list(args))
    out, err = capsys.readouterr()
    return e.value.code, out, err


def signature(date: dt.date, second: int = 0) -> str:
    return Signature(
        date=date, window=10, generator="extractive-v2.0123abcd+spacy", validator="none", temperature=0.0, top_p=1.0,
        max_tokens=0, seed=13, prompt_hash="ab12cd34ef56", feeds_hash="0123456789ab",
        timestamp=dt.datetime(2026, 11, 22, 7, 15, second, tzinfo=dt.timezone.utc), questions=3,
        content_hash="e" * 64, version="0.1.0",
    ).format()


@pytest.fixture
def stages(monkeypatch):
    """Stand-in stages: record the options each ingest saw; ``fail`` names a stage to raise in."""
    ctl = {"fail": None, "ingested": [], "built": 0}

    def stage(name):
        def run(self):
            if ctl["fail"] is not None and ctl["fail"][0] == name:
                raise ctl["fail"][1]
            if name == "ingest":
                ctl["ingested"].append(self.opts)
                return "done", {"stored_total": 1, "stored": 1}
            if name == "generate":
                return "done", {"kept": 3, "candidates": 5, "articles": {"total": 1}}
            if name == "snapshot":
                ctl["built"] += 1
                return "done", {"signature": signature(self.date, ctl["built"]), "path": f"snap-{ctl['built']}",
                                "questions": 3, "articles": 1}
            return "skipped", {"reason": "stand-in"}
        return run

    for name in pipeline.STAGES:
        monkeypatch.setattr(pipeline._RunContext, f"stage_{name}", stage(name))
    return ctl


# -- Defect 6: a failed --force does not shadow the finished run; --force keeps the dump -------

def test_a_failed_force_does_not_shadow_the_finished_signature(tmp_path, stages):
    ws = Workspace(tmp_path)
    first = run_daily(DAY, ws, DailyOptions(retrievers=()))
    assert first.status == "done" and first.signature
    stages["fail"] = ("ingest", OkgenError("all 38 feeds failed"))
    with pytest.raises(OkgenError):
        run_daily(DAY, ws, DailyOptions(retrievers=()), force=True)
    stages["fail"] = None
    again = run_daily(DAY, ws, DailyOptions(retrievers=()))  # plain: the finished run, not the failed attempt
    assert again.already_done and again.signature == first.signature and again.run_id == first.run_id
    assert stages["ingested"] and len(stages["ingested"]) == 1  # nothing ran again
    with RunState(ws.db_path) as st:
        assert [r.status for r in st.runs(date=DAY)] == ["failed", "done"]  # the attempt stays in the history
    forced = run_daily(DAY, ws, DailyOptions(retrievers=()), force=True)  # --force still rebuilds, afresh
    assert forced.signature != first.signature and not forced.already_done


def test_a_forced_run_that_built_its_snapshot_and_failed_later_is_resumed(tmp_path, stages):
    """Its snapshot is in the catalogue (the newest of the day, the one a series takes): a plain
    rerun finishes that run rather than print the older signature."""
    ws = Workspace(tmp_path)
    first = run_daily(DAY, ws, DailyOptions(retrievers=()))
    stages["fail"] = ("index", OkgenError("index failed"))
    with pytest.raises(OkgenError):
        run_daily(DAY, ws, DailyOptions(retrievers=()), force=True)
    stages["fail"] = None
    again = run_daily(DAY, ws, DailyOptions(retrievers=()))
    assert not again.already_done and again.run_id != first.run_id and again.status == "done"
    assert again.signature != first.signature and stages["built"] == 2  # its own snapshot, not built again


def test_force_keeps_how_the_dump_was_read(tmp_path, stages):
    """A dump first read with its undated records left undated (daily --import without --date)
    is re-read so by --force."""
    dump = tmp_path / "dump.jsonl"
    dump.write_text("{}\n")
    ws = Workspace(tmp_path / "ws")
    run_daily(DAY, ws, DailyOptions(import_file=str(dump), retrievers=(), import_undated=False))
    run_daily(DAY, ws, DailyOptions(retrievers=()), force=True)
    assert [(o.import_file, o.import_undated) for o in stages["ingested"]] == [(str(dump), False)] * 2


def test_force_rereads_the_dump_the_date_was_built_from(tmp_path, stages, monkeypatch, caplog):
    dump = tmp_path / "dump.jsonl"
    dump.write_text("{}\n")
    monkeypatch.chdir(tmp_path)
    ws = Workspace(tmp_path / "ws")
    run_daily(DAY, ws, DailyOptions(import_file="dump.jsonl", retrievers=()))  # a relative path, as typed
    monkeypatch.chdir(ws.home.parent.parent)  # from another folder
    with caplog.at_level("WARNING", logger=pipeline.log.name):
        run_daily(DAY, ws, DailyOptions(retrievers=()), force=True)
    assert stages["ingested"][-1].import_file == str(dump.resolve())
    assert any("--force re-reads it" in r.getMessage() and "--import" in r.getMessage() for r in caplog.records)
    # A source given with --force wins.
    run_daily(DAY, ws, DailyOptions(feeds=str(dump), retrievers=()), force=True)
    assert stages["ingested"][-1].import_file is None


def test_force_says_when_the_dump_is_gone(tmp_path, stages, caplog):
    dump = tmp_path / "dump.jsonl"
    dump.write_text("{}\n")
    ws = Workspace(tmp_path / "ws")
    run_daily(DAY, ws, DailyOptions(import_file=str(dump), retrievers=()))
    dump.unlink()
    with caplog.at_level("WARNING", logger=pipeline.log.name):
        run_daily(DAY, ws, DailyOptions(retrievers=()), force=True)
    assert stages["ingested"][-1].import_file is None
    assert any("which is gone" in r.getMessage() for r in caplog.records)


# -- Nit 1: interrupted runs are named, not by a Python class -----------------------------

def test_interrupted_runs_record_what_stopped_them(tmp_path, stages, capsys):
    from okgen.cli.main import _Terminated

    ws = Workspace(tmp_path)
    stages["fail"] = ("generate", _Terminated())
    with pytest.raises(_Terminated):
        run_daily(DAY, ws, DailyOptions(retrievers=()))
    stages["fail"] = ("generate", KeyboardInterrupt())
    with pytest.raises(KeyboardInterrupt):
        run_daily(DAY - dt.timedelta(days=1), ws, DailyOptions(retrievers=()))
    with RunState(ws.db_path) as st:
        runs = {r.date: r for r in st.runs()}
        # An older record, kept with the class name, is shown plainly too.
        old, _ = st.start_or_resume(DAY - dt.timedelta(days=2))
        st.finish_run(old, "interrupted", error="_Terminated: ")
    assert runs[DAY].error == "terminated (SIGTERM)" and runs[DAY].status == "interrupted"
    assert {s.stage: s.error for s in runs[DAY].stages}["generate"] == "terminated (SIGTERM)"
    # The stage says what the run says: interrupted, not failed.
    assert {s.stage: s.status for s in runs[DAY].stages}["generate"] == "interrupted"
    assert runs[DAY - dt.timedelta(days=1)].error == "interrupted (Ctrl-C)"
    code, out, _ = cli(capsys, "--home", str(tmp_path), "status")
    assert "_Terminated" not in out and "KeyboardInterrupt" not in out
    assert out.count("terminated (SIGTERM)") >= 2 and "interrupted (Ctrl-C)" in out
    code, out, _ = cli(capsys, "--home", str(tmp_path), "--json", "status")
    assert json.loads(out)["runs"][0]["error"] == "terminated (SIGTERM)"


# -- Defect 5: retriever names before any work ----------------------------------------------

def test_an_unknown_retriever_on_the_command_line_is_a_usage_error(tmp_path, capsys):
    code, _, err = cli(capsys, "--home", str(tmp_path), "daily", "--date", str(DAY), "--retrievers", "foo,bm25")
    assert code == 2 and "no retriever spec named 'foo'" in err and "--retrievers" in err
    assert not (tmp_path / "data" / "okgen.sqlite").exists()  # no run was started


def test_an_unknown_retriever_in_okgen_toml_is_a_config_error(tmp_path, capsys):
    (tmp_path / "okgen.toml").write_text('[daily]\nretrievers = ["bm25", "foo"]\n')
    with pytest.raises(ConfigError, match=r"okgen.toml \[daily\] retrievers: no retriever spec named 'foo'"):
        DailyOptions.resolve(Workspace(tmp_path))
    code, _, err = cli(capsys, "--home", str(tmp_path), "daily", "--date", str(DAY))
    assert code == 1 and err.strip().splitlines()[-1].startswith("okgen: error: ") and "'foo'" in err
    assert len(err.strip().splitlines()) == 1 and not (tmp_path / "data" / "okgen.sqlite").exists()
    assert DailyOptions.resolve(Workspace(tmp_path), retrievers="bm25").retrievers == ("bm25",)  # a known one is fine


# -- Defect 8: okgen.toml that is a folder ---------------------------------------------------

def test_an_unreadable_okgen_toml_is_a_one_line_config_error(tmp_path, capsys):
    (tmp_path / "okgen.toml").mkdir()
    with pytest.raises(ConfigError, match="okgen.toml: Is a directory"):
        DailyOptions.resolve(Workspace(tmp_path))
    code, _, err = cli(capsys, "--home", str(tmp_path), "daily", "--date", str(DAY))
    assert code == 1 and err.strip() == f"okgen: error: {tmp_path / 'okgen.toml'}: Is a directory", err


# -- Defects 7 and 9, Doc 5: usage errors exit 2 ---------------------------------------------

@pytest.mark.parametrize(("args", "message"), [
    (["daily", "--date", ""], "empty date"),
    (["daily", "--date", "  "], "empty date"),
    (["daily", "--from", "", "--to", "2025-04-12"], "empty date"),
    (["daily", "--from", "2025-04-12", "--to", "2025-04-10"], "2025-04-10 is before --from 2025-04-12"),
    (["daily", "--date", "2025-04-12", "--windows", "0"], "'0' is not a number of days"),
    (["daily", "--date", "2025-04-12", "--windows", "a,b"], "'a' is not a number of days"),
    (["daily", "--date", "2025-04-12", "--windows", ","], "',' has an empty item"),
    (["daily", "--date", "2025-04-12", "--windows", " "], "at least one window"),
    (["gc", "--keep-days", "-5"], "--keep-days"),
    (["schedule", "--at", "25:00"], "HH:MM"),
    (["schedule", "--tz", "Mars/Olympus"], "unknown time zone"),
    (["schedule", "--misfire-grace", "0"], "--misfire-grace"),
    (["schedule", "--misfire-grace", "-5"], "--misfire-grace"),
    (["schedule", "--catch-up-days", "-1"], "--catch-up-days"),
])
def test_bad_option_values_are_usage_errors(tmp_path, capsys, args, message):
    code, _, err = cli(capsys, "--home", str(tmp_path), *args)
    assert code == 2 and message in err, err
    assert "internal error" not in err and not (tmp_path / "data" / "okgen.sqlite").exists()


def test_a_bad_window_from_the_environment_stays_a_settings_error(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("OKGEN_DAILY_WINDOWS", "0")
    code, _, err = cli(capsys, "--home", str(tmp_path), "daily", "--date", str(DAY))
    assert code == 1 and "OKGEN_DAILY_WINDOWS: Input should be greater than or equal to 1" in err


# -- Nits 2 and 7: grammar; one line a date in a backfill ------------------------------------

def test_stage_lines_count_in_the_singular_too():
    from okgen.cli.daily import _brief

    assert _brief("generate", {"kept": 1, "candidates": 3}) == "1 question kept of 3 candidates"
    assert _brief("generate", {"kept": 2, "candidates": 1}) == "2 questions kept of 1 candidate"
    assert _brief("ingest", {"stored_total": 1, "stored": 1}) == "1 article for the date, 1 new"
    assert _brief("snapshot", {"questions": 1, "articles": 1}) == "1 question, 1 corpus article"
    assert _brief("snapshot", {"questions": 4, "articles": 9}) == "4 questions, 9 corpus articles"


def test_a_backfill_prints_one_line_a_date_as_it_goes(tmp_path, stages, capsys, monkeypatch):
    seen = []
    ws = Workspace(tmp_path)
    out = run_range(DAY - dt.timedelta(days=1), DAY, ws, DailyOptions(retrievers=()), on_result=seen.append)
    assert [r.date for r in seen] == [r.date for r in out] == [DAY - dt.timedelta(days=1), DAY]

    stages["fail"] = ("generate", OkgenError("the model is down"))
    monkeypatch.setattr(pipeline.DailyOptions, "resolve", classmethod(lambda cls, ws, **kw: DailyOptions(retrievers=())))
    code, stdout, err = cli(capsys, "--home", str(tmp_path), "daily", "--from", str(DAY - dt.timedelta(days=1)),
                            "--to", str(DAY + dt.timedelta(days=1)))
    assert code == 1
    lines = [ln for ln in err.splitlines() if ln.startswith(("okgen: 2026-", "okgen: error"))]
    short = Signature.parse(signature(DAY, 2)).short
    before = DAY - dt.timedelta(days=1)
    assert lines[0] == f"okgen: {before}: done (3 questions, {Signature.parse(signature(before, 1)).short}, built earlier)"
    assert lines[1] == f"okgen: {DAY}: done (3 questions, {short}, built earlier)"
    assert lines[2] == f"okgen: {DAY + dt.timedelta(days=1)}: failed: the model is down"
    assert lines[3].startswith("okgen: error: 1 of 3 date(s) failed")
    assert len(stdout.strip().splitlines()) == 3  # the table on stdout is unchanged


def test_daily_import_without_a_date_leaves_undated_records_undated(tmp_path, stages, capsys):
    """`okgen daily --import F` without --date runs for yesterday; the dump's undated records are
    not taken as yesterday's news (with --date D they are D's)."""
    dump = tmp_path / "dump.json"
    dump.write_text("[]")
    code, _, err = cli(capsys, "--home", str(tmp_path / "a"), "daily", "--import", str(dump))
    assert code == 0, err
    code, _, err = cli(capsys, "--home", str(tmp_path / "b"), "daily", "--import", str(dump), "--date", str(DAY))
    assert code == 0, err
    assert [o.import_undated for o in stages["ingested"]] == [False, True]


def test_an_empty_ingest_date_is_a_usage_error(tmp_path, capsys):
    code, _, err = cli(capsys, "--home", str(tmp_path), "ingest", "--date", "")
    assert code == 2 and "--date: is empty" in err


def test_status_names_a_retriever_okgen_daily_would_stop_on(tmp_path, capsys):
    (tmp_path / "okgen.toml").write_text('[daily]\nretrievers = ["bm25", "foo"]\n')
    code, out, _ = cli(capsys, "--home", str(tmp_path), "status")
    assert code == 1 and "[daily] retrievers: no retriever spec named 'foo'" in out
    # snapshot build indexes nothing: a bad retriever is not its concern
    code, _, err = cli(capsys, "--home", str(tmp_path), "snapshot", "build", "--date", str(DAY))
    assert "retriever" not in err and "no articles dated 2026-11-21" in err
