"""Programmatic checks run on every candidate before any LLM judging, each with a named verdict.

Verdict names (stage ``check``), in the order they are applied:

* ``schema``: the generator's item had the required fields (set by the generator parser);
* ``question_count``: the item was beyond the number of questions asked for;
* ``four_distinct_choices``: exactly four non-empty choices, no two the same after normalising
  (:func:`choice_key`: case, punctuation, number words and digits, "%" and "percent");
* ``answer_in_choices``: the answer is one of the choices, compared as the choices are (an
  answer "nine" is the choice "Nine", and is then written as that choice);
* ``answer_in_article``: the answer is found in the article (normalised match), or as written in
  the evidence where extraction glued it to a word ("fromPersuader");
* ``evidence_in_article``: the evidence quote is found in the article (fragments around
  ellipses each found);
* ``no_article_reference``: the question and choices never mention "the article", "the text",
  "the passage" ...;
* ``explicit_date``: the question names a date with its year (a day or a month);
* ``length_bounds``: question, choices, evidence and rationale within length bounds;
* ``short_answer``: a short answer of at most 10 tokens, found in the article or the answer;
* ``giveaway_length``: the correct choice is not much longer than every other choice;
* ``giveaway_type``: the correct choice is not the only one of its form (money, date, name...).

Near-duplicate questions are removed later, across the whole day (:func:`near_duplicates`,
verdict ``near_duplicate``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from okgen.generate import lexicon as lx
from okgen.generate.records import Candidate
from okgen.generate.spans import kind_of_choice
from okgen.generate.text import (
    contains,
    content_tokens,
    fragments_found,
    glued_in,
    has_explicit_date,
    normalize,
)

CHECKS = ("schema", "question_count", "four_distinct_choices", "answer_in_choices", "answer_in_article",
          "evidence_in_article", "no_article_reference", "explicit_date", "length_bounds", "short_answer",
          "giveaway_length", "giveaway_type")
DEDUP = "near_duplicate"

ARTICLE_REF = re.compile(
    r"\b(?:the|this|that|above|below|following|given|provided|same|source)\s+(?:news\s+)?"
    r"(?:article|text|passage|excerpt|document|snippet|paragraph|story)s?\b"
    r"|\b(?:according to|in|from|per)\s+the\s+(?:author|writer)\b|\bmentioned (?:above|earlier|previously)\b"
    r"|\bthe author\b"
    # "the report" alone may be a named report ("the report by Amnesty International"); as the
    # source of the claim, or as "this report"/"the news report"/"the piece", it is the article.
    r"|\b(?:according to|as stated in|as reported in|as described in|in|from|per)\s+(?:the|this)\s+"
    r"(?:news\s+)?(?:report|piece|item|coverage|above|source)\b"
    r"(?!\s+(?:of|by|from|on|for|into|published|released|issued|commissioned)\b)"
    r"|\b(?:this|the)\s+(?:news\s+(?:report|item|piece)|piece|report above)\b|\bthis report\b|\bthe above\b",
    re.IGNORECASE)


# Bumped when a check drops what it did not before (2: a choice of more than 15 words; 3: choices
# equal with number words as digits, an answer matched to its choice by normalised text); part of
# a generate run's key, with the gates' version, so a resumed run never mixes two versions.
CHECKS_VERSION = 3


@dataclass(frozen=True)
class Limits:
    """Length bounds of the ``length_bounds`` and ``short_answer`` checks."""

    question_min_chars: int = 20
    question_max_chars: int = 400
    question_min_words: int = 5
    choice_max_chars: int = 160
    choice_max_words: int = 15
    """A choice of more words is a clause, not an answer: four 20-word paraphrases of a quote test
    reading, not knowing the news, and the right one is the one worded like the article (a long
    official name, "United Nations Relief and Works Agency for Palestine Refugees in the Near
    East", has 13)."""
    evidence_max_chars: int = 1500
    rationale_max_chars: int = 1500
    short_answer_max_tokens: int = 10
    giveaway_ratio: float = 1.75
    giveaway_min_extra_chars: int = 10
    gates: bool = True
    """Also apply the quality gates (:mod:`okgen.generate.gates`) after these checks."""


def check_candidate(c: Candidate, article_norm: str, limits: Limits = Limits()) -> None:
    """Apply every content check to ``c`` (recording all verdicts; the first failure rejects).

    Args:
        c: the candidate; ``schema`` / ``question_count`` verdicts may already be on it.
        article_norm: :func:`~okgen.generate.text.normalize` of the article's title and text.
        limits: length bounds.
    """
    if c.rejected_by in ("schema", "question_count"):
        return
    choices = [x.strip() for x in c.choices]
    keys = [choice_key(x) for x in choices]
    distinct = len(choices) == 4 and all(x for x in choices) and len(set(keys)) == 4
    c.add("four_distinct_choices", distinct,
          reason=None if distinct else f"{len(choices)} choices, {len(set(k for k in keys if k.strip()))} distinct non-empty")
    # An answer written otherwise than its choice ("nine" for "Nine", "9" for "Nine") is that
    # choice, as written, so later stages find it among the choices.
    if c.answer.strip() not in choices and (key := choice_key(c.answer)).strip() and key in keys:
        c.answer = c.choices[keys.index(key)]
    in_choices = c.answer.strip() in choices
    c.add("answer_in_choices", in_choices, reason=None if in_choices else f"answer {c.answer!r} is not a choice")
    ev = fragments_found(article_norm, c.evidence)
    # An answer glued to a word by extraction ("fromPersuader") is found in the evidence as written.
    found = contains(article_norm, c.answer) or (ev and glued_in(c.evidence, c.answer.strip()))
    c.add("answer_in_article", found, reason=None if found else f"answer {c.answer!r} not found in the article")
    c.add("evidence_in_article", ev, reason=None if ev else "evidence quote not found in the article")
    ref = ARTICLE_REF.search(" ".join([c.question, *choices]))
    c.add("no_article_reference", ref is None, reason=None if ref is None else f"mentions {ref.group(0)!r}")
    dated = has_explicit_date(c.question)
    c.add("explicit_date", dated, reason=None if dated else "the question names no date")
    problems = _length_problems(c, choices, limits)
    c.add("length_bounds", not problems, reason="; ".join(problems) or None)
    sa = c.short_answer.strip()
    sa_ok = 0 < len(sa.split()) <= limits.short_answer_max_tokens and (
        contains(article_norm, sa) or normalize(sa).strip() in normalize(c.answer) or (ev and glued_in(c.evidence, sa)))
    c.add("short_answer", sa_ok, reason=None if sa_ok else f"short answer {sa!r} is empty, too long or not grounded")
    others = [x for x in choices if x != c.answer.strip()]
    if in_choices and others:
        longest = max(len(x) for x in others)
        a = len(c.answer.strip())
        give = a > limits.giveaway_ratio * longest and a - longest >= limits.giveaway_min_extra_chars
        c.add("giveaway_length", not give, reason=f"answer has {a} characters, the other choices at most {longest}" if give else None)
        kind = kind_of_choice(c.answer)
        lone = all(kind_of_choice(x) != kind for x in others)
        c.add("giveaway_type", not lone, reason=f"the answer is the only {kind} among the choices" if lone else None)


_NUMBER_WORDS = {w: i for i, w in enumerate(
    ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
     "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"])}
