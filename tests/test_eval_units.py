"""Answer parsing, open-answer normalisation, templates, truncation and the bootstrap."""

from __future__ import annotations

import datetime as dt

import pytest

from okgen.eval.contexts import MIN_PASSAGE_TOKENS, fit
from okgen.eval.parsing import first_line, normalize_answer, open_match, parse_choice
from okgen.eval.stats import bootstrap_ci, breakdown
from okgen.eval.templates import TEMPLATES, Passage, get_template
from okgen.models.base import Backend, Generated, Scored
from okgen.schema import Question

CHOICES = ["Lisbon", "Paris", "Paris, Texas", "Osaka"]


@pytest.mark.parametrize("text,want", [
    ("B", 1), ("B.", 1), (" (C)", 2), ("**D**", 3), ("D) Osaka", 3), ("C\nbecause it is", 2),
    ("The answer is B.", 1), ("Answer: (C)", 2), ("answer: D", 3), ("The correct option is A", 0),
    ("I first thought A, but the final answer is C.", 2), ("It must be (D).", 3),
    ("Osaka", 3), ("paris", 1), ("Paris, Texas", 2), ("It was announced in Lisbon.", 0),
    ("A company in Osaka", 3),  # a leading article "A" is not a letter
    ("", None), ("   ", None), ("I don't know.", None), ("Either Lisbon or Osaka", None),
    ("the answer is a city", None), ("E", None), ("(B) or (C)", None),
])
def test_parse_choice(text, want):
    assert parse_choice(text, CHOICES) == want


def test_open_answer_normalisation():
    assert normalize_answer("The  Paris!") == "paris"
    assert normalize_answer("$950 million") == normalize_answer("950 million")
    assert normalize_answer("An Apple, a Day") == "apple day"
    assert first_line("\n\n  **Answer:** Lisbon.\nSecond line") == "Lisbon."
    assert first_line("- Osaka\n") == "Osaka"
    assert open_match("the Meridian Bank.\nIt bought ...", "Meridian Bank")
    assert not open_match("Meridian", "Meridian Bank")
    assert not open_match("", "")
    assert not open_match("Second line only?\nMeridian Bank", "Meridian Bank")


# Changing a template's text must come with a new version name: these hashes pin them.
PINNED = {"mc-v1": TEMPLATES["mc-v1"].hash, "open-v1": TEMPLATES["open-v1"].hash}


def test_templates_are_versioned_and_pinned():
    assert PINNED == {"mc-v1": "4b4c89cd1edc", "open-v1": "28e2d4148ff2"}
    assert get_template(None, "mc").name == "mc-v1" and get_template(None, "open").name == "open-v1"


def _q(choices=("Lisbon", "Osaka", "Accra", "Quito"), answer=1) -> Question:
    return Question(id="q1", article_id="a1", date=dt.date(2026, 3, 14), source="bbc", question="Where did it happen?",
                    choices=choices, answer_index=answer, answer=choices[answer], short_answer=choices[answer],
                    generator="t")


def test_mc_prompt_layout_and_contexts():
    t = get_template("mc-v1", "mc")
    p = t.render(_q())
    assert p.plain() == ("The following is a multiple-choice question about the news. Answer with the letter of the "
                         "correct choice.\n\nQuestion: Where did it happen?\nA. Lisbon\nB. Osaka\nC. Accra\nD. Quito\nAnswer:")
    art = Passage("a1", "Floods in Osaka", "Floods in Osaka forced 300 people out.", "BBC", "2026-03-14")
    oracle = t.render(_q(), [art], "oracle", group="a1").plain()
    assert oracle.startswith("Article:\nFloods in Osaka forced 300 people out.\n\nThe following")
    two = [art, Passage("a2", "Markets", "Shares fell.", "NPR", "2026-03-13", 2)]
    ret = t.render(_q(), two, "retrieval").plain()
    assert ret.startswith("Passages:\n[1] Floods in Osaka (BBC, 2026-03-14)\nforced 300 people out.\n\n"
                          "[2] Markets (NPR, 2026-03-13)\nShares fell.\n\nThe following")


