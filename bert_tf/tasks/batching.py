"""Batches of in-memory example columns, as every fine-tuning task reads them.

Tasks turn their examples into columns (numpy arrays or lists of strings,
one row per example), and this one function makes the training and
evaluation pipelines from them, so sharding, shuffling and the last batch
are handled the same way everywhere.
"""

import tensorflow as tf

# The feature holding a task's gold class ids (or scores, or tags).
LABEL_KEY = "label_ids"


def batched_columns(columns, num_examples, batch_size, is_training=False, seed=None,
                    input_context=None, drop_remainder=None):
    """A `tf.data.Dataset` of batched dicts from `{name: column}`.

    Training: sharded per input pipeline, shuffled over all examples,
    repeated, whole batches only. Evaluation: one ordered pass (the last
    batch may be smaller unless `drop_remainder`).

    Args:
        columns: `{name: array or list}`, each with `num_examples` rows.
        num_examples: the row count (the shuffle buffer).
        batch_size: the global batch; with `input_context`, each pipeline
            batches its replicas' share.
        is_training: shuffle, repeat and drop the remainder.
        seed: the shuffle seed.
        input_context: a `tf.distribute.InputContext`, or None.
        drop_remainder: overrides the default (`is_training`).

    Example:

    >>> import numpy as np
    >>> data = batched_columns({"x": np.arange(5)}, 5, batch_size=2)
    >>> [batch["x"].numpy().tolist() for batch in data]
    [[0, 1], [2, 3], [4]]
    """
    dataset = tf.data.Dataset.from_tensor_slices(columns)
    if input_context is not None:
        batch_size = input_context.get_per_replica_batch_size(batch_size)
        dataset = dataset.shard(input_context.num_input_pipelines,
                                input_context.input_pipeline_id)
    if is_training:
        dataset = dataset.shuffle(num_examples, seed=seed).repeat()
    return dataset.batch(batch_size, drop_remainder=is_training if drop_remainder is None
                         else drop_remainder)
