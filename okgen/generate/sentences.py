"""Which parsed sentences and entity mentions the offline generator may use.

A sentence is usable when it reads as a news statement: not page furniture (captions, photo
credits, author bios, newsletter and cookie prompts, "click here", menus of section names),
not shouting, not broken by extraction (words run together: "theWhite Housefor",
"adecentralized"), with balanced quotes and brackets, and of a sensible length. A mention is
well formed when it is a name as an article would print it: capitalised words, no stray
punctuation, no run-together words, not a shouting fragment.

Run-together words are found with word frequencies (``wordfreq``): a lower-case word unknown to
English ("adecentralized"), a word with a capital inside it ("upThomas"), or a function word
glued to a frequent word ("atthe").
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from typing import Any

from okgen.generate import lexicon as lx

# Page furniture: captions and credits, author bios, ads and affiliate notes, newsletter and
# cookie prompts, related links, video-player text. The quality gates drop a question whose stem
# or evidence has it, whoever wrote the question (okgen.generate.gates).
# An author's bio: "Jane Doe is a reporter for ...", "she writes about ...".
AUTHOR_BIO = (r"\bis (?:an? |the )?(?:[\w-]+ ){0,4}(?:writer|reporter|correspondent|editor|producer|contributor|"
              r"journalist|columnist|freelancer|production assistant)s? (?:at|for|with|on)\b|"
              r"\bis an? (?:[\w-]+ ){0,2}(?:writer|reporter|correspondent|editor|journalist|columnist|freelancer)\b|"
              r"\bwrit(?:es|ing) (?:news |features |reviews )?(?:for|about) ")
PAGE_FURNITURE = re.compile("|".join([
    r"\b(?:photo|photograph|image|picture|illustration|video)s?\s*(?:by|credit|courtesy|:)",
    r"\b(?:getty images|ap photo|afp via getty|shutterstock|epa-efe|pa media|alamy|reuters/)",
    r"\((?:left|right|centre|center|pictured|file)\)|\bpictured (?:above|below|left|right|here|on)\b|\bfile photo\b",
    AUTHOR_BIO + r"|\bfollow (?:him|her|them|us) on\b|\bcan be reached at\b|\bcontributed (?:to )?this\b",
    r"\badvertisement\b|\bsponsored (?:content|by)\b|\bwe may earn a commission\b|\baffiliate link|\bshop now\b|"
    r"\bpromo code\b",
    r"\b(?:daily|weekly|monthly) newsletter (?:by|from)\b|\bsign up (?:for|to|now)\b|\bsubscribe (?:to (?:our|the)|now|today)\b|\bour newsletter\b|\bnewsletter sign|"
    r"\b(?:accept|manage) (?:all )?cookies\b|\bcookie (?:policy|settings|preferences)\b|\bprivacy policy\b|"
    r"\bterms of (?:service|use)\b|\balready a subscriber\b|\bin your inbox\b|\benable javascript\b|\bad ?blocker\b",
    r"\bread more\b|\brelated:|\bsee also\b|\bmore on this story\b|\bclick here\b|\btap here\b|\bcontinue reading\b|"
    r"\bmost read\b|\btrending now\b|\bfollow (?:our )?live\b",
    r"\bvideo (?:player|unavailable|playback)\b|\bbrowser does not support\b|\bautoplay\b|\bplay video\b|"
    r"\bnow playing\b|\bskip ad\b|\bclosed captions\b|\bfullscreen\b|\u00a9|\bcopyright \d{4}\b",
]), re.IGNORECASE)
# What else the offline generator never asks about: requests for comment and their answers,
# "Watch:"/"Listen:" labels, stock-photo credits, update notes, deals, and video and podcast
# pages (a video game is news).
BOILERPLATE = re.compile(PAGE_FURNITURE.pattern + "|" + "|".join([
    r"\bfor (?:a )?comment\b|\breached out to\b|\bdeclined to comment\b|"
    r"\b(?:did not|didn.t) (?:immediately )?(?:respond|return)\b",
    r"\b(?:watch|listen|credit):|\bistock\b|\ball rights reserved\b",
    r"\bthis story (?:has been|was) updated\b|\byou can (?:now )?(?:watch|listen|stream)\b|\bbest deals?\b|"
    r"\bdownload the (?:[\w-]+ ){0,3}app\b|(?-i:\bApp Store\b|\bGoogle Play\b|\bPlay Store\b)|"
    r"\b(?:we|may|might|can|could) (?:\w+ )?(?:earn|receive|get) (?:a |an )?(?:small )?(?:affiliate )?commission\b|"
    r"\bearns? (?:an )?affiliate commission\b|\bsign up\b|\bsubscribe\b|\bnewsletter\b|\bcookies?\b|"
    r"\bcopyright \(c\)|^copyright\b|^sponsored\b|\bistockphoto\b",
    r"\bvideo\b(?!\s+games?\b)|\bpodcast\b|\bplaylist\b",
]), re.IGNORECASE)
# "LONDON (Reuters) - ...", "NAIROBI, Kenya — ...": the statement is glued to a dateline.
DATELINE = re.compile(r"^[A-Z][A-Z .'-]{2,}(?:,\s*[A-Z][A-Za-z .]+)?\s*(?:\([^)]{1,40}\))?\s*[-\u2013\u2014]\s+")
# A wire-style dateline that opens a paragraph ("WASHINGTON — A federal judge ...", "KALAMAZOO,
# Mich. — A man ..."): the place, in capitals, of up to four words, a state or country after a
# comma, a dash, and the lead sentence. Cut off, the lead can be asked; a shouting headline
# ("... STUDY FINDS There are ...") or a photo caption's date ("- APRIL 09:") is no dateline.
LEAD_DATELINE = re.compile(r"^[A-Z][A-Z.'-]+(?: [A-Z][A-Z.'-]+){0,3}(?:, [A-Z][A-Za-z.]+(?: [A-Z][A-Za-z.]+)?)?"
                           r" [-\u2013\u2014] (?=[A-Z][a-z]|[AI] |[\"\u201c])", re.M)


def strip_datelines(text: str) -> str:
    """``text`` with the datelines that open its paragraphs left out (:data:`LEAD_DATELINE`)."""
    return LEAD_DATELINE.sub("", text)


FUNCTION_WORDS = ("the", "a", "an", "at", "in", "on", "of", "to", "for", "and", "with", "from", "by", "is")
KEEP_CAPS = frozenset({"US", "UK", "EU", "UN", "NATO", "AI", "CEO", "FBI", "CIA", "NASA", "GDP", "NHS",
                       "BBC", "CNN", "NBA", "NFL", "NHL", "MLB", "FIFA", "UEFA", "WHO", "IMF", "G7",
                       "G20", "OPEC", "LGBTQ", "TV", "PC", "CBS", "NBC", "ABC", "NPR", "DOJ", "ICE",
                       "DHS", "TSA", "FDA", "CDC", "EPA", "SEC", "FTC", "FCC", "IRS", "NSA", "GOP"})


@functools.lru_cache(maxsize=65536)
def zipf(word: str) -> float:
    """Zipf frequency of an English word (0 for words English text never uses)."""
    from wordfreq import zipf_frequency

    return zipf_frequency(word, "en")


# Titles extraction glues to the name after them ("PresidentJD Vance", "CEOMark Zuckerberg").
# Not "Gov", "Rep", "Sen": "GovTech", "RepRap", "SenGupta" are names.
GLUED_TITLES = ("President", "CEO", "Senator", "Governor", "Secretary", "Minister", "Judge", "Mayor",
                "Chancellor", "Coach", "Chairman", "Director", "Prince", "King", "Queen")
# Words extraction glues to the end of a name no English word lists ("Karelinafrom",
# "Lutnicksayingthat"). Not "and", "said", "has", "had", "was", "over", "into": names end so
# ("Aasland", "Boussaid", "Stathas", "Golshad", "Bishwas"), wordfreq knowing few of them.
GLUED_TAILS = ("for", "from", "that", "with", "says", "saying", "who", "will", "also", "after")


def _glued_to_name(w: str) -> bool:
    """A title glued to the name after it, a word glued to a name's end, or a possessive glued to
    the next word ("Trump'sagenda")."""
    if re.search(r"[a-z]['\u2019]s[a-z]{3,}", w):
        return True
    if any(w.startswith(t) and len(w) > len(t) + 1 and w[len(t)].isupper() for t in GLUED_TITLES):
        return True
    last = w.split("-")[-1]
    return last[:1].isupper() and last.isalpha() and zipf(last.lower()) == 0.0 and any(
        last.endswith(t) and len(last) - len(t) >= 4 for t in GLUED_TAILS)  # "Karelinafrom", "Ocasio-Cortezfor"


def run_together(word: str) -> bool:
    """Whether ``word`` looks like two words that extraction glued together."""
    w = word.strip(".,;:!?\"'()[]\u2018\u2019\u201c\u201d")
    if _glued_to_name(w):
        return True
    if len(w) < 4 or not w.isalpha():
        return bool(re.search(r"[a-z]\d|\d[a-z]{3,}", w)) and not re.fullmatch(r"\d+(?:st|nd|rd|th|s|m|bn|km|kg|mph|am|pm)", w)
    m = re.search(r"[A-Z]{2,}([a-z]{2,})$", w)
    if m and zipf(m.group(1)) >= 4.0:
        return True  # "OpenAIand", "USThe"
    inner = w[1:]
    if any(c.isupper() for c in inner) and any(c.islower() for c in inner):
        # "upThomas", "WashingtonThe"; not "McDonald", "iPhone", "YouTube", "OpenAI", "LinkedIn".
        m = re.search(r"[a-z]{2,}[A-Z][a-z]{2,}", w)
        if m and (w[0].islower() or zipf(w.lower()) == 0.0):
            head, tail = re.split(r"(?<=[a-z])(?=[A-Z])", w, maxsplit=1)
            return zipf(head.lower()) >= 3.0 or zipf(tail.lower()) >= 3.0 and w[0].islower()
        return False
    low = w.lower()
    if not (w.islower() or w.istitle()):
        return False
    if len(w) >= 9 and zipf(low) == 0.0 and _splits(low):
        return True  # "Asreportedby", "milliontravelers"
    if not w.islower():
        return False
    if zipf(w) == 0.0 and len(w) >= 7:
        return True
    for fw in FUNCTION_WORDS:
        if w.startswith(fw) and len(w) - len(fw) >= 3 and zipf(w) < 2.5 and zipf(w[len(fw):]) >= 3.0:
            return True
    return False


_WORD = re.compile(r"(?<![\w'\u2019-])[A-Za-z]{4,}(?![\w'\u2019-])")


def unglue(text: str) -> str:
    """``text`` with the words that extraction glued together written apart again ("itscomplaint"
    -> "its complaint", "onThe" -> "on The", "Trumpinvoked" -> "Trump invoked"), where the split
    is clear: each part a frequent English word (or, for a capitalised head, a name followed by
    a frequent word). Words it is unsure of stay as they are (and their sentence unused)."""
    names = frozenset(re.findall(r"\b[A-Z][a-z]{2,}\b", text))
    brands = camel_names(text)
    return _WORD.sub(lambda m: m.group(0) if m.group(0) in brands else _unglue_word(m.group(0), names), text)


_CAMEL_NAME = re.compile(r"(?<![\w'\u2019-])[A-Z][a-z]+(?:[A-Z][a-z]+)+(?![\w'\u2019-])")


@functools.lru_cache(maxsize=8)
def camel_names(text: str) -> frozenset[str]:
    """CamelCase words ``text`` writes at least twice the same way ("LiveKit", "SoftBank"): a
    brand's name, not two words extraction glued (a glue is seldom repeated word for word) -
    unless the tail is a sentence opener ("WashingtonThe")."""
    counts: dict[str, int] = {}
    for w in _CAMEL_NAME.findall(text):
        counts[w] = counts.get(w, 0) + 1
    return frozenset(w for w, c in counts.items()
                     if c >= 2 and re.split(r"(?<=[a-z])(?=[A-Z])", w)[-1] not in _OPENER_TAILS)


_OPENER_TAILS = frozenset({"The", "A", "An", "He", "She", "It", "They", "We", "In", "On", "At", "But", "And", "This",
                           "That", "His", "Her", "Their", "Its", "As", "For", "If", "When", "While", "After",
                           "Before", "Read", "Photo", "Getty", "Image", "Credit", "Advertisement", "Follow"})


def _unglue_word(w: str, names: frozenset[str]) -> str:
    title = next((t for t in GLUED_TITLES if w.startswith(t) and len(w) > len(t) + 1 and w[len(t)].isupper()), None)
    if title:  # "PresidentJD Vance"
        return f"{title} {_unglue_word(w[len(title):], names)}"
    if w[0].isupper() and zipf(w.lower()) == 0.0:
        # "Karelinafrom" -> "Karelina from" where "Karelina" stands alone elsewhere in the text;
        # else the word is only marked glued (run_together): no answer, no option.
        tail = next((t for t in GLUED_TAILS if w.endswith(t) and w[:-len(t)] in names), None)
        if tail and len(w) - len(tail) >= 4:
            return f"{w[:-len(tail)]} {tail}"
    if zipf(w.lower()) > 0.0 and not re.search(r"[a-z][A-Z]", w):
        return w
    m = re.fullmatch(r"([a-z]{2,}|[A-Z][a-z]+)([A-Z][a-z]+)", w)
    if m:
        # "onThe", "WashingtonThe"; "DouglasandKathleen" -> "Douglas and Kathleen"
        left = _unglue_word(m.group(1), names)
        if left != m.group(1) or run_together(w) and (zipf(m.group(1).lower()) >= 3.0 or zipf(m.group(2).lower()) >= 3.0):
            return f"{left} {_unglue_word(m.group(2), names)}"
    if not (w.islower() or w.istitle()) or len(w) < 6:
        return w
    best, split = 0.0, None
    for i in range(2, len(w) - 1):
        head, tail = w[:i], w[i:]
        if len(tail) < 3 and zipf(tail) < 5.5:
            continue
        if head[0].isupper():
            if len(head) < 3 or head not in names:
                continue  # the name must stand alone elsewhere in the text ("Trump")
            # A name glued to a word: "Trumpinvoked"; the tail must be a frequent word.
            if zipf(tail) >= 3.3 and (len(tail) >= 4 or zipf(tail) >= 5.5):
                score = zipf(tail) - 1.0
            else:
                score = 2.9 if len(tail) >= 5 and _splits(tail, 1) else 0.0
        elif zipf(head.lower()) >= 3.0 and zipf(tail) >= 3.0:
            score = min(zipf(head.lower()), zipf(tail))
        else:
            score = 2.9 if zipf(head.lower()) >= 3.5 and len(tail) >= 5 and _splits(tail, 1) else 0.0
        if score > best:
            best, split = score, i
    if split is None or (w[0].isupper() and zipf(w.lower()) > 0.0):
        return w
    return f"{_unglue_word(w[:split], names)} {_unglue_word(w[split:], names)}"


def _splits(word: str, depth: int = 2) -> bool:
    """Whether ``word`` is two (or three) frequent English words written together."""
    for i in range(2, len(word) - 1):
        if zipf(word[:i]) >= 3.5:
            tail = word[i:]
            if zipf(tail) >= 3.5 or (depth > 1 and len(tail) >= 4 and _splits(tail, depth - 1)):
                return True
    return False


def usable_sentence(sent: Any) -> bool:
    """Whether a parsed sentence (a spaCy ``Span``) can be asked about."""
    text = sent.text.strip()
    n = len(sent)
    if not 6 <= n <= 60 or "?" in text or "\n" in text or not text[:1].isupper():
        return False
    if BOILERPLATE.search(text) or DATELINE.match(text):
        return False
    if text.count('"') % 2 or text.count("\u201c") != text.count("\u201d") or text.count("(") != text.count(")"):
        return False
    caps = titles = 0
    for t in sent:
        if t.is_alpha and t.is_upper and len(t) > 1 and t.text not in KEEP_CAPS:
            caps += 1
            if caps >= 3:
                return False  # "FRED COUPLES DRAINS SHOT": a shouting headline
        else:
            caps = 0
        if t.is_title or (t.is_upper and t.is_alpha):
            titles += 1
            if titles >= 7:
                return False  # "Podcasts Videos Partner Content ...": a menu
        elif not t.is_punct:
            titles = 0
        if t.is_alpha and run_together(t.text) and t.text not in camel_names(sent.doc.text):
            return False
        if t.like_url or t.like_email or t.text.startswith("@"):
            return False
    return any(t.pos_ in ("VERB", "AUX") for t in sent)


# Honorifics the tagger keeps in a person's name ("Ms David", "Dr. Lind").
HONORIFICS = frozenset({"Mr", "Mrs", "Ms", "Miss", "Mx", "Dr", "Prof"})
# Words that end the names of places, shows and things the tagger takes for people.
NOT_PERSON = frozenset({"Park", "Arena", "Stadium", "Brother", "Hall", "Street", "Road", "Square", "Bridge", "Centre",
                        "Center", "Sands", "Camera", "Warehouse", "Folder", "View", "Corridor", "Island", "Beach",
                        "Valley", "River", "Lake", "Airport", "Station", "Cup", "League", "Trophy", "Prize", "Award",
                        "Festival", "Show", "Games", "Series", "Pro", "Max", "Ultra", "Plus", "Watch", "Mountain",
                        "Tower", "Palace", "Gardens", "Court", "Avenue", "Boulevard", "Harbour", "Harbor", "Bay",
                        "Channel", "Radio", "TV", "Podcast", "Studios", "Edition", "Act", "Bill", "Strip", "Bank",
                        # programmes the tagger takes for people ("Jesse Watters Primetime")
                        "Primetime", "Tonight", "Live", "Today", "Weekly", "Daily", "Hour", "Report", "Sessions",
                        "Unfiltered"})


def well_formed_name(text: str, label: str) -> bool:
    """Whether an entity mention is a clean name an article would print."""
    t = text.strip()
    words = t.split()
    if not 1 <= len(words) <= 6 or len(t) > 60 or len(t) < 2:
        return False
    if re.search(r"[^\w\s.&'\u2019-]", t) or re.search(r"\d", t) and label in ("PERSON", "GPE", "LOC"):
        return False
    if t.endswith(("'s", "\u2019s", "-", ".")) and not t.endswith(("Jr.", "Sr.", "Inc.", "Co.", "Corp.", "Ltd.")):
        return False
    content = [w for w in words if w.lower() not in ("of", "the", "and", "for", "de", "la", "van", "von", "&", "al", "bin", "da")]
    if not content or not all(w[:1].isupper() for w in content):
        return False
    if re.search(r"['\u2019]s\b", t):
        return False  # "Lightspeed's AI": a possessive, not a name
    if label == "PERSON":
        if not 2 <= len(words) <= 3 or any(w.isupper() and len(w) > 2 for w in words) or "and" in words:
            return False
        if words[-1] in lx.ORG_LAST or words[0] in lx.ORG_FIRST or any(w in NOT_PERSON for w in words):
            return False  # "Halvorsen Energy", "Manchester Arena" tagged as a person
        if len(words) == 2 and words[0].rstrip(".") in HONORIFICS:
            return False  # "Ms David": a surname with its honorific, half a name
        if any(a.lower() == b.lower() for a, b in zip(words, words[1:])):
            return False  # "Godzilla Godzilla": a heading glued to the text it heads (a place may: "Bora Bora")
    elif sum(w.isupper() and len(w) > 1 for w in words) > 1 and len(words) > 1:
        return False  # "WORLD WORLD A": shouting, not a name
    if label in ("GPE", "LOC") and len(t) <= 3 and t not in ("US", "UK", "UAE", "EU", "USA", "DRC"):
        return False
    return not any(run_together(w) for w in words)


def in_gazetteer(name: str) -> bool:
    """Whether a place name is a country, city, region or continent okgen's gazetteer knows."""
    n = name.strip()
    return n in lx.PLACES or n in lx.PLACE_ACRONYMS or n.removeprefix("the ") in lx.PLACES


