"""Matmul FLOPs of the BERT work the benchmarks time, for their GFLOP/s and % peak.

Only matmuls count (2 FLOPs per multiply-add); embedding look-ups,
element-wise ops, softmax, LayerNorm and the optimizer update do not.

* Encoder forward, per layer: `2*B*T*(4*H^2 + 2*H*I)` for the Q, K, V,
  attention-output and two feed-forward dense layers, plus `2*2*B*T^2*H` for
  the attention scores `Q.K^T` and their use `P.V`.
* A training step is 3x the forward matmuls of everything trained: the
  backward pass takes two matmuls per forward one (the gradients of its
  input and of its weight). The heads trained with the encoder:
  pretraining, `2*B*P*(H^2 + H*V)` for the masked-LM transform and output
  layer on `P` positions per sequence, plus `2*B*(H^2 + 2*H)` for the pooler
  and next-sentence layer; classification, `2*B*(H^2 + H*L)` for the pooler
  and the `L`-label output layer.

Example (BERT-Base, batch 32 x 128: the 715 GFLOP of docs/PERFORMANCE.md):

>>> from bert_tf.config import BertConfig
>>> round(encoder_forward(BertConfig.named("base"), 32, 128) / 1e9)
715
"""


def encoder_forward(config, batch, length):
    """FLOPs of the encoder layers' matmuls for `batch` sequences of `length` tokens."""
    hidden, inner = config.hidden_size, config.intermediate_size
    dense = 2 * batch * length * (4 * hidden * hidden + 2 * hidden * inner)
    attention = 2 * 2 * batch * length * length * hidden
    return config.num_hidden_layers * (dense + attention)


def pretraining_step(config, batch, length, predictions):
    """FLOPs of a training step: encoder, masked LM on `predictions` positions per sequence, NSP."""
    hidden = config.hidden_size
    masked_lm = 2 * batch * predictions * (hidden * hidden + hidden * config.vocab_size)
    next_sentence = 2 * batch * (hidden * hidden + 2 * hidden)
    return 3 * (encoder_forward(config, batch, length) + masked_lm + next_sentence)


def classification_step(config, batch, length, num_labels):
    """FLOPs of a training step of the encoder, pooler and `num_labels`-way output layer."""
    hidden = config.hidden_size
    head = 2 * batch * (hidden * hidden + hidden * num_labels)
    return 3 * (encoder_forward(config, batch, length) + head)
