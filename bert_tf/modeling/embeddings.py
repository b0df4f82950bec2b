"""The input embedding layer: word + token type + position, LayerNorm, dropout."""

import keras
from keras import ops

from bert_tf.modeling.dropout import Dropout


@keras.saving.register_keras_serializable(package="bert_tf")
class BertEmbeddings(keras.layers.Layer):
    """Sums word, token-type and learned absolute position embeddings.

    As in the original: position embeddings are the first `T` rows of a
    `[max_position_embeddings, H]` table, the sum is normalised with
    LayerNorm (epsilon 1e-12) and then dropped out (training only).

    Args:
        vocab_size: rows of the word-embedding table.
        hidden_size: embedding width H.
        max_position_embeddings: longest sequence the position table covers.
        type_vocab_size: number of segment ids.
        dropout_rate: dropout applied after LayerNorm.
        initializer_range: stddev of the truncated-normal initializer.

    Example:

    >>> import numpy as np
    >>> layer = BertEmbeddings(vocab_size=10, hidden_size=8, max_position_embeddings=16,
    ...                        type_vocab_size=2, dropout_rate=0.1, initializer_range=0.02)
    >>> ids = np.array([[1, 2, 3]], dtype="int32")
    >>> tuple(layer(ids, np.zeros_like(ids)).shape)
    (1, 3, 8)
    """

    def __init__(self, vocab_size, hidden_size, max_position_embeddings, type_vocab_size,
                 dropout_rate, initializer_range, **kwargs):
        super().__init__(**kwargs)
        self.vocab_size = vocab_size
        self.hidden_size = hidden_size
        self.max_position_embeddings = max_position_embeddings
        self.type_vocab_size = type_vocab_size
        self.dropout_rate = dropout_rate
        self.initializer_range = initializer_range
        initializer = keras.initializers.TruncatedNormal(stddev=initializer_range)
        self.word_embeddings = keras.layers.Embedding(
            vocab_size, hidden_size, embeddings_initializer=initializer,
            dtype=self.dtype_policy, name="word_embeddings")
        self.token_type_embeddings = keras.layers.Embedding(
            type_vocab_size, hidden_size, embeddings_initializer=initializer,
            dtype=self.dtype_policy, name="token_type_embeddings")
        self.position_embeddings = keras.layers.Embedding(
            max_position_embeddings, hidden_size, embeddings_initializer=initializer,
            dtype=self.dtype_policy, name="position_embeddings")
        self.layer_norm = keras.layers.LayerNormalization(
            epsilon=1e-12, dtype=self.dtype_policy, name="layer_norm")
        self.dropout = Dropout(dropout_rate, dtype=self.dtype_policy)

    def build(self, input_ids_shape, segment_ids_shape=None):
        self.word_embeddings.build(input_ids_shape)
        self.token_type_embeddings.build(input_ids_shape)
        self.position_embeddings.build(input_ids_shape)
        self.layer_norm.build(tuple(input_ids_shape) + (self.hidden_size,))
        self.built = True

    def call(self, input_ids, segment_ids, training=False):
        seq_length = ops.shape(input_ids)[1]
        self._check_length(seq_length)
        positions = self.position_embeddings.embeddings[:seq_length]
        embeddings = (self.word_embeddings(input_ids)
                      + self.token_type_embeddings(segment_ids)
                      + ops.cast(positions, self.compute_dtype)[None, :, :])
        return self.dropout(self.layer_norm(embeddings), training=training)

    def compute_output_shape(self, input_ids_shape, segment_ids_shape=None):
        # Keras would otherwise trace `call` in a scratch graph to learn this
        # shape whenever a functional model is built (BertEncoder's blocks too).
        self._check_length(input_ids_shape[1])
        return tuple(input_ids_shape) + (self.hidden_size,)

    def _check_length(self, seq_length):
        if isinstance(seq_length, int) and seq_length > self.max_position_embeddings:
            raise ValueError(f"sequences of {seq_length} tokens, but the model has "
                             f"max_position_embeddings={self.max_position_embeddings} "
                             "positions; cut them to that length")

    def get_config(self):
        config = super().get_config()
        config.update(vocab_size=self.vocab_size, hidden_size=self.hidden_size,
                      max_position_embeddings=self.max_position_embeddings,
                      type_vocab_size=self.type_vocab_size, dropout_rate=self.dropout_rate,
                      initializer_range=self.initializer_range)
        return config
