"""Facts from the spaCy parse (``rules-v1``) and ``okgen facts extract``."""

from __future__ import annotations

import json

import pytest

from okgen.errors import NotFoundError
from okgen.facts import RELATIONS, extract_day, extract_facts, read_facts
from okgen.settings import Workspace
from okgen.testing.evolving import DAYS, story_articles

pytest.importorskip("spacy")


@pytest.fixture(scope="module")
def facts():
    return extract_facts(story_articles())


def slot(facts, relation, subject_key, day):
    return sorted((f.outlet, f.object_key) for f in facts if f.relation == relation and f.subject_key == subject_key
                  and f.reported == day)


def test_relations_values_and_dates(facts):
    assert {f.relation for f in facts} <= set(RELATIONS)
    assert slot(facts, "tariff_rate", "brazil", DAYS[3]) == [("alpha", "25%"), ("beta", "25%")]
    assert slot(facts, "death_toll", "valparaiso", DAYS[0]) == [("alpha", "40"), ("beta", "40")]
    assert slot(facts, "leads", "masters", DAYS[3]) == [("alpha", "rory mcilroy"), ("beta", "rory mcilroy")]
    assert slot(facts, "price", "gold", DAYS[2]) == [("alpha", "3000"), ("beta", "3100")]
    assert ("alpha", "tim cook") in slot(facts, "holds_office", "chief executive of apple", DAYS[0])
    # "on Thursday" in an article of Thursday 2026-03-05 dates the value that day
    tariff = next(f for f in facts if f.relation == "tariff_rate" and f.reported == DAYS[3])
    assert tariff.valid_from == DAYS[3] and "Brazilian goods" in tariff.evidence and not tariff.past
    assert tariff.id.startswith("rules-v1:") and tariff.extractor.startswith("rules-v1+")
    # the late report of the old rate is flagged as past
    retro = [f for f in facts if f.relation == "tariff_rate" and f.reported == DAYS[4] and f.outlet == "gamma"]
    assert retro and all(f.past for f in retro)
    # a title with a country: "Canadian Prime Minister Mark Carney"
    assert any(f.subject == "Prime Minister of Canada" and f.object == "Mark Carney" for f in facts)


def test_ids_are_deterministic(facts):
    again = extract_facts(story_articles())
    assert [f.id for f in again] == [f.id for f in facts]
    assert len({f.id for f in facts}) == len(facts)


def test_extract_day_writes_and_reads_back(tmp_path):
    ws = Workspace(tmp_path)
    arts = story_articles()
    with pytest.raises(NotFoundError, match="no articles dated"):
        extract_day(ws, DAYS[0], articles=[])
    ff = extract_day(ws, DAYS[1], articles=arts)
    assert ff.articles == 3 and ff.facts
    back = read_facts(ws, DAYS[1])
    assert back == ff
    data = json.loads((tmp_path / "data" / "facts" / f"{DAYS[1]}.json").read_text())
    assert data["schema_version"] == 1 and data["kind"] == "okgen-facts"
    with pytest.raises(NotFoundError, match="okgen facts extract --date"):
        read_facts(ws, DAYS[4])


def test_cli_facts_extract(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from okgen.cli.main import cli
    from okgen.ingest.store import ArticleStore

    ws = Workspace(tmp_path)
    with ArticleStore.for_workspace(ws) as store:
        for a in story_articles():
            store.upsert(a)
    res = CliRunner().invoke(cli, ["--home", str(tmp_path), "facts", "extract", "--date", str(DAYS[3]), "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["articles"] == 3 and out["by_relation"]["tariff_rate"] == 2
    res = CliRunner().invoke(cli, ["--home", str(tmp_path), "facts", "show", "--date", str(DAYS[3]), "--relation", "leads"])
    assert res.exit_code == 0 and "Rory McIlroy" in res.stdout
    res = CliRunner().invoke(cli, ["--home", str(tmp_path), "facts", "extract", "--date", "2025-4-1x"])
    assert res.exit_code == 2 and "Invalid value for --date: takes a date YYYY-MM-DD, got '2025-4-1x'" in res.stderr


def test_each_number_goes_with_its_own_trigger_and_place():
    """A sentence with two rates or two tolls: each number takes the tariff word next to it (not
    the other number's) and the place of its own clause (not the first of the sentence)."""
    from okgen.testing.evolving import make_article

    text = ("Beijing placed a 30% tariff on Canadian goods on Monday, in retaliation for the 45% tariff Washington "
            "placed on Chinese goods. After Mexico raised tariffs on Canadian goods to 20 percent, Ottawa raised duties "
            "on imports from Mexico to 35 percent. Since the floods in Peru last year, during which 12 people died, "
            "the storm has killed 40 people in Chile, officials said.")
    got = {(f.relation, f.subject, f.object) for f in extract_facts([make_article(DAYS[0], "alpha", "Digest", text)])}
    assert got == {("tariff_rate", "Canada", "30%"), ("tariff_rate", "Canada", "20 percent"),
                   ("tariff_rate", "Mexico", "35 percent"), ("death_toll", "Peru", "12"), ("death_toll", "Chile", "40")}


def test_fact_extraction_reports_progress_off_a_terminal(caplog, monkeypatch):
    """Long work says how far it is: a line on the ``okgen.progress`` logger (every
    ``OKGEN_PROGRESS_SECONDS``; 0 here: every article)."""
    import logging

    from okgen import progress

    monkeypatch.delenv("OKGEN_QUIET", raising=False)
    monkeypatch.setenv("OKGEN_PROGRESS_SECONDS", "0")
    monkeypatch.setattr(progress.log, "level", logging.INFO)
    caplog.set_level(logging.INFO, logger=progress.LOGGER)
    arts = [a for a in story_articles() if a.date == DAYS[1]]
    extract_facts(arts)
    got = [r.getMessage() for r in caplog.records if r.name == progress.LOGGER]
    assert any(m.startswith(f"facts {DAYS[1]}: {len(arts)}/{len(arts)} (100%)") for m in got), got
