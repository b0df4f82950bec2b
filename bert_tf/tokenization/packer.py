"""`BertPacker`: one or two segments of ids -> BERT's fixed-length model inputs.

The layout, truncation and padding of the original's classifier and
feature-extraction code:

    [CLS] A [SEP]            segment_ids 0 ... 0
    [CLS] A [SEP] B [SEP]    segment_ids 0 ... 0 1 ... 1

A single segment keeps its first `seq_length - 2` ids. A pair is cut, one id
at a time, from the end of the longer segment (of B on a tie) until it fits
in `seq_length - 3`; tensorflow-text's `RoundRobinTrimmer` computes exactly
these lengths in one step (A keeps min(len A, ceil(budget / 2)) or more if B
is short; `tests/tokenization` compares it with HuggingFace's
`longest_first`). Padding is 0, as in the original, whatever id [PAD] has.
"""

import keras
import tensorflow as tf
import tensorflow_text as tf_text


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
        budget = self.seq_length - 1 - len(segments)
        trimmed = tf_text.RoundRobinTrimmer(max_seq_length=budget).trim(segments)
        ids, segment_ids = tf_text.combine_segments(
            trimmed, start_of_sequence_id=self.cls_id, end_of_segment_id=self.sep_id)
        input_ids, input_mask = tf_text.pad_model_inputs(ids, self.seq_length)
        segment_ids, _ = tf_text.pad_model_inputs(segment_ids, self.seq_length)
        return {
            "input_ids": tf.cast(input_ids, tf.int32),
            "input_mask": tf.cast(input_mask, tf.int32),
            "segment_ids": tf.cast(segment_ids, tf.int32),
        }

    def get_config(self):
        config = super().get_config()
        config.update(seq_length=self.seq_length, cls_id=self.cls_id, sep_id=self.sep_id)
        return config


def _as_ragged(segment):
    """int32 ragged [batch, None] (or a dense 1-D tensor for one example)."""
    if isinstance(segment, tf.RaggedTensor):
        return tf.cast(segment, tf.int32)
    segment = tf.convert_to_tensor(segment)
    if segment.shape.rank != 1:
        raise ValueError("segments must be ragged [batch, None] or 1-D, got "
                         f"a dense tensor of shape {segment.shape}")
    return tf.cast(segment, tf.int32)
