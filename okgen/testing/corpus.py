"""A deterministic synthetic news corpus for tests and benchmarks.

:func:`make_articles` writes plausible news articles (people, organisations, places, sums of
money, counts, dates) from templates; :func:`make_questions` turns the facts each article was
built from into dated multiple-choice questions whose answers are verbatim in the article.
The same seed always gives the same records, and nothing is downloaded.
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Sequence
from dataclasses import dataclass

from okgen.hashing import sha256_text
from okgen.schema import Article, Question, article_id

FIRST = ["Amara", "Bastian", "Chiara", "Dmitri", "Elena", "Farid", "Greta", "Hiroshi", "Ingrid", "Jonas",
         "Kalinda", "Lorenzo", "Mei", "Nikolai", "Olivia", "Pavel", "Quentin", "Rosa", "Samir", "Tamsin",
         "Ulrich", "Valeria", "Wendell", "Ximena", "Yusuf", "Zofia", "Anika", "Bruno", "Camille", "Dario"]
LAST = ["Okafor", "Lindqvist", "Moretti", "Volkov", "Castellanos", "Haddad", "Brandt", "Tanaka", "Solberg",
        "Weiss", "Achebe", "Ferrante", "Zhou", "Petrov", "Harrington", "Novak", "Delacroix", "Ibarra",
        "Rahman", "Whitlock", "Kessler", "Quintero", "Abernathy", "Mendoza", "Yilmaz", "Kowalska", "Sato",
        "Dubois", "Eriksen", "Marchetti"]
ORGS = ["Halvorsen Energy", "Brightline Robotics", "Meridian Bank", "Northwind Airlines", "Cobalt Pharma",
        "Atlas Semiconductors", "Verdant Foods", "Orion Space Systems", "Keystone Insurance", "Lumen Telecom",
        "Sterling Motors", "Helix Biotech", "Tidewater Shipping", "Granite Cloud", "Solstice Media",
        "Pinecrest Retail", "Aurora Mining", "Redwood Analytics", "Beacon Health", "Harbor Logistics"]
AGENCIES = ["the European Commission", "the World Health Organization", "the Federal Reserve",
            "the International Energy Agency", "the United Nations", "the Bank of England",
            "the African Union", "the World Trade Organization", "NASA", "the IMF"]
PLACES = ["Lisbon", "Nairobi", "Osaka", "Toronto", "Krakow", "Santiago", "Jakarta", "Rotterdam", "Auckland",
          "Casablanca", "Bangalore", "Reykjavik", "Monterrey", "Tbilisi", "Accra", "Hanoi", "Bergen",
          "Valparaiso", "Leipzig", "Cebu"]
ROLES = ["chief executive", "finance minister", "lead researcher", "spokesperson", "chief economist",
         "mayor", "head of operations", "chair", "president", "chief scientist"]
PRODUCTS = ["Falcon X2 drone", "Aria smart speaker", "Nimbus battery pack", "Vega electric bus",
            "Kestrel satellite", "Quartz tablet", "Sable heat pump", "Comet chipset", "Tern cargo ship",
            "Juniper vaccine"]
SPORTS = ["the Coastal Cup", "the Northern League final", "the Harbour Marathon", "the Alpine Open",
          "the Continental Relay", "the Summit Classic"]
OUTLETS = [("bbc", "BBC News"), ("guardian", "The Guardian"), ("npr", "NPR"), ("aljazeera", "Al Jazeera"),
           ("dw", "DW"), ("techcrunch", "TechCrunch"), ("arstechnica", "Ars Technica"), ("cna", "CNA")]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]

# (sentence template, question template, answer slot, answer type)
FACTS = [
    ("{person}, the {role} of {org}, said the company would invest {money} in a new plant in {place}.",
     "How much did {org} say on {date} it would invest in a new plant in {place}?", "money", "money"),
    ("{org} reported that {count} employees had signed up for its retraining programme in {place}.",
     "How many employees had signed up for {org}'s retraining programme in {place}, as of {date}?", "count", "count"),
    ("Officials in {place} confirmed that {org} had been chosen to build the city's new {product}.",
     "Which company did officials in {place} confirm on {date} had been chosen to build the city's new {product}?", "org", "org"),
    ("{agency} said global demand for the {product} rose by {percent} over the previous year.",
     "By how much did {agency} say on {date} that global demand for the {product} rose over the previous year?", "percent", "percent"),
    ("{person} was appointed {role} of {org}, replacing a predecessor who served for {years} years.",
     "Who was appointed {role} of {org} on {date}?", "person", "person"),
    ("The {product} developed by {org} will go on sale in {place} on {future}.",
     "On what date will the {product} developed by {org} go on sale in {place}, as announced on {date}?", "future", "date"),
    ("{person} won {sport} in {place} with a time of {time}.",
     "Who won {sport} in {place} on {date}?", "person", "person"),
    ("{org} agreed to buy {org2} for {money}, according to a filing published on {weekday}.",
     "Which company agreed on {date} to buy {org2} for {money}?", "org", "org"),
    ("Regulators in {place} fined {org} {money} over a data breach that affected {count} customers.",
     "How much were {org} fined by regulators in {place} on {date}?", "money", "money"),
    ("Researchers at {org} said their trial of the {product} involved {count} volunteers in {place}.",
     "How many volunteers did researchers at {org} say on {date} were involved in their trial of the {product}?", "count", "count"),
    ("Flooding in {place} forced the evacuation of {count} residents, the local {role} said.",
     "How many residents were evacuated from flooding in {place}, as of {date}?", "count", "count"),
    ("{agency} named {place} as the host of its next summit, to be held on {future}.",
     "Which city did {agency} name on {date} as the host of its next summit?", "place", "place"),
]
FILLER = [
    "Analysts said the move reflected a broader shift in the sector.",
    "The announcement was welcomed by local business groups.",
    "Critics argued that more details were needed before the plan could be judged.",
    "Shares in the company moved only slightly after the news.",
    "The decision follows months of negotiations between the parties involved.",
    "Further updates are expected later in the week.",
    "Union representatives said they would study the proposal carefully.",
    "The project had faced delays because of supply problems last year.",
]


@dataclass(frozen=True)
class Fact:
    """A fact an article states, with the question that asks for it."""

    article_id: str
    sentence: str
    question: str
    answer: str
    kind: str


def _money(r: random.Random) -> str:
    unit = r.choice(["million", "billion"])
    n = r.randint(2, 950) if unit == "million" else r.randint(1, 40)
    cur = r.choice(["$", "€", "£"])
    return f"{cur}{n} {unit}"


def _slots(r: random.Random, date: dt.date) -> dict[str, str]:
    future = date + dt.timedelta(days=r.randint(10, 200))
    orgs = r.sample(ORGS, 2)
    return {
        "person": f"{r.choice(FIRST)} {r.choice(LAST)}",
        "role": r.choice(ROLES),
        "org": orgs[0],
        "org2": orgs[1],
        "agency": r.choice(AGENCIES),
        "place": r.choice(PLACES),
        "product": r.choice(PRODUCTS),
        "sport": r.choice(SPORTS),
        "money": _money(r),
        "count": f"{r.randint(120, 98000):,}",
        "percent": f"{r.randint(2, 60)} percent",
        "years": str(r.randint(3, 25)),
        "time": f"{r.randint(1, 3)} hours {r.randint(1, 59)} minutes",
        "future": f"{future:%B} {future.day}, {future.year}",
        "weekday": WEEKDAYS[date.weekday()],
    }


def make_articles(n: int, end_date: dt.date, days: int = 10, seed: int = 0, facts_per_article: int = 4,
                  language: str = "en") -> tuple[list[Article], list[Fact]]:
    """Make ``n`` articles spread over the ``days`` days ending on ``end_date``.

    Returns:
        The articles (sorted by date and id) and the facts they state.
    """
    r = random.Random(seed)
    articles: list[Article] = []
    facts: list[Fact] = []
    for i in range(n):
        date = end_date - dt.timedelta(days=i % days)
        outlet, outlet_name = OUTLETS[r.randrange(len(OUTLETS))]
        url = f"https://news.example.org/{outlet}/{date:%Y/%m/%d}/story-{seed}-{i}"
        aid = article_id(url)
        chosen = r.sample(FACTS, k=min(facts_per_article, len(FACTS)))
        sentences: list[str] = []
        title = ""
        for j, (stpl, qtpl, slot, kind) in enumerate(chosen):
            s = _slots(r, date)
            s["date"] = f"{date:%B} {date.day}, {date.year}"
            sentence = stpl.format(**s)
            sentences.append(sentence)
            # A round-up's headline names each of its stories (the offline generator refuses a
            # sentence whose nouns and names neither the title nor another sentence has).
            lead = sentence.split(",")[0].rstrip(".")
            title = lead[:90] if j == 0 else f"{title}; {' '.join(sentence.split(', ')[0].split()[:4])}"
            facts.append(Fact(aid, sentence, qtpl.format(**s), s[slot], kind))
            sentences.extend(r.sample(FILLER, 2))
        text = " ".join(sentences[:3]) + "\n\n" + " ".join(sentences[3:])
        published = dt.datetime(date.year, date.month, date.day, r.randint(0, 23), r.randint(0, 59), tzinfo=dt.timezone.utc)
        articles.append(Article(
            id=aid, url=url, canonical_url=url, source=outlet, source_name=outlet_name, category="synthetic",
            title=title, author=f"{r.choice(FIRST)} {r.choice(LAST)}", published_at=published, date=date,
            date_source="feed", fetched_at=published + dt.timedelta(hours=1), language=language, text=text,
            text_sha256=sha256_text(text), extractor="okgen.testing.corpus",
        ))
    articles.sort(key=lambda a: (a.date, a.id))
    return articles, facts


def make_questions(articles: Sequence[Article], facts: Sequence[Fact], date: dt.date, seed: int = 0,
                   per_article: int = 2) -> list[Question]:
    """Turn facts of the articles dated ``date`` into multiple-choice questions.

    Distractors are answers of the same kind from other facts; the correct position cycles
    through A-D so positions are balanced.
    """
    r = random.Random(seed)
    by_id = {a.id: a for a in articles}
    pool: dict[str, list[str]] = {}
    for f in facts:
        pool.setdefault(f.kind, [])
        if f.answer not in pool[f.kind]:
            pool[f.kind].append(f.answer)
    out: list[Question] = []
    taken: dict[str, int] = {}
    for f in facts:
        a = by_id.get(f.article_id)
        if a is None or a.date != date or taken.get(a.id, 0) >= per_article:
            continue
        others = [x for x in pool[f.kind] if x != f.answer]
        if len(others) < 3:
            continue
        taken[a.id] = taken.get(a.id, 0) + 1
        distractors = r.sample(others, 3)
        pos = len(out) % 4
        choices = distractors[:pos] + [f.answer] + distractors[pos:]
        out.append(Question(
            id=Question.make_id(a.id, f.question), article_id=a.id, date=date, source=a.source,
            question=f.question, choices=tuple(choices), answer_index=pos, answer=f.answer,
            short_answer=f.answer, rationale="Stated in the article.", evidence=f.sentence,
            generator="synthetic-v1",
        ))
    return out
