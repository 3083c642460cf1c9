"""okgen.llm's in-process transformers backend on a tiny chat model built in the test."""

from __future__ import annotations

import datetime as dt
import importlib.util
import json
import logging
import re

import pytest
from pydantic import BaseModel

pytest.importorskip("torch")
pytest.importorskip("transformers")

from okgen.cli.main import main  # noqa: E402
from okgen.errors import ConfigError  # noqa: E402
from okgen.files import write_jsonl  # noqa: E402
from okgen.llm import ChatRequest, chat_model, run_sync  # noqa: E402
from okgen.llm.hf_chat import HFChat  # noqa: E402
from okgen.testing.news import fixture_articles  # noqa: E402
from okgen.testing.tiny_lm import build_tiny_lm  # noqa: E402

DAY = dt.date(2026, 11, 21)


class City(BaseModel):
    city: str


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    texts = [a.text for a in fixture_articles()]
    return build_tiny_lm(tmp_path_factory.mktemp("chat"), texts, arch="llama", max_positions=1024, chat_template=True)


def req(text: str, **kw) -> ChatRequest:
    return ChatRequest(messages=({"role": "system", "content": "Be brief."}, {"role": "user", "content": text}), **kw)


def test_batched_generation_matches_one_at_a_time(tiny, monkeypatch):
    model, decoding = chat_model(f"hf/{tiny},device=cpu,batch_size=8,max_tokens=12")
    assert isinstance(model, HFChat) and model.concurrency == 8 and decoding == {"max_tokens": "12"}
    batches = []
    real = model.generate
    monkeypatch.setattr(model, "generate", lambda reqs: batches.append(len(reqs)) or real(reqs))
    prompts = ["Where is Gdansk?", "Who leads Kestrel Airways and why did the pilots strike?", "Trees?"]
    together = model.chat_many([req(p, max_tokens=12) for p in prompts])
    assert batches == [3]  # arrived together: one left-padded batch
    alone = [model.chat(req(p, max_tokens=12)) for p in prompts]
    assert [r.text for r in together] == [r.text for r in alone]
    for p, r in zip(prompts, together):
        assert r.ok and r.finish_reason in ("stop", "length") and 0 < r.completion_tokens <= 12
        ids = model.tokenizer(model.render(req(p)), add_special_tokens=False)["input_ids"]
        assert r.prompt_tokens == len(ids) and r.cost == 0.0 and r.mode == "text"
    assert model.stats.calls == 6 and model.name == f"hf/{tiny}"


def test_schema_goes_into_the_prompt_and_random_output_is_a_final_error(tiny):
    model, _ = chat_model(f"hf/{tiny}")
    assert "JSON schema" in model.render(req("x", schema=City)) and '"city"' in model.render(req("x", schema=City))
    out, res = run_sync(model.complete([{"role": "user", "content": "Name a city."}], schema=City, max_tokens=8))
    assert out is None and res.error_kind in ("invalid_json", "schema", "length") and not res.transient


def test_guided_json_even_from_a_random_model(tiny):
    """With lm-format-enforcer the output follows the schema token by token: a random model's
    answer is the schema's JSON (whole, or cut by the length limit), never free text."""
    pytest.importorskip("lmformatenforcer")
    model, _ = chat_model(f"hf/{tiny}")
    assert model.mode == "guided"
    results = model.chat_many([req(p, schema=City, max_tokens=40) for p in ("Name a city.", "Where?")])
    for res in results:
        assert res.mode == "guided" and re.match(r'\s*\{\s*"city"\s*:\s*"', res.text), res.text
        assert (res.ok and isinstance(res.parsed, City)) or res.error_kind == "length"
    assert model.chat(req("Hello")).mode == "text"  # no schema: free text


def test_no_chat_template_and_bad_options_are_config_errors(tmp_path):
    plain = build_tiny_lm(tmp_path / "plain", ["some words here"] * 20, vocab_size=300, hidden=16, heads=2)
    with pytest.raises(ConfigError, match="no chat template"):
        chat_model(f"hf/{plain}")
    with pytest.raises(ConfigError, match="cannot load hf model"):
        chat_model(f"hf/{tmp_path / 'missing'}")
    with pytest.raises(ConfigError, match="unknown option"):
        chat_model(f"hf/{plain},base_url=http://x")


def test_okgen_generate_with_an_hf_generator_and_validator(tiny, workspace, capsys, tmp_path):
    """A random model writes no usable question: the run still finishes and says why in its funnel."""
    arts = tmp_path / "articles.jsonl"
    write_jsonl(arts, [a for a in fixture_articles() if a.date == DAY][:2])
    spec = f"hf/{tiny},max_tokens=24"
    try:
        with pytest.raises(SystemExit) as e:
            main(["--json", "generate", "--date", str(DAY), "--articles", str(arts), "--generator", spec,
                  "--validator", spec])
    finally:
        root = logging.getLogger()
        for h in [h for h in root.handlers if getattr(h, "_okgen", False)]:
            root.removeHandler(h)
    out = capsys.readouterr()
    assert e.value.code == 1 and "no question kept" in out.err  # one clear line, not a traceback
    data = json.loads(out.out)
    f = data["funnel"]
    assert f["articles"]["total"] == 2 and f["articles"]["pending"] == 0
    assert f["articles"]["total"] == f["articles"]["generated"] + sum(f["articles"]["failed"].values())
    mode = "guided" if importlib.util.find_spec("lmformatenforcer") else "text"
    assert f["output_modes"] == {"generator": mode, "validator": mode}
    assert data["generator"]["model"] == f"hf/{tiny}" and f["kept"] == 0


def test_cancelling_stops_a_running_generation_at_its_next_token(tiny):
    # Ctrl-C cancels the awaiting task, but a thread runs on: the event loop then waited out the
    # whole generation (minutes on a CPU) before okgen could exit.
    import asyncio
    import threading

    model, _ = chat_model(f"hf/{tiny},device=cpu")
    started, steps = threading.Event(), []
    real = model._stopping

    def stopping():
        from transformers import StoppingCriteria

        class Watch(StoppingCriteria):
            def __call__(self, input_ids, scores, **kw):
                steps.append(1)
                started.set()
                return model.torch.zeros(input_ids.shape[0], dtype=model.torch.bool)

        return [Watch(), *real()]

    model._stopping = stopping
    model.eos = set()  # the tiny model may end early by chance: it may not here

    async def run():
        task = asyncio.ensure_future(model.achat(req("Where is Gdansk?", max_tokens=5000), use_cache=False))
        assert await asyncio.get_running_loop().run_in_executor(None, started.wait, 300)
        task.cancel()
        return await asyncio.gather(task, return_exceptions=True)

    lm_eos = model.lm.generation_config.eos_token_id
    model.lm.generation_config.eos_token_id = None
    try:
        (got,) = asyncio.run(run())
    finally:
        model.lm.generation_config.eos_token_id = lm_eos
    assert isinstance(got, asyncio.CancelledError)
    assert len(steps) < 5000 and model._stop.is_set()  # stopped at a token, not at the limit
    ok = model.chat(req("Where is Gdansk?", max_tokens=4))  # the next batch runs as usual
    assert ok.ok and ok.completion_tokens <= 4
