"""Fluency of a stem or an option: run-together words, shouting, fragments, unbalanced marks.

:func:`fluency_problems` returns what is wrong with one piece of text (empty when nothing is);
the ``fluency`` gate (:mod:`okgen.generate.gates`) applies it to the stem and to every option.
The English word list behind the run-together rules is the lemmatizer's lookup table of the
spaCy pipeline (WordNet lemmas and their irregular forms, ~90,000 words) plus spaCy's stop words.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from okgen.generate.lexicon import ORG_LAST

# Function words that end or start a run-together token ("Labhas", "roundto", "ofthe").
_GLUE_END = ("has", "had", "was", "were", "said", "says")
_GLUE_END_LOWER = _GLUE_END + ("to", "and", "the", "of", "in", "on", "for", "with", "from", "that", "is", "are")
_GLUE_START = ("the", "of", "and", "in", "on", "to", "for", "with", "from", "since", "that", "by", "at", "as")
# Sentence openers glued to the previous word by extraction ("WashingtonThe").
_OPENERS = frozenset(["The", "A", "An", "He", "She", "It", "They", "We", "In", "On", "At", "But", "And", "This", "That", "His", "Her", "Their", "Its", "As", "For", "If", "When", "While", "After", "Before", "Mr", "Mrs", "Ms", "Dr", "Read", "Photo", "Getty", "Image", "Credit", "Advertisement", "Follow"])
# CamelCase names whose first part is an English word: not run-together.
_CAMEL_OK = frozenset(["youtube", "linkedin", "macos", "tvos", "watchos", "ipados", "visionos", "oneplus", "thestreet",
                       "onlyfans", "openai", "paypal", "playstation", "javascript", "blackrock", "softbank", "deepseek",
                       "whatsapp", "gofundme", "fedex", "bitcoin", "mastercard", "smartthings", "powerpoint", "airpods",
                       "airdrop", "facetime", "homepod", "firewire", "thinkpad", "chatgpt", "xbox", "instagram",
                       "fromsoftware", "indesign"])
_UNITS = frozenset(["st", "nd", "rd", "th", "s", "am", "pm", "km", "kg", "mm", "cm", "mph", "bn", "mn", "m", "k", "g", "gb", "tb", "mb", "mw", "gw", "kw", "lb", "lbs", "ft", "yr", "yrs", "x"])
# A month or weekday glued to the next word ("Januaryand", "Octoberthat", "Mondaythe").
_CALENDAR_GLUE = re.compile(r"^(?:January|February|March|April|June|July|August|September|October|November|December|"
                            r"Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)"
                            r"(?:and|that|the|to|of|in|on|for|with|as|at|by|when|after|before|this|his|her|it)$")
_CAMEL = re.compile(r"^([A-Za-z]*?[a-z])([A-Z].*)$")
_DIGIT_WORD = re.compile(r"^(\d+)([a-z]{2,})$")
_WORD = re.compile(r"[A-Za-z0-9]+(?:['\u2019][A-Za-z]+)?")
_CAPS_WORD = re.compile(r"^[A-Z]{2,}$")
_LEAD_JUNK = frozenset(["latest", "breaking", "watch", "read", "live", "exclusive", "opinion", "analysis", "update", "updates", "video", "photos", "where", "when", "who", "what", "why", "how", "which", "whose"])
_EDGE_FUNCTION = frozenset(["the", "of", "and", "or", "to", "in", "on", "for", "a", "an", "with", "by", "at", "from", "as", "but", "nor", "than", "that", "who", "which", "whose", "has", "had", "was", "were", "is", "are", "will", "would", "could", "even", "also", "said", "says"])
# Words that end a headline fragment, not a name ("Crew Finally", "UK Get").
_TRAIL_JUNK = frozenset(["finally", "get", "gets", "got", "now", "then", "today", "yesterday", "here", "there", "told",
                         "added", "say", "just", "still", "again", "after", "before", "over", "amid", "despite"])
_TODAY_TITLES = frozenset(["india", "psychology", "russia", "science", "physics", "nursing"])
# Towns and names that look like gerunds.
_ING_NAMES = frozenset(["reading", "ealing", "epping", "dorking", "woking", "tring", "sterling", "king", "ring", "spring"])
# Participles that begin names of units, teams and firms ("Rising Star Corps", "Flying Tigers").
_NAME_PARTICIPLES = frozenset(["rising", "flying", "shining", "leading", "living", "burning", "roaring", "soaring"])
_HYPHEN_ADJ = re.compile(r"-(?:led|based|backed|mediated|owned|run|made|born|linked|funded|style|related)$", re.I)
_PAIRS = (("(", ")"), ("[", "]"), ("{", "}"), ("\u201c", "\u201d"))


@functools.lru_cache(maxsize=4)
def _lexicon(nlp: Any) -> frozenset[str]:
    words: set[str] = set()
    try:
        lookups = nlp.get_pipe("lemmatizer").lookups
        for table, forms in (("lemma_index", False), ("lemma_exc", True)):
            if not lookups.has_table(table):
                continue
            t = lookups.get_table(table)
            for key in t:
                v = t[key]
                words.update(v.keys() if forms else v)
    except (KeyError, ValueError):  # a pipeline without a lookup lemmatizer: stop words only
        pass
    words.update(nlp.Defaults.stop_words)
    return frozenset(w for w in words if w.isalpha())


def known(word: str, lexicon: frozenset[str]) -> bool:
    """Whether ``word`` (any case) is an English word or a regular inflection of one."""
    w = word.lower()
    if w in lexicon:
        return True
    for suffix, repl in (("s", ""), ("es", ""), ("ed", ""), ("ed", "e"), ("d", ""), ("ing", ""), ("ing", "e"),
                         ("ly", ""), ("er", ""), ("ers", ""), ("ies", "y"), ("ied", "y")):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3 and w[: len(w) - len(suffix)] + repl in lexicon:
            return True
    return False


def run_together(token: str, lexicon: frozenset[str]) -> bool:
    """Whether one whitespace-free token is two words glued by extraction
    (``WashingtonThe``, ``sinceElon``, ``TheUS``, ``2024according``, ``Netanyahuhas``, ``roundto``)."""
    if token.lower() in _CAMEL_OK:
        return False
    if len(token) < 5:
        return len(token) == 4 and token.isalpha() and token.islower() and _glued_by_frequency(token)  # "outa"
    m = _DIGIT_WORD.match(token)
    if m:
        rest = m.group(2)
        return rest not in _UNITS and len(rest) >= 3 and known(rest, lexicon)
    if not token.isalpha() or token.isupper():
        return False
    if _CALENDAR_GLUE.match(token):
        return True
    m = _CAMEL.match(token)
    if m:
        left, right = m.group(1), m.group(2)
        right_head = re.match(r"[A-Z][a-z]*|[A-Z]+", right).group(0)  # type: ignore[union-attr]
        if right_head in _OPENERS and len(left) >= 3:
            return True
        if left[0].islower() and len(left) >= 2 and known(left, lexicon):
            return True  # "sinceElon", "theVersace" (brands start lower only with one letter: iPhone)
        return left.lower() in _GLUE_START  # "TheUS", "OfThe"
    low = token.lower()
    if known(low, lexicon):
        # spaCy's word list has slang ("outa"); English text still almost never writes it
        return token[0].islower() and _glued_by_frequency(token)
    ends = _GLUE_END if token[0].isupper() else _GLUE_END_LOWER
    for end in ends:
        head = low[: -len(end)]
        if low.endswith(end) and len(head) >= 3 and (token[0].isupper() or known(head, lexicon)):
            return True
    if token[0].islower():
        for start in _GLUE_START:
            tail = low[len(start):]
            if low.startswith(start) and len(tail) >= 3 and known(tail, lexicon):
                return True
    return _glued_by_frequency(token)


# Short words extraction glues to the word before ("carrying outa", "Kathleen Turneras").
_GLUE_SHORT = ("as", "at", "is", "of", "on", "in", "and", "the", "to")


def _glued_by_frequency(token: str) -> bool:
    """A word English text (almost) never uses that is a common word or name plus a short
    function word: rarer than 1 in 10^7 words for a name (10^6 lower case), its head at least
    1 in 3 million (wordfreq's Zipf scale)."""
    from okgen.generate.sentences import zipf

    low = token.lower()
    if zipf(low) >= (2.0 if token[0].isupper() else 3.0):
        return False
    ends = _GLUE_SHORT if token[0].isupper() else (*_GLUE_SHORT, "a")
    return any(low.endswith(end) and len(low) - len(end) >= 3 and zipf(low[: -len(end)]) >= 3.5 for end in ends)


LEADING_FUNCTION_WORD = "fragment: starts with a function word"
HEADLINE_PIECE = "fragment: a headline piece, not a name"


# A function word that extraction glued to the number after it ("a5-minute", "the2025 season",
# "than50"); written in lower case only, so "A5" or "On3" (names) are not read so.
_GLUED_NUMBER = re.compile(r"(?<![\w-])(?:a|an|the|of|in|on|at|to|for|by|and|with|from|than|over|about)"
                           r"(?!\d+[a-z]\b)\d[\w.,-]*")  # not "a16z", "a11y": names


def _mojibake(text: str) -> bool:
    """Whether ``text`` holds UTF-8 read as another encoding ("Tarpenâ€‹ning", "donâ€™t"), as
    ftfy judges it (its ``badness`` heuristics; accented names are fine)."""
    if text.isascii():
        return False
    from ftfy.badness import is_bad

    return is_bad(text)


def fluency_problems(text: str, nlp: Any, *, option: bool = False) -> list[str]:
    """What makes ``text`` disfluent (empty list: nothing).

    Args:
        text: a stem or an option.
        nlp: the spaCy pipeline (its word list).
        option: apply the option rules (a fragment edge word, a repeated word) too.
    """
    lex = _lexicon(nlp)
    out: list[str] = []
    glued = [t for t in re.findall(r"[A-Za-z0-9]+", text) if run_together(t, lex)]
    glued += re.findall(r"\d%[A-Za-z]+", text)  # "84%tariff"
    glued += _GLUED_NUMBER.findall(text)  # "a5-minute charge", "the2025 season"
    if glued:
        out.append(f"run-together word {glued[0]!r}")
    spans = list(_WORD.finditer(text))
    words = [m.group(0) for m in spans]
    caps = [w for w in words if _CAPS_WORD.match(w)]
    # Two capitalised words in a row shout; a hyphen joins two into one acronym ("PDCI-RDA").
    if any(_CAPS_WORD.match(a.group(0)) and _CAPS_WORD.match(b.group(0)) and max(len(a.group(0)), len(b.group(0))) >= 4
           and text[a.end():b.start()] != "-" for a, b in zip(spans, spans[1:])):
        out.append("all-caps shouting")
    elif any(len(w) >= 5 and known(w, lex) for w in caps):
        out.append(f"all-caps word {next(w for w in caps if len(w) >= 5 and known(w, lex))!r}")
    for a, b in _PAIRS:
        if text.count(a) != text.count(b):
            out.append(f"unbalanced {a}{b}")
    if text.count('"') % 2:
        out.append('unbalanced "')
    if _mojibake(text):
        out.append("mojibake: text decoded with the wrong encoding")
    if option:
        low = [w.lower() for w in words]
        # A headline's lead word is capitalised ("Live: ...", "Watch ..."): "live translation mode" is none.
        if low and ((low[0] in _LEAD_JUNK and words[0][:1].isupper()) or low[0] in _EDGE_FUNCTION - {"a", "an", "the"}):
            out.append(LEADING_FUNCTION_WORD)
        if low and low[-1] in _EDGE_FUNCTION:
            out.append("fragment: ends with a function word")
        # A gerund heads a headline ("Watching ..."); a four-letter "-ing" word is none ("Ming-Chi Kuo").
        # An acronym or a known title word before "Today" names a title ("USA Today", "Psychology
        # Today"); "Markets Today" is a headline piece.
        titled = len(words) == 2 and words[-1] == "Today" and (
            (words[0].isupper() and len(words[0]) >= 2) or low[0] in _TODAY_TITLES)
        # A participle that names ("Rising Star Corps", "Flying Tigers Group") before a body's
        # word; "Playing Elizabeth Bennet", "Watching Fox News", "Taking Office" are headlines.
        body = low[0] in _NAME_PARTICIPLES and len(words) >= 3 and words[-1] in ORG_LAST \
            and all(w[:1].isupper() for w in words)
        # A gerund with a capitalised word after it heads a headline ("Playing Elizabeth Bennet",
        # "Leaving the Party"); with none it starts a plain answer ("inciting violence", "Rising
        # interest rates").
        if len(low) >= 2 and (low[-1] in _TRAIL_JUNK and not titled or (low[0].endswith("ing") and len(low[0]) >= 5
                                                         and any(w[:1].isupper() for w in words[1:])
                                                         and low[0] not in _ING_NAMES and known(low[0], lex)
                                                         and not body)):
            out.append(HEADLINE_PIECE)
        if any(x == y and not x.isdigit() for x, y in zip(low, low[1:])):  # "World World A", not a 9-9 tie
            out.append("fragment: repeated word")
        if len(words) >= 2 and len(words[-1]) == 1 and words[-1].isalpha() and words[-1].isupper():
            out.append("fragment: dangling initial")
        if _HYPHEN_ADJ.search(text.strip()):
            out.append("fragment: a modifier, not a name")
    return out
