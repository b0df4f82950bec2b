"""What a boundary between two training calls costs, and so what calls of about 10 s cost.

`Trainer.train` runs its steps in `tf.function` calls and, between two
calls, reads the metrics back, reports progress, writes TensorBoard
scalars and looks for a stop signal. In one process a call ends after
about `max_call_seconds` (10 s; `training/call_sizes.py`). This bench
times whole `Trainer.train` runs of the same steps in calls of 1 step and
in calls of `--steps_per_call` steps (fixed sizes), round robin in one
process, on a model small enough for the boundary to show. The difference
per boundary is the boundary's cost; divided by 10 s it is what the
time-bounded calls cost a run of any model.

Example:

    TF_CPP_MIN_LOG_LEVEL=2 .venv/bin/python bench/call_boundary.py --steps=200
"""

import os
import pathlib
import statistics
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

from absl import app, flags, logging  # noqa: E402
import bert_tf  # noqa: E402,F401  (before TensorFlow: oneDNN on, as for the runners)
import tensorflow as tf  # noqa: E402

from bert_tf.config import BertConfig  # noqa: E402
from bert_tf.modeling.pretrainer import BertPretrainer  # noqa: E402
from bert_tf.tasks.pretraining_objective import pretraining_objective  # noqa: E402
from bert_tf.training.call_sizes import MAX_CALL_SECONDS  # noqa: E402
from bert_tf.training.optimization import create_optimizer  # noqa: E402
from bert_tf.training.trainer import Trainer  # noqa: E402
from round_robin import define_threads_flag, time_round_robin, use_threads  # noqa: E402
from step_runners import pretraining_batch  # noqa: E402
from timing_table import BenchRun, TimedRow, markdown_table  # noqa: E402

FLAGS = flags.FLAGS
flags.DEFINE_integer("steps", 200, "Training steps per timed run.", lower_bound=2)
flags.DEFINE_integer("steps_per_call", 50, "The long calls' steps.", lower_bound=2)
flags.DEFINE_integer("batch_size", 8, "Sequences per step.", lower_bound=1)
flags.DEFINE_integer("iterations", 5, "Timed runs per call size.", lower_bound=1)
define_threads_flag()


def trainer_run(steps, steps_per_call, batch):
    """A trainer and a function training it `steps` more steps on `batch`, `steps_per_call` a call."""
    trainer = Trainer(BertPretrainer(BertConfig.named("tiny")),
                      create_optimizer(1e-4, 10**9, 100), pretraining_objective(),
                      tf.distribute.get_strategy(), tempfile.mkdtemp(),
                      global_batch_size=len(batch["input_ids"]),
                      steps_per_execution=steps_per_call, max_call_seconds=None,
                      save_checkpoints_steps=10**9)
    dataset = lambda context: tf.data.Dataset.from_tensors(batch).repeat()  # noqa: E731
    return trainer, lambda: trainer.train(dataset, int(trainer.global_step.numpy()) + steps)


def boundary_seconds(medians, steps):
    """Seconds per call boundary, from `{steps per call: median run seconds}` of two sizes.

    >>> round(boundary_seconds({1: 3.0, 50: 1.04}, steps=100), 6)  # 1.96 s over 98 boundaries
    0.02
    """
    (short, short_time), (long, long_time) = sorted(medians.items())
    return (short_time - long_time) / (steps / short - steps / long)


def main(_):
    logging.set_verbosity(logging.WARNING)  # no progress line per call
    use_threads(FLAGS.threads)
    batch = pretraining_batch(FLAGS.batch_size)
    sizes = (1, FLAGS.steps_per_call)
    with BenchRun(FLAGS.threads) as run:
        times, _ = time_round_robin(
            {size: trainer_run(FLAGS.steps, size, batch)[1] for size in sizes},
            warmup=1, iterations=FLAGS.iterations)
    rows = [TimedRow((f"{FLAGS.steps} steps in calls of {size}",), times[size],
                     FLAGS.steps * FLAGS.batch_size) for size in sizes]
    per_boundary = boundary_seconds(
        {size: statistics.median(wall for wall, _ in times[size]) for size in sizes},
        FLAGS.steps)
    print(run.header(f"BERT-tiny pretraining, batch {FLAGS.batch_size} x seq 128, "
                     f"Trainer.train runs of {FLAGS.steps} steps"))
    print(markdown_table(("run",), rows, threads=FLAGS.threads))
    print(f"\none call boundary: {per_boundary * 1e3:.2f} ms (median runs); in calls of "
          f"{MAX_CALL_SECONDS:.0f} s: {per_boundary / MAX_CALL_SECONDS:.4%} of the time")


if __name__ == "__main__":
    app.run(main)
