"""Build a snapshot folder (and its archive and catalogue record) from records."""

from __future__ import annotations

import datetime as dt
import logging
import os
import shutil
import tempfile
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from okgen import __version__
from okgen.errors import OkgenError
from okgen.files import normal_mode, write_jsonl
from okgen.hashing import sha256_file
from okgen.schema import AgentInfo, Article, FileEntry, Question, SnapshotManifest, utcnow
from okgen.settings import Workspace
from okgen.signature import Signature, format_timestamp
from okgen.snapshot import layout
from okgen.snapshot.datacard import render_datacard
from okgen.snapshot.store import Snapshot, register

log = logging.getLogger(__name__)

DEFAULT_WINDOWS = (1, 5, 10)


def build_snapshot(
    questions: Sequence[Question],
    corpus: Sequence[Article],
    *,
    date: dt.date,
    generator: AgentInfo,
    prompt_hash: str,
    feeds_hash: str,
    seed: int,
    validator: AgentInfo | None = None,
    probes: Sequence[AgentInfo] = (),
    windows: Sequence[int] = DEFAULT_WINDOWS,
    funnel: dict[str, Any] | None = None,
    timestamp: dt.datetime | None = None,
    include_text: bool = True,
    extra: dict[str, Any] | None = None,
    workspace: Workspace | None = None,
    out_dir: Path | None = None,
    archive: bool = True,
    register_it: bool = True,
) -> Snapshot:
    """Write a snapshot folder from questions and their corpus, atomically.

    The corpus must hold every question's article and only articles of the longest window,
    (date - max(windows), date]; an article dated after ``date`` is refused (it would leak the
    future into retrieval runs).

    Args:
        questions: the kept questions (choices already shuffled).
        corpus: the articles of the longest window.
        date: the news date.
        generator: generator identity and decoding (its model goes into the signature).
        prompt_hash: hash of the agent specs and prompts (and of the probes and questions per
            article when they are not the defaults).
        feeds_hash: hash of the feed list.
        seed: snapshot seed.
        validator: validator identity, or None.
        probes: freshness probe models.
        windows: news windows (days) the corpus supports.
        funnel: generation funnel statistics.
        timestamp: generation time (default: now, UTC).
        include_text: False to omit article bodies (licence-aware release).
        extra: free-form provenance recorded in the manifest.
        workspace: where to store it (default: ``OKGEN_HOME``).
        out_dir: folder to create the snapshot in (default: the workspace's ``snapshots/``).
        archive: also write the deterministic ``.tar.gz`` next to the folder.
        register_it: add a catalogue record.

    Returns:
        The new snapshot.

    Raises:
        OkgenError: inconsistent inputs (the message says which record).
    """
    ws = workspace or Workspace.from_env()
    windows = tuple(sorted({int(w) for w in windows}))
    if not windows or windows[0] < 1:
        raise OkgenError(f"windows must be positive day counts, got {windows}")
    longest = windows[-1]
    start = date - dt.timedelta(days=longest)
    ts = (timestamp or utcnow()).astimezone(dt.timezone.utc).replace(microsecond=0)

    articles = sorted(corpus, key=lambda a: (a.date, a.id))
    ids = _once(Counter(a.id for a in articles), "corpus holds article {} {} times")
    for a in articles:
        if a.date > date:
            raise OkgenError(f"article {a.id} is dated {a.date}, after the snapshot date {date}")
        if a.date <= start:
            raise OkgenError(f"article {a.id} is dated {a.date}, outside the {longest}-day window ending {date}")
    qs = sorted(questions, key=lambda q: (q.article_id, q.id))
    _once(Counter(q.id for q in qs), "question {} appears {} times")
    for q in qs:
        if q.article_id not in ids:
            raise OkgenError(f"question {q.id} refers to article {q.article_id}, which is not in the corpus")
        if q.date != date:
            raise OkgenError(f"question {q.id} is dated {q.date}, not the snapshot date {date}")
    if not include_text:
        articles = [a.model_copy(update={"text": "", "text_omitted": True}) for a in articles]

    counts = _counts(qs, articles, windows, date)
    out_dir = Path(out_dir) if out_dir is not None else ws.snapshots_dir
    out_dir.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".build-{date}-", dir=out_dir))
    normal_mode(tmp)
    try:
        nq = write_jsonl(tmp / layout.QUESTIONS, qs)
        nc = write_jsonl(tmp / layout.CORPUS, articles)
        q_sha = sha256_file(tmp / layout.QUESTIONS)
        chash = layout.content_hash(q_sha, articles)
        sig = Signature(
            date=date,
            window=longest,
            generator=generator.model,
            validator=validator.model if validator else "none",
            temperature=generator.decoding.temperature,
            top_p=generator.decoding.top_p,
            max_tokens=generator.decoding.max_tokens,
            seed=seed,
            prompt_hash=prompt_hash[:12],
            feeds_hash=feeds_hash[:12],
            timestamp=ts,
            questions=nq,
            content_hash=chash,
            version=__version__,
        )
        name = layout.snapshot_name(str(date), format_timestamp(ts), chash)
        base = dict(
            name=name,
            signature=sig.format(),
            date=date,
            windows=windows,
            created_at=ts,
            seed=seed,
            generator=generator,
            validator=validator,
            probes=tuple(probes),
            prompt_hash=prompt_hash,
            feeds_hash=feeds_hash,
            okgen_version=__version__,
            counts=counts,
            funnel=funnel or {},
            text_included=include_text,
            content_hash=chash,
            extra=extra or {},
        )
        # Quality evidence sits beside the manifest, outside the content hash (okgen.snapshot.quality).
        from okgen.snapshot.quality import compute_quality, write_quality

        quality = compute_quality(qs, articles, funnel, chash, seed)
        write_quality(tmp, quality)
        # The data card needs the manifest's fields but not the file hashes.
        draft = SnapshotManifest(files={}, **base)
        (tmp / layout.README).write_text(render_datacard(draft, sig, quality), encoding="utf-8")
        files = {
            layout.QUESTIONS: FileEntry(sha256=q_sha, bytes=(tmp / layout.QUESTIONS).stat().st_size, lines=nq),
            layout.CORPUS: FileEntry(sha256=sha256_file(tmp / layout.CORPUS), bytes=(tmp / layout.CORPUS).stat().st_size, lines=nc),
            layout.README: FileEntry(sha256=sha256_file(tmp / layout.README), bytes=(tmp / layout.README).stat().st_size),
        }
        manifest = SnapshotManifest(files=files, **base)
        manifest = manifest.model_copy(update={"manifest_sha256": layout.manifest_hash(manifest)})
        (tmp / layout.MANIFEST).write_bytes(layout.manifest_bytes(manifest))
        final = out_dir / name
        if final.exists():
            raise OkgenError(f"{final} already exists")
        os.rename(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    snap = Snapshot(final)
    archive_path = None
    if archive:
        from okgen.snapshot.archive import make_archive

        archive_path = make_archive(final, out_dir / f"{name}.tar.gz")
    if register_it:
        register(snap, ws, archive=archive_path)
    log.info("built snapshot %s (%d questions, %d articles)", name, nq, nc)
    return snap


def _once(counts: Counter[str], message: str) -> Counter[str]:
    """``counts`` when every id is there once; else an OkgenError ``message.format(id, times)``."""
    dup = next((i for i, n in counts.items() if n > 1), None)
    if dup is not None:
        raise OkgenError(message.format(dup, counts[dup]))
    return counts


def _counts(qs: Sequence[Question], articles: Sequence[Article], windows: Sequence[int], date: dt.date) -> dict[str, Any]:
    by_window = {str(w): sum(1 for a in articles if a.date > date - dt.timedelta(days=w)) for w in windows}
    letters = "ABCDEFGHIJ"
    positions = Counter(letters[q.answer_index] for q in qs)
    return {
        "questions": len(qs),
        "articles": len(articles),
        "question_articles": len({q.article_id for q in qs}),
        "articles_by_window": by_window,
        "questions_by_source": dict(sorted(Counter(q.source for q in qs).items())),
        "answer_positions": dict(sorted(positions.items())),
    }
