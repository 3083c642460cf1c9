"""Answer spans for the extractive generator: names, sums of money, percentages, dates, counts,
quantities and years found in a sentence, each with its kind.

Pattern-based and deterministic (no model): numbers and dates by regular expressions, names as
runs of capitalised words, typed as person, organisation or place by titles, organisation words,
a small gazetteer and the words around them. Spans it cannot type are not used as answers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from okgen.generate import lexicon as lx
from okgen.generate.text import DATE_RE

NAME_KINDS = ("person", "org", "place")
NUMBER_KINDS = ("money", "percent", "date", "count", "quantity", "year")
KINDS = NAME_KINDS + NUMBER_KINDS


@dataclass(frozen=True)
class Span:
    """A typed span of a sentence (offsets relative to the sentence)."""

    text: str
    kind: str
    start: int
    end: int


_NUM = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_SCALE = r"(?:\s?(?:thousand|million|billion|trillion|bn|mn)\b)"
_CUR_SIGN = r"(?:US\$|A\$|C\$|HK\$|NZ\$|\$|€|£|¥|₹)"
MONEY_RE = re.compile(
    rf"{_CUR_SIGN}\s?(?:{_NUM}){_SCALE}?|\b(?:{_NUM}){_SCALE}?\s(?:{'|'.join(lx.CURRENCY_WORDS)})\b")
PERCENT_RE = re.compile(rf"\b(?:{_NUM})\s?(?:%|percent\b|per cent\b|percentage points?\b)")
QUANTITY_RE = re.compile(rf"\b(?:{_NUM})\s(?:{'|'.join(sorted((re.escape(u) for u in lx.UNITS), key=len, reverse=True))})\b")
COUNT_RE = re.compile(r"\b(?:\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?\s(?:thousand|million|billion)|[1-9]\d+)\b(?=\s+[a-z])")
YEAR_RE = re.compile(r"\b(?:in|since|by|until|from|before|after|of) ((?:1[89]\d\d|20\d\d))\b(?![-/])")

_WORD = r"(?:[A-Z]['’])?[A-Z][a-z]*(?:[A-Z][a-z]+)*(?:-[A-Z]?[a-z]+)*(?:(?<=s)['’](?=\s))?|[A-Z]{2,}s?"
_CONN = "|".join(re.escape(c) for c in sorted(lx.NAME_CONNECTORS, key=len, reverse=True))
NAME_RE = re.compile(rf"(?<![\w'’])(?:{_WORD})(?:(?:\s+|\s+(?:{_CONN})\s+)(?:{_WORD}))*(?![\w])")


def find_spans(sentence: str) -> list[Span]:
    """Typed, non-overlapping answer spans of one sentence, in order of position."""
    taken: list[tuple[int, int]] = []
    spans: list[Span] = []

    def free(s: int, e: int) -> bool:
        return all(e <= a or s >= b for a, b in taken)

    def add(s: int, e: int, kind: str) -> None:
        text = sentence[s:e].strip().rstrip(".,;:")
        if text and free(s, e):
            taken.append((s, e))
            spans.append(Span(text, kind, s, s + len(text)))

    for kind, rx in (("money", MONEY_RE), ("percent", PERCENT_RE), ("date", DATE_RE),
                     ("quantity", QUANTITY_RE), ("count", COUNT_RE), ("year", YEAR_RE)):
        for m in rx.finditer(sentence):
            if kind == "date" and not re.search(r"\d", m.group(0)):
                continue
            if kind == "date":
                # the weekday is context, the date is the answer
                s = m.start() + len(re.match(r"(?:[A-Z][a-z]+day,?\s+)?", m.group(0)).group(0))
                add(s, m.end(), kind)
            elif kind == "year":
                add(m.start(1), m.end(1), kind)
            else:
                add(m.start(), m.end(), kind)
    for s, e, kind in _names(sentence):
        add(s, e, kind)
    spans.sort(key=lambda sp: sp.start)
    return spans


def _names(sentence: str) -> list[tuple[int, int, str]]:
    out = []
    for m in NAME_RE.finditer(sentence):
        words = m.group(0).split()
        s = m.start()
        # Drop sentence-initial function words and titles; titles mark a person.
        titled = False
        at_start = sentence[:s].strip() in ("", '"', "'", "\u201c")
        while words and (words[0] in lx.TITLES or (at_start and words[0] in lx.LEADING_STOP)):
            titled = titled or words[0] in lx.TITLES
            s += len(words[0])
            s += len(sentence[s:]) - len(sentence[s:].lstrip())
            words = words[1:]
        while words and words[-1] in ("of", "the", "for", "de", "on"):
            words = words[:-1]
        if not words:
            continue
        text = " ".join(words)
        e = s + len(text)
        if sentence[s:e] != text:  # irregular spacing inside: keep the original characters
            e = s + len(sentence[s:].split(words[-1], 1)[0]) + len(words[-1])
        if any(w in lx.MONTHS or w in lx.WEEKDAYS for w in words):
            continue
        kind = classify_name(words, sentence, s, e, titled)
        if kind is not None:
            out.append((s, e, kind))
        elif " of " in text:
            # "Maria Lopez of Brazil": type the parts on their own.
            head, tail = text.split(" of ", 1)
            hk = classify_name(head.split(), sentence, s, s + len(head), titled)
            if hk is not None:
                out.append((s, s + len(head), hk))
            ts = s + len(head) + 4
            tk = classify_name(tail.split(), sentence, ts, ts + len(tail))
            if tk is not None:
                out.append((ts, ts + len(tail), tk))
    return out


def classify_name(words: list[str], sentence: str, s: int, e: int, titled: bool = False) -> str | None:
    """Person, org or place for a capitalised span; None when the evidence is too thin."""
    text = " ".join(words)
    before = sentence[:s].rstrip().rsplit(None, 1)
    prev = before[-1].lower().strip(",") if before else ""
    after = sentence[e:].lstrip()
    nxt = after.split(None, 1)[0].lower().strip(",.;:") if after else ""
    if len(words) == 1 and words[0].isupper() and len(words[0]) >= 2:
        if words[0] in lx.PLACE_ACRONYMS or words[0].capitalize() in lx.PLACES:
            return "place"  # "US", "LONDON" in a dateline
        return "org"
    if text in lx.PLACES:
        return "place"
    if len(words) == 1 and (words[0] in lx.ORG_LAST or words[0] in lx.ORG_FIRST):
        return None  # "Association", "Programme" on their own are words, not names
    if words[-1] in lx.ORG_LAST or (words[0] in lx.ORG_FIRST and len(words) > 1):
        return "org"
    if len(words) > 2 and words[0] in lx.DEMONYMS:
        return "org"
    if any(w.isupper() and len(w) > 1 for w in words):
        return "org"
    at_start = s == 0 or sentence[:s].strip() in ('"', "'", "\u201c")
    if len(words) == 1:
        # A lone capitalised word is a place after "in/at/from ..." and otherwise unknown.
        if prev in lx.PLACE_BEFORE and not at_start and words[0] not in lx.TITLES:
            return "place"
        return None
    if 2 <= len(words) <= 3 and all(w[0].isupper() and not w.isupper() for w in words):
        person_cue = titled or nxt in lx.PERSON_AFTER or prev in lx.PERSON_AFTER or prev in lx.PERSON_BEFORE or (
            after.startswith(",") and re.match(r",\s+(?:the|a|an|who|whose)\s", after) is not None)
        if person_cue:
            # People do not take an article: "the Harbour Trust said" is an organisation.
            return "org" if prev == "the" else "person"
        if prev in lx.PLACE_BEFORE:
            return "place"
    return None


# Words a name writes in lower case ("Bank of England", "Ludwig van Beethoven", "al Ahli Arab").
NAME_PARTICLES = frozenset({"of", "the", "for", "and", "&", "de", "la", "le", "van", "von", "der", "den", "del", "da", "di",
                            "du", "dos", "das", "al", "el", "bin", "ibn"})


def kind_of_choice(text: str) -> str:
    """Coarse form type of an answer choice, used by the give-away check.

    ``money``, ``percent``, ``date``, ``year``, ``quantity``, ``number``, ``name`` (capitalised
    words) or ``text``.
    """
    t = (text or "").strip()
    if not t:
        return "text"
    if MONEY_RE.search(t):
        return "money"
    if PERCENT_RE.search(t):
        return "percent"
    if DATE_RE.search(t) and re.search(r"\d", t):
        return "date"
    if re.fullmatch(r"(?:1[89]\d\d|2[01]\d\d)", t):
        return "year"
    if QUANTITY_RE.search(t):
        return "quantity"
    if re.match(r"^(?:about |around |over |nearly |more than |fewer than |less than |some )?[\d.,]+", t):
        return "number"
    words = [w for w in re.split(r"\s+", t) if w.lower() not in NAME_PARTICLES]
    if words and all(w[:1].isupper() or w[:1].isdigit() for w in words):
        return "name"
    return "text"
