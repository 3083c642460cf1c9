"""Quality gates shared by every generator (offline and LLM), each a named ``check`` verdict.

:func:`apply_gates` runs after the programmatic checks (:mod:`okgen.generate.checks`) on every
candidate of one article, so the funnel counts each gate's failures. Gates, in order:

* ``boilerplate``: the question or its evidence sentence is page furniture, not news: a photo
  caption or credit, an author bio, an advert, a newsletter/cookie/subscribe prompt, a "read
  more"/related link, video-player text;
* ``fluency``: the stem or an option has run-together words ("WashingtonThe"), all-caps
  shouting, unbalanced quotes or brackets, or is a fragment (a stem with no verb or no question
  mark; an option starting or ending with a function word, a repeated word, a dangling initial);
* ``giveaway``: the stem contains the answer's words (that no distractor shares) or its
  initials, or the answer is the options' only outlier in form (word count, digits, capitals);
* ``type_agreement``: the question word fits the answer's type ("Who" a person or body, "Which
  company" an organisation, "How many" a count, "When" a date, "Where" a place, ...), the
  answer's type being spaCy's entity label of the answer in its evidence sentence, else of
  the answer alone, else the candidate's ``answer_type``;
* ``self_contained``: no unresolved pronoun (a stem opening with "He"/"It"/"This", a
  he/she/they with no name before it, an object him/her with nobody named before it nor a
  person named in full after it) and no bare definite description ("the company",
  "the minister") in a stem that names no one; words of a title (quoted, or a capitalised
  "That" in "Imagine That") and the person a "Who is the ...?" question asks for are none;
* ``one_answer``: the stem asks who took a stance others share ("Who called for an
  investigation into ...?", "Which country welcomed ...?"): more than one option may be right;
* ``stem_overlap``: the stem shares at most :data:`~okgen.generate.overlap.MAX_SHARED_RUN`
  consecutive ordinary (non-name) tokens with its article.

Near duplicates (within the day and against the last 7 days) and outlet balance act on the
whole day and live in :mod:`okgen.generate.dayset`.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from typing import Any

from okgen.generate import lexicon as lx
from okgen.generate.fluency import HEADLINE_PIECE, LEADING_FUNCTION_WORD, fluency_problems
from okgen.generate.nlp import option_labels as label_options
from okgen.generate.overlap import (
    MAX_SHARED_RUN,
    ArticleTokens,
    is_name_token,
    longest_shared_run,
    name_mask,
)
from okgen.generate.precision import UNRELEASED, country_giveaway, leader_giveaway, seat_giveaway
from okgen.generate.records import Candidate
from okgen.generate.sentences import PAGE_FURNITURE
from okgen.generate.text import DATE_RE
from okgen.schema import Article

GATES = ("boilerplate", "fluency", "giveaway", "type_agreement", "self_contained", "one_answer", "stem_overlap")
GATES_VERSION = 13
"""Bumped when a gate changes what it drops (part of the generation run key)."""
DEFAULT_ON = True
"""Whether runs apply the gates when ``[generate] quality_gates`` is not set."""

# A request for comment is page furniture when the question asks about it; a fact told in the
# same sentence ("Norvik, which runs the quay, ignored a request for comment") is not.
_COMMENT = re.compile(r"\breached out to .{0,80}?for (?:a )?comment\b|\brequest(?:s|ed)? for comment\b", re.IGNORECASE)
_ASKS_TITLE = re.compile(r"\b(?:title|titled|novel|book|film|movie|song|album|episode|series|show|headline|slogan|"
                         r"motto|statement|phrase|message|post|tweet|quote|catchphrase)\b", re.IGNORECASE)
_ABOUT_COMMENT = re.compile(r"\b(?:comment|respond|reply|replied|reach|contact)", re.IGNORECASE)

# At the stem's start, or at the start of a quoted statement in it ("...: \"It's now ____\"").
_PRONOUN_START = re.compile(r"(?:^|:\s*[\"\u201c'\u2018])\W*(?:he|she|they|it|it's|it\u2019s|this|these|those|his|her|their|its|him|them)\b(?!\s+(?:is|was)\s+(?:reported|said))",
                            re.IGNORECASE)
_PRONOUN = re.compile(r"\b(?:he|she|they|him|them|his|her|hers|their|theirs)\b", re.IGNORECASE)
# A pronoun as the subject of the question ("did he", "will they"); "Who said he ..." asks of him.
_SUBJECT_PRONOUN = re.compile(r"\b(?:did|does|do|is|was|were|are|will|would|has|have|had|can|could|should)\s+"
                              r"(he|she|they|it(?!\s+(?:take|takes|took|cost|costs|be|been|mean|seem|appear)\b))\b",
                              re.IGNORECASE)  # a dummy "it" ("How long will it take to ...") refers to nothing
_ASKS_PERSON = re.compile(r"\W*(?:who|whom|whose|which (?:person|man|woman))\b", re.IGNORECASE)
_DANGLING = re.compile(r"\b(?:this|that|these|those)\s*(?:[,?.!;:]|$)", re.IGNORECASE)
_META_THIS = re.compile(r"\bthis (?:statement|sentence|question|quote|passage)\b", re.IGNORECASE)
_PERSON_ROLES = ("minister|president|official|man|woman|boy|girl|victim|suspect|star|player|singer|actor|actress|"
                 "chief executive|leader|driver|spokesman|spokeswoman|spokesperson|lawmaker|senator|governor|mayor|"
                 "couple|coach|judge|director|founder")
_ORG_ROLES = "company|firm|group|team|club|organi[sz]ation|agency|party|brand|retailer|carmaker|band|startup|platform"
_PLACE_ROLES = "country|city|town|region"
# "the company", "the British actor": a definite description needing a name of its kind in the stem.
_DEFINITE = re.compile(rf"\bthe (?:[a-z]+ |[A-Z][a-z]+ )?(?:(?P<person>{_PERSON_ROLES})|(?P<org>{_ORG_ROLES})|"
                       rf"(?P<place>{_PLACE_ROLES}))\b(?!\s+(?:of|in|at|for)\s+[A-Z])", re.IGNORECASE)
# "Who called for a hearing into ...?", "Which senator urged ...": the asked-for one is the subject
# of a stance others share (the offline generator's ``stance_shared``); reviewers found the second
# right answer. "Whom did Trump praise?" asks for the stance's object: one answer.
_STANCE = (r"urg(?:e|es|ed|ing)|demand(?:s|ed|ing)?(?!\s+[$\u00a3\u20ac\d])|critici[sz](?:e|es|ed|ing)|"
           r"condemn(?:s|ed|ing)?|prais(?:e|es|ed|ing)|welcom(?:e|es|ed|ing)(?!\s+back\b(?!-)|\s+(?:a|an|the|its)\s+(?:new\s+)?"
           r"(?:baby|babies|cub|calf|foal|birth|arrival))|(?:slam(?:s|med|ming)?|blast(?:s|ed|ing)?)"
           r"(?!\s+(?:into|off|through|past|home|out|\w+\s+goals?)\b)|denounc(?:e|es|ed|ing)|decr(?:y|ies|ied|ying)|"
           r"applaud(?:s|ed|ing)?|hail(?:s|ed|ing)?|endors(?:e|es|ed|ing)|oppos(?:e|es|ed|ing)|lambast(?:s|ed|ing)?|"
           r"commend(?:s|ed|ing)?|call(?:s|ed|ing)?\s+(?:for|on)|push(?:es|ed|ing)?\s+for|hit(?:s|ting)?\s+back\s+at|"
           r"t(?:ake|akes|ook|aking|aken)\s+aim\s+at|"
           r"back(?:s|ed|ing)?\s+(?:(?:the|a|an)\s+)?(?:idea|calls?|plans?|proposals?|efforts?|moves?|bills?|push|"
           r"measures?|decision|candidacy)\b")
_STANCE_SUBJECT = re.compile(
    r"^\W*(?:(?:on|as of|in|by|after|before|following|during)\b[^?]{0,120}?,?\s+)?"
    r"(?P<wh>who(?:\s+among\s+(?:the\s+)?[\w'\u2019-]+)?|(?:which|what)"
    r"(?!\s+(?:percentage|percent)\b|\s+(?:share|proportion|number|fraction|portion|majority|minority|amount|part)"
    r"\s+of\b)"
    r"(?:\s+[\w'\u2019.-]+){1,6}?)"
    r"(?:\s*,\s*(?:on|as of|in|by|after|before)\b[^?]{1,80}?,)?\s+"
    r"(?P<aux>(?:(?:has|have|had|is|are|was|were|been|be|also|publicly|openly|strongly|sharply|repeatedly|first|later|then|"
    r"quick|quickest|to|and|broke|ranks)\s+)*)"
    rf"(?P<verb>{_STANCE})\b", re.IGNORECASE)
_ROLE_LABELS = {"person": frozenset(["PERSON"]), "org": frozenset(["ORG", "NORP"]), "place": frozenset(["GPE", "LOC"])}
_NAME_LABELS = frozenset(["PERSON", "ORG", "GPE", "NORP", "LOC", "FAC", "EVENT", "PRODUCT", "WORK_OF_ART", "LAW"])

PERSON, ORG, PLACE, DATE = frozenset(["PERSON"]), frozenset(["ORG"]), frozenset(["GPE", "LOC", "FAC"]), frozenset(["DATE", "TIME"])
COUNT, MONEY = frozenset(["CARDINAL", "QUANTITY"]), frozenset(["MONEY"])
# (pattern, accepted spaCy labels, what the question asks for). The earliest match in a stem wins.
_QWORDS: tuple[tuple[re.Pattern[str], frozenset[str], str], ...] = tuple(
    (re.compile(p, re.IGNORECASE), labels, what) for p, labels, what in [
        # "For how many years ...": a duration is a DATE entity ("six years").
        (r"\bhow many (?:years|months|weeks|days|hours|minutes|decades|centuries|seasons)\b", COUNT | DATE,
         "a count"),
        (r"\bhow many\b", COUNT, "a count"),
        (r"\bhow much\b", MONEY | COUNT | frozenset(["PERCENT"]), "an amount"),
        (r"\bhow (?:high|large|big) an?\b", MONEY | frozenset(["PERCENT"]), "an amount"),
        (r"\b(?:what|which) (?:percentage|percent|share|proportion)\b", frozenset(["PERCENT"]), "a percentage"),
        (r"\b(?:on|by) (?:what|which) (?:date|day)\b|\bin (?:what|which) (?:year|month)\b|"
         r"\b(?:what|which) (?:date|day|year|month)\b|\bwhen (?:did|will|does|is|was|were|are|do|has|have|had|can|could|would|should)\b",
         DATE, "a date"),
        (r"\b(?:what|which) (?:amount|sum|price|cost|fee|fine|salary|budget|valuation)\b", MONEY | COUNT, "an amount"),
        (r"\b(?:what|which) (?:company|firm|organi[sz]ation|agency|bank|team|club|body|union|institution|department|"
         r"ministry|regulator|network|outlet|newspaper|broadcaster|airline|carmaker|manufacturer|retailer|brand|charity|"
         r"university|league|group|party|court)\b", ORG | frozenset(["NORP"]), "an organisation"),
        (r"\b(?:what|which) (?:country|nation)\b", frozenset(["GPE"]), "a country"),
        (r"\b(?:what|which) (?:city|town|village|state|province|region|county|capital|place|island|territory|area)\b",
         PLACE, "a place"),
        # "Where" may be answered by an institution ("at St Mary's Hospital"). "When" and "Where"
        # ask only with a verb after them: "When the watch went on sale, what was its price?" asks a price.
        (r"\bwhere (?:did|will|does|is|was|were|are|do|has|have|had|can|could|would|should)\b", PLACE | ORG, "a place"),
        (r"\b(?:what|which) (?:person|official|minister|president|leader|politician|player|actor|actress|singer|"
         r"executive|ceo|chief|director|manager|coach|judge|senator|lawmaker|spokesperson|spokesman|spokeswoman|author|"
         r"founder|candidate|artist|athlete|footballer|driver|journalist|reporter|envoy|ambassador|secretary|"
         r"chancellor|governor|mayor|king|queen|prince|princess|pope|man|woman|rapper|musician|star|billionaire)\b",
         PERSON, "a person"),
        (r"\b(?:what|which) (?:number|figure|total|count)\b", COUNT | MONEY | frozenset(["PERCENT", "DATE", "ORDINAL"]),
         "a number"),
        # Only a stem opening with "Who": inside a stem, "who was" is mostly a relative clause.
        (r"^\W*(?:who|whom|whose)\b",
         PERSON | ORG | frozenset(["NORP"]), "a person or body"),
    ])
# Question words always written capitalised at a stem's start ("Which", "What", "How", "When"...):
# the last word of a match that is one of these is no name.
_QWORD_HEADS = frozenset(["many", "much", "who", "whom", "whose", "when", "where", "what", "which", "how"])
# The candidate's own answer_type, when no entity label is found, as spaCy labels.
_TYPE_LABELS = {"person": "PERSON", "org": "ORG", "organisation": "ORG", "organization": "ORG", "place": "GPE",
                "gpe": "GPE", "loc": "LOC", "location": "LOC", "country": "GPE", "city": "GPE", "date": "DATE",
                "year": "DATE", "time": "TIME", "count": "CARDINAL", "number": "CARDINAL", "cardinal": "CARDINAL",
                "quantity": "QUANTITY", "money": "MONEY", "amount": "MONEY", "percent": "PERCENT",
                "percentage": "PERCENT", "event": "EVENT", "work": "WORK_OF_ART", "norp": "NORP", "fac": "FAC"}
_SHAPE = ((re.compile(r"%|\bper ?cent\b", re.I), "PERCENT"), (re.compile(r"[$€£¥]|\b(?:dollars?|euros?|pounds)\b", re.I), "MONEY"),
          (re.compile(r"\b(?:1[89]|20)\d\d\b|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b", re.I), "DATE"),
          (re.compile(r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|dozens?|hundreds?|thousands?|millions?)\b", re.I), "CARDINAL"))
_STOP = frozenset(["a", "an", "the", "of", "in", "on", "at", "to", "for", "by", "with", "from", "and", "or", "as", "is", "was", "were", "be", "been", "are", "its", "his", "her", "their", "this", "that", "these", "those", "who", "what", "which", "when", "where", "how", "de", "la", "le", "van", "von", "al", "el"])
_WORDS = re.compile(r"[\w$€£%]+(?:['\u2019]\w+)?")
# The gates read entities and the tagger's fine tags only.
_DISABLE = ("parser", "lemmatizer", "attribute_ruler")
# The answer contexts need entities only (the shared embedding layer too where the entity
# recogniser listens to it; en_core_web_sm's has its own).
_NER_ONLY = ("tagger", "parser", "lemmatizer", "attribute_ruler")
_LABELS = frozenset(["PERSON", "NORP", "FAC", "ORG", "GPE", "LOC", "PRODUCT", "EVENT", "WORK_OF_ART", "LAW", "LANGUAGE",
                     "DATE", "TIME", "PERCENT", "MONEY", "QUANTITY", "ORDINAL", "CARDINAL"])


def apply_gates(article: Article, candidates: Sequence[Candidate], *, nlp: Any = None) -> None:
    """Record every gate's verdict on each candidate of one article (the first failure rejects).

    Candidates already rejected by a check are skipped (the funnel names their first failure);
    each other candidate gets every gate, so the funnel counts each gate's failures.

    Args:
        article: the candidates' article.
        candidates: its candidates.
        nlp: the spaCy pipeline (default: :func:`okgen.generate.nlp.load_pipeline`).

    Raises:
        ConfigError: spaCy or its pipeline is not installed.
    """
    apply_gates_many([(article, candidates)], nlp=nlp)


def apply_gates_many(jobs: Sequence[tuple[Article, Sequence[Candidate]]], *, nlp: Any = None) -> None:
    """:func:`apply_gates` on the candidates of several articles, with one batched parse.

    Each stem is parsed once (tagger and entities: the gates read its fine tags and names), each
    answer context once with the entity recogniser alone (its own embedding layer: the
    entities are the same as with the tagger on), and only where ``type_agreement`` reads its
    label (the stem asks for a type of answer); a text asked twice is parsed once, an option's
    fluency judged once.
    """
    todo = [(a, c) for a, cands in jobs for c in cands if c.kept]
    if not todo:
        return
    if nlp is None:
        from okgen.generate.nlp import load_pipeline

        nlp = load_pipeline()
    stems = _parse(nlp, [c.question for _, c in todo], _DISABLE)
    typed = [c for _, c in todo if _norm(c.answer) and asks_type(c.question)]
    contexts = dict(zip(map(id, typed), _parse(nlp, [_context(c) for c in typed], _ner_only(nlp))))
    # The options of a stem asking for a person or an organisation, each labelled (option_labels): the
    # writer's own distractors say what kind of answer it meant.
    kinds = [c for c in typed if _asks_actor(c.question)]
    texts = [x for c in kinds for x in c.distractors()]
    distinct = list(dict.fromkeys(texts))
    labels = dict(zip(distinct, label_options(nlp, distinct, _ner_only(nlp))))
    option_labels = {id(c): [labels[x] for x in c.distractors()] for c in kinds}
    wanted: dict[int, set[str]] = {}  # per article, the tokens of its stems (all its index needs)
    for a, c in todo:
        wanted.setdefault(id(a), set()).update(tok for tok, _ in name_mask(c.question))
    index: dict[int, ArticleTokens] = {}
    fluency: dict[str, list[str]] = {}
    for (a, c), stem_doc in zip(todo, stems):
        if id(a) not in index:
            index[id(a)] = ArticleTokens(f"{a.title}\n{a.text}", only=wanted[id(a)])
        gate_candidate(c, stem_doc, answer_label(c, contexts.get(id(c))), index[id(a)], nlp, fluency,
                       option_labels.get(id(c)), around=furniture_around(a.text, c.evidence))


# A photo credit in brackets: "(Jane Doe/AFP via Getty Images)", "(AP Photo/John Doe)", "(Photo: ...)";
# not an attribution ("(Reuters)") nor an aside ("(Credit Suisse had collapsed)").
_CREDIT = re.compile(r"\s*(\([^()]{0,80}(?:[A-Za-z]/[A-Z]|\bvia Getty\b|\bGetty Images\b|\bAP Photo\b|"
                     r"\bPhoto(?: by|:))[^()]{0,60}\))")


# An author's bio line: a name, then "is a (senior) reporter/writer/editor ... at/for/with/on".
_BIO = re.compile(r"(?:^|(?<=[.!?\"\u201d])\s+)(?:[A-Z][\w'\u2019.-]*\s+){1,3}is\s+(?:an?\s+|the\s+)?(?:[\w-]+\s+){0,4}"
                  r"(?:writer|reporter|correspondent|editor|producer|contributor|journalist|columnist|freelancer|"
                  r"production assistant)s?\s+(?:at|for|with|on)\b")
BIO_TAIL = 800  # an author's bio line starts within this many characters of the article's end ...
BIO_SPAN = 600  # ... and the evidence within this many after it ("She grew up in Ohio and studied at ...")


def furniture_around(text: str, evidence: str) -> str | None:
    """What makes the evidence sentence page furniture by where it stands in the article's text,
    or None: the photo credit right after it (a caption: "X speaks alongside Y ... on April
    2.(Name/AFP via Getty Images)"), or an author's bio at the article's end that it belongs to
    ("Jane Doe is a reporter for ... She graduated from ...")."""
    ev = evidence.strip()
    i = text.find(ev) if len(ev) >= 20 else -1
    if i < 0:
        return None
    m = _CREDIT.match(text, i + len(ev))
    if m:
        return f"a photo caption (then {m.group(1)!r})"
    b = _BIO.search(text, max(0, len(text) - BIO_TAIL, i - BIO_SPAN), i + len(ev))
    return f"the author's bio ({b.group(0).strip()!r})" if b else None


def _ner_only(nlp: Any) -> tuple[str, ...]:
    """The components to disable for entities alone."""
    ner = nlp.get_pipe("ner") if "ner" in nlp.pipe_names else None
    listens = ner is None or any(n.name.endswith("listener") for n in ner.model.walk())
    return _NER_ONLY if listens else (*_NER_ONLY, "tok2vec")


def _parse(nlp: Any, texts: list[str], disable: tuple[str, ...]) -> list[Any]:
    """One ``nlp.pipe`` over the distinct ``texts``; a Doc per text, in order."""
    distinct = list(dict.fromkeys(texts))
    docs = dict(zip(distinct, nlp.pipe(distinct, disable=[p for p in disable if p in nlp.pipe_names], batch_size=256)))
    return [docs[t] for t in texts]


class GateWorker:
    """The gates of a run's articles, off the event loop: ``await worker.apply(article,
    candidates)`` queues them, and one worker thread gates what is queued in one batch
    (:func:`apply_gates_many`; the articles that arrive while a batch runs make the next), so
    the loop keeps sending and reading calls while spaCy parses.

    Args:
        nlp: the spaCy pipeline (default: :func:`okgen.generate.nlp.load_pipeline`, loaded in
            the worker thread; :meth:`warm` starts loading it while the first calls are out).
    """

    max_batch = 16  #: articles gated in one batch at most (the first ones then reach their validator sooner)

    def __init__(self, nlp: Any = None):
        self.nlp = nlp
        self._queue: list[tuple[Article, Sequence[Candidate], asyncio.Future[None]]] = []
        self._worker: asyncio.Task[None] | None = None

    def warm(self) -> None:
        """Start loading the pipeline and its word list in the worker thread now."""
        if self._worker is None or self._worker.done():
            self._worker = asyncio.create_task(self._drain())

    async def apply(self, article: Article, candidates: Sequence[Candidate]) -> None:
        """Gate one article's candidates (like :func:`apply_gates`), in the worker thread."""
        if not any(c.kept for c in candidates):
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._queue.append((article, candidates, fut))
        self.warm()
        await fut

    async def _drain(self) -> None:
        if self.nlp is None:
            try:
                _import_spacy()  # here, in the loop's thread: see _import_spacy
                self.nlp = await asyncio.to_thread(_load)
            except Exception as e:  # noqa: BLE001 - spaCy missing: raised in every waiting article
                self._settle(self._queue, e)
                self._queue = []
                return
        while self._queue:
            batch, self._queue = self._queue[:self.max_batch], self._queue[self.max_batch:]
            try:
                await asyncio.to_thread(apply_gates_many, [(a, c) for a, c, _ in batch], nlp=self.nlp)
            except Exception as e:  # noqa: BLE001 - raised in each article of the batch
                self._settle(batch, e)
            else:
                self._settle(batch, None)

    @staticmethod
    def _settle(batch: list[tuple[Article, Sequence[Candidate], asyncio.Future[None]]], error: Exception | None) -> None:
        for _, _, fut in batch:
            if not fut.done():
                fut.set_exception(error) if error is not None else fut.set_result(None)


