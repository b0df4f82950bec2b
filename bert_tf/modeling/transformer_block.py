"""One post-LayerNorm transformer block of the BERT encoder."""

import keras

from bert_tf.modeling.attention import SelfAttention
from bert_tf.modeling.dropout import Dropout
from bert_tf.modeling.onednn_layer_norm import onednn_layer_norm
from bert_tf.modeling.positions import gather_positions
from bert_tf.modeling.token_dense import TokenDense
from bert_tf.modeling.xla_elementwise import bias_residual_layer_norm, residual_layer_norm


@keras.saving.register_keras_serializable(package="bert_tf")
class TransformerBlock(keras.layers.Layer):
    """Self-attention and a feed-forward network, each in a post-LN residual.

    `x = LN(x + dropout(dense(attention(x))))`, then
    `x = LN(x + dropout(dense(act(dense(x)))))`, LayerNorm epsilon 1e-12:
    the original's block, with sub-layers that map one to one onto its
    checkpoint variables (`attention/self/*`, `attention/output/*`,
    `intermediate/dense`, `output/*`). Where a residual branch's dense
    layer fuses (`TokenDense.fuses_elementwise`: float32 inference in traced
    graphs on CPUs measured faster so), its bias, the residual and the
    LayerNorm are one XLA-compiled pass (`xla_elementwise.py`); in bfloat16
    inference (`TokenDense.fuses_layer_norm`) the residual and the LayerNorm
    after the layer's fused kernel are; in float32 inference on AMX CPUs
    (`TokenDense.takes_onednn_layer_norm`) that LayerNorm is oneDNN's kernel.

    Args:
        num_heads: attention heads.
        intermediate_size: width of the feed-forward layer.
        hidden_act: `bert_config.json` activation name of the feed-forward layer.
        hidden_dropout_prob: dropout on both residual branches.
        attention_probs_dropout_prob: dropout on the attention probabilities.
        initializer_range: stddev of the truncated-normal initializers.

    Example:

    >>> import numpy as np
    >>> block = TransformerBlock(num_heads=2, intermediate_size=16, hidden_act="gelu",
    ...                          hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1,
    ...                          initializer_range=0.02)
    >>> tuple(block(np.zeros((2, 5, 8), "float32"), np.zeros((2, 1, 1, 5), "float32")).shape)
    (2, 5, 8)
    """

    def __init__(self, num_heads, intermediate_size, hidden_act, hidden_dropout_prob,
                 attention_probs_dropout_prob, initializer_range, **kwargs):
        super().__init__(**kwargs)
        self.num_heads = num_heads
        self.intermediate_size = intermediate_size
        self.hidden_act = hidden_act
        self.hidden_dropout_prob = hidden_dropout_prob
        self.attention_probs_dropout_prob = attention_probs_dropout_prob
        self.initializer_range = initializer_range

    def build(self, inputs_shape, attention_bias_shape=None):
        hidden_size = inputs_shape[-1]
        if hidden_size % self.num_heads:
            raise ValueError(f"hidden size {hidden_size} is not a multiple of "
                             f"num_heads {self.num_heads}")
        policy = self.dtype_policy

        def dense(units, name, hidden_act=None):
            return TokenDense(
                units, hidden_act=hidden_act, name=name, dtype=policy,
                kernel_initializer=keras.initializers.TruncatedNormal(
                    stddev=self.initializer_range))

        self.attention = SelfAttention(
            self.num_heads, hidden_size // self.num_heads, self.attention_probs_dropout_prob,
            self.initializer_range, dtype=policy, name="attention")
        self.attention_output = dense(hidden_size, "attention_output")
        self.attention_layer_norm = keras.layers.LayerNormalization(
            epsilon=1e-12, dtype=policy, name="attention_layer_norm")
        self.intermediate = dense(self.intermediate_size, "intermediate", self.hidden_act)
        self.output_dense = dense(hidden_size, "output_dense")
        self.output_layer_norm = keras.layers.LayerNormalization(
            epsilon=1e-12, dtype=policy, name="output_layer_norm")
        self.dropout = Dropout(self.hidden_dropout_prob, dtype=policy)

        self.attention.build(inputs_shape)
        self.attention_output.build(inputs_shape)
        self.attention_layer_norm.build(inputs_shape)
        self.intermediate.build(inputs_shape)
        self.output_dense.build(tuple(inputs_shape[:-1]) + (self.intermediate_size,))
        self.output_layer_norm.build(inputs_shape)
        self.built = True

    def call(self, inputs, attention_bias, training=False, query_positions=None):
        """The block's output at every position, or only at `query_positions`.

        Args:
            inputs: `[B, T, H]`.
            attention_bias: `[B, 1, 1 or T, T]` (`AttentionBias`).
            training: dropout on.
            query_positions: `[B, Q]` positions whose outputs are wanted.
                Keys and values still come from every position, so the
                result equals the full output gathered there, and the rest
                of the block runs on Q rows instead of T.

        Returns:
            `[B, T, H]`, or `[B, Q, H]` with `query_positions`.
        """
        queries = inputs
        if query_positions is not None:
            queries = gather_positions(inputs, query_positions)
            if attention_bias.shape[2] != 1:  # causal: one row of bias per query
                attention_bias = gather_positions(attention_bias[:, 0], query_positions)[:, None]
        attended = self.attention(inputs, attention_bias, training=training,
                                  query_inputs=queries)
        hidden = self._residual(self.attention_output, attended, queries,
                                self.attention_layer_norm, training)
        expanded = self.intermediate(hidden, training=training)
        return self._residual(self.output_dense, expanded, hidden, self.output_layer_norm,
                              training)

    def compute_output_shape(self, inputs_shape, attention_bias_shape,
                             query_positions_shape=None):
        # Without it, Keras traces `call` in a scratch graph to learn this shape
        # each time a functional model calls the block: two thirds of the time
        # building a small BertEncoder took (tests/modeling/test_output_shapes.py).
        rows = inputs_shape[:-1] if query_positions_shape is None else query_positions_shape
        return tuple(rows) + (inputs_shape[-1],)

    def _residual(self, dense, branch, residual, layer_norm, training):
        """`layer_norm(residual + dropout(dense(branch)))`."""
        if dense.fuses_elementwise(branch, training):
            return bias_residual_layer_norm(dense.kernel_product(branch), dense.bias, residual,
                                            layer_norm)
        if dense.fuses_layer_norm(branch, training):
            return residual_layer_norm(dense(branch), residual, layer_norm)
        if dense.takes_onednn_layer_norm(branch, training):
            return onednn_layer_norm(residual + dense(branch), layer_norm)
        return layer_norm(residual + self.dropout(dense(branch), training=training))

    def get_config(self):
        config = super().get_config()
        config.update(num_heads=self.num_heads, intermediate_size=self.intermediate_size,
                      hidden_act=self.hidden_act, hidden_dropout_prob=self.hidden_dropout_prob,
                      attention_probs_dropout_prob=self.attention_probs_dropout_prob,
                      initializer_range=self.initializer_range)
        return config
