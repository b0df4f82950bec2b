"""Matmul FLOPs of the BERT work the benchmarks time, for their GFLOP/s and % peak.

Only matmuls count (2 FLOPs per multiply-add); embedding look-ups,
element-wise ops, softmax, LayerNorm and the optimizer update do not.

* Encoder forward, per layer: `2*B*T*(4*H^2 + 2*H*I)` for the Q, K, V,
  attention-output and two feed-forward dense layers, plus `2*2*B*T^2*H` for
  the attention scores `Q.K^T` and their use `P.V`.
* A training step is 3x the forward matmuls of everything trained: the
  backward pass takes two matmuls per forward one (the gradients of its
  input and of its weight, `gradients`). The heads trained with the encoder:
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
from typing import NamedTuple, Tuple


class Matmul(NamedTuple):
    """`calls` products `a @ b` of these shapes, batched over leading dimensions.

    `transpose_a` / `transpose_b`: the operand enters transposed in its last
    two dimensions, as `tf.matmul`'s flags of the same names (the layouts
    gradients come in).

    >>> Matmul((2, 3, 4), (2, 4, 5), calls=1).flops
    240
    >>> Matmul((6, 4), (5, 4), calls=3, transpose_b=True).flops
    720
    """

    a: Tuple[int, ...]
    b: Tuple[int, ...]
    calls: int
    transpose_a: bool = False
    transpose_b: bool = False

    @property
    def flops(self):
        """FLOPs of all `calls` products."""
        columns = self.b[-2] if self.transpose_b else self.b[-1]
        return 2 * math.prod(self.a) * columns * self.calls

    @property
    def output(self):
        """Shape of one product."""
        rows = self.a[-1] if self.transpose_a else self.a[-2]
        columns = self.b[-2] if self.transpose_b else self.b[-1]
        return self.a[:-2] + (rows, columns)


def gradients(forward):
    """The two matmuls of `forward`'s backward pass, in the layouts TF's gradient uses.

    For `c = a @ b` with upstream gradient `g` (shaped like `c`): `a`'s
    gradient is `g @ b^T` and `b`'s is `a^T @ g` (`b = w^T`, a weight stored
    transposed: `g^T @ a`). `forward` must not transpose `a`.

    >>> [(m.a, m.b, m.transpose_a, m.transpose_b)
    ...  for m in gradients(Matmul((6, 4), (4, 5), calls=1))]
    [((6, 5), (4, 5), False, True), ((6, 4), (6, 5), True, False)]
    """
    if forward.transpose_a:
        raise ValueError("only products whose first operand is not transposed")
    upstream = forward.output
    if forward.transpose_b:
        return [Matmul(upstream, forward.b, forward.calls),
                Matmul(upstream, forward.a, forward.calls, transpose_a=True)]
    return [Matmul(upstream, forward.b, forward.calls, transpose_b=True),
            Matmul(forward.a, upstream, forward.calls, transpose_a=True)]


def forward_matmuls(config, batch, length, last_block_rows=None):
    """`{what: Matmul}` of the encoder's forward pass on `batch` sequences of `length` tokens.

    The dense layers multiply all `batch * length` token rows at once; the
    attention's products are batched over sequences and heads.
    `last_block_rows`: the last block computes only this many positions
    per sequence (`BertEncoder.encode_at`): its keys and values still come
    from every token, its queries and everything after them from these.

    >>> from bert_tf.config import BertConfig
    >>> shapes = forward_matmuls(BertConfig.named("mini"), 32, 128)
    >>> shapes["q, k, v, attention output"][:3], shapes["attention scores"][:3]
    (((4096, 256), (256, 256), 16), ((128, 128, 64), (128, 64, 128), 4))
    >>> last = forward_matmuls(BertConfig.named("mini"), 32, 128, last_block_rows=21)
    >>> last["last block, attention scores"][:3], last["last block, k, v"][2]
    (((128, 21, 64), (128, 64, 128), 1), 2)
    """
    layers = config.num_hidden_layers
    if last_block_rows is None:
        return _block_matmuls(config, batch, length, length, layers)
    last = _block_matmuls(config, batch, length, last_block_rows, 1)
    return {**_block_matmuls(config, batch, length, length, layers - 1),
            **{f"last block, {what}": matmul for what, matmul in last.items()}}


def _block_matmuls(config, batch, length, query_rows, blocks):
    """`forward_matmuls` of `blocks` blocks whose outputs are wanted at `query_rows` positions."""
    hidden, inner, heads = config.hidden_size, config.intermediate_size, config.num_attention_heads
    head_size, rows, queries = hidden // heads, batch * length, batch * query_rows
    if query_rows == length:
        projections = {"q, k, v, attention output": Matmul((rows, hidden), (hidden, hidden),
                                                           4 * blocks)}
    else:
        projections = {"k, v": Matmul((rows, hidden), (hidden, hidden), 2 * blocks),
                       "q, attention output": Matmul((queries, hidden), (hidden, hidden),
                                                     2 * blocks)}
    return {
        **projections,
        "feed-forward in": Matmul((queries, hidden), (hidden, inner), blocks),
        "feed-forward out": Matmul((queries, inner), (inner, hidden), blocks),
        "attention scores": Matmul((batch * heads, query_rows, head_size),
                                   (batch * heads, head_size, length), blocks),
        "attention use": Matmul((batch * heads, query_rows, length),
                                (batch * heads, length, head_size), blocks),
    }


def pretraining_matmuls(config, batch, length, predictions, last_block_rows=None):
    """`{what: Matmul}` of a pretraining step: forward and backward, encoder and heads.

    The masked-LM head transforms the `predictions` gathered positions per
    sequence and multiplies them by the word-embedding table, stored
    `[vocab, hidden]` (so transposed); the pooler and next-sentence layer
    run on each sequence's first token. `last_block_rows` as for
    `forward_matmuls`.

    >>> from bert_tf.config import BertConfig
    >>> config = BertConfig.named("mini")
    >>> step = pretraining_matmuls(config, 32, 128, 20)
    >>> step["masked-LM output, a's gradient"][:3]
    ((640, 30522), (30522, 256), 1)
    >>> sum(m.flops for m in step.values()) == pretraining_step(config, 32, 128, 20)
    True
    """
    hidden, rows = config.hidden_size, batch * predictions
    forward = dict(forward_matmuls(config, batch, length, last_block_rows), **{
        "masked-LM transform": Matmul((rows, hidden), (hidden, hidden), 1),
        "masked-LM output": Matmul((rows, hidden), (config.vocab_size, hidden), 1,
                                   transpose_b=True),
        "pooler": Matmul((batch, hidden), (hidden, hidden), 1),
        "next sentence": Matmul((batch, hidden), (hidden, 2), 1),
    })
    step = {}
    for what, matmul in forward.items():
        a_gradient, b_gradient = gradients(matmul)
        step.update({what: matmul, f"{what}, a's gradient": a_gradient,
                     f"{what}, b's gradient": b_gradient})
    return step


def encoder_forward(config, batch, length, last_block_rows=None):
    """FLOPs of the encoder layers' matmuls for `batch` sequences of `length` tokens."""
    return sum(m.flops for m in forward_matmuls(config, batch, length, last_block_rows).values())


