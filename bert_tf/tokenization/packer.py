"""`BertPacker`: one or two segments of ids -> BERT's fixed-length model inputs.

The layout, truncation and padding of the original's classifier and
feature-extraction code:

    [CLS] A [SEP]            segment_ids 0 ... 0
    [CLS] A [SEP] B [SEP]    segment_ids 0 ... 0 1 ... 1

A single segment keeps its first `seq_length - 2` ids, and so does A where
B has no ids (an empty text, or one of characters the tokenizer drops). A
pair is cut, one id at a time, from the end of the longer segment (of B on
a tie) until it fits in `seq_length - 3`; `kept_lengths` computes the
lengths this leaves in one step (`truncation.kept_lengths`;
`tests/tokenization` compares them with HuggingFace's `longest_first`).
Where no id of B is left, before the cut or after it (at `seq_length` 3 or
4), the row is `[CLS] A [SEP]`, as the original's `if tokens_b:` makes it,
not an empty B and a second `[SEP]`.
Padding is 0, as in the original, whatever id [PAD] has.

`pack_segments` lays the kept ids out with a few dense ops per segment, not
tensorflow-text's ragged `RoundRobinTrimmer` and `combine_segments`: the
same ids, from a much smaller graph, which every tf.data pipeline and
SavedModel signature that packs text traces, optimizes and runs (the
span-QA and NER exports pack their windows with it too).
"""

import keras
import tensorflow as tf

from bert_tf.tokenization import truncation


@keras.saving.register_keras_serializable(package="bert_tf")
class BertPacker(keras.layers.Layer):
    """Packs ragged id segments into `input_ids`, `input_mask`, `segment_ids`.

    Args:
        seq_length: length of the packed inputs.
        cls_id: id of `[CLS]`, which starts every input.
        sep_id: id of `[SEP]`, which ends every segment.
        **kwargs: passed to `keras.layers.Layer`.

    Call arguments:
        inputs: a ragged int tensor [batch, None], or a list/tuple of one or
            two of them (segments A and B). A 1-D tensor is one example.

    Returns:
        dict of int32 tensors [batch, seq_length] (or [seq_length] for one
        example): `input_ids`, `input_mask`, `segment_ids`.

    Example:

    >>> packer = BertPacker(seq_length=8, cls_id=101, sep_id=102)
    >>> a = tf.ragged.constant([[1, 2, 3, 4, 5]])
    >>> b = tf.ragged.constant([[6, 7, 8]])
    >>> packer((a, b))["input_ids"].numpy().tolist()
    [[101, 1, 2, 3, 102, 6, 7, 102]]
    """

    def __init__(self, seq_length, cls_id, sep_id, **kwargs):
        super().__init__(**kwargs)
        self._convert_input_args = False
        self._allow_non_tensor_positional_args = True
        if seq_length < 3:
            raise ValueError(f"seq_length must be at least 3, got {seq_length}")
        self.seq_length = int(seq_length)
        self.cls_id = int(cls_id)
        self.sep_id = int(sep_id)
        self.built = True

    def call(self, inputs):
        segments = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
        if len(segments) not in (1, 2):
            raise ValueError(f"{self.name} packs one or two segments, got {len(segments)}")
        segments = [_as_ragged(s) for s in segments]
        if not isinstance(segments[0], tf.RaggedTensor):
            packed = self.call([tf.RaggedTensor.from_tensor(s[None]) for s in segments])
            return {key: value[0] for key, value in packed.items()}
        lengths = [tf.cast(s.row_lengths(), tf.int32) for s in segments]
        # A row's [SEP]s: one, and one more where it has ids of B.
        separators = 1 + sum(tf.cast(length > 0, tf.int32) for length in lengths[1:])
        lengths = kept_lengths(lengths, budget=self.seq_length - 1 - separators)
        return pack_segments(segments, lengths, self.seq_length, self.cls_id, self.sep_id)

    def get_config(self):
        config = super().get_config()
        config.update(seq_length=self.seq_length, cls_id=self.cls_id, sep_id=self.sep_id)
        return config


