"""LayerNorm as oneDNN's single kernel: the same numbers, the kernel run, only where chosen."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_tf.cpu_features import onednn_enabled
from bert_tf.modeling.onednn_layer_norm import onednn_layer_norm
from bert_tf.modeling.token_dense import TokenDense
from tests_shared import random_inputs, random_weight_encoder
from trace_ops import profiled_op_times


def _layer_norm(width, seed):
    rng = np.random.default_rng(seed)
    layer_norm = keras.layers.LayerNormalization(epsilon=1e-12)
    layer_norm.build((None, width))
    layer_norm.set_weights([rng.normal(1.0, 0.5, width).astype("float32"),
                            rng.normal(0.0, 0.5, width).astype("float32")])
    return layer_norm


def test_the_kernel_form_is_layer_normalization_in_float64():
    rng = np.random.default_rng(1)
    # Rows of another mean and spread each, one feature far out (as in BERT's residual stream).
    x = (rng.normal(0.0, 1.0, (3, 7, 48)) * rng.uniform(0.2, 4.0, (3, 7, 1))
         + rng.normal(0.0, 2.0, (3, 7, 1)))
    x[..., 5] *= 20.0
    layer_norm = _layer_norm(48, seed=2)
    gamma, beta = layer_norm.get_weights()
    expected = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-12)
    expected = expected * gamma + beta
    x = x.astype("float32")
    static = tf.function(lambda x: onednn_layer_norm(x, layer_norm))
    dynamic = tf.function(lambda x: onednn_layer_norm(x, layer_norm),
                          input_signature=[tf.TensorSpec([None, None, 48], tf.float32)])
    for function in (static, dynamic):
        np.testing.assert_allclose(function(x), expected, rtol=0, atol=1e-5)


def _assert_the_kernel_ran(ops):
    """oneDNN's LayerNorm and no batch norm in `ops` (where this process runs oneDNN: a
    worker that imported TensorFlow before bert_tf keeps TensorFlow's choice)."""
    if onednn_enabled():
        assert "_MklLayerNorm" in ops and not [op for op in ops if "BatchNorm" in op], ops


@pytest.mark.skipif(not onednn_enabled(), reason="TensorFlow runs without oneDNN here")
def test_a_traced_call_runs_onednns_kernel():
    """The form is only worth it if TensorFlow's optimizer turns it into the one kernel:
    a static shape would let constant folding break the pattern (`FusedBatchNormV3` ran)."""
    layer_norm = _layer_norm(64, seed=3)
    normalize = tf.function(lambda x: onednn_layer_norm(x, layer_norm))
    x = tf.random.normal([4, 16, 64], seed=4)
    normalize(x)
    _assert_the_kernel_ran(profiled_op_times(lambda: normalize(x)))


def _encoder(onednn):
    """`random_weight_encoder` in float32, computed as on an AMX CPU."""
    encoder, config = random_weight_encoder()
    for layer in encoder._flatten_layers():
        if isinstance(layer, TokenDense):
            layer.fused_inference, layer.xla_elementwise = True, False
            layer.onednn_layer_norm = onednn
    return encoder, config


def _batch_norms(function, inputs):
    graph = function.get_concrete_function(inputs).graph
    return [op for op in graph.get_operations() if op.type == "FusedBatchNormV3"]


def test_amx_float32_inference_normalizes_so_and_computes_what_keras_does():
    encoder, config = _encoder(onednn=True)
    keras_encoder, _ = _encoder(onednn=False)
    inputs = random_inputs(config, batch=3, length=11)
    traced = tf.function(lambda x: encoder(x)["encoder_outputs"])
    reference = tf.function(lambda x: keras_encoder(x)["encoder_outputs"])
    assert len(_batch_norms(traced, inputs)) == 4  # two residual LayerNorms per block
    assert not _batch_norms(reference, inputs)
    for ours, expected in zip(traced(inputs), reference(inputs)):
        np.testing.assert_allclose(ours, expected, rtol=0, atol=1e-5)
    _assert_the_kernel_ran(profiled_op_times(lambda: traced(inputs)))  # inside it too
    # Training, and XLA-compiled functions (which fuse the LayerNorm themselves), keep Keras'.
    training = tf.function(lambda x: encoder(x, training=True)["sequence_output"])
    compiled = tf.function(lambda x: encoder(x)["sequence_output"], jit_compile=True)
    assert not _batch_norms(training, inputs) and not _batch_norms(compiled, inputs)

