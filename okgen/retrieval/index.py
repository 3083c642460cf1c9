"""The index store: one self-describing folder per (snapshot, window, retriever spec).

``data/indexes/<content hash[:12]>/<retriever>-<spec hash>-w<window>/`` holds the retriever's
files, ``units.jsonl`` (unit id, article id, date, in index order) and ``okgen_index.json``
(:class:`IndexManifest`: parameters, library versions, corpus hash, build time and the SHA-256
of every file). :func:`open_index` reuses a folder when it exists, verifying it first, and
refuses one built for another corpus. Builds happen in a temporary folder renamed into place,
so a crash leaves nothing half-written and two concurrent builds do not clash.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import glob
import logging
import os
import re
import shutil
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

from okgen import __version__
from okgen.errors import ConfigError, IntegrityError, NotFoundError, OkgenError
from okgen.files import (
    atomic_write_text,
    iter_jsonl,
    normal_mode,
    pretty_json,
    read_model_json,
    write_jsonl,
)
from okgen.hashing import sha256_file
from okgen.retrieval.base import Doc, Hit, Retriever, UnitHit
from okgen.retrieval.specs import RetrieverSpec, load_spec, spec_from_dict
from okgen.retrieval.windows import (
    corpus_hash,
    language_counts,
    limits_for,
    make_units,
    window_articles,
)
from okgen.schema import FileEntry, Record, utcnow
from okgen.settings import Workspace

log = logging.getLogger(__name__)

MANIFEST = "okgen_index.json"
UNITS = "units.jsonl"
INDEX_SCHEMA_VERSION = 1
_WORD = re.compile(r"\w")


class UnitRow(Record):
    """One line of ``units.jsonl``: a unit in index order."""

    id: str
    """Unit id."""
    article_id: str
    """Its article."""
    date: dt.date
    """The article's news date."""


class IndexManifest(Record):
    """``okgen_index.json``: what an index folder holds and how it was built."""

    schema_version: int = INDEX_SCHEMA_VERSION
    """Index manifest schema version."""
    kind: Literal["okgen-index"] = "okgen-index"
    """File kind."""
    retriever: str
    """Implementation (registry name)."""
    spec_name: str
    """Spec name it was built from."""
    spec_hash: str
    """Spec hash (12 hex digits)."""
    spec: dict[str, Any]
    """The resolved spec (units and parameters)."""
    snapshot: str
    """Snapshot folder name."""
    snapshot_signature: str
    """Long-form snapshot signature."""
    content_hash: str
    """Snapshot content hash."""
    date: dt.date
    """Snapshot date (the window's last day)."""
    window: int
    """Window length in days."""
    corpus_hash: str
    """SHA-256 of the indexed units (ids, articles, dates, texts); see ``windows.corpus_hash``."""
    num_articles: int
    """Articles in the window."""
    num_units: int
    """Units indexed (articles or passages)."""
    languages: dict[str, int]
    """Articles per language."""
    versions: dict[str, str]
    """Library versions that built it."""
    info: dict[str, Any] = {}
    """Retriever facts (model fingerprint, partitions...)."""
    okgen_version: str
    """okgen version that built it."""
    built_at: dt.datetime
    """When the build finished, UTC."""
    build_seconds: float
    """Wall time of the build."""
    files: dict[str, FileEntry]
    """Every file of the folder except this manifest, with its SHA-256."""


def index_folder(workspace: Workspace, content_hash: str, window: int, spec: RetrieverSpec) -> Path:
    """The folder of the index of (snapshot content hash, window, spec)."""
    return workspace.index_dir / content_hash[:12] / f"{spec.kind}-{spec.hash}-w{window}"


