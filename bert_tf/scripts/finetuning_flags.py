"""The flags of the original's fine-tuning runners, shared by ours.

`run_classifier.py`, `run_swag.py` (and the span and tagging runners) take
the same data, model, phase and hyper-parameter flags with the original's
names and defaults; `options_from_flags` turns them into
`FineTuningOptions`, `check_model_flags` validates them before any work.
"""

import os
import sys

from absl import app, flags, logging

from bert_tf.checkpoints import resolve_config
from bert_tf.scripts import runtime_flags
from bert_tf.tasks.finetuning import FineTuningOptions
from bert_tf.tokenization import validate_case_matches_checkpoint
from bert_tf.training.summaries import write_eval_results
from bert_tf.training.trainer import NonFiniteLossError

FLAGS = flags.FLAGS


def define_finetuning_flags(max_seq_length=128):
    """Defines the common fine-tuning flags (and the runtime flags)."""
    flags.DEFINE_string("data_dir", None, "The input data dir.")
    flags.DEFINE_string("bert_config_file", None, "bert_config.json of the pretrained model "
                        "(default: the one beside --init_checkpoint).")
    flags.DEFINE_string("vocab_file", None, "The vocabulary file the model was trained on "
                        "(default: vocab.txt beside --init_checkpoint).")
    flags.DEFINE_string("output_dir", None, "Where checkpoints, summaries and results go.")
    flags.DEFINE_string("init_checkpoint", None, "Pretrained weights: an original BERT "
                        "checkpoint, a HuggingFace safetensors folder, or ours.")
    flags.DEFINE_bool("do_lower_case", True, "Lower-case the input (uncased models).")
    flags.DEFINE_integer("max_seq_length", max_seq_length, "Sequence length after WordPiece; "
                         "longer inputs are truncated, shorter ones padded.")
    flags.DEFINE_bool("do_train", False, "Whether to run training.")
    flags.DEFINE_bool("do_eval", False, "Whether to run eval on the dev set.")
    flags.DEFINE_bool("do_predict", False, "Whether to run prediction on the test set.")
    flags.DEFINE_integer("train_batch_size", 32, "Total batch size for training.")
    flags.DEFINE_integer("eval_batch_size", 8, "Total batch size for eval.")
    flags.DEFINE_integer("predict_batch_size", 8, "Total batch size for predict.")
    flags.DEFINE_float("learning_rate", 5e-5, "The initial learning rate for Adam.")
    flags.DEFINE_float("num_train_epochs", 3.0, "Total number of training epochs.")
    flags.DEFINE_float("warmup_proportion", 0.1, "Proportion of training for linear warmup.")
    flags.DEFINE_integer("random_seed", 12345, "Seed of the training data shuffle.")
    runtime_flags.define_runtime_flags()


def resolved_vocab_file():
    """`--vocab_file`, else vocab.txt beside `--init_checkpoint`."""
    if FLAGS.vocab_file:
        return FLAGS.vocab_file
    if FLAGS.init_checkpoint:
        folder = (FLAGS.init_checkpoint if os.path.isdir(FLAGS.init_checkpoint)
                  else os.path.dirname(FLAGS.init_checkpoint))
        candidate = os.path.join(folder, "vocab.txt")
        if os.path.exists(candidate):
            return candidate
    raise ValueError("--vocab_file is required (no vocab.txt beside --init_checkpoint)")


def check_model_flags():
    """Validates the flags and returns the model's `BertConfig` (before any work)."""
    if not (FLAGS.do_train or FLAGS.do_eval or FLAGS.do_predict):
        raise ValueError("At least one of `do_train`, `do_eval` or `do_predict` must be True.")
    validate_case_matches_checkpoint(FLAGS.do_lower_case, FLAGS.init_checkpoint)
    config = resolve_config(FLAGS.bert_config_file, FLAGS.init_checkpoint)
    if FLAGS.max_seq_length > config.max_position_embeddings:
        raise ValueError(f"--max_seq_length={FLAGS.max_seq_length} exceeds the model's "
                         f"max_position_embeddings {config.max_position_embeddings}")
    return config


def requested_splits():
    """The splits the phase flags ask for: "train", "dev" and/or "test"."""
    return [split for split, wanted in (("train", FLAGS.do_train), ("dev", FLAGS.do_eval),
                                        ("test", FLAGS.do_predict)) if wanted]


def report_eval_results(trainer, results):
    """Logs the eval results and writes `eval_results.txt` (chief only)."""
    logging.info("eval results: %s", results)
    if trainer.is_chief:
        write_eval_results(os.path.join(FLAGS.output_dir, "eval_results.txt"), results)


def options_from_flags():
    """`FineTuningOptions` from the flags."""
    return FineTuningOptions(
        output_dir=FLAGS.output_dir, train_batch_size=FLAGS.train_batch_size,
        learning_rate=FLAGS.learning_rate, num_train_epochs=FLAGS.num_train_epochs,
        warmup_proportion=FLAGS.warmup_proportion, optimizer=FLAGS.optimizer,
        mixed_precision=FLAGS.mixed_precision, jit_compile=FLAGS.jit_compile,
        gradient_accumulation_steps=FLAGS.gradient_accumulation_steps,
        steps_per_execution=FLAGS.steps_per_execution or FLAGS.iterations_per_loop,
        save_checkpoints_steps=FLAGS.save_checkpoints_steps)


def absl_main(run, program):
    """An absl `main` that calls `run()` and turns expected failures into one error line.

    Bad flags, data, configs, checkpoints and vocabularies raise `ValueError`
    (or `OSError` for files) with the file, line or flag in the message.
    """
    def main(argv):
        if len(argv) > 1:
            raise app.UsageError(f"unexpected arguments: {argv[1:]}")
        try:
            run()
        except (ValueError, OSError, NonFiniteLossError) as error:
            sys.exit(f"{program}: error: {error}")
    return main
