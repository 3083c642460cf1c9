"""Deduplication: canonical URLs, exact text hashes and MinHash/LSH near-duplicates.

Three layers, cheapest first:

1. :func:`canonicalize_url` maps tracking parameters, fragments, AMP and mobile variants,
   default ports and trailing slashes to one URL; the article id hashes it.
2. :func:`norm_text_hash` hashes the text after case folding and whitespace collapsing, so a
   re-published page with different spacing is an exact duplicate.
3. :class:`NearDupIndex` keeps MinHash signatures of word shingles in an LSH index; syndicated
   wire copies with a different headline, byline or closing line are near-duplicates.
"""

from __future__ import annotations

import functools
import hashlib
import re
import unicodedata
import zlib
from collections.abc import Iterable
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import numpy as np

# Query parameters that only track where a click came from.
TRACKING_PARAMS = frozenset({
    "fbclid", "gclid", "dclid", "gclsrc", "msclkid", "mc_cid", "mc_eid", "igshid", "yclid", "twclid",
    "ocid", "cmpid", "cmp", "icid", "ito", "ref", "ref_src", "ref_url", "smid", "smtyp", "rss",
    "feedtype", "feedname", "soc_src", "soc_trk", "taid", "_ga", "_gl", "mkt_tok", "guccounter",
    "guce_referrer", "guce_referrer_sig", "spm", "wt.mc_id", "s_cid", "amp", "outputtype",
    "amp_js_v", "usqp", "__twitter_impression",
})
# Parameters starting with these are tracking too (utm_source, ns_campaign, at_medium, ...).
TRACKING_PREFIXES = ("utm_", "pk_", "mtm_", "hsa_", "oly_", "vero_", "at_", "ns_", "itm_")
_HOST_PREFIXES = ("www.", "amp.", "m.", "mobile.")
_AMP_SUFFIX = re.compile(r"(/amp/?|\.amp(?=\.html?$|$)|/amp\.html?)$", re.IGNORECASE)
_AMP_PREFIX = re.compile(r"^/amp(/s)?(?=/)", re.IGNORECASE)


def canonicalize_url(url: str) -> str:
    """Canonical form of an article URL.

    Lowercases scheme and host, drops a ``www.``/``amp.``/``m.`` host prefix, default ports,
    fragments, tracking parameters (``utm_*``, ``fbclid``, ...), AMP path variants (``/amp``,
    ``.amp``, ``/amp/s/``) and trailing slashes; keeps the remaining query sorted.

    Examples:
        >>> canonicalize_url("https://WWW.Example.com:443/a/b/?utm_source=x&id=2#top")
        'https://example.com/a/b?id=2'
    """
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower().rstrip(".")
    for prefix in _HOST_PREFIXES:
        if host.startswith(prefix) and host.count(".") >= 2:
            host = host[len(prefix):]
            break
    try:
        port = parts.port
    except ValueError:  # a malformed port: keep the URL recognisable rather than fail
        port = None
    port = port if port not in (None, 80 if scheme == "http" else 443) else None
    netloc = f"{host}:{port}" if port else host
    path = re.sub(r"/{2,}", "/", parts.path or "/")
    path = _AMP_PREFIX.sub("", path)
    path = _AMP_SUFFIX.sub("", path) or "/"
    if len(path) > 1:
        path = path.rstrip("/") or "/"
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)
             if k.lower() not in TRACKING_PARAMS and not k.lower().startswith(TRACKING_PREFIXES)]
    query.sort()
    return urlunsplit((scheme, netloc, path, urlencode(query, doseq=True), ""))


def same_site(a: str, b: str) -> bool:
    """True when two URLs are on the same host, ignoring ``www.``-style prefixes."""
    return urlsplit(canonicalize_url(a)).netloc == urlsplit(canonicalize_url(b)).netloc


_WORD = re.compile(r"\w+", re.UNICODE)