class WindowIndex:
    """A built index of one news window, with the temporal filter and article folding.

    Use :func:`open_index`; :meth:`load` opens a folder directly.
    """

    def __init__(self, folder: Path, manifest: IndexManifest, spec: RetrieverSpec, retriever: Retriever,
                 units: Sequence[Doc] | Sequence[UnitRow]):
        self.folder = Path(folder)
        self.manifest = manifest
        self.spec = spec
        self.retriever = retriever
        self._units = list(units)
        self._ordinals = [u.date.toordinal() for u in self._units]
        self.reused = False
        """True when an existing folder was opened rather than built by this object."""

    def __repr__(self) -> str:
        return f"WindowIndex({self.name!r}, window={self.window}, docs={self.num_docs}, folder={str(self.folder)!r})"

    name = property(lambda self: self.spec.name, doc="Spec name (``bm25``, ``bm25-passages``...).")
    kind = property(lambda self: self.spec.kind, doc="Implementation (registry name).")
    spec_hash = property(lambda self: self.spec.hash, doc="Spec hash, 12 hex digits (``rspec`` in eval signatures).")
    window = property(lambda self: self.manifest.window, doc="Window length in days.")
    date = property(lambda self: self.manifest.date, doc="The window's last day (the snapshot date).")
    num_docs = property(lambda self: self.manifest.num_articles, doc="Articles in the window.")
    num_units = property(lambda self: self.manifest.num_units, doc="Units indexed (passages or articles).")

    @property
    def encode_counts(self):
        """Documents encoded / vectors reused when this object built the index (None: no encoder, or reused folder)."""
        counts = getattr(self.retriever, "counts", None)
        return counts if counts is not None and (counts.encoded or counts.reused) else None

    @property
    def query_counts(self):
        """Queries encoded / query vectors reused by this object's searches (None: no encoder)."""
        return getattr(self.retriever, "query_counts", None)

    # ------------------------------------------------------------------------------ search
    def _prepare(self, queries: Sequence[str], k: int, query_dates: Sequence[dt.date] | None):
        if isinstance(queries, str):
            raise ConfigError("queries must be a list of strings, not one string")
        if not isinstance(k, int) or isinstance(k, bool) or k < 1:
            raise ConfigError(f"k must be a whole number >= 1, got {k!r}")
        texts = []
        for q in queries:
            if not isinstance(q, str):
                raise ConfigError(f"a query must be text, got {type(q).__name__}")
            texts.append(" ".join(q.split()))
        if query_dates is None:
            dates = [self.date] * len(texts)
        else:
            dates = list(query_dates)
            if len(dates) != len(texts):
                raise ConfigError(f"{len(dates)} query dates for {len(texts)} queries")
            dates = [d.date() if isinstance(d, dt.datetime) else d for d in dates]
        limits = limits_for(self._ordinals, dates)
        # A query with no word character (empty, punctuation only) has nothing to match on.
        active = [i for i, t in enumerate(texts) if limits[i] > 0 and _WORD.search(t)]
        return texts, limits, active

    def _ranked(self, texts: list[str], limits: list[int], idx: list[int], k: int) -> list[list[tuple[int, float]]]:
        ranked = self.retriever.search([texts[i] for i in idx], k, [limits[i] for i in idx])
        out = []
        for i, r in zip(idx, ranked):
            kept = [(p, s) for p, s in r if 0 <= p < limits[i]]
            if len(kept) != len(r):  # a retriever bug must never leak a later article
                log.warning("%s returned %d units outside the temporal filter; dropped", self.name, len(r) - len(kept))
            out.append(kept)
        return out

    def search(self, queries: Sequence[str], k: int, *, query_dates: Sequence[dt.date] | None = None) -> list[list[Hit]]:
        """Article-level search: per query, up to ``k`` articles, best first.

        Passage scores fold into their article (best passage). A query never retrieves an
        article dated after its date (default: the snapshot date). A query with no indexable
        text gets no hit; a window with fewer articles than ``k`` gives fewer hits.

        Args:
            queries: query texts.
            k: articles wanted per query.
            query_dates: one date per query for the temporal filter.
        """
        texts, limits, pending = self._prepare(queries, k, query_dates)
        results: list[list[Hit]] = [[] for _ in texts]
        # With passages, k units may cover fewer than k articles: ask for more until covered.
        kk = k * 4 if self.spec.chunked else k
        while pending:
            again = []
            for i, ranked in zip(pending, self._ranked(texts, limits, pending, kk)):
                best: dict[str, float] = {}
                for p, s in ranked:
                    aid = self._units[p].article_id
                    if aid not in best:
                        best[aid] = s
                if len(best) >= k or len(ranked) < min(kk, limits[i]) or kk >= limits[i]:
                    results[i] = [Hit(a, s, r) for r, (a, s) in enumerate(list(best.items())[:k], 1)]
                else:
                    again.append(i)
            pending, kk = again, kk * 4
        return results

    def search_units(self, queries: Sequence[str], k: int, *,
                     query_dates: Sequence[dt.date] | None = None) -> list[list[UnitHit]]:
        """Unit-level search: per query, up to ``k`` passages (or articles), best first, with text.

        For feeding retrieved context to a model. The temporal filter applies as in :meth:`search`.
        """
        texts, limits, active = self._prepare(queries, k, query_dates)
        results: list[list[UnitHit]] = [[] for _ in texts]
        if active and not isinstance(self._units[0], Doc):
            raise OkgenError(f"{self.folder}: opened without its snapshot, so unit texts are unknown; use open_index()")
        if active:
            for i, ranked in zip(active, self._ranked(texts, limits, active, k)):
                results[i] = [UnitHit(self._units[p].id, self._units[p].article_id, self._units[p].text, s, r)
                              for r, (p, s) in enumerate(ranked[:k], 1)]
        return results

    # ------------------------------------------------------------------------------- load
    @classmethod
    def load(cls, folder: str | Path, *, snapshot=None, spec: RetrieverSpec | None = None,
             verify: bool = True) -> WindowIndex:
        """Open an index folder.

        Args:
            folder: the index folder.
            snapshot: its snapshot; required for unit texts, and checked against the folder.
            spec: the spec to load with (speed settings such as device may differ from the
                build's; the spec hash must match). Default: the spec recorded in the folder.
            verify: recompute the SHA-256 of every file.

        Raises:
            NotFoundError: no index there.
            IntegrityError: the folder was built for another corpus, or a file changed.
        """
        folder = Path(folder)
        mpath = folder / MANIFEST
        if not mpath.is_file():
            raise NotFoundError(f"{folder}: not an index folder (no {MANIFEST})")
        m = read_model_json(mpath, IndexManifest)
        recorded = spec_from_dict({"retriever": m.spec["retriever"], "units": m.spec["units"], "params": m.spec["params"]},
                                  m.spec_name)
        if spec is None:
            spec = recorded
        if spec.hash != m.spec_hash or recorded.hash != m.spec_hash:
            raise IntegrityError(f"{folder}: built for retriever spec {m.spec_hash}, not {spec.hash}")
        units: list[Any] = list(iter_jsonl(folder / UNITS, UnitRow))
        if snapshot is not None:
            articles = window_articles(snapshot, m.window)
            units = make_units(articles, spec.passage_words, spec.passage_overlap)
            chash = corpus_hash(units)
            if m.content_hash != snapshot.manifest.content_hash or m.corpus_hash != chash:
                raise IntegrityError(
                    f"{folder} was built for another corpus (snapshot {m.content_hash[:12]}, corpus {m.corpus_hash[:12]}); "
                    f"this {m.window}-day window of {snapshot.name} has corpus {chash[:12]}. "
                    "Delete the folder or rebuild with `okgen index build --rebuild`"
                )
        if len(units) != m.num_units:
            raise IntegrityError(f"{folder}: {UNITS} lists {len(units)} units, the manifest {m.num_units}; "
                                 f"{rebuild_hint(m)}")
        if verify:
            verify_files(folder, m)
        retriever = spec.retriever_class().load(folder, spec.params)
        retriever.folder = folder
        built_with = m.info.get("weights")
        if built_with is not None and (now := retriever.weights()) != built_with:
            raise IntegrityError(f"{folder} was built with other model weights ({built_with[:40]}) than the model gives "
                                 f"now ({(now or 'none')[:40]}): its vectors would not match the queries'; "
                                 f"{rebuild_hint(m)}")
        return cls(folder, m, spec, retriever, units)


