"""Retrieval over news windows: BM25, dense (DPR-style, FAISS) and ColBERT.

The parts, each importable without torch, faiss or colbert-ai (those load on first use):

* :mod:`okgen.retrieval.base`: the retriever interface (:class:`~okgen.retrieval.base.Retriever`)
  and the records it passes (``Doc``, ``Hit``, ``UnitHit``).
* :mod:`okgen.retrieval.registry`: ``RETRIEVERS``, the lazy registry (bm25, dpr, colbert).
* :mod:`okgen.retrieval.specs`: ``retrievers/*.toml`` specs and their hash (``rspec``).
* :mod:`okgen.retrieval.windows`: w-day windows, passage chunking, the temporal filter.
* :mod:`okgen.retrieval.index`: the index store; :func:`~okgen.retrieval.index.open_index`
  returns a :class:`~okgen.retrieval.index.WindowIndex` with ``search`` (articles) and
  ``search_units`` (passages with text, for retrieval-augmented evaluation).
* :mod:`okgen.retrieval.evaluate`: :func:`~okgen.retrieval.evaluate.compare_retrievers`
  (hit rate@k and MRR@k per retriever x window x k).

Typical use::

    from okgen.retrieval.index import open_index
    idx = open_index(snapshot, "bm25", 5, workspace)          # built once, then reused
    hits = idx.search([q.question for q in snapshot.questions], k=5)
    passages = idx.search_units(["who won the Harbour Marathon?"], k=3)
"""
