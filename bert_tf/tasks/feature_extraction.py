"""Per-token features from chosen encoder layers (the paper's feature-based use).

Reads the original `extract_features.py` input (one example per line, a pair
written `A ||| B`), packs each like the original, and runs the encoder in
fixed-shape batches (so an XLA-compiled forward pass compiles once) to
return, for every real token, the vectors of the requested layers
(`-1` = last transformer block).
"""

import dataclasses
import re

import numpy as np
import tensorflow as tf
from absl import logging

from bert_tf.errors import UsageError
from bert_tf.tasks.packing import pack_tokens, stack_inputs
from bert_tf.text_files import utf8_lines
from bert_tf.training.compilation import use_xla

_PAIR = re.compile(r"^(.*) \|\|\| (.*)$")


@dataclasses.dataclass
class TextExample:
    """One input line: `text_b` is None for a single sentence."""

    unique_id: int
    text_a: str
    text_b: str = None


def read_examples(path):
    """Yields a `TextExample` per line of `path` (`A ||| B` makes a pair).

    Raises:
        OSError: the file cannot be read (the message names it).
        ValueError: naming the file and line of bytes that are not UTF-8.
    """
    for index, line in enumerate(utf8_lines(path)):
        line = line.strip()
        match = _PAIR.match(line)
        if match:
            yield TextExample(index, match.group(1), match.group(2))
        else:
            yield TextExample(index, line)


def check_pairs_fit(path, model_files):
    """Refuses, before any work, an `A ||| B` line of `path` for a model with one token type.

    Reads the file once (a small cost beside running the model on each line).

    Raises:
        ValueError: naming the model's config, its `type_vocab_size` and the
            file and line of the first pair (`ModelFiles.require_pairs`).
    """
    pair = next((example for example in read_examples(path) if example.text_b is not None),
                None)
    if pair is not None:
        model_files.require_pairs(f"--input_file={path}:{pair.unique_id + 1} (`A ||| B`)",
                                  error=ValueError)


def resolve_layer_indexes(layers, num_layers):
    """Parses `"-1,-2"` into ints, checking each names one of `num_layers` blocks.

    >>> resolve_layer_indexes("-1,-2", 6)
    [-1, -2]
    >>> resolve_layer_indexes("-1,-2,-3", 2)
    Traceback (most recent call last):
    bert_tf.errors.UsageError: --layers=-1,-2,-3: -3 is not a layer of a 2-layer model (use indexes in [-2, 1])
    """
    try:
        indexes = [int(x) for x in str(layers).split(",") if x.strip()] if isinstance(
            layers, str) else [int(x) for x in layers]
    except ValueError:
        raise UsageError(f"--layers={layers}: expected comma-separated integers such as "
                         "-1,-2,-3,-4") from None
    if not indexes:
        raise UsageError(f"--layers={layers!r} names no layer")
    bad = [i for i in indexes if not -num_layers <= i < num_layers]
    if bad:
        not_layers = "is not a layer" if len(bad) == 1 else "are not layers"
        raise UsageError(f"--layers={layers}: {', '.join(map(str, bad))} {not_layers} of a "
                         f"{num_layers}-layer model (use indexes in [{-num_layers}, "
                         f"{num_layers - 1}])")
    return indexes


class LayerFeatures:
    """Runs an encoder and returns the chosen layers as `[B, L, T, H]` float32.

    Example:

    >>> from bert_tf.config import BertConfig
    >>> from bert_tf.modeling import BertEncoder
    >>> encoder = BertEncoder(BertConfig.named("tiny", vocab_size=100))
    >>> features = LayerFeatures(encoder, [-1, -2], jit_compile=False)
    >>> ids = np.ones((2, 5), "int32")
    >>> features({"input_ids": ids, "input_mask": ids, "segment_ids": 0 * ids}).shape
    (2, 2, 5, 128)
    """

    def __init__(self, encoder, layer_indexes, jit_compile=None):
        self.layer_indexes = list(layer_indexes)
        jit_compile = use_xla(jit_compile, encoder.config.hidden_size, training=False,
                              compute_dtype=encoder.compute_dtype)

        def forward(inputs):
            layers = encoder(inputs, training=False)["encoder_outputs"]
            return tf.stack([tf.cast(layers[i], tf.float32) for i in self.layer_indexes], axis=1)

        self._forward = tf.function(forward, jit_compile=jit_compile)

    def __call__(self, inputs):
        return self._forward(inputs).numpy()


def extract_features(examples, tokenizer, layer_features, max_seq_length, batch_size):
    """Yields `(example, tokens, features)` per example, `features` `[L, len(tokens), H]`.

    A last partial batch is padded to `batch_size` rows, so that every call
    has the shape of the full ones; an input of fewer lines than one batch
    runs unpadded (its one call has one shape anyway), not as `batch_size`
    rows: a `--batch_size` far above the line count cost that many rows'
    memory and time.
    """
    def flush(batch, rows):
        packed = [p for _, p in batch]
        inputs = stack_inputs(packed + packed[-1:] * (rows - len(packed)))
        values = layer_features(inputs)
        for row, (example, p) in enumerate(batch):
            yield example, p.tokens, values[row, :, :len(p.tokens)]

    batch, full_batch_ran, read, cut = [], False, 0, 0
    for example in examples:
        tokens_a = tokenizer.tokenize(example.text_a)
        tokens_b = tokenizer.tokenize(example.text_b) if example.text_b is not None else None
        read += 1
        cut += len(tokens_a) + len(tokens_b or ()) + (3 if tokens_b else 2) > max_seq_length
        batch.append((example, pack_tokens(tokens_a, tokens_b, tokenizer, max_seq_length)))
        if len(batch) == batch_size:
            yield from flush(batch, batch_size)
            batch, full_batch_ran = [], True
    if batch:
        yield from flush(batch, batch_size if full_batch_ran else len(batch))
    if not read:
        logging.warning("no example to extract: the input has no line of text")
    if cut:
        logging.warning("%d of %d examples were cut to max_seq_length %d pieces (their features "
                        "stop there)", cut, read, max_seq_length)
