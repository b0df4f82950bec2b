"""Frozen-BERT token features for the feature-based tagger, computed once and cached.

The paper's feature-based NER (section 5.3) takes token vectors from a BERT
whose weights stay fixed, in one of six ways, the rows of its feature table:

* `embeddings`: the embedding layer's output;
* `second_to_last`, `last`: one transformer layer's output;
* `sum_last_four`, `sum_all`: the sum of the last four / of every
  transformer layer's output (plain sums with equal weights);
* `concat_last_four`: the last four layers side by side (4x wider).

The tagger trained on them (`build_feature_tagger`) is a BiLSTM over the
features. Since the encoder never changes, its features are computed once
per split and kept in a `.npy` file: only the real tokens of each window,
row after row (`[total tokens, width]`), read back as a memory map. A JSON file beside
it holds a fingerprint (checkpoint, layers, the windows' token ids); a cache
whose fingerprint differs is rebuilt. Training epochs then read features
and never run the encoder.
"""

import errno
import hashlib
import json
import os

import keras
import numpy as np
import tensorflow as tf
from absl import logging
from keras import ops

from bert_tf.atomic_files import write_text, written_whole
from bert_tf.file_set import cannot_write
from bert_tf.leftover_files import remove_left_behind
from bert_tf.checkpoints import weights_identity
from bert_tf.errors import UsageError
from bert_tf.modeling.bilstm import BiLstmTagger
from bert_tf.serving.model_inference import ModelInference
from bert_tf.tasks.batching import batched_columns
from bert_tf.training.compilation import encoder_hidden_size, use_xla
from bert_tf.work_progress import WorkProgress

FEATURE_LAYERS = ("embeddings", "second_to_last", "last", "sum_last_four",
                  "concat_last_four", "sum_all")
ENCODER_INPUTS = ("input_ids", "input_mask", "segment_ids")
# The transformer layers each choice reads from the top; the others need none or one.
_LAYERS_NEEDED = {"second_to_last": 2, "sum_last_four": 4, "concat_last_four": 4}


def check_feature_layers(feature_layers, num_hidden_layers):
    """Fails unless `feature_layers` is a choice an encoder of `num_hidden_layers` has.

    Four layers summed or side by side from a two-layer model would be two,
    and the tagger would be built for the wrong width: refused instead.

    >>> check_feature_layers("concat_last_four", 12)
    >>> check_feature_layers("sum_last_four", 2)
    Traceback (most recent call last):
    bert_tf.errors.UsageError: --feature_layers=sum_last_four needs an encoder of at least 4 layers; this one has 2
    """
    if feature_layers not in FEATURE_LAYERS:
        raise UsageError(f"--feature_layers={feature_layers!r}: choose one of "
                         f"{', '.join(FEATURE_LAYERS)}")
    needed = _LAYERS_NEEDED.get(feature_layers, 1)
    if num_hidden_layers < needed:
        raise UsageError(f"--feature_layers={feature_layers} needs an encoder of at least "
                         f"{needed} layers; this one has {num_hidden_layers}")


def select_layers(outputs, feature_layers):
    """The features `feature_layers` names, from a `BertEncoder`'s output dict (checked first)."""
    layers = outputs["encoder_outputs"]
    check_feature_layers(feature_layers, len(layers))
    if feature_layers == "embeddings":
        return outputs["embedding_output"]
    if feature_layers == "second_to_last":
        return layers[-2]
    if feature_layers == "last":
        return layers[-1]
    if feature_layers == "sum_last_four":
        return ops.sum(ops.stack(layers[-4:]), axis=0)
    if feature_layers == "concat_last_four":
        return ops.concatenate(layers[-4:], axis=-1)
    return ops.sum(ops.stack(layers), axis=0)  # "sum_all"


def feature_width(hidden_size, feature_layers):
    """Width of one token's feature vector.

    >>> feature_width(768, "concat_last_four"), feature_width(768, "sum_all")
    (3072, 768)
    """
    return hidden_size * (4 if feature_layers == "concat_last_four" else 1)


