"""``colbert``: late interaction with colbert-ai's PLAID index.

The checkpoint is a local folder or a Hugging Face name (``colbert-ir/colbertv2.0`` by
default, used when it is in the local cache or can be downloaded; otherwise one clear line).
colbert-ai runs on the GPU when torch sees one (``CUDA_VISIBLE_DEVICES=`` forces the CPU) and
on the CPU otherwise, where it compiles small C++ extensions on first use (about two minutes,
once): they are cached in ``$TORCH_EXTENSIONS_DIR``, by default
``$OKGEN_TORCH_EXTENSIONS_DIR`` or ``~/.cache/okgen/torch_extensions``.

Indexing runs colbert-ai's own ``CollectionIndexer`` in this process (no fork), with two
changes. Passage token embeddings come from the workspace's encoding store
(:mod:`okgen.retrieval.vectors`, float16, keyed by the checkpoint's content and the document
settings): passages any earlier window encoded are not encoded again, new ones are encoded
(with progress) and stored before colbert-ai runs, and colbert-ai's k-means sample and index
passes both read them, so each passage is encoded once per store, not twice per window. Query
matrices go through the store too (float32, keyed by the checkpoint and the query settings). The
centroids, residual codes and IVF are still computed by colbert-ai over the whole window:
PLAID's centroids depend on every passage of the window, so a window index is rebuilt, not
extended (see docs/retrieval.md for why colbert-ai's ``IndexUpdater`` is not used). And
centroids are assigned in 128 MiB blocks instead of colbert-ai's 2 GiB ones. colbert-ai's
console output is captured and logged at debug level, so stdout stays clean for results.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import io
import json
import logging
import math
import os
import random
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar

from okgen.errors import ConfigError, OkgenError
from okgen.progress import ticker
from okgen.registry import require
from okgen.retrieval.base import Doc, ModelLoadError, Ranked, Retriever, short_reason

log = logging.getLogger(__name__)

FEATURE = "the colbert retriever"
EXTENSIONS = ("segmented_maxsim_cpp", "filter_pids_cpp", "decompress_residuals_cpp", "segmented_lookup_cpp")


def extensions_dir() -> Path:
    """Where compiled C++ extensions are cached (sets ``TORCH_EXTENSIONS_DIR`` when unset)."""
    current = os.environ.get("TORCH_EXTENSIONS_DIR")
    if current:
        return Path(current)
    from okgen.config import global_settings

    folder = global_settings().torch_extensions_dir
    if not folder:
        cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        folder = os.path.join(cache, "okgen", "torch_extensions")
    os.environ["TORCH_EXTENSIONS_DIR"] = folder  # a path only: it changes speed, never results
    return Path(folder)


def _colbert():
    require("torch", "colbert", FEATURE)
    require("faiss", "colbert", FEATURE)
    require("colbert", "colbert", FEATURE)
    folder = extensions_dir()
    if not any((folder / name).is_dir() for name in EXTENSIONS):
        log.info("colbert-ai compiles its C++ extensions on first use (about 2 minutes, once) into %s", folder)
    import colbert

    return colbert


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Capture colbert-ai's prints, progress bars and faiss's C-level k-means log.

    They are logged at debug level: stdout stays clean for results (``--json``) and stderr
    for okgen's own log. faiss writes to file descriptors 1 and 2 directly, so the
    descriptors are redirected, not just ``sys.stdout``/``sys.stderr``; the root logger's
    handlers that write to stderr are pointed at a copy of the real one meanwhile, so
    progress lines (:func:`okgen.progress.ticker`) still reach the user.
    """
    buf = io.StringIO()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    saved = {fd: os.dup(fd) for fd in (1, 2)}
    # Log handlers on the real stderr (the CLI's: progress lines, warnings) keep writing there.
    real = os.fdopen(os.dup(saved[2]), "w", buffering=1, encoding="utf-8", errors="replace")
    moved = [(h, h.setStream(real)) for h in logging.getLogger().handlers
             if isinstance(h, logging.StreamHandler) and _fileno(h.stream) == 2]
    with tempfile.TemporaryFile(mode="w+b") as raw:
        for fd in saved:
            os.dup2(raw.fileno(), fd)
        try:
            with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
                yield
        finally:
            for h, stream in moved:
                h.setStream(stream)
            real.close()
            for fd, old in saved.items():
                os.dup2(old, fd)
                os.close(old)
            raw.seek(0)
            text = (buf.getvalue() + raw.read().decode("utf-8", "replace")).strip()
            if text:
                log.debug("colbert-ai output:\n%s", text[-20000:])


