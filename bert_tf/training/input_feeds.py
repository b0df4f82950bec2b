"""What each input pipeline of a distributed run reads: where to start, and its share.

`Trainer` reads data through `strategy.distribute_datasets_from_function`,
which calls an input function once per input pipeline (one per worker)
with a `tf.distribute.InputContext`. Two things about those pipelines are
not the input function's business, and are decided here:

* `skipping`: a run resumed at step N goes on in its data (a seeded shuffle
  gives the same batches every run) instead of training on the first
  batches again;
* `global_batch_shares`: evaluation scores the examples one device would,
  on any number of replicas and workers.
"""

import tensorflow as tf


def skipping(dataset_fn, micro_batches):
    """`dataset_fn` less the first `micro_batches` global micro-batches of the training.

    Each step draws one batch per replica per micro-batch, so a pipeline
    skips that many per replica it feeds. The position is the same number of
    examples whatever the replica count (a resumed run may use other GPUs).

    >>> resumed = skipping(lambda input_context: tf.data.Dataset.range(6).batch(1), 2)
    >>> [int(batch[0]) for batch in resumed(None)]
    [2, 3, 4, 5]
    """
    def skipped(input_context):
        replicas = (input_context.num_replicas_in_sync // input_context.num_input_pipelines
                    if input_context else 1)
        return dataset_fn(input_context).skip(micro_batches * replicas)
    return skipped


def global_batch_shares(dataset_fn, input_context):
    """An input pipeline's share of the global batches one device would read, in order.

    Evaluation must score the same examples on any number of replicas and
    workers. Giving each pipeline its own part of the files (or records)
    does not: each then drops its own remainder, and workers whose parts
    differ in length end with different numbers of batches (a worker left
    without one fed the model an empty batch, and the run failed). So every
    pipeline reads the global batches of `dataset_fn(None)` (evaluation
    data is small) and keeps, of each, the rows of its replicas, in
    per-replica batches.

    Example (two pipelines of one replica each, 5 examples in batches of 2):

    >>> def batches(input_context):
    ...     return tf.data.Dataset.range(5).batch(2, drop_remainder=True)
    >>> second = tf.distribute.InputContext(num_input_pipelines=2, input_pipeline_id=1,
    ...                                     num_replicas_in_sync=2)
    >>> [b.numpy().tolist() for b in global_batch_shares(batches, second)]
    [[1], [3]]
    """
    if input_context is None or input_context.num_replicas_in_sync == 1:
        return dataset_fn(input_context)
    dataset = dataset_fn(None)
    global_batch = tf.nest.flatten(dataset.element_spec)[0].shape[0]
    replicas = input_context.num_replicas_in_sync
    if global_batch is None or global_batch % replicas:
        raise ValueError(f"evaluation on {replicas} replicas needs whole global batches that "
                         f"divide among them (batch dimension {global_batch})")
    per_replica = global_batch // replicas
    rows = per_replica * (replicas // input_context.num_input_pipelines)
    start = input_context.input_pipeline_id * rows
    dataset = dataset.map(lambda batch: tf.nest.map_structure(
        lambda t: t[start:start + rows], batch))
    return dataset.unbatch().batch(per_replica, drop_remainder=True)
