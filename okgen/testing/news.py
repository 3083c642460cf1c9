"""Hand-written news articles for tests: realistic prose, not templates.

:func:`fixture_articles` returns ten articles from five outlets over two days (November 20 and
21, 2026), with the things real news has and templates lack: titles before names, quotes,
pronouns, relative days ("on Tuesday"), datelines-free leads, numbers in several formats. The
events and people are invented.
"""

from __future__ import annotations

import datetime as dt

from okgen.hashing import sha256_text
from okgen.schema import Article, article_id

_ARTICLES: list[tuple[str, str, str, str, str]] = [
    # (date, outlet, outlet name, title, text)
    ("2026-11-21", "reuters", "Reuters", "Halvorsen Energy to build $2.3 billion battery plant in Gdansk",
     "Halvorsen Energy will build a $2.3 billion battery factory near the Polish port of Gdansk, the "
     "Norwegian company said on Thursday, in the largest foreign investment in Poland's energy sector "
     "this year.\n\n"
     "Chief executive Ingrid Solberg said the plant would employ 1,800 people when it reaches full "
     "production in 2029. \"Poland gives us the grid, the port and the workforce we need,\" she told "
     "reporters in Warsaw.\n\n"
     "The factory is designed to produce cells for grid storage with a capacity of 16 gigawatt hours a "
     "year. Poland's development ministry said it would contribute 410 million zloty in grants. "
     "Shares in Halvorsen Energy rose 6.4 percent in Oslo after the factory announcement. Construction is due "
     "to begin on March 2, 2027."),
    ("2026-11-21", "bbc", "BBC News", "Kestrel Airways cancels 240 flights as pilots strike",
     "Kestrel Airways cancelled 240 flights on Saturday as pilots began a 48-hour strike over pay, "
     "leaving about 31,000 passengers stranded across Europe.\n\n"
     "The British Airline Pilots' Association said talks with the carrier broke down late on Friday. "
     "Its general secretary, Tamsin Whitlock, said pilots had been offered a rise of 3 percent while "
     "inflation ran well above that.\n\n"
     "The airline said it would refund or rebook every affected passenger. Most of the cancelled "
     "flights were to or from Manchester and Edinburgh. Transport Secretary Rahul Mehta urged both "
     "sides to return to the table."),
    ("2026-11-21", "guardian", "The Guardian", "Lisbon unveils plan to plant 50,000 trees by 2030",
     "Lisbon's city council approved a plan on Friday to plant 50,000 trees across the Portuguese "
     "capital by 2030, in an effort to cool streets that reached record temperatures last summer.\n\n"
     "Mayor Beatriz Almeida said the programme would cost €68 million and would focus on the "
     "districts with the least shade. The council expects the new canopy to lower peak street "
     "temperatures by up to 4 degrees Celsius.\n\n"
     "Environmental groups welcomed the decision but said the city should also protect existing "
     "trees. Quercus, a Portuguese conservation association, counted 1,150 trees felled for "
     "construction projects in Lisbon in 2025."),
    ("2026-11-21", "techcrunch", "TechCrunch", "Brightline Robotics raises $410 million for warehouse robots",
     "Brightline Robotics, a Boston startup that makes autonomous forklifts, has raised $410 million in "
     "a funding round led by Meridian Capital, valuing the company at $3.2 billion.\n\n"
     "Co-founder and chief executive Dario Marchetti said the money would pay for a new factory in "
     "Monterrey and for expanding its engineering team from 350 to 600 people. Brightline's robots "
     "now run in 140 warehouses, up from 45 a year earlier.\n\n"
     "The company faces competition from Atlas Semiconductors, which announced its own forklift "
     "system in September. Marchetti said Brightline expected revenue of $120 million in 2026."),
    ("2026-11-21", "aljazeera", "Al Jazeera", "Floods in Cebu force thousands from their homes",
     "Floods in the central Philippine province of Cebu have forced 12,400 people from their homes "
     "after three days of torrential rain, the provincial disaster office said on Saturday.\n\n"
     "At least 9 people were killed and 2 remain missing, according to the office. Governor Elena "
     "Ramos declared a state of calamity, which releases emergency funds for relief.\n\n"
     "The national weather agency PAGASA said rainfall in Cebu City reached 310 millimetres in 24 "
     "hours, more than the usual total for the whole month of November. The Philippine Red Cross "
     "said it had sent 80 volunteers and 2,000 food packs to evacuation centres."),
    ("2026-11-21", "reuters", "Reuters", "Meridian Bank fined €45 million over data breach",
     "Portugal's data protection authority fined Meridian Bank €45 million on Friday over a 2024 data "
     "breach that exposed the records of 870,000 customers.\n\n"
     "The regulator said the bank had failed to encrypt customer files and had waited 11 days before "
     "reporting the breach. Meridian Bank said it would appeal.\n\n"
     "The fine is the largest imposed under European data protection rules in Portugal. Chief "
     "risk officer Henrik Lindqvist said the bank had since invested €30 million in security."),
    ("2026-11-20", "bbc", "BBC News", "Orion Space Systems delays Kestrel satellite launch",
     "Orion Space Systems has postponed the launch of its Kestrel weather satellite to January 14, "
     "2027 after engineers found a fault in a fuel valve, the company said on Friday.\n\n"
     "The satellite, built for the European Organisation for the Exploitation of Meteorological "
     "Satellites, was due to lift off from French Guiana on December 3. Programme director Hiroshi "
     "Tanaka said the valve would be replaced and tested over the next six weeks.\n\n"
     "The delay is the second for the mission, which has cost about €540 million so far."),
    ("2026-11-20", "guardian", "The Guardian", "Verdant Foods to cut 700 jobs in the Netherlands",
     "Verdant Foods will close its Rotterdam factory and cut 700 jobs in the Netherlands, the Dutch "
     "food maker said on Friday, blaming higher energy costs.\n\n"
     "The company said production would move to its plant in Antwerp by the end of 2027. Union FNV "
     "said it would fight the closure. Verdant's chief operating officer, Sanne de Vries, said the "
     "decision had been \"extremely difficult\".\n\n"
     "Verdant Foods reported a net loss of €82 million for the first half of 2026."),
    ("2026-11-20", "dw", "DW", "Germany approves 12 new wind farms in the North Sea",
     "Germany's Federal Network Agency approved 12 new offshore wind farms in the North Sea on Friday, "
     "with a combined capacity of 7.5 gigawatts.\n\n"
     "Economy Minister Katrin Albers said the projects would supply power to about 9 million homes "
     "from 2031. The largest, built by Halvorsen Energy and Lumen Power, will have 96 turbines.\n\n"
     "The agency said developers had committed to paying €1.9 billion for the seabed rights."),
    ("2026-11-20", "npr", "NPR", "Toronto transit strike ends after 9 days",
     "Toronto's public transit workers returned to work on Friday, ending a 9-day strike that halted "
     "buses and subway trains across Canada's largest city.\n\n"
     "The union, which represents 11,500 workers, accepted a contract that raises wages by 14 percent "
     "over four years. Mayor Olivia Harrington said service would be back to normal by Monday.\n\n"
     "The Toronto Transit Commission estimated that the strike cost it about $38 million in lost fares."),
]


def fixture_articles() -> list[Article]:
    """The ten fixture articles, sorted by date and id."""
    out = []
    for date_s, outlet, name, title, text in _ARTICLES:
        date = dt.date.fromisoformat(date_s)
        slug = sha256_text(title)[:10]
        url = f"https://news.example.com/{outlet}/{date:%Y/%m/%d}/{slug}"
        published = dt.datetime(date.year, date.month, date.day, 9, 30, tzinfo=dt.timezone.utc)
        out.append(Article(
            id=article_id(url), url=url, canonical_url=url, source=outlet, source_name=name,
            category="fixture", title=title, author=None, published_at=published, date=date,
            date_source="feed", fetched_at=published + dt.timedelta(hours=2), language="en",
            text=text, text_sha256=sha256_text(text), extractor="okgen.testing.news",
        ))
    out.sort(key=lambda a: (a.date, a.id))
    return out
