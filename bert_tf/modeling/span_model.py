"""The span-prediction model: the encoder's sequence output through one dense layer of two units.

What run_squad.py trains and a span-QA export serves: a start and an end
logit per token (`cls/squad/output_weights` / `output_bias` in the
original's checkpoints). With `bilstm_units`, the layer reads a BiLSTM over
the encoder instead (`bilstm.head_inputs`: the paper's "+ BiLSTM").
"""

import keras

from bert_tf.modeling.bilstm import fine_tuning_bilstm, head_inputs
from bert_tf.modeling.encoder import BertEncoder
from bert_tf.modeling.heads import SpanHead


def build_span_model(config, bilstm_units=0):
    """Encoder + span head: input dict -> {"start_logits", "end_logits"} `[B, T]` float32.

    `bilstm_units`: the head reads a BiLSTM of that many units per direction
    over the sequence output (each position then has seen the whole text).

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
    sequence, _ = head_inputs(encoder, encoder.input, fine_tuning_bilstm(bilstm_units))
    start_logits, end_logits = head(sequence)
    return keras.Model(encoder.input, {"start_logits": start_logits, "end_logits": end_logits},
                       name="bert_squad")
