"""Reading answers out of generated text.

:func:`parse_choice` finds the chosen option in a free-text multiple-choice answer, trying in
order:

1. an explicit statement: ``answer is B``, ``Answer: (B)``, ``correct option: B`` (the last one
   wins, so a model that reconsiders is read at its final word);
2. a leading letter set off by punctuation or the end: ``B``, ``B.``, ``(B)``, ``**B**``,
   ``B) Lisbon`` (a leading ``A`` followed by a word is an article, not a choice);
3. a single letter in brackets anywhere: ``... so (C).`` (two different ones, ``(B) or (C)``,
   are a hedge: unparsed);
4. the text of exactly one option (normalised; when one option's text contains another's, the
   longer one);

and returns None when nothing or several options fit: the answer counts as wrong and is
reported as unparsed.

:func:`normalize_answer` is SQuAD's normalisation (lower case, no punctuation, no articles,
single spaces), used by the open-ended variant with :func:`first_line`.
"""

from __future__ import annotations

import re
import string
from collections.abc import Sequence

_PUNCT = set(string.punctuation) | {"‘", "’", "“", "”", "–", "—", "…"}
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_STATEMENT = re.compile(
    r"(?:answer|option|choice)\s*(?:is|would be|:)?\s*(?:option|choice)?\s*[:\-]?\s*[\(\[\*]*\s*([A-Z])\b(?![a-z])",
    re.IGNORECASE)
_LEADING = re.compile(r"^[\s\(\[\*\"']*([A-Z])(?:[\)\]\.:\*\"']+|\s*$|\s*\n|\s+[-–—])")
_BRACKETED = re.compile(r"[\(\[]([A-Z])[\)\]]")
_LABEL = re.compile(r"^(?:final\s+)?answer\s*\**\s*[:\-]\s*", re.IGNORECASE)


def normalize_answer(text: str) -> str:
    """Lower-case, drop punctuation and articles (a, an, the), collapse whitespace."""
    text = "".join(ch for ch in text.lower() if ch not in _PUNCT)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def first_line(text: str) -> str:
    """The first non-empty line, without a leading ``Answer:`` label or list/markdown marks."""
    for line in (text or "").splitlines():
        line = line.strip().strip("*#>-• ").strip()
        if line:
            return _LABEL.sub("", line).strip().strip("*").strip()
    return ""


def open_match(output: str, short_answer: str) -> bool:
    """Whether the first non-empty line equals the short answer after normalisation."""
    got = normalize_answer(first_line(output))
    return bool(got) and got == normalize_answer(short_answer)


def parse_choice(text: str | None, choices: Sequence[str]) -> int | None:
    """The index of the option a free-text answer chose, or None (see the module docstring)."""
    if not text or not text.strip():
        return None
    n = len(choices)
    letters = {chr(65 + i): i for i in range(n)}
    # Only an upper-case letter is a choice ("the answer is a city" names none).
    found = [m.group(1) for m in _STATEMENT.finditer(text) if m.group(1) in letters]
    if found:
        return letters[found[-1]]
    brackets = {b for b in _BRACKETED.findall(text) if b in letters}
    if len(brackets) > 1:
        return None  # "(B) or (C)" hedges between options
    m = _LEADING.match(text.strip())
    if m and m.group(1) in letters:
        return letters[m.group(1)]
    if brackets:
        return letters[brackets.pop()]
    return _match_option_text(text, choices)


def _match_option_text(text: str, choices: Sequence[str]) -> int | None:
    norm = f" {normalize_answer(text)} "
    hits = [i for i, c in enumerate(choices) if normalize_answer(c) and f" {normalize_answer(c)} " in norm]
    if len(hits) == 1:
        return hits[0]
    if len(hits) > 1:
        # "Paris, Texas" also contains "Paris": keep the hit that contains every other hit.
        longest = max(hits, key=lambda i: len(normalize_answer(choices[i])))
        ln = f" {normalize_answer(choices[longest])} "
        if all(f" {normalize_answer(choices[i])} " in ln for i in hits):
            return longest
    return None