def _import_spacy() -> None:
    """Import spaCy in the calling thread. Importing it imports httpx (through weasel), which the
    model clients on the event loop use: imported in the worker thread while the loop's first
    calls go out, an article's call could see httpx half-initialised ("partially initialized
    module 'httpx' has no attribute 'Timeout'") and stay pending. Missing, spaCy is reported by
    the pipeline loader with its install command."""
    try:
        import spacy  # noqa: F401
    except ImportError:
        pass


def _load() -> Any:
    from okgen.generate.nlp import load_pipeline

    nlp = load_pipeline()
    fluency_problems("", nlp)  # builds its word list once
    return nlp


def gate_candidate(c: Candidate, stem_doc: Any, label: str | None, index: ArticleTokens, nlp: Any,
                   fluency: dict[str, list[str]] | None = None, option_labels: Sequence[str] | None = None,
                   around: str | None = None) -> None:
    """Apply the gates to one candidate, given its parsed stem and its answer's entity label
    (``fluency``: options' fluency problems already known, filled in; ``option_labels``: the
    entity labels of its distractors (``option_labels``), for a stem asking for a person or a body;
    ``around``: what makes the evidence furniture by where it stands in the article, as
    :func:`furniture_around` says)."""
    hit = (PAGE_FURNITURE.search(c.question) or PAGE_FURNITURE.search(c.evidence) or _COMMENT.search(c.question)
           or (_ABOUT_COMMENT.search(c.question) and _COMMENT.search(c.evidence)))
    why = f"page furniture: {hit.group(0)!r}" if hit else around
    c.add("boilerplate", why is None, reason=why)
    problems = stem_problems(c.question, stem_doc, nlp)
    fluency = {} if fluency is None else fluency
    # Options that all open with one word ("in the fall", "in the spring") share a form, not a cut;
    # a title or a statement asked for may read like a headline ("Killing Floor", "End copyright now").
    firsts = {x.split()[0].lower() for x in c.choices if x.split()}
    titles = _ASKS_TITLE.search(c.question) is not None
    for x in c.choices:
        if x not in fluency:
            fluency[x] = fluency_problems(x, nlp, option=True)
        problems += [f"option {x!r}: {p}" for p in fluency[x]
                     if not (p == LEADING_FUNCTION_WORD and len(firsts) == 1 and len(c.choices) > 1)
                     and not (titles and p == HEADLINE_PIECE)]
    c.add("fluency", not problems, reason="; ".join(problems[:3]) or None)
    why = giveaway(c)
    c.add("giveaway", why is None, reason=why)
    why = type_disagreement(c.question, label, stem_doc) or options_disagreement(c.question, c.distractors(),
                                                                                  option_labels, stem_doc) \
        or city_for_country(c.question, c.answer, stem_doc)
    c.add("type_agreement", why is None, reason=why)
    why = unresolved_reference(c.question, stem_doc)
    c.add("self_contained", why is None, reason=why)
    why = shared_stance(c.question, stem_doc)
    c.add("one_answer", why is None, reason=why)
    run = longest_shared_run(c.question, index, doc=stem_doc)
    c.add("stem_overlap", run <= MAX_SHARED_RUN,
          reason=None if run <= MAX_SHARED_RUN else f"shares {run} consecutive non-name tokens with the article")


