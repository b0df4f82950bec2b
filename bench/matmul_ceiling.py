"""The fastest a forward pass or a pretraining step can be: its matmuls and what it must do.

A BERT forward pass is mostly matmuls (`matmul_flops`), and the matmuls are
not all of the square 2048 x 2048 kind that `matmul_peak` measures: a Mini
model multiplies 4096 x 256 by 256 x 256. This bench times TensorFlow's
matmul (`tf.matmul` in a `tf.function`: oneDNN) on each of the work's own
matmul shapes for a batch, round robin, and adds up what one pass or step
takes at those median rates: no implementation that runs these kernels
can be faster, since everything else only adds time.

* `--work=forward`: the encoder's dense layers (Q, K, V and attention
  output; feed-forward in and out) and the attention's batched matmuls
  (scores and their use). Left out: softmax, LayerNorm, GELU, bias adds,
  embedding look-ups.
* `--work=pretraining`: the pretraining step of `pretraining_speed.py`
  (batch x seq, masked LM on `--predictions` positions per sequence, NSP):
  those matmuls and the masked-LM head's, each with the two matmuls of its
  gradient in the layouts TensorFlow's gradient uses
  (`matmul_flops.gradients`). Then the pieces that every implementation
  of the step runs too, each timed alone with and without XLA and counted
  at the faster: the AdamW update of every weight with the clipping to
  global norm 1.0 (`create_optimizer`'s recipe on `BertPretrainer`'s
  weights); the masked-LM softmax cross-entropy over the vocabulary and its
  gradient; Philox random bits for every dropout decision (16 per
  decision, two per 32-bit word, as few as a rate of 0.1 needs to 1e-5);
  the attention softmax, the feed-forward activation, LayerNorm (after
  the embeddings and twice per layer) and the dropout masks' use (scaling
  the kept elements, zeroing the others), each forward and backward, on
  all layers at once. Left out: bias and residual adds, the gradients of LayerNorm's
  scale and shift, embedding look-ups and their gradient, the gathers.

The last lines give the ceiling in sequences/s and as a share of the peak,
to set beside `encoder_forward.py`'s or `pretraining_speed.py`'s table from
the same machine.

Example (a quick run):

    TF_CPP_MIN_LOG_LEVEL=2 .venv/bin/python bench/matmul_ceiling.py \
        --sizes=mini --iterations=3 [--work=pretraining]
"""

import os
import pathlib
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

from absl import app, flags  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from bert_tf.config import NAMED_SIZES, BertConfig  # noqa: E402
from bert_tf.modeling.activations import get_activation  # noqa: E402
from bert_tf.modeling.pretrainer import BertPretrainer  # noqa: E402
from bert_tf.training.optimization import create_optimizer  # noqa: E402
import matmul_flops  # noqa: E402
from matmul_peak import define_peak_flags  # noqa: E402
from round_robin import (define_choices_flag, define_threads_flag,  # noqa: E402
                         time_round_robin, use_threads)
from timing_table import BenchRun, TimedRow, markdown_table, summarize  # noqa: E402

FLAGS = flags.FLAGS
flags.DEFINE_enum("work", "forward", ["forward", "pretraining"],
                  "The encoder forward pass, or a whole pretraining step.")
define_choices_flag("sizes", ["mini", "small", "base"], NAMED_SIZES, "Named model sizes.")
flags.DEFINE_integer("batch_size", 32, "Sequences per pass or step.", lower_bound=1)
flags.DEFINE_integer("seq_length", 128, "Tokens per sequence.", lower_bound=1, upper_bound=512)
flags.DEFINE_integer("predictions", 20, "Masked-LM positions per sequence (pretraining).",
                     lower_bound=1)
flags.DEFINE_integer("iterations", 20, "Timed calls per piece.", lower_bound=1)
flags.DEFINE_integer("warmup", 2, "Untimed calls first.", lower_bound=0)
define_threads_flag()
define_peak_flags()


def _random(shape):
    return tf.constant(np.random.default_rng(0).standard_normal(shape, dtype=np.float32))


def _matmul_call(matmul):
    """A call running the `matmul.calls` products one after the other.

    Each product waits for the one before (a control dependency on the
    running sum of one element of each), so that they run in turn, not side
    by side, and the call's fixed cost is shared by all.
    """
    a, b = _random(matmul.a), _random(matmul.b)

    @tf.function(autograph=False)
    def products(a, b):
        total = tf.zeros([])
        for _ in range(matmul.calls):
            with tf.control_dependencies([total]):
                total += tf.matmul(a, b, transpose_a=matmul.transpose_a,
                                   transpose_b=matmul.transpose_b)[..., 0, 0]
        return total

    return lambda: products(a, b).numpy()


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

    return _with_and_without_xla(update, [_random(v.shape) for v in variables])