_NUMBER_WORDS.update({w: 10 * i for i, w in enumerate(["thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"], 3)})
_SCALES = {"hundred": 100, "thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000,
           "trillion": 1_000_000_000_000}
# "2.3 billion", "$2,300 million": a figure with its scale word, as digits ("2300000000").
_SCALED = re.compile(r"(\d+(?:,\d{3})*(?:\.\d+)?)\s*(hundred|thousand|million|billion|trillion)\b", re.IGNORECASE)
_PER_CENT = re.compile(r" per ?cent ")


def _scaled(m: re.Match[str]) -> str:
    value = float(m.group(1).replace(",", "")) * _SCALES[m.group(2).lower()]
    return str(int(value)) if value == int(value) else m.group(0)


def _continues(current: int, value: int) -> bool:
    """Whether a number word of ``value`` goes on a number read so far as ``current``: "five"
    after "twenty", anything after "hundred"; not "twenty" after "twenty"."""
    rest = current % 100
    return current == 0 or rest == 0 or (rest >= 20 and rest % 10 == 0 and value < 10)


def _words_to_digits(tokens: list[str]) -> list[str]:
    """Runs of number words as digits: "twenty five" is "25", "one hundred and five" "105"."""
    out: list[str] = []
    total = current = 0
    run = False
    for i, w in enumerate(tokens):
        and_inside = (w == "and" and run and current % 100 == 0 and i + 1 < len(tokens)
                      and tokens[i + 1] in _NUMBER_WORDS)  # "one hundred and five", not "five and six"
        if run and w in _NUMBER_WORDS and not _continues(current, _NUMBER_WORDS[w]):
            out.append(str(total + current))  # "twenty twenty", "nineteen eighty": two numbers
            total = current = 0
        if w in _NUMBER_WORDS or (w in _SCALES and run) or and_inside:
            run = True
            if w in _NUMBER_WORDS:
                current += _NUMBER_WORDS[w]
            elif w == "hundred":
                current = (current or 1) * 100
            elif w in _SCALES:
                total, current = total + (current or 1) * _SCALES[w], 0
            continue
        if run:
            out.append(str(total + current))
            total = current = 0
            run = False
        out.append(w)
    if run:
        out.append(str(total + current))
    return out


