"""The encoder's dense layers, each computed the way measured fastest on the machine.

Two choices, both made per machine when a layer is built; neither changes
the weights, their names or what is computed beyond float rounding.

Training: a dense layer over every token of a batch has the kernel
gradient `x^T @ dy`, a product of `[B*T, in]` transposed with `[B*T, out]`.
With oneDNN on a CPU without AVX-512, TensorFlow ran that layout at 40-60%
of the machine's matmul peak at BERT-Mini widths, and XLA's dot ran it
1.4-1.7x faster (docs/PERFORMANCE.md: on the 2-core AVX2 machine, 4096
tokens, `[256, 1024]` kernel 35.1 -> 21.0 ms, `[1024, 256]` 33.5 -> 23.8 ms);
the Mini pretraining step got 1.06x-1.07x faster. Kernels larger than
`[512, 512]` were level or slower there, and AVX-512 CPUs keep TensorFlow's
gradient (`xla_kernel_gradient_is_faster`).

Inference: Keras multiplies `[B, T, in]` by the kernel as a tensordot and
adds the bias and the activation as separate passes over the output. As
one `[B*T, in]` matmul followed by `tf.nn.bias_add` and TensorFlow's own
activation op, TensorFlow's graph optimizer fuses all three into one
oneDNN kernel. Where that wins (`fused_inference_is_faster`): on a CPU in
bfloat16, whose element-wise ops TensorFlow runs far slower than in
float32 (Base forward pass 1.5x faster on the Intel AMX machine), and in
float32 on CPUs with AMX (1.1-1.2x there); on the AMD AVX-512 and Intel
Cascade Lake machines the fused float32 kernel was the slower one.

Elsewhere in float32 on a CPU (`xla_elementwise_is_faster`), inference
calls in traced graphs add the bias and the activation to TensorFlow's
product in one XLA-compiled pass (`xla_elementwise.py`); in bfloat16
(`xla_layer_norm_is_faster`) the residual sum and LayerNorm after the
fused kernel are one such pass, and in float32 on AMX CPUs
(`onednn_layer_norm_is_faster`) that LayerNorm is oneDNN's single kernel
(`onednn_layer_norm.py`).

`TokenDense` is a `keras.layers.Dense` plus `hidden_act`, a
`bert_config.json` activation name applied after the bias: training calls
take its XLA-fused form (`fused_activation.py`). Only the TensorFlow
backend makes either choice; other backends run Keras' Dense and the
plain activation. Exported inference graphs hold no XLA either way.

Example:

>>> import numpy as np
>>> layer = TokenDense(3, hidden_act="gelu")
>>> x = np.ones((2, 4, 5), "float32")
>>> bool(np.allclose(layer(x, training=True), layer(x, training=False), atol=1e-6))
True
"""

import functools

import keras
import tensorflow as tf

from bert_tf.cpu_features import cpu_flags, cpu_only_tensorflow, onednn_enabled
from bert_tf.modeling.activations import get_activation
from bert_tf.modeling.fused_activation import get_training_activation
from bert_tf.modeling.onednn_layer_norm import inside_xla_function
from bert_tf.modeling.xla_elementwise import bias_and_activation, fuses_now

XLA_KERNEL_GRADIENT_MAX_SIZE = 512 * 512
# TensorFlow's ops for the config's activations, in the forms its optimizer fuses into a matmul.
FUSABLE_ACTIVATIONS = {
    "gelu": lambda x: tf.nn.gelu(x, approximate=True),
    "gelu_exact": lambda x: tf.nn.gelu(x, approximate=False),
    "relu": tf.nn.relu,
}


def xla_kernel_gradient_is_faster(kernel_shape, cpuinfo="/proc/cpuinfo"):
    """Whether a kernel of `kernel_shape` takes the XLA kernel gradient on this machine.

    >>> xla_kernel_gradient_is_faster((768, 3072))
    False
    """
    units_in, units_out = kernel_shape
    if units_in * units_out > XLA_KERNEL_GRADIENT_MAX_SIZE or not cpu_only_tensorflow():
        return False
    flags = cpu_flags(cpuinfo)
    return flags is not None and "avx512f" not in flags


def fused_inference_is_faster(compute_dtype, cpuinfo="/proc/cpuinfo"):
    """Whether inference calls run as one matmul that TensorFlow fuses with bias and activation.

    >>> fused_inference_is_faster("bfloat16")
    True
    """
    if not cpu_only_tensorflow():
        return False
    if compute_dtype == "bfloat16":
        return True
    flags = cpu_flags(cpuinfo)
    return flags is not None and "amx_tile" in flags


def xla_layer_norm_is_faster(compute_dtype):
    """Whether inference fuses a residual sum and LayerNorm after the fused kernel (bfloat16, CPUs).

    >>> xla_layer_norm_is_faster("float32")
    False
    """
    return compute_dtype == "bfloat16" and cpu_only_tensorflow()


def onednn_layer_norm_is_faster(compute_dtype, cpuinfo="/proc/cpuinfo"):
    """Whether the LayerNorm after a fused float32 kernel is oneDNN's (`onednn_layer_norm`).

    Only with oneDNN on: without it the same graph runs TensorFlow's own
    batch norm, 7x slower than Keras' LayerNorm.

    >>> onednn_layer_norm_is_faster("bfloat16")
    False
    """
    return (compute_dtype == "float32" and fused_inference_is_faster(compute_dtype, cpuinfo)
            and onednn_enabled())