def normalize_text(text: str) -> str:
    """Case-folded, NFKC-normalised text with whitespace collapsed (for exact duplicates)."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def norm_text_hash(text: str) -> str:
    """SHA-256 of :func:`normalize_text` (exact duplicates up to case and spacing)."""
    return hashlib.sha256(normalize_text(text).encode("utf-8")).hexdigest()


def shingles(text: str, size: int = 5) -> set[bytes]:
    """Word ``size``-grams of the normalised text (a short text gives one shingle of all words)."""
    words = _WORD.findall(normalize_text(text))
    if len(words) <= size:
        return {" ".join(words).encode("utf-8")} if words else set()
    return {" ".join(words[i:i + size]).encode("utf-8") for i in range(len(words) - size + 1)}


def minhash_signature(text: str, num_perm: int = 128, shingle_size: int = 5) -> bytes:
    """MinHash signature of a text's shingles as bytes (``num_perm`` uint64 values).

    The seed, permutations and base hash (CRC-32, a C call per shingle, where datasketch's
    default SHA-1 costs a Python call each) are fixed, so the same text always gives the same
    signature and signatures stored in the database stay comparable across runs.
    """
    mh = _minhash(num_perm)
    sh = shingles(text, shingle_size)
    if sh:
        mh.update_batch(list(sh))
    return np.asarray(mh.hashvalues, dtype=np.uint64).tobytes()


@functools.lru_cache(maxsize=8)
def _permutations(num_perm: int) -> Any:
    from datasketch import MinHash

    try:
        return MinHash(num_perm=num_perm, seed=1, scheme="affine32").permutations
    except TypeError:  # datasketch < 2.0
        return MinHash(num_perm=num_perm, seed=1).permutations


def _minhash(num_perm: int, hashvalues: np.ndarray | None = None) -> Any:
    """A datasketch MinHash with okgen's fixed seed, permutations (built once) and base hash."""
    from datasketch import MinHash

    kw = {"num_perm": num_perm, "seed": 1, "hashfunc": zlib.crc32, "hashvalues": hashvalues,
          "permutations": _permutations(num_perm)}
    try:  # datasketch >= 2.0 wants the scheme named when values are given back
        return MinHash(**kw, scheme="affine32")
    except TypeError:  # datasketch < 2.0: one scheme only
        return MinHash(**kw)


def jaccard(a: bytes, b: bytes) -> float:
    """Estimated Jaccard similarity of two signatures from :func:`minhash_signature`."""
    x = np.frombuffer(a, dtype=np.uint64)
    y = np.frombuffer(b, dtype=np.uint64)
    if x.shape != y.shape or not len(x):
        return 0.0
    return float(np.count_nonzero(x == y)) / len(x)


class NearDupIndex:
    """An LSH index of MinHash signatures that answers "is this a near-duplicate of a known text?".

    Args:
        threshold: estimated Jaccard similarity at or above which texts are near-duplicates.
        num_perm: permutations of the signatures (must match :func:`minhash_signature`).
    """

    def __init__(self, threshold: float = 0.8, num_perm: int = 128):
        from datasketch import MinHashLSH

        self.threshold = threshold
        self.num_perm = num_perm
        self._lsh = MinHashLSH(threshold=threshold, num_perm=num_perm)
        self._sigs: dict[str, bytes] = {}

    def __len__(self) -> int:
        return len(self._sigs)

    def _mh(self, sig: bytes):
        return _minhash(self.num_perm, np.frombuffer(sig, dtype=np.uint64))

    def add(self, key: str, sig: bytes) -> None:
        """Index a signature under ``key`` (a second add of the same key is ignored)."""
        if key in self._sigs or len(sig) != self.num_perm * 8:
            return
        self._sigs[key] = sig
        self._lsh.insert(key, self._mh(sig))

    def add_many(self, items: Iterable[tuple[str, bytes]]) -> None:
        """Index several (key, signature) pairs."""
        for key, sig in items:
            self.add(key, sig)

    def query(self, sig: bytes) -> tuple[str, float] | None:
        """The most similar indexed key with its estimated similarity, if at or above the threshold."""
        if len(sig) != self.num_perm * 8 or not self._sigs:
            return None
        best: tuple[str, float] | None = None
        for key in self._lsh.query(self._mh(sig)):
            sim = jaccard(sig, self._sigs[key])
            if sim >= self.threshold and (best is None or sim > best[1] or (sim == best[1] and key < best[0])):
                best = (key, sim)
        return best