def verify_files(folder: Path, manifest: IndexManifest) -> None:
    """Check every file the manifest lists (size and SHA-256) and that none is missing.

    Raises:
        IntegrityError: names the first missing or changed file.
    """
    for rel, entry in sorted(manifest.files.items()):
        p = folder / rel
        if not p.is_file():
            raise IntegrityError(f"{folder}: index file {rel} is missing; {rebuild_hint(manifest)}")
        if p.stat().st_size != entry.bytes or sha256_file(p) != entry.sha256:
            raise IntegrityError(f"{folder}: index file {rel} changed since the build (SHA-256 mismatch); "
                                 f"{rebuild_hint(manifest)}")


def rebuild_hint(manifest: IndexManifest) -> str:
    """The command that replaces a damaged index, so a refusal names its remedy."""
    return (f"rebuild it with: okgen index build --signature {manifest.content_hash[:12]} "
            f"--retriever {manifest.spec_name} --window {manifest.window} --rebuild")


def _file_entries(folder: Path) -> dict[str, FileEntry]:
    out = {}
    for p in sorted(folder.rglob("*")):
        if p.is_file() and p.name != MANIFEST:
            out[p.relative_to(folder).as_posix()] = FileEntry(sha256=sha256_file(p), bytes=p.stat().st_size)
    return out


