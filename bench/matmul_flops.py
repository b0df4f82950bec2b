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

import math


def forward_matmuls(config, batch, length):
    """`{what: (shape of a, shape of b, calls per forward pass)}` of the encoder's `a @ b`s.

    The dense layers multiply all `batch * length` token rows at once; the
    attention's products are batched over sequences and heads.

    >>> from bert_tf.config import BertConfig
    >>> shapes = forward_matmuls(BertConfig.named("mini"), 32, 128)
    >>> shapes["q, k, v, attention output"], shapes["attention scores"]
    (((4096, 256), (256, 256), 16), ((128, 128, 64), (128, 64, 128), 4))
    """
    hidden, inner, layers = config.hidden_size, config.intermediate_size, config.num_hidden_layers
    heads = config.num_attention_heads
    head_size, rows = hidden // heads, batch * length
    return {
        "q, k, v, attention output": ((rows, hidden), (hidden, hidden), 4 * layers),
        "feed-forward in": ((rows, hidden), (hidden, inner), layers),
        "feed-forward out": ((rows, inner), (inner, hidden), layers),
        "attention scores": ((batch * heads, length, head_size),
                             (batch * heads, head_size, length), layers),
        "attention use": ((batch * heads, length, length),
                          (batch * heads, length, head_size), layers),
    }


def matmul(a_shape, b_shape):
    """FLOPs of one `a @ b` (batched over leading dimensions).

    >>> matmul((2, 3, 4), (2, 4, 5))
    240
    """
    return 2 * math.prod(a_shape) * b_shape[-1]


def encoder_forward(config, batch, length):
    """FLOPs of the encoder layers' matmuls for `batch` sequences of `length` tokens."""
    return sum(calls * matmul(a, b)
               for a, b, calls in forward_matmuls(config, batch, length).values())


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
