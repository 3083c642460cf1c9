"""Precision rules of the offline generator: what an editor would not publish, found before the
question is written.

Independent reviews of ``extractive-v2``'s questions on real news days found the same failures
again and again; each rule here answers one of them:

* **vague stems** ("Which country did Russia accuse?", "With whom did Gavin Newsom meet?"): a
  question needs enough content words to pin one event down (:func:`vague`);
* **unexplained names** ("Who will Essiedu portray?", "With whom did Ars speak?"): a one-word
  proper noun in the stem must be one the day's news uses widely (Trump, Hamas, NATO) or a place
  okgen knows (:func:`unexplained_name`);
* **background** ("On what date was Vargas Llosa born?", "In March, Trump invoked ..."): a
  sentence that dates its fact weeks or years before the news day is history, not the day's news
  (:func:`background_sentence`), and date answers must lie near the news day (:func:`date_in_window`);
* **meta questions** ("Which organisation went to car dealerships?" — the BBC itself): questions
  whose answer or actor is a news outlet are about the reporting, not the news (:func:`media_name`);
* **organisations the tagger invents** ("MB", "USB", "Doue"): an organisation answer of one word
  must be named by several of the day's articles (:func:`trusted_org_answer`).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from typing import Any

from okgen.generate import lexicon as lx
from okgen.generate.sentences import in_gazetteer, zipf

# Words of a stem that carry no content (the question frame and the date suffix).
FRAME = frozenset({"who", "whom", "which", "what", "how", "many", "much", "when", "where", "organisation",
                   "country", "city", "region", "place", "continent", "event", "percentage", "date",
                   "year", "reported", "as", "on", "did", "does", "do", "has", "have", "had", "is", "are",
                   "was", "were", "will", "would", "can", "could", "be", "been", "the", "a", "an", "of",
                   "to", "in", "at", "by", "for", "with", "from", "and", "or", "its", "their", "his",
                   "her", "that", "this", "according"})
MIN_CONTENT_WORDS = 5
NAME_TYPES = frozenset({"PERSON", "ORG", "GPE", "LOC", "FAC", "PRODUCT", "WORK_OF_ART", "EVENT"})
# A one-word name must be used by this many of the day's articles to stand unexplained.
MIN_NAME_ARTICLES = 3
# Date answers: at most this many days before the news day (later dates are plans: fine).
DATE_WINDOW_BEFORE = 21
DATE_WINDOW_AHEAD = 75  # days after the news day, for a date written without its year
MEDIA_NAMES = frozenset({"bbc", "cnn", "nbc", "cbs", "abc", "npr", "pbs", "reuters", "ap", "afp", "bloomberg",
                         "fox", "fox news", "msnbc", "propublica", "ars", "ars technica", "techcrunch", "the verge",
                         "gizmodo", "wired", "engadget", "axios", "politico", "the guardian", "guardian",
                         "the new york times", "new york times", "the washington post", "washington post",
                         "al jazeera", "rt", "cna", "sky news", "the times", "the telegraph", "nbc news",
                         "cbs news", "abc news", "fox & friends", "fox business", "associated press", "cnbc",
                         "hbo", "espn", "sky", "itv", "channel 4", "the atlantic", "vox", "slate", "vice"})
_MONTH = {m: i + 1 for i, m in enumerate(lx.MONTHS)}
_DAY_MONTH = re.compile(rf"\b(?:(\d{{1,2}})\s+({'|'.join(lx.MONTHS)})|({'|'.join(lx.MONTHS)})\s+(\d{{1,2}})(?!\d))\b")
_MONTH_ALONE = re.compile(rf"\b(?:in|In|since|Since|until|Until|last|Last|early|late|mid-?)\s+({'|'.join(lx.MONTHS)})\b(?!\s+\d)")
_HISTORY = re.compile(r"\b(?:was born|born in|born on|founded in|died in|since (?:19|20)\d\d|in the (?:late|early|mid)[- ]"
                      r"(?:19|20)?\d0s|decades? ago|years? ago|at the time|back then|in recent (?:months|years)|"
                      r"previously|formerly|(?<!as )(?<!the )(?<!its )(?<!his )(?<!her )(?<!a )(?<!an )(?<!their )recently "
                      r"(?!(?:reported|said|told|announced|revealed|published|disclosed|confirmed|noted|wrote|found|"
                      r"warned|estimated|stated)\b)(?:\w+ed|met|held|made|took|went|came|gave|won|lost|spent|sent|led|"
                      r"began|saw)|last (?:month|year)|earlier this year|in the past|used to|"
                      r"(?:has|have|had) long|(?:has|have|had) (?:lived|worked|served|run|ruled|led|taught|existed|remained|stayed|been (?:in|at|with|a|an|the)\b)[^.;]{0,40}? for (?:almost |nearly |about |around |more than |over |some )?(?:\d+|two|three|four|five|six|seven|eight|nine|ten|\w+teen|twenty|thirty|forty|fifty) years|last week|earlier this month|(?:in|over) the (?:last|past) (?:\w+ )?(?:years|decades)|for generations|for (?:decades|centuries)|(?:after|during|before) the war|"
                      r"under the (?:previous|former|last|prior) (?:administration|government)|under (?:former|then)[- ])\b",
                      re.IGNORECASE)
# Nouns a definite description may use without saying which one: one of a kind, or the time.
UNIQUE_NOUNS = frozenset({"world", "economy", "public", "police", "military", "internet", "weekend", "week",
                          "month", "year", "day", "night", "morning", "afternoon", "evening", "time", "future",
                          "past", "moment", "sun", "moon", "earth", "planet", "globe", "environment", "climate",
                          "pandemic", "country", "nation", "market", "markets", "stock market", "weather",
                          "season", "end", "start", "beginning", "first", "rest", "majority", "most", "top",
                          "bottom", "latest", "news", "media", "press", "government", "administration", "region",
                          "area", "city", "capital", "border", "way", "number", "amount", "level", "rate", "use"})
# Dependents that say which one a noun means and that stems keep (clauses after it are cut).
MODIFIERS = frozenset({"amod", "compound", "nummod", "poss", "prep", "nmod"})
# Nouns that say nothing on their own ("take measures", "discussed issues").
EMPTY_NOUNS = frozenset({"measures", "steps", "action", "actions", "things", "changes", "issues", "matters",
                         "efforts", "moves", "options", "concerns", "questions"})
# Modal verbs of a guess, not a report ("Apple may eat some cost of the tariffs").
# A guess ("may", "might", "could") or a capability ("can devour 11kg of insects a season"): what
# may or can happen is no event of the day.
SPECULATIVE = re.compile(r"\b(?:may|might|could|can(?:not)?)\b")  # lower case: not "May 12", not "Emre Can"
# Verbs whose object is an actor: a capital there stands for its government ("accused Ankara").
ADDRESSEE_VERBS = frozenset({"accuse", "urge", "warn", "criticize", "criticise", "blame", "condemn", "sanction",
                             "pressure", "threaten", "ask", "tell", "praise", "thank", "support", "back",
                             "invite", "fault", "slam", "lash", "call", "press", "persuade", "convince", "attack"})


def content_words(question: str) -> list[str]:
    """The stem's words that carry content (names, nouns, verbs, numbers), frame and date left out."""
    body = re.sub(r",? as reported on [^?]*\?$", "", question)
    return [w for w in re.findall(r"[A-Za-z0-9][A-Za-z0-9'&.-]*", body) if w.lower() not in FRAME]


