"""Serializes pretraining instances as `tf.train.Example` bytes, fast.

The records carry the original tool's features (docs/ORIGINAL_BEHAVIOUR.md):
int64 `input_ids`, `input_mask`, `segment_ids` [max_seq_length],
`masked_lm_positions`, `masked_lm_ids` [max_predictions_per_seq], float
`masked_lm_weights` [max_predictions_per_seq] and int64
`next_sentence_labels` [1], zero-padded.

Building a `tf.train.Example` message per record costs more than making the
instance, so `ExampleEncoder` writes the protobuf wire format directly from
precomputed varint bytes: `tf.train.Example.FromString` decodes the result to
the same message the protobuf library would build.
"""

import functools
import struct
from typing import Sequence

from bert_tf.data.pretraining_instances import TrainingInstance

_LEN_FIELD_1 = b"\x0a"  # field 1, length-delimited
_LEN_FIELD_2 = b"\x12"  # field 2, length-delimited
_FLOAT_LIST = b"\x12"  # Feature.float_list is field 2
_INT64_LIST = b"\x1a"  # Feature.int64_list is field 3
_ONE_FLOAT = struct.pack("<f", 1.0)
_ZERO_FLOAT = struct.pack("<f", 0.0)


def varint(value: int) -> bytes:
    """Protobuf base-128 varint of a non-negative int."""
    out = bytearray()
    while True:
        low = value & 0x7F
        value >>= 7
        if value:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


_cached_varint = functools.lru_cache(maxsize=None)(varint)


@functools.lru_cache(maxsize=None)
def _entry_header(name: str, feature_tag: bytes, packed_length: int) -> bytes:
    """Wire bytes of one `Features.feature` map entry up to its packed values.

    The entry is: key (field 1), Feature (field 2) holding a value list (field
    `feature_tag`) whose field 1 is the packed values. Only the lengths vary,
    so headers are cached per (name, type, packed length).
    """
    key = name.encode()
    value_list_length = 1 + len(varint(packed_length)) + packed_length
    feature_length = 1 + len(varint(value_list_length)) + value_list_length
    entry_length = (2 + len(varint(len(key))) + len(key) + len(varint(feature_length))
                    + feature_length)
    return b"".join([_LEN_FIELD_1, varint(entry_length), _LEN_FIELD_1, varint(len(key)), key,
                     _LEN_FIELD_2, varint(feature_length), feature_tag, varint(value_list_length),
                     _LEN_FIELD_1, varint(packed_length)])


class ExampleEncoder:
    """Encodes `TrainingInstance`s as serialized, padded `tf.train.Example`s.

    Args:
      max_seq_length: padded length of the token features.
      max_predictions_per_seq: padded length of the masked-LM features.
      vocab_size: one more than the largest token id that will be encoded.

    Example:
      >>> import tensorflow as tf
      >>> encoder = ExampleEncoder(max_seq_length=8, max_predictions_per_seq=2, vocab_size=10)
      >>> record = encoder.encode(TrainingInstance([1, 3, 2, 5, 2], 3, [1], [4], True))
      >>> example = tf.train.Example.FromString(record)
      >>> list(example.features.feature["segment_ids"].int64_list.value)
      [0, 0, 0, 1, 1, 0, 0, 0]
    """

    def __init__(self, max_seq_length: int, max_predictions_per_seq: int, vocab_size: int):
        self._max_seq_length = max_seq_length
        self._max_predictions = max_predictions_per_seq
        self._varints = [varint(i) for i in range(max(vocab_size, max_seq_length) + 1)]

    def _int64_entry(self, name: str, ids: Sequence[int], padded_length: int) -> bytes:
        packed = (b"".join(map(self._varints.__getitem__, ids))
                  + b"\x00" * (padded_length - len(ids)))
        return _entry_header(name, _INT64_LIST, len(packed)) + packed

    def encode(self, instance: TrainingInstance) -> bytes:
        """The serialized `tf.train.Example` of one instance."""
        length, seq = len(instance.input_ids), self._max_seq_length
        if length > seq:
            raise ValueError(f"instance has {length} tokens, more than max_seq_length={seq}")
        num_masked, max_pred = len(instance.masked_lm_positions), self._max_predictions
        if num_masked > max_pred:
            raise ValueError(f"instance has {num_masked} predictions, more than "
                             f"max_predictions_per_seq={max_pred}")
        num_a, pad = instance.num_segment_a, b"\x00" * (seq - length)
        features = b"".join([
            self._int64_entry("input_ids", instance.input_ids, seq),
            _entry_header("input_mask", _INT64_LIST, seq), b"\x01" * length, pad,
            _entry_header("segment_ids", _INT64_LIST, seq),
            b"\x00" * num_a, b"\x01" * (length - num_a), pad,
            self._int64_entry("masked_lm_positions", instance.masked_lm_positions, max_pred),
            self._int64_entry("masked_lm_ids", instance.masked_lm_ids, max_pred),
            _entry_header("masked_lm_weights", _FLOAT_LIST, 4 * max_pred),
            _ONE_FLOAT * num_masked, _ZERO_FLOAT * (max_pred - num_masked),
            _entry_header("next_sentence_labels", _INT64_LIST, 1),
            self._varints[int(instance.is_random_next)],
        ])
        return _LEN_FIELD_1 + _cached_varint(len(features)) + features