@functools.lru_cache(maxsize=1 << 14)
def choice_key(text: str) -> str:
    """What two choices are compared by: :func:`~okgen.generate.text.normalize`, with numbers
    written one way: number words as digits ("Seven" is "7", "twenty-five" "25", "two million"
    and "2 million" "2000000") and "%", "percent" and "per cent" alike ("125%" is "125 percent").
    Padded with spaces, like ``normalize``."""
    t = _SCALED.sub(_scaled, _PERCENT.sub(" percent", text or ""))
    n = normalize(t)
    words = n.split()
    if any(w in _NUMBER_WORDS for w in words):
        n = " " + " ".join(_words_to_digits(words)) + " "
    return _PER_CENT.sub(" percent ", n)


def _length_problems(c: Candidate, choices: Sequence[str], limits: Limits) -> list[str]:
    out = []
    q = c.question.strip()
    if len(q) < limits.question_min_chars or len(q.split()) < limits.question_min_words:
        out.append(f"question too short ({len(q)} characters)")
    if len(q) > limits.question_max_chars:
        out.append(f"question too long ({len(q)} > {limits.question_max_chars} characters)")
    long_choices = [x for x in choices if len(x) > limits.choice_max_chars]
    if long_choices:
        out.append(f"a choice is longer than {limits.choice_max_chars} characters")
    elif wordy := [x for x in choices if len(x.split()) > limits.choice_max_words]:
        out.append(f"a choice has {max(len(x.split()) for x in wordy)} words (over {limits.choice_max_words}): a clause, not an answer")
    if len(c.evidence) > limits.evidence_max_chars:
        out.append(f"evidence longer than {limits.evidence_max_chars} characters")
    if len(c.rationale) > limits.rationale_max_chars:
        out.append(f"rationale longer than {limits.rationale_max_chars} characters")
    return out


@functools.lru_cache(maxsize=1 << 16)
def dedup_features(question: str, answer: str) -> tuple[str, frozenset[str], str]:
    """What :func:`near_duplicates` compares: the normalised question, its content words and
    the normalised answer. Cached, so a run computes them as each article finishes, not all
    at the end of the run."""
    qn = normalize(question)
    return qn, content_tokens(qn, normalized=True), normalize(_PERCENT.sub(" percent", answer))


# "125%", "125 percent" and "125 per cent" are one answer.
_PERCENT = re.compile(r"(?<=\d)\s*(?:%|per\s?cent\b)", re.IGNORECASE)


EVIDENCE_OVERLAP = 0.6  # share of the smaller evidence's fact words the other evidence repeats
EVIDENCE_OVERLAP_NUMBER = 0.4  # ... when both also state the same figure ("40" percent)
_SUFFIX = re.compile(r"(?:ion|ing|ed|es|s)$")
_FIGURE = re.compile(r"^(?!(?:19|20)\d\d$)\d{2,}")  # a number of two digits or more, not a year


def evidence_facts(evidence: str, answer: str) -> frozenset[str]:
    """The words a piece of evidence states its fact with: content words, crudely stemmed
    ("traveled" is "travel", "retaliation" is "retaliat"), without the answer's own words; "%"
    is "percent"."""
    drop = content_tokens(answer)
    text = re.sub(r"(?<=\d)\s*%", " percent", evidence)
    return frozenset(_SUFFIX.sub("", w) if len(w) > 4 else w for w in content_tokens(text) if w not in drop)


