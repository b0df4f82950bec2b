"""Turning WordPiece tokens into the encoder's fixed-length inputs (Python side).

`extract_features.py` lays its inputs out like the original's runners:
`[CLS] A [SEP]` or `[CLS] A [SEP] B [SEP]`, segment ids 0 through the first
`[SEP]` and 1 after it, a mask of ones over real tokens, zero padding to
`max_seq_length`. Pairs that are too long lose tokens from the end of the
longer side (ties from B), single sentences from their end. A second text
with no tokens (`A ||| \u200b`: only characters the tokenizer drops) packs
as a single sentence, as in the original, not with an empty B and a second
`[SEP]`.
"""

import dataclasses

import numpy as np

from bert_tf.tokenization.truncation import kept_lengths


@dataclasses.dataclass
class PackedInput:
    """One packed example: the tokens kept and the padded int32 model inputs."""

    tokens: list
    input_ids: np.ndarray
    input_mask: np.ndarray
    segment_ids: np.ndarray


def truncate_pair(tokens_a, tokens_b, max_length):
    """Cuts tokens from the end of the longer list (B on ties) until both fit, in place."""
    keep_a, keep_b = kept_lengths(len(tokens_a), len(tokens_b), max_length)
    del tokens_a[keep_a:], tokens_b[keep_b:]


def pack_tokens(tokens_a, tokens_b, tokenizer, max_seq_length):
    """Packs one example; `tokens_b` may be None (or empty: a single sentence). Copies its inputs.

    Example:

    >>> class Vocab:
    ...     vocab = {"[CLS]": 1, "[SEP]": 2, "a": 3, "b": 4}
    ...     def convert_tokens_to_ids(self, tokens): return [self.vocab[t] for t in tokens]
    >>> packed = pack_tokens(["a", "a", "a"], ["b"], Vocab(), 6)
    >>> packed.tokens, packed.segment_ids.tolist()
    (['[CLS]', 'a', 'a', '[SEP]', 'b', '[SEP]'], [0, 0, 0, 0, 1, 1])
    """
    if max_seq_length < 3:
        raise ValueError(f"max_seq_length must be at least 3, got {max_seq_length}")
    tokens_a = list(tokens_a)
    tokens_b = list(tokens_b) if tokens_b else None
    if tokens_b is None:
        del tokens_a[max_seq_length - 2:]
    else:
        truncate_pair(tokens_a, tokens_b, max_seq_length - 3)
    tokens = ["[CLS]"] + tokens_a + ["[SEP]"]
    segments = [0] * len(tokens)
    if tokens_b:  # the original's test after its cut: at max_seq_length 3 or 4 none may be left
        tokens += tokens_b + ["[SEP]"]
        segments += [1] * (len(tokens_b) + 1)
    padding = max_seq_length - len(tokens)
    ids = tokenizer.convert_tokens_to_ids(tokens)
    return PackedInput(
        tokens=tokens,
        input_ids=np.array(ids + [0] * padding, "int32"),
        input_mask=np.array([1] * len(tokens) + [0] * padding, "int32"),
        segment_ids=np.array(segments + [0] * padding, "int32"))


def stack_inputs(packed):
    """Stacks `PackedInput`s into the encoder's input dict of `[N, T]` arrays."""
    return {name: np.stack([getattr(p, name) for p in packed])
            for name in ("input_ids", "input_mask", "segment_ids")}
