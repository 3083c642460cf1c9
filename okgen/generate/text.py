"""Text helpers shared by the checks and the extractive generator: normalisation for matching,
date patterns and formatting, sentence splitting and relative-date resolution."""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
from collections.abc import Iterator

from okgen.generate.lexicon import MONTH_ABBR, MONTHS, WEEKDAYS

_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u201c": '"',
                         "\u201d": '"', "\u201e": '"', "\u2013": "-", "\u2014": "-", "\u2212": "-",
                         "\u00a0": " ", "\u2009": " ", "\u202f": " "})
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")
_NON_WORD = re.compile(r"[^\w$€£¥%]+", re.UNICODE)
_SPACES = re.compile(r"\s+")


def normalize(text: str) -> str:
    """Normalise for matching: NFKC, case-folded, straight quotes, no thousands separators,
    punctuation as spaces (currency signs and ``%`` kept), single spaces, padded with spaces
    so that ``" x " in normalize(text)`` is a whole-word match."""
    t = text or ""
    if not t.isascii():  # most news text is ASCII: skip the Unicode work
        t = unicodedata.normalize("NFKC", t).translate(_QUOTES)
    t = t.casefold()
    if "," in t:
        t = _THOUSANDS.sub("", t)
    t = _NON_WORD.sub(" ", t)
    return " " + _SPACES.sub(" ", t).strip() + " "


def contains(haystack_norm: str, needle: str) -> bool:
    """Whether ``needle`` occurs as whole words in an already normalised text."""
    n = normalize(needle)
    return n.strip() != "" and n in haystack_norm


def glued_in(text: str, needle: str) -> bool:
    """Whether ``needle`` occurs in raw ``text`` as written, also where extraction glued it to a
    neighbouring word at a case change or a currency sign ("season 3 fromPersuader, his",
    "about$1 in every $7", "the $350Ultrahuman Ring"), or a name to the function word after it
    ("Zullie the Witchhas uploaded"): a fallback for texts :func:`contains`
    cannot split."""
    words = needle.split()
    if not words:
        return False
    body = r"\s+".join(re.escape(w) for w in words)
    left = r"(?:(?<![A-Za-z0-9])|(?<=[a-z])(?=[A-Z$\u20ac\u00a3\u00a50-9]))"
    # On the right also a function word glued to a name ("Zullie the Witchhas uploaded"): only
    # after a capital-led word, so "Jon" is never found in "Jonas".
    right = r"(?:(?![A-Za-z0-9])|(?<=[a-z0-9%])(?=[A-Z])|" + (
        r"(?<=[a-z])(?=(?:has|had|have|with|was|were|and|said|says|who|which|that|the|for|from|told|will|would)"
        r"(?![A-Za-z]))" if words[-1][:1].isupper() else r"(?!)") + ")"
    return re.search(left + body + right, text) is not None


def fragments_found(haystack_norm: str, quote: str) -> bool:
    """Whether every fragment of a quote (split at ellipses) occurs in a normalised text."""
    parts = [p for p in re.split(r"\.\.\.|…|\[\.\.\.\]", quote or "") if p.strip()]
    return bool(parts) and all(contains(haystack_norm, p) for p in parts)


_WORD = re.compile(r"[a-z0-9]+")
STOPWORDS = frozenset(["a", "an", "the", "of", "in", "on", "at", "to", "for", "by", "with", "from", "and", "or", "as", "is", "was", "were", "be", "been", "are", "what", "which", "who", "whom", "whose", "when", "where", "why", "how", "did", "does", "do", "that", "this", "these", "those", "it", "its", "into", "than", "according", "said", "say", "says", "reported", "report", "news", "as", "of"])


def content_tokens(text: str, normalized: bool = False) -> frozenset[str]:
    """Lower-case word tokens without stop words (near-duplicate detection)."""
    return frozenset(w for w in _WORD.findall(text if normalized else normalize(text)) if w not in STOPWORDS)


