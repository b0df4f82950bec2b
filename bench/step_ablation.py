"""The pretraining step with one of our speed-ups swapped back for Keras' own.

Six pieces of the training step are ours rather than what Keras gives:

* `optimizer`: `training.fused_adamw.FusedAdamW`, Adam's step in one fused
  kernel (Keras': `keras.optimizers.AdamW` with the same recipe);
* `dropout`: `modeling.dropout.Dropout`, 16 Philox bits per decision
  (Keras': `keras.layers.Dropout`);
* `decoder`: `masked_lm_head.tied_decoder_logits`, the tied decoder with
  its gradient written out (Keras': autodiff of
  `ops.matmul(hidden, ops.transpose(table))`, what `ops.einsum` runs);
* `argmax`: the masked-LM accuracy's `tf.argmax` in `tasks.losses.correct`
  (Keras': `keras.ops.argmax`, which first rewrites every -0.0);
* `activation`: the blocks' XLA-fused GELU of training calls
  (`modeling.fused_activation`; Keras': `keras.activations.gelu`);
* `loss`: the masked LM's XLA-compiled cross-entropy
  (`tasks.losses.xla_cross_entropy`; Keras':
  `keras.ops.sparse_categorical_crossentropy`, which `cross_entropy` takes
  below `XLA_CROSS_ENTROPY_MIN_CLASSES`).

This bench times `Trainer.train_steps` on BERT-Mini and -Small pretraining
batches (as `pretraining_speed.py`) with each piece as shipped and with
Keras' in its place (put into our modules while the model is built and its
step traced), round robin in one process, so the two columns of a row
share the machine's state.

Example:

    TF_CPP_MIN_LOG_LEVEL=2 .venv/bin/python bench/step_ablation.py \
        --pieces=optimizer,dropout,decoder,argmax,activation,loss --sizes=mini,small --iterations=8
"""

import contextlib
import os
import pathlib
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

from absl import app, flags  # noqa: E402
import bert_tf  # noqa: E402,F401  (before TensorFlow: oneDNN on, as for the runners)
import keras  # noqa: E402

from bert_tf.config import NAMED_SIZES, BertConfig  # noqa: E402
from bert_tf.modeling import (activations, attention, embeddings, heads,  # noqa: E402
                              masked_lm_head, token_dense, transformer_block)
from bert_tf.modeling.pretrainer import BertPretrainer  # noqa: E402
from bert_tf.tasks import losses  # noqa: E402
from bert_tf.tasks import pretraining_objective as objective_module  # noqa: E402
import matmul_flops  # noqa: E402
from matmul_peak import define_peak_flags  # noqa: E402
from round_robin import (define_choices_flag, define_threads_flag,  # noqa: E402
                         time_round_robin, use_threads)
from step_runners import (PREDICTIONS, SEQ_LENGTH, keras_adamw,  # noqa: E402
                          pretraining_batch, pretraining_step)
from timing_table import BenchRun, TimedRow, markdown_table  # noqa: E402

PIECES = ("optimizer", "dropout", "decoder", "argmax", "activation", "loss")
FLAGS = flags.FLAGS
define_choices_flag("pieces", PIECES, PIECES, "Which of our pieces to swap for Keras' own.")
define_choices_flag("sizes", ["mini", "small"], NAMED_SIZES, "Named model sizes.")
flags.DEFINE_bool("jit_compile", False, "XLA-compile the steps' forward and backward pass.")
flags.DEFINE_integer("batch_size", 32, "Sequences per step.", lower_bound=1)
flags.DEFINE_integer("iterations", 8, "Timed steps per variant.", lower_bound=1)
flags.DEFINE_integer("warmup", 2, "Untimed steps first.", lower_bound=1)
define_threads_flag()
define_peak_flags()

DROPOUT_USERS = (attention, embeddings, heads, transformer_block)


def keras_decoder_logits(hidden, table):
    """The tied decoder as `ops.einsum` ran it, left to autodiff."""
    return keras.ops.matmul(hidden, keras.ops.transpose(table))


def keras_correct(logits, labels):
    """`tasks.losses.correct` with `keras.ops.argmax`."""
    predictions = keras.ops.cast(keras.ops.argmax(logits, axis=-1), "int32")
    return keras.ops.cast(predictions == keras.ops.cast(labels, "int32"), "float32")


@contextlib.contextmanager
def swapped_in(modules, name, replacement):
    """Inside the block, `module.name` is `replacement` in each of `modules`."""
    ours = [getattr(module, name) for module in modules]
    for module in modules:
        setattr(module, name, replacement)
    try:
        yield
    finally:
        for module, value in zip(modules, ours):
            setattr(module, name, value)


KERAS_PIECES = {
    "dropout": (DROPOUT_USERS, "Dropout", keras.layers.Dropout),
    "decoder": ((masked_lm_head,), "tied_decoder_logits", keras_decoder_logits),
    "argmax": ((objective_module,), "correct", keras_correct),
    "activation": ((token_dense,), "get_training_activation", activations.get_activation),
    # No class count reaches the XLA form: Keras' op at every size.
    "loss": ((losses,), "XLA_CROSS_ENTROPY_MIN_CLASSES", float("inf")),
}


def step(config, batch, piece, swapped):
    """One-step call of a trainer with `piece` ours or (swapped) Keras', traced once."""
    keras_piece = swapped and KERAS_PIECES.get(piece)
    with swapped_in(*keras_piece) if keras_piece else contextlib.nullcontext():
        optimizer = keras_adamw() if swapped and piece == "optimizer" else None
        call = pretraining_step(BertPretrainer(config), batch, optimizer, FLAGS.jit_compile)
        call()
    return call


def main(argv):
    del argv
    use_threads(FLAGS.threads)
    batch = pretraining_batch(FLAGS.batch_size)
    rows = []
    with BenchRun(FLAGS.threads, ["float32"], FLAGS.peak_sizes) as run:
        for size in FLAGS.sizes:
            config = BertConfig.named(size)
            flops = matmul_flops.our_pretraining_step(config, FLAGS.batch_size, SEQ_LENGTH,
                                                      PREDICTIONS)
            for piece in FLAGS.pieces:
                runners = {swapped: step(config, batch, piece, swapped)
                           for swapped in (True, False)}
                samples, _ = time_round_robin(runners, FLAGS.warmup, FLAGS.iterations)
                rows += [TimedRow((size, piece, "Keras'" if swapped else "ours"),
                                  samples[swapped], FLAGS.batch_size, flops)
                         for swapped in (True, False)]
    print(run.header(f"pretraining steps (as pretraining_speed.py), XLA "
                     f"{'on' if FLAGS.jit_compile else 'off'}; {FLAGS.warmup} warm-up + "
                     f"{FLAGS.iterations} timed steps each, the two variants round robin"))
    print(markdown_table(("size", "piece", "whose"), rows, FLAGS.threads, run.peaks))


if __name__ == "__main__":
    app.run(main)
