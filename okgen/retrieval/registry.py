"""The lazy registry of retriever implementations.

Names map to ``"module:attr"`` strings; a module is imported only when its retriever is used,
and its heavy dependencies (torch, faiss, colbert-ai) only when an index is built or loaded.
Register your own with ``RETRIEVERS.register("mine", "mypkg.retr:MyRetriever")`` and point a
spec's ``retriever`` key at it.
"""

from __future__ import annotations

from okgen.registry import Registry

RETRIEVERS = Registry("retriever", {
    "bm25": "okgen.retrieval.bm25:BM25Retriever",
    "dpr": "okgen.retrieval.dense:DenseRetriever",
    "colbert": "okgen.retrieval.colbert_retriever:ColbertRetriever",
})

__all__ = ["RETRIEVERS"]