def pretraining_step(config, batch, length, predictions, last_block_rows=None):
    """FLOPs of a training step: encoder, masked LM on `predictions` positions per sequence, NSP.

    `last_block_rows` as for `forward_matmuls`; `our_pretraining_step`
    counts what `BertPretrainer` computes.
    """
    hidden = config.hidden_size
    masked_lm = 2 * batch * predictions * (hidden * hidden + hidden * config.vocab_size)
    next_sentence = 2 * batch * (hidden * hidden + 2 * hidden)
    encoder = encoder_forward(config, batch, length, last_block_rows)
    return 3 * (encoder + masked_lm + next_sentence)


def our_last_block_rows(predictions):
    """Positions per sequence where `BertPretrainer`'s last block runs: the predictions and [CLS]."""
    return predictions + 1


def our_pretraining_step(config, batch, length, predictions):
    """`pretraining_step` of `BertPretrainer`: its last block runs at the predictions and [CLS].

    >>> from bert_tf.config import BertConfig
    >>> config = BertConfig.named("mini")
    >>> round(our_pretraining_step(config, 32, 128, 20) / pretraining_step(config, 32, 128, 20), 3)
    0.87
    """
    return pretraining_step(config, batch, length, predictions,
                            last_block_rows=our_last_block_rows(predictions))


def classification_step(config, batch, length, num_labels):
    """FLOPs of a training step of the encoder, pooler and `num_labels`-way output layer."""
    hidden = config.hidden_size
    head = 2 * batch * (hidden * hidden + hidden * num_labels)
    return 3 * (encoder_forward(config, batch, length) + head)
