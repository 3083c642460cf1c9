"""Question stems from a dependency parse: the offline generator's questions.

Given a parsed sentence (a spaCy ``Span``) and one of its named entities as the answer, build a
real question that asks for that entity and does not copy the sentence:

* the clause is cut down to its core (subject, verb, object, particles and the prepositional
  phrases that carry names, numbers or places); relative clauses, appositions, adverbial
  clauses, parentheses and asides are left out, so the stem is shorter than the sentence and
  rarely shares a long run of ordinary words with the article;
* the answer's role decides the question form: the subject gives "Who/Which company ... ?",
  the object gives "Which company did X acquire ... ?" (the auxiliary inverted, or do-support
  from the verb's lemma and tense), a count gives "How many <noun> ... ?", a sum "How much
  did X ... ?", a place in a prepositional phrase "In which country did X ... ?" (also one
  in a phrase of the object: "On which country did X impose tariffs?"), a date "When did X
  ... ?"; a titled person as subject is asked "Who ...", a subject of "said" only when it
  announces its own action ("Which organisation said it would ... ?"), of "announced" or
  "confirmed" with the clause it made public, and a place in an "in" phrase of the subject
  "In which country did <the rest of the subject> ... ?";
* the stem must stand alone: its other actors are named (no "he", "the company" with no
  name), and it is dated with the news day unless it already names a date.

Everything here is deterministic and works on any spaCy English pipeline with a parser and NER.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, replace
from typing import Any

from okgen.generate import lexicon as lx
from okgen.generate.text import format_date, has_explicit_date

# spaCy NER label -> okgen answer kind (the kinds the distractor sampler and the gates know).
LABEL_KIND = {"PERSON": "person", "ORG": "org", "GPE": "place", "LOC": "region", "MONEY": "money",
              "PERCENT": "percent", "DATE": "date", "CARDINAL": "count", "QUANTITY": "quantity",
              "EVENT": "event"}
# Reporting verbs: "X said ..." asks nothing about the news; their complement clause is used.
REPORTING = frozenset({"say", "tell", "add", "note", "write", "explain", "claim", "argue", "insist",
                       "state", "believe", "think", "suggest", "report", "warn", "ask", "reply"})
# Dependents of a verb kept in the stem (in sentence order); everything else is left out.
KEEP_VERB_DEPS = frozenset({"dobj", "dative", "attr", "acomp", "oprd", "prt", "prep", "agent",
                            "xcomp", "neg", "obj", "iobj"})
# Inside kept phrases, these subtrees are left out (clauses, asides).
DROP_DEPS = frozenset({"relcl", "appos", "advcl", "acl", "parataxis", "punct", "cc", "conj", "mark",
                       "npadvmod", "advmod", "meta", "dep", "intj", "preconj", "predet", "ccomp",
                       "csubj"})
PRONOUNS = frozenset({"he", "she", "him", "her", "they", "them", "it", "we", "us", "i", "me", "you",
                      "this", "that", "these", "those", "his", "hers", "their", "theirs", "its",
                      "our", "my", "your", "himself", "herself", "itself", "themselves"})
GENERIC_HEADS = frozenset({"company", "firm", "group", "government", "minister", "official",
                           "officials", "president", "country", "city", "team", "club", "player",
                           "man", "woman", "people", "police", "agency", "state", "department",
                           "authorities", "court", "judge", "report", "study", "company's", "move",
                           "deal", "plan", "decision", "spokesperson", "spokesman", "spokeswoman",
                           "source", "sources", "leader", "side", "band", "star", "singer", "actor",
                           "show", "series", "game", "film", "movie", "book", "album", "project"})
RELATIVE_DAY = re.compile(r"\b(?:today|yesterday|tomorrow|tonight|this (?:week|month|year)|last (?:week|month|year|night)"
                          r"|next (?:week|month|year)|(?:on |last |this |next )?(?:Monday|Tuesday|Wednesday|Thursday|Friday"
                          r"|Saturday|Sunday)(?: (?:morning|afternoon|evening|night))?|earlier this (?:week|month|year))\b",
                          re.IGNORECASE)
# Verbs of change whose object is how much something moved ("shares fell 5%").
CHANGE_VERBS = frozenset({"rise", "fall", "grow", "drop", "increase", "decrease", "jump", "climb", "slide",
                          "surge", "plunge", "gain", "lose", "decline", "sink", "soar", "slip", "tumble",
                          "rebound", "shrink", "expand", "cut", "raise", "lower", "boost", "reduce"})
# Verbs of a change asked by the level it reached ("slashed ... to $3.9 billion").
LEVEL_VERBS = frozenset({"slash", "hike", "lift", "bring", "push", "trim"})
# A market's close with its direction ("closed up 4.9%", "ended down 2%"): a change too.
CLOSING_VERBS = frozenset({"close", "finish", "end", "open", "trade"})
DIRECTION_WORDS = frozenset({"up", "down", "higher", "lower"})
# Prepositions that ask naturally for a person or an organisation ("With whom did X meet").
NAME_PREPS = frozenset({"with", "to", "against", "from", "by", "for"})
# Verbs of meeting: "With whom did X meet?" says nothing of the news unless the question keeps
# what the meeting was about ("met with ... Monday [to discuss ...]", the purpose cut as too long,
# left "With whom did Newsom meet on April 14, 2025?": a calendar detail, a reviewer said).
MEET_VERBS = frozenset({"meet", "talk", "speak", "chat", "confer", "sit"})
# What a meeting is, not what it is about ("held talks", "spoke by phone for an hour").
MEET_NOUNS = frozenset({"talk", "meeting", "call", "conversation", "phone", "telephone", "video", "conference",
                        "videoconference", "hour", "minute", "time", "length", "discussion", "session"})


def _bare_meeting(verb: Any, rest: list[Any] | None) -> bool:
    """A meeting ("met", "spoke with", "held talks with") whose clause keeps nothing but who and
    when: no topic, place or number beside the people (and their titles) and the meeting's own
    words. "Who did Tom Brant meet on April 4, 2025?" is a calendar detail."""
    lemma = base_form(verb)
    if lemma not in MEET_VERBS and not any(  # "held talks", "had a phone call", "conducted talks"
            c.dep_ in ("dobj", "obj") and c.lemma_.lower() in MEET_NOUNS for c in verb.children):
        return False
    return not any(t.pos_ in ("NOUN", "PROPN", "VERB", "NUM") and t.ent_type_ not in ("DATE", "TIME", "PERSON")
                   and t.head.ent_type_ != "PERSON" and t.lemma_.lower() not in MEET_NOUNS for t in rest or [])
MAX_STEM_TOKENS = 24
REASON_PREPS = frozenset({"because", "due", "amid", "despite", "owing"})  # a reason or circumstance: not the fact itself
# Present-tense verbs that report news (plans and aims), unlike habitual present ("produces").
INTENT_VERBS = frozenset({"aim", "plan", "seek", "want", "expect", "intend", "propose", "face", "threaten", "vow",
                          "pledge", "hope", "demand", "urge", "warn", "estimate", "project", "forecast"})


@dataclass(frozen=True)
class Stem:
    """A question about one answer span."""

    question: str
    """The question, ending with "?"."""
    kind: str
    """Answer kind (person, org, place, money, percent, date, count, quantity, event)."""
    answer: str
    """The answer as the article wrote it."""
    form: str
    """Which question form made it: subject, object, count, amount, place, date, agent, prep, nested."""
    role: str = ""
    """The role a "Which ROLE ..." question names ("Lakeland state representative")."""
    titles: tuple[str, ...] = ()
    """That role's title words as lemmas, its noun last ("state", "representative"; "appeal",
    "court", "judge" of "appeals court judge"): its options must be people the news writes so."""


# Verbs that state a standing figure ("totalled", "amounts to", "stands at"): news only with its date.
# Words that make a count relative to an earlier one ("10 more members", "5 additional
# flights"): the question would have to say the earlier one.
RELATIVE_COUNT = frozenset({"more", "fewer", "additional", "other", "further", "extra"})
def _relative_count(noun: Any, ent_ids: set[int]) -> bool:
    """Whether a count of ``noun`` is relative to an earlier one: "10 more", "5 additional",
    "another 300" (on the number or on the noun), "injured 247 others" (besides those killed)."""
    if noun.lower_ in ("others", "other"):
        return True
    return any(t.lower_ in RELATIVE_COUNT or t.lower_ == "another" and t.dep_ == "det"
               for t in noun.subtree if t.head.i in ent_ids or t.head.i == noun.i)


STAT_VERBS = frozenset({"total", "amount", "stand", "average", "number"})
# The writer's judgement of a number ("an impressive 140,147 points"): not part of what is counted.
EVALUATIVE = frozenset({"impressive", "whopping", "staggering", "massive", "huge", "stunning", "remarkable",
                        "incredible", "astonishing", "mere", "paltry", "hefty", "eye-watering", "record"})


def answer_kind(ent: Any) -> str | None:
    """The okgen kind of a spaCy entity, or None for entities not used as answers."""
    kind = LABEL_KIND.get(ent.label_)
    if kind == "date":
        text = ent.text
        if re.fullmatch(r"(?:1[89]|20)\d\d", text):
            return "year"
        # Only calendar dates with a month and a day or a year: "Tuesday", "last week" are not answers.
        if not re.search(rf"\b(?:{'|'.join(lx.MONTHS)})\b", text) or not re.search(r"\d", text):
            return None
    # A count is a number that counts a noun ("30 people"), not a rank, a score or a year.
    if kind == "count" and ent.start > 0 and ent.doc[ent.start - 1].pos_ == "PROPN":
        return None  # "the Cessna 310 aircraft": a model number, not a count
    if kind == "count" and (ent.root.dep_ != "nummod" or ent.root.head.pos_ != "NOUN"
                            or not re.fullmatch(r"\d[\d,]*(?: (?:million|billion|thousand))?|\d+(?:\.\d+)? (?:million|billion|thousand)",
                                                ent.text)):
        return None
    return kind


def wh_word(kind: str, answer: str) -> str:
    """The question word for an answer kind: "Who", "Which country", "Which organisation"..."""
    if kind == "person":
        return "Who"
    if kind == "place":
        from okgen.generate.distractors import place_scale

        return {"country": "Which country", "city": "Which city", "region": "Which region",
                "continent": "Which continent"}.get(place_scale(answer), "Which place")
    return {"org": "Which organisation", "event": "Which event", "region": "Which region", "money": "How much",
            "percent": "What percentage", "date": "On what date", "year": "In which year",
            "quantity": "How much", "count": "How many"}[kind]


NOMINAL = frozenset({"NOUN", "PROPN"})


def _subtree_tokens(tok: Any, exclude: frozenset[str] = DROP_DEPS) -> list[Any]:
    """Tokens of ``tok``'s subtree, without dropped dependents' subtrees and parentheses.

    Coordinated names and nouns stay whole ("between Witkoff and Putin" is not "between
    Witkoff"): only clauses and asides are cut."""
    if _meaning(tok):
        return list(tok.subtree)  # "at least", "no longer": the modifier whole, not "least"
    out = [tok]
    coordinated = (tok.pos_ in NOMINAL or tok.ent_type_) and any(c.dep_ == "conj" and c.pos_ in NOMINAL for c in tok.children) \
        or tok.pos_ == "ADJ" and any(c.dep_ == "conj" and c.pos_ == "ADJ" for c in tok.children)
    for child in tok.children:
        if coordinated and (child.dep_ in ("cc", "conj") and child.pos_ in NOMINAL | {"CCONJ", "ADJ", "ADP", "SCONJ"}
                            or child.dep_ == "punct" and child.text == "," and child.i > tok.i):
            # "as well as" whole: its "as well" hangs on the conjunction as adverbs
            out.extend(child.subtree if child.dep_ == "cc" else _subtree_tokens(child, exclude))
            continue
        if child.dep_ == "appos" and _defines(tok, child):
            out.extend(c for c in tok.children if c.dep_ == "punct" and c.text == ","
                       and c.i in (child.left_edge.i - 1, child.right_edge.i + 1))
            out.extend(child.subtree)
            continue
        if child.dep_ in exclude and not _hyphen(child) and not _hyphen_word(child) and not _meaning(child) \
                and not _needed(tok, child):
            continue
        out.extend(_subtree_tokens(child, exclude))
    return out


def _needed(tok: Any, child: Any) -> bool:
    """A dependent its head means nothing without: the infinitive of a purpose noun ("plans [to
    impose tariffs]"), the conjunction of a clause after a preposition ("on [whether] ..."), and
    the short participle naming who acted on a bare noun ("countermeasures [imposed by Beijing]")."""
    if child.dep_ == "acl" and tok.lower_ in PURPOSE_NOUNS and child.i > tok.i:
        return any(c.dep_ == "aux" and c.lower_ == "to" for c in child.children)
    if child.dep_ == "acl" and child.tag_ == "VBN" and child.i > tok.i and tok.pos_ == "NOUN" \
            and not any(c.dep_ in ("det", "poss", "nummod") for c in tok.children) and len(list(child.subtree)) <= 5:
        # "in retaliation for countermeasures [imposed by Beijing]": whose, or a reviewer asks
        return any(t.ent_type_ in ("GPE", "ORG", "NORP", "PERSON") for a in child.children if a.dep_ == "agent"
                   for t in a.subtree)
    return child.dep_ == "mark" and tok.dep_ == "pcomp" and child.lower_ in ("whether", "if")


def _defines(noun: Any, appos: Any) -> bool:
    """A short name in apposition that says which one a common noun is ("another rival,
    Slack,"; "the chancellor, Rachel Reeves,"), or the person a title names right after it
    ("Meta CEO Mark Zuckerberg"): kept, or the noun points nowhere."""
    sub = list(appos.subtree)
    if noun.pos_ == "PROPN" and appos.left_edge.i == noun.i + 1 and appos.ent_type_ == "PERSON":
        # "Meta CEO [Mark Zuckerberg]": a title the tagger calls a proper noun, its holder right after
        return len(sub) <= 4 and all(t.pos_ == "PROPN" or t.text in ("-", ".") for t in sub)
    return noun.pos_ == "NOUN" and appos.pos_ == "PROPN" and len(sub) <= 4 \
        and all(t.pos_ in ("PROPN", "DET", "PART") or t.text in ("-", ".") for t in sub)


def _cuts_complement(tokens: list[Any]) -> bool:
    """Whether a kept phrase lost the clause one of its verbs needs ("with Trump making clear
    [that ...]", "after saying [that ...]"): what is left is a fragment."""
    kept = {t.i for t in tokens}
    for t in tokens:
        if t.tag_ == "JJR" and t.dep_ == "amod" and t.lower_ not in ("more", "less", "fewer") \
                and not any(x.lower_ == "than" for x in t.head.subtree if x.i in kept):
            return True  # "received a smaller package": smaller than what?
        for c in t.children:
            if t.pos_ in ("VERB", "AUX") and c.dep_ in ("ccomp", "csubj") and c.i not in kept:
                return True
            if c.dep_ in ("acl", "relcl") and c.i not in kept and (t.lower_ in ("first", "last", "only", "one")
                                                                   or t.tag_ == "JJS" or any(
                    a.dep_ == "amod" and (a.lower_ in ("first", "last", "only") or a.tag_ == "JJS") for a in t.children)):
                return True  # "for being the first [to certify ...]": first at what?
            if t.lower_ in PURPOSE_NOUNS and c.dep_ == "acl" and c.i not in kept:
                return True  # "in an effort [to keep ...]": the effort lost what it is for
            if t.pos_ == "VERB" and t.dep_ in ("pcomp", "pobj") and c.dep_ == "nsubj":
                return True  # "with senior figures paying visits": an absolute clause, an aside
            if t.pos_ in ("VERB", "AUX") and c.dep_ == "mark" and c.i not in kept:
                return True  # "on [whether] Khalil can be deported": a clause without its conjunction
            if t.dep_ == "pobj" and t.head.lower_ == "with" and c.dep_ == "acl" and c.pos_ == "VERB" \
                    and c.i not in kept:
                return True  # "with the remaining 40% [made in Indonesia]": an absolute clause, an aside
    return False


# Nouns that mean nothing without the clause saying what for ("in an effort to ...").
PURPOSE_NOUNS = frozenset({"effort", "efforts", "bid", "attempt", "attempts", "order", "push", "drive", "move",
                           "plan", "plans", "decision", "way", "ability", "right", "call", "calls", "lawsuit",
                           "suit", "complaint", "appeal", "challenge", "petition", "motion", "request", "requests",
                           "willingness", "readiness", "intention", "commitment", "pledge", "promise", "threat"})


# Modifiers that change what a clause says ("not", "nearly 50", "the eighth largest"): never cut.
MEANING_WORDS = frozenset({"not", "n't", "never", "no", "only", "nearly", "almost", "about", "around", "roughly",
                           "approximately", "more", "less", "fewer", "least", "most", "just", "barely", "over",
                           "under", "up", "down", "first", "second", "third", "fourth", "fifth", "sixth",
                           "seventh", "eighth", "ninth", "tenth", "last", "again", "no longer", "also", "once", "back", "off",
                           "twice", "thrice", "mostly", "mainly", "primarily", "largely", "partly", "chiefly",
                           "partially", "entirely", "solely", "exclusively"})


def _said_day(tok: Any) -> bool:
    """A bare relative day said of the verb ("retaliated Wednesday with ..."): kept, so that
    :func:`_clean` makes it the date it names (or leaves it out where the tense is unclear). Left
    out, the question could ask of two events ("How high a tariff did China retaliate with?",
    asked beside a second retaliation)."""
    return tok.dep_ in ("npadvmod", "tmod") and tok.lower_ in lx.DAY_WORDS and _plain_day(tok)


def _this_period(tok: Any) -> bool:
    """"this week", "this year" said of the verb ("shares have fallen 12% this week"): kept, as
    the period is part of the figure; the question's date says which week (the year is written
    out: :func:`_clean`)."""
    return tok.dep_ in ("npadvmod", "tmod") and tok.lower_ in THIS_PERIODS \
        and [c.lower_ for c in tok.children] == ["this"]


def _plain_day(tok: Any) -> bool:
    """A day word that names one day alone: at most "last" or "next" before it, no date after it
    ("Friday, April 18": the date says which), no "every", "this", "the following", no name
    ("Cyber Monday"), no possessive ("Friday's close"), and the only day word of its sentence (in
    "rose 5% Wednesday and 3% Thursday" or "Sunday through Tuesday" no one day is the fact's)."""
    doc = tok.doc
    return all(c.lower_ in ("last", "next") for c in tok.children) \
        and sum(t.lower_ in lx.DAY_WORDS for t in tok.sent) == 1 \
        and not (tok.i + 1 < len(doc) and doc[tok.i + 1].lower_ in ("'s", "\u2019s"))


def _meaning(tok: Any) -> bool:
    """A modifier whose loss would change the fact ("eighth largest" is not "largest"; "as much
    as 80%" is not "much as 80%")."""
    if tok.dep_ in ("advmod", "quantmod") and tok.head.like_num:
        return True
    return tok.dep_ in ("advmod", "npadvmod", "neg", "predet") and (tok.lower_ in MEANING_WORDS
                                                                     or tok.tag_ == "JJ" and tok.lower_.endswith("th"))


def _hyphen(tok: Any) -> bool:
    """A hyphen inside a word ("three-round"), kept so the word stays whole."""
    return tok.text in ("-", "\u2013") and not tok.whitespace_ and tok.i > 0 and not tok.nbor(-1).whitespace_


def _sole_reason(verb: Any, reason: Any) -> bool:
    """Whether ``reason`` may leave the question: the clause is not negated ("did not cut jobs
    because of ..."), the reason is its only one and has no coordinated partner ("300 because of
    X and 200 because of Y", "not because of X but because of Y")."""
    if any(c.dep_ == "neg" or c.lower_ in ("never", "not") for c in verb.children):
        return False
    if reason.dep_ == "conj" or any(c.dep_ in ("cc", "conj", "preconj") for c in reason.children):
        return False
    reasons = [t for t in verb.subtree if t.dep_ == "prep" and t.lower_ in REASON_PREPS]
    return len(reasons) == 1 and not any(t.dep_ == "conj" and t.like_num for t in verb.subtree)


def _hyphen_word(tok: Any) -> bool:
    """The first part of a hyphenated word ("all" of "all-electric"), kept with the rest."""
    return tok.i + 1 < len(tok.doc) and _hyphen(tok.nbor(1))


def _whole_words(toks: list[Any]) -> list[Any]:
    """``toks`` with the parts of their hyphenated words ("all" and "-" of "all-electric")."""
    kept = {t.i for t in toks}
    return toks + [c for t in toks for c in t.children if c.i not in kept and (_hyphen(c) or _hyphen_word(c))]


_QUOTES = frozenset({'"', "\u201c", "\u201d", "''", "``"})


def _quoted(sent: Any) -> set[int]:
    """Document indices of the tokens between quotation marks in ``sent`` (to the end when the
    last quotation is never closed)."""
    inside: set[int] = set()
    open_ = False
    for t in sent:
        if t.text in _QUOTES:
            open_ = not open_ if t.text in ('"', "''", "``") else t.text == "\u201c"
        elif open_:
            inside.add(t.i)
    return inside


def _bracketed(sent: Any) -> set[int]:
    """Document indices of the tokens inside parentheses or square brackets of ``sent`` (to the
    sentence's end when one is never closed, as extraction sometimes leaves it)."""
    inside: set[int] = set()
    depth = 0
    for t in sent:
        if t.text in ("(", "["):
            depth += 1
        elif t.text in (")", "]"):
            depth = max(0, depth - 1)
        elif depth:
            inside.add(t.i)
    return inside


def _coordination(verb: Any) -> int:
    """Where a second conjunct the parse hung on the verb starts: an "and" or "but" followed by
    another phrase of the verb ("faces a levy on timber - and also on goods made of it"); the
    sentence's end when there is none."""
    for c in verb.children:
        if c.dep_ == "cc" and c.i > verb.i and c.lower_ in ("and", "but") \
                and any(p.dep_ == "prep" and p.i > c.i for p in verb.children):
            return c.i
    return len(verb.doc)


def _outlet_source(prep: Any) -> bool:
    """Whether a prepositional phrase is "according to" a news outlet and nothing else ("according
    to CNBC", "to the New York Times"): who reported the fact, not a side whose claim it is, nor a
    poll, a study or a tally an outlet made ("a CNN poll" stays)."""
    from okgen.generate.precision import MEDIA_NAMES

    if prep.dep_ != "prep" or prep.lower_ != "according":
        return False
    named = " ".join(t.lower_ for t in prep.subtree if t.lower_ not in ("according", "to"))
    return named in MEDIA_NAMES or named.removeprefix("the ") in MEDIA_NAMES


def _clause(verb: Any, skip: set[int], purpose: bool = True, owner: Any = None) -> list[Any] | None:
    """The kept right-hand side of ``verb`` (tokens after the verb), or None when it holds a
    parenthesis or is too long. With ``purpose``, a short infinitive of purpose stays; a reason
    with a pronoun that is not ``owner``'s (:func:`_owned`) is left out, and so is the news
    outlet that reported the fact (:func:`_outlet_source`)."""
    brackets = _bracketed(verb.sent)
    toks: list[Any] = []
    # What follows an "and" the parse hung on the verb is a second conjunct's ("is facing a tariff
    # on timber - and also on goods made of it"): left out, not run on ("... also on goods").
    coord = _coordination(verb)
    for child in verb.children:
        if child.i < verb.i or (child.dep_ not in KEEP_VERB_DEPS and not _meaning(child) and not _said_day(child)
                                and not _this_period(child) and not (purpose and _purpose(child))) \
                or child.i in skip or child.i > coord:
            continue
        if child.dep_ == "prt" and (child.tag_ in ("RBR", "RBS", "JJ", "JJR", "JJS") or child.tag_.startswith("NN")):
            return None  # "grilled [whistleblower] Dr. X": a noun the parse took for a particle
        if _outlet_source(child):
            continue  # "..., according to CNBC": who reported it; a side's claim keeps its source
        sub = _subtree_tokens(child)
        if child.dep_ == "advcl" and (len(sub) > MAX_PURPOSE or not _self_contained(sub)):
            continue  # a long or pronoun-bound purpose is detail: left out
        if child.dep_ == "prep" and child.lower_ in REASON_PREPS and not _self_contained(sub, owner):
            if not _sole_reason(verb, child):
                return None  # "did not cut jobs because of X but because of Y": the reason is the fact
            continue  # "because of weak demand for its vans": a reason that points back is left out
        if child.dep_ == "prep" and not any(t.ent_type_ or t.like_num for t in sub) and len(sub) > 4:
            if child.lower_ == "as" and any(c.dep_ in ("dobj", "obj") for c in verb.children) \
                    and not any(t.lower_ == "part" for t in sub):
                return None  # "credited X's leadership [as crucial ...]": the verb needs it (not "as part of")
            continue  # a long prepositional phrase without a name or number: detail, not core
        if brackets.intersection(t.i for t in sub):
            return None  # an aside in brackets is no part of a question ("(the first election ...")
        if _cuts_complement(sub):
            if child.dep_ == "prep":
                continue  # an aside ("with Trump making clear that ..."): left out whole
            return None
        toks.extend(sub)
    toks.sort(key=lambda t: t.i)
    kept = {t.i for t in toks}
    for t in toks:  # half of a hyphenated word ("0" of "2-0") is no word
        for j in (t.i - 1, t.i + 1):
            if 0 <= j < len(t.doc) and t.doc[j].text in ("-", "\u2013") and j not in kept \
                    and not (t.doc[j].whitespace_ if j > t.i else t.doc[j - 1].whitespace_ if j > 0 else True):
                return None
    return toks


# Infinitives of a result, not a purpose ("jumped 28% to reach 46 million"): a figure the
# question would give away, left out like any other adverbial clause.
RESULT_VERBS = frozenset({"reach", "hit", "top", "close", "end", "finish", "stand", "total", "become", "leave",
                          "bring", "make", "set", "mark", "remain", "retain", "overtake", "surpass", "win", "claim",
                          "clinch", "secure", "go", "move", "keep", "stay"})
MAX_PURPOSE = 9  # tokens of a purpose infinitive kept in a stem ("to meet with President Vladimir Putin")


def _purpose(tok: Any) -> bool:
    """An infinitive of purpose after its verb ("traveled to Russia [to meet with Putin]",
    "is stepping in [to seize control of British Steel]"): what the event is for, kept."""
    return tok.dep_ == "advcl" and tok.pos_ == "VERB" and tok.i > tok.head.i and tok.lemma_.lower() not in RESULT_VERBS \
        and base_form(tok.head) not in CHANGE_VERBS | LEVEL_VERBS | CLOSING_VERBS \
        and any(c.dep_ == "aux" and c.lower_ == "to" and c.i == tok.i - 1 for c in tok.children) \
        and not any(c.dep_ in ("nsubj", "nsubjpass", "mark") for c in tok.children)


def _text(tokens: list[Any]) -> str:
    """Tokens joined with their original spacing."""
    if not tokens:
        return ""
    parts = []
    for i, t in enumerate(tokens):
        nxt = tokens[i + 1] if i + 1 < len(tokens) else None
        ws = t.whitespace_ if nxt is not None and nxt.i == t.i + 1 else (" " if nxt is not None else "")
        parts.append(t.text + ws)
    return "".join(parts).strip()


# Entity types that name something (not dates, numbers or laws).
NAME_TYPES = frozenset({"PERSON", "ORG", "GPE", "LOC", "NORP", "FAC", "EVENT", "PRODUCT", "WORK_OF_ART"})


def _named(tokens: list[Any]) -> bool:
    """Whether a phrase names something (a proper noun or an entity)."""
    return any(t.pos_ == "PROPN" or t.ent_type_ in NAME_TYPES for t in tokens)


def _self_contained(tokens: list[Any], owner: Any = None) -> bool:
    """No pronoun and no generic description that points back to an earlier sentence. With
    ``owner``, the clause's named subject, "its" or "their" may be its (:func:`_owned`)."""
    for t in tokens:
        if t.lower_ == "this" and t.dep_ == "det" and t.head.lower_ in THIS_PERIODS:
            continue  # "this week", "this year": the news day's, which the question names
        if t.lower_ in PRONOUNS and t.pos_ in ("PRON", "DET") and not (owner is not None and _owned(t, owner)):
            return False
        if t.lower_ in ("the", "this", "that") and t.head.lower_ in GENERIC_HEADS and not _named(list(t.head.subtree)):
            return False
    return True


# Periods "this ..." names relative to the news day: the question's date ("as reported on April
# 11, 2025") says which; "this year" is written as the year (:func:`_clean`).
THIS_PERIODS = frozenset({"week", "weekend", "month", "year", "morning", "afternoon", "evening"})
_THIS_YEAR = re.compile(r"\b(?:(?P<prep>of|in|for|since|until|through|by|during) |(?P<when>earlier|later) )?this year\b")
OWNER_LABELS = frozenset({"ORG", "GPE"})


def _owned(pron: Any, owner: Any) -> bool:
    """Whether ``pron`` is surely a possessive of ``owner``, the clause's subject: a named
    organisation or country, the only name before the pronoun in the sentence, the subject of
    the sentence's own verb (not of a reported clause: "Ukraine said Russia fired drones at its
    cities" is Ukraine's), "its" for one and "their" for several joined ones ("Norvale Motors is
    cutting 300 jobs ... as demand for its vans falls"). Any name before the pronoun, the
    answer or a product too, could own it ("The EU fined Google over its software"); "his" and "her" often
    point at someone of an earlier sentence."""
    if pron.dep_ != "poss" or owner.ent_type_ not in OWNER_LABELS or owner.i >= pron.i:
        return False
    joined = any(c.dep_ == "conj" for c in owner.children)
    if pron.lower_ != ("their" if joined else "its"):
        return False
    if any(t.dep_ not in ("ROOT", "conj") for t in (owner.head, *owner.head.ancestors)):
        return False
    mine = {t.i for t in owner.subtree}
    return not any(t.ent_type_ in NAME_TYPES and t.i not in mine for t in pron.sent if t.i < pron.i)


def _verb_forms(verb: Any) -> tuple[str, str] | None:
    """(auxiliary to front, verb form after the subject) for a question about the object:
    "has ... signed", "did ... sign", "will ... meet"; None for forms that do not invert simply."""
    auxes = [c for c in verb.children if c.dep_ in ("aux", "auxpass") and c.i < verb.i]
    if auxes:
        first = auxes[0]
        rest = [a.text for a in auxes[1:]] + [verb.text]
        if any(c.dep_ == "neg" for c in verb.children):
            return None
        return first.text.lower(), " ".join(rest)
    if verb.lemma_.lower() == "be":
        return None  # no do-support for "be": "did X be ..." is not English
    if verb.tag_ == "VBD" or _past_mistagged(verb):
        return "did", base_form(verb)
    if verb.tag_ == "VBZ":
        return "does", base_form(verb)
    if verb.tag_ == "VBP":
        return "do", base_form(verb)
    return None


def base_form(verb: Any) -> str:
    """The verb's base form: the lemma, unless the lemmatizer cut an "-ed" form wrongly
    ("fined" -> "fin"): then the more frequent English word of the two."""
    from okgen.generate.sentences import zipf

    lemma, text = verb.lemma_.lower(), verb.text.lower()
    if text.endswith("ed") and lemma == text[:-2] and zipf(text[:-1]) > zipf(lemma):
        return text[:-1]
    return lemma


def _clause_verb(ent: Any) -> Any | None:
    """The verb the entity's phrase depends on (through prepositions and noun modifiers)."""
    tok = ent.root
    for _ in range(4):
        head = tok.head
        if head.i == tok.i:
            return None
        if head.pos_ in ("VERB", "AUX"):
            return head
        tok = head
    return None


# A weekday that is part of a name ("Palm Sunday", "Good Friday", "Super Tuesday") is no relative day.
_NAMED_DAY = re.compile(r"\b(?:Palm|Good|Black|Super|Easter|Holy|Ash|Cyber|Bloody|Maundy|Shrove|Whit|Giving)\s$")


# A relative day goes with the preposition, bound and description that lead to it ("at least
# through Sunday", "after a volatile Friday").
_DAY_PHRASE = re.compile(r"\b(?:(?:at least|at most|as early as|as late as|as soon as)\s+)?"
                         r"(?:(?:until|till|through|by|since|from|over|before|after|during|for)\s+"
                         r"(?:(?:a|an|the)\s+(?:[a-z]+\s+)?)?)?"  # "after a volatile Friday" goes whole
                         r"(?P<day>" + RELATIVE_DAY.pattern.removeprefix(r"\b") + ")", re.IGNORECASE)


WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
# A relative day with "on" (or alone): the only kind :func:`_day_dates` resolves ("through Monday" is not).
_BARE_DAY = re.compile(r"(?:on\s+)?(?:(?:last|next)\s+)?(?P<name>[a-z]+)(?:\s+(?:morning|afternoon|evening|night))?",
                       re.IGNORECASE)


def _tense(verb: Any) -> str | None:
    """"past" or "future" when the verb's form says so plainly, else None ("is meeting")."""
    auxes = {a.lower_ for a in verb.children if a.dep_ in ("aux", "auxpass")}
    if auxes & {"will", "'ll", "shall"}:
        return "future"
    if verb.tag_ == "VBD" and not auxes - {"was", "were"} or auxes & {"has", "have", "had", "did"} \
            or verb.tag_ == "VBN" and auxes & {"was", "were"}:
        return "past"
    return None


def _day_dates(verb: Any, date_s: str) -> dict[str, str]:
    """The relative days said of ``verb`` itself ("raised tariffs on Wednesday", "will vote on
    Monday"), each as the date it names from the news day ("April 9, 2025"): a past verb's
    weekday is the last one on or before the news day, a future verb's the next one on or after
    it. Days said of another verb, or of a verb whose tense is unclear, are not resolved."""
    tense = _tense(verb)
    if tense is None:
        return {}
    try:
        day = dt.datetime.strptime(date_s, "%B %d, %Y").date()
    except ValueError:
        return {}
    out: dict[str, str] = {}
    for t in verb.children:
        tok = t
        if t.dep_ == "prep" and t.lower_ == "on":
            tok = next((c for c in t.children if c.dep_ == "pobj"), t)
        elif t.dep_ not in ("npadvmod", "tmod", "obl"):
            continue
        w = tok.lower_
        if w in lx.DAY_WORDS and not _plain_day(tok):
            continue  # "on Friday, March 28" is March 28 (:func:`_clean`), not the Friday before the news day
        which = next((c.lower_ for c in tok.children if c.lower_ in ("last", "next")), None)
        if w in WEEKDAYS:
            ahead = (WEEKDAYS.index(w) - day.weekday()) % 7
            if tense == "past":
                shift = -((day.weekday() - WEEKDAYS.index(w)) % 7) - (7 if which == "last" and ahead == 0 else 0)
            else:
                shift = ahead + (7 if which == "next" and ahead == 0 else 0)
        elif w in ("yesterday", "today", "tomorrow") and (w != "tomorrow" or tense == "future") \
                and (w != "yesterday" or tense == "past"):
            shift = {"yesterday": -1, "today": 0, "tomorrow": 1}[w]
        else:
            continue
        out[w] = format_date(day + dt.timedelta(days=shift))
    return out


_MONTHS = (r"(?:January|February|March|April|May|June|July|August|September|October|November|December"
           r"|(?:Jan|Feb|Mar|Apr|Aug|Sept?|Oct|Nov|Dec)\.?)")
# A weekday written with its date: the date says which day ("on Friday, March 28", "Friday 28
# March", "by Friday, Oct. 3"): the weekday leaves, "on" stays or comes where no other
# preposition leads to it.
_DAY_WITH_DATE = re.compile(r"(?<!Good )(?<!Black )(?<!Cyber )(?<!Super )(?<!Holy )(?<!Easter )"
                            r"\b(?P<on>on\s+)?(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)"
                            r"(?:\s+(?:morning|afternoon|evening|night))?,?\s+"
                            r"(?P<date>" + _MONTHS + r"\s+\d{1,2}(?:st|nd|rd|th)?(?:,\s+\d{4})?"
                            r"|\d{1,2}(?:st|nd|rd|th)?\s+" + _MONTHS + r"(?:\s+\d{4})?)\b")


def _day_with_date(m: re.Match[str]) -> str:
    """The date alone, with "on" where it had one or no preposition leads to it ("by Friday,
    April 18": "by April 18"; "Friday, April 18": "on April 18")."""
    before = re.search(r"(\w+)\s*$", m.string[:m.start()])
    if m.group("on") or before is None or before.group(1).lower() not in _DATE_PREPS:
        return f"on {m.group('date')}"
    return m.group("date")


_DATE_PREPS = frozenset({"by", "until", "till", "through", "from", "between", "before", "after", "since", "and",
                         "to", "for", "of", "during", "as", "on"})
_WEEKDAY = r"(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)"
_DAY_RANGE = re.compile(r"\b(?:(?:from\s+|on\s+|between\s+)?" + _WEEKDAY
                        + r"\s*(?:\s(?:to|through|until|till|and|or)\s|[-\u2013])\s*|to\s+)"
                        + _WEEKDAY + r"(?:\s+(?:morning|afternoon|evening|night))?\b(?!['\u2019]s)"
                        r"(?!\s+(?:morning|afternoon|evening|night)['\u2019]s)", re.IGNORECASE)


def _clean(text: str, date_s: str, days: dict[str, str] | None = None) -> str | None:
    """Relative days become the date they name (``days``, from :func:`_day_dates`) or leave
    with their phrase, the question then dated by the news day; None when the stem is unusable."""
    def day_phrase(m: re.Match[str]) -> str:
        if _NAMED_DAY.search(text[:m.start("day")]) or text[m.end():m.end() + 2] in ("'s", "\u2019s"):
            return m.group(0)  # "Cyber Monday", "Friday's close": no relative day to drop alone
        bare = _BARE_DAY.fullmatch(m.group(0).strip())
        if days and bare is not None and bare.group("name").lower() in days:
            return f"on {days[bare.group('name').lower()]},"  # "on April 9, 2025, in retaliation"
        return ""

    year = date_s[-4:]
    text = _THIS_YEAR.sub(lambda m: f"{m['prep']} {year}" if m["prep"] else f"{m['when'] or ''} in {year}".lstrip(),
                          text)  # "in the first three months of this year": "of 2025"
    text = _DAY_WITH_DATE.sub(_day_with_date, text)  # "on Friday, March 28": "on March 28"
    text = _DAY_RANGE.sub("", text)  # "Sunday to Tuesday", "to Tuesday": no one day, no date to give
    text = _DAY_PHRASE.sub(day_phrase, text)
    text = re.sub(r"\s+(?:and|or)\s*(?=[,;:]|$)", "", text)  # "fell 5% [on Wednesday] and [Thursday]"
    text = re.sub(r"\s+([,.;:!?])", r"\1", re.sub(r"\s{2,}", " ", text)).strip(" ,;:-")
    text = re.sub(r",(?=[^\W\d_])", ", ", text)  # "president,Xi Jinping" as extraction left it
    text = re.sub(r",(?:\s*,)+", ",", text)  # "Paul Marchand,, and": an aside cut between two commas
    if not text or '"' in text or "\u201c" in text or "(" in text or ")" in text:
        return None
    return text


# Present passives that announce an event ("is set to", "are scheduled to").
SCHEDULED = frozenset({"set", "schedule", "slate", "due", "poise", "expect", "require", "force", "ask", "urge"})


# Words that make a clause a tally or a history rather than the day's event.
TALLY = re.compile(r"\b(?:\w+ of times|(?:many|several|dozens of|hundreds of|thousands of) times|repeatedly|"
                   r"since taking office|since (?:he|she|they) took office|over the (?:years|decades)|"
                   r"previous|formerly|repeated)\b", re.IGNORECASE)


def _cumulative(verb: Any) -> bool:
    """A clause that sums up the past ("has struck ... dozens of times", "has pursued ... since
    taking office") or tells of earlier events ("previous meetings ... had taken place")."""
    words = _text(sorted(verb.subtree, key=lambda t: t.i))
    m = TALLY.search(words)
    if m is None:
        return False
    if m.group(0).lower() in ("previous", "formerly"):
        return True
    perfect = any(a.lower_ in ("has", "have", "had", "'s", "'ve") for a in auxes_of(verb, "aux"))
    return perfect or "times" not in m.group(0).lower()


def _running_total(verb: Any, sent: Any) -> bool:
    """A count in the present perfect with no date in the sentence ("has put 18 companies on
    trade lists", "X and has sent ..." sharing the first verb's "has"): a total so far, which the
    news may have reached over several rounds; the question could not say which."""
    own = auxes_of(verb, "aux")
    if not own and verb.dep_ == "conj":  # the first verb's "has", or "has" itself as the parse made it
        own = auxes_of(verb.head, "aux") + ([verb.head] if verb.head.lemma_ == "have" else [])
    if not any(a.lower_ in ("has", "have", "'s", "'ve") for a in own):
        return False
    return not any(e.label_ == "DATE" for e in sent.ents)


def _locates(ent: Any) -> bool:
    """A place named only to say where another named place is ("Marin County in California",
    "Springfield, Illinois")."""
    r = ent.root
    if r.dep_ == "pobj" and r.head.lower_ in ("in", "of") and r.head.head.pos_ in ("VERB", "AUX"):
        # "left Marin County in California": the parse hangs "in" on the verb
        return any(c.dep_ in ("dobj", "obj") and c.ent_type_ in ("GPE", "LOC", "FAC") for c in r.head.head.children)
    if r.dep_ == "pobj" and r.head.lower_ in ("in", "of"):
        host = r.head.head
    elif r.dep_ in ("appos", "npadvmod"):
        host = r.head
    else:
        return False
    return host.i not in range(ent.start, ent.end) and host.ent_type_ in ("GPE", "LOC", "FAC")


def _lower_elsewhere(tok: Any) -> bool:
    """A word capitalised only because it opens the sentence: the article writes it in lower case
    inside sentences, and never capitalised there ("House prices ..." beside "house prices";
    not "Apple shares ...")."""
    inside = [t.text for t in tok.doc if t.lower_ == tok.lower_ and t.i != tok.i and not t.is_sent_start]
    return bool(inside) and all(w[:1].islower() for w in inside)


def _fronted(verb: Any, ent: Any) -> str | None:
    """The prepositional phrases before the verb that pin the fact down ("In Dagestan alone, 845
    cases have been opened"), to end the question with; None when one is too long to carry
    (the question would state a wider fact than the article)."""
    parts = []
    for c in verb.children:
        if c.dep_ != "prep" or c.i > verb.i or ent.root.i in {t.i for t in c.subtree}:
            continue
        phrase = sorted(_subtree_tokens(c), key=lambda t: t.i)
        if not _informative(phrase, set()) or _outlet_source(c):
            continue  # "In a statement,": no restriction; "According to CNBC,": who reported it
        if len(phrase) > 6 or _bracketed(verb.sent).intersection(t.i for t in phrase):
            return None
        text = _text(phrase)
        parts.append(text if phrase[0].pos_ == "PROPN" else text[0].lower() + text[1:])
    return " ".join(parts)


# A clause of contrast states its own fact ("The Dow closed up 4.9%, while the Nasdaq finished up
# 7.3%"); "if", "when", "until" and "because" clauses are conditions, times or reasons.
CONTRAST_MARKS = frozenset({"while", "whereas"})


def _finite(verb: Any) -> bool:
    """Whether the verb heads a finite clause ("signed", "has signed", "will sign"; not "to sign"),
    a main clause or one of contrast ("..., while China has raised tariffs to 125%")."""
    if verb.dep_ == "advcl" and not _contrast(verb):
        return False
    if verb.dep_ in ("xcomp", "acl", "relcl", "pcomp", "amod"):
        return False
    auxes = [c for c in verb.children if c.dep_ in ("aux", "auxpass")]
    if any(a.tag_ == "TO" or a.lower_ == "to" for a in auxes):
        return False
    return verb.tag_ in ("VBD", "VBZ", "VBP") or any(a.tag_ in ("MD", "VBD", "VBZ", "VBP") for a in auxes) \
        or _past_mistagged(verb)


def _contrast(verb: Any) -> bool:
    """Whether the verb heads a clause of contrast after a plain main clause ("The Dow closed up
    4.9% on the week, while the Nasdaq finished up 7.3%"): not before it, not beside a condition
    ("if ..."), a report or a forecast ("would", "could") in either clause."""
    head = verb.head
    modal = ("would", "could", "might", "may", "should")
    return verb.i > head.i and head.dep_ == "ROOT" and head.pos_ in ("VERB", "AUX") \
        and head.lemma_.lower() not in REPORTING \
        and any(c.dep_ == "mark" and c.lower_ in CONTRAST_MARKS and c.i < verb.i for c in verb.children) \
        and not any(c.dep_ == "aux" and c.lower_ in modal for v in (verb, head) for c in v.children) \
        and not any(c.dep_ == "advcl" and any(m.lower_ in ("if", "unless") for m in c.children) for c in head.children)


def _past_mistagged(verb: Any) -> bool:
    """A main verb the tagger took for a participle though it has its own subject and no
    auxiliary: a past tense ("Trump imposed 10% tariffs ..." tagged ``VBN``)."""
    return verb.dep_ == "ROOT" and verb.tag_ == "VBN" and verb.lower_.endswith("ed") \
        and any(c.dep_ == "nsubj" for c in verb.children) and any(c.dep_ == "dobj" for c in verb.children) \
        and not any(c.dep_ in ("aux", "auxpass", "agent") for c in verb.children)


def auxes_of(verb: Any, dep: str) -> list[Any]:
    """The verb's auxiliaries of one dependency label (``aux``, ``auxpass``)."""
    return [c for c in verb.children if c.dep_ == dep]


def _informative(tokens: list[Any], ent_ids: set[int]) -> bool:
    """Whether a phrase pins the event down: it names something or gives a number."""
    return any(t.i not in ent_ids and (t.pos_ == "PROPN" or t.ent_type_ in INFORMATIVE or t.like_num) for t in tokens)


INFORMATIVE = NAME_TYPES | {"MONEY", "PERCENT", "QUANTITY", "CARDINAL", "LAW"}
WH_INSIDE = frozenset({"what", "which", "who", "whom", "whose", "where", "when", "why", "how"})


# Prepositions of a phrase inside the object that can be fronted with the answer ("On which
# country did X impose tariffs?"); not "of" ("the leader of Hamas" is no fronted phrase).
OBJECT_PREPS = frozenset({"on", "against", "with", "from", "to", "into", "in", "for", "over"})
ACTOR_PREPS = frozenset({"on", "against", "with", "over"})  # "sanctions on", "talks with": an actor
# Verbs that announce an action of the speaker's own ("said it would put ... on hold"), unlike a
# judgment ("said it would be a disaster", "would help").
JUDGING_VERBS = frozenset({"be", "have", "like", "love", "prefer", "need", "mean", "make", "hurt", "help", "happen",
                           "seem", "look", "get", "cost", "lead", "cause", "benefit", "damage", "harm", "work",
                           "comment", "speculate", "respond", "continue", "monitor", "consider", "review", "try"})


def _pronoun(tok: Any) -> bool:
    """A pronoun by its word, not "US" (the country in "Former US Vice President") nor "IT"."""
    return tok.lower_ in PRONOUNS and tok.text not in ("US", "IT")


def _titled(subj_toks: list[Any], ent: Any, kind: str) -> bool:
    """A person named with a title or role before the name ("Federal Judge Jamee Comans",
    "Secretary of State Marco Rubio"): asked "Who ...", the title left out."""
    extra = [t for t in subj_toks if not ent.start <= t.i < ent.end and t.lower_ != "the"]
    return kind == "person" and len(extra) <= 5 and all(t.i < ent.start for t in extra) \
        and not any(t.pos_ in ("VERB", "AUX", "PUNCT", "PRON") or _pronoun(t) for t in extra)


def _descriptions(ent: Any) -> list[Any]:
    """The nouns that describe the answer after its name ("Ada Lind, the minister for ports")."""
    return [c for c in ent.root.children if c.dep_ == "appos" and c.i >= ent.end and c.pos_ == "NOUN"]


def _role(ent: Any, subj_toks: list[Any]) -> tuple[str, tuple[str, ...]] | None:
    """The role a person answer's own title or description gives ("Lakeland state Rep. Tom Brant":
    "Lakeland state representative"; "Ada Lind, the Lakeland lawmaker,": "Lakeland lawmaker"), for a
    question that says whom it asks about; None when there is none, it is an office one person
    holds (a portfolio, a phrase after the noun: "the minister for ports"), it names someone or
    something's ("the Kremlin's envoy"), or its words are not plainly a role: every word is the
    role noun, a place, nationality or organisation as written, or a lower-case word. With the
    role, its title words as lemmas: the lower-case nouns compounded with it and the noun, last
    (no place, nationality, organisation or adjective: "state", "representative" of "Lakeland state
    Rep."; "lawmaker" of "the veteran Lakeland lawmaker")."""
    title = [t for t in subj_toks if t.i < ent.start and t.lower_ != "the"]
    appos = _descriptions(ent)
    if title:
        words = title
    elif len(appos) == 1 and any(c.dep_ == "det" and c.lower_ in ("the", "a", "an") for c in appos[0].children):
        words = [t for t in appos[0].subtree if not (t.dep_ == "det" and t.head.i == appos[0].i)]
    else:
        return None
    low = [lx.ABBREVIATED.get(t.lower_, t.lower_) for t in words]
    if not 1 <= len(words) <= 5 or low[-1] not in lx.ROLE_NOUNS or set(low) & lx.ONE_HOLDER:
        return None  # the role noun ends the phrase: no "for ...", "of ...", "in charge"
    out, titles = [], []
    for t, w in zip(words, low):
        if t.ent_type_ == "PERSON" or t.tag_ in ("POS", "JJS", "RBS", "HYPH") or t.dep_ == "case" \
                or t.pos_ in ("PRON", "VERB", "AUX", "PUNCT", "NUM") or _pronoun(t):
            return None  # "the Kremlin's envoy", "pro-democracy", "most senior"
        if t is words[-1]:
            out.append(t.text if t.text.isupper() else w)  # "MP" stays, "Rep." is "representative"
            titles.append(w if t.lower_ in lx.ABBREVIATED else t.lemma_.lower())
        elif t.ent_type_ in ("GPE", "NORP", "ORG", "LOC") or t.text.islower():
            out.append(t.text)
            if t.text.islower() and not t.ent_type_ and t.dep_ == "compound":
                titles.append(t.lemma_.lower())  # "state", "appeals court"; not "veteran", "Democratic"
        else:
            return None  # "U.S. District Judge", a capitalised word of a title: which case in a question?
    return " ".join(out), tuple(titles)


def _bare_level(tok: Any) -> bool:
    """"to 50.8": a "to" whose object is a number with no unit (no currency, percentage, scale
    word or noun), the level of an index the question does not name."""
    if tok.lower_ != "to" or tok.dep_ != "prep":
        return False
    obj = next((c for c in tok.children if c.dep_ == "pobj"), None)
    return obj is not None and obj.tag_ == "CD" and not any(
        t.tag_ == "$" or t.text in ("%", "percent") or t.lower_ in ("million", "billion", "trillion") or t.pos_ == "NOUN"
        for t in obj.subtree)


def _pluperfect(verb: Any) -> bool:
    """"had aimed", "had sent": an event before the reported one, background more often than news."""
    return any(a.lower_ == "had" for a in auxes_of(verb, "aux"))


# Verbs that make their clause public news ("announced that ...", "confirmed that ...").
ANNOUNCE_VERBS = frozenset({"announce", "confirm", "reveal", "disclose"})


def _announcement(sent: Any, say: Any, ent: Any, kind: str) -> str | None:
    """"Which organisation said it would put plans ... on hold": the answer, subject of "said",
    announces what it will do itself (a future or a plan, "it", "he" or "she" for the answer),
    which is news; any other "X said ..." asks who holds an opinion and gives None. After
    "announced", "confirmed" the clause may have a named subject of its own ("Who announced
    that Exxon would close its refinery in Texas?")."""
    if kind not in ("person", "org", "place", "region") or not _finite(say) or say.i in _quoted(sent):
        return None
    subj = next((c for c in say.children if c.dep_ == "nsubj"), None)
    comp = next((c for c in say.children if c.dep_ == "ccomp" and c.i > say.i), None)
    if subj is None or comp is None or subj.i != ent.root.i or comp.i in _quoted(sent):
        return None
    subj_toks = _subtree_tokens(subj)
    if len(subj_toks) > len(ent) + 1 and not _titled(subj_toks, ent, kind) \
            or _bracketed(sent).intersection(t.i for t in subj_toks):
        return None
    announce = say.lemma_.lower() in ANNOUNCE_VERBS
    pron = next((c for c in comp.children if c.dep_ in ("nsubj", "nsubjpass")), None)
    if pron is None or any(t.dep_ != "mark" for t in sent.doc[say.i + 1:pron.left_edge.i]):
        return None  # "said [that] it ...": nothing else between
    if pron.lower_ in (("he", "she") if kind == "person" else ("it",)):
        who = [pron]
    else:
        who = sorted(_subtree_tokens(pron), key=lambda t: t.i)
        if not announce or pron.lower_ in PRONOUNS or not _named(who) or not _self_contained(who) or len(who) > 8:
            return None
    auxes = [c for c in comp.children if c.dep_ in ("aux", "auxpass", "neg") and pron.i < c.i < comp.i]
    future = any(a.lower_ in ("will", "would", "'ll", "wo") for a in auxes)
    plan = not auxes and comp.lemma_.lower() in ("plan", "intend") and comp.tag_ in ("VBZ", "VBP", "VBD")
    if not (future or plan or announce and (auxes or comp.tag_ in ("VBD", "VBZ", "VBP"))) \
            or comp.lemma_.lower() in JUDGING_VERBS or comp.lemma_.lower() in REPORTING:
        return None
    if any(c.dep_ in ("ccomp", "csubj") for c in comp.children) \
            or any(c.dep_ == "advcl" and any(m.lower_ in ("if", "unless") for m in c.children) for c in comp.children):
        return None  # "would retaliate [if ...]": the condition would be lost
    rest = _clause(comp, set())
    if rest is None or not _self_contained(rest) or not _informative(rest, set(range(ent.start, ent.end))) \
            or any(c.dep_ == "relcl" and c.i not in {x.i for x in rest} for t in rest for c in t.children):
        return None  # "reduce the amount of US imports [that make it to theaters]": which imports?
    said = [c for c in say.children if c.dep_ in ("aux", "neg") and c.i < say.i] + [say]
    that = "that " if len(who) > 1 else ""
    vp = f"{_text(sorted(said, key=lambda t: t.i))} {that}{_text(who + auxes + [comp])}"
    return f"{wh_word(kind, ent.text)} {vp} {_text(rest)}"


# Verbs that report a figure as someone's ("Ada Lind said ...", "Orbis announced ..."): the question
# keeps the speaker ("did Ada Lind say ..."); the rest of :data:`REPORTING` (claims, opinions) not.
REPORTER_VERBS = frozenset({"say", "announce", "confirm"})  # not "report": the verb of outlets and data firms
REPORTED_KINDS = frozenset({"count", "money", "percent", "quantity"})  # not dates: "On what date did X say ..." asks when X said it


@dataclass(frozen=True)
class _Reported:
    speaker: str  #: the named speaker as the question writes it ("Defence Minister Ada Lind")
    forms: tuple[str, str]  #: (auxiliary to front, reporting verb after the speaker): ("did", "say")
    own_pronoun: bool  #: the reported clause's subject is the speaker's pronoun ("Orbis said it ...")


def _reporter(verb: Any, sent: Any, kind: str, subj: Any) -> _Reported | None:
    """The named speaker of the reported clause ``verb`` heads, when the clause gives a figure
    ("Ada Lind said Rivertown had shipped 4,000 turbines"): a question on it asks
    what the speaker said, not the claim as a fact. None for another verb, a speaker without a
    name ("officials said", "he said"), a negated or quoted report, or a report inside another
    clause."""
    head = verb.head
    if kind not in REPORTED_KINDS or verb.dep_ != "ccomp" or head.i == verb.i \
            or base_form(head) not in REPORTER_VERBS or head.dep_ not in ("ROOT", "conj") or not _finite(head) \
            or head.i in _quoted(sent) or any(c.dep_ == "neg" for c in head.children) \
            or any(c.dep_ in ("dobj", "dative") for c in head.children):
        return None
    speaker = next((c for c in head.children if c.dep_ == "nsubj"), None)
    if speaker is None:
        return None
    toks = sorted(_subtree_tokens(speaker), key=lambda t: t.i)
    if not _named(toks) or not _self_contained(toks) or len(toks) > 8 or _bracketed(sent).intersection(t.i for t in toks):
        return None
    auxes = [c for c in head.children if c.dep_ == "aux" and c.i < head.i]
    if auxes:
        forms = (auxes[0].lower_, " ".join([a.text for a in auxes[1:]] + [head.text]))
    elif head.tag_ == "VBD" or _past_mistagged(head):
        forms = ("did", base_form(head))
    elif head.tag_ == "VBZ":
        forms = ("does", base_form(head))
    else:
        return None
    label = speaker.ent_type_
    own = subj.lower_ == "it" and label in ("ORG", "GPE") or subj.lower_ in ("he", "she") and label == "PERSON"
    return _Reported(_inside(toks, sent), forms, own)


def _inside(tokens: list[Any], sent: Any) -> str:
    """A phrase as written inside a question: a common word that opens the sentence in lower case."""
    s, first = _text(tokens), tokens[0]
    if s[:1].isupper() and (first.pos_ != "PROPN" and first.ent_type_ in ("", "CARDINAL") or first.i == sent.start
                            and (_lower_elsewhere(first) or first.lower_ == "the")):
        s = s[0].lower() + s[1:]  # "Previous meetings ..." inside a question
    return s


def _where_subject(sent: Any, verb: Any, subj: Any, subj_toks: list[Any], ent: Any, kind: str) -> str | None:
    """"In which US state did a prison firing squad execute Mikal Mahdi?": the answer is the
    place in an "in" phrase of the subject; the rest of the clause must name something."""
    pp = ent.root.head
    if kind not in ("place", "region") or ent.root.dep_ != "pobj" or pp.lower_ != "in" or pp.head.i != subj.i \
            or _pluperfect(verb):
        return None
    who = [t for t in subj_toks if t.i not in {x.i for x in pp.subtree}]
    if not who or len(who) > 8 or not _self_contained(who) or not any(t.pos_ in NOMINAL for t in who) \
            or any(t.dep_ == "det" and t.lower_ in ("the", "this", "that", "these", "those") for t in who) \
            and not _named(who):
        return None  # "the police [in London]": which police?
    forms, rest = _verb_forms(verb), _clause(verb, set())
    if forms is None or rest is None or not _self_contained(rest) or not _informative(rest, set()) \
            or any(c.ent_type_ in ("PERCENT", "MONEY", "CARDINAL", "QUANTITY") and c.i not in {t.i for t in rest}
                   for c in verb.children):
        return None  # "have house prices jumped [39.1%]": the clause without its figure
    wh = wh_word(kind, ent.text).replace("Which", "which")
    return f"In {wh} {forms[0]} {_inside(who, sent)} {forms[1]} {_text(rest)}"


# Verbs of a measure its announcer takes itself (a tariff raised, a ban imposed, a rate cut).
MEASURE_VERBS = CHANGE_VERBS | LEVEL_VERBS | frozenset({
    "raise", "impose", "set", "lift", "cut", "reduce", "lower", "increase", "extend", "suspend", "delay", "approve",
    "introduce", "scrap", "halt", "pause", "cap", "freeze", "double", "triple", "expand"})


def _announced_agentless(verb: Any) -> bool:
    """Whether a passive verb without its agent ("tariffs will be raised") is what a named
    actor said or announced: the actor is the announcer, whom a stem made of the clause leaves
    out ("To what percentage will tariffs on US goods be raised?": by whom?)."""
    if verb.lemma_.lower() not in MEASURE_VERBS or any(c.dep_ == "agent" for c in verb.children):
        return False  # "40 people were killed", as the ministry said: the ministry did not kill them
    head = verb
    while head.dep_ == "conj" and head.head.i != head.i:
        head = head.head
    say = head.head
    if head.dep_ != "ccomp" or say.lemma_.lower() not in REPORTING | ANNOUNCE_VERBS:
        return False
    # The announcer is named anywhere in its phrase ("China's tariff commission", "the Tariff Board of Veldoria").
    return any(c.dep_ == "nsubj" and any(t.ent_type_ in ("PERSON", "ORG", "GPE", "NORP") for t in c.subtree)
               for c in say.children)


def make_stem(sent: Any, ent: Any, kind: str, date_s: str) -> Stem | None:
    """A question asking for ``ent`` (an entity of ``sent``), or None when no good one exists."""
    verb = _clause_verb(ent)
    inner = None
    if verb is not None and verb.dep_ == "xcomp" and verb.head.pos_ in ("VERB", "AUX") \
            and any(c.lower_ == "to" for c in verb.children if c.dep_ == "aux"):
        inner, verb = verb, verb.head  # "X agreed to buy Y": asked through "agreed to buy"
    if verb is not None and verb.lemma_.lower() == "say" and inner is None:
        body = _announcement(sent, verb, ent, kind)
        return None if body is None else _finish(body, verb, ent, kind, "subject", date_s)
    if verb is None or verb.lemma_.lower() in REPORTING or not _finite(verb):
        return None
    if verb.tag_ in ("VBZ", "VBP") and not auxes_of(verb, "aux") and not auxes_of(verb, "auxpass") \
            and verb.lemma_.lower() not in INTENT_VERBS:
        return None  # "China produces 80% of ...", "X joins Y to discuss ...": habits and promos, not events
    passive = auxes_of(verb, "auxpass")
    if passive and not auxes_of(verb, "aux") and all(a.lower_ in ("is", "are") for a in passive) \
            and verb.lemma_.lower() not in INTENT_VERBS | SCHEDULED:
        return None  # "80% of iPhones are made in China": a standing state, not the day's event
    if passive and _announced_agentless(verb):
        return None  # "[China's tariff commission said] tariffs on US goods will be raised to 125%": by whom?
    if verb.i in _quoted(sent) or verb.dep_ == "conj" and verb.head.i in _quoted(sent):
        return None  # 'X was "committing a grave crime ..."': a quoted charge, not a reported fact
    if any(t.lower_ in ("then", "back") and t.dep_ == "advmod" and (t.i < verb.i or any(
            x.ent_type_ == "DATE" for x in t.subtree)) for t in verb.children) \
            or any(c.dep_ == "npadvmod" and any(t.lower_ in ("same", "previous", "that") for t in c.subtree)
                   for c in verb.children):
        return None  # "Then, 22 million visitors ...", "made a visit the same year": an earlier sentence's time
    if _cumulative(verb):
        return None  # "has struck Iraq dozens of times", "previous meetings": a tally or history
    if kind == "count" and _running_total(verb, sent):
        return None  # "Beijing has ... put 18 US companies on trade lists": so far, over several rounds
    if kind in ("place", "region") and _locates(ent):
        return None  # "Marin County in [California]": where a named place is is no news
    if verb.lemma_.lower() in ("do", "have", "get") and not any(c.dep_ in ("dobj", "obj") for c in verb.children):
        return None
    if verb.lemma_.lower() in STAT_VERBS and not any(e.label_ == "DATE" for e in sent.ents):
        return None  # "exports to Brazil totalled $81.2bn": a standing total, of which year?
    spent_on = _spent_on(ent) if kind == "money" else None
    after = [c for c in ent.root.children if c.dep_ == "prep" and c.i >= ent.end]
    if kind in ("money", "quantity") and after and spent_on is None and not (
            kind == "money" and ent.root.dep_ == "pobj" and ent.root.head.lower_ == "for"
            and all(c.lower_ in ("from", "to") for c in after)):
        # "qualify for $150,000 [in cloud credits]": the sum loses what it is of. A price's
        # seller or buyer the parse hung on it ("buy Versace for $1.38bn [from Capri]") may go.
        return None
    if any(c.dep_ == "conj" and c.pos_ in NOMINAL for c in verb.children):
        return None  # "clinched $42bn from the IMF (IMF) and [two other lenders]": a noun the parse hung on the verb
    if any(c.dep_ == "ccomp" and c.i > verb.i for c in verb.children):
        if verb.lemma_.lower() in ANNOUNCE_VERBS and inner is None:  # "X announced that ..."
            body = _announcement(sent, verb, ent, kind)
            return None if body is None else _finish(body, verb, ent, kind, "subject", date_s)
        return None  # "Witkoff had emphasised to Iran that ...": the clause it needs is left out
    allowance = 0
    asked_role, asked_titles = "", ()  # the role a "Which ROLE ..." question names, and its title words
    keep_purpose = kind in ("person", "org", "place", "region", "event", "date")
    ent_ids = set(range(ent.start, ent.end))
    subj = next((c for c in verb.children if c.dep_ in ("nsubj", "nsubjpass")), None)
    if subj is None and verb.dep_ == "conj" and verb.head.pos_ in ("VERB", "AUX"):
        # "X announced A and cut B": the second verb shares the first one's subject.
        subj = next((c for c in verb.head.children if c.dep_ in ("nsubj", "nsubjpass")), None)
    if subj is None:
        return None
    subj_toks = _subtree_tokens(subj)
    subj_toks.sort(key=lambda t: t.i)
    if _bracketed(sent).intersection([t.i for t in subj_toks] + [ent.root.i]):
        return None
    role = ent.root.dep_
    in_subject = ent.root.i in {t.i for t in subj_toks}
    described = [t for t in subj_toks if t.i not in {x.i for x in ent.root.subtree}]
    if role == "appos" and ent.root.head.i == subj.i and subj.pos_ == "NOUN" and kind in ("person", "org") \
            and ent.end - ent.start == len(list(ent.root.subtree)) and subj.i < ent.start \
            and _named(described) and _self_contained(described):  # not "Her lawyer, X," nor "The victim's mother, X,"
        # "Brazil's foreign minister, Mauro Vieira, has flown ...": the name says who the subject
        # is; asked "Who has flown ...", the description left out.
        subj_toks, in_subject, subj = [t for t in ent], True, ent.root

    if in_subject and (ent.root.i == subj.i or (kind == "count" and ent.root.head.i == subj.i)):
        rest = _clause(verb, set(), keep_purpose)
        # No "its" of the answer: "Which organisation is hosting extensions in its Chrome Web
        # Store?" names the answer's product.
        if rest is None or not _self_contained(rest) or not _informative(rest, ent_ids):
            return None
        auxes = [c for c in verb.children if c.dep_ in ("aux", "auxpass", "neg") and c.i < verb.i]
        vp = _text(sorted(auxes + [verb], key=lambda t: t.i))
        if kind == "count":
            noun = ent.root.head
            mods = [t for t in subj_toks if t.i not in ent_ids and t.dep_ in ("amod", "compound") and t.head.i == noun.i
                    and t.lower_ not in EVALUATIVE]
            if _relative_count(noun, ent_ids):
                return None  # "10 more alleged members of MS-13": "How many more", than what? (a reviewer)
            for c in noun.children:
                if c.dep_ == "prep" and c.i > noun.i:
                    phrase = _subtree_tokens(c)
                    if len(phrase) > 7:
                        return None  # too much to carry into "How many ...": a wrong count otherwise
                    mods += phrase
            head = _text(sorted(_whole_words(mods) + [noun], key=lambda t: t.i))
            body = f"How many {head} {vp} {_text(rest)}"
            form = "count"
        elif kind in ("person", "org", "place", "region", "event"):
            if verb.lemma_.lower() in ("be", "have", "seem", "appear", "feel", "look", "sound") \
                    and not auxes_of(verb, "auxpass"):
                return None  # "Who is ...", "Which organisation has ...": background, not news
            if ent.root.i != subj.i or len(subj_toks) > len(ent) + 1 and not (_titled(subj_toks, ent, kind)
                                                                              and not _pluperfect(verb)):
                return None  # "Apple's chief" is not "Apple"
            if not auxes and verb.tag_ == "VBP":
                return None  # "Who haunt ...": the plural verb of a plural subject
            wh = wh_word(kind, ent.text)
            if kind == "person" and (found := _role(ent, subj_toks)) is not None:
                asked_role, asked_titles = found
                wh = f"Which {asked_role}"  # "Which Lakeland state representative was indicted ...": who, said
                allowance = len(asked_role.split())  # the role is no clause material: the stem may be as much longer
            elif kind == "person" and _descriptions(ent):
                # "Ada Lind, the minister for ports, is visiting Lisbon": the article says who she is
                # by a description the question cannot carry; "Who is visiting Lisbon?" is anyone
                # (two reviews rejected such a question).
                return None
            if _bare_meeting(verb, rest):
                return None  # "Who met with Ada Lind on April 4, 2025?"
            if vp.split()[0].lower() in ("are", "were", "have", "do"):
                vp = {"are": "is", "were": "was", "have": "has", "do": "does"}[vp.split()[0].lower()] + vp[len(vp.split()[0]):]
            body = f"{wh} {vp} {_text(rest)}"
            form = "subject"
        else:
            return None
    else:
        if in_subject:  # "A firing squad in South Carolina executed ...": asked "In which state did ..."
            body = _where_subject(sent, verb, subj, subj_toks, ent, kind)
            return None if body is None else _finish(body, verb, ent, kind, "place", date_s)
        # "Ada Lind said Rivertown had shipped 4,000 turbines ...": asked "How many turbines did
        # Ada Lind say Rivertown had shipped ...", the claim with its speaker.
        reported = _reporter(verb, sent, kind, subj) if inner is None else None
        own = reported is not None and reported.own_pronoun  # "Orbis said [it] is laying off ..."
        unnamed = not _named(subj_toks) and not own
        if unnamed and not _measured(subj_toks, verb, kind) or not (own or _self_contained(subj_toks)) \
                or len(subj_toks) > (12 if unnamed else 8):
            return None
        if sum(c.dep_ in ("dobj", "obj") for c in verb.children) > 1:
            return None  # two objects: a misparse ("signed [quarterback] [Joe Flacco]"), which would leave a title behind
        if reported is not None and any(c.dep_ == "neg" for c in verb.children):
            return None  # "said Orbis had not paid ...": the reported form keeps no negation
        forms = _verb_forms(verb) if reported is None else reported.forms
        if forms is None:
            return None
        aux, vform = forms
        # The phrase that holds the answer: the object, or a prepositional phrase.
        holder = ent.root
        while holder.head.i != verb.i:
            if holder.head.i == holder.i:
                return None
            holder = holder.head
        if holder.i > _coordination(verb):
            return None  # the answer in a second conjunct the question would leave out
        pp = ent.root.head  # "imposed tariffs [on China]": the answer in a phrase of the object
        nested = role == "pobj" and pp.lower_ in OBJECT_PREPS and pp.head.dep_ in ("dobj", "obj") and pp.i > pp.head.i
        cut = {t.i for t in pp.subtree} if nested else set()
        rest = _clause(verb, set() if nested and pp.head.i == holder.i else {holder.i}, keep_purpose, subj)
        rest = None if rest is None else [t for t in rest if t.i not in cut]
        if inner is not None and holder.i == inner.i:
            # The answer sits in the infinitive: "did X agree to buy <answer> ...".
            holder = ent.root
            while holder.head.i != inner.i:
                if holder.head.i == holder.i:
                    return None
                holder = holder.head
            inside = _clause(inner, set() if nested and pp.head.i == holder.i else {holder.i}, keep_purpose, subj)
            inside = None if inside is None else [t for t in inside if t.i not in cut]
            if rest is None or inside is None:
                return None
            # "did X call on the US to supply <answer> with ...": the outer verb's own phrases first.
            outer = [t for t in rest if t.i != inner.i and t.i not in {x.i for x in inner.subtree}]
            rest = outer + inside
            if not _self_contained(rest, subj):
                return None
            tail = " ".join(x for x in (_text(outer), "to", inner.text, _text(inside)) if x)
        elif rest is None or not _self_contained(rest, subj):
            return None
        else:
            tail = _text(rest)
        s = _inside(subj_toks, sent)
        if reported is not None:
            s = f"{reported.speaker} {vform} {s}"
            vform = _text(sorted([c for c in verb.children if c.dep_ in ("aux", "auxpass") and c.i < verb.i] + [verb],
                                 key=lambda t: t.i))
        if kind == "percent" and holder.i == ent.root.i and holder.dep_ in ("dobj", "npadvmod", "obj") \
                and base_form(verb) in CHANGE_VERBS:
            if any(_bare_level(t) for t in rest):
                return None  # "By what percentage has sentiment dropped to 50.8?": a level of what? (both reviewers)
            body = f"By what percentage {aux} {s} {vform} {tail}"
            form = "amount"
        elif kind == "percent" and holder.dep_ == "advmod" and holder.lower_ in DIRECTION_WORDS \
                and ent.root.head.i == holder.i and base_form(verb) in CLOSING_VERBS and tail:
            # "The Dow closed up 4.9% on the week": "did the Dow close up on the week" (not "did
            # the Nasdaq finish up": over which day or week?).
            body = f"By what percentage {aux} {s} {vform} {holder.lower_} {tail}"
            form = "amount"
        elif kind in ("percent", "money") and holder.dep_ in ("dobj", "obj") and _sizes(ent, holder) \
                and not _unnamed_owner(sent) and not _loses_name(subj) \
                and (size := _size_question(holder, ent, kind)) is not None \
                and (tail or len(size.split()) > 4 and not _of_size(ent, holder)) \
                and not _pluperfect(verb):  # "How high a tariff did Canada impose": on what?
            # "imposed a 10% tariff on all UK imports": "How high a tariff on all UK imports did ... impose".
            body = f"{size} {aux} {s} {vform} {tail}"
            form = "amount"
        elif kind == "percent" and inner is None and holder.dep_ in ("dobj", "obj") and _sizes(ent, holder) \
                and not _unnamed_owner(sent) and not _loses_name(subj) \
                and (rate := _rate_question(holder, ent)) is not None and not _pluperfect(verb) \
                and (rate[1] or rate[2] or _levied_on([t for t in rest if t.head.i == verb.i or t.head.head.i == verb.i])) \
                and not any(e.label_ == ent.label_ and (e.end <= ent.start or e.start >= ent.end) for e in sent.ents):
            # "imposed 40% tariffs on Rivertown cars", "imposed its tariffs of 30% on Lakeport grain":
            # "What tariff rate did ... impose on Rivertown cars". Not beside another percentage
            # ("tariffs of 30% ... and again to 60% on Friday": which one is asked?).
            what, after, _ = rate
            body = " ".join(x for x in (what, aux, s, vform, after, tail) if x)
            form = "amount"
        elif kind != "date" and holder.dep_ in ("dobj", "obj") and (holder.i == ent.root.i or (kind == "count" and ent.root.head.i == holder.i)):
            if kind == "count":
                noun = holder
                if _relative_count(noun, ent_ids):
                    return None  # "flew 10 more alleged gang members": how many more than what?
                mods = [t for t in noun.children if t.dep_ in ("amod", "compound") and t.i not in ent_ids
                        and t.lower_ not in EVALUATIVE]
                for c in noun.children:
                    if c.dep_ == "prep" and c.i > noun.i and c.lower_ == "of":
                        phrase = _subtree_tokens(c)  # "100,000 rounds [of artillery ammunition]": what is counted
                        if len(phrase) > 4 or not _self_contained(phrase) or any(t.ent_type_ for t in phrase):
                            return None
                        mods += phrase
                    elif c.dep_ not in ("nummod", "amod", "compound", "det"):
                        return None
                head = _text(sorted(_whole_words(mods) + [noun], key=lambda t: t.i))
                body = f"How many {head} {aux} {s} {vform} {tail}"
                form = "count"
            elif kind == "money" and spent_on is not None:
                # "have announced €21bn in military support for Kyiv": "How much in military
                # support for Kyiv have ... announced" (what the sum is of, asked with it).
                body = f"How much {spent_on} {aux} {s} {vform} {tail}"
                form = "amount"
            elif kind in ("person", "org", "place", "region", "event", "money", "quantity"):
                if kind in ("person", "org") and _bare_meeting(verb, rest):
                    return None  # "Who did Tom Brant meet on April 4, 2025?"
                wh = "Whom" if kind == "person" else wh_word(kind, ent.text)
                if kind == "person":
                    wh = "Who"
                body = f"{wh} {aux} {s} {vform} {tail}"
                form = "object"
            else:
                return None
        elif holder.dep_ == "prep" and role == "pobj" and ent.root.head.i == holder.i:
            prep = holder.lower_
            if kind in ("place", "region") and prep in ("in", "at", "to", "from"):
                wh = wh_word(kind, ent.text).replace("Which", "which")
                body = f"{prep.capitalize()} {wh} {aux} {s} {vform} {tail}"
                form = "place"
            elif kind == "date" and prep in ("on", "in"):
                body = f"On what date {aux} {s} {vform} {tail}" if prep == "on" else f"When {aux} {s} {vform} {tail}"
                form = "date"
            elif kind == "money" and prep == "for":
                body = f"For how much {aux} {s} {vform} {tail}"
                form = "amount"
            elif kind == "percent" and prep == "by":
                body = f"By what percentage {aux} {s} {vform} {tail}"
                form = "amount"
            elif kind in ("percent", "money") and prep == "to" and base_form(verb) in CHANGE_VERBS | LEVEL_VERBS:
                # "raised total tariffs on China to 145%", "would slash NASA's funding to $3.9 billion":
                # the level a change reached.
                wh = "To what percentage" if kind == "percent" else "To how much"
                body = f"{wh} {aux} {s} {vform} {tail}"
                form = "amount"
            elif kind in ("person", "org") and prep in NAME_PREPS:
                if _bare_meeting(verb, rest):
                    return None  # "With whom did Newsom meet on April 14, 2025?": about what?
                wh = "whom" if kind == "person" else "which organisation"
                body = f"{prep.capitalize()} {wh} {aux} {s} {vform} {tail}"
                form = "agent" if prep == "by" else "prep"
            else:
                return None
        elif kind in ("percent", "money") and holder.dep_ == "prep" and holder.lower_ == "with" \
                and pp.dep_ == "pobj" and pp.head.i == holder.i and ent.end <= pp.i \
                and (size := _size_question(pp, ent, kind)) is not None and not _pluperfect(verb) \
                and (len(size.split()) > 4 or tail):
            # "China retaliated with a 125 percent tariff on US goods": "How high a tariff on US
            # goods did China retaliate with".
            body = f"{size} {aux} {s} {vform} with {tail}"
            form = "amount"
        elif nested and holder.i == pp.head.i and kind in ("place", "region", "org", "person"):
            if kind == "place" and pp.lower_ in ACTOR_PREPS and wh_word(kind, ent.text) != "Which country" \
                    or kind in ("org", "person") and pp.lower_ not in ACTOR_PREPS | {"from", "to"} or _pluperfect(verb):
                return None  # "a war with Beijing": a capital standing for its government; "a cross for X"
            obj = [t for t in pp.head.subtree if t.i not in cut]
            if any(c.dep_ == "det" and c.lower_ in ("the", "this", "that") for c in pp.head.children) \
                    and not _named(obj):
                return None  # "signed the deal [with Apple]": without its phrase the object points nowhere
            if kind in ("person", "org") and _bare_meeting(verb, rest):
                return None  # "With whom did Tom Brant hold talks on April 4, 2025?"
            wh = {"person": "whom", "org": "which organisation"}.get(kind) or wh_word(kind, ent.text).lower()
            body = f"{pp.lower_.capitalize()} {wh} {aux} {s} {vform} {tail}"
            form = "nested"
        elif kind == "date" and holder.i == ent.root.i and holder.dep_ in ("npadvmod", "dobj") \
                and re.search(r"(?<!\d)\d{1,2}(?!\d)", ent.text):
            # "are scheduled to begin May 12" (the parse makes the date an adverb or the object);
            # "May 19th" too: its options are written "May 26th" (distractors.format_like)
            body = f"On what date {aux} {s} {vform} {tail}"
            form = "date"
        else:
            return None
        if unnamed and (form != "amount" or not any(t.ent_type_ in NAME_TYPES for t in rest or [])):
            return None  # "By what percentage did net profit fall?": whose? A name must say it
    stem = _finish(body, verb, ent, kind, form, date_s, allowance)
    return replace(stem, role=asked_role, titles=asked_titles) if stem is not None and asked_role else stem


_TIME_LEFT = re.compile(r"\b(?:at|in|during) (?:a|the|that|this) (?:same )?(?:time|moment|point|period|stage)\b"
                        r"(?! (?:of|when|in which|that|before|after)\b)")
_NOW = re.compile(r"\bat (?:the moment|this point|this time|the same time as)\b")  # "now", or a named time


# Nouns of a place named earlier ("home prices in the region"): a measure of where?
PLACE_NOUNS = frozenset({"region", "area", "country", "city", "state", "province", "county", "sector", "industry",
                         "market", "nation", "capital", "town"})


def _measured(subj_toks: list[Any], verb: Any, kind: str) -> bool:
    """A subject without a name that still says what moved, for "By what percentage ..." and "To
    what percentage ..." questions: a measure of at least two words ("the average rate on the
    30-year fixed mortgage", "US consumer sentiment"), not "shares" or "sentiment" alone."""
    content = [t for t in subj_toks if t.pos_ in ("NOUN", "ADJ", "NUM", "PROPN") and (t.is_alpha or "-" in t.text)]
    return kind in ("percent", "money") and base_form(verb) in CHANGE_VERBS | LEVEL_VERBS | CLOSING_VERBS \
        and len(content) >= 2 and not any(t.lower_ in ("the", "this", "that") and (
            t.head.lower_ in GENERIC_HEADS | PLACE_NOUNS) or t.dep_ == "poss" and t.pos_ == "NOUN" for t in subj_toks) \
        and not any(t.lower_ in PLACE_NOUNS and t.head.lower_ in ("in", "across") for t in subj_toks if t.dep_ == "pobj")


# Nouns whose size a percentage or a sum modifying them gives ("imposed a 10% tariff on UK
# imports"): asked "How high a tariff on UK imports did ... impose?". A rate is high, a deal large.
HIGH_NOUNS = frozenset({"tariff", "tax", "levy", "duty", "surcharge", "fee", "rate"})
LARGE_NOUNS = frozenset({"deal", "contract", "package", "fine", "settlement", "investment", "loan", "grant",
                         "bailout", "budget", "acquisition", "takeover", "bid", "offer", "penalty", "payout",
                         "donation", "fund", "round", "bonus", "extension", "order", "sale", "purchase"})
# Nouns of a change or a part, which say nothing without what they are of ("a 20% cut [in the budget]").
CHANGE_NOUNS = frozenset({"stake", "cut", "increase", "rise", "hike", "drop", "fall", "decline", "reduction",
                          "boost", "jump", "gain", "loss", "share", "discount", "raise"})
SIZE_MARKS = frozenset({"%", "percent", "per", "cent", "$", "\u00a3", "\u20ac", "\u00a5"})  # $ £ € ¥
SCALE_WORDS = frozenset({"m", "bn", "b", "k", "mn", "tn", "million", "billion", "trillion", "thousand"})


# Organisations a sentence points back to without a name ("After the agency got $6 billion
# ..., the administration has proposed a science budget of $3.9 billion": whose budget?).
OWNER_HEADS = frozenset({"agency", "company", "firm", "group", "department", "organisation", "organization",
                         "carmaker", "automaker", "retailer", "bank", "lender", "startup", "chipmaker", "airline"})


# Nouns of time, place or share after "in": "$3bn in 2024", "$5m in total" say when or how, not what
# the sum is of.
NOT_SPENT_ON = frozenset({"year", "month", "week", "day", "quarter", "total", "all", "cash", "sum", "value",
                          "place", "area", "country", "state", "city", "region", "term", "time", "hour", "minute",
                          "second", "decade", "season", "period", "half", "trading", "session"})
# Verbs whose "in" phrase says where the money goes ("invested $3 billion in new factories"), not what it is.
INVEST_VERBS = frozenset({"invest", "spend", "put", "pour", "sink", "inject", "plough", "plow", "funnel", "pump"})


def _spent_on(ent: Any) -> str | None:
    """What a sum is of, given by one "in" phrase after it ("€21bn [in military support for Kyiv]",
    "$1 billion [in funding]"): the phrase, or None. The sum must be written as one ("a record
    €21bn" is no option), and the phrase a short self-contained one on a common noun, with no
    date or other number in it ("$3bn in 2024", "$5m in cash" are none)."""
    preps = [c for c in ent.root.children if c.dep_ == "prep" and c.i >= ent.end]
    if ent.root.dep_ not in ("dobj", "obj") or ent.root.head.lemma_.lower() in INVEST_VERBS or len(preps) != 1 or preps[0].lower_ != "in" or not re.match(r"[$£€¥₹]|\d", ent.text):
        return None
    noun = next((c for c in preps[0].children if c.dep_ == "pobj"), None)
    phrase = _subtree_tokens(preps[0])
    if noun is None or noun.pos_ != "NOUN" or noun.lemma_.lower() in NOT_SPENT_ON or len(phrase) > 7 \
            or any(t.ent_type_ in ("DATE", "TIME", "MONEY", "PERCENT", "CARDINAL", "QUANTITY") or t.like_num
                   for t in phrase) or not _self_contained(phrase):
        return None
    return _text(sorted(phrase, key=lambda t: t.i))


def _unnamed_owner(sent: Any) -> bool:
    """Whether the sentence speaks of "the agency", "the company" ...: a size it gives may be that
    unnamed organisation's, which the question cannot say (a reviewer: "NASA is never named")."""
    return any(t.lower_ in OWNER_HEADS and any(c.dep_ == "det" and c.lower_ in ("the", "this", "that") for c in t.children)
               and not any(c.pos_ == "PROPN" or c.ent_type_ for c in t.children) for t in sent)


def _loses_name(subj: Any) -> bool:
    """Whether the subject has a clause the question leaves out that names a place, a group or a
    person ("Lakeport goods [shipped to Rivertown] would face a minimum 60% tariff rate": a reviewer
    asked from whom)."""
    return any(c.dep_ in ("acl", "relcl") and any(t.ent_type_ in ("GPE", "LOC", "ORG", "NORP", "PERSON")
                                                   for t in c.subtree) for c in subj.children)


def _sizes(ent: Any, noun: Any) -> bool:
    """Whether the answer gives the size of ``noun``: before it ("a 10% tariff", "a $1.3bn cut")
    or after it by "of" ("tariffs of 30%", "a budget of $2.8 billion")."""
    return ent.root.head.i == noun.i and ent.end <= noun.i or _of_size(ent, noun)


def _of_size(ent: Any, noun: Any) -> bool:
    """Whether the answer follows ``noun`` as its "of" phrase ("a budget of $3.9 billion")."""
    of = ent.root.head
    return ent.root.dep_ == "pobj" and of.lower_ == "of" and of.head.i == noun.i and of.i > noun.i


# Nouns whose percentage is a rate, asked "What tariff rate ..." when plural or without "a" ("10%
# tariffs", "its tariffs of 30%"). A levy or a fee is an amount as often as a rate.
RATE_NOUNS = frozenset({"tariff", "tax", "duty"})
# Words of the kind of a rate, which say nothing of what it is levied on.
RATE_KINDS = frozenset({"blanket", "baseline", "base", "minimum", "maximum", "flat", "universal", "reciprocal",
                        "retaliatory", "import", "export", "trade", "border", "penalty", "rate"})


def _levied_on(tokens: list[Any]) -> bool:
    """Whether the phrases say what a rate is levied on ("on US imported goods", "against
    Canada"; not "on Friday"): a tariff rate of what otherwise?"""
    return any(t.dep_ == "prep" and t.lower_ in ("on", "against") and any(
        c.dep_ == "pobj" and c.ent_type_ not in ("DATE", "TIME", "EVENT") and c.lower_ not in ("top", "behalf", "advice")
        for c in t.children) for t in tokens)


def _rate_question(noun: Any, ent: Any) -> tuple[str, str, bool] | None:
    """("What tariff rate", "on Rivertown cars", named): the question word for a percentage that is the
    rate of ``noun`` (a tariff, a tax, a duty), its modifiers kept ("What steel tariff rate"), and
    the noun's own phrases to say after the verb; None when the noun is no rate or its phrases say
    too much."""
    if noun.lemma_.lower() not in RATE_NOUNS:
        return None
    ent_ids = set(range(ent.start, ent.end))
    of = ent.root.head.i if _of_size(ent, noun) else -1
    if any(t.lower_ in RELATIVE_COUNT | {"another", "new"} for t in noun.children if t.dep_ in ("amod", "det", "advmod")):
        return None  # "additional tariffs of 34%": an increment, not the rate
    mods = [t for t in noun.children if t.i < noun.i and t.dep_ in ("amod", "compound") and t.i not in ent_ids
            and t.lower_ not in EVALUATIVE | {"own"}]
    after = [t for c in noun.children if c.dep_ == "prep" and c.i > noun.i and c.i != of for t in _subtree_tokens(c)]
    words = _whole_words(sorted([t for m in mods for t in m.subtree], key=lambda t: t.i))
    after.sort(key=lambda t: t.i)
    if after and not _levied_on(after[:1] + [t for t in after if t.head.i == after[0].i]) \
            and after[0].lower_ in ("on", "against"):
        return None  # "tariffs on top of existing levies", "on Liberation Day": on nothing named
    if after and after[-1].i - after[0].i + 1 != len(after):
        return None  # "on timber - and also on goods made of it": a phrase the parse split
    if len(after) > 8 or not _self_contained(after) or any(
            t.like_num or t.ent_type_ in ("MONEY", "PERCENT") or t.tag_ in ("JJR", "RBR", "JJS", "RBS") for t in words + after):
        return None
    if len(words) > 3:
        return None
    # "steel tariffs", "US tariffs": what they are on or whose; not "blanket", "baseline" tariffs.
    named = any(t.pos_ == "PROPN" or t.ent_type_ or t.pos_ == "NOUN" and t.lower_ not in RATE_KINDS for t in words)
    return " ".join(x for x in ("What", _text(words), noun.lemma_.lower(), "rate") if x), _text(after), named


def _size_question(noun: Any, ent: Any, kind: str) -> str | None:
    """"How high a tariff on UK imports" for an answer that gives the size of ``noun`` (the
    object, singular, with "a", "an" or "another"), with the noun's own phrase; None when the
    noun is no size noun, says nothing alone, or its phrase is too long or points back."""
    lemma = noun.lemma_.lower()
    if noun.tag_ != "NN" or not any(c.dep_ == "det" and c.lower_ in ("a", "an", "another") for c in noun.children):
        return None
    if kind == "percent" and lemma not in HIGH_NOUNS | CHANGE_NOUNS \
            or kind == "money" and lemma not in HIGH_NOUNS | LARGE_NOUNS | CHANGE_NOUNS:
        return None
    ent_ids = set(range(ent.start, ent.end))
    if _of_size(ent, noun):  # "a budget of $3.9 billion": the "of" goes with the answer
        ent_ids.add(ent.root.head.i)
    phrase = [t for t in _subtree_tokens(noun) if t.i not in ent_ids and t.head.i not in ent_ids
              and not (t.dep_ == "det" and t.head.i == noun.i) and t.lower_ not in EVALUATIVE]
    phrase.sort(key=lambda t: t.i)
    after = [t for t in phrase if t.i > noun.i]
    if lemma in CHANGE_NOUNS and not any(t.dep_ == "prep" and t.head.i == noun.i and t.lower_ in ("in", "of", "on", "to", "for")
                                         for t in after):
        return None  # "announced an increase": of what?
    if len(phrase) > 8 or not _self_contained(phrase) or any(t.like_num or t.text in SIZE_MARKS for t in phrase) \
            or any(t.tag_ in ("JJR", "RBR", "JJS", "RBS") or t.ent_type_ in ("MONEY", "PERCENT") or t.lower_ in SCALE_WORDS
                   for t in phrase) \
            or any(t.i < min(ent.start, noun.i) and t.dep_ not in ("amod", "compound") for t in phrase):
        return None
    text = _text(phrase)
    how = "How high" if lemma in HIGH_NOUNS else "How large"
    article = "an" if re.match(r"[aeio]|u(?!ni|s[aeu]|S)", text) else "a"
    return f"{how} {article} {text}"


def _finish(body: str, verb: Any, ent: Any, kind: str, form: str, date_s: str, allowance: int = 0) -> Stem | None:
    """The question from its body: fronted phrases at the end, relative days made the news
    day's, dated; None when the result is no clean question (over :data:`MAX_STEM_TOKENS` words,
    and ``allowance`` more)."""
    front = _fronted(verb, ent)
    if front is None:
        return None
    if front:
        body = f"{body} {front}"
    if any(w.lower() in WH_INSIDE for w in re.findall(r"[A-Za-z]+", body)[2:]):
        return None  # "... was looking what for": a clause the parse got wrong
    if re.search(r"[\u201c\u201d\u2018\"]|\w[\u2019']\w{2,}", body):
        return None
    body = _clean(body, date_s, _day_dates(verb, date_s))
    if body is None or len(body.split()) > MAX_STEM_TOKENS + allowance or len(body.split()) < 4:
        return None
    if _TIME_LEFT.search(_NOW.sub("", body)):
        return None  # "held talks at a time [when ...]": the clause that said which time is left out
    body = body.rstrip(".!?,;: ")
    if re.search(r"\b(?:[A-Z]\.)+[A-Z]$", body):
        body += "."  # "to the U.S.": the abbreviation keeps its last full stop
    question = f"{body}?" if has_explicit_date(body) else f"{body}, as reported on {date_s}?"
    question = question[0].upper() + question[1:]
    return Stem(question=question, kind=kind, answer=ent.text, form=form)
