"""tf.data input pipeline over pretraining TFRecords.

Reads the records that the original `create_pretraining_data.py` writes (and
that ours writes: same feature names and dtypes, see
docs/ORIGINAL_BEHAVIOUR.md) and yields batches of the features the
pretraining model and its losses need.

The pipeline follows the original `input_fn`: for training, list the files,
give each input pipeline its own share of them (before any reading, so hosts
never read the same bytes), shuffle the file order every epoch, read several
files at once, shuffle records in a buffer and repeat forever; for evaluation,
read the files once in order. Integer features become int32, the type the
accelerators want.

Each element is one flat dict, the same as the original's `features`:

    input_ids, input_mask, segment_ids    int32   [batch, seq_length]
    masked_lm_positions, masked_lm_ids    int32   [batch, max_predictions_per_seq]
    masked_lm_weights                     float32 [batch, max_predictions_per_seq]
    next_sentence_labels                  int32   [batch, 1]

The first three are the encoder's inputs; `masked_lm_positions` tells the
masked-LM head where to gather; the rest are targets. One dict keeps both
readers of this package (this one and `dynamic_masking`) interchangeable and
lets the training loop take what it needs by name.
"""

import tensorflow as tf
from google.protobuf import message

from bert_tf.data.input_files import expand_input_patterns

# Feature name -> (dtype in the record, length key).
_FEATURES = {
    "input_ids": (tf.int64, "seq_length"),
    "input_mask": (tf.int64, "seq_length"),
    "segment_ids": (tf.int64, "seq_length"),
    "masked_lm_positions": (tf.int64, "max_predictions_per_seq"),
    "masked_lm_ids": (tf.int64, "max_predictions_per_seq"),
    "masked_lm_weights": (tf.float32, "max_predictions_per_seq"),
    "next_sentence_labels": (tf.int64, "one"),
}

FEATURE_NAMES = tuple(_FEATURES)


