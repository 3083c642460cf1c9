"""The hf backend on tiny models built in the test (no downloads): scores against a direct forward."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from okgen.hashing import sha256_text  # noqa: E402
from okgen.models.base import Prompt  # noqa: E402
from okgen.models.registry import load_backend  # noqa: E402
from okgen.testing.corpus import make_articles  # noqa: E402
from okgen.testing.tiny_lm import build_tiny_lm  # noqa: E402

ARTICLE = None


@pytest.fixture(scope="module")
def texts():
    import datetime as dt

    arts, _ = make_articles(12, dt.date(2026, 3, 14), days=3)
    return [a.text for a in arts]


@pytest.fixture(scope="module")
def llama(tmp_path_factory, texts):
    return build_tiny_lm(tmp_path_factory.mktemp("llama"), texts, arch="llama", max_positions=512)


@pytest.fixture(scope="module")
def gpt2(tmp_path_factory, texts):
    return build_tiny_lm(tmp_path_factory.mktemp("gpt2"), texts, arch="gpt2", max_positions=512, chat_template=True)


def _toy(texts):
    """Two questions sharing an article (one group) and one without context."""
    art = texts[0][:600]
    q1 = Prompt(({"role": "user", "content": f"{art}\n\nQuestion: Who said it?\nA. Mei Zhou\nB. Rosa Novak"},), "Answer:", group="g")
    q2 = Prompt(({"role": "user", "content": f"{art}\n\nQuestion: Where?\nA. Lisbon\nB. Osaka\nC. Accra"},), "Answer:", group="g")
    q3 = Prompt(({"role": "user", "content": "Question: When?\nA. Monday\nB. Friday"},), "Answer:")
    return [q1, q2, q3], [["A", "B"], ["A", "B", "C"], ["A", "B"]]


def _hand_next_logprobs(model, tok, text, conts):
    ids = tok(text, add_special_tokens=False).input_ids
    with torch.no_grad():
        lp = model(torch.tensor([ids])).logits[0, -1].float().log_softmax(-1)
    out = []
    for c in conts:
        cid = tok(c, add_special_tokens=False).input_ids
        assert len(cid) == 1, f"{c!r} should be one token"
        out.append(float(lp[cid[0]]))
    return out


def _hand_loglik(model, tok, ctx, cont):
    ids_ctx = tok(ctx, add_special_tokens=False).input_ids
    whole = tok(ctx + cont, add_special_tokens=False).input_ids
    with torch.no_grad():
        lp = model(torch.tensor([whole])).logits[0].float().log_softmax(-1)
    return sum(float(lp[j - 1, whole[j]]) for j in range(len(ids_ctx), len(whole)))


def test_letter_loglik_matches_a_direct_forward(llama, texts):
    b = load_backend(f"hf/{llama},batch_size=2")
    prompts, labels = _toy(texts)
    got = b.letter_logprobs(prompts, labels)
    for p, labs, s in zip(prompts, labels, got):
        want = _hand_next_logprobs(b.model, b.tokenizer, p.plain(), [" " + x for x in labs])
        assert s.single_pass
        assert s.scores == pytest.approx(want, abs=1e-4)
        assert s.prompt_tokens == len(b.tokenizer(p.plain(), add_special_tokens=False).input_ids)
    # the two questions of group "g" shared their article prefix
    assert b.counters["prefix_groups"] == 1 and b.counters["prefix_tokens_reused"] > 50


@pytest.mark.parametrize("fixture", ["llama", "gpt2"])
def test_prefix_cache_and_batching_do_not_change_scores(fixture, request, texts):
    path = request.getfixturevalue(fixture)
    prompts, _ = _toy(texts)
    conts = [[" Mei Zhou", " Rosa Novak"], [" Lisbon", " Osaka", " Accra"], [" Monday", " Friday"]]
    # max_padding=1: unequal prompts left-padded into one batch, as a GPU runs them by default
    cached = load_backend(f"hf/{path},batch_size=3,chat=no,max_padding=1").loglik(prompts, conts)
    plain = load_backend(f"hf/{path},batch_size=1,prefix_cache=no,chat=no").loglik(prompts, conts)
    for a, b in zip(cached, plain):
        assert a.scores == pytest.approx(b.scores, abs=1e-4)
    ref = load_backend(f"hf/{path},chat=no")
    for p, cs, s in zip(prompts, conts, cached):
        want = [_hand_loglik(ref.model, ref.tokenizer, p.plain(), c) for c in cs]
        assert s.scores == pytest.approx(want, abs=1e-4)
        assert s.lengths == tuple(len(c) for c in cs)


def test_multi_token_labels_fall_back_to_continuation_scoring(llama, texts):
    b = load_backend(f"hf/{llama}")
    prompts, _ = _toy(texts)
    labels = [["Zq", "Xv"]] * 3  # not single tokens in the trained vocabulary
    got = b.letter_logprobs(prompts, labels)
    assert not any(s.single_pass for s in got)
    assert b.counters["multi_token_fallback"] == 3
    want = _hand_loglik(b.model, b.tokenizer, prompts[2].plain(), " Zq")
    assert got[2].scores[0] == pytest.approx(want, abs=1e-4)


def test_chat_template_is_used_when_the_tokenizer_has_one(gpt2, texts):
    b = load_backend(f"hf/{gpt2}")
    assert b.chat and b.template_suffix == "+chat2"
    prompts, labels = _toy(texts)
    rendered = b.render(prompts[2])
    # lm-eval's --apply_chat_template: "Answer:" ends the user turn, the letter follows the
    # generation prompt with no delimiter (the template's trailing newline joins the continuation).
    assert rendered.startswith("<|im_start|>user\n") and rendered.endswith("\nAnswer:<|im_end|>\n<|im_start|>assistant\n")
    got = b.letter_logprobs(prompts[2:], labels[2:])[0]
    want = [_hand_loglik(b.model, b.tokenizer, rendered[:-1], "\n" + lab) for lab in ("A", "B")]
    assert got.scores == pytest.approx(want, abs=1e-4)
    assert b.info()["conventions"]["target_delimiter"] == "" and b.info()["conventions"]["chat_template"]
    # Which template rendered the prompts, not only that one did.
    assert b.info()["conventions"]["chat_template_hash"] == sha256_text(b.tokenizer.chat_template)[:12]
    plain = load_backend(f"hf/{gpt2},chat=no")
    assert not plain.chat and plain.info()["conventions"]["chat_template_hash"] is None


def test_generation_is_greedy_and_deterministic(llama, texts):
    prompts, _ = _toy(texts)
    a = load_backend(f"hf/{llama},batch_size=2").generate(prompts, max_tokens=6)
    b = load_backend(f"hf/{llama},batch_size=3").generate(prompts, max_tokens=6)
    assert [g.text for g in a] == [g.text for g in b]
    assert all(0 < g.completion_tokens <= 6 and g.prompt_tokens > 0 for g in a)
    # the greedy continuation equals the argmax of a direct forward, token by token
    m, tok = load_backend(f"hf/{llama}").model, load_backend(f"hf/{llama}").tokenizer
    ids = tok(prompts[2].plain(), add_special_tokens=False).input_ids
    with torch.no_grad():
        first = int(m(torch.tensor([ids])).logits[0, -1].argmax())
    assert a[2].text.startswith(tok.decode([first]))


def test_truncation_helpers_use_the_tokenizer(llama, texts):
    b = load_backend(f"hf/{llama},max_length=128")
    assert b.max_length == 128
    cut = b.truncate_text(texts[0], 20)
    assert b.text_tokens(cut) <= 20 and texts[0].startswith(cut[:30])
    assert b.truncate_text("short", 20) == "short"


def test_bad_options_and_paths_are_config_errors(llama, tmp_path):
    from okgen.errors import ConfigError

    with pytest.raises(ConfigError, match="unknown hf option"):
        load_backend(f"hf/{llama},batchsize=2")
    with pytest.raises(ConfigError, match="cannot load hf model .*: no such folder$"):
        load_backend(f"hf/{tmp_path}/missing")
    with pytest.raises(ConfigError, match="no chat template"):
        load_backend(f"hf/{llama},chat=yes")
    with pytest.raises(ConfigError, match="max_padding must be a share between 0 and 1"):
        load_backend(f"hf/{llama},max_padding=2")
    with pytest.raises(ConfigError, match="max_padding"):
        load_backend(f"hf/{llama},max_padding=abc")


def test_unequal_prompts_are_not_padded_together_on_a_cpu(llama, texts):
    # Whole prompts (no shared prefix): on a CPU a batch holds at most 10% padding, so prompts of
    # very different lengths run apart; max_padding=1 pads them into one forward. Same scores.
    prompts = [Prompt(({"role": "user", "content": f"{t[:n]}\n\nQuestion: which one?\nA. x\nB. y"},), "Answer:")
               for t, n in zip(texts, (900, 120, 500, 60))]
    labels = [["A", "B"]] * len(prompts)
    padded = load_backend(f"hf/{llama},batch_size=4,chat=no,prefix_cache=no,max_padding=1")
    apart = load_backend(f"hf/{llama},batch_size=4,chat=no,prefix_cache=no")
    got_padded, got_apart = padded.letter_logprobs(prompts, labels), apart.letter_logprobs(prompts, labels)
    assert padded.counters["forward_passes"] == 1 and apart.counters["forward_passes"] == 4
    for a, b in zip(got_padded, got_apart):
        assert a.scores == pytest.approx(b.scores, abs=1e-4)
    # Prompts of one length still share a forward under the CPU's limit.
    same = [Prompt(({"role": "user", "content": f"{texts[0][:400]}\n\nQuestion {j}: which?\nA. x\nB. y"},), "Answer:")
            for j in range(4)]
    equal = load_backend(f"hf/{llama},batch_size=4,chat=no,prefix_cache=no")
    equal.letter_logprobs(same, [["A", "B"]] * 4)
    assert equal.counters["forward_passes"] == 1


@pytest.mark.parametrize("fixture", ["llama", "gpt2"])
def test_several_groups_of_different_lengths_batched_together(fixture, request, texts):
    path = request.getfixturevalue(fixture)
    prompts, labels = [], []
    for g, n_chars in enumerate((700, 300, 1100)):  # prefixes of different lengths: left-padded together
        art = texts[g + 1][:n_chars]
        for j in range(g + 2):
            prompts.append(Prompt(({"role": "user", "content": f"{art}\n\nQuestion {j}: which one?\nA. x{j}\nB. y\nC. z"},),
                                  "Answer:", group=f"g{g}"))
            labels.append(["A", "B", "C"])
    # max_padding=1 (a GPU's default): the three prefixes left-padded into one forward.
    grouped = load_backend(f"hf/{path},batch_size=4,chat=no,max_padding=1")
    got = grouped.letter_logprobs(prompts, labels)
    assert grouped.counters["prefix_groups"] == 3 and grouped.counters["forward_passes"] == 2
    ref = load_backend(f"hf/{path},batch_size=1,prefix_cache=no,chat=no").letter_logprobs(prompts, labels)
    for a, b in zip(got, ref):
        assert a.scores == pytest.approx(b.scores, abs=1e-4)
    # A CPU's default (max_padding=0.1): prefixes this unequal run apart, each with its members.
    apart = load_backend(f"hf/{path},batch_size=4,chat=no")
    assert apart.max_padding == 0.1
    for a, b in zip(apart.letter_logprobs(prompts, labels), ref):
        assert a.scores == pytest.approx(b.scores, abs=1e-4)
    assert apart.counters["prefix_groups"] == 3 and apart.counters["forward_passes"] == 6
    conts = [[" x", " y y", " z"]] * len(prompts)
    full = grouped.loglik(prompts, conts)
    plain = load_backend(f"hf/{path},batch_size=2,prefix_cache=no,chat=no").loglik(prompts, conts)
    for a, b in zip(full, plain):
        assert a.scores == pytest.approx(b.scores, abs=1e-4)


@pytest.mark.parametrize("fixture", ["llama", "gpt2"])
def test_a_prompts_choices_share_its_forward_with_the_same_scores(fixture, request, texts):
    # The cached prefix is the whole prompt here: each suffix is only a continuation, shorter than
    # the positions asked for (the case an off-by-one once got wrong).
    path = request.getfixturevalue(fixture)
    prompts = [Prompt(({"role": "user", "content": t[:200]},), "Answer:") for t in texts[:5]]
    conts = [[" yes", " no", " the answer is maybe", " 42"]] * len(prompts)
    shared = load_backend(f"hf/{path},batch_size=3,chat=no")
    got = shared.loglik(prompts, conts)
    ref = load_backend(f"hf/{path},batch_size=1,prefix_cache=no,chat=no").loglik(prompts, conts)
    assert shared.counters["prefix_groups"] == len(prompts)
    for g, r in zip(got, ref):
        assert g.scores == pytest.approx(r.scores, abs=1e-4)


@pytest.mark.parametrize("fixture", ["llama", "gpt2"])
def test_prompts_without_a_group_read_their_common_start_once(fixture, request, texts):
    # The no-context setting: every prompt starts with the same instruction (and, under a chat
    # template, the same system turn). That start runs once; each question runs against its cache.
    path = request.getfixturevalue(fixture)
    head = "The following is a multiple-choice question about the news. Answer with the letter of the correct choice."
    prompts = [Prompt(({"role": "user", "content": f"{head}\n\nQuestion: {t[:30 * 2 ** j]}?\nA. x\nB. y\nC. z"},),
                      "Answer:") for j, t in enumerate(texts[:6])]
    labels = [["A", "B", "C"]] * len(prompts)
    for chat in ("no", "auto"):
        shared = load_backend(f"hf/{path},batch_size=4,chat={chat}")
        got = shared.letter_logprobs(prompts, labels)
        assert shared.counters["prefix_groups"] == 1 and shared.counters["prefix_tokens_reused"] >= 5 * 16
        ref = load_backend(f"hf/{path},batch_size=1,prefix_cache=no,chat={chat}").letter_logprobs(prompts, labels)
        for g, r in zip(got, ref):
            assert g.scores == pytest.approx(r.scores, abs=1e-4)
        # max_padding=1 (a GPU's default): the start, then all questions in one padded forward;
        # on a CPU questions this unequal are not padded together, so they take more forwards.
        padded = load_backend(f"hf/{path},batch_size=8,chat={chat},max_padding=1")
        for g, r in zip(padded.letter_logprobs(prompts, labels), ref):
            assert g.scores == pytest.approx(r.scores, abs=1e-4)
        assert padded.counters["forward_passes"] == 2 < shared.counters["forward_passes"]
        # A forward never holds more tokens than a batch of whole prompts: with batch_size=2 the
        # six questions take at least three forwards after the start.
        small = load_backend(f"hf/{path},batch_size=2,chat={chat},max_padding=1")
        for g, r in zip(small.letter_logprobs(prompts, labels), ref):
            assert g.scores == pytest.approx(r.scores, abs=1e-4)
        assert small.counters["forward_passes"] >= 1 + 3
        # The tokens a forward attends over, the cached start counted, stay under max_batch_tokens.
        tight = load_backend(f"hf/{path},batch_size=8,chat={chat},max_padding=1,max_batch_tokens=300")
        seen = []
        real = tight._forward

        def spy(ids, keep, prefix_mask=None, cache=None, seen=seen, real=real):
            width = max(len(x) for x in ids) + (0 if prefix_mask is None else int(prefix_mask.shape[1]))
            seen.append((len(ids), width))
            return real(ids, keep, prefix_mask=prefix_mask, cache=cache)

        tight._forward = spy
        for g, r in zip(tight.letter_logprobs(prompts, labels), ref):
            assert g.scores == pytest.approx(r.scores, abs=1e-4)
        suffix_forwards = seen[1:]
        assert len(suffix_forwards) > 1 and all(rows == 1 or rows * width <= 300 for rows, width in suffix_forwards)
    # Prompts sharing less than min_prefix tokens run whole, as before.
    apart = load_backend(f"hf/{path},batch_size=4,chat=no,min_prefix=10000")
    apart.letter_logprobs(prompts, labels)
    assert apart.counters["prefix_groups"] == 0
