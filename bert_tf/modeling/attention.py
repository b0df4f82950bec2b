"""Multi-head scaled dot-product self-attention, laid out like the original."""

import math

import keras
from keras import ops

from bert_tf.modeling.dropout import Dropout
from bert_tf.modeling.token_dense import TokenDense


@keras.saving.register_keras_serializable(package="bert_tf")
class SelfAttention(keras.layers.Layer):
    """Multi-head self-attention with separate query/key/value projections.

    The projections are three `[H, H]` dense layers, so their kernels are the
    original checkpoint's `attention/self/{query,key,value}` tensors as they
    are. Scores are scaled by 1/sqrt(head_size), an additive bias (-10000 on
    padded keys and, for causal models, on future positions) is added, the
    softmax is taken in float32 (also under mixed precision) and dropped out
    during training. The output projection belongs to the transformer block,
    as in the original.

    Args:
        num_heads: number of attention heads A.
        head_size: width of each head; A * head_size must equal the input width.
        dropout_rate: dropout on the attention probabilities.
        initializer_range: stddev of the truncated-normal kernel initializer.

    Example:

    >>> import numpy as np
    >>> attention = SelfAttention(num_heads=2, head_size=4, dropout_rate=0.0,
    ...                           initializer_range=0.02)
    >>> x = np.zeros((1, 3, 8), "float32")
    >>> tuple(attention(x, np.zeros((1, 1, 1, 3), "float32")).shape)
    (1, 3, 8)
    """

    def __init__(self, num_heads, head_size, dropout_rate, initializer_range, **kwargs):
        super().__init__(**kwargs)
        self.num_heads = num_heads
        self.head_size = head_size
        self.dropout_rate = dropout_rate
        self.initializer_range = initializer_range
        width = num_heads * head_size

        def projection(name):
            return TokenDense(
                width, name=name, dtype=self.dtype_policy,
                kernel_initializer=keras.initializers.TruncatedNormal(stddev=initializer_range))

        self.query = projection("query")
        self.key = projection("key")
        self.value = projection("value")
        self.dropout = Dropout(dropout_rate, dtype=self.dtype_policy)

    def build(self, inputs_shape, attention_bias_shape=None):
        for dense in (self.query, self.key, self.value):
            dense.build(inputs_shape)
        self.built = True

    def _split_heads(self, x):
        batch, length = ops.shape(x)[0], ops.shape(x)[1]
        return ops.reshape(x, (batch, length, self.num_heads, self.head_size))

    def call(self, inputs, attention_bias, training=False, query_inputs=None):
        """Attends from `query_inputs` (default: `inputs`) to every row of `inputs`.

        Args:
            inputs: `[B, T, H]`, the rows the keys and values come from.
            attention_bias: `[B, 1, 1 or Q, T]`, added to the scores.
            training: dropout on the attention probabilities.
            query_inputs: `[B, Q, H]`, the rows whose outputs are wanted, when
                those are fewer than `inputs`' (`BertEncoder.encode_at`).

        Returns:
            `[B, Q, H]`.
        """
        query_inputs = inputs if query_inputs is None else query_inputs
        query = self._split_heads(self.query(query_inputs))
        key = self._split_heads(self.key(inputs))
        value = self._split_heads(self.value(inputs))
        scores = ops.einsum("bqhd,bkhd->bhqk", query, key)
        scores = ops.cast(scores, "float32") * (1.0 / math.sqrt(self.head_size))
        probs = ops.softmax(scores + ops.cast(attention_bias, "float32"), axis=-1)
        probs = self.dropout(ops.cast(probs, self.compute_dtype), training=training)
        context = ops.einsum("bhqk,bkhd->bqhd", probs, value)
        batch, length = ops.shape(query_inputs)[0], ops.shape(query_inputs)[1]
        return ops.reshape(context, (batch, length, self.num_heads * self.head_size))

    def get_config(self):
        config = super().get_config()
        config.update(num_heads=self.num_heads, head_size=self.head_size,
                      dropout_rate=self.dropout_rate, initializer_range=self.initializer_range)
        return config