def open_index(snapshot, retriever: str, window: int, workspace: Workspace, *, spec: str | Path | None = None,
               build: bool = True, rebuild: bool = False, verify: bool = True) -> WindowIndex:
    """Open (and build when missing) the index of a snapshot's window for a retriever.

    Args:
        snapshot: the :class:`~okgen.snapshot.Snapshot`.
        retriever: a spec name (``bm25``, ``dpr``, ``colbert``, ``bm25-passages``...) or a path
            to a ``.toml`` spec; with ``spec`` given, its name or its registry name (checked).
        window: window length in days.
        workspace: where indexes live (``data/indexes``) and where specs are looked up first.
        spec: spec name or path; default ``retrievers/<retriever>.toml`` (workspace, then okgen's own).
        build: build the index when it does not exist (else :class:`NotFoundError`).
        rebuild: replace an existing index (also one built for another corpus).
        verify: check every file's SHA-256 when reusing an index.

    Raises:
        ConfigError: unknown retriever or spec, bad window.
        EmptyWindowError: the window holds no article.
        IntegrityError: an existing folder was built for another corpus (or changed).
        MissingExtraError: the retriever's optional dependency is missing (one line).
    """
    rspec = load_spec(spec if spec is not None else retriever, workspace)
    if spec is not None and retriever not in (rspec.name, rspec.kind):
        raise ConfigError(f"spec {rspec.name!r} is a {rspec.kind} spec, not {retriever!r}")
    articles = window_articles(snapshot, window)
    folder = index_folder(workspace, snapshot.manifest.content_hash, window, rspec)
    store = None
    if rspec.retriever_class().stores_vectors:
        from okgen.retrieval.vectors import VectorStore

        store = VectorStore.for_workspace(workspace)
    if (folder / MANIFEST).is_file() and not rebuild:
        log.info("reusing index %s", folder)
        return _reuse(folder, snapshot, rspec, store, verify)
    if not build:
        raise NotFoundError(f"no {rspec.name} index of the {window}-day window of {snapshot.name}; "
                            f"build it with: okgen index build --signature {snapshot.manifest.content_hash[:12]} "
                            f"--retriever {rspec.name} --window {window}")
    return _build(snapshot, rspec, window, articles, folder, store, rebuild)


def _reuse(folder: Path, snapshot, spec: RetrieverSpec, store, verify: bool = True) -> WindowIndex:
    """Open an existing index folder for searching, marked as reused (nothing built now)."""
    idx = WindowIndex.load(folder, snapshot=snapshot, spec=spec, verify=verify)
    idx.retriever.store, idx.retriever.used_on = store, snapshot.manifest.date
    idx.reused = True
    return idx


@contextlib.contextmanager
def _build_lock(folder: Path) -> Iterator[None]:
    """Hold the lock on building ``folder`` (``filelock``: the kernel drops a killed process's
    lock), waiting for a live build of the same index to finish: two builds never encode the
    same passages at once, and whoever holds it knows every ``.<name>.*.tmp`` left beside the
    index is a killed build's."""
    from filelock import FileLock, Timeout

    lock = FileLock(folder.with_name(f".{folder.name}.lock"))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        log.info("waiting for another build of %s to finish", folder)
        lock.acquire()
    try:
        yield
    finally:
        lock.release()