# A verb whose stem says nothing without its complement: "accused" of what?
_NEEDS_COMPLEMENT = re.compile(r"\b(?:accused|accuses|accuse|accusing)\b(?![^?]*\bof\b)"
                               r"|\bqualif(?:y|ies|ied|ying)\b(?![^?]*\bfor\b)", re.IGNORECASE)
# A court order that ends the stem, against nobody named: "Who granted the state's bid for a
# restraining order?" (two reviewers: against what?); not "the Alien Enemies Act injunction".
_BARE_ORDER = re.compile(r"(?P<before>\S+)\s+(?:temporary\s+)?(?:restraining orders?|injunctions?)"
                         r"(?:\s+on\s+(?-i:[A-Z])\w+ \d{1,2}, \d{4}|,? as reported on [^?]*)?\?$", re.IGNORECASE)
# "Who spoke at a press briefing on April 9?": where the asked-for one spoke, not what about (what
# she called the law was cut); an event named by up to three words, then a place or a date only.
_SPOKE_AT = re.compile(
    r"^(?:who|which(?:\s+[\w'\u2019-]+){1,4}?)\s+(?:(?:has|had|was|is|also)\s+)?"
    r"(?:spoke|speaks?|speaking|talked|appeared|appears?|commented)\s+(?:at|during|in|on)\s+(?:a|an|the)\s+"
    r"(?:[\w'\u2019-]+\s+){0,3}(?:briefing|conference|rally|event|interview|hearing|meeting|summit|forum|panel|"
    r"show|podcast|programme|program|broadcast|gathering|ceremony)"
    r"(?:\s+(?:in|at|of|for)\s+(?:the\s+)?(?-i:[A-Z])[\w'\u2019-]*(?:\s+(?-i:[A-Z])[\w'\u2019-]*){0,2})?"
    r"(?:\s+on\s+(?-i:[A-Z])\w+ \d{1,2}, \d{4}|,? as reported on [^?]*)?\?$", re.IGNORECASE)


