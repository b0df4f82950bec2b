"""Classifiers: the encoder's pooled output (or every token) through one dense layer.

What run_classifier.py trains and a classifier export serves: dropout on the
pooled output, then `output_weights` / `output_bias` in the original's
checkpoints (one output and no softmax for regression). The token
classifier (run_ner.py, the `ner` export) puts the same head on every token.
With `bilstm_units`, the head reads a BiLSTM over the encoder instead
(`bilstm.head_inputs`: the paper's "+ BiLSTM").
"""

import keras

from bert_tf.modeling.bilstm import fine_tuning_bilstm, head_inputs
from bert_tf.modeling.encoder import BertEncoder
from bert_tf.modeling.heads import ClassificationHead


def build_classifier(config, num_labels, bilstm_units=0):
    """Encoder + classification head: input dict -> float32 logits `[B, num_labels]`.

    `num_labels=1` for regression (the single logit is the predicted score).
    `bilstm_units`: the head reads the final states of a BiLSTM of that many
    units per direction over the sequence output, not the pooled output.

    >>> import numpy as np
    >>> from bert_tf.config import BertConfig
    >>> model = build_classifier(BertConfig.named("tiny", vocab_size=10), num_labels=3)
    >>> ids = np.ones((2, 4), "int32")
    >>> tuple(model({"input_ids": ids, "input_mask": ids, "segment_ids": 0 * ids}).shape)
    (2, 3)
    """
    encoder = BertEncoder(config)
    _, summary = head_inputs(encoder, encoder.input, fine_tuning_bilstm(bilstm_units))
    return keras.Model(encoder.input, classification_head(config, num_labels)(summary),
                       name="bert_classifier")


def classification_head(config, num_labels):
    """The `ClassificationHead` (named "classifier") every classifier of `config` puts on top."""
    return ClassificationHead(num_labels, dropout_rate=config.hidden_dropout_prob,
                              initializer_range=config.initializer_range, name="classifier")


def build_token_classifier(config, num_labels, bilstm_units=0):
    """Encoder + dropout + dense on every token: float32 logits `[B, T, num_labels]`.

    `bilstm_units`: on every position of a BiLSTM over the sequence output.

    >>> import numpy as np
    >>> from bert_tf.config import BertConfig
    >>> model = build_token_classifier(BertConfig.named("tiny", vocab_size=10), num_labels=3)
    >>> ids = np.ones((2, 4), "int32")
    >>> tuple(model({"input_ids": ids, "input_mask": ids, "segment_ids": 0 * ids}).shape)
    (2, 4, 3)
    """
    encoder = BertEncoder(config)
    sequence, _ = head_inputs(encoder, encoder.input, fine_tuning_bilstm(bilstm_units))
    return keras.Model(encoder.input, classification_head(config, num_labels)(sequence),
                       name="bert_token_classifier")
