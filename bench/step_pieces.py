"""What a pretraining step runs besides its matmuls, each piece timed alone.

`matmul_ceiling.py --work=pretraining` adds these to the step's matmuls:
work every implementation of the step must do, whatever it fuses. Each
piece is a call of a `tf.function`, without and with `jit_compile` (the
ceiling counts the faster), that writes what it computes to variables, as
a real step hands it on, so that XLA cannot drop any of it:

* the AdamW update of every `BertPretrainer` weight with the clipping to
  global norm 1.0 (`create_optimizer`'s recipe);
* the masked-LM softmax cross-entropy over the vocabulary and its gradient;
* Philox random bits for every dropout decision, 16 per decision (as few as
  a rate of 0.1 needs to 1e-5);
* forward and backward of the attention softmax, the feed-forward
  activation, LayerNorm (after the embeddings and twice per layer) and the
  dropout masks' use, each on all layers at once; the last layer's only
  at the predictions and [CLS], since no loss reads its other rows (as
  `BertPretrainer` computes it).

Example (a tiny model; each call runs its piece once):

>>> from bert_tf.config import BertConfig
>>> pieces = pretraining_step_pieces(BertConfig.named("tiny", vocab_size=50), 2, 8, 3)
>>> sorted({what for what, _ in pieces})  # doctest: +NORMALIZE_WHITESPACE
['AdamW update with clipping', 'LayerNorm', 'attention softmax', "dropout masks' use",
 'dropout random bits', 'feed-forward activation', 'masked-LM softmax cross-entropy']
>>> int(pieces[("LayerNorm", True)]()), int(pieces[("LayerNorm", False)]())
(0, 0)
"""

import numpy as np
import tensorflow as tf

from bert_tf.modeling.activations import get_activation
from bert_tf.modeling.pretrainer import BertPretrainer
from bert_tf.training.optimization import create_optimizer
from matmul_flops import our_last_block_rows


def normal_constant(shape):
    """A float32 constant of standard-normal values (seed 0)."""
    return tf.constant(np.random.default_rng(0).standard_normal(shape, dtype=np.float32))


def _with_and_without_xla(function, *args):
    """`{XLA?: call}` of `function(*args)` in a `tf.function` without and with `jit_compile`.

    `function` writes what it computes to variables (as a real step hands
    it on), so XLA cannot drop any of it.
    """
    calls = {}
    for jit in (False, True):
        compiled = tf.function(function, jit_compile=jit, autograph=False)
        calls[jit] = lambda compiled=compiled: compiled(*args).numpy()
    return calls


def _update(config):
    """The clipped AdamW update of all of `BertPretrainer(config)`'s weights."""
    model = BertPretrainer(config)
    model({"input_ids": np.zeros((1, 8), "int32"), "input_mask": np.ones((1, 8), "int32"),
           "segment_ids": np.zeros((1, 8), "int32"),
           "masked_lm_positions": np.zeros((1, 2), "int32")})
    variables = model.trainable_variables
    optimizer = create_optimizer(1e-4, 10000, 100)
    optimizer.build(variables)

    def update(grads):
        clipped, _ = tf.clip_by_global_norm(grads, 1.0)
        optimizer.apply(clipped, variables)
        return optimizer.iterations

    return _with_and_without_xla(update, [normal_constant(v.shape) for v in variables])


def _forward_and_backward(function, shape):
    """`function` on a `shape` tensor and its gradient, both written out."""
    inputs, upstream = normal_constant(shape), normal_constant(shape)
    outputs, gradients = tf.Variable(tf.zeros(shape)), tf.Variable(tf.zeros(shape))

    def both(inputs):
        with tf.GradientTape() as tape:
            tape.watch(inputs)
            result = function(inputs)
        outputs.assign(result)
        gradients.assign(tape.gradient(result, inputs, output_gradients=upstream))
        return tf.constant(0)

    return _with_and_without_xla(both, inputs)


def _cross_entropy(config, rows):
    """The masked-LM loss over the vocabulary on `rows` rows, and its gradient (written out)."""
    logits = normal_constant((rows, config.vocab_size))
    labels = tf.constant(np.random.default_rng(1).integers(0, config.vocab_size, rows, "int32"))
    gradients = tf.Variable(tf.zeros(logits.shape))

    def loss_and_gradient(logits):
        with tf.GradientTape() as tape:
            tape.watch(logits)
            loss = tf.reduce_sum(tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits))
        gradients.assign(tape.gradient(loss, logits))
        return loss

    return _with_and_without_xla(loss_and_gradient, logits)


def _dropout_bits(elements):
    """Philox bits for `elements` dropout decisions, 16 each (two per 32-bit word), written out.

    Philox, not the generator TensorFlow picks by itself: under XLA on a CPU
    that one is about 100x slower (`bert_tf.modeling.dropout`).
    """
    words = tf.Variable(tf.zeros([(elements + 1) // 2], tf.uint32))
    seed = tf.constant([1, 2])

    def draw(seed):
        words.assign(tf.random.stateless_uniform(words.shape, seed, minval=None, maxval=None,
                                                 dtype=tf.uint32, alg="philox"))
        return tf.constant(0)

    return _with_and_without_xla(draw, seed)


def _layer_norm(rows):
    """LayerNorm over the last axis (the scale and shift as constants)."""
    mean, variance = tf.nn.moments(rows, axes=[-1], keepdims=True)
    scale, shift = normal_constant(rows.shape[-1:]), normal_constant(rows.shape[-1:])
    return (rows - mean) * tf.math.rsqrt(variance + 1e-12) * scale + shift


def _masked(elements, rate):
    """Dropout's use of a drawn mask: kept elements scaled by `1 / (1 - rate)`, others 0."""
    keep = tf.constant(np.random.default_rng(2).random(elements) >= rate)
    return lambda inputs: tf.where(keep, inputs / (1 - rate), tf.zeros_like(inputs))


def pretraining_step_pieces(config, batch, length, predictions):
    """`{(what, XLA?): call}` of what a pretraining step needs besides its matmuls."""
    layers, heads = config.num_hidden_layers, config.num_attention_heads
    hidden = config.hidden_size
    tokens = batch * length
    # Query rows of all layers: every token but in the last, predictions and [CLS].
    rows = (layers - 1) * tokens + batch * our_last_block_rows(predictions)
    # Dropout after the embeddings, on the attention probabilities and after
    # each layer's attention output and feed-forward output.
    dropped = tokens * hidden + 2 * rows * hidden + rows * heads * length
    pieces = {
        "AdamW update with clipping": _update(config),
        "masked-LM softmax cross-entropy": _cross_entropy(config, batch * predictions),
        "dropout random bits": _dropout_bits(dropped),
        "attention softmax": _forward_and_backward(
            lambda scores: tf.nn.softmax(scores), (rows * heads, length)),
        "feed-forward activation": _forward_and_backward(
            get_activation(config.hidden_act), (rows, config.intermediate_size)),
        "LayerNorm": _forward_and_backward(_layer_norm, (tokens + 2 * rows, hidden)),
        "dropout masks' use": _forward_and_backward(
            _masked(dropped, config.hidden_dropout_prob), (dropped,)),
    }
    return {(what, jit): call for what, calls in pieces.items() for jit, call in calls.items()}