def same_fact(facts: frozenset[str], other: frozenset[str], same_figure: bool = False) -> bool:
    """Whether two evidence sentences with the same answer state one fact: most of the smaller
    set of fact words repeated, or a good part of them and the same figure ("Brazil retaliated
    with a 40 percent levy", "Brazil is imposing a 40% duty on US ethanol"). With
    ``same_figure`` (the answer itself is that figure: "145%" both times) the figure is shared
    already, and "percent", its unit, is no fact word ("raised total levies on steel to 45%",
    "the total levy on steel was lifted to 45%")."""
    if same_figure:
        facts, other = facts - {"percent"}, other - {"percent"}
    small = min(len(facts), len(other))
    if small < 3:
        return False
    shared = facts & other
    share = len(shared) / small
    return share >= EVIDENCE_OVERLAP or (share >= EVIDENCE_OVERLAP_NUMBER
                                         and (same_figure or any(_FIGURE.match(w) for w in shared)))


_TARGET = re.compile(r"\b(?:on|against|into)\s+(?:the\s+)?(?:imports\s+from\s+)?" + lx.COUNTRY_WORD.pattern)


def targets(text: str) -> frozenset[str]:
    """The countries a measure is aimed at ("tariffs on Chinese goods", "levies against the US",
    "duties on imports from Canada"): China, the United States, Canada."""
    return frozenset(lx.COUNTRY_OF[m.group(1)] for m in _TARGET.finditer(text))


def near_duplicates(items: Sequence[tuple[str, str]], threshold: float = 0.5,
                    prior: Sequence[tuple[str, str]] = (), evidence: Sequence[str] | None = None,
                    prior_evidence: Sequence[str] | None = None) -> dict[int, int]:
    """Find near-duplicate questions: index -> index of the earlier question it duplicates.

    Two questions are near duplicates when their normalised texts are equal, or when they have
    the same answer and their content words overlap by at least ``threshold`` (Jaccard), or,
    with ``evidence`` (one per item), when they have the same answer and their evidence
    sentences state it with the same words (at least :data:`EVIDENCE_OVERLAP` of the smaller
    set: two outlets reporting one fact, "the envoy traveled to Qatar ..."). Questions whose
    measures aim at different countries (:func:`targets`: "tariffs on Chinese goods", "a tariff
    on US goods") are never near duplicates: one figure, two facts. The earlier one
    (in the given order) is kept. Comparing only questions with the same answer keeps this
    linear in practice.

    Args:
        items: (question, answer) pairs in priority order.
        threshold: Jaccard overlap of content words.
        prior: (question, answer) pairs published earlier (the last days' snapshots): an item
            duplicating ``prior[k]`` maps to ``-1 - k``; prior items are never reported.
        evidence: the evidence sentence of each item (same order), or None.
        prior_evidence: the evidence sentence of each prior item (same order), or None: a fact
            published earlier in other words ("retaliated with a 40 percent levy", "imposing
            a 40% duty") is found by its evidence as within the day.
    """
    by_text: dict[str, int] = {}
    by_answer: dict[str, list[tuple[int, frozenset[str], frozenset[str], frozenset[str]]]] = {}
    dups: dict[int, int] = {}
    n_prior = len(prior)
    for i, (q, a) in enumerate([*prior, *items]):
        i -= n_prior  # prior items get negative indexes: -n_prior .. -1
        qn, toks, key = dedup_features(q, a)
        if i >= 0:
            ev_text = evidence[i] if evidence is not None else ""
        else:
            ev_text = prior_evidence[i + n_prior] if prior_evidence is not None else ""
        facts = evidence_facts(ev_text, a) if ev_text else frozenset()
        found = by_text.get(qn)
        figure = bool(_FIGURE.match(re.sub(r"\D", "", key)))  # a numeric answer: the same figure
        aim = targets(q) or targets(ev_text)
        if found is None:
            for j, other, other_facts, other_aim in by_answer.get(key, ()):
                if aim and other_aim and not aim & other_aim:
                    continue  # one figure for two measures: on Chinese goods, and on US goods
                union = toks | other
                if union and len(toks & other) / len(union) >= threshold:
                    found = j
                    break
                if same_fact(facts, other_facts, same_figure=figure):
                    found = j
                    break
        if found is not None:
            if i >= 0:
                dups[i] = found if found >= 0 else -1 - (found + n_prior)
            continue
        by_text[qn] = i
        by_answer.setdefault(key, []).append((i, toks, facts, aim))
    return dups
