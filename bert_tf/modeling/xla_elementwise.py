"""Inference on CPUs: oneDNN's matmuls, with the element-wise work between them fused by XLA.

A transformer block's inference is matmuls and the element-wise passes
between them: the feed-forward layer's bias and GELU (nine passes over
its `[batch, length, intermediate_size]` output as TensorFlow runs them),
and twice a bias, a residual sum and a LayerNorm. Compiling the whole
pass with XLA fuses those, but XLA:CPU's own matmuls ran at 76-78% of
the machine's peak on the 2-core AVX2 machine where TensorFlow's oneDNN
ones ran at 88-95% (docs/PERFORMANCE.md). Here the matmuls stay
TensorFlow's, and each run of element-wise work between two of them is
one small XLA-compiled function: one pass instead of up to ten. Batch
32 x 128 on that machine, median of round-robin calls: Small 1.12x
faster than the plain graph and 1.13x faster than the whole pass under
XLA; Base 1.09x faster than the plain graph (XLA loses there). On an
AMD CPU with AVX-512: Small 1.11x and Base 1.06x faster than the plain
graph.

Where it applies (`token_dense.xla_elementwise_is_faster`): float32
inference on a CPU-only TensorFlow, except where the dense layers already
run as one fused oneDNN kernel with their bias and activation (CPUs with
AMX). Only traced graphs use it: in eager calls every new shape would
compile again. A traced graph compiles the fused functions once per input
shape it sees (0.15-0.27 s more for a Small encoder's first call with a
new batch size or length on that machine); the runners' graphs retrace
per batch shape anyway, and their lengths are fixed. Exported SavedModels
must run where XLA is not enabled (TF Serving's default), so
`serving.export` traces them inside `without_xla()`, which turns it off.

Example:

>>> import numpy as np
>>> x = np.linspace(-3.0, 3.0, 8, dtype="float32").reshape(2, 4)
>>> bias = np.full((4,), 0.5, "float32")
>>> fused = bias_and_activation(x, bias, "gelu")
>>> from bert_tf.modeling.activations import get_activation
>>> bool(np.allclose(fused, get_activation("gelu")(x + bias), rtol=0, atol=1e-6))
True
"""

import contextlib
import functools
import threading

import tensorflow as tf

from bert_tf.modeling.activations import get_activation

_export_state = threading.local()


@contextlib.contextmanager
def without_xla():
    """Inside, no layer adds XLA-compiled functions to the graphs traced (exports)."""
    depth = getattr(_export_state, "depth", 0)
    _export_state.depth = depth + 1
    try:
        yield
    finally:
        _export_state.depth = depth


def fuses_now(layer_choice, training):
    """Whether a layer that chose fusion (`layer_choice`) fuses this call."""
    return (layer_choice and not training and tf.inside_function()
            and not getattr(_export_state, "depth", 0))


def bias_and_activation(x, bias, hidden_act):
    """`activation(x + bias)` in one XLA-compiled pass; `hidden_act` is a config's name."""
    return _bias_and_activation(hidden_act)(x, _tensor(bias))


def bias_residual_layer_norm(x, bias, residual, layer_norm):
    """`layer_norm(x + bias + residual)` in one XLA-compiled pass, with the layer's weights."""
    return _bias_residual_layer_norm(layer_norm.epsilon)(
        x, _tensor(bias), residual, _tensor(layer_norm.gamma), _tensor(layer_norm.beta))


def _tensor(weight):
    """A Keras variable (or an array) as a tensor that a `tf.function` takes as an argument."""
    return tf.convert_to_tensor(getattr(weight, "value", weight))


@functools.cache
def _bias_and_activation(hidden_act):
    activation = get_activation(hidden_act)

    @tf.function(jit_compile=True, autograph=False)
    def bias_then_activation(x, bias):
        return activation(x + bias)

    return bias_then_activation


@functools.cache
def _bias_residual_layer_norm(epsilon):
    @tf.function(jit_compile=True, autograph=False)
    def bias_residual_then_layer_norm(x, bias, residual, gamma, beta):
        # Keras' LayerNormalization, written the same way: x * inv + (beta - mean * inv).
        summed = x + bias + residual
        mean, variance = tf.nn.moments(summed, axes=[-1], keepdims=True)
        scale = tf.math.rsqrt(variance + epsilon) * gamma
        return summed * scale + (beta - mean * scale)

    return bias_residual_then_layer_norm
