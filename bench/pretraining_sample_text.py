"""Learning proof: a small BERT memorises the original README's sample_text data.

The original README pretrains on `sample_text.txt` (records made by its
create_pretraining_data.py) and shows masked_lm_accuracy / next_sentence
accuracy near 1 on the same records: the model can fit its data. Here a small
model trained from scratch on the original tool's records
(`../shared/data/golden/sample_text_seed12345_dupe10.tfrecord`, 118 sequences)
by `Trainer` -- the loop of run_pretraining.py -- is evaluated on the same
records every `--eval_every` steps until both accuracies reach `--target`.
It prints the curve, the step and the time at which the target was reached.

Example:

    TF_CPP_MIN_LOG_LEVEL=2 .venv/bin/python bench/pretraining_sample_text.py
"""

import os
import pathlib
import sys
import tempfile
import time

from shared_data import GOLDEN_RECORDS, require

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

from absl import app, flags  # noqa: E402
import bert_tf  # noqa: E402,F401  (before TensorFlow: oneDNN on, as for the runners)
import tensorflow as tf  # noqa: E402

from bert_tf.config import NAMED_SIZES, BertConfig  # noqa: E402
from bert_tf.modeling.pretrainer import BertPretrainer  # noqa: E402
from bert_tf.training.optimization import create_optimizer  # noqa: E402
from bert_tf.tasks.pretraining_inputs import pretraining_dataset_fn  # noqa: E402
from bert_tf.tasks.pretraining_objective import pretraining_objective  # noqa: E402
from bert_tf.training.trainer import Trainer  # noqa: E402


FLAGS = flags.FLAGS
flags.DEFINE_enum("size", "tiny", list(NAMED_SIZES), "Named model size (tiny: L2/H128/A2).")
flags.DEFINE_integer("max_steps", 1500, "Give up after this many steps.")
flags.DEFINE_integer("eval_every", 100, "Steps between evaluations.")
flags.DEFINE_integer("batch_size", 32, "Sequences per step.")
flags.DEFINE_float("learning_rate", 1e-3, "Peak learning rate (warmup: 5% of max_steps).")
flags.DEFINE_float("target", 0.95, "Stop when both accuracies reach this.")
flags.DEFINE_bool("jit_compile", True, "XLA-compile the per-replica step.")


def main(argv):
    del argv
    require(GOLDEN_RECORDS)
    # No dropout: the point is whether the model can fit its data.
    config = BertConfig.named(FLAGS.size, hidden_dropout_prob=0.0,
                              attention_probs_dropout_prob=0.0)
    strategy = tf.distribute.get_strategy()
    trainer = Trainer(BertPretrainer(config),
                      create_optimizer(FLAGS.learning_rate, FLAGS.max_steps,
                                       FLAGS.max_steps // 20),
                      pretraining_objective(), strategy, tempfile.mkdtemp(),
                      global_batch_size=FLAGS.batch_size, steps_per_execution=FLAGS.eval_every,
                      save_checkpoints_steps=FLAGS.max_steps, jit_compile=FLAGS.jit_compile)
    train = pretraining_dataset_fn(str(GOLDEN_RECORDS), 128, 20, FLAGS.batch_size,
                                   is_training=True, seed=0)
    evaluation = pretraining_dataset_fn(str(GOLDEN_RECORDS), 128, 20, 8, is_training=False)
    start, step, results = time.time(), 0, {}
    print(f"# {FLAGS.size} ({config.num_hidden_layers} layers, H={config.hidden_size}), batch "
          f"{FLAGS.batch_size}, lr {FLAGS.learning_rate}, records {GOLDEN_RECORDS}")
    print("| step | seconds | loss | masked_lm_accuracy | next_sentence_accuracy |")
    print("|---:|---:|---:|---:|---:|")
    while step < FLAGS.max_steps:
        step = min(step + FLAGS.eval_every, FLAGS.max_steps)
        trainer.train(train, step)
        results = trainer.evaluate(evaluation)
        print(f"| {step} | {time.time() - start:.0f} | {results['loss']:.4f} | "
              f"{results['masked_lm_accuracy']:.4f} | {results['next_sentence_accuracy']:.4f} |",
              flush=True)
        if min(results["masked_lm_accuracy"], results["next_sentence_accuracy"]) >= FLAGS.target:
            print(f"# reached {FLAGS.target} at step {step} after {time.time() - start:.0f} s")
            return
    print(f"# not reached in {FLAGS.max_steps} steps")


if __name__ == "__main__":
    app.run(main)
