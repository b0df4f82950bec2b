"""The fastest a forward pass or a pretraining step can be: its matmuls and what it must do.

A BERT forward pass is mostly matmuls (`matmul_flops`), and the matmuls are
not all of the square 2048 x 2048 kind that `matmul_peak` measures: a Mini
model multiplies 4096 x 256 by 256 x 256. This bench times each of the
work's own matmul shapes for a batch two ways, round robin: TensorFlow's
matmul (`tf.matmul` in a `tf.function`: oneDNN) and XLA's dot (the same
in a `jit_compile` function: XLA:CPU's own kernel, which the XLA-compiled
passes run). It adds up what one pass or step takes with each shape at
the faster of the two medians: no implementation that runs these kernels
can be faster, since everything else only adds time.

* `--work=forward`: the encoder's dense layers (Q, K, V and attention
  output; feed-forward in and out) and the attention's batched matmuls
  (scores and their use). Left out: softmax, LayerNorm, GELU, bias adds,
  embedding look-ups.
* `--work=pretraining`: the pretraining step of `pretraining_speed.py`
  (batch x seq, masked LM on `--predictions` positions per sequence, NSP):
  those matmuls and the masked-LM head's, each with the two matmuls of its
  gradient in the layouts TensorFlow's gradient uses
  (`matmul_flops.gradients`). The last block counts only at the
  predictions and [CLS]: no loss reads its other rows, and ours skips them
  (`BertEncoder.encode_at`). Then the pieces that every implementation
  of the step runs too (`step_pieces`: the clipped AdamW update, the
  masked-LM cross-entropy, dropout's random bits and masks, the attention
  softmax, the activation, LayerNorm), each timed alone with and without
  XLA and counted at the faster. Left out: bias and residual adds, the
  gradients of LayerNorm's scale and shift, embedding look-ups and their
  gradient, the gathers.

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
import bert_tf  # noqa: E402,F401  (before TensorFlow: oneDNN on, as for the runners)
import tensorflow as tf  # noqa: E402

from bert_tf.config import NAMED_SIZES, BertConfig  # noqa: E402
import matmul_flops  # noqa: E402
from matmul_peak import define_peak_flags  # noqa: E402
from round_robin import (define_choices_flag, define_threads_flag,  # noqa: E402
                         time_round_robin, use_threads)
from step_pieces import normal_constant, pretraining_step_pieces  # noqa: E402
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


def _matmul_call(matmul, jit_compile):
    """A call running the `matmul.calls` products one after the other.

    TensorFlow's: each product waits for the one before (a control
    dependency on the running sum of one element of each), so that they
    run in turn, not side by side, and the call's fixed cost is shared by
    all. XLA's: one compiled product per Python call, `matmul.calls`
    calls (inside one compiled function XLA would compute only the element
    the sum reads); each call's fixed cost, tens of microseconds, counts.
    """
    a, b = normal_constant(matmul.a), normal_constant(matmul.b)

    def product(a, b):
        return tf.matmul(a, b, transpose_a=matmul.transpose_a, transpose_b=matmul.transpose_b)

    if jit_compile:
        compiled = tf.function(product, jit_compile=True, autograph=False)

        def call():
            for _ in range(matmul.calls):
                result = compiled(a, b)
            return result.shape

        return call

    @tf.function(autograph=False)
    def products(a, b):
        total = tf.zeros([])
        for _ in range(matmul.calls):
            with tf.control_dependencies([total]):
                total += product(a, b)[..., 0, 0]
        return total

    return lambda: products(a, b).numpy()


def _pieces(size):
    """`{what: Matmul}` and `{(what, XLA?): call}` of the work's other pieces, for one size."""
    config, batch, length = BertConfig.named(size), FLAGS.batch_size, FLAGS.seq_length
    if FLAGS.work == "forward":
        return matmul_flops.forward_matmuls(config, batch, length), {}
    last_block_rows = matmul_flops.our_last_block_rows(FLAGS.predictions)
    return (matmul_flops.pretraining_matmuls(config, batch, length, FLAGS.predictions,
                                             last_block_rows),
            pretraining_step_pieces(config, batch, length, FLAGS.predictions))


def main(argv):
    del argv
    use_threads(FLAGS.threads)
    rows, ceilings = [], []
    with BenchRun(FLAGS.threads, ["float32"], FLAGS.peak_sizes) as run:
        for size in FLAGS.sizes:
            matmuls, others = _pieces(size)
            runners = {**{(name, jit): _matmul_call(m, jit) for name, m in matmuls.items()
                          for jit in (False, True)}, **others}
            samples, _ = time_round_robin(runners, FLAGS.warmup, FLAGS.iterations)
            medians = {key: summarize(samples[key], FLAGS.threads).median for key in runners}
            for name, m in matmuls.items():
                transposed = "".join(f" ({side}^T)" for side, flag in
                                     (("a", m.transpose_a), ("b", m.transpose_b)) if flag)
                rows += [TimedRow((size, f"{name}, {'XLA' if jit else 'TensorFlow'}",
                                   f"{m.a} x {m.b}{transposed}", str(m.calls)),
                                  samples[(name, jit)], 1, m.flops) for jit in (False, True)]
            for (name, jit) in others:
                rows.append(TimedRow((size, f"{name}, {'XLA' if jit else 'no XLA'}", "-", "1"),
                                     samples[(name, jit)], 1))
            fastest = {name: min(medians[(name, jit)] for jit in (False, True))
                       for name in {name for name, _ in runners}}
            matmul_seconds = sum(fastest[name] for name in matmuls)
            fastest_others = {name: fastest[name] for name, _ in others}
            ceilings.append((size, matmul_seconds, fastest_others,
                             sum(m.flops for m in matmuls.values())))
    batch = FLAGS.batch_size
    print(run.header(f"the matmuls of one {FLAGS.work} "
                     f"{'pass' if FLAGS.work == 'forward' else 'step'}, batch {batch} x seq "
                     f"{FLAGS.seq_length}; a call runs a matmul as many times as one pass or "
                     f"step does, in turn; each shape counts at the faster of TensorFlow "
                     f"and XLA"))
    print(markdown_table(("size", "piece", "shapes", "per pass"), rows, FLAGS.threads,
                         run.peaks, unit="call"))
    peak = run.peaks["float32"].gflops
    for size, matmul_seconds, fastest_others, flops in ceilings:
        seconds = matmul_seconds + sum(fastest_others.values())
        added = "".join(f" + {name} {1e3 * others:.0f} ms" for name, others in
                        fastest_others.items())
        total = f"{added} = {1e3 * seconds:.0f} ms" if added else ""
        print(f"# {size}: the matmuls alone take {1e3 * matmul_seconds:.0f} ms{total}: "
              f"at most {batch / seconds:.1f} seq/s, "
              f"{100 * flops / seconds / 1e9 / peak:.0f}% of the peak")


if __name__ == "__main__":
    app.run(main)