# ----------------------------------------------------------------------------------- dates
_MONTH_RE = "|".join(MONTHS) + "|" + "|".join(sorted(MONTH_ABBR, key=len, reverse=True))
_MONTH = rf"(?:{_MONTH_RE})\.?"
_DAY = r"(?:[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?"
_YEAR = r"(?:1[89]\d\d|2[01]\d\d)"
_WEEKDAY = "|".join(WEEKDAYS)
DATE_RE = re.compile(
    rf"\b(?:(?:{_WEEKDAY}),?\s+)?(?:{_MONTH}\s+{_DAY}(?:,?\s+{_YEAR})?|{_DAY}\s+(?:of\s+)?{_MONTH}(?:,?\s+{_YEAR})?"
    rf"|{_MONTH}\s+{_YEAR})(?![\w])|\b{_YEAR}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])\b"
)


# A date that pins the time on its own: a day or a month together with its year.
_DATED_RE = re.compile(
    rf"\b(?:{_MONTH}\s+{_DAY}(?:\s*[-\u2013]\s*{_DAY})?,?\s+{_YEAR}|{_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}|{_MONTH},?\s+{_YEAR})(?![\w])"
    rf"|\b{_YEAR}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])\b"
)


def has_explicit_date(text: str) -> bool:
    """True when ``text`` names a day or a month with its year (``November 21, 2026``,
    ``21 November 2026``, ``November 2026``, ``2026-11-21``, a range ``April 12–13, 2025``). ``November 21`` (which year?)
    or a bare year is not enough."""
    return _DATED_RE.search(text or "") is not None


def format_date(d: dt.date, year: bool = True) -> str:
    """``November 21, 2026`` (or ``November 21``)."""
    return f"{MONTHS[d.month - 1]} {d.day}, {d.year}" if year else f"{MONTHS[d.month - 1]} {d.day}"


def parse_date(text: str, default_year: int) -> tuple[dt.date, str] | None:
    """Parse a date span into (date, style); style is ``mdy``, ``md``, ``dmy``, ``dm``, ``my``,
    ``iso``. None when it is not a day-level date."""
    t = re.sub(r"^(?:" + _WEEKDAY + r"),?\s+", "", text.strip())
    m = re.fullmatch(rf"({_YEAR})-(\d\d)-(\d\d)", t)
    if m:
        try:
            return dt.date(int(m[1]), int(m[2]), int(m[3])), "iso"
        except ValueError:
            return None
    m = re.fullmatch(rf"({_MONTH_RE})\.?\s+(\d{{1,2}})(st|nd|rd|th)?(?:,?\s+({_YEAR}))?", t)
    if m:
        mon, day, ordinal, year = m[1], int(m[2]), m[3], m[4]
        style = "mdy" if year else "md"
    else:
        m = re.fullmatch(rf"(\d{{1,2}})(st|nd|rd|th)?\s+(?:of\s+)?({_MONTH_RE})\.?(?:,?\s+({_YEAR}))?", t)
        if not m:
            return None
        day, ordinal, mon, year = int(m[1]), m[2], m[3], m[4]
        style = "dmy" if year else "dm"
    month = MONTHS.index(mon) + 1 if mon in MONTHS else MONTH_ABBR[mon]
    try:
        # "May 19th": the style notes the ordinal ("md_ord"), so options are written "May 26th".
        return dt.date(int(year) if year else default_year, month, day), style + (ORDINAL if ordinal else "")
    except ValueError:
        return None


ORDINAL = "_ord"  # the end of a style whose day is an ordinal ("md_ord": "May 19th")


def ordinal(n: int) -> str:
    """``n`` with its English ordinal suffix ("1st", "12th", "22nd")."""
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def format_like(d: dt.date, style: str) -> str:
    """Format ``d`` in one of :func:`parse_date`'s styles (ending in :data:`ORDINAL`: the day as an ordinal)."""
    name, day = MONTHS[d.month - 1], ordinal(d.day) if style.endswith(ORDINAL) else str(d.day)
    return {"mdy": f"{name} {day}, {d.year}", "md": f"{name} {day}", "dmy": f"{day} {name} {d.year}",
            "dm": f"{day} {name}", "iso": d.isoformat()}.get(style.removesuffix(ORDINAL), f"{name} {day}, {d.year}")


_RELATIVE = re.compile(rf"\b(?:(on|last|this|next)\s+)?({_WEEKDAY})\b(?!,?\s+(?:{_MONTH_RE}|\d))|\b(yesterday|today|tomorrow)\b",
                       re.IGNORECASE)


