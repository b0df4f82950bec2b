"""The masked-language-model head, with the decoder tied to the word embeddings."""

import keras
from keras import ops

from bert_tf.modeling.activations import get_activation
from bert_tf.modeling.positions import gather_positions


@ops.custom_gradient
def tied_decoder_logits(hidden, table):
    """`hidden [N, H]` times the transposed embedding `table [V, H]`: logits `[N, V]`.

    The same product as `hidden @ table.T`, with the backward pass written
    out so that both of its matmuls read their operands as stored:
    `upstream @ table` and `upstream.T @ hidden`, which TensorFlow runs as
    one matmul with its transposed-operand flag. Left to autodiff, the
    forward pass's transpose of the table makes the table's gradient an
    `[H, V]` product followed by a transpose of it: on a CPU without
    oneDNN, 152 ms against 74 ms at BERT-Mini's 640 x 256 x 30522, the
    largest matmul of a pretraining step (docs/PERFORMANCE.md).

    >>> import numpy as np
    >>> hidden, table = np.ones((2, 3), "float32"), np.arange(12, dtype="float32").reshape(4, 3)
    >>> tied_decoder_logits(hidden, table).numpy().tolist()
    [[3.0, 12.0, 21.0, 30.0], [3.0, 12.0, 21.0, 30.0]]
    """

    def grad(*args, upstream=None):
        upstream = args[0] if upstream is None else upstream
        return ops.matmul(upstream, table), ops.matmul(ops.transpose(upstream), hidden)

    return ops.matmul(hidden, ops.transpose(table)), grad


@keras.saving.register_keras_serializable(package="bert_tf")
class MaskedLMHead(keras.layers.Layer):
    """Predicts the vocabulary id at each masked position.

    As in the original (`cls/predictions/*`): gather the hidden states at the
    masked positions, apply dense(H, hidden_act) and LayerNorm (epsilon
    1e-12), multiply by the transposed word-embedding table (tied decoder)
    and add a per-token output bias. Logits are returned in float32.

    Args:
        word_embeddings: the encoder's word `keras.layers.Embedding`; its
            table is the decoder (not a copy: training updates both).
        hidden_act: activation name of the transform layer.
        initializer_range: stddev of the truncated-normal initializer.

    Example:

    >>> import numpy as np
    >>> from bert_tf.config import BertConfig
    >>> from bert_tf.modeling.encoder import BertEncoder
    >>> encoder = BertEncoder(BertConfig.named("tiny", vocab_size=50))
    >>> head = MaskedLMHead(encoder.embeddings.word_embeddings, "gelu", 0.02)
    >>> sequence = np.zeros((2, 6, 128), "float32")
    >>> tuple(head(sequence, np.array([[1, 3], [2, 0]], "int32")).shape)
    (2, 2, 50)
    """

    def __init__(self, word_embeddings, hidden_act, initializer_range, **kwargs):
        super().__init__(**kwargs)
        self.word_embeddings = word_embeddings
        self.hidden_act = hidden_act
        self.initializer_range = initializer_range

    def build(self, sequence_output_shape, masked_positions_shape=None):
        hidden_size = sequence_output_shape[-1]
        self.transform = keras.layers.Dense(
            hidden_size, activation=get_activation(self.hidden_act), name="transform",
            dtype=self.dtype_policy,
            kernel_initializer=keras.initializers.TruncatedNormal(stddev=self.initializer_range))
        self.transform.build((None, None, hidden_size))
        self.layer_norm = keras.layers.LayerNormalization(
            epsilon=1e-12, name="layer_norm", dtype=self.dtype_policy)
        self.layer_norm.build((None, None, hidden_size))
        self.output_bias = self.add_weight(
            shape=(self.word_embeddings.input_dim,), initializer="zeros", name="output_bias")
        self.built = True

    def call(self, sequence_output, masked_positions=None):
        """Logits `[B, P, V]` at `masked_positions` `[B, P]` of `sequence_output` `[B, T, H]`.

        Without `masked_positions`, `sequence_output` holds the states at
        the masked positions already (`[B, P, H]`, as `BertPretrainer` gets
        them from `BertEncoder.encode_at`).
        """
        gathered = sequence_output
        if masked_positions is not None:
            gathered = gather_positions(sequence_output, masked_positions)
        hidden = self.layer_norm(self.transform(gathered))
        table = ops.cast(self.word_embeddings.embeddings, hidden.dtype)
        # One [B*P, H] x [H, V] matmul: a batched einsum against the shared
        # table would make the table's gradient a [B, V, H] tensor summed over B.
        batch, positions, hidden_size = ops.shape(hidden)
        logits = tied_decoder_logits(ops.reshape(hidden, (-1, hidden_size)), table)
        logits = ops.reshape(logits, (batch, positions, -1))
        # The bias is float32; inside a mixed-precision call Keras casts it to
        # the compute dtype when read eagerly, so cast it back.
        return ops.cast(logits, "float32") + ops.cast(self.output_bias, "float32")

    def compute_output_shape(self, sequence_output_shape, masked_positions_shape=None):
        rows = masked_positions_shape
        if masked_positions_shape is None:
            rows = sequence_output_shape[:-1]
        return tuple(rows) + (self.word_embeddings.input_dim,)