# A thing named by its not being out yet ("the upcoming Blackwell GPU": which card?), as the
# article named it elsewhere.
UNRELEASED = re.compile(r"\bthe (?:upcoming|forthcoming|unreleased|unannounced|rumou?red|next-gen)\b", re.IGNORECASE)


def vague(question: str) -> bool:
    """Whether a stem has too few content words to pin one event down, or asks who was accused
    without saying of what, or what one can qualify for without saying what, or who spoke at an
    event without saying what about, or ends on a court order against nothing named, or names a
    thing only as upcoming ("the upcoming Blackwell GPU")."""
    return len(content_words(question)) < MIN_CONTENT_WORDS or bool(_NEEDS_COMPLEMENT.search(question)) \
        or bool(_SPOKE_AT.match(question)) or bool(UNRELEASED.search(question)) \
        or bool((m := _BARE_ORDER.search(question)) and not m.group("before")[:1].isupper())


def unexplained_name(sent: Any, question: str, answer: Any, name_articles: dict[str, int]) -> str | None:
    """A one-word proper noun of the stem that the day's news does not use widely, or a full name
    whose surname it does not use widely and that has no role beside it in the stem; or None.

    A proper noun inside a multi-word name ("Jon Olansen", "Supreme Court") is explained by
    that name; a place okgen's gazetteer knows, a nationality, or a name used by at least
    :data:`MIN_NAME_ARTICLES` of the day's articles ("Trump", "Hamas") stands alone.
    """
    words = set(re.findall(r"[A-Za-z][A-Za-z'-]*", question))
    for t in sent:
        name_like = t.pos_ == "PROPN" or (t.ent_type_ in NAME_TYPES and t.text[:1].isupper()) \
            or (t.text[:1].isupper() and t.i != sent.start and t.is_alpha)
        if not name_like or t.i in range(answer.start, answer.end) or t.text not in words:
            continue
        if t.ent_iob_ in ("B", "I"):
            ent = next((e for e in sent.ents if e.start <= t.i < e.end), None)
            if ent is not None and len([x for x in ent if x.is_alpha]) >= 2 and ent.text in question:
                continue
            if ent is not None and ent.label_ in ("NORP", "DATE", "CARDINAL", "MONEY", "PERCENT"):
                continue
        if t.text in lx.DEMONYMS or t.text in lx.TITLES or in_gazetteer(t.text) or t.text in lx.MONTHS:
            continue
        if name_articles.get(t.text, 0) >= MIN_NAME_ARTICLES:
            continue
        # Part of a multi-word proper-noun run that the stem keeps whole ("Hinkley Point C").
        run = [x for x in sent[max(t.i - 2 - sent.start, 0):t.i + 3 - sent.start] if x.pos_ == "PROPN"]
        if len(run) >= 2 and " ".join(x.text for x in run if abs(x.i - t.i) <= 1) in question and \
                any(abs(x.i - t.i) == 1 for x in run):
            continue
        return t.text
    for e in sent.ents:  # a full name few of the day's stories use, with no role beside it
        if e.label_ != "PERSON" or len(e) < 2 or e.text not in question or e.start < answer.end and answer.start < e.end:
            continue
        if name_articles.get(e[-1].text, 0) >= MIN_NAME_ARTICLES:
            continue  # "Witkoff", "Rubio": the news of the day is full of them
        if zipf(e[-1].lower_) >= 3.0:
            continue  # "Brightline Robotics", "Halvorsen Energy": a company the tagger took for a person
        role = sent.doc[e.start - 1] if e.start > sent.start else None
        if role is not None and (role.pos_ == "NOUN" or role.text.rstrip(".") in lx.TITLES) \
                and f"{role.text} {e.text}" in question:
            continue  # "U.S. District Judge Paula Xinis", "DOJ attorney Drew Ensign"
        return e.text  # "When did Ben Mbarek begin a hunger strike?": who is he?
    return None


