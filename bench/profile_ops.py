"""Where the time of a forward pass or a training step goes: TensorFlow profiler time per op type.

Runs one of three pieces of work a few times under `tf.profiler`, reads the
trace it writes (the XPlane protobuf that TensorBoard's profile plugin
shows) and sums the time of every executed op by op type:

* `forward`: `BertEncoder` inference, batch 32 x seq 128, random ids;
* `pretraining`: one `Trainer.train_steps` step of `BertPretrainer` (MLM on
  20 gathered positions + NSP, AdamW, clip 1.0, dropout on) on real records;
* `finetune`: the same loop over a sequence classifier of MiniLM size
  (L6, H384, 12 heads), batch 32 x seq 128, 2 labels.

Times are summed over the threads that ran the ops, so they add up to more
than the wall clock on 2 cores; the shares are what matter. XLA-compiled
work (the fused element-wise passes of CPU inference, or the whole model
with `--jit_compile`) appears as XLA:CPU's kernels, named after the HLO
instruction each one runs ("XLA add_multiply_fusion"), summed over every
thread that ran a share of one. `--mixed_precision` builds the
model under that Keras policy (`mixed_bfloat16`: bfloat16 matmuls), and
`mixed_float16` adds the runners' dynamic loss scaling.

    TF_CPP_MIN_LOG_LEVEL=2 .venv/bin/python bench/profile_ops.py --work=pretraining --size=mini
"""

import pathlib
import sys
import tempfile
import time

from shared_data import GOLDEN_RECORDS as RECORDS, require

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

from absl import app, flags  # noqa: E402
import numpy as np  # noqa: E402
import bert_tf  # noqa: E402,F401  (before TensorFlow: oneDNN on, as for the runners)
import tensorflow as tf  # noqa: E402

from bert_tf.config import NAMED_SIZES, BertConfig  # noqa: E402
from bert_tf.data import readers  # noqa: E402
from bert_tf.modeling import BertEncoder  # noqa: E402
from bert_tf.modeling.classifier import build_classifier  # noqa: E402
from bert_tf.modeling.pretrainer import BertPretrainer  # noqa: E402
from bert_tf.tasks.losses import classification_objective  # noqa: E402
from bert_tf.tasks.pretraining_objective import pretraining_objective  # noqa: E402
from bert_tf.training import precision  # noqa: E402
from bert_tf.training.optimization import create_optimizer  # noqa: E402
from bert_tf.training.trainer import Trainer  # noqa: E402
from trace_ops import profiled_op_times  # noqa: E402

MINILM = BertConfig(vocab_size=30522, hidden_size=384, num_hidden_layers=6,
                    num_attention_heads=12, intermediate_size=1536)

FLAGS = flags.FLAGS
flags.DEFINE_enum("work", "pretraining", ["forward", "pretraining", "finetune"], "What to profile.")
flags.DEFINE_enum("size", "mini", list(NAMED_SIZES), "Named size for forward and pretraining "
                  "(finetune: MiniLM).")
flags.DEFINE_bool("jit_compile", False, "XLA-compile the model.")
flags.DEFINE_enum("mixed_precision", "float32", list(precision.POLICIES),
                  "The Keras dtype policy the model is built under.")
flags.DEFINE_integer("steps", 3, "Profiled calls (after two untimed ones).", lower_bound=1)
flags.DEFINE_integer("top", 20, "Op types to list.", lower_bound=1)


def random_batch(rng, labels=False):
    batch = {"input_ids": rng.integers(1, 30000, (32, 128)).astype("int32"),
             "input_mask": np.ones((32, 128), "int32"),
             "segment_ids": np.zeros((32, 128), "int32")}
    if labels:
        batch["label_ids"] = rng.integers(0, 2, (32,)).astype("int32")
    return batch


def training_call(model, objective, batch):
    """A no-argument call of one `Trainer.train_steps` step on `batch`, repeated."""
    strategy = tf.distribute.get_strategy()
    optimizer = create_optimizer(1e-4, 10000, 100,
                                 loss_scale=precision.needs_loss_scaling(FLAGS.mixed_precision))
    trainer = Trainer(model, optimizer, objective, strategy,
                      tempfile.mkdtemp(), global_batch_size=32, jit_compile=FLAGS.jit_compile)
    iterator = iter(strategy.distribute_datasets_from_function(
        lambda context: tf.data.Dataset.from_tensors(batch).repeat()))
    one = tf.constant(1)
    return lambda: trainer.train_steps(iterator, one)[1].numpy()


def work_call():
    rng = np.random.default_rng(0)
    if FLAGS.work == "forward":
        encoder = BertEncoder(BertConfig.named(FLAGS.size))
        forward = tf.function(lambda x: encoder(x, training=False)["sequence_output"],
                              jit_compile=FLAGS.jit_compile)
        batch = random_batch(rng)
        return lambda: forward(batch).numpy()
    if FLAGS.work == "pretraining":
        require(RECORDS)
        dataset = readers.pretraining_dataset(str(RECORDS), 128, 20, 32, is_training=False)
        batch = next(iter(dataset.repeat()))
        return training_call(BertPretrainer(BertConfig.named(FLAGS.size)),
                             pretraining_objective(), batch)
    return training_call(build_classifier(MINILM, 2), classification_objective(),
                         random_batch(rng, labels=True))


def main(argv):
    del argv
    with precision.dtype_policy(FLAGS.mixed_precision):
        call = work_call()
    call(), call()
    start = time.perf_counter()
    for _ in range(FLAGS.steps):
        call()
    wall = (time.perf_counter() - start) / FLAGS.steps
    times = profiled_op_times(call, FLAGS.steps)
    total = sum(times.values())
    size = "MiniLM" if FLAGS.work == "finetune" else FLAGS.size
    print(f"{FLAGS.work}, {size}, {FLAGS.mixed_precision}, "
          f"XLA {'on' if FLAGS.jit_compile else 'off'}: "
          f"{1000 * wall:.0f} ms per call unprofiled; op time {total / FLAGS.steps:.0f} ms "
          "per call, summed over threads\n")
    print("| op type | ms per call | share |")
    print("|---|---:|---:|")
    for op_type, milliseconds in times.most_common(FLAGS.top):
        print(f"| {op_type} | {milliseconds / FLAGS.steps:.1f} | {milliseconds / total:.1%} |")


if __name__ == "__main__":
    app.run(main)
