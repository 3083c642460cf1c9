"""Model specs, the lazy backend registry and the random baseline."""

from __future__ import annotations

import subprocess
import sys

import pytest

from okgen.errors import ConfigError, MissingExtraError
from okgen.models.base import Prompt, argmax, common_prefix_len, group_order, parse_model_spec
from okgen.models.registry import BACKENDS, load_backend


def test_parse_model_spec_keeps_slashes_and_types_options():
    s = parse_model_spec("hf/Qwen/Qwen2.5-0.5B-Instruct,batch_size=16,chat=no,dtype=bfloat16,temperature=0.5")
    assert s.backend == "hf" and s.model == "Qwen/Qwen2.5-0.5B-Instruct"
    assert s.options == {"batch_size": 16, "chat": False, "dtype": "bfloat16", "temperature": 0.5}
    assert s.name == "hf/Qwen/Qwen2.5-0.5B-Instruct"
    local = parse_model_spec("hf//data/models/tiny")
    assert local.model == "/data/models/tiny"
    api = parse_model_spec("openai/my-model,base_url=http://127.0.0.1:8000/v1")
    assert api.options["base_url"] == "http://127.0.0.1:8000/v1"


@pytest.mark.parametrize("bad", ["", "hf", "hf/", "hf/x,batch_size", "/model"])
def test_bad_specs_are_one_line_config_errors(bad):
    with pytest.raises(ConfigError):
        parse_model_spec(bad)


def test_unknown_backend_lists_the_known_ones():
    with pytest.raises(ConfigError) as e:
        load_backend("llamacpp/foo")
    for name in ("hf", "openai", "random", "vllm"):
        assert name in str(e.value)
    assert BACKENDS.names() == ["hf", "openai", "random", "vllm"]


def test_registry_imports_no_heavy_module():
    code = ("import sys, okgen.models.registry, okgen.eval.runner, okgen.cli.eval, okgen.cli.report, okgen.cli.export;"
            "heavy = [m for m in ('torch', 'transformers', 'vllm', 'openai', 'matplotlib', 'pyarrow') if m in sys.modules];"
            "print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"


def test_vllm_missing_is_a_one_line_missing_extra_error():
    try:
        import vllm  # noqa: F401
    except ImportError:
        with pytest.raises(MissingExtraError, match=r'okgen\[vllm\]'):
            load_backend("vllm/some/model")
    else:  # pragma: no cover - machines with vllm
        pytest.skip("vllm is installed")


def test_random_backend_is_seeded_per_prompt_and_order_independent():
    b = load_backend("random/uniform,seed=3")
    ps = [Prompt(({"role": "user", "content": f"Question {i}\nA. x\nB. y\nC. z"},), "Answer:") for i in range(20)]
    labs = [["A", "B", "C"]] * 20
    one = [s.scores for s in b.letter_logprobs(ps, labs)]
    rev = [s.scores for s in b.letter_logprobs(ps[::-1], labs)][::-1]
    assert one == rev
    picks = {argmax(s) for s in one}
    assert picks == {0, 1, 2}  # 20 draws cover all three choices
    other = load_backend("random/uniform,seed=4").letter_logprobs(ps, labs)
    assert [s.scores for s in other] != one
    gens = b.generate(ps, max_tokens=4)
    assert all(g.text in ("A", "B", "C") for g in gens)


def test_helpers():
    assert common_prefix_len([[1, 2, 3], [1, 2, 4], [1, 2]]) == 2
    assert common_prefix_len([[5], [6]]) == 0
    assert group_order(["a", None, "b", "a", None, "b"]) == [0, 3, 1, 2, 5, 4]
    assert argmax([float("-inf"), -1.0, -1.0]) == 1
    assert argmax([float("-inf")] * 3) is None
