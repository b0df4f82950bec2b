"""Bidirectional LSTMs over token vectors: the paper's two uses of them.

* `BiLstmTagger`: the feature-based NER head of section 5.3, a randomly
  initialised two-layer BiLSTM of 768 units per direction over token
  vectors taken from a frozen BERT, then a linear classifier over the tags.
* The "+ BiLSTM" row of Table 5: a randomly initialised BiLSTM put over a
  fine-tuned encoder's sequence output, before the task's head
  (`fine_tuning_bilstm`, `head_inputs`), to give the left-to-right model
  the right context its attention lacks.

Both are `BiLstm`: the LSTMs read only the real tokens (`input_mask`), so
each direction starts at the text's own first or last token; padded
positions give outputs nobody reads.
"""

import keras
from keras import ops

from bert_tf.modeling.positions import last_real_token

FINE_TUNING_BILSTM = "bilstm"  # the layer's name in the fine-tuned models


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

    def compute_output_shape(self, features_shape, input_mask_shape=None):
        # Spares Keras tracing the LSTMs to learn it when a model is built.
        return tuple(features_shape)[:-1] + (2 * self.lstm_units,)

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

    def compute_output_spec(self, features, input_mask):
        # A spec, not a shape: the logits are float32 under any policy (`call` casts).
        return keras.KerasTensor(tuple(features.shape)[:-1] + (self.num_labels,), "float32")

    def get_config(self):
        return {**super().get_config(), "num_labels": self.num_labels,
                "initializer_range": self.initializer_range}


def fine_tuning_bilstm(lstm_units):
    """The randomly initialised one-layer `BiLstm` of the "+ BiLSTM" row, or None for 0 units.

    The paper gives no size; the runners' default (`--bilstm_units`) is half
    the encoder's hidden size per direction, so the head reads vectors as
    wide as without it (docs/ORIGINAL_BEHAVIOUR.md).
    """
    return BiLstm(lstm_units, name=FINE_TUNING_BILSTM) if lstm_units else None


def bilstm_of(model):
    """The `fine_tuning_bilstm` of a model built with one (a layer of its own), else None."""
    return next((layer for layer in model.layers if layer.name == FINE_TUNING_BILSTM), None)


def final_states(sequence, input_mask, lstm_units):
    """`[B, 2 * lstm_units]`: a `BiLstm`'s final states, each direction's after the whole text.

    The forward LSTM's state at the last real token, followed by the
    backward one's at the first, `[CLS]`: both have read every token.

    >>> import numpy as np
    >>> sequence = np.arange(12, dtype="float32").reshape(1, 3, 4)  # units 2: [fw, fw, bw, bw]
    >>> ops.convert_to_numpy(final_states(sequence, np.array([[1, 1, 0]]), 2)).tolist()
    [[4.0, 5.0, 2.0, 3.0]]
    """
    forward = last_real_token(sequence, input_mask)[:, :lstm_units]
    return ops.concatenate([forward, sequence[:, 0, lstm_units:]], axis=-1)


def head_inputs(encoder, inputs, bilstm=None):
    """What a fine-tuning head reads: `(sequence [B, T, W], summary [B, W])`.

    Without a BiLSTM, the encoder's `sequence_output` and `pooled_output`
    (W = H), as in the original. With one (`fine_tuning_bilstm`), its
    outputs over the sequence output, and its `final_states` as the summary
    of sentence-level tasks (W = 2 * units): the pooler, trained on the
    encoder's own `[CLS]` vector, is not read.

    Args:
        encoder: a `BertEncoder`.
        inputs: its input dict (tensors or Keras inputs).
        bilstm: a `BiLstm`, or None.

    Example:

    >>> import numpy as np
    >>> from bert_tf.config import BertConfig
    >>> from bert_tf.modeling.encoder import BertEncoder
    >>> encoder = BertEncoder(BertConfig.named("tiny", vocab_size=10))
    >>> ids = np.ones((2, 5), "int32")
    >>> inputs = {"input_ids": ids, "input_mask": ids, "segment_ids": 0 * ids}
    >>> sequence, summary = head_inputs(encoder, inputs, fine_tuning_bilstm(3))
    >>> tuple(sequence.shape), tuple(summary.shape)
    ((2, 5, 6), (2, 6))
    """
    outputs = encoder(inputs)
    if bilstm is None:
        return outputs["sequence_output"], outputs["pooled_output"]
    sequence = bilstm(outputs["sequence_output"], inputs["input_mask"])
    return sequence, final_states(sequence, inputs["input_mask"], bilstm.lstm_units)