def background_sentence(text: str, news_day: dt.date) -> bool:
    """Whether a sentence dates its fact well before the news day (history, not news)."""
    if _HISTORY.search(text):
        return True
    for y in re.findall(r"\b((?:19|20)\d\d)\b", text):
        if int(y) < news_day.year:
            return True
    for m in _DAY_MONTH.finditer(text):
        day = int(m.group(1) or m.group(4))
        month = _MONTH[m.group(2) or m.group(3)]
        try:
            d = dt.date(news_day.year, month, day)
        except ValueError:
            continue
        if (news_day - d).days > DATE_WINDOW_BEFORE and (news_day - d).days < 300:
            return True
    for m in _MONTH_ALONE.finditer(text):
        if 1 <= (news_day.month - _MONTH[m.group(1)]) % 12 <= 6:
            return True  # "In March, ..." in an April article
    return False


_DAY_WORDS = lx.DAY_WORDS | {"tonight"}


def dated_by_period(sent: Any) -> bool:
    """Whether a sentence's past event is dated only by "this month" or "this year" ("Orbis
    imposed 10% tariffs on all its exports this month", told on the 11th of a tariff of the 2nd):
    earlier than the day, not its news. The period must be said of a simple past verb (no
    auxiliary: not "will be held this year", "were expected to conclude this month") whose clause
    names no day of the week and no date ("lowered rates on Wednesday for the second time this
    year" is the day's news)."""
    for t in sent:
        if t.lower_ not in ("month", "year") or t.i == 0 or t.doc[t.i - 1].lower_ != "this" \
                or t.dep_ not in ("npadvmod", "tmod", "obl"):
            continue
        verb = t.head
        # A simple past (the small parser tags some "VBN" with their subject: "Trump imposed ...").
        finite = verb.tag_ == "VBD" or verb.tag_ == "VBN" and any(c.dep_ == "nsubj" for c in verb.children)
        if not finite or any(c.dep_ in ("aux", "auxpass") for c in verb.children):
            continue
        if any(x.lower_ in _DAY_WORDS or x.ent_type_ == "DATE" and x.i not in (t.i, t.i - 1) for x in verb.subtree):
            continue
        return True
    return False


def date_in_window(answer: str, news_day: dt.date) -> bool:
    """Whether a date answer lies no more than :data:`DATE_WINDOW_BEFORE` days before the news day."""
    from okgen.generate.text import parse_date

    parsed = parse_date(answer, news_day.year)
    if parsed is None:
        return False
    d = parsed[0]
    # Without a year, a date months ahead is more often last year's ("August 22" in April).
    ahead = 366 if re.search(r"\b(?:19|20)\d\d\b", answer) else DATE_WINDOW_AHEAD
    return -DATE_WINDOW_BEFORE <= (d - news_day).days <= ahead


def media_name(text: str, outlets: Iterable[str] = ()) -> bool:
    """Whether a name is a news outlet (of the day's sources or a well-known one)."""
    n = re.sub(r"['\u2019]s?$", "", text.strip().strip("'\u2019")).lower().strip()
    bare = n.removeprefix("the ")
    from okgen.generate.distractors import org_class

    names = MEDIA_NAMES | {o.lower() for o in outlets}
    return n in names or bare in names or org_class(text) == "media" or bare.split(" ")[0] in MEDIA_NAMES


def trusted_org_answer(name: str, articles: int) -> bool:
    """An organisation answer the tagger is likely right about: a one-word name (or an acronym)
    only when several of the day's articles name it; a longer name when it has a shape of an
    organisation or two articles name it."""
    words = name.removeprefix("the ").split()
    if len(words) == 1:
        need = 3 if (words[0].isupper() and len(words[0]) <= 4) else 2
        return articles >= need
    return articles >= 2 or words[-1] in lx.ORG_LAST or words[0] in lx.ORG_FIRST