def _fileno(stream) -> int | None:
    try:
        return stream.fileno()
    except (AttributeError, OSError, ValueError):
        return None


@contextlib.contextmanager
def _seeded(seed: int = 12345) -> Iterator[None]:
    """colbert-ai samples passages with the global RNGs: seed them, then restore them."""
    import numpy as np
    import torch

    py_state, np_state = random.getstate(), np.random.get_state()
    with torch.random.fork_rng(devices=[]):
        random.seed(seed)
        np.random.seed(seed)
        torch.manual_seed(seed)
        try:
            yield
        finally:
            random.setstate(py_state)
            np.random.set_state(np_state)


@contextlib.contextmanager
def outside_git() -> Iterator[None]:
    """Run colbert-ai from an empty temporary directory. When it saves a config it records the
    git branch of the working directory's repository, and raises TypeError in a checkout whose
    HEAD is detached (as CI systems check out); an index should not record the user's
    repository anyway."""
    with tempfile.TemporaryDirectory(prefix="okgen-colbert-") as d, contextlib.chdir(d):
        yield


def resolve_checkpoint(name: str) -> str:
    """A local checkpoint folder for ``name`` (a folder, or a Hugging Face repo in the cache/hub).

    Raises:
        OkgenError: the checkpoint is neither a folder nor obtainable (one line).
    """
    p = Path(name).expanduser()
    if p.is_dir():
        if not (p / "config.json").is_file():
            raise ModelLoadError(f"ColBERT checkpoint folder {p} has no config.json")
        return str(p.resolve())
    if name.startswith((".", "/", "~")):
        raise ModelLoadError(f"ColBERT checkpoint folder {p} does not exist")
    try:
        from huggingface_hub import snapshot_download

        return snapshot_download(name)
    except Exception as e:  # noqa: BLE001 - offline, unknown repo, network: one line for the user
        raise ModelLoadError(
            f"cannot load ColBERT checkpoint {name!r}: not in the local Hugging Face cache and it cannot be "
            f"downloaded here ({short_reason(e)}); download it once where there is network, or set "
            "params.checkpoint in the colbert spec to a local folder"
        ) from None