def pack_segments(segments, lengths, width, cls_id, sep_id):
    """`[CLS] A [SEP]` or `[CLS] A [SEP] B [SEP]`, the first `lengths` ids of each segment.

    Each output position gathers its id from the segment it falls in. Where
    a row keeps no ids of B (`lengths`), it is `[CLS] A [SEP]`: no empty B,
    no second `[SEP]`.

    Args:
        segments: one or two int32 ragged tensors [batch, None].
        lengths: how many ids of each segment to keep, int32 [batch] each.
        width: the packed length (an int, or a scalar tensor); it must hold
            every packed row.
        cls_id: id of `[CLS]`.
        sep_id: id of `[SEP]`.

    Returns:
        dict of int32 tensors [batch, width]: `input_ids`, `input_mask`,
        `segment_ids` (0 for `[CLS] A [SEP]`, 1 for `B [SEP]`), zeros after
        each row.

    Example:

    >>> a = tf.ragged.constant([[7, 8, 9], [5]])
    >>> packed = pack_segments([a], [tf.constant([2, 1])], 5, cls_id=1, sep_id=2)
    >>> packed["input_ids"].numpy().tolist()
    [[1, 7, 8, 2, 0], [1, 5, 2, 0, 0]]
    >>> b = tf.ragged.constant([[6], []], dtype=tf.int32)
    >>> packed = pack_segments([a, b], [tf.constant([2, 1]), tf.constant([1, 0])], 6, 1, 2)
    >>> packed["input_ids"].numpy().tolist(), packed["segment_ids"].numpy().tolist()
    ([[1, 7, 8, 2, 6, 2], [1, 5, 2, 0, 0, 0]], [[0, 0, 0, 0, 1, 1], [0, 0, 0, 0, 0, 0]])
    """
    column = tf.range(width)[None, :]
    input_ids = tf.broadcast_to(tf.where(column == 0, cls_id, 0),
                                [segments[0].nrows(out_type=tf.int32), width])
    segment_ids = tf.zeros_like(input_ids)
    start = tf.ones_like(lengths[0])[:, None]  # where the segment's first id goes
    for index, (segment, length) in enumerate(zip(segments, lengths)):
        end = start + length[:, None]  # where its [SEP] goes
        # A B with no ids left (after the cut, as the original's `if tokens_b:`) is left
        # out, its [SEP] too.
        kept = (length > 0)[:, None] if index else True
        ids = tf.gather(_columns(segment, width), tf.clip_by_value(column - start, 0, width - 1),
                        batch_dims=1)
        input_ids = tf.where((column >= start) & (column < end), ids, input_ids)
        input_ids = tf.where((column == end) & kept, sep_id, input_ids)
        segment_ids = tf.where((column >= start) & (column <= end) & kept, index, segment_ids)
        start = tf.where(kept, end + 1, start)
    return {"input_ids": input_ids, "input_mask": tf.cast(column < start, tf.int32),
            "segment_ids": segment_ids}


def _columns(segment, width):
    """The first `width` columns of ragged `segment`, zeros after each row."""
    if isinstance(width, int):  # a static shape, for the pipelines that keep it
        return segment.to_tensor(shape=[None, width])
    return segment.to_tensor(shape=tf.stack([-1, tf.cast(width, segment.row_splits.dtype)]))


def kept_lengths(lengths, budget):
    """How many ids of each segment the original's truncation keeps.

    Args:
        lengths: one or two int tensors [batch], the segments' lengths.
        budget: the most ids the segments may keep together.

    Returns:
        the kept lengths, a list like `lengths`.

    Example:

    >>> [int(n) for n in kept_lengths([tf.constant(10), tf.constant(2)], budget=8)]
    [6, 2]
    """
    if len(lengths) == 1:
        return [tf.minimum(lengths[0], budget)]
    return list(truncation.kept_lengths(*lengths, budget))


def _as_ragged(segment):
    """int32 ragged [batch, None] (or a dense 1-D tensor for one example)."""
    if isinstance(segment, tf.RaggedTensor):
        return tf.cast(segment, tf.int32)
    segment = tf.convert_to_tensor(segment)
    if segment.shape.rank != 1:
        raise ValueError("segments must be ragged [batch, None] or 1-D, got "
                         f"a dense tensor of shape {segment.shape}")
    return tf.cast(segment, tf.int32)
