"""The fastest an encoder forward pass can be on this machine: its matmuls alone.

A BERT forward pass is mostly matmuls (`matmul_flops`), and the matmuls are
not all of the square 2048 x 2048 kind that `matmul_peak` measures: a Mini
model multiplies 4096 x 256 by 256 x 256. This bench times TensorFlow's
matmul (`tf.matmul` in a `tf.function`: oneDNN) on each of the encoder's own
matmul shapes for a batch, the dense layers (Q, K, V and attention output;
feed-forward in and out) and the attention's batched matmuls (scores and
their use), round robin. It then adds up what one forward pass's matmuls
take at those median rates: no implementation that runs these kernels can
do the forward pass faster, since everything else (softmax, LayerNorm,
GELU, bias adds, embedding look-ups) only adds time. The last line gives
that ceiling in sequences/s and as a share of the peak, to set beside
`encoder_forward.py`'s table from the same machine.

Example (a quick run):

    TF_CPP_MIN_LOG_LEVEL=2 .venv/bin/python bench/matmul_ceiling.py \
        --sizes=mini --iterations=3
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
import matmul_flops  # noqa: E402
from matmul_peak import define_peak_flags  # noqa: E402
from round_robin import (define_choices_flag, define_threads_flag,  # noqa: E402
                         time_round_robin, use_threads)
from timing_table import BenchRun, TimedRow, markdown_table, summarize  # noqa: E402

FLAGS = flags.FLAGS
define_choices_flag("sizes", ["mini", "small", "base"], NAMED_SIZES, "Named model sizes.")
flags.DEFINE_integer("batch_size", 32, "Sequences per forward pass.", lower_bound=1)
flags.DEFINE_integer("seq_length", 128, "Tokens per sequence.", lower_bound=1, upper_bound=512)
flags.DEFINE_integer("iterations", 20, "Timed calls per shape.", lower_bound=1)
flags.DEFINE_integer("warmup", 2, "Untimed calls first.", lower_bound=0)
define_threads_flag()
define_peak_flags()


def _matmul_call(a_shape, b_shape, repeats):
    """A call running `repeats` matmuls of these shapes one after the other.

    Each matmul waits for the one before (a control dependency on the
    running sum of one element of each product), so that they run in turn,
    not side by side, and the call's fixed cost is shared by all.
    """
    rng = np.random.default_rng(0)
    a, b = (tf.constant(rng.standard_normal(shape, dtype=np.float32))
            for shape in (a_shape, b_shape))

    @tf.function(autograph=False)
    def products(a, b):
        total = tf.zeros([])
        for _ in range(repeats):
            with tf.control_dependencies([total]):
                total += tf.matmul(a, b)[..., 0, 0]
        return total

    return lambda: products(a, b).numpy()


def main(argv):
    del argv
    use_threads(FLAGS.threads)
    batch, length = FLAGS.batch_size, FLAGS.seq_length
    rows, ceilings = [], []
    with BenchRun(FLAGS.threads, ["float32"], FLAGS.peak_sizes) as run:
        for size in FLAGS.sizes:
            shapes = matmul_flops.forward_matmuls(BertConfig.named(size), batch, length)
            runners = {name: _matmul_call(a, b, calls) for name, (a, b, calls) in shapes.items()}
            samples, _ = time_round_robin(runners, FLAGS.warmup, FLAGS.iterations)
            seconds = 0.0
            for name, (a, b, calls) in shapes.items():
                rows.append(TimedRow((size, name, f"{a} x {b}", str(calls)), samples[name], 1,
                                     calls * matmul_flops.matmul(a, b)))
                seconds += summarize(samples[name], FLAGS.threads).median
            ceilings.append((size, seconds))
    print(run.header(f"TensorFlow matmuls of one encoder forward pass, batch {batch} x seq "
                     f"{length}; a call runs the matmul as many times as one pass does, in turn"))
    print(markdown_table(("size", "matmul", "shapes", "per pass"), rows, FLAGS.threads,
                         run.peaks, unit="call"))
    peak = run.peaks["float32"].gflops
    for size, seconds in ceilings:
        flops = matmul_flops.encoder_forward(BertConfig.named(size), batch, length)
        print(f"# {size}: the forward pass's matmuls alone take {1e3 * seconds:.0f} ms: at most "
              f"{batch / seconds:.1f} seq/s, {100 * flops / seconds / 1e9 / peak:.0f}% of the peak")


if __name__ == "__main__":
    app.run(main)