def several_answers(ent: Any) -> bool:
    """Whether the answer is one of a list ("Egypt and Qatar expressed ...", "Nick Frost, Paapa
    Essiedu and Janet McTeer will appear ..."): the others would be right too."""
    root = ent.root
    return root.dep_ == "conj" or any(c.dep_ == "conj" for c in root.children) \
        or any(c.dep_ == "appos" and c.ent_type_ == ent.label_ for c in root.children)


def broken_hyphen(question: str) -> bool:
    """Whether cutting the clause left half of a word: a hyphenated word ("a -before heard") or a
    possessive whose owner was cut ("until 's close")."""
    return bool(re.search(r"(?:^|\s)[-\u2013]\w|\w[-\u2013](?:\s|$)|(?:^|\s)['\u2019]s\b", question))


def echoes_answer(question: str, answer: str) -> bool:
    """Whether a stem word nearly spells an answer word ("Josh Wardle" for "Wordle"): a giveaway
    the exact-match gates miss."""
    import difflib

    a_words = [w.lower() for w in re.findall(r"[A-Za-z]{4,}", answer)]
    q_words = {w.lower() for w in re.findall(r"[A-Za-z]{4,}", question)}
    return any(difflib.SequenceMatcher(None, a, q).ratio() >= 0.8 for a in a_words for q in q_words)


def undefined_description(sent: Any, question: str, answer: Any) -> str | None:
    """A definite description of the stem that says nothing of which one it means ("accused
    Mexico of ignoring the treaty", "in the case"), or None.

    "the NOUN" with no adjective, compound, number, possessor or phrase after it needs the
    article to be understood; nouns of one of a kind ("the world", "the economy") and of
    time ("the weekend") stand alone."""
    q_words = set(re.findall(r"[A-Za-z][A-Za-z'-]*", question))
    for t in sent:
        if t.pos_ != "NOUN" or t.i in range(answer.start, answer.end) or t.text not in q_words:
            continue
        kids = list(t.children)
        said = any(c.dep_ in MODIFIERS for c in kids)  # clauses after it are cut from stems
        if t.lower_ in EMPTY_NOUNS and not said and t.dep_ in ("dobj", "pobj"):
            return t.text  # "ordered the administration to take measures": which?
        if not any(c.dep_ == "det" and c.lower_ == "the" for c in kids):
            continue
        if said or t.lemma_.lower() in UNIQUE_NOUNS or t.lower_ in UNIQUE_NOUNS:
            continue
        if f"the {t.text}" in question:
            return f"the {t.text}"
    return None


def place_as_actor(ent: Any) -> bool:
    """Whether a place stands for its government: the object of a verb aimed at an actor
    ("Israel has accused Ankara of ..."), or the agent of a passive ("... was criticised by
    Beijing")."""
    root = ent.root
    if root.dep_ in ("dobj", "dative") and root.head.lemma_.lower() in ADDRESSEE_VERBS:
        return True
    return root.dep_ == "pobj" and root.head.dep_ == "agent"


def speculative(question: str) -> bool:
    """Whether the stem asks about a guess ("Which company may eat some cost ...") or a capability
    ("How much can a nest of hornets devour ...") rather than something that happened or was
    decided: no option is right on the day, or the fact is general knowledge."""
    return bool(SPECULATIVE.search(question))


# Verbs of a stance (a call, praise, criticism): many take the same stance on a day's news, so
# "Who called for an investigation into ...?" has more than one right answer.
STANCE_VERBS = frozenset({"urge", "demand", "criticise", "criticize", "condemn", "praise", "welcome", "slam",
                          "blast", "denounce", "decry", "applaud", "hail", "endorse", "oppose", "lambast", "commend"})


def shared_stance(ent: Any) -> str | None:
    """The verb when the answer ``ent`` is the subject of a stance ("called for", "urged",
    "praised", "hit back at", "took aim at"), which others share; else None."""
    if ent.root.dep_ != "nsubj":
        return None
    verb = ent.root.head
    lemma = verb.lemma_.lower()
    parts = {c.lower_ for c in verb.children if c.dep_ in ("prep", "prt", "advmod")}
    if lemma in STANCE_VERBS or lemma == "call" and parts & {"for", "on"} or lemma == "hit" and "back" in parts:
        return verb.text
    if lemma == "take" and any(c.lower_ == "aim" for c in verb.children if c.dep_ in ("dobj", "obj")):
        return verb.text  # "took aim at": a criticism
    return None


