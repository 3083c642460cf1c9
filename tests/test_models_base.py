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


@pytest.mark.parametrize("spec,match", [
    ("random/uniform,seed=abc", "seed='abc'.*an integer"),
    ("random/uniform,seed=yes", "an integer"),
    ("random/uniform,seed=1.5", "an integer"),
])
def test_non_numeric_options_are_one_line_config_errors(spec, match):
    with pytest.raises(ConfigError, match=match):
        load_backend(spec)
    s = parse_model_spec("openai/m,timeout=2.5,concurrency=4")
    assert s.float_opt("timeout", 1.0) == 2.5 and s.int_opt("concurrency", 16) == 4 and s.int_opt("absent", 7) == 7
    with pytest.raises(ConfigError, match="a number"):
        parse_model_spec("openai/m,timeout=soon").float_opt("timeout", 120.0)


def test_data_parallel_shards_are_contiguous_blocks():
    from okgen.models.vllm_backend import dp_shards

    assert dp_shards(7, 3) == [[0, 1, 2], [3, 4], [5, 6]]
    assert dp_shards(1, 2) == [[0], []]
    # an article's questions (adjacent after group_order) stay on one rank's prefix cache
    order = group_order(["a", "b", "a", "b", "c", "c"])
    shards = dp_shards(len(order), 2)
    groups = ["a", "b", "a", "b", "c", "c"]
    assert [{groups[order[i]] for i in s} for s in shards] == [{"a", "b"}, {"b", "c"}]
    assert sorted(i for s in shards for i in s) == list(range(6))


class _Proc:
    def __init__(self, alive, exitcode=None):
        self.alive, self.exitcode = alive, exitcode

    def is_alive(self):
        return self.alive


def _pool(procs):
    import queue

    from okgen.models.vllm_backend import _DPPool

    pool = _DPPool.__new__(_DPPool)  # the queue protocol without starting engines
    pool.size, pool.procs, pool.poll_seconds = len(procs), procs, 0.05
    pool.outq, pool.inqs = queue.Queue(), [queue.Queue() for _ in procs]
    return pool


def test_data_parallel_pool_reports_a_dead_rank_instead_of_hanging():
    from okgen.errors import OkgenError

    pool = _pool([_Proc(True), _Proc(False, exitcode=-9)])
    pool.outq.put((0, "ok", [{"text": "x"}]))
    with pytest.raises(OkgenError, match=r"rank 1 failed: the engine process exited \(code -9\)"):
        pool.run([[1], [2]], [{}, {}])


def test_data_parallel_pool_drains_every_rank_before_failing():
    from okgen.errors import OkgenError

    pool = _pool([_Proc(True), _Proc(True)])
    pool.outq.put((1, "ok", [{"text": "late"}]))
    pool.outq.put((0, "error", "CUDA out of memory"))
    with pytest.raises(OkgenError, match="rank 0 failed: CUDA out of memory"):
        pool.run([[1], [2]], [{}, {}])
    assert pool.outq.empty()  # rank 1's answer is not left for the next call to mistake as its own
    pool.outq.put((1, "ok", [{"text": "b"}]))
    pool.outq.put((0, "ok", [{"text": "a"}]))
    assert [r["text"] for r in pool.run([[1], [2]], [{}, {}])] == ["a", "b"]
    assert [len(q.get_nowait()[0]) for q in pool.inqs] == [1, 1] and all(q.qsize() == 1 for q in pool.inqs)


def test_the_random_baseline_draws_by_what_is_asked_not_by_the_context():
    from okgen.streams.evaluate import render

    b = load_backend("random/seed0")
    q, opts = "Who chairs the Rivertown harbour board?", ["Ada Lind", "Bo Norvik", "Cy Orbis", "Di Lakeport"]
    # One interval: the same draw with or without news in the prompt (the settings of one interval).
    bare, with_news = render(q, opts, "2026-03-02", []), render(q, opts, "2026-03-02", ["Lakeport news ..."])
    assert b.letter_logprobs([bare], [list("ABCD")])[0].scores == b.letter_logprobs([with_news], [list("ABCD")])[0].scores
    # A stream asks the question anew at each interval: a chance answerer draws anew, not one letter for ever.
    days = [render(q, opts, f"2026-03-{d:02d}", []) for d in range(1, 21)]
    picks = {argmax(s.scores) for s in b.letter_logprobs(days, [list("ABCD")] * len(days))}
    assert len(picks) > 1
