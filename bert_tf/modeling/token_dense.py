"""The encoder's dense layers, with the kernel gradient as one XLA dot where that is faster.

A dense layer over every token of a batch has the kernel gradient
`x^T @ dy`, a product of `[B*T, in]` transposed with `[B*T, out]`. With
oneDNN on a CPU without AVX-512, TensorFlow ran that layout at 40-60% of
the machine's matmul peak at BERT-Mini widths, and XLA's dot ran it
1.4-1.7x faster (docs/PERFORMANCE.md: on the 2-core AVX2 machine, 4096
tokens, `[256, 1024]` kernel 35.1 -> 21.0 ms, `[1024, 256]` 33.5 -> 23.8 ms);
the Mini pretraining step got 1.06x-1.07x faster. Kernels larger than
`[512, 512]` were level or slower there, and on AVX-512 CPUs, where oneDNN
has its fast kernels, it was not measured: both keep TensorFlow's gradient.

`TokenDense` is a `keras.layers.Dense`: the same weights, names and
checkpoints. Only training calls of a layer whose kernel has at most
`XLA_KERNEL_GRADIENT_MAX_SIZE` entries, on the TensorFlow backend, on a
CPU-only machine whose CPU lacks `avx512f`, take the custom gradient; the
forward product is Keras' own either way, and inference graphs (so
exported SavedModels) never hold XLA.

Example:

>>> import numpy as np
>>> layer = TokenDense(3)
>>> x = np.ones((2, 4, 5), "float32")
>>> bool(np.allclose(layer(x, training=True), layer(x, training=False)))
True
"""

import functools

import keras
import tensorflow as tf

from bert_tf.cpu_features import cpu_flags

XLA_KERNEL_GRADIENT_MAX_SIZE = 512 * 512


def xla_kernel_gradient_is_faster(kernel_shape, cpuinfo="/proc/cpuinfo"):
    """Whether a kernel of `kernel_shape` takes the XLA kernel gradient on this machine.

    >>> xla_kernel_gradient_is_faster((768, 3072))
    False
    """
    units_in, units_out = kernel_shape
    if keras.backend.backend() != "tensorflow" or units_in * units_out > (
            XLA_KERNEL_GRADIENT_MAX_SIZE):
        return False
    if tf.config.list_logical_devices("GPU") or tf.config.list_logical_devices("TPU"):
        return False
    flags = cpu_flags(cpuinfo)
    return flags is not None and "avx512f" not in flags


@keras.saving.register_keras_serializable(package="bert_tf")
class TokenDense(keras.layers.Dense):
    """`keras.layers.Dense` over `[batch, length, width]`, its kernel gradient picked per machine.

    Args:
        units: output width.
        **kwargs: `keras.layers.Dense`'s.
    """

    def build(self, input_shape):
        super().build(input_shape)
        self.xla_kernel_gradient = xla_kernel_gradient_is_faster(tuple(self.kernel.shape))

    def call(self, inputs, training=None):
        if not (training and self.xla_kernel_gradient and len(inputs.shape) == 3) or (
                self.lora_enabled or self.quantization_mode):
            return super().call(inputs, training=training)
        outputs = _product_with_xla_kernel_gradient(
            inputs, keras.ops.cast(self.kernel, self.compute_dtype))
        if self.bias is not None:
            outputs = keras.ops.add(outputs, self.bias)
        if self.activation is not None:
            outputs = self.activation(outputs)
        return outputs


@functools.cache
def _xla_kernel_gradient():
    @tf.function(jit_compile=True, autograph=False)
    def kernel_gradient(rows, upstream_rows):
        return tf.matmul(rows, upstream_rows, transpose_a=True)
    return kernel_gradient


@tf.custom_gradient
def _product_with_xla_kernel_gradient(inputs, kernel):
    """`inputs @ kernel` as Keras computes it; the kernel's gradient by one XLA dot."""
    outputs = tf.tensordot(inputs, kernel, axes=[[2], [0]])

    def gradient(upstream):
        units_in, units_out = kernel.shape
        inputs_gradient = tf.tensordot(upstream, kernel, axes=[[2], [1]])
        kernel_gradient = _xla_kernel_gradient()(tf.reshape(inputs, [-1, units_in]),
                                                 tf.reshape(upstream, [-1, units_out]))
        return inputs_gradient, kernel_gradient

    return outputs, gradient
