"""okgen.llm's in-process vLLM backend on a GPU: guided JSON on a tiny chat model built in the test.

Marked ``gpu``: skipped where vllm or a CUDA GPU is missing.
"""

from __future__ import annotations

import os

import pytest
from pydantic import BaseModel

pytestmark = pytest.mark.gpu
os.environ.setdefault("HF_HUB_OFFLINE", "1")
torch = pytest.importorskip("torch")
pytest.importorskip("vllm")

from okgen.llm import ChatRequest, chat_model  # noqa: E402
from okgen.testing.news import fixture_articles  # noqa: E402
from okgen.testing.tiny_lm import build_tiny_lm  # noqa: E402


class City(BaseModel):
    city: str
    people: int


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    texts = [a.text for a in fixture_articles()]
    folder = build_tiny_lm(tmp_path_factory.mktemp("chat"), texts, hidden=256, heads=4, max_positions=1024,
                           chat_template=True)
    m, _ = chat_model(f"vllm/{folder},dtype=float32,gpu_memory_utilization=0.3")
    return m


def test_guided_json_parses_even_from_a_random_model(model):
    reqs = [ChatRequest(messages=({"role": "user", "content": f"City {i}?"},), schema=City, max_tokens=64)
            for i in range(6)]
    res = model.chat_many(reqs)
    # The schema constrains decoding: a random model's output is still City JSON (unless cut short).
    assert all((r.ok and isinstance(r.parsed, City)) or r.error_kind == "length" for r in res)
    assert any(r.ok for r in res) and all(r.mode == "guided" and r.prompt_tokens > 0 for r in res)
