"""Small output heads: next-sentence, sequence classification and answer span.

Each is one dense layer over an encoder output, kept as its own layer so the
checkpoint name maps can find it (`cls/seq_relationship/*`, `output_*`,
`cls/squad/*` in the original).
"""

import keras
from keras import ops

from bert_tf.modeling.dropout import Dropout


def _dense(units, initializer_range, name, dtype):
    return keras.layers.Dense(
        units, name=name, dtype=dtype,
        kernel_initializer=keras.initializers.TruncatedNormal(stddev=initializer_range))


@keras.saving.register_keras_serializable(package="bert_tf")
class NextSentenceHead(keras.layers.Layer):
    """Pooled output -> 2 float32 logits (0 = actual next, 1 = random next).

    Example:

    >>> import numpy as np
    >>> tuple(NextSentenceHead(0.02)(np.zeros((3, 8), "float32")).shape)
    (3, 2)
    """

    def __init__(self, initializer_range=0.02, **kwargs):
        super().__init__(**kwargs)
        self.initializer_range = initializer_range
        self.dense = _dense(2, initializer_range, "dense", self.dtype_policy)

    def build(self, pooled_shape):
        self.dense.build(pooled_shape)
        self.built = True

    def call(self, pooled_output):
        return ops.cast(self.dense(pooled_output), "float32")

    def get_config(self):
        return {**super().get_config(), "initializer_range": self.initializer_range}


@keras.saving.register_keras_serializable(package="bert_tf")
class ClassificationHead(keras.layers.Layer):
    """Dropout then dense over the pooled output: `num_labels` float32 logits.

    Example:

    >>> import numpy as np
    >>> tuple(ClassificationHead(num_labels=3)(np.zeros((2, 8), "float32")).shape)
    (2, 3)
    """

    def __init__(self, num_labels, dropout_rate=0.1, initializer_range=0.02, **kwargs):
        super().__init__(**kwargs)
        self.num_labels = num_labels
        self.dropout_rate = dropout_rate
        self.initializer_range = initializer_range
        self.dropout = Dropout(dropout_rate, dtype=self.dtype_policy)
        self.dense = _dense(num_labels, initializer_range, "dense", self.dtype_policy)

    def build(self, pooled_shape):
        self.dense.build(pooled_shape)
        self.built = True

    def call(self, pooled_output, training=False):
        return ops.cast(self.dense(self.dropout(pooled_output, training=training)), "float32")

    def get_config(self):
        return {**super().get_config(), "num_labels": self.num_labels,
                "dropout_rate": self.dropout_rate, "initializer_range": self.initializer_range}


@keras.saving.register_keras_serializable(package="bert_tf")
class SpanHead(keras.layers.Layer):
    """Sequence output -> (start_logits, end_logits), each `[B, T]` float32.

    Example:

    >>> import numpy as np
    >>> start, end = SpanHead()(np.zeros((2, 5, 8), "float32"))
    >>> tuple(start.shape)
    (2, 5)
    """

    def __init__(self, initializer_range=0.02, **kwargs):
        super().__init__(**kwargs)
        self.initializer_range = initializer_range
        self.dense = _dense(2, initializer_range, "dense", self.dtype_policy)

    def build(self, sequence_shape):
        self.dense.build(sequence_shape)
        self.built = True

    def call(self, sequence_output):
        logits = ops.cast(self.dense(sequence_output), "float32")
        return logits[..., 0], logits[..., 1]

    def get_config(self):
        return {**super().get_config(), "initializer_range": self.initializer_range}
