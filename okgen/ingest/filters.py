"""Article filters with named reasons, and a small stop-word language identifier.

Each filter looks at what extraction produced (:class:`~okgen.ingest.extract.PageExtract`)
and returns a reason or None; the pipeline counts reasons. Reasons: ``no_content`` (nothing
extracted, e.g. a page that is all navigation), ``video``, ``live_blog``, ``cookie_wall``,
``paywall``, ``too_short``, ``wrong_language`` (and ``out_of_window`` from the date check).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

# ~40 frequent function words per language: enough to tell these languages apart on a news
# article, with no model to download.
_STOPWORD_TABLE = """
en: the of and to in a is that for it on was with as at by be this from have are not or an but they which his her their has had were been will would said its after who also
de: der die und in den von zu das mit sich des auf für ist im dem nicht ein eine als auch es an werden aus er hat dass sie nach wird bei einer um am sind noch wie einem über
fr: le la les de des et à en un une du que qui est pour dans pas au sur par plus ne se ce il sont avec mais été son sa ses leur aux elle nous ont cette
es: el la los las de del y en que a un una por con para es se no su al lo como más pero sus le ha fue este esta entre cuando muy sin sobre también
it: il la di che e è un una per in non del della con sono gli le da al alla si dei nel ha ma come anche più questo delle nella stato dalla
pt: o a os as de do da dos das e em um uma que para com não por se na no mais como foi ao pelo pela seu sua ele ela são também já
nl: de het een en van in is dat op te zijn met voor niet aan er die ook als bij door om maar naar dan wordt nog heeft hij zij werd worden
pl: i w na z że do się nie to jest o jak po od za przez ale dla jego są tak co może który także przy oraz było tym już
sv: och i att det som en på är av för med till den har inte om ett de var men från ska vid så kan eller efter också
tr: ve bir bu da de için ile olarak daha çok gibi olan ise en ama değil kadar sonra her şey göre tarafından
id: yang dan di ini itu dengan untuk dari dalam tidak akan pada juga ke ada karena oleh atau sudah telah saat
"""
STOPWORDS: dict[str, frozenset[str]] = {
    line[:2]: frozenset(line[3:].split()) for line in _STOPWORD_TABLE.strip().splitlines()
}


def _stop_index() -> dict[str, tuple[str, ...]]:
    index: dict[str, tuple[str, ...]] = {}
    for lang, words in STOPWORDS.items():
        for w in words:
            index[w] = (*index.get(w, ()), lang)
    return index


# word -> languages it is a stop word of: one dict lookup per token instead of one per language
_STOP_INDEX = _stop_index()
_TOKEN = re.compile(r"[^\W\d_]+", re.UNICODE)
# Scripts that identify a language (or family) by themselves.
_SCRIPTS = (("zh", re.compile(r"[\u4e00-\u9fff]")), ("ja", re.compile(r"[\u3040-\u30ff]")),
            ("ko", re.compile(r"[\uac00-\ud7af]")), ("ru", re.compile(r"[\u0400-\u04ff]")),
            ("ar", re.compile(r"[\u0600-\u06ff]")), ("hi", re.compile(r"[\u0900-\u097f]")),
            ("el", re.compile(r"[\u0370-\u03ff]")), ("he", re.compile(r"[\u0590-\u05ff]")),
            ("th", re.compile(r"[\u0e00-\u0e7f]")))
_NON_LATIN = re.compile("[" + "".join(p.pattern[1:-1] for _, p in _SCRIPTS) + "]")


def detect_language(text: str, max_chars: int = 3000) -> str | None:
    """ISO 639-1 code of ``text``'s language, or None when unsure.

    Non-Latin scripts decide by character share; Latin-script languages by the share of their
    stop words (a clear winner is required).
    """
    sample = text[:max_chars]
    tokens = _TOKEN.findall(sample)
    letters = sum(map(len, tokens))
    if letters < 40:
        return None
    # Only a text mostly in another script is decided by its script (one scan to find out).
    if not sample.isascii() and len(_NON_LATIN.findall(sample)) > 0.3 * letters:
        for lang, pattern in _SCRIPTS:
            if len(pattern.findall(sample)) > 0.3 * letters:
                if lang == "zh" and _SCRIPTS[1][1].search(sample):
                    return "ja"
                return lang
    tokens = tokens[:600]
    if len(tokens) < 15:
        return None
    counts = dict.fromkeys(STOPWORDS, 0)
    for t in tokens:
        for lang in _STOP_INDEX.get(t.lower(), ()):
            counts[lang] += 1
    (best, lang), (second, _) = sorted(((c / len(tokens), lg) for lg, c in counts.items()), reverse=True)[:2]
    if best >= 0.12 and best >= 1.4 * second:
        return lang
    return None


# ---------------------------------------------------------------------------- signals
PAYWALL_PHRASES = (
    "subscribe to continue reading", "to continue reading", "subscribe to read", "subscribers only",
    "for subscribers", "already a subscriber", "this article is for subscribers", "sign in to continue",
    "become a subscriber", "start your free trial", "unlock this article", "you have reached your limit",
    "you've reached your limit", "create a free account to continue", "premium article", "this content is exclusive",
)
COOKIE_WORDS = ("cookie", "consent", "privacy settings", "accept all", "reject all", "manage preferences",
                "your privacy", "our partners", "personalised ads", "personalized ads", "legitimate interest", "gdpr")
LIVE_TITLE = re.compile(r"^\s*live\s*[:|\u2013\u2014-]|\b(live updates?|as it happened|live blog|live coverage)\b",
                        re.IGNORECASE)
VIDEO_PATH = re.compile(r"/(videos?|watch|tv|clip|clips)(/|$)", re.IGNORECASE)
LIVE_PATH = re.compile(r"/(live|live-news|liveblog|live-updates)(/|$)|[-_/]live-updates?\b", re.IGNORECASE)


def is_video(url: str, pagetype: str | None, jsonld: Iterable[str], words: int) -> bool:
    """A video page: og:type video.*, a VideoObject that is not also an article, or a /video/ path with little text."""
    types = set(jsonld)
    if pagetype and pagetype.lower().startswith("video"):
        return True
    if "VideoObject" in types and not types & {"NewsArticle", "Article", "ReportageNewsArticle", "BlogPosting"} and words < 400:
        return True
    return bool(VIDEO_PATH.search(urlsplit(url).path)) and words < 400


def is_live_blog(url: str, title: str | None, jsonld: Iterable[str]) -> bool:
    """A live blog: LiveBlogPosting in JSON-LD, a live path, or a "Live:" / "live updates" headline."""
    if "LiveBlogPosting" in set(jsonld):
        return True
    if LIVE_PATH.search(urlsplit(url).path):
        return True
    return bool(title and LIVE_TITLE.search(title))


def is_paywall(text: str, words: int, max_words: int, free: bool | None) -> bool:
    """A paywall stub: a subscription notice (or isAccessibleForFree=false) on a short text."""
    if words >= max_words:
        return False
    low = text.lower()
    return free is False or any(p in low for p in PAYWALL_PHRASES)


def is_cookie_wall(text: str, words: int) -> bool:
    """A cookie/consent wall: most of the text is about cookies and consent."""
    low = text.lower()
    hits = sum(low.count(w) for w in COOKIE_WORDS)
    if hits < 3:
        return False
    sentences = [s for s in re.split(r"(?<=[.!?])\s+|\n+", low) if s.strip()]
    about = sum(1 for s in sentences if any(w in s for w in COOKIE_WORDS))
    return about >= 0.4 * max(1, len(sentences)) or (words < 150 and hits >= 3)


def apply_filters(page: dict[str, Any], *, url: str, title: str | None, expected_languages: Iterable[str],
                  min_words: int, paywall_max_words: int, enabled: Iterable[str]) -> str | None:
    """The first reason to drop a page, or None to keep it.

    Args:
        page: the :class:`~okgen.ingest.extract.PageExtract` fields (``text``, ``words``,
            ``pagetype``, ``jsonld_types``, ``free``, ``language``).
        url: page URL.
        title: the title used (feed or page).
        expected_languages: accepted ISO 639-1 codes (empty: any).
        min_words: minimum words (too_short).
        paywall_max_words: word count under which a paywall notice marks a stub.
        enabled: names of the filters to apply.
    """
    text = page.get("text") or ""
    if not text.strip():
        return "no_content"
    on = set(enabled)
    words = int(page.get("words") or len(text.split()))
    jsonld = page.get("jsonld_types") or ()
    if "video" in on and is_video(url, page.get("pagetype"), jsonld, words):
        return "video"
    if "live_blog" in on and is_live_blog(url, title or page.get("title"), jsonld):
        return "live_blog"
    if "cookie_wall" in on and is_cookie_wall(text, words):
        return "cookie_wall"
    if "paywall" in on and is_paywall(text, words, paywall_max_words, page.get("free")):
        return "paywall"
    if "too_short" in on and words < min_words:
        return "too_short"
    expected = {x.lower() for x in expected_languages if x}
    lang = page.get("language")
    if "wrong_language" in on and expected and lang and lang not in expected:
        return "wrong_language"
    return None
