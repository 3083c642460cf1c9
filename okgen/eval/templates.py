"""Versioned prompt templates. The template's name goes into the eval signature (``tmpl:``).

A template turns a question, its choices and an optional context block into a
:class:`~okgen.models.base.Prompt`. Its text never changes under a given name: a change is a
new version (``mc-v2``), so a signature always names the exact prompt (a test pins the hash of
every template). Backends that apply a chat template add ``+chat2`` to the name (lm-eval's rendering).

``mc-v1`` (multiple choice)::

    [Article: / Passages: block]
    The following is a multiple-choice question about the news. Answer with the letter of
    the correct choice.

    Question: <question>
    A. <choice>
    B. <choice>
    ...
    Answer:

``open-v1`` (short answer) asks for a few words on the first line, then ``Answer:``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from okgen.errors import ConfigError
from okgen.hashing import sha256_text
from okgen.models.base import Prompt
from okgen.schema import Question

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
ANSWER_PREFIX = "Answer:"


@dataclass(frozen=True)
class Passage:
    """One piece of context: the oracle article or a retrieved passage."""

    article_id: str
    title: str
    text: str
    source: str = ""
    date: str = ""
    rank: int | None = None


@dataclass(frozen=True)
class Template:
    """A versioned prompt template.

    Attributes:
        name: versioned name (``mc-v1``).
        format: ``mc`` or ``open``.
        instruction: the instruction line(s) before the question.
        article_header / passages_header: headers of the context block.
    """

    name: str
    format: str
    instruction: str
    article_header: str = "Article:"
    passages_header: str = "Passages:"

    @property
    def hash(self) -> str:
        """Hash of everything that shapes the prompt (pinned by a test)."""
        return sha256_text("\x00".join([self.name, self.format, self.instruction, self.article_header,
                                        self.passages_header, ANSWER_PREFIX, _LAYOUT_VERSION]))[:12]

    def context_block(self, passages: Sequence[Passage], setting: str) -> str:
        """The context text: the article (oracle) or numbered passages in rank order (retrieval)."""
        if not passages:
            return ""
        if setting == "oracle":
            p = passages[0]
            return f"{self.article_header}\n{_titled(p)}\n\n"
        parts = []
        for i, p in enumerate(passages, 1):
            meta = ", ".join(x for x in (p.source, p.date) if x)
            head = f"[{i}] {p.title}" + (f" ({meta})" if meta else "")
            body = p.text[len(p.title):].lstrip() if p.title and p.text.startswith(p.title) else p.text
            parts.append(f"{head}\n{body}")
        return f"{self.passages_header}\n" + "\n\n".join(parts) + "\n\n"

    def render(self, question: Question, passages: Sequence[Passage] = (), setting: str = "none",
               group: str | None = None) -> Prompt:
        """Build the prompt for ``question`` with an optional context."""
        body = self.context_block(passages, setting) + self.instruction + "\n\nQuestion: " + question.question
        if self.format == "mc":
            body += "\n" + "\n".join(f"{LETTERS[i]}. {c}" for i, c in enumerate(question.choices))
        return Prompt(messages=({"role": "user", "content": body},), answer_prefix=ANSWER_PREFIX, group=group,
                      key=question.id)


def _titled(p: Passage) -> str:
    if p.title and not p.text.startswith(p.title):
        return f"{p.title}\n{p.text}"
    return p.text


# Bump with any change to how render() lays a prompt out.
_LAYOUT_VERSION = "layout-1"

TEMPLATES: dict[str, Template] = {
    "mc-v1": Template(
        name="mc-v1", format="mc",
        instruction=("The following is a multiple-choice question about the news. "
                     "Answer with the letter of the correct choice."),
    ),
    "open-v1": Template(
        name="open-v1", format="open",
        instruction=("Answer the following question about the news with a short answer of a few words, "
                     "on the first line."),
    ),
}
DEFAULT_TEMPLATE = {"mc": "mc-v1", "open": "open-v1"}


def get_template(name: str | None, fmt: str) -> Template:
    """The template ``name`` (default: the newest for ``fmt``), checked against the format.

    Raises:
        ConfigError: unknown name (the known ones are listed) or a template of another format.
    """
    name = name or DEFAULT_TEMPLATE.get(fmt)
    if name not in TEMPLATES:
        raise ConfigError(f"unknown template {name!r}; known: {', '.join(sorted(TEMPLATES))}")
    t = TEMPLATES[name]
    if t.format != fmt:
        raise ConfigError(f"template {name} is for --format {t.format}, not {fmt}")
    return t