def shared_stance(stem: str, doc: Any = None) -> str | None:
    """Why a stem may have more than one right answer: it asks who took a stance ("called for",
    "urged", "praised", "condemned", "hit back at") that others may share; else None. With the
    stem's tagged ``doc``, a verb inside the asked-for phrase ("Which minister faced calls for
    ...": she is the stance's target) means no."""
    m = _STANCE_SUBJECT.match(stem)
    if m is None or (re.search(r"\b(?:is|are|was|were|been|be)\s+$", m.group("aux"), re.IGNORECASE)
                     and re.match(r"\w+ed\b", m.group("verb"))):
        return None  # "Who was called on to resign?": the passive's subject is the target
    if doc is not None:
        a, b = m.span("wh")
        if any(t.tag_.startswith("VB") and a <= t.idx < b for t in doc):
            return None
    return f"asks who took a stance others may share ({m.group('verb')!r}): more than one option may be right"


def stem_problems(stem: str, doc: Any, nlp: Any) -> list[str]:
    """Fluency problems of a stem: the shared rules, plus a fragment with no verb or no '?'."""
    out = fluency_problems(stem, nlp)
    s = stem.strip()
    if s and not s.rstrip("\"'\u201d)").endswith("?") and "____" not in s:
        out.append("the stem is not a question (no '?')")
    if doc is not None and not any(t.tag_.startswith("VB") or t.tag_ == "MD" for t in doc):
        out.append("the stem has no verb")
    return out