def xla_elementwise_is_faster(compute_dtype, cpuinfo="/proc/cpuinfo"):
    """Whether inference fuses the element-wise work between matmuls with XLA (`xla_elementwise`).

    >>> xla_elementwise_is_faster("bfloat16")
    False
    """
    return (compute_dtype == "float32" and cpu_only_tensorflow()
            and not fused_inference_is_faster(compute_dtype, cpuinfo))


@keras.saving.register_keras_serializable(package="bert_tf")
class TokenDense(keras.layers.Dense):
    """`keras.layers.Dense` over `[batch, length, width]`, computed as measured fastest.

    Args:
        units: output width.
        hidden_act: a `bert_config.json` activation name ("gelu", "relu", ...)
            applied after the bias; None for none.
        **kwargs: `keras.layers.Dense`'s.
    """

    def __init__(self, units, hidden_act=None, **kwargs):
        super().__init__(units, **kwargs)
        self.hidden_act = hidden_act

    def build(self, input_shape):
        super().build(input_shape)
        self.xla_kernel_gradient = xla_kernel_gradient_is_faster(tuple(self.kernel.shape))
        self.fused_inference = fused_inference_is_faster(self.compute_dtype)
        self.xla_elementwise = xla_elementwise_is_faster(self.compute_dtype)
        self.xla_layer_norm = xla_layer_norm_is_faster(self.compute_dtype)
        self.onednn_layer_norm = onednn_layer_norm_is_faster(self.compute_dtype)

    def call(self, inputs, training=None):
        plain = self._keras_only(inputs)
        if not training and self.fused_inference and not plain:
            return self._fused_inference(inputs)
        if self.hidden_act is not None and self.fuses_elementwise(inputs, training):
            return bias_and_activation(self.kernel_product(inputs), self.bias, self.hidden_act)
        if training and self.xla_kernel_gradient and not plain:
            outputs = _product_with_xla_kernel_gradient(
                inputs, keras.ops.cast(self.kernel, self.compute_dtype))
            if self.bias is not None:
                outputs = keras.ops.add(outputs, self.bias)
            outputs = self.activation(outputs)  # Keras' Dense activation: linear unless given
        else:
            outputs = super().call(inputs, training=training)
        if self.hidden_act is None:
            return outputs
        if training:
            return get_training_activation(self.hidden_act)(outputs)
        return get_activation(self.hidden_act)(outputs)

    def _keras_only(self, inputs):
        """LoRA, quantized kernels and inputs not `[B, T, in]` take Keras' Dense as it is."""
        return self.lora_enabled or self.quantization_mode or len(inputs.shape) != 3

    def fuses_elementwise(self, inputs, training):
        """Whether this call adds the bias, and what follows it, in one XLA pass (`xla_elementwise`).

        The feed-forward layer fuses its activation so; `TransformerBlock` asks
        for its residual layers, which fuse the residual sum and LayerNorm.
        """
        return (self.bias is not None and self.activation is keras.activations.linear
                and not self._keras_only(inputs) and fuses_now(self.xla_elementwise, training))

    def fuses_layer_norm(self, inputs, training):
        """Whether this call's output, a residual and a LayerNorm take one XLA pass after it.

        Asked by `TransformerBlock` for its residual layers in bfloat16
        inference, whose call stays the fused oneDNN kernel
        (`xla_elementwise.residual_layer_norm`).
        """
        return self._fused_kernel_then(self.xla_layer_norm, inputs, training)

    def takes_onednn_layer_norm(self, inputs, training):
        """Whether this call's output plus a residual takes oneDNN's LayerNorm kernel.

        Asked by `TransformerBlock` for its residual layers in float32
        inference on AMX CPUs, whose call stays the fused oneDNN kernel;
        not inside an XLA-compiled function, which fuses the LayerNorm itself.
        """
        return (self._fused_kernel_then(self.onednn_layer_norm, inputs, training)
                and not inside_xla_function())

    def _fused_kernel_then(self, choice, inputs, training):
        """Whether this call is the fused oneDNN kernel and what follows it takes `choice`."""
        return (self.fused_inference and not self._keras_only(inputs)
                and fuses_now(choice, training))

    def kernel_product(self, inputs):
        """`inputs @ kernel` alone, as Keras' Dense computes it (for fusing what follows)."""
        return keras.ops.matmul(inputs, keras.ops.cast(self.kernel, self.compute_dtype))

    def _fused_inference(self, inputs):
        """`[B*T, in] @ kernel`, `bias_add`, activation: what TensorFlow fuses into one kernel."""
        rows = tf.matmul(tf.reshape(inputs, [-1, inputs.shape[-1]]),
                         tf.cast(self.kernel, self.compute_dtype))
        if self.bias is not None:
            rows = tf.nn.bias_add(rows, tf.cast(self.bias, self.compute_dtype))
        rows = self.activation(rows)  # Keras' Dense activation: linear unless given
        if self.hidden_act is not None:
            rows = FUSABLE_ACTIVATIONS.get(self.hidden_act, get_activation(self.hidden_act))(rows)
        return tf.reshape(rows, tf.concat([tf.shape(inputs)[:-1], [self.units]], axis=0))

    def get_config(self):
        config = super().get_config()
        config.update(hidden_act=self.hidden_act)
        return config


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
