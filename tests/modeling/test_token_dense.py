"""TokenDense: Keras' Dense, its kernel gradient and its inference computed as measured fastest."""

import keras
import numpy as np
import pytest
import tensorflow as tf
import torch

from bert_tf.modeling.activations import get_activation
from bert_tf.modeling.token_dense import (TokenDense, fused_inference_is_faster,
                                          xla_kernel_gradient_is_faster)
from tests_shared import write_cpuinfo, xla_compiled_functions
from training.tiny_training import dataset_fn, make_trainer

UNITS_IN, UNITS_OUT = 24, 40


def _layer(xla_kernel_gradient):
    layer = TokenDense(UNITS_OUT, kernel_initializer="glorot_normal",
                       bias_initializer="random_normal")
    layer.build((None, None, UNITS_IN))
    layer.xla_kernel_gradient = xla_kernel_gradient
    return layer


@pytest.mark.parametrize("xla_kernel_gradient", [True, False])
def test_outputs_and_gradients_match_pytorch(xla_kernel_gradient):
    layer = _layer(xla_kernel_gradient)
    rng = np.random.default_rng(0)
    inputs = rng.standard_normal((3, 7, UNITS_IN)).astype("float32")
    upstream = rng.standard_normal((3, 7, UNITS_OUT)).astype("float32")
    x = tf.constant(inputs)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = layer(x, training=True)
    gradients = tape.gradient(y, [x, layer.kernel, layer.bias], output_gradients=upstream)

    x64 = torch.from_numpy(inputs.astype("float64")).requires_grad_()
    kernel64 = torch.from_numpy(layer.kernel.numpy().astype("float64")).requires_grad_()
    bias64 = torch.from_numpy(layer.bias.numpy().astype("float64")).requires_grad_()
    expected = x64 @ kernel64 + bias64
    expected.backward(torch.from_numpy(upstream.astype("float64")))
    np.testing.assert_allclose(y, expected.detach().numpy(), rtol=0, atol=1e-5)
    for ours, theirs in zip(gradients, (x64.grad, kernel64.grad, bias64.grad)):
        np.testing.assert_allclose(ours, theirs.numpy(), rtol=1e-5, atol=1e-5)