def _context(c: Candidate, width: int = 80) -> str:
    """The answer in its evidence sentence, cut to ``width`` characters each side (the answer
    alone when the evidence does not contain it)."""
    i = c.evidence.find(c.answer.strip()) if c.answer.strip() else -1
    if i < 0:
        return c.answer
    return c.evidence[max(0, i - width): i + len(c.answer.strip()) + width]


def answer_label(c: Candidate, context_doc: Any = None) -> str | None:
    """The answer's spaCy entity label in its parsed context (the evidence sentence around the
    answer, or the answer alone), else the candidate's own ``answer_type``, else guessed from
    its shape (digits, currency, %); None when unknown. A country the tagger calls a person
    ("Malawi, facing 18% tariffs, bought ...") is a GPE when its options are countries too."""
    label = _answer_label(c, context_doc)
    if label == "PERSON" and c.answer.strip() in lx.COUNTRIES and (c.answer_type or "").upper() != "PERSON" \
            and sum(x.strip() in lx.COUNTRIES for x in c.distractors()) >= 2:
        return "GPE"  # not "Jordan" (Jim Jordan) against other people
    return label


def _answer_label(c: Candidate, context_doc: Any = None) -> str | None:
    ans = _norm(c.answer)
    if not ans:
        return None
    for doc in (context_doc,):
        best, overlap = None, 0.0
        for e in getattr(doc, "ents", ()):
            en = _norm(e.text)
            if en == ans:
                return e.label_
            if en and (en in ans or ans in en):
                o = min(len(en), len(ans)) / max(len(en), len(ans))
                if o > overlap:
                    best, overlap = e.label_, o
        if best is not None and overlap >= 0.5:
            return best
    t = (c.answer_type or "").strip()
    if t.lower() in _TYPE_LABELS:
        return _TYPE_LABELS[t.lower()]
    if t.upper() in _LABELS:
        return t.upper()
    for rx, label in _SHAPE:
        if rx.search(c.answer):
            return label
    return None


