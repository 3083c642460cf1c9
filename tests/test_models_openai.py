"""The openai backend against a real local OpenAI-compatible server with scripted replies."""

from __future__ import annotations

import pytest

from okgen.models.base import Prompt
from okgen.models.registry import load_backend
from okgen.settings import Workspace
from okgen.testing.openai_server import OpenAIServer, Reply, chat_logprobs


def _prompts(n=2):
    return [Prompt(({"role": "user", "content": f"Question {i}?\nA. Lisbon\nB. Osaka\nC. Accra"},), "Answer:") for i in range(n)]


def test_letter_scores_come_from_the_first_token_alternatives(tmp_path):
    lp = chat_logprobs([("B", -0.2, {"B": -0.2, " A": -1.5, "C": -3.0, "Maybe": -0.9})])
    with OpenAIServer(responder=lambda req, ep: Reply(content="B", logprobs=lp)) as srv:
        b = load_backend(f"openai/m1,base_url={srv.base_url}", Workspace(tmp_path))
        got = b.letter_logprobs(_prompts(), [["A", "B", "C"]] * 2)
        req = srv.requests[0]
    assert [s.scores for s in got] == [(-1.5, -0.2, -3.0)] * 2
    assert all(s.single_pass and s.error is None for s in got)
    assert req["max_tokens"] == 1 and req["logprobs"] is True and req["top_logprobs"] == 20
    assert req["temperature"] == 0 and req["messages"][0]["content"].startswith("Question ")
    # lm-eval's --apply_chat_template: the answer prefix ends the user turn.
    assert req["messages"][-1]["role"] == "user" and req["messages"][-1]["content"].endswith("C. Accra\nAnswer:")


def test_missing_letters_and_missing_logprobs(tmp_path):
    with OpenAIServer() as srv:
        srv.script(Reply(content="Well", logprobs=chat_logprobs([("Well", -0.1, {"Well": -0.1, "I": -2.0})])),
                   Reply(content="B"))
        b = load_backend(f"openai/m1,base_url={srv.base_url},cache=no,concurrency=1", Workspace(tmp_path))
        none_found, no_lp = b.letter_logprobs(_prompts(), [["A", "B", "C"]] * 2)
    assert none_found.error is None and all(s == float("-inf") for s in none_found.scores)
    assert no_lp.error and "no logprobs" in no_lp.error


def test_responses_are_cached_and_retried(tmp_path):
    lp = chat_logprobs([("A", -0.3, {"A": -0.3, "B": -1.3})])
    ws = Workspace(tmp_path)
    with OpenAIServer(responder=lambda req, ep: Reply(content="A", logprobs=lp)) as srv:
        srv.script(Reply(status=503, headers={"Retry-After": "0"}))
        b = load_backend(f"openai/m1,base_url={srv.base_url},concurrency=1", ws)
        first = b.letter_logprobs(_prompts(1), [["A", "B"]])
        calls = srv.calls["chat"]
        again = load_backend(f"openai/m1,base_url={srv.base_url}", ws).letter_logprobs(_prompts(1), [["A", "B"]])
        assert srv.calls["chat"] == calls == 2  # one 503, one answer; the rerun came from the cache
    assert first[0].scores == again[0].scores == (-0.3, -1.3)
    assert b.usage()["retries"] == 1


def _echo(req, ep):
    """/v1/completions with echo: the context is one token, each continuation word a token."""
    assert ep == "completions" and req["echo"] is True and req["logprobs"] == 1
    prompt = req["prompt"]
    ctx_end = prompt.rindex("Answer:") + len("Answer:")
    tokens, offsets, lps = [prompt[:ctx_end]], [0], [None]
    pos = ctx_end
    for w in prompt[ctx_end:].split(" ")[1:]:
        tokens.append(" " + w)
        offsets.append(pos)
        lps.append(-1.0 if w == "Osaka" else -2.0)
        pos += len(w) + 1
    tokens.append("!")
    offsets.append(len(prompt))
    lps.append(-0.5)
    return Reply(content="!", logprobs={"tokens": tokens, "token_logprobs": lps, "text_offset": offsets,
                                        "top_logprobs": None})


def test_full_continuation_loglik_uses_completions_echo(tmp_path):
    with OpenAIServer(responder=_echo) as srv:
        b = load_backend(f"openai/m1,base_url={srv.base_url}", Workspace(tmp_path))
        got = b.loglik(_prompts(1), [[" Lisbon", " Osaka", " Accra City"]])[0]
        assert srv.calls["completions"] == 3
    assert got.scores == (-2.0, -1.0, -4.0)  # "Accra City" is two tokens
    assert got.lengths == (7, 6, 11) and got.error is None


def test_generation_and_errors_per_item(tmp_path):
    with OpenAIServer() as srv:
        srv.script(Reply(content="The answer is B."), Reply(status=400, error="bad request"))
        b = load_backend(f"openai/m1,base_url={srv.base_url},cache=no,concurrency=1", Workspace(tmp_path))
        ok, bad = b.generate(_prompts(), max_tokens=16, seed=7)
        req = srv.requests[0]
    assert ok.text == "The answer is B." and ok.error is None and ok.completion_tokens > 0
    assert bad.error and "400" in bad.error
    assert req["max_tokens"] == 16 and req["seed"] == 7


def test_unknown_option_is_refused(tmp_path):
    from okgen.errors import ConfigError

    with pytest.raises(ConfigError, match="unknown openai option"):
        load_backend("openai/m1,base_url=http://127.0.0.1:9/v1,topk=3", Workspace(tmp_path))
