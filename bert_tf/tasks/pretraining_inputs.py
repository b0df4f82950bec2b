"""Input functions of pretraining, including the left-to-right (LTR) ablation.

`pretraining_dataset_fn` returns what `Trainer` and
`strategy.distribute_datasets_from_function` take: a function of a
`tf.distribute.InputContext` giving that input pipeline's batches. The
batches come from the TFRecords of `create_pretraining_data.py`, or, with a
`DynamicPretrainingData`, from raw text masked afresh while training
(`bert_tf.data.dynamic_masking`); both give the same features dict.

For the paper's "LTR & No NSP" model the same records serve a left-to-right
language model: `left_to_right_batch` puts the original tokens back where the
masked-LM records replaced them, and asks the (causal) model to predict, at
every position t, the token at t + 1. The masked-LM head and loss are then
used unchanged, with one prediction per real next token.
"""

import tensorflow as tf

from bert_tf.data import readers

# Dynamic masking's evaluation pass draws its pairs and masks from this seed,
# so that every evaluation of a run sees the same batches.
DYNAMIC_EVAL_SEED = 12345


def left_to_right_batch(batch):
    """Turns a masked-LM batch into a next-token-prediction batch.

    Args:
        batch: a features dict of `readers.pretraining_dataset`.

    Returns:
        The same dict with `input_ids` unmasked and `masked_lm_positions` =
        0..T-2, `masked_lm_ids` = the next tokens, `masked_lm_weights` = 1
        where the next token is real (the head predicts P = T-1 tokens).

    Example:

    >>> batch = {"input_ids": tf.constant([[101, 103, 7, 102, 0]]),
    ...          "input_mask": tf.constant([[1, 1, 1, 1, 0]]),
    ...          "masked_lm_positions": tf.constant([[1, 0]]),
    ...          "masked_lm_ids": tf.constant([[5, 0]]),
    ...          "masked_lm_weights": tf.constant([[1.0, 0.0]])}
    >>> out = left_to_right_batch(batch)
    >>> out["input_ids"].numpy().tolist(), out["masked_lm_ids"].numpy().tolist()
    ([[101, 5, 7, 102, 0]], [[5, 7, 102, 0]])
    >>> out["masked_lm_weights"].numpy().tolist()
    [[1.0, 1.0, 1.0, 0.0]]
    """
    input_ids = batch["input_ids"]
    length = tf.shape(input_ids)[1]
    # [B, P, T]: which masked slot (with a real prediction) covers which position.
    hits = (tf.one_hot(batch["masked_lm_positions"], length, dtype=tf.int32)
            * tf.cast(batch["masked_lm_weights"] > 0, tf.int32)[:, :, None])
    restored = tf.reduce_max(hits * tf.cast(batch["masked_lm_ids"], tf.int32)[:, :, None], 1)
    covered = tf.reduce_sum(hits, axis=1) > 0
    tokens = tf.where(covered, restored, tf.cast(input_ids, tf.int32))
    positions = tf.range(length - 1, dtype=tf.int32)[None, :] + tf.zeros_like(tokens[:, 1:])
    return dict(batch, input_ids=tokens, masked_lm_positions=positions,
                masked_lm_ids=tokens[:, 1:],
                masked_lm_weights=tf.cast(batch["input_mask"][:, 1:], tf.float32))


def pretraining_dataset_fn(input_files, seq_length, max_predictions_per_seq, batch_size,
                           is_training, causal=False, seed=None, dynamic_masking=None):
    """An input function over pretraining TFRecords (or raw text) for `Trainer`.

    Args:
        input_files: comma-separated globs (the original's `--input_file`):
            TFRecords, or text files in the pretraining input format when
            `dynamic_masking` is given.
        seq_length, max_predictions_per_seq: what the records were written with.
        batch_size: the global batch size of one (micro-)batch; each input
            pipeline batches its replicas' share.
        is_training: shuffled and repeated; else one pass (records in order; dynamic
            masking's pairs shuffled by `DYNAMIC_EVAL_SEED`, the same every time).
        causal: yield left-to-right batches (see `left_to_right_batch`).
        seed: seed of the shuffles (None: fresh each run; an evaluation
            pass with dynamic masking uses `DYNAMIC_EVAL_SEED`).
        dynamic_masking: a `DynamicPretrainingData`, to pair and mask raw text
            in tf.data instead of reading masked records; its options' lengths
            must be `seq_length` and `max_predictions_per_seq`.

    Returns:
        `input_context -> tf.data.Dataset`.
    """
    if dynamic_masking is not None:
        options = dynamic_masking.options
        lengths = (options.max_seq_length, options.max_predictions_per_seq)
        if lengths != (seq_length, max_predictions_per_seq):
            raise ValueError(f"dynamic_masking makes examples of lengths {lengths}, not "
                             f"{(seq_length, max_predictions_per_seq)}")

    def dataset_fn(input_context=None):
        if dynamic_masking is None:
            dataset = readers.pretraining_dataset(
                input_files, seq_length, max_predictions_per_seq, batch_size, is_training,
                input_context=input_context, seed=seed)
        else:
            dataset = dynamic_masking.dataset(
                input_files, batch_size, is_training, input_context=input_context,
                seed=seed if is_training or seed is not None else DYNAMIC_EVAL_SEED)
        if causal:
            dataset = dataset.map(left_to_right_batch, num_parallel_calls=tf.data.AUTOTUNE)
        return dataset

    return dataset_fn