def asks_type(stem: str) -> bool:
    """True when the stem's question word asks for a type of answer (:func:`type_disagreement`
    reads the answer's label only then)."""
    return _question_word(stem) is not None


def _question_word(stem: str, doc: Any = None) -> tuple[frozenset[str], str] | None:
    """The labels the stem's earliest question word accepts and what it asks for, or None. A
    type noun written capitalised is part of a name, not the question's ("which Office of
    Budget Review adviser" asks for a person, not an office). With the stem's tagged ``doc``, a
    type noun that only modifies the noun after it is not the question's either: "Which
    executive order number" asks for a number, "which party leader" for a person, "which
    company shares" for nothing the gates know; "Which party's candidate" still asks for a party."""
    hits = []
    for rx, labels, what in _QWORDS:
        m = next((m for m in rx.finditer(stem) if not m.group(0).split()[-1][:1].isupper()
                  or m.group(0).split()[-1].lower() in _QWORD_HEADS), None)
        if m:
            hits.append((m.start(), m.end(), labels, what))
    if not hits:
        return None
    start, end, labels, what = min(hits, key=lambda h: h[0])
    head = _head_noun(doc, end) if doc is not None and re.search(r"\b(?:what|which)\b", stem[start:end], re.I) else None
    if head is None:
        return labels, what
    for rx, labels2, what2 in _QWORDS:
        if rx.fullmatch(f"which {head}"):
            return labels2, what2
    return None  # "which company shares": a noun the gates have no type for