class _WordBackend(Backend):
    """Counts one token per word; truncates by words."""

    name = "words"

    def __init__(self, limit):
        self.limit = limit

    @property
    def max_length(self):
        return self.limit

    def text_tokens(self, text):
        return len(text.split())

    def prompt_tokens(self, prompt):
        return len(prompt.plain().split())

    def truncate_text(self, text, n):
        return " ".join(text.split()[:n])

    def letter_logprobs(self, prompts, labels):
        return [Scored() for _ in prompts]

    def loglik(self, prompts, continuations):
        return [Scored() for _ in prompts]

    def generate(self, prompts, **kw):
        return [Generated() for _ in prompts]


def test_truncation_cuts_the_context_from_its_end():
    t = get_template("mc-v1", "mc")
    words = " ".join(f"w{i}" for i in range(200))
    base = len(t.render(_q()).plain().split())
    # oracle: the article keeps its beginning, the question and choices stay whole
    f = fit(t, _q(), [Passage("a1", "T", words)], "oracle", _WordBackend(base + 60), reserve=2)
    text = f.prompt.plain()
    assert f.truncated and not f.too_long and len(text.split()) + 2 <= base + 60
    assert "w0 w1 w2" in text and "w199" not in text and text.endswith("D. Quito\nAnswer:")
    # retrieval: the lowest-ranked passages go first, a stub shorter than the minimum is dropped
    ps = [Passage(f"a{i}", f"T{i}", words[: 300], rank=i) for i in range(1, 4)]
    full = len(t.render(_q(), ps, "retrieval").plain().split())
    f = fit(t, _q(), ps, "retrieval", _WordBackend(full - 10), reserve=1)
    assert f.truncated and f.retrieved == ("a1", "a2", "a3")
    f = fit(t, _q(), ps, "retrieval", _WordBackend(full - 60), reserve=1)
    assert f.retrieved == ("a1", "a2") and f.truncated
    assert fit(t, _q(), ps, "retrieval", _WordBackend(full + 5), reserve=1).truncated is False
    assert fit(t, _q(), [], "none", _WordBackend(5), reserve=1).too_long
    assert MIN_PASSAGE_TOKENS == 16


def test_bootstrap_ci_is_deterministic_and_sane():
    xs = [True] * 70 + [False] * 30
    lo, hi = bootstrap_ci(xs, seed=0)
    assert (lo, hi) == bootstrap_ci(xs, seed=0) and lo < 0.7 < hi
    assert 0.58 < lo < 0.64 and 0.76 < hi < 0.82  # about +-1.96 * sqrt(.21/100)
    # All right or all wrong: the Wilson interval, never a point that claims certainty (0/6: [0, 0.39]).
    none_lo, none_hi = bootstrap_ci([False] * 6)
    assert none_lo == 0.0 and 0.38 < none_hi < 0.40, (none_lo, none_hi)
    all_lo, all_hi = bootstrap_ci([True] * 10)
    assert all_hi == 1.0 and 0.69 < all_lo < 0.73, (all_lo, all_hi)
    assert bootstrap_ci([0.5] * 4) == (0.5, 0.5)  # equal shares (memory runs' per-question scores): no count
    assert bootstrap_ci([]) == (0.0, 0.0)
    other = bootstrap_ci(xs, seed=1)  # another seed: another resample, about the same interval
    assert other != (lo, hi) and abs(other[0] - lo) < 0.03 and abs(other[1] - hi) < 0.03
    wide = bootstrap_ci(xs, seed=0, level=0.99)
    assert wide[0] < lo and wide[1] > hi
    big = [True] * 7000 + [False] * 3000  # resampled in batches: still about +-1.96 * sqrt(.21/10000)
    blo, bhi = bootstrap_ci(big, n_boot=400, seed=0)
    assert 0.688 < blo < 0.694 and 0.706 < bhi < 0.712
    b = breakdown([("bbc", True), ("bbc", False), ("npr", True)])
    assert b["bbc"].accuracy == 0.5 and b["npr"].n == 1
