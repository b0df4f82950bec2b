"""Our hand-written protobuf bytes decode to the Example TensorFlow would build.

The reference is `tf.train.Example` filled through the protobuf library, as
the original tool does it, and `tf.io.parse_single_example` with the
original's feature specs.
"""

import random

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.data.example_encoder import ExampleEncoder, varint
from bert_tf.data.pretraining_instances import TrainingInstance


def _reference_example(instance, max_seq_length, max_predictions):
    """The record the original's write_instance_to_example_files makes."""
    def pad(values, length, fill):
        return list(values) + [fill] * (length - len(values))

    num = len(instance.input_ids)
    int_features = {
        "input_ids": pad(instance.input_ids, max_seq_length, 0),
        "input_mask": pad([1] * num, max_seq_length, 0),
        "segment_ids": pad(instance.segment_ids, max_seq_length, 0),
        "masked_lm_positions": pad(instance.masked_lm_positions, max_predictions, 0),
        "masked_lm_ids": pad(instance.masked_lm_ids, max_predictions, 0),
        "next_sentence_labels": [int(instance.is_random_next)],
    }
    feature = {name: tf.train.Feature(int64_list=tf.train.Int64List(value=values))
               for name, values in int_features.items()}
    weights = pad([1.0] * len(instance.masked_lm_ids), max_predictions, 0.0)
    feature["masked_lm_weights"] = tf.train.Feature(float_list=tf.train.FloatList(value=weights))
    return tf.train.Example(features=tf.train.Features(feature=feature))


def _random_instance(rng, max_seq_length, max_predictions, vocab_size):
    length = rng.randint(5, max_seq_length)
    num_a = rng.randint(2, length - 2)
    ids = [rng.randrange(vocab_size) for _ in range(length)]
    positions = sorted(rng.sample(range(1, length), rng.randint(0, min(max_predictions,
                                                                      length - 1))))
    return TrainingInstance(ids, num_a, positions, [rng.randrange(vocab_size) for _ in positions],
                            rng.random() < 0.5)


@pytest.mark.parametrize("max_seq_length, max_predictions, vocab_size", [
    (128, 20, 30522), (512, 80, 119547), (8, 1, 10)])
def test_decodes_to_the_protobuf_built_example(max_seq_length, max_predictions, vocab_size):
    rng = random.Random(max_seq_length)
    encoder = ExampleEncoder(max_seq_length, max_predictions, vocab_size)
    for _ in range(200):
        instance = _random_instance(rng, max_seq_length, max_predictions, vocab_size)
        ours = tf.train.Example.FromString(encoder.encode(instance))
        assert ours == _reference_example(instance, max_seq_length, max_predictions)


def test_parses_with_the_original_feature_specs():
    encoder = ExampleEncoder(16, 3, 30522)
    instance = TrainingInstance([101, 103, 2003, 102, 30521, 1010, 102], 4, [1, 4], [7592, 2088],
                                True)
    specs = {name: tf.io.FixedLenFeature([16], tf.int64)
             for name in ("input_ids", "input_mask", "segment_ids")}
    specs.update({name: tf.io.FixedLenFeature([3], tf.int64)
                  for name in ("masked_lm_positions", "masked_lm_ids")})
    specs["masked_lm_weights"] = tf.io.FixedLenFeature([3], tf.float32)
    specs["next_sentence_labels"] = tf.io.FixedLenFeature([1], tf.int64)
    parsed = tf.io.parse_single_example(encoder.encode(instance), specs)
    np.testing.assert_array_equal(parsed["input_ids"][:8], [101, 103, 2003, 102, 30521, 1010,
                                                            102, 0])
    np.testing.assert_array_equal(parsed["input_mask"], [1] * 7 + [0] * 9)
    np.testing.assert_array_equal(parsed["segment_ids"], [0] * 4 + [1] * 3 + [0] * 9)
    np.testing.assert_array_equal(parsed["masked_lm_positions"], [1, 4, 0])
    np.testing.assert_array_equal(parsed["masked_lm_ids"], [7592, 2088, 0])
    np.testing.assert_array_equal(parsed["masked_lm_weights"], [1.0, 1.0, 0.0])
    np.testing.assert_array_equal(parsed["next_sentence_labels"], [1])


@pytest.mark.parametrize("value", [0, 1, 127, 128, 300, 16383, 16384, 2**31, 2**63 - 1])
def test_varint_matches_protobuf(value):
    message = tf.train.Int64List(value=[value])
    # Int64List: tag 0x0a, payload length, then the packed varint.
    assert message.SerializeToString()[2:] == varint(value)


def test_rejects_instances_longer_than_the_padded_length():
    encoder = ExampleEncoder(8, 2, 100)
    with pytest.raises(ValueError, match="max_seq_length=8"):
        encoder.encode(TrainingInstance(list(range(9)), 3, [1], [5], False))
    with pytest.raises(ValueError, match="max_predictions_per_seq=2"):
        encoder.encode(TrainingInstance(list(range(8)), 3, [1, 2, 3], [5, 6, 7], False))