def _head_noun(doc: Any, end: int) -> str | None:
    """The noun heading the phrase whose type noun ends at character ``end`` of the tagged stem,
    when a later common noun heads it ("executive order number": "number"); else None."""
    toks = [t for t in doc if t.idx >= end]
    head = None
    for k, t in enumerate(toks[:3]):
        if t.tag_ not in ("NN", "NNS") or not t.text[:1].islower() or t.lower_ in _TIME_NOUNS:
            break  # "which party's candidate": the possessor is asked for; "which company today ..."
        nxt = toks[k + 1] if k + 1 < len(toks) else None
        if nxt is not None and not (nxt.tag_ in ("NN", "NNS", "MD", ".", ",", "WDT", "WP") or nxt.tag_.startswith("VB")):
            break  # "Which country borders Ukraine": a verb the tagger read as a noun
        head = t.lower_[:-1] if t.tag_ == "NNS" and t.lower_.endswith("s") else t.lower_  # "party leaders"
    return head


_TIME_NOUNS = frozenset({"today", "yesterday", "tonight", "tomorrow", "week", "weekend", "year", "month", "morning",
                         "afternoon", "evening", "night"})


# What a stem asking for a person is not, and one asking for an organisation: a writer whose
# options are of that kind meant the other ("Which person bought British Steel?": Jingye, Tata
# Steel, Greybull Capital).
_OTHER_ACTOR = {"a person": ORG, "an organisation": PERSON}


def _asks_actor(stem: str) -> bool:
    """Whether the stem's question word asks for a person or for an organisation ("Who" asks
    for either)."""
    got = _question_word(stem)
    return got is not None and got[1] in _OTHER_ACTOR


def options_disagreement(stem: str, distractors: Sequence[str], labels: Sequence[str] | None,
                         doc: Any = None) -> str | None:
    """Why the stem's question word does not fit the kind of answer its own options are: at
    least two of the distractors (labelled by ``option_labels``) are organisations under "Which person ..." (or
    people under "Which company ..."), and none is of the kind asked; else None."""
    got = _question_word(stem, doc) if labels else None
    if got is None or got[1] not in _OTHER_ACTOR:
        return None
    labels_, what = got
    other = [d for d, lab in zip(distractors, labels) if lab in _OTHER_ACTOR[what]]
    if len(other) < 2 or any(lab in labels_ for lab in labels):
        return None
    kind = "organisations" if _OTHER_ACTOR[what] is ORG else "people"
    return f"the question asks for {what} but its options are {kind} ({', '.join(other[:3])})"