def _functions_compiled_by_xla(layer, training):
    """Names of the XLA-compiled functions in a traced forward-and-backward call of `layer`."""
    @tf.function
    def forward_and_backward(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = layer(x, training=training)
        return tape.gradient(y, layer.kernel)

    return xla_compiled_functions(
        forward_and_backward.get_concrete_function(tf.TensorSpec((2, 5, UNITS_IN))).graph)


def test_only_training_calls_of_a_chosen_layer_compile_the_kernel_gradient():
    assert _functions_compiled_by_xla(_layer(True), training=True)
    assert _functions_compiled_by_xla(_layer(True), training=False) == []
    assert _functions_compiled_by_xla(_layer(False), training=True) == []


def test_the_choice_follows_the_measurements(tmp_path):
    avx2 = write_cpuinfo(tmp_path, "fpu sse2 avx avx2 fma")
    cpu_only = not tf.config.list_logical_devices("GPU")
    assert xla_kernel_gradient_is_faster((256, 1024), avx2) == cpu_only
    assert xla_kernel_gradient_is_faster((512, 512), avx2) == cpu_only
    # Wider kernels, AVX-512 CPUs, and machines whose CPU cannot be read keep TensorFlow's.
    assert not xla_kernel_gradient_is_faster((512, 2048), avx2)
    assert not xla_kernel_gradient_is_faster((256, 1024), write_cpuinfo(tmp_path, "avx2 avx512f"))
    assert not xla_kernel_gradient_is_faster((256, 1024), str(tmp_path / "missing"))


def test_mixed_bfloat16_training_reaches_every_weight_through_the_xla_gradient(tmp_path):
    """Under mixed_bfloat16 every weight still moves, with the XLA kernel gradient forced on."""
    trainer = make_trainer(tmp_path, policy="mixed_bfloat16")
    layers = [layer for layer in trainer.model._flatten_layers(include_self=False)
              if isinstance(layer, TokenDense)]
    assert len(layers) == 6  # q, k, v, attention output, intermediate, output of its block
    for layer in layers:
        layer.xla_kernel_gradient = True
    before = [variable.numpy().copy() for variable in trainer.model.trainable_variables]
    results = trainer.train(dataset_fn(), num_steps=2)
    assert np.isfinite(results["loss"])
    assert layers[0].compute_dtype == "bfloat16" and layers[0].kernel.dtype == "float32"
    for start, variable in zip(before, trainer.model.trainable_variables):
        assert not np.array_equal(start, variable.numpy()), variable.path


def _fused_and_plain(hidden_act, dtype="float32"):
    """One set of weights as two layers: TensorFlow's fused inference form and Keras' Dense."""
    layers = []
    for fused in (True, False):
        layer = TokenDense(UNITS_OUT, hidden_act=hidden_act, kernel_initializer="glorot_normal",
                           bias_initializer="random_normal", dtype=dtype)
        layer.build((None, None, UNITS_IN))
        layer.fused_inference = fused
        layers.append(layer)
    layers[1].set_weights(layers[0].get_weights())
    return layers


@pytest.mark.parametrize("hidden_act", [None, "gelu", "gelu_exact", "relu", "tanh"])
def test_fused_inference_computes_what_keras_dense_and_the_activation_compute(hidden_act):
    fused, plain = _fused_and_plain(hidden_act)
    inputs = np.random.default_rng(1).standard_normal((3, 7, UNITS_IN)).astype("float32")
    # Any batch and length: the rows are reshaped back from the inputs' own shape.
    traced = tf.function(lambda x: fused(x, training=False), input_signature=[
        tf.TensorSpec((None, None, UNITS_IN), tf.float32)])
    expected = plain(inputs, training=False).numpy()
    by_hand = inputs @ plain.kernel.numpy() + plain.bias.numpy()
    if hidden_act:
        by_hand = get_activation(hidden_act)(by_hand)
    np.testing.assert_allclose(expected, by_hand, rtol=0, atol=1e-5)
    np.testing.assert_allclose(traced(inputs), expected, rtol=0, atol=1e-5)
    np.testing.assert_allclose(traced(inputs[:1, :4]), expected[:1, :4], rtol=0, atol=1e-5)
    # Training calls never take it: they are Keras' product and the activation's training form.
    np.testing.assert_allclose(fused(inputs, training=True), plain(inputs, training=True),
                               rtol=0, atol=1e-5)


def test_fused_inference_in_bfloat16_computes_in_bfloat16():
    fused, plain = _fused_and_plain("gelu", dtype="mixed_bfloat16")
    inputs = np.random.default_rng(2).standard_normal((2, 5, UNITS_IN)).astype("float32")
    outputs = fused(inputs, training=False)
    assert outputs.dtype == "bfloat16" and fused.kernel.dtype == "float32"
    np.testing.assert_allclose(keras.ops.cast(outputs, "float32"),
                               keras.ops.cast(plain(inputs, training=False), "float32"),
                               rtol=0.02, atol=0.05)


def test_fused_inference_follows_the_measurements(tmp_path):
    amx = write_cpuinfo(tmp_path, "avx2 avx512f avx512_bf16 amx_bf16 amx_tile")
    avx512 = write_cpuinfo(tmp_path, "avx2 avx512f avx512_bf16")
    cpu_only = not tf.config.list_logical_devices("GPU")
    # bfloat16 everywhere on a CPU; float32 only where AMX is (faster there, slower elsewhere).
    assert fused_inference_is_faster("bfloat16", avx512) == cpu_only
    assert fused_inference_is_faster("float32", amx) == cpu_only
    assert not fused_inference_is_faster("float32", avx512)
    assert not fused_inference_is_faster("float32", str(tmp_path / "missing"))
