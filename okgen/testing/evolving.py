"""A small hand-written news stream whose facts change over five days, for tests.

Three outlets (``alpha``, ``beta``, ``gamma``) report on 2026-03-02 .. 2026-03-06 (Monday to
Friday). What the story does, by track (the gold value per day, ``-`` = not known yet):

=====================================  ==========================  ===========================
track                                  gold per day                what it exercises
=====================================  ==========================  ===========================
tariff_rate / Brazil                   - 10% 10% 25% 40%           3 changes; a late report of
                                                                   the old rate (retrospective)
death_toll / Valparaiso                40 87 87 87 112             a single-outlet report of 112
                                                                   on day 4 is not a transition
leads / Masters                        - Rose Rose McIlroy McIlroy 2 changes, person values
holds_office / Chief Executive of      Cook every day              a constant track: no question
Apple
price / gold                           two outlets disagree on     a same-day conflict: excluded
                                       day 2
=====================================  ==========================  ===========================
"""

from __future__ import annotations

import datetime as dt

from okgen.hashing import sha256_text
from okgen.schema import Article, article_id

START = dt.date(2026, 3, 2)
DAYS = [START + dt.timedelta(days=i) for i in range(5)]
OUTLETS = ("alpha", "beta", "gamma")

FILLER = {
    "alpha": "Canadian Prime Minister Mark Carney said the talks would continue next week. "
             "Toyota chief executive Koji Sato said sales were strong.",
    "beta": "Spanish Prime Minister Pedro Sanchez met business leaders in Madrid. "
            "Microsoft chief executive Satya Nadella spoke at a conference in Seattle.",
    "gamma": "German Chancellor Olaf Scholz said the budget would be published soon. "
             "Nvidia chief executive Jensen Huang said demand for chips remained high.",
}
TARIFF = "The United States raised tariffs on Brazilian goods to {v} on {wd}, the White House said."
TOLL = "The death toll from the earthquake in Valparaiso rose to {v} on {wd}, officials said."
LEAD = "{v} leads the Masters after a strong round at Augusta National."
OFFICE = "Apple chief executive Tim Cook said the company would open a new store in Lisbon."
GOLD = "The price of gold rose to ${v} an ounce on {wd}, traders said."
RETRO = "Tariffs on Brazilian goods had initially been set at 10% last month, officials said."

# day index -> outlet -> sentences (besides the filler)
STORY: dict[int, dict[str, list[str]]] = {
    0: {"alpha": [TOLL.format(v=40, wd="Monday"), OFFICE], "beta": [TOLL.format(v=40, wd="Monday")],
        "gamma": [OFFICE]},
    1: {"alpha": [TARIFF.format(v="10%", wd="Tuesday"), TOLL.format(v=87, wd="Tuesday"), LEAD.format(v="Justin Rose")],
        "beta": [TARIFF.format(v="10%", wd="Tuesday"), TOLL.format(v=87, wd="Tuesday"), LEAD.format(v="Justin Rose"), OFFICE],
        "gamma": [OFFICE]},
    2: {"alpha": [TOLL.format(v=87, wd="Wednesday"), GOLD.format(v="3,000", wd="Wednesday"), OFFICE],
        "beta": [LEAD.format(v="Justin Rose"), GOLD.format(v="3,100", wd="Wednesday")],
        "gamma": [TARIFF.format(v="10%", wd="Wednesday")]},
    3: {"alpha": [TARIFF.format(v="25%", wd="Thursday"), LEAD.format(v="Rory McIlroy"), OFFICE],
        "beta": [TARIFF.format(v="25%", wd="Thursday"), LEAD.format(v="Rory McIlroy")],
        "gamma": [TOLL.format(v=112, wd="Thursday"), GOLD.format(v="3,000", wd="Thursday")]},
    4: {"alpha": [TARIFF.format(v="40%", wd="Friday"), TOLL.format(v=112, wd="Friday"), LEAD.format(v="Rory McIlroy")],
        "beta": [TARIFF.format(v="40%", wd="Friday"), TOLL.format(v=112, wd="Friday"), OFFICE],
        "gamma": [RETRO, LEAD.format(v="Rory McIlroy"), GOLD.format(v="3,000", wd="Friday")]},
}
# The gold answers the story is written to give (``None``: not known yet).
EXPECTED = {
    ("tariff_rate", "brazil"): [None, "10%", "10%", "25%", "40%"],
    ("death_toll", "valparaiso"): ["40", "87", "87", "87", "112"],
    ("leads", "masters"): [None, "justin rose", "justin rose", "rory mcilroy", "rory mcilroy"],
}


def make_article(date: dt.date, outlet: str, title: str, text: str) -> Article:
    """One article of ``outlet`` dated ``date`` (a stable id from its URL)."""
    url = f"https://{outlet}.example.com/{date:%Y/%m/%d}/{sha256_text(title + text)[:10]}"
    published = dt.datetime(date.year, date.month, date.day, 9, 0, tzinfo=dt.timezone.utc)
    return Article(id=article_id(url), url=url, canonical_url=url, source=outlet, source_name=outlet.title(),
                   category="fixture", title=title, published_at=published, date=date, date_source="feed",
                   fetched_at=published + dt.timedelta(hours=1), language="en", text=text,
                   text_sha256=sha256_text(text), extractor="okgen.testing.evolving")


def story_articles(days: int = 5) -> list[Article]:
    """The story's articles for its first ``days`` days: one per outlet and day."""
    out = []
    for i in range(days):
        for outlet in OUTLETS:
            lines = STORY[i].get(outlet, []) + [FILLER[outlet]]
            out.append(make_article(DAYS[i], outlet, f"{outlet.title()} news digest {DAYS[i]}", " ".join(lines)))
    return out


def story_series(ws, name: str = "story", days: int = 5, skip: tuple[int, ...] = ()):
    """Register one snapshot per story day (the story's articles plus a few synthetic ones that
    carry the snapshot's questions) and pin them as series ``name``; days in ``skip`` get no
    snapshot (the series is then built with gaps allowed)."""
    from okgen.schema import AgentInfo
    from okgen.series.store import build_series
    from okgen.snapshot.build import build_snapshot
    from okgen.testing.corpus import make_articles, make_questions

    story = story_articles(days)
    for i in range(days):
        if i in skip:
            continue
        d = DAYS[i]
        arts, facts = make_articles(3, d, days=1, seed=i)
        qs = make_questions(arts, facts, d, seed=i, per_article=1)
        build_snapshot(qs, arts + [a for a in story if a.date == d], date=d, generator=AgentInfo(model="synthetic-v1"),
                       prompt_hash="0" * 12, feeds_hash="1" * 12, seed=i, windows=(1,), workspace=ws,
                       timestamp=dt.datetime(d.year, d.month, d.day, 6, tzinfo=dt.timezone.utc))
    return build_series(ws, name, DAYS[0], DAYS[days - 1], allow_gaps=bool(skip))
