"""What a snapshot folder holds, and how its content hash is computed.

A snapshot folder::

    <date>_<timestamp>_<hash12>/
        manifest.json     parameters, counts, funnel, SHA-256 of every file, signature
        questions.jsonl   one Question per line, sorted by (article_id, id)
        corpus.jsonl      every Article of the longest window, sorted by (date, id)
        README.md         data card
        quality.json      quality evidence (outside the content hash; okgen.snapshot.quality)
        manifest.sig      optional Ed25519 signature of manifest.json

The **content hash** covers the questions file byte for byte and every corpus article's
canonical record *without its text* (the text is covered by its ``text_sha256``). A release
published without article bodies therefore keeps the same content hash and signature, and a
hydrated copy verifies against it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import Any

from okgen.hashing import canonical_json, sha256_text
from okgen.schema import Article, SnapshotManifest

MANIFEST = "manifest.json"
QUESTIONS = "questions.jsonl"
CORPUS = "corpus.jsonl"
README = "README.md"
MANIFEST_SIG = "manifest.sig"
QUALITY = "quality.json"
DATA_FILES = (QUESTIONS, CORPUS, README)
CONTENT_VERSION = "okgen-content-v1"


def corpus_identity_line(article: Article | dict[str, Any]) -> str:
    """Canonical JSON of an article without its body (the hash of the body stays)."""
    data = article.model_dump(mode="json") if isinstance(article, Article) else dict(article)
    data.pop("text", None)
    data.pop("text_omitted", None)
    return canonical_json(data)


def content_hash(questions_sha256: str, corpus: Iterable[Article | dict[str, Any]]) -> str:
    """Compute a snapshot's content hash from its questions file hash and its corpus."""
    h = hashlib.sha256()
    for article in corpus:
        h.update(corpus_identity_line(article).encode("utf-8"))
        h.update(b"\n")
    return sha256_text(f"{CONTENT_VERSION}\nquestions {questions_sha256}\ncorpus {h.hexdigest()}\n")


def manifest_hash(manifest: SnapshotManifest | dict[str, Any]) -> str:
    """SHA-256 of a manifest's canonical JSON without its ``manifest_sha256`` field."""
    data = manifest.model_dump(mode="json") if isinstance(manifest, SnapshotManifest) else dict(manifest)
    data.pop("manifest_sha256", None)
    return sha256_text(canonical_json(data))


def manifest_bytes(manifest: SnapshotManifest) -> bytes:
    """The exact bytes ``manifest.json`` holds (indented canonical JSON)."""
    return (json.dumps(manifest.model_dump(mode="json"), sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def snapshot_name(date: str, timestamp: str, content_hash_hex: str) -> str:
    """Folder name: ``<date>_<timestamp>_<first 12 hex of the content hash>``."""
    return f"{date}_{timestamp}_{content_hash_hex[:12]}"