def feature_extractor(encoder, feature_layers):
    """A Keras model: encoder inputs -> the chosen float32 features `[B, T, width]`."""
    selected = select_layers(encoder(encoder.input), feature_layers)
    return keras.Model(encoder.input, ops.cast(selected, "float32"))


def feature_function(extractor):
    """A `feature_extractor`'s forward pass, one traced function for every split of a run.

    XLA-compiled where that is faster for the encoder's size and precision
    (`compilation.use_xla`). A new `tf.function` per split traced six times
    for CoNLL's three splits, and TensorFlow warned of retracing;
    `ModelInference` traces once.
    """
    return ModelInference(extractor, jit_compile=use_xla(
        None, encoder_hidden_size(extractor), False, extractor.compute_dtype))


def build_feature_tagger(width, num_labels, lstm_units, initializer_range=0.02):
    """Cached features `[B, T, width]` + `input_mask` -> `BiLstmTagger` logits."""
    inputs = {"features": keras.Input((None, width), dtype="float32", name="features"),
              "input_mask": keras.Input((None,), dtype="int32", name="input_mask")}
    tagger = BiLstmTagger(num_labels, lstm_units=lstm_units,
                          initializer_range=initializer_range, name="bilstm_tagger")
    return keras.Model(inputs, tagger(inputs["features"], inputs["input_mask"]),
                       name="bert_feature_tagger")


def fingerprint(init_checkpoint, feature_layers, columns, config):
    """What a cache was computed from: the checkpoint (its path and its weights' identity,
    so new weights written at the same path are seen), the encoder's `BertConfig` (the same
    weights give other features under another activation, depth or `"causal"` mark),
    layers, and a digest of the token ids."""
    digest = hashlib.sha256()
    for name in ENCODER_INPUTS:
        digest.update(np.ascontiguousarray(columns[name]).tobytes())
    return {"init_checkpoint": os.path.abspath(init_checkpoint) if init_checkpoint else None,
            "weights": weights_identity(init_checkpoint) if init_checkpoint else None,
            "bert_config": config.to_dict(), "feature_layers": feature_layers,
            "shape": list(columns["input_ids"].shape), "inputs_sha256": digest.hexdigest()}


def _cached(path, key, rows):
    """The features cached at `path` for `key`, or None: absent, stale, or unreadable.

    A file of another shape or type under a matching key (replaced by hand, or
    by another tool) is unreadable too: its rows would be read as other
    windows' features, or past its end.
    """
    if not (os.path.exists(path) and os.path.exists(path + ".json")):
        return None
    try:
        with open(path + ".json") as f:
            if json.load(f) != key:
                logging.info("%s: cached features were computed from other inputs; "
                             "recomputing", path)
                return None
        features = np.load(path, mmap_mode="r")
    except (OSError, ValueError, EOFError) as error:  # a damaged cache
        logging.warning("%s: cached features do not read (%s); recomputing", path, error)
        return None
    expected = (rows, feature_width(key["bert_config"]["hidden_size"], key["feature_layers"]))
    if features.shape != expected or features.dtype != np.float32:
        logging.warning("%s: cached features are %s %s, not float32 %s; recomputing", path,
                        features.dtype, list(features.shape), list(expected))
        return None
    return features


