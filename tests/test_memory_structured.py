"""The structured memory over okgen.facts' offline extractor, on the hand-written evolving story."""

from __future__ import annotations

import pytest

pytest.importorskip("spacy")
pytestmark = pytest.mark.slow  # loads the spaCy pipeline (~20 s on the development machine)

from okgen.memory.base import load_memory  # noqa: E402
from okgen.testing.evolving import DAYS, story_articles  # noqa: E402


@pytest.fixture(scope="module")
def memory():
    m = load_memory("ko-blind")
    m.reset(0)
    arts = story_articles()
    for d in DAYS:
        m.observe(d, [a for a in arts if a.date == d])
    return m


def test_newest_entry_as_of_each_day(memory):
    q = "What is the tariff rate on goods from Brazil?"
    assert memory.retrieve(q, DAYS[0], 1) == []  # not known yet
    assert "10%" in memory.retrieve(q, DAYS[2], 1)[0].text
    assert "25%" in memory.retrieve(q, DAYS[3], 1)[0].text
    newest = memory.retrieve(q, DAYS[4], 1)[0]
    assert "40%" in newest.text and newest.date == DAYS[4].isoformat()  # the late "initially 10%" is not newer


def test_entries_are_dated_and_ordered(memory):
    got = memory.retrieve("What is the death toll of the earthquake in Valparaiso?", DAYS[4], 10)
    assert got and [p.date for p in got] == sorted(p.date for p in got)
    assert all(p.date <= DAYS[4].isoformat() for p in got)
    assert memory.stats()["items"] > 0 and memory.identity() == {"memory": "ko-blind", "extractor": "rules"}