def remove_stale_builds(folder: Path) -> list[Path]:
    """Delete the temporary folders of unfinished builds of ``folder`` (call only while no build
    of it runs: :func:`_build_lock` checks that); returns what was removed."""
    stale = sorted(p for p in folder.parent.glob(f".{glob.escape(folder.name)}.*")
                   if p.is_dir() and (p.name.endswith(".tmp") or p.name == f".{folder.name}.old"))
    for p in stale:
        shutil.rmtree(p, ignore_errors=True)
        log.info("removed %s, left by an interrupted build", p)
    return stale


def _build(snapshot, spec: RetrieverSpec, window: int, articles, folder: Path, store=None,
           rebuild: bool = False) -> WindowIndex:
    folder.parent.mkdir(parents=True, exist_ok=True)
    with _build_lock(folder):
        if (folder / MANIFEST).is_file() and not rebuild:  # a concurrent build finished it while this one waited
            return _reuse(folder, snapshot, spec, store)
        remove_stale_builds(folder)
        return _build_locked(snapshot, spec, window, articles, folder, store)


def _build_locked(snapshot, spec: RetrieverSpec, window: int, articles, folder: Path, store=None) -> WindowIndex:
    units = make_units(articles, spec.passage_words, spec.passage_overlap)
    retr = spec.retriever_class()(spec.params)
    retr.store, retr.used_on = store, snapshot.manifest.date
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", suffix=".tmp", dir=folder.parent))
    try:
        log.info("building %s index of the %d-day window of %s: %d articles, %d units",
                 spec.name, window, snapshot.name, len(articles), len(units))
        t0 = time.perf_counter()
        retr.build(units, tmp)
        seconds = time.perf_counter() - t0
        write_jsonl(tmp / UNITS, [UnitRow(id=u.id, article_id=u.article_id, date=u.date) for u in units])
        m = snapshot.manifest
        manifest = IndexManifest(
            retriever=spec.kind, spec_name=spec.name, spec_hash=spec.hash, spec=spec.to_dict(), snapshot=snapshot.name,
            snapshot_signature=m.signature, content_hash=m.content_hash, date=m.date, window=window,
            corpus_hash=corpus_hash(units), num_articles=len(articles), num_units=len(units),
            languages=language_counts(articles), versions={"okgen": __version__, **retr.versions()},
            info={**retr.describe(), **({"weights": w} if (w := retr.weights()) else {})}, okgen_version=__version__, built_at=utcnow(), build_seconds=round(seconds, 3),
            files=_file_entries(tmp),
        )
        atomic_write_text(tmp / MANIFEST, pretty_json(manifest))
        normal_mode(tmp)  # mkdtemp's 0700 would hide the index from colleagues on a shared workspace
        if folder.exists():  # --rebuild: move the old one aside first
            old = folder.with_name(f".{folder.name}.old")
            shutil.rmtree(old, ignore_errors=True)
            os.replace(folder, old)
            shutil.rmtree(old, ignore_errors=True)
        try:
            os.rename(tmp, folder)
        except OSError:
            if (folder / MANIFEST).is_file():  # another process finished the same build first
                shutil.rmtree(tmp, ignore_errors=True)
                return _reuse(folder, snapshot, spec, store)
            raise
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    retr.folder = folder
    log.info("built %s in %.1f s", folder, seconds)
    return WindowIndex(folder, manifest, spec, retr, units)


def list_indexes(workspace: Workspace) -> list[tuple[Path, IndexManifest | None, str | None]]:
    """Every index folder of the workspace with its manifest, or the reason it is unreadable
    (windows in numeric order: 1, 5, 10)."""
    out: list[tuple[Path, IndexManifest | None, str | None]] = []
    root = workspace.index_dir
    if not root.is_dir():
        return out
    for snap_dir in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        for folder in sorted((p for p in snap_dir.iterdir() if p.is_dir() and not p.name.startswith(".")),
                             key=lambda p: [int(x) if x.isdigit() else x for x in re.split(r"(\d+)", p.name)]):
            try:
                out.append((folder, read_model_json(folder / MANIFEST, IndexManifest), None))
            except OkgenError as e:
                out.append((folder, None, str(e)))
    return out


def disk_bytes(folder: Path) -> int:
    """Total size of the files under ``folder``."""
    return sum(p.stat().st_size for p in Path(folder).rglob("*") if p.is_file())