LAUNCH_VERBS = frozenset({"unveil", "launch", "release", "introduce", "debut", "reveal", "roll", "showcase", "tease",
                          "announce", "unleash", "drop"})


def product_maker(ent: Any) -> bool:
    """Whether the answer ``ent`` is the maker of a named product it launched ("Samsung unveiled
    the Bespoke Jet AI Lite", "WhatsApp introduced a Meta AI button"): the product's name tells
    its maker to anyone who knows the brands, and the day's other companies rarely make such a
    thing (a review rejected a vacuum's maker against WhatsApp, Meta and Garmin). Not a named
    phrase after the object ("launched an investigation into Harvard")."""
    if ent.root.dep_ != "nsubj" or ent.root.head.lemma_.lower() not in LAUNCH_VERBS:
        return False
    obj = next((c for c in ent.root.head.children if c.dep_ in ("dobj", "obj")), None)
    if obj is None or any(c.dep_ == "prep" and c.lower_ in ("from", "into") for c in (*obj.children, *ent.root.head.children)):
        return False  # "released Ada Lind from captivity", "launched a probe into ..."
    return any(t.ent_type_ in ("PRODUCT", "WORK_OF_ART") or t.pos_ == "PROPN" and t.ent_type_ not in NOT_PRODUCT
               for t in obj.subtree if t.i <= obj.i)


# Names in an object that are no product: "released Ada Lind", "the March jobs report", "the Lakeport Accord".
NOT_PRODUCT = frozenset({"PERSON", "GPE", "LOC", "NORP", "DATE", "TIME", "FAC", "EVENT", "LAW"})


# Words before a number that make it a bound, not the figure: "well over $5 trillion" is
# not "$5 trillion", and "$6 trillion" would be right too.
BOUNDS = frozenset({"over", "nearly", "almost", "about", "around", "roughly", "approximately", "some", "under",
                    "least", "than", "upwards", "estimated"})


def approximate_answer(ent: Any) -> bool:
    """Whether a number answer is written as a bound or an estimate ("well over $5 trillion",
    "more than 80", "at least 12", "up to 40"): the options could not have one right answer."""
    doc = ent.doc
    before = doc[ent.start - 1] if ent.start > 0 else None
    first = ent[0]
    up_to = before is not None and before.lower_ == "to" and ent.start > 1 and doc[ent.start - 2].lower_ == "up"
    return (before is not None and before.lower_ in BOUNDS) or first.lower_ in BOUNDS or up_to



_COUNTRY_WORD = lx.COUNTRY_WORD


def country_of(name: str) -> str | None:
    """The country a place, demonym or other name of a country points to ("Cairo", "Egyptian"
    -> "Egypt"), or None."""
    n = name.strip()
    return lx.COUNTRY_OF.get(n) or lx.COUNTRY_OF.get(n.removeprefix("the ").strip())


def country_giveaway(question: str, answer: str, distractors: Iterable[str] = ()) -> str | None:
    """The word of the stem that names the answer's country another way ("Egyptian mediators"
    for "Egypt" or "Cairo", "Israeli" for "Israel", "in Tehran" for "Iran"), or None. An
    option set whose options all lie in that country (three Egyptian cities) gives nothing away."""
    target = country_of(answer)
    if target is None:
        return None
    if distractors and all(country_of(d) == target for d in distractors):
        return None
    for m in _COUNTRY_WORD.finditer(question):
        word = m.group(1)
        if lx.COUNTRY_OF[word] == target and word != answer.strip():
            return word
    return None


def indefinite_event(ent: Any) -> bool:
    """Whether a date answer dates an event its clause does not pin down: the verb's object is
    "a car", "an attack" with no name or number ("On what date did Israel strike a car in Gaza?":
    which car? many were struck)."""
    verb = ent.root
    while verb.pos_ not in ("VERB", "AUX") and verb.head.i != verb.i:
        verb = verb.head
    for obj in (c for c in verb.children if c.dep_ in ("dobj", "obj", "nsubjpass")):
        if not any(d.dep_ == "det" and d.lower_ in ("a", "an", "some", "another") for d in obj.children):
            continue
        # A name or number says which one ("a convoy of the Wagner Group"); a place does not ("a truck in Gaza").
        where = {t.i for c in obj.children if c.dep_ == "prep" and c.lower_ != "of" for t in c.subtree}
        if not any(t.pos_ in ("PROPN", "NUM") and t.i not in where for t in obj.subtree):
            return True
    return False