def _forward_and_backward(function, shape):
    """`function` on a `shape` tensor and its gradient, both written out."""
    inputs, upstream = _random(shape), _random(shape)
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
    logits = _random((rows, config.vocab_size))
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
    scale, shift = _random(rows.shape[-1:]), _random(rows.shape[-1:])
    return (rows - mean) * tf.math.rsqrt(variance + 1e-12) * scale + shift


def _masked(elements, rate):
    """Dropout's use of a drawn mask: kept elements scaled by `1 / (1 - rate)`, others 0."""
    keep = tf.constant(np.random.default_rng(2).random(elements) >= rate)
    return lambda inputs: tf.where(keep, inputs / (1 - rate), tf.zeros_like(inputs))


def _step_pieces(config, batch, length, predictions):
    """`{(what, XLA?): call}` of what a pretraining step needs besides its matmuls."""
    layers, heads = config.num_hidden_layers, config.num_attention_heads
    tokens = batch * length
    # Dropout after the embeddings, on the attention probabilities and after
    # each layer's attention output and feed-forward output.
    dropped = tokens * config.hidden_size * (1 + 2 * layers) + layers * batch * heads * length ** 2
    pieces = {
        "AdamW update with clipping": _update(config),
        "masked-LM softmax cross-entropy": _cross_entropy(config, batch * predictions),
        "dropout random bits": _dropout_bits(dropped),
        "attention softmax": _forward_and_backward(
            lambda scores: tf.nn.softmax(scores), (layers * batch * heads, length, length)),
        "feed-forward activation": _forward_and_backward(
            get_activation(config.hidden_act), (layers * tokens, config.intermediate_size)),
        "LayerNorm": _forward_and_backward(
            _layer_norm, (tokens * (1 + 2 * layers), config.hidden_size)),
        "dropout masks' use": _forward_and_backward(
            _masked(dropped, config.hidden_dropout_prob), (dropped,)),
    }
    return {(what, jit): call for what, calls in pieces.items() for jit, call in calls.items()}


def _pieces(size):
    """`{what: Matmul}` and `{(what, XLA?): call}` of the work's other pieces, for one size."""
    config, batch, length = BertConfig.named(size), FLAGS.batch_size, FLAGS.seq_length
    if FLAGS.work == "forward":
        return matmul_flops.forward_matmuls(config, batch, length), {}
    return (matmul_flops.pretraining_matmuls(config, batch, length, FLAGS.predictions),
            _step_pieces(config, batch, length, FLAGS.predictions))


def main(argv):
    del argv
    use_threads(FLAGS.threads)
    rows, ceilings = [], []
    with BenchRun(FLAGS.threads, ["float32"], FLAGS.peak_sizes) as run:
        for size in FLAGS.sizes:
            matmuls, others = _pieces(size)
            runners = {**{name: _matmul_call(m) for name, m in matmuls.items()}, **others}
            samples, _ = time_round_robin(runners, FLAGS.warmup, FLAGS.iterations)
            medians = {key: summarize(samples[key], FLAGS.threads).median for key in runners}
            for name, m in matmuls.items():
                transposed = "".join(f" ({side}^T)" for side, flag in
                                     (("a", m.transpose_a), ("b", m.transpose_b)) if flag)
                rows.append(TimedRow((size, name, f"{m.a} x {m.b}{transposed}", str(m.calls)),
                                     samples[name], 1, m.flops))
            for (name, jit) in others:
                rows.append(TimedRow((size, f"{name}, {'XLA' if jit else 'no XLA'}", "-", "1"),
                                     samples[(name, jit)], 1))
            matmul_seconds = sum(medians[name] for name in matmuls)
            fastest_others = {name: min(medians[(name, jit)] for jit in (False, True))
                              for name, _ in others}
            ceilings.append((size, matmul_seconds, fastest_others,
                             sum(m.flops for m in matmuls.values())))
    batch = FLAGS.batch_size
    print(run.header(f"TensorFlow matmuls of one {FLAGS.work} "
                     f"{'pass' if FLAGS.work == 'forward' else 'step'}, batch {batch} x seq "
                     f"{FLAGS.seq_length}; a call runs a matmul as many times as one pass or "
                     f"step does, in turn"))
    print(markdown_table(("size", "piece", "shapes", "per pass"), rows, FLAGS.threads,
                         run.peaks, unit="call"))
    peak = run.peaks["float32"].gflops
    for size, matmul_seconds, fastest_others, flops in ceilings:
        seconds = matmul_seconds + sum(fastest_others.values())
        added = "".join(f" + {name} {1e3 * others:.0f} ms" for name, others in
                        fastest_others.items())
        print(f"# {size}: the matmuls alone take {1e3 * matmul_seconds:.0f} ms{added} = "
              f"{1e3 * seconds:.0f} ms: at most {batch / seconds:.1f} seq/s, "
              f"{100 * flops / seconds / 1e9 / peak:.0f}% of the peak")


if __name__ == "__main__":
    app.run(main)