# Tense markers that tell which way a bare weekday points: the nearest one before it (else the
# first after it) decides. Future forms come first so "scheduled" is not read as a past "-ed".
_TENSE = re.compile(
    r"\b(?P<future>will|won't|shall|would|going to|due to|set to|scheduled|expected to|plans? to|planned|"
    r"intends? to|aims? to|upcoming|is to|are to)\b|'ll\b|"
    r"\b(?P<past>said|says|was|were|had|has|have|did|told|took|came|went|began|fell|rose|won|lost|made|"
    r"met|held|left|[a-z]+ed)\b", re.IGNORECASE)
_FORWARD_PREP = frozenset(["by", "until", "till", "starting", "from", "before"])


def _points_forward(text: str, start: int, end: int, prep: str) -> bool:
    """Whether a weekday at ``text[start:end]`` names a day after the publication date."""
    if prep in ("next", "last"):
        return prep == "next"
    marks = list(_TENSE.finditer(text))
    before = [m for m in marks if m.end() <= start]
    after = [m for m in marks if m.start() >= end]
    m = before[-1] if before else (after[0] if after else None)
    if m is not None:
        return m.group("past") is None
    word = text[:start].rsplit(None, 1)
    return bool(word) and word[-1].lower() in _FORWARD_PREP


def resolve_relative_dates(sentence: str, date: dt.date) -> str:
    """Make relative day references explicit for a stand-alone statement.

    ``on Tuesday`` in a story dated Saturday, November 21, 2026 becomes
    ``on Tuesday, November 17, 2026`` when the sentence speaks of the past ("the deal was signed
    on Tuesday") and ``on Tuesday, November 24, 2026`` when it speaks of the future ("the vote
    will take place on Tuesday"); ``yesterday`` becomes ``on November 20, 2026``. A weekday
    equal to the publication day is that day.
    """

    def repl(m: re.Match[str]) -> str:
        if m.group(3):
            word = m.group(3).lower()
            shift = {"yesterday": -1, "today": 0, "tomorrow": 1}[word]
            return f"on {format_date(date + dt.timedelta(days=shift))}"
        prep = (m.group(1) or "").lower()
        wd = WEEKDAYS.index(m.group(2).capitalize())
        if _points_forward(sentence, m.start(2), m.end(2), prep):
            when = date + dt.timedelta(days=(wd - date.weekday()) % 7 or (7 if prep == "next" else 0))
        else:
            when = date - dt.timedelta(days=(date.weekday() - wd) % 7 or (7 if prep == "last" else 0))
        lead = f"{m.group(1)} " if m.group(1) else ""
        return f"{lead}{m.group(2)}, {format_date(when)}"

    return _RELATIVE.sub(repl, sentence)


# -------------------------------------------------------------------------------- sentences
_ABBREV = frozenset(["mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "mt", "gen", "gov", "sen", "rep", "col", "lt", "sgt", "capt", "cmdr", "adm", "inc", "ltd", "corp", "co", "vs", "etc", "no", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec", "u.s", "u.k", "e.g", "i.e", "a.m", "p.m", "approx", "est", "dept", "univ", "fig", "vol"])
_BOUNDARY = re.compile(r"[.!?][\"'\u201d\u2019)\]]*\s+(?=[\"'\u201c\u2018(\[]?[A-Z0-9])")


def split_sentences(text: str) -> Iterator[tuple[int, int]]:
    """Yield (start, end) offsets of the sentences of ``text`` (paragraph breaks always split).

    Offsets slice the original text, so a sentence is a verbatim quote of the article.
    """
    for para in re.finditer(r"[^\n]+", text):
        base = para.start()
        chunk = para.group(0)
        start = 0
        for m in _BOUNDARY.finditer(chunk):
            end = m.start() + 1
            before = chunk[start:end - 1].rsplit(None, 1)
            word = before[-1].lower().rstrip(".") if before else ""
            if word in _ABBREV or (len(word) == 1 and word.isalpha()):
                continue  # "Dr. Okafor", "J. Smith": not a boundary
            stop = m.end() - (len(m.group(0)) - len(m.group(0).rstrip()))
            s, e = _trim(chunk, start, stop)
            if e > s:
                yield base + s, base + e
            start = m.end()
        s, e = _trim(chunk, start, len(chunk))
        if e > s:
            yield base + s, base + e


def _trim(text: str, s: int, e: int) -> tuple[int, int]:
    while s < e and text[s].isspace():
        s += 1
    while e > s and text[e - 1].isspace():
        e -= 1
    return s, e