TEASER_RUN = 3  # closing sentences in a row about none of the story's people, from the first of ...
TEASER_NEWCOMERS = 2  # ... sentences that each name a person the story never gave: links to other stories


def teaser_tail(sents: list[Any]) -> int:
    """The index of the first sentence of a block of related-story teasers that extraction kept at
    an article's end (a BBC story of one sub-postmistress that ends with one line each on other
    stories: another sub-postmaster's award, a post office's closure, a third victim's claim), or
    ``len(sents)`` when it has none. A teaser block is the closing
    sentences, none of which names a person the story named before, opens with a pronoun or holds
    a quotation, from the first of at least :data:`TEASER_NEWCOMERS` news sentences (no credit or
    bio line: :func:`usable_sentence`) whose subject is
    a person the story never named, by full name (a teaser's news: "Jane Doe has started a
    claim ..."); at least :data:`TEASER_RUN` sentences, none naming a person another of them names
    (one line per story)."""
    def people(sent: Any) -> set[str]:  # the words of the people it names
        return {t.lower_ for e in sent.ents if e.label_ == "PERSON" for t in e if t.is_alpha and t.is_title}

    def names(sent: Any) -> set[str]:  # its proper nouns, however tagged ("Flanagan faces ...")
        return {t.lower_ for t in sent if t.pos_ == "PROPN" and t.is_alpha}

    before: list[set[str]] = []
    seen: set[str] = set()
    for sent in sents:
        before.append(set(seen))
        seen |= people(sent)
    newcomers: list[int] = []
    for j in range(len(sents) - 1, -1, -1):
        sent = sents[j]
        first = next((t for t in sent if not t.is_punct), None)
        if names(sent) & before[j] or first is None or first.pos_ == "PRON" \
                or any(q in sent.text for q in ('"', "\u201c", "\u201d")):
            break
        if usable_sentence(sent) and any(e.label_ == "PERSON" and len(e) >= 2 and e.root.dep_ in ("nsubj", "nsubjpass")
               and e.root.head.dep_ == "ROOT" and not people(sent) & before[j]
               and not any(e[-1].lower_ in names(s) for s in sents[j + 1:]) for e in sent.ents):
            newcomers.append(j)
    if len(newcomers) < TEASER_NEWCOMERS or len(sents) - newcomers[-1] < TEASER_RUN:
        return len(sents)
    start = newcomers[-1]
    run = sents[start:]
    persons = {w for sent in run for w in people(sent)}
    named: Counter[str] = Counter(w for sent in run for w in names(sent) & persons)
    if any(c > 1 for c in named.values()):
        return len(sents)  # a person named twice: the story's own closing paragraphs, not one-line links
    return start