@functools.cache
def _classes() -> tuple[type, type]:
    """(Indexer, SmallBlockCodec): colbert-ai subclasses, defined once colbert-ai is imported."""
    import torch
    from colbert.indexing.codecs.residual import ResidualCodec
    from colbert.indexing.collection_indexer import CollectionIndexer

    class SmallBlockCodec(ResidualCodec):
        """colbert-ai's codec, assigning centroids in 128 MiB blocks instead of 2 GiB ones.

        The nearest centroid of each embedding does not depend on the block size, so the
        codes are identical; the build's peak memory drops by about 1.9 GB on the CPU.
        """

        def compress_into_codes(self, embs, out_device):
            codes = []
            bsize = max(1, (1 << 25) // self.centroids.size(0))
            for batch in embs.split(bsize):
                if self.use_gpu:
                    scores = self.centroids @ batch.T.cuda().half()
                else:
                    scores = self.centroids @ batch.T.cpu().float()
                codes.append(scores.max(dim=0).indices.to(device=out_device))
            return torch.cat(codes)

    class StoreEncoder:
        """Stands in for colbert-ai's CollectionEncoder: token embeddings come from the encoding store.

        ``lookup`` returns one float16 ``(tokens, dim)`` array per passage (already stored by
        :meth:`ColbertRetriever.build`, else encoded now). colbert-ai gets them in the dtype its
        own encoder gives (float16 on a GPU, float32 on the CPU): a cold build and one from stored
        embeddings see the same numbers, so they write the same index.
        """

        def __init__(self, inner, lookup):
            self.inner, self.lookup = inner, lookup

        def encode_passages(self, passages):
            if not passages:
                return None, None
            import numpy as np

            mats = self.lookup(list(passages))
            doclens = [m.shape[0] for m in mats]
            dtype = torch.float16 if self.inner.use_gpu else torch.float32
            embs = torch.from_numpy(np.concatenate(mats)).to(dtype)
            if self.inner.use_gpu:
                embs = embs.to(self.inner.checkpoint.device)
            return embs, doclens

    class Indexer(CollectionIndexer):
        """colbert-ai's indexer reading the store, small codec blocks, and its phase on a progress ticker."""

        def __init__(self, config, collection, lookup, tk, verbose=0):
            super().__init__(config=config, collection=collection, verbose=verbose)
            self.tk = tk
            self.encoder = StoreEncoder(self.encoder, lookup)
            saver = self.saver

            def load_codec():
                codec = ResidualCodec.load(index_path=saver.config.index_path_)
                codec.__class__ = SmallBlockCodec
                return codec

            saver.load_codec = load_codec

        def setup(self):
            super().setup()
            # Tiny windows: never ask k-means for more centroids than sampled embeddings.
            n = int(self.num_sample_embs.item()) if hasattr(self, "num_sample_embs") else 0
            cap = 2 ** max(0, int(math.floor(math.log2(max(1, n // 2)))))
            if self.num_partitions > cap:
                self.num_partitions = cap
                self._save_plan()

        def train(self, shared_lists):
            self.tk.phase = f"k-means, {self.num_partitions} centroids"
            super().train(shared_lists)

        def index(self):
            self.tk.phase = "residual codes"
            super().index()

        def finalize(self):
            self.tk.phase = "IVF"
            super().finalize()

        def _concatenate_and_split_sample(self):
            sample, heldout = super()._concatenate_and_split_sample()
            if heldout.size(0) == 0 and sample.size(0) > 1:  # keep one embedding to estimate residuals
                heldout = sample[-1:]
            return sample, heldout

    return Indexer, SmallBlockCodec


def _indexer_class() -> type:
    return _classes()[0]


class ColbertRetriever(Retriever):
    """ColBERT late interaction over a PLAID index (colbert-ai)."""

    name: ClassVar[str] = "colbert"
    defaults: ClassVar[dict[str, Any]] = {
        "checkpoint": "colbert-ir/colbertv2.0", "nbits": 2, "doc_maxlen": 300, "query_maxlen": 32,
        "kmeans_niters": 4, "ncells": 0, "centroid_score_threshold": 0.0, "ndocs": 0, "index_bsize": 64,
    }
    unhashed: ClassVar[frozenset[str]] = frozenset({"index_bsize"})
    stores_vectors: ClassVar[bool] = True

    def __init__(self, params: dict[str, Any]):
        from okgen.retrieval.vectors import EncodeCounts

        super().__init__(params)
        self._searcher = None
        self._info: dict[str, Any] = {}
        self.counts, self.query_counts = EncodeCounts(), EncodeCounts()

    @classmethod
    def check_params(cls, params: dict[str, Any], where: str) -> None:
        if params["nbits"] not in (1, 2, 4, 8):
            raise ConfigError(f"{where}: colbert nbits must be 1, 2, 4 or 8, got {params['nbits']}")
        if params["doc_maxlen"] < 8 or params["query_maxlen"] < 4 or params["kmeans_niters"] < 1:
            raise ConfigError(f"{where}: colbert needs doc_maxlen >= 8, query_maxlen >= 4, kmeans_niters >= 1")
        if min(params["ncells"], params["ndocs"], params["index_bsize"] - 1) < 0 or params["centroid_score_threshold"] < 0:
            raise ConfigError(f"{where}: colbert search settings must be >= 0 (0: colbert-ai's default for k)")
        if not params["checkpoint"]:
            raise ConfigError(f"{where}: colbert needs a checkpoint")

    def _config(self, **extra: Any):
        from colbert.infra import ColBERTConfig

        p = self.params
        return ColBERTConfig(nbits=p["nbits"], doc_maxlen=p["doc_maxlen"], query_maxlen=p["query_maxlen"],
                             kmeans_niters=p["kmeans_niters"], index_bsize=p["index_bsize"], **extra)

    def build(self, docs: Sequence[Doc], folder: Path) -> None:
        _colbert()
        from colbert.infra import ColBERTConfig, Run, RunConfig

        from okgen.retrieval.vectors import VectorStore

        ckpt = resolve_checkpoint(self.params["checkpoint"])
        folder = Path(folder).resolve()  # absolute: colbert-ai runs from another directory
        index_path = folder / "plaid"
        index_path.mkdir(parents=True, exist_ok=True)
        texts = [d.text for d in docs]
        with contextlib.ExitStack() as stack:
            stack.enter_context(outside_git())
            store = self.store if self.store is not None else stack.enter_context(VectorStore(":memory:"))
            stack.enter_context(Run().context(RunConfig(nranks=1, root=str(folder / ".run"), experiment="okgen",
                                                        avoid_fork_if_possible=True)))
            base = ColBERTConfig.load_from_checkpoint(ckpt)
            config = ColBERTConfig.from_existing(base, self._config(checkpoint=ckpt, index_path=str(index_path)),
                                                 Run().config)
            lookup = _TokenLookup(self, store, config, ckpt)
            lookup.prefill(texts)  # encodes what the store lacks, with progress, before colbert-ai's quiet run
            desc = f"colbert: index {len(texts)} passages"
            with _quiet(), _seeded(), ticker(desc, phase="plan") as tk:
                _indexer_class()(config, texts, lookup, tk, verbose=0).run([])
        with contextlib.suppress(OSError):
            (folder / ".run").rmdir()
        meta = json.loads((index_path / "metadata.json").read_text(encoding="utf-8"))
        self._info = {"checkpoint": self.params["checkpoint"], "partitions": meta.get("num_partitions"),
                      "embeddings": meta.get("num_embeddings"), "avg_doclen": meta.get("avg_doclen")}
        self.folder = folder
        self._num = len(docs)

    @classmethod
    def load(cls, folder: Path, params: dict[str, Any]) -> ColbertRetriever:
        self = cls(params)
        meta = folder / "plaid" / "metadata.json"
        if not meta.is_file():
            raise OkgenError(f"{folder}: no PLAID index (plaid/metadata.json missing)")
        self.folder = folder
        with open(folder / "plaid" / "doclens.0.json", encoding="utf-8") as f:
            first = len(json.load(f))
        chunks = json.loads(meta.read_text(encoding="utf-8")).get("num_chunks", 1)
        self._num = first if chunks == 1 else sum(
            len(json.loads((folder / "plaid" / f"doclens.{i}.json").read_text(encoding="utf-8"))) for i in range(chunks))
        return self

    @property
    def searcher(self):
        """colbert-ai's Searcher over this folder (created on first search)."""
        if self._searcher is None:
            _colbert()
            from colbert import Searcher
            from colbert.infra import Run, RunConfig

            ckpt = resolve_checkpoint(self.params["checkpoint"])
            with _quiet(), Run().context(RunConfig(nranks=1, root=str(self.folder / ".run"), experiment="okgen")):
                self._searcher = Searcher(index=str(self.folder / "plaid"), checkpoint=ckpt,
                                          collection=[""] * self._num, config=self._config(), verbose=0)
            with contextlib.suppress(OSError):
                (self.folder / ".run").rmdir()
        return self._searcher

    def _search_settings(self, k: int) -> dict[str, Any]:
        # colbert-ai's own defaults by k, fixed per call so results never depend on call order.
        ncells, thr, ndocs = (1, 0.5, 256) if k <= 10 else (2, 0.45, 1024) if k <= 100 else (4, 0.4, max(k * 4, 4096))
        p = self.params
        return {"ncells": p["ncells"] or ncells, "centroid_score_threshold": p["centroid_score_threshold"] or thr,
                "ndocs": p["ndocs"] or ndocs}

    def search(self, queries: Sequence[str], k: int, limits: Sequence[int]) -> Ranked:
        import torch

        if not queries:
            return []
        searcher = self.searcher
        out: Ranked = []
        Q = self._encode_queries(list(queries))
        with _quiet(), torch.inference_mode():
            for i, limit in enumerate(limits):
                kk = min(k, limit)
                if kk <= 0:
                    out.append([])
                    continue
                searcher.configure(**self._search_settings(kk))
                filter_fn = None
                if limit < self._num:
                    filter_fn = lambda pids, limit=limit: pids[pids < limit]  # noqa: E731 - the temporal filter
                pids, _, scores = searcher.dense_search(Q[i:i + 1], kk, filter_fn=filter_fn)
                out.append([(int(p), float(s)) for p, s in zip(pids, scores) if p < limit])
        return out

    def weights(self) -> str | None:
        from okgen.retrieval.vectors import model_fingerprint

        return model_fingerprint(resolve_checkpoint(self.params["checkpoint"]))

    def query_identity(self) -> dict[str, Any]:
        """Everything that determines a query matrix (the key of the encoding store, see ``vectors``)."""
        from okgen.retrieval.vectors import model_fingerprint

        config = self.searcher.config
        ckpt = resolve_checkpoint(self.params["checkpoint"])
        return {"retriever": "colbert", "role": "query", "checkpoint": self.params["checkpoint"],
                "fingerprint": model_fingerprint(ckpt), "query_maxlen": config.query_maxlen,
                "attend_to_mask_tokens": config.attend_to_mask_tokens, "query_token": config.query_token_id,
                "device": "cuda" if config.total_visible_gpus > 0 else "cpu",
                "versions": self.installed_versions("colbert-ai", "torch", "transformers")}

    def _encode_queries(self, queries: list[str]):
        """Query matrices ``(n, query_maxlen, dim)``: stored ones reused, the others encoded by colbert-ai.

        colbert-ai pads every query to ``query_maxlen`` with mask tokens (query augmentation),
        so a query's matrix does not depend on the other queries of its batch. They are stored
        as float32: on the CPU that is what colbert-ai computes; on a GPU its float16 widens
        exactly, and colbert-ai casts the query to the index's dtype before scoring.
        """
        import numpy as np
        import torch

        from okgen.retrieval.vectors import tokens_with_store

        searcher = self.searcher

        def encode(batch: list[str]) -> list[np.ndarray]:
            with _quiet(), torch.inference_mode():
                Q = searcher.encode(batch)
            return [q.to("cpu", torch.float32).numpy() for q in Q]

        mats, counts = tokens_with_store(self.store, self.query_identity(), queries, encode, batch_size=128,
                                         used_on=self.used_on or dt.date.today(), desc="colbert: encode queries",
                                         dtype="float32")
        self.query_counts.add(counts)
        return torch.from_numpy(np.stack(mats))

    def versions(self) -> dict[str, str]:
        return self.installed_versions("colbert-ai", "torch", "transformers", "faiss-cpu", "faiss-gpu")

    def describe(self) -> dict[str, Any]:
        import torch

        out = {**self._info, "device": "cuda" if torch.cuda.is_available() else "cpu"}
        if self.counts.encoded or self.counts.reused:
            out["vectors"] = {"encoded": self.counts.encoded, "reused": self.counts.reused}
        return out


class _TokenLookup:
    """Passage token embeddings through the encoding store, encoded with colbert-ai's checkpoint when missing.

    The key covers the checkpoint's content, ``doc_maxlen``, colbert-ai's document settings, the
    device type and the library versions, so embeddings are reused only where colbert-ai
    would compute the same ones.
    """

    def __init__(self, retriever: ColbertRetriever, store, config, ckpt: str):
        from okgen.retrieval.vectors import model_fingerprint

        self.retriever, self.store, self.config, self.ckpt = retriever, store, config, ckpt
        self.use_gpu = config.total_visible_gpus > 0
        self.identity = {
            "retriever": "colbert", "checkpoint": retriever.params["checkpoint"], "fingerprint": model_fingerprint(ckpt),
            "doc_maxlen": config.doc_maxlen, "pool_factor": config.pool_factor, "clustering_mode": config.clustering_mode,
            "protected_tokens": config.protected_tokens, "device": "cuda" if self.use_gpu else "cpu",
            "versions": retriever.installed_versions("colbert-ai", "torch", "transformers"),
        }
        self._model = None

    def _encode(self, texts: list[str]):
        import torch

        if self._model is None:
            from colbert.modeling.checkpoint import Checkpoint

            with _quiet():
                model = Checkpoint(self.ckpt, colbert_config=self.config)
            self._model = model.cuda() if self.use_gpu else model
        with _quiet(), torch.inference_mode():
            embs, doclens = self._model.docFromText(
                texts, bsize=self.config.index_bsize, keep_dims="flatten", showprogress=False,
                pool_factor=self.config.pool_factor, clustering_mode=self.config.clustering_mode,
                protected_tokens=self.config.protected_tokens)
        return [e.to("cpu", torch.float16).numpy() for e in torch.split(embs, doclens)]

    def _get(self, texts: list[str]):
        from okgen.retrieval.vectors import tokens_with_store

        return tokens_with_store(self.store, self.identity, texts, self._encode, batch_size=self.config.index_bsize,
                                 used_on=self.retriever.used_on or dt.date.today(), desc="colbert: encode passages")

    def prefill(self, texts: list[str]) -> None:
        """Encode and store what the store lacks; count encoded / reused on the retriever."""
        _, counts = self._get(texts)
        self.retriever.counts.add(counts)

    def __call__(self, texts: list[str]):
        return self._get(texts)[0]
