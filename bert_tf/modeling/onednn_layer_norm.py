"""LayerNorm as one oneDNN kernel: the graph form TensorFlow's optimizer rewrites so.

Keras' LayerNormalization is six element-wise and reduction ops in a
TensorFlow graph (a mean, a squared difference, another mean, a reciprocal
square root, two multiply-adds), each a pass over its `[B, T, H]` input.
With oneDNN on, TensorFlow's graph optimizer ("remapper") replaces one
particular subgraph with a single oneDNN layer-normalization kernel
(`_MklLayerNorm`): the one tf.keras 2 built, a `FusedBatchNormV3` in
training mode over the input reshaped to `[1, rows, H, 1]` (NCHW, every row
a channel) with scales of ones and offsets of zeros made by `Fill`, reshaped
back, times gamma, plus beta. It does so only where those `Fill`s are not
constants already: with a static shape, constant folding (which runs before
the remapper) turns them into constants and the pattern no longer matches.
`onednn_layer_norm` builds that subgraph with the row count passed through
`PlaceholderWithDefault`, which constant folding leaves alone.

Measured on the Intel AMX machine (docs/PERFORMANCE.md): a LayerNorm over
`[32, 128, 768]` took 4.65 ms as Keras' ops and 1.87 ms so (the kernel
alone 1.11 ms); a Mini encoder's float32 forward pass went from
0.99-1.06x keras-hub's speed to 1.05-1.21x, in three runs each.
On a real model and text the outputs are as close to HF's as Keras' ops
are (4.4e-6 against 7.5e-6 at MiniLM's last layer). oneDNN computes the
mean and variance in its own order: rows whose mean is thousands of times
their spread (never a transformer's residual stream) would lose digits.

With oneDNN off (`TF_ENABLE_ONEDNN_OPTS=0`) the same graph computes the
same LayerNorm through TensorFlow's own batch norm, 7x slower than Keras'
ops (43 against 6 ms above), so it is chosen only where oneDNN is on
(`cpu_features.onednn_enabled`).

Example:

>>> import numpy as np, keras
>>> layer_norm = keras.layers.LayerNormalization(epsilon=1e-12)
>>> x = np.random.default_rng(0).normal(size=(2, 3, 8)).astype("float32")
>>> _ = layer_norm(x)
>>> fused = tf.function(lambda x: onednn_layer_norm(x, layer_norm))(x)
>>> bool(np.allclose(fused, layer_norm(x), rtol=0, atol=1e-5))
True
"""

import tensorflow as tf
from tensorflow.python.ops import control_flow_util


def onednn_layer_norm(x, layer_norm):
    """`layer_norm(x)` over the last axis of a float32 `[B, T, H]` `x`, in the fusable form.

    Args:
        x: the input, rank 2 or 3 (oneDNN's kernel takes no other rank).
        layer_norm: a built `keras.layers.LayerNormalization` over the last
            axis, with scale and center (its gamma, beta and epsilon are used).
    """
    shape = tf.shape(x)
    width = x.shape[-1]
    rows = tf.raw_ops.PlaceholderWithDefault(input=tf.reduce_prod(shape[:-1]), shape=[])
    ones = tf.fill([rows], tf.constant(1.0, x.dtype))
    zeros = tf.fill([rows], tf.constant(0.0, x.dtype))
    normalized, _, _ = tf.compat.v1.nn.fused_batch_norm(
        tf.reshape(x, [1, rows, width, 1]), ones, zeros, epsilon=layer_norm.epsilon,
        data_format="NCHW", is_training=True)
    gamma = tf.cast(layer_norm.gamma.value, x.dtype)
    beta = tf.cast(layer_norm.beta.value, x.dtype)
    return tf.reshape(normalized, shape) * gamma + beta


def inside_xla_function():
    """Whether the graph being traced is XLA-compiled (`jit_compile`), which fuses on its own.

    TensorFlow's own test (it has no public one), of the pinned version.
    """
    return control_flow_util.GraphOrParentsInXlaContext(tf.compat.v1.get_default_graph())
