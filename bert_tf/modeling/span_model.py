"""The span-prediction model: the encoder's sequence output through one dense layer of two units.

What run_squad.py trains and a span-QA export serves: a start and an end
logit per token (`cls/squad/output_weights` / `output_bias` in the
original's checkpoints).
"""

import keras

from bert_tf.modeling.encoder import BertEncoder
from bert_tf.modeling.heads import SpanHead


def build_span_model(config):
    """Encoder + span head: input dict -> {"start_logits", "end_logits"} `[B, T]` float32.

    >>> import numpy as np
    >>> from bert_tf.config import BertConfig
    >>> config = BertConfig(vocab_size=20, hidden_size=8, num_hidden_layers=1,
    ...                     num_attention_heads=2, intermediate_size=16)
    >>> ids = np.ones((2, 6), "int32")
    >>> outputs = build_span_model(config)(
    ...     {"input_ids": ids, "input_mask": ids, "segment_ids": 0 * ids})
    >>> sorted(outputs), tuple(outputs["start_logits"].shape)
    (['end_logits', 'start_logits'], (2, 6))
    """
    encoder = BertEncoder(config)
    head = SpanHead(initializer_range=config.initializer_range, name="squad")
    start_logits, end_logits = head(encoder(encoder.input)["sequence_output"])
    return keras.Model(encoder.input, {"start_logits": start_logits, "end_logits": end_logits},
                       name="bert_squad")