def interleave_files(files, read_fn, is_training, input_context=None,
                     cycle_length=None, seed=None):
    """Reads files into one stream of elements, sharded per input pipeline.

    Files are divided among `input_context.num_input_pipelines` before any
    reading. With fewer files than pipelines every pipeline reads all files
    and keeps every n-th element instead (pass `seed` in training so all
    pipelines see the same order and their shares stay disjoint).

    Args:
      files: list of file paths (see `expand_input_patterns`).
      read_fn: maps a scalar string tensor (a path) to a `tf.data.Dataset`.
      is_training: shuffle the files every epoch, read `cycle_length` files at
        once in no fixed order, repeat forever. Otherwise one ordered pass.
      input_context: a `tf.distribute.InputContext`, or None for one pipeline.
      cycle_length: files read at once in training; default min(4, files).
      seed: seed of the file shuffle (None: a fresh order every run).

    Returns:
      A `tf.data.Dataset` of the elements `read_fn` yields.
    """
    num_pipelines = input_context.num_input_pipelines if input_context else 1
    pipeline_id = input_context.input_pipeline_id if input_context else 0
    shard_files = len(files) >= num_pipelines
    dataset = tf.data.Dataset.from_tensor_slices(tf.constant(files, tf.string))
    if shard_files and num_pipelines > 1:
        dataset = dataset.shard(num_pipelines, pipeline_id)
    num_files = -(-len(files) // num_pipelines) if shard_files else len(files)
    if is_training:
        dataset = dataset.shuffle(num_files, seed=seed, reshuffle_each_iteration=True)
        dataset = dataset.repeat()
        dataset = dataset.interleave(
            read_fn, cycle_length=cycle_length or min(4, num_files),
            num_parallel_calls=tf.data.AUTOTUNE, deterministic=seed is not None)
    else:
        dataset = dataset.interleave(read_fn, cycle_length=1)
    if not shard_files:
        dataset = dataset.shard(num_pipelines, pipeline_id)
    return dataset


def check_record_lengths(path, seq_length, max_predictions_per_seq):
    """Fails early, naming the file, when its records have other lengths.

    Args:
      path: a TFRecord file of pretraining examples.
      seq_length: the expected length of input_ids, input_mask, segment_ids.
      max_predictions_per_seq: the expected length of the masked_lm_* features.

    Raises:
      ValueError: if the file is not a TFRecord file of `tf.train.Example`s,
        or its first record lacks a feature or has another length.
    """
    try:
        records = [r.numpy() for r in tf.data.TFRecordDataset(path).take(1)]
        examples = [tf.train.Example.FromString(r) for r in records]
    except (tf.errors.OpError, message.DecodeError) as error:
        raise ValueError(f"{path}: not a TFRecord file of tf.train.Example "
                         f"({type(error).__name__})") from None
    for example in examples:
        features = example.features.feature
        expected = {"seq_length": seq_length, "one": 1,
                    "max_predictions_per_seq": max_predictions_per_seq}
        for name, (_, key) in _FEATURES.items():
            if name not in features:
                raise ValueError(f"{path}: record has no feature {name!r}")
            kind = features[name].WhichOneof("kind")
            found = len(getattr(features[name], kind).value) if kind else 0
            if found != expected[key]:
                raise ValueError(
                    f"{path}: feature {name!r} has length {found}, expected "
                    f"{expected[key]} ({key}); were the records written with "
                    f"other max_seq_length / max_predictions_per_seq?")


def parse_pretraining_batch(serialized, seq_length, max_predictions_per_seq):
    """Parses a batch of serialized `tf.train.Example`s into the features dict.

    Args:
      serialized: string tensor [batch] of records.
      seq_length: the records' max_seq_length.
      max_predictions_per_seq: the records' max_predictions_per_seq.

    Returns:
      The dict described in the module docstring (integers cast to int32).
    """
    lengths = {"seq_length": seq_length, "one": 1,
               "max_predictions_per_seq": max_predictions_per_seq}
    spec = {name: tf.io.FixedLenFeature([lengths[key]], dtype)
            for name, (dtype, key) in _FEATURES.items()}
    parsed = tf.io.parse_example(serialized, spec)
    return {name: tf.cast(t, tf.int32) if t.dtype == tf.int64 else t
            for name, t in parsed.items()}


def pretraining_dataset(input_patterns, seq_length, max_predictions_per_seq,
                        batch_size, is_training, input_context=None,
                        drop_remainder=True, cycle_length=None,
                        shuffle_buffer_size=100, seed=None):
    """Batches of pretraining features from TFRecord files.

    Example:

    >>> import os, tempfile
    >>> from bert_tf.data.example_encoder import ExampleEncoder
    >>> from bert_tf.data.pretraining_instances import TrainingInstance
    >>> path = os.path.join(tempfile.mkdtemp(), "records.tfrecord")
    >>> encoder = ExampleEncoder(max_seq_length=8, max_predictions_per_seq=2, vocab_size=10)
    >>> with tf.io.TFRecordWriter(path) as writer:
    ...     for _ in range(3):
    ...         writer.write(encoder.encode(TrainingInstance([2, 4, 3, 5, 3], 3, [1], [7], True)))
    >>> ds = pretraining_dataset(path, seq_length=8, max_predictions_per_seq=2, batch_size=2,
    ...                          is_training=False)
    >>> batch = next(iter(ds))
    >>> batch["input_ids"].shape, batch["next_sentence_labels"].numpy().tolist()
    (TensorShape([2, 8]), [[1], [1]])

    Under a strategy, pass this function to
    `strategy.distribute_datasets_from_function` with the global batch size;
    each pipeline then batches its replicas' share.

    Args:
      input_patterns: comma-separated globs or a list of globs.
      seq_length: max_seq_length the records were written with.
      max_predictions_per_seq: max_predictions_per_seq of the records.
      batch_size: global batch size; with `input_context`, each pipeline
        batches `input_context.get_per_replica_batch_size(batch_size)`.
      is_training: shuffled, interleaved and repeated forever; else one
        ordered pass.
      input_context: optional `tf.distribute.InputContext`.
      drop_remainder: drop a last, smaller batch (static batch dimension).
      cycle_length: files read at once in training (default min(4, files)).
      shuffle_buffer_size: records in the training shuffle buffer (the
        original used 100).
      seed: seed of the shuffles (None: fresh every run).

    Returns:
      A `tf.data.Dataset` of feature dicts (see the module docstring).

    Raises:
      ValueError: if a pattern matches no file, or the first file's records
        have other lengths than `seq_length` / `max_predictions_per_seq`.
    """
    files = expand_input_patterns(input_patterns)
    check_record_lengths(files[0], seq_length, max_predictions_per_seq)
    if input_context is not None:
        batch_size = input_context.get_per_replica_batch_size(batch_size)
    dataset = interleave_files(files, tf.data.TFRecordDataset, is_training,
                               input_context, cycle_length, seed)
    if is_training:
        dataset = dataset.shuffle(shuffle_buffer_size, seed=seed)
    dataset = dataset.batch(batch_size, drop_remainder=drop_remainder)
    dataset = dataset.map(
        lambda records: parse_pretraining_batch(records, seq_length,
                                                max_predictions_per_seq),
        num_parallel_calls=tf.data.AUTOTUNE)
    return dataset.prefetch(tf.data.AUTOTUNE)
