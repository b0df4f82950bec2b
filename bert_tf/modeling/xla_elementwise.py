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
AMX, and bfloat16 everywhere). In bfloat16 the residual sum and the
LayerNorm after such a kernel are still one XLA pass
(`residual_layer_norm`, `token_dense.xla_layer_norm_is_faster`): Keras'
LayerNorm casts to float32 and back around five passes of its own, and
the fused pass made the bfloat16 forward pass 1.18x (Mini), 1.08x (Small)
and 1.10x (Base) faster on the Intel AMX machine (in float32 there, that
LayerNorm is oneDNN's kernel instead: `onednn_layer_norm.py`). Only traced
graphs use them: in eager calls every new shape would compile again. A
traced graph compiles the fused functions once per input shape it sees
(0.15-0.27 s more for a Small encoder's first call with a new batch size
or length on that machine); the runners' graphs retrace
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


def residual_layer_norm(x, residual, layer_norm):
    """`layer_norm(x + residual)` of bfloat16 tensors in one XLA-compiled pass.

    Computed as TensorFlow's ops and Keras' LayerNormalization compute it:
    the sum rounded to bfloat16, the LayerNorm in float32 (with the layer's
    weights as its call reads them), the result rounded to bfloat16.
    """
    return _residual_layer_norm(layer_norm.epsilon)(
        x, residual, _tensor(layer_norm.gamma), _tensor(layer_norm.beta))


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


def _layer_norm(x, gamma, beta, epsilon):
    """Keras' LayerNormalization over the last axis, in its form: x * inv + (beta - mean * inv)."""
    mean, variance = tf.nn.moments(x, axes=[-1], keepdims=True)
    scale = tf.math.rsqrt(variance + epsilon) * gamma
    return x * scale + (beta - mean * scale)


def _rounded_to_bfloat16(x):
    """float32 `x` rounded to the nearest bfloat16 (ties to even), still as float32.

    XLA may keep a bfloat16 sum in float32 inside a fused pass (excess
    precision) where TensorFlow's op rounds it; rounding the bits here
    keeps TensorFlow's sum. NaNs pass as they are.
    """
    bits = tf.bitcast(x, tf.uint32)
    lowest_kept_bit = tf.bitwise.bitwise_and(tf.bitwise.right_shift(bits, 16), 1)
    rounded = tf.bitwise.bitwise_and(bits + 0x7FFF + lowest_kept_bit, 0xFFFF0000)
    return tf.where(tf.math.is_nan(x), x, tf.bitcast(rounded, tf.float32))


@functools.cache
def _bias_residual_layer_norm(epsilon):
    @tf.function(jit_compile=True, autograph=False)
    def bias_residual_then_layer_norm(x, bias, residual, gamma, beta):
        return _layer_norm(x + bias + residual, gamma, beta, epsilon)

    return bias_residual_then_layer_norm


@functools.cache
def _residual_layer_norm(epsilon):
    @tf.function(jit_compile=True, autograph=False)
    def residual_then_layer_norm(x, residual, gamma, beta):
        summed = _rounded_to_bfloat16(tf.cast(x, tf.float32) + tf.cast(residual, tf.float32))
        normalized = _layer_norm(summed, tf.cast(gamma, tf.float32), tf.cast(beta, tf.float32),
                                 epsilon)
        return tf.cast(normalized, x.dtype)

    return residual_then_layer_norm
