"""Retrieval over news windows: BM25, dense (DPR-style, FAISS) and ColBERT.

The interface every retriever implements is in :mod:`okgen.retrieval.base`.
"""
