"""Licence-aware releases: a copy of a snapshot without article bodies, and hydration back.

A no-text copy keeps the folder name, the signature and the content hash (article texts are
covered by their ``text_sha256``); only ``corpus.jsonl``, the data card and the manifest's
file list and ``text_included`` change. Hydrating it with texts that match their hashes gives
back the original folder byte for byte.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from okgen.files import normal_mode, write_jsonl
from okgen.hashing import sha256_file
from okgen.schema import Article, FileEntry, SnapshotManifest
from okgen.snapshot import layout
from okgen.snapshot.datacard import render_datacard
from okgen.snapshot.quality import load_quality
from okgen.snapshot.store import Snapshot


def rewrite_corpus(snapshot: Snapshot, articles: list[Article], out_folder: Path, text_included: bool) -> Snapshot:
    """Write a copy of ``snapshot`` into ``out_folder`` with a replaced corpus (atomically).

    The questions file is copied unchanged; the manifest is updated (files, text_included,
    its own hash) and the data card re-rendered. ``manifest.sig`` is not carried over: it
    signed the old manifest.
    """
    out_folder = Path(out_folder)
    m = snapshot.manifest
    out_folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out_folder.name}.", dir=out_folder.parent))
    normal_mode(tmp)
    try:
        shutil.copyfile(snapshot.path / layout.QUESTIONS, tmp / layout.QUESTIONS)
        n = write_jsonl(tmp / layout.CORPUS, articles)
        draft = m.model_copy(update={"text_included": text_included})
        quality = load_quality(snapshot.path, m.content_hash)  # evidence about the same questions: kept
        if quality is not None:
            shutil.copyfile(snapshot.path / layout.QUALITY, tmp / layout.QUALITY)
        (tmp / layout.README).write_text(render_datacard(draft, snapshot.signature, quality), encoding="utf-8")
        files = dict(m.files)
        files[layout.CORPUS] = FileEntry(sha256=sha256_file(tmp / layout.CORPUS), bytes=(tmp / layout.CORPUS).stat().st_size, lines=n)
        files[layout.README] = FileEntry(sha256=sha256_file(tmp / layout.README), bytes=(tmp / layout.README).stat().st_size)
        new = SnapshotManifest.model_validate({**draft.model_dump(), "files": files, "manifest_sha256": ""})
        new = new.model_copy(update={"manifest_sha256": layout.manifest_hash(new)})
        (tmp / layout.MANIFEST).write_bytes(layout.manifest_bytes(new))
        if out_folder.exists():
            shutil.rmtree(out_folder)
        tmp.rename(out_folder)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return Snapshot(out_folder)


def strip_texts(snapshot: Snapshot, out_folder: Path) -> Snapshot:
    """Write a no-text copy of ``snapshot`` (same name and signature) into ``out_folder``."""
    articles = [a.model_copy(update={"text": "", "text_omitted": True}) for a in snapshot.corpus]
    return rewrite_corpus(snapshot, articles, out_folder, text_included=False)
