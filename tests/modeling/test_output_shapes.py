"""The layers' `compute_output_shape` against what tracing their `call` gives.

Keras learns a layer's output in a functional model from
`compute_output_shape` where the layer has one, and otherwise traces its
`call` in a scratch graph: for the transformer blocks, most of the time a
`BertEncoder` took to build. Each spec below must be the traced one, in
float32 and under a mixed-precision policy, and building the models must no
longer trace the blocks at all.
"""

from unittest import mock

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_tf.modeling import BertEncoder, BertPretrainer
from bert_tf.modeling.bilstm import BiLstm, BiLstmTagger
from bert_tf.modeling.embeddings import BertEmbeddings
from bert_tf.modeling.encoder import AttentionBias
from bert_tf.modeling.transformer_block import TransformerBlock

HIDDEN = 8


@pytest.fixture(params=["float32", "mixed_bfloat16"])
def policy(request):
    before = keras.mixed_precision.global_policy()
    keras.mixed_precision.set_global_policy(request.param)
    yield request.param
    keras.mixed_precision.set_global_policy(before)


def _specs_agree(layer, *args, **kwargs):
    """The spec Keras gives without tracing equals the traced `call`'s; returns it."""
    layer.build(*(arg.shape for arg in args))
    given = layer.compute_output_spec(*args, **kwargs)
    specs = [tf.TensorSpec(arg.shape, arg.dtype) for arg in args]
    keywords = {key: tf.TensorSpec(value.shape, value.dtype)
                for key, value in kwargs.items() if value is not None}
    traced = tf.function(layer.call).get_concrete_function(*specs, **keywords).structured_outputs
    assert (given.shape, given.dtype) == (tuple(traced.shape), traced.dtype.name)
    return given


@pytest.mark.parametrize("length", [None, 7])
@pytest.mark.parametrize("causal", [False, True])
def test_attention_bias(policy, causal, length):
    mask = keras.KerasTensor((None, length), "int32")
    spec = _specs_agree(AttentionBias(causal, dtype="float32"), mask)
    assert spec.shape == (None, 1, length if causal else 1, length)


@pytest.mark.parametrize("length", [None, 7])
def test_embeddings(policy, length):
    ids = keras.KerasTensor((None, length), "int32")
    layer = BertEmbeddings(vocab_size=10, hidden_size=HIDDEN, max_position_embeddings=16,
                           type_vocab_size=2, dropout_rate=0.1, initializer_range=0.02)
    assert _specs_agree(layer, ids, ids).shape == (None, length, HIDDEN)


def test_a_model_input_longer_than_the_position_table_is_named_when_built(tiny_config):
    """Tracing `call` used to find it; the shape alone must too (a fixed-length model)."""
    length = tiny_config.max_position_embeddings + 1
    layer = BertEmbeddings(tiny_config.vocab_size, HIDDEN, length - 1, 2, 0.1, 0.02)
    ids = keras.Input((length,), dtype="int32")
    with pytest.raises(ValueError, match=f"sequences of {length} tokens, but the model has "
                                         f"max_position_embeddings={length - 1} positions"):
        layer(ids, ids)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("queries", [None, 3])
def test_transformer_block(policy, causal, queries):
    block = TransformerBlock(num_heads=2, intermediate_size=16, hidden_act="gelu",
                             hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1,
                             initializer_range=0.02)
    hidden = keras.KerasTensor((None, 5, HIDDEN), block.compute_dtype)
    bias = keras.KerasTensor((None, 1, 5 if causal else 1, 5), "float32")
    positions = None if queries is None else keras.KerasTensor((None, queries), "int32")
    spec = _specs_agree(block, hidden, bias, query_positions=positions)
    assert spec.shape == (None, queries or 5, HIDDEN)


@pytest.mark.parametrize("tagger", [False, True])
def test_bilstm(policy, tagger):
    layer = BiLstmTagger(5, lstm_units=4) if tagger else BiLstm(lstm_units=4, num_layers=2)
    features = keras.KerasTensor((None, 6, HIDDEN), layer.compute_dtype)
    spec = _specs_agree(layer, features, keras.KerasTensor((None, 6), "int32"))
    assert spec.shape == (None, 6, 5 if tagger else 8)


def test_building_the_models_traces_no_block(tiny_config):
    """A block's `call` runs on real tensors only; the models still answer."""
    with mock.patch.object(TransformerBlock, "call", autospec=True,
                           side_effect=AssertionError("traced")) as call:
        encoder = BertEncoder(tiny_config)
        pretrainer = BertPretrainer(tiny_config)
    assert not call.called
    ids = np.array([[2, 7, 3, 0]], "int32")
    inputs = {"input_ids": ids, "input_mask": np.int32(ids > 0),
              "segment_ids": np.zeros_like(ids)}
    assert encoder(inputs)["sequence_output"].shape == (1, 4, tiny_config.hidden_size)
    logits = pretrainer({**inputs, "masked_lm_positions": np.array([[1, 2]], "int32")})
    assert logits["masked_lm_logits"].shape == (1, 2, tiny_config.vocab_size)
