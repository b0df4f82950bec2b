"""`BiLstmTagger`: the paper's feature-based NER head over frozen BERT features.

Section 5.3 of the paper feeds token vectors taken from a frozen BERT into
a randomly initialised two-layer bidirectional LSTM of 768 units per
direction, then a linear classifier over the tags. The LSTMs read only the
real tokens (`input_mask`); padded positions give logits nobody scores.
"""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="bert_tf")
class BiLstmTagger(keras.layers.Layer):
    """Token features `[B, T, D]` + `input_mask` `[B, T]` -> float32 tag logits `[B, T, labels]`.

    Args:
        num_labels: tags to score.
        lstm_units: units of each direction of each LSTM layer.
        num_layers: stacked bidirectional LSTM layers.
        initializer_range: stddev of the classifier's truncated-normal init.

    Attributes:
        lstms: the `keras.layers.Bidirectional` LSTM layers, bottom first
            (also attributes `bilstm_0`, `bilstm_1`, ...).
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
        super().__init__(**kwargs)
        self.num_labels = num_labels
        self.lstm_units = lstm_units
        self.num_layers = num_layers
        self.initializer_range = initializer_range
        # One attribute per layer: TensorFlow checkpoints (the trainer's) do not
        # see layers held in a Python list, so a list would be silently dropped.
        for i in range(num_layers):
            setattr(self, f"bilstm_{i}", keras.layers.Bidirectional(
                keras.layers.LSTM(lstm_units, return_sequences=True, dtype=self.dtype_policy),
                name=f"bilstm_{i}", dtype=self.dtype_policy))
        self.classifier = keras.layers.Dense(
            num_labels, name="classifier", dtype=self.dtype_policy,
            kernel_initializer=keras.initializers.TruncatedNormal(stddev=initializer_range))

    @property
    def lstms(self):
        """The bidirectional LSTM layers, bottom first."""
        return [getattr(self, f"bilstm_{i}") for i in range(self.num_layers)]

    def build(self, features_shape, input_mask_shape=None):
        shape = tuple(features_shape)
        for lstm in self.lstms:
            lstm.build(shape)
            shape = shape[:-1] + (2 * self.lstm_units,)
        self.classifier.build(shape)
        self.built = True

    def call(self, features, input_mask):
        mask = ops.cast(input_mask, "bool")
        hidden = features
        for lstm in self.lstms:
            hidden = lstm(hidden, mask=mask)
        return ops.cast(self.classifier(hidden), "float32")

    def get_config(self):
        return {**super().get_config(), "num_labels": self.num_labels,
                "lstm_units": self.lstm_units, "num_layers": self.num_layers,
                "initializer_range": self.initializer_range}