def type_disagreement(stem: str, label: str | None, doc: Any = None) -> str | None:
    """Why the stem's question word does not fit an answer labelled ``label`` (None: it fits,
    or the stem asks for no particular type, or the label is unknown; ``doc``: the stem tagged,
    see :func:`_question_word`)."""
    got = _question_word(stem, doc) if label is not None else None
    if got is None:
        return None
    labels, what = got
    if label in labels:
        return None
    return f"the question asks for {what} but the answer is {label}"


def city_for_country(stem: str, answer: str, doc: Any = None) -> str | None:
    """Why a stem asking for a country has a city for its answer (both are GPEs to spaCy:
    "Which country did Putin host Witkoff in?" with St. Petersburg), else None."""
    a = answer.strip()
    got = _question_word(stem, doc)
    if got is None or got[1] != "a country" or a in lx.COUNTRIES or a in lx.geo_countries():
        return None  # not Monaco, San Marino: countries and cities at once
    if a in lx.CITIES or lx.world_places().get(a) == "city":
        return f"the question asks for a country but the answer {a!r} is a city"
    return None


# A quoted title, straight or curly, single or double ("'Imagine That: The Lost Recordings'"):
# a straight single quote opens after no letter and closes before none (not "Cline's", "players'").
_QUOTED = re.compile(r"(?<![\w'])'(?=\S)[^'\n]{1,160}?(?<=\S)'(?!\w)|\u2018[^\u2018\n]{1,160}?\u2019(?!\w)"
                     r"|\"[^\"\n]{1,160}\"|\u201c[^\u201c\u201d\n]{1,160}\u201d")
# A quote right after a colon is a statement quoted ("...: \"It's now ____\""), not a title: its
# pronouns are the speaker's and still need a referent.
_STATEMENT = re.compile(r":\s*$")
_TITLE_WORD = re.compile(r"\b(?:This|That|These|Those|He|She|They|It|Him|Her|His|Their|Them|Its)\b")
_CAPITALISED = re.compile(r"[A-Z]")
# "Who is the military leader seeking ...?": the description is what is asked for, not a reference.
_WHO_IS = re.compile(r"^\W*(?:(?:on|as of|in|by|after|before|following|during)\b[^?]{0,80}?,\s*)?"
                     r"who\s+(?:is|was|are|were)\s+(?=the\b)", re.IGNORECASE)


def hide_titles(stem: str) -> tuple[str, list[tuple[int, int]]]:
    """The stem with the words of titles blanked out (same length, so offsets still hold), and
    the quoted titles' spans: quoted text (not a statement quoted after a colon), and a pronoun
    or demonstrative written capitalised inside a run of capitalised words ("Imagine That",
    "Call Her Home"). Their "That" or "Her" points at nothing outside the title."""
    out = list(stem)
    titles: list[tuple[int, int]] = []
    for m in _QUOTED.finditer(stem):
        if _STATEMENT.search(stem[:m.start()]):
            continue
        titles.append(m.span())
        for i in range(m.start() + 1, m.end() - 1):
            if stem[i].isalnum():
                out[i] = "x"
    first = re.match(r"\W*\w+", stem)
    for m in _TITLE_WORD.finditer(stem):
        if first is not None and m.start() < first.end():
            continue  # the stem's first word is capitalised anyway
        before = re.search(r"([\w'\u2019-]+)[ \t]+$", stem[:m.start()])
        after = re.match(r"[ \t]+([\w'\u2019-]+)", stem[m.end():])
        prev_cap = before is not None and _CAPITALISED.match(before.group(1)) is not None and (
            first is None or before.start(1) >= first.end())  # "Which That ...": the question word is no title
        next_cap = after is not None and _CAPITALISED.match(after.group(1)) is not None
        if prev_cap or next_cap:
            out[m.start():m.end()] = "x" * (m.end() - m.start())
    return "".join(out), titles


def unresolved_reference(stem: str, doc: Any) -> str | None:
    """Why the stem cannot stand alone (None: it can). Words of a title (:func:`hide_titles`)
    are not read as references, and a quoted title is a name."""
    written = stem
    stem, titles = hide_titles(stem)
    body = _META_THIS.sub("", stem)
    m = _PRONOUN_START.search(body)
    if m:
        return f"opens with the pronoun {m.group(0).strip()!r}"
    names = [(e.start_char, e.end_char) for e in getattr(doc, "ents", ()) if e.label_ in _NAME_LABELS]
    names += [(t.idx, t.idx + len(t)) for t in (doc if doc is not None else ()) if is_name_token(t) and t.i > 0]
    names += [(a, b) for a, b in titles if re.match(r"\W*[A-Z0-9]", written[a + 1:b])]  # 'Whatever That Means'
    dangling = _DANGLING.search(body)
    if dangling:
        return f"{dangling.group(0).strip(' ,?.!;:')!r} points at nothing in the question"
    unreleased = UNRELEASED.search(body)
    if unreleased:  # "the upcoming Blackwell GPU": which one? its article named it elsewhere
        return f"{unreleased.group(0)!r} names a thing only as not yet out"
    p = _PRONOUN.search(stem)
    if p and not names:  # a name after the pronoun may resolve it too ("As part of his routine, X ...")
        return f"{p.group(0)!r} refers to no one named in the question"
    s = _SUBJECT_PRONOUN.search(stem)
    if s and not _ASKS_PERSON.match(stem) and not any(start < s.start(1) for start, _ in names):
        # "By how many points did he lead Max Verstappen?": the question is about him, whom no
        # earlier name introduces (a name after it is another person).
        return f"{s.group(1)!r} refers to no one named before it"
    ents = list(getattr(doc, "ents", ()))
    for t in doc if doc is not None else ():
        # "Who helped him into the green jacket?": an object is not the one asked for (that is
        # "himself"), so it is someone the question has to name before it.
        if t.lower_ in ("him", "her") and t.tag_ == "PRP" and stem[t.idx:t.idx + len(t)] == t.text \
                and not any(start < t.idx for start, _ in names) \
                and not any(e.label_ == "PERSON" and len(e) >= 2 and e.start > t.i for e in ents):
            # A person named in full after it may be its referent ("Which club signed her on
            # loan, according to Jane Doe?"); one word is not enough (the small model tags
            # "Rotterdam" a person).
            return f"{t.text!r} refers to no one named in the question"
    for d in _DEFINITE.finditer(stem):
        kind = next(k for k in ("person", "org", "place") if d.group(k))
        if d.group(kind)[:1].isupper() and re.match(r"\s+[A-Z]", stem[d.end():]):
            continue  # "the Surf City El Salvador Pro": the role word is inside a name ("the President" is none)
        who = _WHO_IS.match(stem)
        if kind == "person" and who is not None and who.end() == d.start() and not re.match(r"['\u2019]s\b", stem[d.end():]):
            continue  # "Who is the military leader seeking ...?" asks who he is ("Who is the minister's aide?" does not)
        # What it refers to is named before it, or right after it ("the carmaker Nissan", "the
        # carmaker, Nissan,"): "the parent company" before "the British government" is not the government.
        if not any(e.label_ in _ROLE_LABELS[kind] and e.start_char <= d.end() + 2 for e in ents):
            return f"{d.group(0)!r} with no {kind} named in the question"
    if not names:
        return "the question names no person, organisation, place or event"
    return None


