"""``rules-v1``: facts from one sentence's spaCy parse, by hand-written rules.

Each rule looks for one relation of :data:`okgen.facts.records.RELATIONS`:

* numbers (``CARDINAL``, ``MONEY``, ``PERCENT`` entities) next to a trigger word: ``death toll``,
  ``killed``/``dead`` (death_toll), ``injured``/``wounded`` (injured_count), ``tariff`` (tariff_rate,
  subject: the country after ``on``), ``interest rate`` with a central bank, ``approval`` with a
  person, a known asset or index (price), ``the number of X`` (number_of);
* a person after a title with a qualifier, ``Italian Prime Minister Giorgia Meloni``,
  ``Apple CEO Tim Cook`` (holds_office, subject ``Prime Minister of Italy``);
* ``X leads/led the Y`` with a person or team as subject (leads).

A number that is the object of ``from`` or ``by`` (an old value, a change) is never a value;
when a sentence gives several values for one subject and relation the one after ``to``/``at``
wins, and a sentence that still disagrees with itself gives nothing.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from okgen.generate.text import normalize, parse_date

NUMBER_LABELS = {"CARDINAL", "MONEY", "PERCENT", "QUANTITY"}
TITLES = ("prime minister", "president", "chancellor", "chief executive", "ceo", "secretary of state",
          "foreign minister", "finance minister", "defense minister", "defence minister", "health minister",
          "interior minister", "foreign secretary", "home secretary", "defense secretary", "treasury secretary",
          "commerce secretary", "health secretary", "governor", "mayor", "chairman", "chair", "coach",
          "head coach", "manager", "speaker", "attorney general", "pope", "king", "queen", "leader")
DEMONYMS = {"american": "United States", "u.s.": "United States", "us": "United States", "u.s": "United States",
            "united states": "United States", "america": "United States", "usa": "United States",
            "chinese": "China", "canadian": "Canada", "mexican": "Mexico", "british": "United Kingdom",
            "uk": "United Kingdom", "u.k.": "United Kingdom", "britain": "United Kingdom", "french": "France",
            "german": "Germany", "israeli": "Israel", "ukrainian": "Ukraine", "russian": "Russia",
            "japanese": "Japan", "indian": "India", "italian": "Italy", "spanish": "Spain", "european": "European Union",
            "eu": "European Union", "australian": "Australia", "iranian": "Iran", "turkish": "Turkey",
            "south korean": "South Korea", "korean": "South Korea", "brazilian": "Brazil", "vietnamese": "Vietnam",
            "irish": "Ireland", "polish": "Poland", "dutch": "Netherlands", "swiss": "Switzerland",
            "pakistani": "Pakistan", "palestinian": "Palestine", "syrian": "Syria", "dominican": "Dominican Republic", "salvadoran": "El Salvador",
            "el salvadoran": "El Salvador",
            "taiwanese": "Taiwan", "hungarian": "Hungary", "greek": "Greece", "egyptian": "Egypt",
            "saudi": "Saudi Arabia", "thai": "Thailand", "filipino": "Philippines", "scottish": "Scotland",
            "welsh": "Wales", "danish": "Denmark", "norwegian": "Norway", "swedish": "Sweden",
            "finnish": "Finland", "belgian": "Belgium", "austrian": "Austria", "portuguese": "Portugal", "south african": "South Africa", "nigerian": "Nigeria", "argentine": "Argentina"}
ASSETS = {"gold": "gold", "silver": "silver", "bitcoin": "bitcoin", "ether": "ether", "brent": "Brent crude",
          "brent crude": "Brent crude", "oil": "oil", "crude": "oil", "wti": "oil", "s&p 500": "S&P 500",
          "dow jones industrial average": "Dow Jones", "dow": "Dow Jones", "dow jones": "Dow Jones",
          "nasdaq": "Nasdaq", "nasdaq composite": "Nasdaq", "ftse 100": "FTSE 100", "nikkei": "Nikkei 225",
          "nikkei 225": "Nikkei 225", "hang seng": "Hang Seng", "dax": "DAX", "eggs": "eggs", "egg": "eggs",
          "the dollar": "US dollar", "euro": "euro", "pound": "pound", "sterling": "pound", "yen": "yen"}
CENTRAL_BANKS = {"fed": "Federal Reserve", "federal reserve": "Federal Reserve", "the fed": "Federal Reserve",
                 "ecb": "European Central Bank", "european central bank": "European Central Bank",
                 "bank of england": "Bank of England", "bank of japan": "Bank of Japan",
                 "reserve bank of india": "Reserve Bank of India", "bank of canada": "Bank of Canada",
                 "reserve bank of australia": "Reserve Bank of Australia"}
PAST_WORDS = {"initially", "originally", "previously", "earlier", "formerly", "former", "ex"}
DEATH_WORDS = {"kill", "dead", "die", "death", "fatality", "toll", "perish"}
INJURY_WORDS = {"injure", "wound", "hurt", "injury"}
EVENT_LABELS = ("EVENT", "FAC", "GPE", "LOC")
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
LEADABLE = {"race", "poll", "polls", "standings", "table", "league", "tournament", "championship", "field",
            "leaderboard", "primary", "election", "conference", "division", "series", "masters", "open"}


def clean(text: str) -> str:
    """Collapse whitespace and strip quotes, a trailing possessive and a leading 'the '."""
    t = re.split(r"[“”\"(]", " ".join(text.split()))[0] if text[:1] not in "“\"" else " ".join(text.split())
    t = t.strip(" \"'“”‘’,.;:")
    t = re.sub(r"[’']s$", "", t)
    return t[4:] if t.lower().startswith("the ") else t


def key(text: str) -> str:
    """Normalised key of a subject or a value."""
    return normalize(clean(text)).strip()


def same_name(a: str, b: str) -> bool:
    """Two name keys that name one person or body: the same surname ("sergey lavrov" and
    "sergei lavrov"), or spellings that differ by a letter or two ("zelensky", "zelenskyy")."""
    from difflib import SequenceMatcher

    if a == b:
        return True
    ta, tb = a.split(), b.split()
    if ta and tb and ta[-1] == tb[-1] and len(ta[-1]) > 2:
        return True
    return SequenceMatcher(None, a, b).ratio() >= 0.85


def country(text: str) -> str:
    """A country name for a demonym or an abbreviation, else the text cleaned."""
    c = clean(text)
    return DEMONYMS.get(c.lower(), c)


def number_key(text: str) -> str | None:
    """A number's normalised value (``$3,200`` -> ``3200``, ``125%`` -> ``125%``, ``2.5 billion``
    -> ``2500000000``); None when the span holds no digits or number word."""
    t = text.lower().replace(",", "")
    m = re.search(r"\d+(?:\.\d+)?", t)
    if not m:
        return None
    value = float(m.group(0))
    for word, mult in (("trillion", 1e12), ("billion", 1e9), ("million", 1e6), ("thousand", 1e3)):
        if word in t:
            value *= mult
    out = f"{value:.6f}".rstrip("0").rstrip(".")
    return out + ("%" if "%" in t or "percent" in t else "")


def valid_from(sent: Any, reported: dt.date) -> dt.date | None:
    """The day a sentence's first dated expression names, relative to the report date: a
    weekday is the last such day on or before it, ``yesterday`` the day before, an explicit
    date as written; None when the sentence names no day."""
    for ent in sent.ents:
        if ent.label_ != "DATE":
            continue
        t = ent.text.lower()
        if "yesterday" in t:
            return reported - dt.timedelta(days=1)
        if t.strip() in ("today", "this morning", "tonight"):
            return reported
        for i, w in enumerate(WEEKDAYS):
            if w in t and "last" not in t and "next" not in t:
                back = (reported.weekday() - i) % 7
                return reported - dt.timedelta(days=back)
        parsed = parse_date(ent.text, reported.year)
        if parsed is not None and parsed[0] <= reported:
            return parsed[0]
    return None


def _attached(tok: Any) -> str | None:
    """The preposition or verb a number hangs from: ``to``, ``at``, ``from``, ``by``..."""
    head = tok.head
    if tok.dep_ == "pobj" and head.pos_ == "ADP":
        return head.lower_
    if head.pos_ == "ADP":
        return head.lower_
    return None


def _near(sent: Any, ent: Any, words: set[str], span: int = 8) -> Any | None:
    """A token of ``sent`` within ``span`` tokens of ``ent`` whose lemma is in ``words``."""
    lo, hi = max(sent.start, ent.start - span), min(sent.end, ent.end + span)
    for t in ent.doc[lo:hi]:
        if t.lemma_.lower() in words or t.lower_ in words or t.lower_.removesuffix("s") in words:
            return t
    return None


def _trigger(sent: Any, ent: Any, words: set[str], span: int = 10) -> Any | None:
    """The word of ``words`` that this number goes with, not another number's: one right after
    it (``a 125% tariff on US goods``), else the closest before it (``raised tariffs on US goods
    to 84%``), else the first after it within ``span`` tokens."""
    def hit(t: Any) -> bool:
        return t.lemma_.lower() in words or t.lower_ in words or t.lower_.removesuffix("s") in words

    doc = ent.doc
    right = [t for t in doc[ent.end:min(sent.end, ent.end + 3)] if hit(t)]
    if right:
        return right[0]
    left = [t for t in doc[max(sent.start, ent.start - span):ent.start] if hit(t)]
    if left:
        return left[-1]
    return next((t for t in doc[ent.end:min(sent.end, ent.end + span)] if hit(t)), None)


def _place(sent: Any, ent: Any) -> Any | None:
    """The place or event a count belongs to: among the sentence's places and events (not the
    number itself), those in the clause of the number's verb first, then the closest
    (``1,139 people were killed in Israel ..., Israel has killed 50,983 people in Gaza``)."""
    cands = [e for e in sent.ents if e.label_ in EVENT_LABELS and not (e.start < ent.end and ent.start < e.end)]
    if not cands:
        return None
    verb = ent.root
    while verb.pos_ not in ("VERB", "AUX") and verb.head.i != verb.i:
        verb = verb.head
    clause = {t.i for t in verb.subtree} if verb.pos_ in ("VERB", "AUX") else set()
    return min(cands, key=lambda e: (e.root.i not in clause, e.start - ent.end if e.start >= ent.end else ent.start - e.end,
                                     EVENT_LABELS.index(e.label_)))


def _first_ent(sent: Any, labels: tuple[str, ...], skip: Any = None) -> Any | None:
    for label in labels:
        for e in sent.ents:
            if e.label_ == label and (skip is None or not (e.start < skip.end and skip.start < e.end)):
                return e
    return None


def number_facts(sent: Any) -> list[tuple[str, str, str, str, int]]:
    """(relation, subject, object text, object kind, priority) for the numbers of a sentence;
    priority 1 when the number hangs from ``to``/``at`` (the new value), else 0."""
    out = []
    low = normalize(sent.text)
    for ent in sent.ents:
        if ent.label_ not in NUMBER_LABELS or number_key(ent.text) is None:
            continue
        prep = _attached(ent.root)
        if prep in ("from", "by", "of") and ent.label_ != "MONEY" or prep in ("from", "by"):
            continue
        pri = int(prep in ("to", "at"))
        pct = ent.label_ == "PERCENT" or "%" in ent.text or "percent" in ent.text.lower()
        if pct:
            tar = _trigger(sent, ent, {"tariff", "levy", "duty"}, 10)
            if tar is not None:
                tgt = _tariff_target(tar)
                if tgt:
                    out.append(("tariff_rate", tgt, ent.text, "percent", pri))
                continue
            if _near(sent, ent, {"approval"}) is not None:
                p = _first_ent(sent, ("PERSON",))
                if p is not None:
                    out.append(("approval_rating", clean(p.text), ent.text, "percent", pri))
                continue
            if " interest rate" in low or " rates " in low:
                bank = next((v for k, v in CENTRAL_BANKS.items() if f" {k} " in low), None)
                if bank and _near(sent, ent, {"rate", "rates"}, 10) is not None:
                    out.append(("interest_rate", bank, ent.text, "percent", pri))
            continue
        if ent.label_ == "MONEY" or ent.label_ == "CARDINAL" and prep in ("to", "at", "above", "below", "near"):
            asset = _asset(sent, ent)
            if asset:
                out.append(("price", asset, ent.text, "money" if ent.label_ == "MONEY" else "number", pri))
                continue
        if ent.label_ != "CARDINAL":
            continue
        rel = None
        toll = " death toll " in low and prep in ("to", "at", "of")
        if (toll or _near(sent, ent, DEATH_WORDS, 6) is not None) and not _near(sent, ent, INJURY_WORDS, 3):
            rel = "death_toll"
        elif _near(sent, ent, INJURY_WORDS, 5) is not None:
            rel = "injured_count"
        if rel:
            where = _place(sent, ent)
            if where is not None:
                out.append((rel, country(where.text), ent.text, "count", pri))
            continue
        num = _number_of(sent)
        if num and prep in ("to", "at", None) and ent.root.dep_ in ("pobj", "attr", "dobj"):
            out.append(("number_of", num, ent.text, "count", pri))
    return out


def _tariff_target(tar: Any) -> str | None:
    """The country after ``tariffs on``: ``on Chinese goods`` -> China, ``on China`` -> China."""
    for prep in tar.children:
        if prep.dep_ == "prep" and prep.lower_ in ("on", "against"):
            for t in prep.subtree:
                if t.ent_type_ in ("GPE", "NORP"):
                    span = next(e for e in t.doc.ents if e.start <= t.i < e.end)
                    return country(span.text)
                if t.lower_ in DEMONYMS:
                    return DEMONYMS[t.lower_]
    doc = tar.doc
    if tar.i + 1 < len(doc) and doc[tar.i + 1].lower_ in ("on", "against"):  # a parse that hangs "on" elsewhere
        for t in doc[tar.i + 2:min(len(doc), tar.i + 6)]:
            if t.ent_type_ in ("GPE", "NORP"):
                return country(next(e for e in doc.ents if e.start <= t.i < e.end).text)
    return None


def _asset(sent: Any, ent: Any) -> str | None:
    lo, hi = max(sent.start, ent.start - 10), min(sent.end, ent.end + 4)
    window = normalize(ent.doc[lo:hi].text)
    best = None
    for k, v in ASSETS.items():
        if f" {normalize(k).strip()} " in window and (best is None or len(k) > len(best[0])):
            best = (k, v)
    if best is not None:
        return best[1]
    for t in ent.doc[lo:hi]:
        if t.lower_ == "price" and any(c.dep_ == "prep" and c.lower_ == "of" for c in t.children):
            of = next(c for c in t.children if c.dep_ == "prep" and c.lower_ == "of")
            obj = [c for c in of.children if c.dep_ == "pobj"]
            if obj and obj[0].pos_ == "NOUN":
                return obj[0].lemma_.lower()
    return None


def _number_of(sent: Any) -> str | None:
    for t in sent:
        if t.lower_ == "number" and any(c.dep_ == "prep" and c.lower_ == "of" for c in t.children):
            of = next(c for c in t.children if c.dep_ == "prep" and c.lower_ == "of")
            obj = [c for c in of.children if c.dep_ == "pobj"]
            if obj:
                words = [w.text for w in obj[0].subtree if not w.is_punct][:6]
                return "number of " + " ".join(words)
    return None


def name_facts(sent: Any) -> list[tuple[str, str, str, str, int]]:
    """(relation, subject, object text, object kind, 1) for offices and leads in a sentence."""
    out = []
    doc = sent.doc
    for ent in sent.ents:
        if ent.label_ != "PERSON" or len(ent) < 2:
            continue
        before = doc[max(sent.start, ent.start - 6):ent.start]
        text = before.text.lower()
        title = next((t for t in sorted(TITLES, key=len, reverse=True) if text.endswith(t)), None)
        if title is None or any(w.lower_ in PAST_WORDS for w in before):
            continue
        n_title = len(title.split())
        qual_end = ent.start - n_title
        qual = [e for e in sent.ents if e.end == qual_end and e.label_ in ("GPE", "NORP", "ORG")]
        if not qual:
            continue
        q = qual[0]
        if q.label_ == "NORP" and q.text.lower() not in DEMONYMS:
            continue  # "Republican Governor": a party, not a place
        where = country(q.text) if q.label_ != "ORG" else clean(q.text)
        office = " ".join(w.capitalize() if len(w) > 3 or title == w else w for w in title.split()) if title != "ceo" else "CEO"
        out.append(("holds_office", f"{office} of {where}", clean(ent.text), "person", 1))
    for t in sent:
        if t.lemma_ == "lead" and t.pos_ == "VERB":
            subj = [c for c in t.children if c.dep_ == "nsubj"]
            obj = [c for c in t.children if c.dep_ == "dobj"]
            if not subj or not obj:
                continue
            s_ent = next((e for e in sent.ents if e.start <= subj[0].i < e.end and e.label_ in ("PERSON", "ORG")), None)
            o_ent = next((e for e in sent.ents if e.start <= obj[0].i < e.end and e.label_ in ("EVENT", "ORG")), None)
            what = clean(o_ent.text) if o_ent is not None else None
            if what is None and obj[0].lower_ in LEADABLE:
                words = [w.text for w in obj[0].subtree if w.i <= obj[0].i and w.dep_ != "det"]
                proper = any(w[:1].isupper() for w in words)
                what = " ".join(words) if proper else None  # "the Masters", "the Premier League table"
            if s_ent is not None and what:
                out.append(("leads", what, clean(s_ent.text), "person" if s_ent.label_ == "PERSON" else "org", 1))
    return out


def is_past(sent: Any) -> bool:
    """The sentence reports an earlier state ('initially', 'had been', 'previously')."""
    words = {t.lower_ for t in sent}
    if words & {"initially", "originally", "previously", "formerly"}:
        return True
    return any(t.lower_ == "had" and t.dep_ == "aux" and t.head.tag_ == "VBN" for t in sent)