# Seats of power that name their holder: "met ... in the Oval Office" answers "the US president".
SEATS = re.compile(r"\b(Oval Office|White House|Kremlin|Downing Street|Elys[ée]e(?: Palace)?|Zhongnanhai|Blue House|"
                   r"Lodge in Canberra|Rideau Cottage)\b")
HEAD_TITLES = r"(?:U\.?S\.? |US |Russian |French |Chinese |British |UK )?(?:President|Prime Minister|PM|Chancellor)"


def seat_giveaway(question: str, answer: str, evidence: str) -> str | None:
    """The seat of power the stem names ("in the Oval Office") when the answer is the head of
    state or government the evidence titles so ("President Donald Trump"), or None: the place
    gives the person away."""
    m = SEATS.search(question)
    if m is None or not answer.strip():
        return None
    titled = re.search(rf"\b{HEAD_TITLES}\s+{re.escape(answer.strip())}\b", evidence or "")
    return m.group(1) if titled else None


# Titles of office a country word puts before a name ("Russian President Vladimir Putin",
# "Chinese Premier Li Qiang", "Indian Trade Minister ...").
_OFFICE = (r"(?:(?:Deputy|Vice|Prime|Foreign|Defen[cs]e|Trade|Finance|Interior|Commerce|Economy|Supreme|First|Acting)\s+)*"
           r"(?:President|Minister|PM|Chancellor|Premier|King|Queen|[Ll]eader|Secretary|Ambassador|Envoy|Emir|Prince)")
_TITLED = re.compile(_COUNTRY_WORD.pattern + r"\s+" + _OFFICE + r"\s+((?:[A-Z][\w'\u2019-]+\s?){1,3})")


def leader_giveaway(question: str, answer: str, evidence: str, distractors: Iterable[str] = ()) -> str | None:
    """The person the stem names whom the evidence titles with the answer's country ("Russian
    President Vladimir Putin" for the answer Russia or Moscow), or None: the name gives the
    country away (not among options all of that country)."""
    target = country_of(answer)
    if target is None or not evidence or distractors and all(country_of(d) == target for d in distractors):
        return None
    for m in _TITLED.finditer(evidence):
        name = m.group(2).strip()
        if lx.COUNTRY_OF[m.group(1)] == target and re.search(rf"\b{re.escape(name)}\b", question):
            return name
    return None


# Verbs that report a contested claim: the clause under them is someone's assertion, not a fact.
CLAIM_VERBS = frozenset({"claim", "allege", "insist", "deny", "argue", "suggest", "believe", "think", "contend",
                         "assert", "maintain", "speculate", "accuse", "doubt", "hope", "fear", "expect"})
# Plain reporting verbs: a clause under them is a claim when one person reports another's stance.
SAY_VERBS = frozenset({"say", "tell", "add", "note", "write", "state", "tweet", "post"})


def reported_claim(ent: Any) -> str | None:
    """The reporting verb when the answer ``ent`` sits in a clause that is someone's claim ("she
    claimed Trump did not back ...", "she alleged ..."; "X said Y opposed ..." when a
    person reports another person's stance), or None. The offline stem keeps the clause's core
    without its attribution, so it would state the claim as fact."""
    t = ent.root
    while t.head.i != t.i:
        head = t.head
        if t.dep_ in ("ccomp", "xcomp") and head.pos_ in ("VERB", "AUX"):
            lemma = head.lemma_.lower()
            if lemma in CLAIM_VERBS:
                return head.text
            if lemma in SAY_VERBS and t.dep_ == "ccomp":
                speaker = next((c for c in head.children if c.dep_ == "nsubj"), None)
                subj = next((c for c in t.children if c.dep_ in ("nsubj", "nsubjpass")), None)
                if speaker is not None and subj is not None and (speaker.ent_type_ == "PERSON" or speaker.lower_
                                                                 in ("he", "she")) \
                        and subj.ent_type_ == "PERSON" and subj.text not in speaker.text:
                    return head.text
        t = head
    return None
