"""Bidirectional LSTMs over token vectors: `BiLstm`, and the NER tagger made of it.

`BiLstmTagger` is the feature-based NER head of the paper's section 5.3: a
randomly initialised two-layer BiLSTM of 768 units per direction over token
vectors taken from a frozen BERT, then a linear classifier over the tags.
The LSTMs read only the real tokens (`input_mask`), so each direction
starts at the text's own first or last token; padded positions give
outputs nobody reads.
"""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="bert_tf")
class BiLstm(keras.layers.Layer):
    """Token vectors `[B, T, D]` + `input_mask` `[B, T]` -> `[B, T, 2 * lstm_units]`.

    Each position's output is the forward LSTM's state there (it has read
    the text up to it) followed by the backward one's (it has read the text
    from the end back to it). The LSTMs are Keras' generic ones, never
    cuDNN's kernel, which XLA cannot compile: on a GPU every run is
    XLA-compiled by default (`compilation.use_xla`).

    Args:
        lstm_units: units of each direction of each LSTM layer.
        num_layers: stacked bidirectional LSTM layers.

    Attributes:
        lstms: the `keras.layers.Bidirectional` LSTM layers, bottom first
            (also attributes `bilstm_0`, `bilstm_1`, ...).

    Example:

    >>> import numpy as np
    >>> bilstm = BiLstm(lstm_units=4)
    >>> features = np.ones((2, 6, 3), "float32")
    >>> tuple(bilstm(features, np.array([[1, 1, 1, 0, 0, 0], [1] * 6], "int32")).shape)
    (2, 6, 8)
    """

    def __init__(self, lstm_units, num_layers=1, **kwargs):
        super().__init__(**kwargs)
        self.lstm_units = lstm_units
        self.num_layers = num_layers
        # One attribute per layer: TensorFlow checkpoints (the trainer's) do not
        # see layers held in a Python list, so a list would be silently dropped.
        for i in range(num_layers):
            setattr(self, f"bilstm_{i}", keras.layers.Bidirectional(
                keras.layers.LSTM(lstm_units, return_sequences=True, use_cudnn=False,
                                  dtype=self.dtype_policy),
                name=f"bilstm_{i}", dtype=self.dtype_policy))

    @property
    def lstms(self):
        """The bidirectional LSTM layers, bottom first."""
        return [getattr(self, f"bilstm_{i}") for i in range(self.num_layers)]

    def build(self, features_shape, input_mask_shape=None):
        shape = tuple(features_shape)
        for lstm in self.lstms:
            lstm.build(shape)
            shape = shape[:-1] + (2 * self.lstm_units,)
        self.built = True

    def call(self, features, input_mask):
        mask = ops.cast(input_mask, "bool")
        hidden = features
        for lstm in self.lstms:
            hidden = lstm(hidden, mask=mask)
        # A new tensor without the Keras mask the LSTMs attach: the heads read every
        # position and take no mask (Keras warns of each one it would drop).
        return ops.copy(hidden)

    def get_config(self):
        return {**super().get_config(), "lstm_units": self.lstm_units,
                "num_layers": self.num_layers}


@keras.saving.register_keras_serializable(package="bert_tf")
class BiLstmTagger(BiLstm):
    """Token features `[B, T, D]` + `input_mask` `[B, T]` -> float32 tag logits `[B, T, labels]`.

    The feature-based NER head: a `BiLstm` (two layers by default) and a
    dense classifier on every position.

    Args:
        num_labels: tags to score.
        lstm_units: units of each direction of each LSTM layer.
        num_layers: stacked bidirectional LSTM layers.
        initializer_range: stddev of the classifier's truncated-normal init.

    Attributes:
        lstms: as `BiLstm`'s.
        classifier: the dense output layer.

    Example:

    >>> import numpy as np
    >>> tagger = BiLstmTagger(num_labels=5, lstm_units=4)
    >>> features = np.ones((2, 6, 3), "float32")
    >>> tuple(tagger(features, np.array([[1, 1, 1, 0, 0, 0], [1] * 6], "int32")).shape)
    (2, 6, 5)
    """

    def __init__(self, num_labels, lstm_units=768, num_layers=2, initializer_range=0.02,
                 **kwargs):
        super().__init__(lstm_units, num_layers, **kwargs)
        self.num_labels = num_labels
        self.initializer_range = initializer_range
        self.classifier = keras.layers.Dense(
            num_labels, name="classifier", dtype=self.dtype_policy,
            kernel_initializer=keras.initializers.TruncatedNormal(stddev=initializer_range))

    def build(self, features_shape, input_mask_shape=None):
        super().build(features_shape)
        self.classifier.build(tuple(features_shape)[:-1] + (2 * self.lstm_units,))

    def call(self, features, input_mask):
        return ops.cast(self.classifier(super().call(features, input_mask)), "float32")

    def get_config(self):
        return {**super().get_config(), "num_labels": self.num_labels,
                "initializer_range": self.initializer_range}
