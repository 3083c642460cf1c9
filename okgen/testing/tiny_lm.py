"""Tiny causal language models built from a config, for tests and benchmarks (no downloads).

:func:`build_tiny_lm` trains a byte-level BPE tokenizer with ``tokenizers`` on the given texts,
builds a small randomly initialised Llama (or GPT-2) from a config, and saves both to a folder
that ``transformers`` (and okgen's ``hf`` backend) load like any hub checkpoint. The same seed
gives the same weights. The model knows nothing; it is a real transformer of the right shape.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

# A ChatML-like template so tests can exercise the chat path.
CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
SPECIAL = ["<pad>", "<s>", "</s>", "<|im_start|>", "<|im_end|>"]
# Lines that teach the tokenizer the answer format, so " A" ... " J" become single tokens.
_ANSWER_LINES = [f"Answer: {x}\n{x}. option" for x in "ABCDEFGHIJ"] * 50


def build_tiny_lm(out_dir: str | Path, texts: Iterable[str], *, arch: str = "llama", vocab_size: int = 2000,
                  hidden: int = 64, layers: int = 2, heads: int = 4, max_positions: int = 1024,
                  seed: int = 0, chat_template: bool = False, add_bos: bool = False) -> Path:
    """Train a tokenizer on ``texts``, build a tiny causal LM, save both to ``out_dir``.

    Args:
        out_dir: folder to write (``config.json``, weights, tokenizer files).
        texts: training text for the tokenizer.
        arch: ``llama`` (rotary positions) or ``gpt2`` (learned absolute positions).
        vocab_size: BPE vocabulary size.
        hidden, layers, heads: model size.
        max_positions: context length in tokens.
        seed: weight initialisation seed.
        chat_template: give the tokenizer a ChatML-like chat template.
        add_bos: the tokenizer adds ``<s>`` in front of every text (as Llama's and Gemma's do).

    Returns:
        ``out_dir``.
    """
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import (
        GPT2Config,
        GPT2LMHeadModel,
        LlamaConfig,
        LlamaForCausalLM,
        PreTrainedTokenizerFast,
    )

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIAL,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(list(texts) + _ANSWER_LINES, trainer=trainer)
    if add_bos:
        bos = tok.token_to_id("<s>")
        tok.post_processor = processors.TemplateProcessing(single="<s> $A", pair="<s> $A $B", special_tokens=[("<s>", bos)])
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", bos_token="<s>", eos_token="</s>",
                                   model_max_length=max_positions)
    if chat_template:
        fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(out)
    ids = {t: fast.convert_tokens_to_ids(t) for t in ("<pad>", "<s>", "</s>")}
    torch.manual_seed(seed)
    if arch == "llama":
        cfg = LlamaConfig(vocab_size=len(fast), hidden_size=hidden, intermediate_size=hidden * 2,
                          num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=heads,
                          max_position_embeddings=max_positions, pad_token_id=ids["<pad>"],
                          bos_token_id=ids["<s>"], eos_token_id=ids["</s>"], tie_word_embeddings=False)
        model = LlamaForCausalLM(cfg)
    elif arch == "gpt2":
        cfg = GPT2Config(vocab_size=len(fast), n_embd=hidden, n_layer=layers, n_head=heads, n_positions=max_positions,
                         bos_token_id=ids["<s>"], eos_token_id=ids["</s>"], pad_token_id=ids["<pad>"])
        model = GPT2LMHeadModel(cfg)
    else:
        raise ValueError(f"arch must be llama or gpt2, got {arch!r}")
    model.eval()
    model.save_pretrained(out, safe_serialization=True)
    return out
