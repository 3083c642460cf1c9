"""Tiny transformer checkpoints built offline, for tests and benchmarks of neural retrievers.

Nothing is downloaded: a WordPiece tokenizer is trained with ``tokenizers`` on the texts
given, and a randomly initialised BERT is built from a config. The checkpoints load with
the real libraries (``transformers``, ``colbert-ai``) exactly as a published one would.

* :func:`train_wordpiece`: a BERT-style fast tokenizer whose vocabulary holds ``[unused0]``
  and ``[unused1]`` (ColBERT's query and document markers).
* :func:`make_tiny_colbert`: a ColBERT checkpoint folder (BERT + ``linear.weight`` +
  ``artifact.metadata``).
* :func:`make_tiny_dpr`: an HF DPR question/context encoder pair.
* :func:`make_tiny_sentence_transformer`: a BERT folder sentence-transformers loads (mean pooling).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "[unused0]", "[unused1]"]


def train_wordpiece(texts: Sequence[str], folder: str | Path, vocab_size: int = 2000):
    """Train a lower-casing WordPiece tokenizer on ``texts`` and save it as a BERT tokenizer.

    Returns:
        The ``transformers.BertTokenizerFast`` (also saved in ``folder``).
    """
    from tokenizers import (
        Tokenizer,
        decoders,
        models,
        normalizers,
        pre_tokenizers,
        processors,
        trainers,
    )
    from transformers import BertTokenizerFast

    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    trainer = trainers.WordPieceTrainer(vocab_size=vocab_size, special_tokens=SPECIALS, show_progress=False)
    tok.train_from_iterator(list(texts), trainer=trainer)
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", cls), ("[SEP]", sep)])
    tok.decoder = decoders.WordPiece()
    fast = BertTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", sep_token="[SEP]", pad_token="[PAD]",
                             cls_token="[CLS]", mask_token="[MASK]", do_lower_case=True, model_max_length=512)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    fast.save_pretrained(folder)
    return fast


def _bert_config(vocab_size: int, hidden: int, layers: int, heads: int):
    from transformers import BertConfig

    return BertConfig(vocab_size=vocab_size, hidden_size=hidden, num_hidden_layers=layers,
                      num_attention_heads=heads, intermediate_size=hidden * 4, max_position_embeddings=512)


def make_tiny_colbert(folder: str | Path, texts: Sequence[str], *, dim: int = 32, hidden: int = 64, layers: int = 2,
                      heads: int = 2, vocab_size: int = 2000, doc_maxlen: int = 180, query_maxlen: int = 32,
                      seed: int = 0, lexical: bool = True) -> Path:
    """Write a ColBERT checkpoint with a random BERT and a locally trained tokenizer.

    Args:
        folder: where to write the checkpoint.
        texts: texts to train the tokenizer on.
        dim: ColBERT embedding size (the ``linear`` projection's output).
        hidden, layers, heads: BERT size (bert-base is 768, 12, 12).
        vocab_size: WordPiece vocabulary size.
        doc_maxlen, query_maxlen: ColBERT's token limits recorded in the checkpoint.
        seed: torch seed for the random weights.
        lexical: make the transformer layers pass each token's (random) embedding through
            (attention and feed-forward outputs and position embeddings zeroed), so identical
            word pieces get identical vectors: a bag-of-tokens ColBERT whose rankings follow
            word overlap, which tests can assert on. False keeps a fully random BERT (as
            costly to run, for benchmarks).

    Returns:
        The checkpoint folder.
    """
    import torch
    from colbert.infra.config import ColBERTConfig
    from colbert.modeling.hf_colbert import class_factory

    folder = Path(folder)
    tok = train_wordpiece(texts, folder, vocab_size)
    config = _bert_config(len(tok), hidden, layers, heads)
    config.save_pretrained(folder)  # class_factory reads the model type from the folder
    torch.manual_seed(seed)
    cconf = ColBERTConfig(dim=dim, doc_maxlen=doc_maxlen, query_maxlen=query_maxlen)
    model = class_factory(str(folder))(config, cconf)
    if lexical:
        with torch.no_grad():
            bert = model.LM
            bert.embeddings.position_embeddings.weight.zero_()
            bert.embeddings.token_type_embeddings.weight.zero_()
            for layer in bert.encoder.layer:
                for dense in (layer.attention.output.dense, layer.output.dense):
                    dense.weight.zero_()
                    dense.bias.zero_()
    model.save_pretrained(folder)  # includes linear.weight, so every load gets the same projection
    from okgen.retrieval.colbert_retriever import outside_git

    folder = Path(folder).resolve()
    with outside_git():  # colbert-ai records the working directory's git branch (fails when detached)
        ColBERTConfig(dim=dim, doc_maxlen=doc_maxlen, query_maxlen=query_maxlen, checkpoint=str(folder),
                      model_name=str(folder)).save_for_checkpoint(str(folder))
    return folder


def make_tiny_dpr(folder: str | Path, texts: Sequence[str], *, hidden: int = 64, layers: int = 2, heads: int = 2,
                  vocab_size: int = 2000, seed: int = 0) -> tuple[Path, Path]:
    """Write an HF DPR question encoder and context encoder (random weights, shared tokenizer).

    Returns:
        (question encoder folder, context encoder folder).
    """
    import torch
    from transformers import DPRConfig, DPRContextEncoder, DPRQuestionEncoder

    folder = Path(folder)
    q_dir, c_dir = folder / "question", folder / "context"
    tok = train_wordpiece(texts, q_dir, vocab_size)
    tok.save_pretrained(c_dir)
    bert = _bert_config(len(tok), hidden, layers, heads)
    config = DPRConfig(**{k: v for k, v in bert.to_dict().items() if k in DPRConfig().to_dict()})
    torch.manual_seed(seed)
    DPRQuestionEncoder(config).save_pretrained(q_dir)
    torch.manual_seed(seed + 1)
    DPRContextEncoder(config).save_pretrained(c_dir)
    return q_dir, c_dir


def make_tiny_sentence_transformer(folder: str | Path, texts: Sequence[str], *, hidden: int = 64, layers: int = 2,
                                   heads: int = 2, vocab_size: int = 2000, seed: int = 0) -> Path:
    """Write a random BERT folder that sentence-transformers loads with mean pooling."""
    import torch
    from transformers import BertModel

    folder = Path(folder)
    tok = train_wordpiece(texts, folder, vocab_size)
    torch.manual_seed(seed)
    BertModel(_bert_config(len(tok), hidden, layers, heads)).save_pretrained(folder)
    return folder
