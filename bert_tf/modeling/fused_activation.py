"""The feed-forward activation of training steps, fused by XLA into one pass each way.

Keras writes GELU as a chain of element-wise ops (the tanh form as eight),
each a pass over the `[batch, length, intermediate_size]` activations, the
largest tensor of a block, and autodiff adds as many again backward. On a
CPU TensorFlow runs them one at a time: at BERT-Mini the GELU was about a
tenth of a pretraining step's op time. Compiled with XLA, the forward is
one loop and the backward (autodiff of the same function, compiled) one
more: forward and backward of a `[32, 128, 1024]` activation took 36 ms
plain and 12 ms fused on the 2-core AVX2 machine of docs/PERFORMANCE.md,
with results within float32 rounding (XLA's tanh is its own).

Only training calls use it (`TransformerBlock` picks by `training`), so
inference graphs, and the SavedModels exported from them, hold no
XLA-compiled function and run where XLA is not enabled, as in TensorFlow
Serving by default. On other Keras backends the plain activation serves.

Example:

>>> import numpy as np
>>> x = np.linspace(-3.0, 3.0, 7).astype("float32")
>>> fused = get_training_activation("gelu")
>>> bool(np.allclose(fused(x), get_activation("gelu")(x), rtol=0, atol=1e-6))
True
"""

import functools

import keras
import tensorflow as tf

from bert_tf.modeling.activations import get_activation

FUSED_ACTIVATIONS = ("gelu", "gelu_exact")


def get_training_activation(name):
    """The activation `name` for training calls: XLA-fused where that is possible."""
    if name not in FUSED_ACTIVATIONS or keras.backend.backend() != "tensorflow":
        return get_activation(name)
    return _fused(name)


@functools.cache
def _fused(name):
    activation = get_activation(name)
    forward = tf.function(activation, jit_compile=True, autograph=False)

    @tf.function(jit_compile=True, autograph=False)
    def backward(x, upstream):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = activation(x)
        return tape.gradient(y, x, output_gradients=upstream)

    @tf.custom_gradient
    def fused(x):
        x = tf.convert_to_tensor(x)
        return forward(x), lambda upstream: backward(x, upstream)

    return fused