def giveaway(c: Candidate) -> str | None:
    """Why the stem or the options' form gives the answer away (None: they do not)."""
    answer = c.answer.strip()
    others = c.distractors()
    # The stem's date says when, not what: its "12" is no giveaway of a 6-12 record (unless the
    # answer is a date itself).
    stem = c.question if DATE_RE.search(answer) else DATE_RE.sub(" ", c.question)
    stem_words = {w.lower() for w in _WORDS.findall(stem)}
    other_words = {w.lower() for x in others for w in _WORDS.findall(x)}
    # A name's short number ("Sigil 2", with "Doom 2" in the stem) says little; a figure's says
    # all, with its unit too ("1.5-inch": "inch" names nothing).
    named = any(len(w) >= 3 and w.isalpha() and w[:1].isupper() for w in _WORDS.findall(answer))
    for w in _WORDS.findall(answer):
        lw = w.lower()
        number = lw.isdigit() and not (named and len(lw) <= 2)
        if lw not in _STOP and ((len(lw) >= 3 and not lw.isdigit()) or number) and lw in stem_words \
                and lw not in other_words:
            return f"the stem contains {w!r} from the answer"
    initials = "".join(w[0] for w in answer.split() if w[:1].isupper() and w.lower() not in _STOP)
    if len(initials) >= 2 and re.search(rf"\b{re.escape(initials)}\b", c.question):
        return f"the stem contains the answer's initials {initials!r}"
    for acronym in re.findall(r"\(([A-Z]{2,6})\)", c.question):  # "The Federal ____ (FAA)"
        if len(initials) >= 2 and initials in acronym:
            return f"the stem's {acronym!r} spells the answer's initials {initials!r}"
    word = country_giveaway(c.question, answer, others)
    if word is not None:  # "Egyptian mediators" with the answer "Egypt" or "Cairo"
        return f"the stem's {word!r} names the answer's country"
    leader = leader_giveaway(c.question, answer, c.evidence, others)
    if leader is not None:  # "met Vladimir Putin", with "Russian President Vladimir Putin" in the source
        return f"the stem's {leader!r} is titled with the answer's country"
    seat = seat_giveaway(c.question, answer, c.evidence)
    if seat is not None:  # "met ... in the Oval Office" with the answer "Donald Trump"
        return f"the stem's {seat!r} names the answer's office"
    if answer.isupper() and 2 <= len(answer) <= 6 and answer.isalpha():
        caps = re.findall(r"\b[A-Z][a-z]+(?:\s+(?:of|for|and|the)?\s*[A-Z][a-z]+)+", c.question)
        for phrase in caps:
            if "".join(w[0] for w in phrase.split() if w[0].isupper()) == answer:
                return f"the stem spells out the answer {answer!r} ({phrase!r})"
    if len(others) >= 2:
        shape = _shape(answer)
        shapes = {_shape(x) for x in others}
        if len(shapes) == 1 and shape not in shapes:
            return f"the answer is the only option of its form ({_describe(shape)})"
        counts = {len(x.split()) for x in others}
        if len(counts) == 1 and abs(len(answer.split()) - next(iter(counts))) >= 2:
            return f"the answer has {len(answer.split())} words, every other option {next(iter(counts))}"
    return None


def _shape(text: str) -> tuple[bool, bool]:
    """An option's form: digits or not, capitalised or not. An acronym among names is no
    outlier ("X" among Truth Social, Bluesky and Threads; "AMD" among Nvidia and Intel)."""
    t = text.strip()
    upper = t[:1].isupper() or _PARTICLE.match(t) is not None  # "al-Mawasi" is a capitalised name
    return (any(ch.isdigit() for ch in t), upper)


_PARTICLE = re.compile(r"(?:al|el|ad|as|an|ar|at|de|da|di|du|del|der|van|von|le|la|bin|ibn|ben|abu)[-\s'\u2019][A-Z]")


def _describe(shape: tuple[bool, bool]) -> str:
    digits, upper = shape
    return ", ".join(["with digits" if digits else "without digits", "capitalised" if upper else "lower case"])


def _norm(text: str) -> str:
    return " ".join(w.lower() for w in _WORDS.findall(text) if w.lower() not in ("the", "a", "an"))