def cached_features(path, make_function, columns, batch_size, key):
    """The features of the windows in `columns`, from `path` or computed and saved there.

    Args:
        path: the `.npy` file; `<path>.json` holds its fingerprint.
        make_function: returns the `feature_function`; called only when the
            features must be computed (loading an encoder costs time).
        columns: `tagging_features.window_columns` output (padded windows).
        batch_size: windows per forward pass.
        key: the `fingerprint` the cache must match.

    Returns:
        A read-only memory map `[total real tokens, width]`, windows in order.
    """
    cached = _cached(path, key, int(columns["input_mask"].sum()))
    if cached is not None:
        logging.info("%s: reusing cached features", path)
        return cached
    key_path = path + ".json"
    if os.path.exists(key_path):
        os.remove(key_path)
    remove_left_behind(path)  # a killed computation's features: gigabytes for CoNLL's train
    # Placed as TensorFlow places by default (on a GPU where there is one), not on the
    # caller's device: `Task.dataset` runs in the input pipeline's CPU scope. An encoder
    # built there computes on the CPU, and the pass XLA compiles for the GPU at a later
    # split cannot read its variables.
    with tf.device(None):
        _compute(path, make_function(), columns, batch_size)
    write_text(key_path, json.dumps(key))
    return np.load(path, mmap_mode="r")


def _compute(path, forward, columns, batch_size):
    """Writes the features `forward` gives `columns`' windows to `path`, whole or not at all."""
    lengths = columns["input_mask"].sum(axis=1)
    inputs = {name: columns[name] for name in ENCODER_INPUTS}
    progress = WorkProgress(f"{path}: computing the features of {len(lengths)} windows",
                            total=-(-len(lengths) // batch_size))
    with written_whole(path, suffix=".npy") as temp:  # numpy wants the suffix
        rows = _disk_backed_rows(path, temp, (int(lengths.sum()), forward.model.output.shape[-1]))
        row = window = 0
        for batch in batched_columns(inputs, len(lengths), batch_size):
            for features in forward(batch).numpy():
                rows[row:row + lengths[window]] = features[:lengths[window]]
                row, window = row + lengths[window], window + 1
            progress.advance()
        rows.flush()
        del rows
    progress.close()


def _disk_backed_rows(path, temp, shape):
    """A float32 `.npy` memory map of `shape` at `temp`, its disk space taken at once.

    A memory map's pages find a full disk only when written, and the kernel
    then kills the process (SIGBUS, no message, no clean-up); taking the
    space first fails at once, naming `path`. Where the platform has no
    `posix_fallocate` (macOS, Windows) or the file system does not support
    it, the space is not taken ahead.

    Raises:
        OSError: "cannot write PATH: reason".
    """
    try:
        rows = np.lib.format.open_memmap(temp, mode="w+", dtype=np.float32, shape=shape)
        if hasattr(os, "posix_fallocate"):
            with open(temp, "r+b") as f:
                try:
                    os.posix_fallocate(f.fileno(), 0, os.fstat(f.fileno()).st_size)
                except OSError as error:
                    if error.errno != errno.EOPNOTSUPP:
                        raise
    except OSError as error:
        raise cannot_write(path, error) from None
    return rows


def feature_dataset(features, columns, batch_size, is_training=False, seed=None,
                    input_context=None):
    """Batches of `{features, input_mask, label_ids, label_weights}` from cached rows.

    Shuffling, sharding and batching are `batched_columns`' over window
    indices; each batch gathers its windows' rows and pads them to the
    windows' length.
    """
    mask = columns["input_mask"]
    lengths = mask.sum(axis=1)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    seq_length, width = mask.shape[1], features.shape[1]

    def gather(windows):
        batch = np.zeros((len(windows), seq_length, width), np.float32)
        for row, window in enumerate(windows):
            batch[row, :lengths[window]] = features[offsets[window]:offsets[window + 1]]
        return batch

    def add_features(batch):
        batch = dict(batch)
        gathered = tf.numpy_function(gather, [batch.pop("window")], tf.float32)
        gathered.set_shape([None, seq_length, width])
        batch["features"] = gathered
        return batch

    indexed = {"window": np.arange(len(mask)), "input_mask": mask,
               "label_ids": columns["label_ids"], "label_weights": columns["label_weights"]}
    dataset = batched_columns(indexed, len(mask), batch_size, is_training, seed, input_context)
    return dataset.map(add_features, num_parallel_calls=tf.data.AUTOTUNE).prefetch(
        tf.data.AUTOTUNE)
